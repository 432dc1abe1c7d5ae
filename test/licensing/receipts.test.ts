import { execFileSync } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rfc3339 } from '../../src/clock.js';
import {
  admin,
  adminOk,
  createTestApp,
  expectError,
  post,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { identity, licenseFixture } from '../helpers/factories.js';

/**
 * Offline receipts (docs/licensing.md, 'Offline receipts'): `receipt: true` on validate adds a
 * receipt signed with the store's active Ed25519 key to a valid answer, and to nothing else.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const validate = (payload: unknown) => post(t, '/licenses/validate', payload);

interface Receipt {
  payload: string;
  signature: string;
  signing_key_id: string;
}
interface PublicKey {
  id: string;
  public_key: string;
  created_at: string;
  retired_at: string | null;
}

/** An activated license: its key, the site, the license and the activation's id. */
async function activated(license = {}) {
  const f = await licenseFixture(t, { activation_limit: 3 }, license);
  const site = identity('https://WWW.Example.org:443/shop');
  const res = await post(t, '/licenses/activate', { license_key: f.key, ...site });
  expect(res.statusCode).toBe(200);
  return { ...f, site, activationId: (res.json() as { activation_id: number }).activation_id };
}

async function publicKeys(): Promise<PublicKey[]> {
  const res = await t.app.inject({ method: 'GET', url: '/v1/software/signing-keys' });
  expect(res.statusCode).toBe(200);
  return (res.json() as { keys: PublicKey[] }).keys;
}

/** The published raw public key (base64) as a node:crypto key, as an SDK would build it. */
const nodeKey = (raw: string) =>
  createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw, 'base64').toString('base64url') },
    format: 'jwk',
  });

/** Verification as docs/licensing.md shows it: the signature covers the payload string's bytes. */
function verifies(receipt: Receipt, keys: PublicKey[]): boolean {
  const key = keys.find((k) => k.id === receipt.signing_key_id);
  if (!key) return false;
  return verify(
    null,
    Buffer.from(receipt.payload, 'ascii'),
    nodeKey(key.public_key),
    Buffer.from(receipt.signature, 'base64'),
  );
}

const claims = (receipt: Receipt) =>
  JSON.parse(Buffer.from(receipt.payload, 'base64url').toString('utf8')) as Record<string, unknown>;

async function receiptFor(key: string, site: { domain: string; installation_id: string }) {
  const res = await validate({ license_key: key, ...site, receipt: true });
  expect(res.statusCode).toBe(200);
  return (res.json() as { receipt: Receipt }).receipt;
}

describe('POST /licenses/validate with receipt', () => {
  it('without receipt, or with receipt: false, the answer is exactly the answer of today', async () => {
    const { key, site } = await activated();
    const plain = await validate({ license_key: key, ...site });
    const off = await validate({ license_key: key, ...site, receipt: false });
    expect(plain.statusCode).toBe(200);
    expect(plain.json()).not.toHaveProperty('receipt');
    expect(off.statusCode).toBe(200);
    expect(off.body).toBe(plain.body);
  });

  it('receipt: true adds {payload, signature, signing_key_id} to a valid answer, and nothing else changes', async () => {
    const { key, site } = await activated();
    const plain = (await validate({ license_key: key, ...site })).json() as Record<string, unknown>;
    const res = await validate({ license_key: key, ...site, receipt: true });
    expect(res.statusCode).toBe(200);
    const { receipt, ...rest } = res.json() as { receipt: Receipt } & Record<string, unknown>;
    expect(rest).toEqual(plain);
    expect(Object.keys(receipt).sort()).toEqual(['payload', 'signature', 'signing_key_id']);
    expect(receipt.payload).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(receipt.signing_key_id).toMatch(/^k1-[0-9a-f]{8}$/);
    expect(Buffer.from(receipt.signature, 'base64')).toHaveLength(64);
  });

  it('the payload names the license, the product, the site and its activation, the windows and the dates', async () => {
    const future = new Date(t.app.services.clock.now().getTime() + 90 * 86400_000).toISOString();
    const { key, site, license, activationId } = await activated({
      usage_expires_at: future,
      entitlement_policy: { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 30 } },
    });
    const body = (await validate({ license_key: key, ...site, receipt: true })).json() as {
      entitlements: Record<string, unknown>;
      receipt: Receipt;
    };
    const c = claims(body.receipt);
    const issued = Date.parse(c.issued_at as string);
    expect(c).toEqual({
      v: 1,
      license_id: license.id,
      product_id: license.product_id,
      variation_id: 0,
      installation_id: site.installation_id,
      domain: 'www.example.org',
      activation_id: activationId,
      status: 'valid',
      usage_expires_at: body.entitlements.usage_expires_at,
      updates_expires_at: body.entitlements.updates_expires_at,
      support_expires_at: body.entitlements.support_expires_at,
      update_entitled: body.entitlements.update_entitled,
      support_active: body.entitlements.support_active,
      issued_at: rfc3339(new Date(issued)),
      valid_until: rfc3339(new Date(issued + 7 * 86400_000)),
    });
    expect(c.updates_expires_at).not.toBeNull();
    // The server's clock (the test clock here), not the machine's.
    expect(Math.abs(issued - t.app.services.clock.now().getTime())).toBeLessThan(5_000);
    // No license key, no email, nothing about the customer.
    const text = Buffer.from(body.receipt.payload, 'base64url').toString('utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain('@');
  });

  it('verifies with node:crypto and the key published at GET /v1/software/signing-keys', async () => {
    const { key, site } = await activated();
    const receipt = await receiptFor(key, site);
    const res = await t.app.inject({ method: 'GET', url: '/v1/software/signing-keys' });
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const { keys } = res.json() as { keys: PublicKey[] };
    const active = keys.filter((k) => k.retired_at === null);
    expect(active).toHaveLength(1);
    expect(active[0]!.id).toBe(receipt.signing_key_id);
    expect(Object.keys(active[0]!).sort()).toEqual(['created_at', 'id', 'public_key', 'retired_at']);
    expect(Buffer.from(active[0]!.public_key, 'base64')).toHaveLength(32);
    expect(verifies(receipt, keys)).toBe(true);
  });

  it('a tampered payload or signature does not verify', async () => {
    const { key, site } = await activated();
    const receipt = await receiptFor(key, site);
    const keys = await publicKeys();
    const c = claims(receipt);
    const forged = Buffer.from(JSON.stringify({ ...c, valid_until: '2099-01-01T00:00:00Z' })).toString(
      'base64url',
    );
    expect(verifies({ ...receipt, payload: forged }, keys)).toBe(false);
    const flipped = receipt.payload.slice(0, -1) + (receipt.payload.endsWith('A') ? 'B' : 'A');
    expect(verifies({ ...receipt, payload: flipped }, keys)).toBe(false);
    const sig = Buffer.from(receipt.signature, 'base64');
    sig[10] = sig[10]! ^ 1;
    expect(verifies({ ...receipt, signature: sig.toString('base64') }, keys)).toBe(false);
    // Another license's receipt keeps its own signature: signatures do not move between payloads.
    const other = await activated();
    const second = await receiptFor(other.key, other.site);
    expect(verifies({ ...receipt, signature: second.signature }, keys)).toBe(false);
  });

  it('an answer that is not valid is unchanged and has no receipt', async () => {
    const { key, site, license } = await activated();
    const cases: Record<string, unknown>[] = [
      { license_key: 'NO-SUCH-KEY', ...site },
      { license_key: key, ...identity('never-activated.example') },
    ];
    for (const body of cases) {
      const without = await validate(body);
      const withReceipt = await validate({ ...body, receipt: true });
      expect(without.statusCode).toBe(403);
      expect(withReceipt.statusCode).toBe(403);
      expect(withReceipt.body).toBe(without.body);
      expect(withReceipt.json()).not.toHaveProperty('receipt');
    }
    await adminOk(t, 'DELETE', `/licenses/${license.id}`);
    const revoked = await validate({ license_key: key, ...site, receipt: true });
    expect(revoked.statusCode).toBe(403);
    expect(revoked.json()).toMatchObject({ valid: false, error: 'revoked' });
    expect(revoked.json()).not.toHaveProperty('receipt');
  });

  it('receipt is a boolean only: any other type is 400 rest_invalid_param and signs nothing', async () => {
    const { key, site } = await activated();
    for (const receipt of ['yes', 1, 0, 'true', null, [], {}, '<script>']) {
      const res = await validate({ license_key: key, ...site, receipt });
      expectError(res, 400, 'rest_invalid_param');
      expect(res.json()).not.toHaveProperty('receipt');
    }
    expectError(
      await validate({ license_key: key, ...site, receipt: true, receipts: true }),
      400,
      'invalid_parameters',
    );
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/validate',
      headers: { 'content-type': 'application/json' },
      payload: `{"license_key":"${key}","receipt":tru`,
    });
    expectError(malformed, 400, 'rest_invalid_json');
  });

  it('valid_until follows receipt_grace_days (1 to 365; another value is refused and changes nothing)', async () => {
    const { key, site } = await activated();
    await setSettings(t, { receipt_grace_days: 30 });
    try {
      const c = claims(await receiptFor(key, site));
      expect(Date.parse(c.valid_until as string) - Date.parse(c.issued_at as string)).toBe(30 * 86400_000);
      for (const value of [0, 366, -1, 7.5, '7', null, true]) {
        expectError(
          await admin(t, 'PATCH', '/settings', { receipt_grace_days: value }),
          400,
          'rest_invalid_param',
        );
      }
      expect((await adminOk(t, 'GET', '/settings')).receipt_grace_days).toBe(30);
    } finally {
      await setSettings(t, { receipt_grace_days: 7 });
    }
  });

  it('licensing switched off: 503 licensing_unavailable, receipt or not', async () => {
    const { key, site } = await activated();
    await setSettings(t, { licensing_enabled: false });
    try {
      expectError(await validate({ license_key: key, ...site, receipt: true }), 503, 'licensing_unavailable');
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
  });

  it('after a rotation new receipts use the new key, and the old ones verify with the retired key while it is listed', async () => {
    const { key, site } = await activated();
    const before = await receiptFor(key, site);
    const rotated = await adminOk<{ keys: PublicKey[] }>(t, 'POST', '/signing-keys/rotate', {});
    const active = rotated.keys.filter((k) => k.retired_at === null);
    expect(active).toHaveLength(1);
    expect(active[0]!.id).not.toBe(before.signing_key_id);
    const after = await receiptFor(key, site);
    expect(after.signing_key_id).toBe(active[0]!.id);
    const keys = await publicKeys();
    const old = keys.find((k) => k.id === before.signing_key_id);
    expect(old?.retired_at).not.toBeNull();
    expect(verifies(before, keys)).toBe(true);
    expect(verifies(after, keys)).toBe(true);
    // Each receipt verifies only with its own key.
    expect(verifies({ ...before, signing_key_id: after.signing_key_id }, keys)).toBe(false);
  });

  it('the private key is in no answer, and the receipt holds no secret of the store', async () => {
    const { key, site } = await activated();
    const receipt = await receiptFor(key, site);
    const rows = await db().selectFrom('signing_keys').selectAll().execute();
    const answers = [
      (await t.app.inject({ method: 'GET', url: '/v1/software/signing-keys' })).body,
      (await admin(t, 'GET', '/signing-keys')).body,
      (await validate({ license_key: key, ...site, receipt: true })).body,
      JSON.stringify(receipt),
    ].join('\n');
    for (const row of rows) {
      if (row.private_key) expect(answers).not.toContain(row.private_key);
    }
    expect(answers).not.toContain('private');
  });
});

/** A fenced code block of docs/licensing.md, 'Offline receipts': the tests run what the docs show. */
function docsBlock(language: 'js' | 'php'): string {
  const text = readFileSync(new URL('../../docs/licensing.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('### Offline receipts'));
  const m = new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``).exec(section);
  if (!m) throw new Error(`docs/licensing.md has no ${language} block under 'Offline receipts'`);
  return m[1]!;
}

describe("the docs' verification code (docs/licensing.md, 'Offline receipts')", () => {
  it('Node.js: checkReceipt accepts a receipt for its site, refuses a tampered one or another site', async () => {
    const { key, site } = await activated();
    const receipt = await receiptFor(key, site);
    const keys = await publicKeys();
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-receipt-'));
    try {
      const file = join(dir, 'check.mjs');
      writeFileSync(file, `${docsBlock('js')}\nexport { checkReceipt };\n`);
      const { checkReceipt } = (await import(pathToFileURL(file).href)) as {
        checkReceipt: (r: Receipt, k: PublicKey[], s: { installation_id: string; domain: string }) => unknown;
      };
      const normalised = { installation_id: site.installation_id, domain: 'www.example.org' };
      expect(checkReceipt(receipt, keys, normalised)).toMatchObject({ status: 'valid' });
      const forged = Buffer.from(JSON.stringify({ ...claims(receipt), license_id: 1 })).toString('base64url');
      expect(checkReceipt({ ...receipt, payload: forged }, keys, normalised)).toBeNull();
      expect(checkReceipt(receipt, keys, { ...normalised, domain: 'other.example' })).toBeNull();
      expect(checkReceipt({ ...receipt, signing_key_id: 'k1-00000000' }, keys, normalised)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  let php: string | null = null;
  try {
    php = execFileSync('sh', ['-c', 'command -v php'], { encoding: 'utf8' }).trim() || null;
  } catch {
    php = null;
  }
  const hasSodium =
    php !== null &&
    execFileSync(php, ['-r', 'echo function_exists("sodium_crypto_sign_verify_detached") ? "yes" : "no";'], {
      encoding: 'utf8',
    }) === 'yes';
  // CI installs php-cli (.ci/run): there a missing PHP is a failure, not a skip.
  const reason = 'php with sodium is not on PATH (apt-get install php-cli)';
  const run = hasSodium || process.env.CI ? it : it.skip;

  run(
    `PHP: sodium_crypto_sign_verify_detached accepts a receipt, refuses a tampered one${hasSodium ? '' : ` (skipped: ${reason})`}`,
    async () => {
      expect(hasSodium, reason).toBe(true);
      const { key, site } = await activated();
      const receipt = await receiptFor(key, site);
      const keys = await publicKeys();
      // The docs' function, with its inputs in the environment so that no value is quoted into code.
      const code = `${docsBlock('php')}
        $claims = tollgate_check_receipt(json_decode(getenv('RECEIPT'), true), json_decode(getenv('KEYS'), true),
          getenv('INSTALLATION_ID'), getenv('DOMAIN'));
        echo $claims === null ? 'refused' : $claims['status'] . ' ' . $claims['license_id'];`;
      const phpCheck = (r: Receipt, domain = 'www.example.org') =>
        execFileSync(php!, ['-r', code], {
          encoding: 'utf8',
          env: {
            PATH: process.env.PATH,
            RECEIPT: JSON.stringify(r),
            KEYS: JSON.stringify(keys),
            INSTALLATION_ID: site.installation_id,
            DOMAIN: domain,
          },
        });
      expect(phpCheck(receipt)).toBe(`valid ${claims(receipt).license_id}`);
      const forged = Buffer.from(JSON.stringify({ ...claims(receipt), license_id: 1 })).toString('base64url');
      expect(phpCheck({ ...receipt, payload: forged })).toBe('refused');
      const sig = Buffer.from(receipt.signature, 'base64');
      sig[0] = sig[0]! ^ 0x80;
      expect(phpCheck({ ...receipt, signature: sig.toString('base64') })).toBe('refused');
      expect(phpCheck(receipt, 'other.example')).toBe('refused');
    },
  );
});
