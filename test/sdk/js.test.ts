import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as sdk from '../../sdk/js/src/index.js';
import {
  type DownloadablePackage,
  type SigningKey,
  Tollgate,
  TollgateError,
  verifyPackageSignature,
  verifyReceipt,
  verifyWebhook,
} from '../../sdk/js/src/index.js';
import { adminOk, advanceClock, setSettings, type TestApp } from '../helpers/app.js';
import { identity, makeZip, publish } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { startReceiver } from '../webhooks/helpers.js';
import {
  deadOrigin,
  downloadDir,
  licensedProduct,
  licenseFor,
  listeningStore,
  movableClock,
  rejectsWith,
  startTamperingProxy,
  throwsWith,
} from './helpers.js';

/**
 * The JavaScript SDK (docs/sdk-js.md) against a store over real HTTP: licensing, update checks,
 * verified downloads, signatures and receipts.
 */
let t: TestApp;
let origin: string;
let client: Tollgate;
const files = downloadDir();
beforeAll(async () => {
  ({ t, origin } = await listeningStore());
  client = new Tollgate({ url: origin });
});
afterAll(async () => {
  await t.close();
  rmSync(files.dir, { recursive: true, force: true });
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sha384 = (bytes: Buffer) => createHash('sha384').update(bytes).digest();

/** An Ed25519 key pair made here, listed as the store lists its keys. */
function testKey(id: string, retired_at: string | null = null): { key: SigningKey; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return {
    key: { id, public_key: raw.toString('base64'), created_at: new Date().toISOString(), retired_at },
    privateKey,
  };
}
/** The release signature scheme: Ed25519 over the raw SHA-384 digest of the bytes, base64. */
const signRelease = (bytes: Buffer, privateKey: KeyObject) =>
  sign(null, sha384(bytes), privateKey).toString('base64');

describe('the typed client', () => {
  it('accepts the store address with or without /v1 and a trailing slash; refuses another scheme', async () => {
    for (const url of [origin, `${origin}/`, `${origin}/v1`, `${origin}/v1/`]) {
      const keys = await new Tollgate({ url }).signingKeys();
      expect(Array.isArray(keys)).toBe(true);
    }
    expect(() => new Tollgate({ url: 'ftp://store.example' })).toThrow(TypeError);
  });

  it('api: every route of the OpenAPI document, typed, over the same fetch', async () => {
    const { data, response } = await client.api.GET('/v1/software/signing-keys');
    expect(response.status).toBe(200);
    expect(Object.keys(data!)).toEqual(['keys']);
    const { error } = await client.api.POST('/v1/licenses/validate', {
      body: { license_key: '', domain: 'example.com', installation_id: identity().installation_id },
    });
    expect(error).toMatchObject({ code: 'missing_key', data: { status: 400 } });
  });
});

describe('activate, validate, deactivate', () => {
  it('a round trip: activate, activate again (same activation), validate with a receipt, deactivate', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    const first = await client.activate(license);
    expect(first.success).toBe(true);
    expect(first.product_id).toBe(p.product.id);
    const again = await client.activate({ ...license, domain: `https://${license.domain}:443/` });
    expect(again.activation_id).toBe(first.activation_id);
    expect(again.activations_remaining).toBe(first.activations_remaining);
    // An app's own settings object, with more in it, sends only the route's fields.
    const settings = { ...license, theme: 'dark', machine_id: 'web-01', return_url: undefined };
    expect((await client.activate(settings)).activation_id).toBe(first.activation_id);

    const valid = await client.validate(license);
    expect(valid.valid).toBe(true);
    expect(valid.effective_status).toBe('valid');
    expect(Object.keys(valid.receipt!).sort()).toEqual(['payload', 'signature', 'signing_key_id']);
    expect(await client.validate(license, { receipt: false })).not.toHaveProperty('receipt');

    expect(await client.deactivate(settings)).toEqual({ success: true });
    expect(await client.deactivate({ license_key: p.key, activation_id: first.activation_id! })).toEqual({
      success: true,
    });
    const refused = await rejectsWith(client.validate(license), 'domain_not_activated', 403);
    expect(refused.body).toMatchObject({ valid: false, domain_active: false });
  });

  it("a refusal is a TollgateError with the store's code and status, and never the license key", async () => {
    const p = await licensedProduct(t, { activation_limit: 1 });
    await client.activate(licenseFor(p.key, 'one.example.com'));
    const full = await rejectsWith(
      client.activate(licenseFor(p.key, 'two.example.com')),
      'activation_limit_reached',
      403,
    );
    expect(full).toBeInstanceOf(TollgateError);
    expect(full).toBeInstanceOf(Error);
    expect(full.name).toBe('TollgateError');
    expect(`${full.message} ${full.stack}`).not.toContain(p.key);

    await rejectsWith(client.activate(licenseFor('NOPE-NOPE-NOPE-NOPE-NOPE')), 'invalid_license', 403);
    const unknown = await rejectsWith(
      client.validate(licenseFor('NOPE-NOPE-NOPE-NOPE-NOPE')),
      'invalid_license',
      403,
    );
    expect(unknown.body).toMatchObject({ valid: false, entitlements: null });
    await rejectsWith(
      client.validate({ ...licenseFor(p.key), installation_id: identity().installation_id.toUpperCase() }),
      'invalid_identity',
      400,
    );
    await rejectsWith(client.deactivate(licenseFor(p.key, 'never.example.com')), 'no_activation', 404);

    await adminOk(t, 'DELETE', `/licenses/${p.licenseId}`);
    await rejectsWith(client.validate(licenseFor(p.key, 'one.example.com')), 'revoked', 403);
  });

  it('approval mode: oauth_required (HTTP 200) is a TollgateError carrying redirect_url', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await setSettings(t, { activation_mode: 'oauth' });
    try {
      await rejectsWith(client.activate(license), 'missing_return_url', 400);
      const approval = await rejectsWith(
        client.activate({ ...license, return_url: `https://${license.domain}/wp-admin/callback` }),
        'oauth_required',
        200,
      );
      expect(new URL(approval.redirect_url!).pathname).toBe('/account/approve');
      expect(approval.redirect_url).not.toContain(p.key);
    } finally {
      await setSettings(t, { activation_mode: 'simple' });
    }
  });

  it('renewal_url and available_version are read where the store puts them, at the top or in data', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const top = {
      code: 'release_not_entitled',
      message: 'm',
      renewal_url: 'https://store.example/product/widget',
      available_version: '1.1.0',
      data: { status: 403 },
    };
    const nested = {
      code: 'expired',
      message: 'm',
      data: { status: 403, renewal_url: 'https://store.example/renew', available_version: '2.0.0' },
    };
    for (const [body, renewal, version] of [
      [top, top.renewal_url, '1.1.0'],
      [nested, nested.data.renewal_url, '2.0.0'],
    ] as const) {
      const proxy = await startTamperingProxy(origin, () => Buffer.from(JSON.stringify(body)), 403);
      try {
        const e = await rejectsWith(
          new Tollgate({ url: proxy.origin }).check({ slug: p.slug, version: '1.0.0', ...license }),
          body.code,
          403,
        );
        expect({ renewal_url: e.renewal_url, available_version: e.available_version }).toEqual({
          renewal_url: renewal,
          available_version: version,
        });
      } finally {
        await proxy.close();
      }
    }
    // The store's own refusal: buying would help, so it names the product's page in the store.
    const plain = await rejectsWith(
      client.package({ slug: p.slug, purpose: 'install' }),
      'license_required',
      403,
    );
    expect(plain.renewal_url).toMatch(/^https?:\/\/[^/]+\/products\/[^/]+$/);
  });

  it('503 licensing_unavailable is an unavailable store; a dead address is network_error', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    await setSettings(t, { licensing_enabled: false });
    try {
      const off = await rejectsWith(client.validate(license), 'licensing_unavailable', 503);
      expect(off.unavailable).toBe(true);
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
    const down = await rejectsWith(
      new Tollgate({ url: await deadOrigin() }).validate(license),
      'network_error',
      0,
    );
    expect(down.unavailable).toBe(true);
    const refusal = await rejectsWith(
      client.validate(licenseFor('NOPE-NOPE-NOPE-NOPE-NOPE')),
      'invalid_license',
      403,
    );
    expect(refusal.unavailable).toBe(false);
  });

  it('a store that never answers is network_error after timeoutMs', async () => {
    const silent = await startReceiver('hang');
    try {
      const started = Date.now();
      const slow = new Tollgate({ url: new URL(silent.url).origin, timeoutMs: 300 });
      const e = await rejectsWith(slow.validate(licenseFor('ANY-KEY')), 'network_error', 0);
      expect(e.unavailable).toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(silent.requests).toHaveLength(1);
    } finally {
      await silent.close();
    }
  });

  it('an answer that is not JSON is unexpected_response with its status; a 502 page is an unavailable store', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const page = () => Buffer.from('<html>maintenance</html>');
    const portal = await startTamperingProxy(origin, page);
    const gateway = await startTamperingProxy(origin, page, 502);
    try {
      const ok = await rejectsWith(
        new Tollgate({ url: portal.origin }).validate(license),
        'unexpected_response',
        200,
      );
      expect(ok.unavailable).toBe(false);
      const bad = await rejectsWith(
        new Tollgate({ url: gateway.origin }).validate(license),
        'unexpected_response',
        502,
      );
      expect(bad.unavailable).toBe(true);
    } finally {
      await portal.close();
      await gateway.close();
    }
  });
});

describe('check, package and downloadAndVerify', () => {
  it('check offers the newer release; downloadAndVerify writes exactly its bytes, checked', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const zip = makeZip(5000);
    await publish(t, p.product.id, '1.1.0', [], zip);

    const update = await client.check({ slug: p.slug, version: '1.0.0', ...license });
    expect(update).toMatchObject({ eligible: true, eligible_version: '1.1.0', file_sha256: sha256(zip) });
    // The store signs what it publishes: the signature verifies with the keys it lists.
    expect(update.signing_key_id).toMatch(/^k1-[0-9a-f]{8}$/);
    const done = await client.downloadAndVerify(update, files.path('update.zip'), { requireSignature: true });
    expect(done).toEqual({
      path: files.path('update.zip'),
      size: zip.length,
      sha256: sha256(zip),
      signing_key_id: update.signing_key_id,
    });
    expect(readFileSync(done.path).equals(zip)).toBe(true);
    expect(files.leftovers()).toEqual(['update.zip']);

    const log = await client.changelog(p.slug);
    expect(log.versions.map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect((await client.changelog(p.slug, '1.0.0')).versions.map((v) => v.file_sha256)).toEqual([
      sha256(p.zip),
    ]);
    await rejectsWith(client.changelog(''), 'missing_slug', 400);

    const current = await client.check({ slug: p.slug, version: '1.1.0', ...license });
    expect(current).toMatchObject({ eligible: false, download_url: null });
    // A channel is sent when given: a beta site is offered the beta, a stable one is not.
    await publish(t, p.product.id, '1.2.0-beta1', [['channel', 'beta']]);
    expect(await client.check({ slug: p.slug, version: '1.1.0', channel: 'beta', ...license })).toMatchObject(
      {
        eligible_version: '1.2.0-beta1',
        channel: 'beta',
        release_channel: 'beta',
      },
    );
    expect(await client.check({ slug: p.slug, version: '1.1.0', ...license })).toMatchObject({
      eligible: false,
    });
    const beta = await client.package({ slug: p.slug, purpose: 'install', channel: 'beta', ...license });
    expect(beta.version).toBe('1.2.0-beta1');
    await rejectsWith(client.downloadAndVerify(current, files.path('none.zip')), 'no_download_url', 0);
  });

  it('package: a fresh URL each time; a second use of one URL is the store refusal, nothing written', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const pkg = await client.package({ slug: p.slug, purpose: 'install', ...license });
    expect(pkg).toMatchObject({ version: '1.0.0', file_sha256: sha256(p.zip), file_size: p.zip.length });
    const done = await client.downloadAndVerify(pkg, files.path('install.zip'));
    expect(readFileSync(done.path).equals(p.zip)).toBe(true);
    await rejectsWith(client.downloadAndVerify(pkg, files.path('again.zip')), 'token_consumed', 403);
    expect(files.exists('again.zip')).toBe(false);

    await rejectsWith(
      client.package({ slug: p.slug, purpose: 'update', ...license }),
      'current_version_required',
      400,
    );
    await rejectsWith(
      client.package({ slug: p.slug, purpose: 'update', current_version: '1.0.0', ...license }),
      'no_eligible_release',
      404,
    );
    await rejectsWith(client.package({ slug: p.slug, purpose: 'install' }), 'license_required', 403);
  });

  it('a byte changed on the way: sha256_mismatch, and the partial file is removed', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const flip = await startTamperingProxy(origin, (body) => {
      const copy = Buffer.from(body);
      copy[copy.length >> 1]! ^= 0x01;
      return copy;
    });
    const grow = await startTamperingProxy(origin, (body) => Buffer.concat([body, Buffer.from([0])]));
    const via = (proxy: string, pkg: DownloadablePackage) => ({
      ...pkg,
      download_url: pkg.download_url!.replace(origin, proxy),
    });
    try {
      const before = files.leftovers();
      const pkg = await client.package({ slug: p.slug, purpose: 'install', ...license });
      await rejectsWith(
        client.downloadAndVerify(via(flip.origin, pkg), files.path('flipped.zip')),
        'sha256_mismatch',
        0,
      );
      const sized = await client.package({ slug: p.slug, purpose: 'install', ...license });
      await rejectsWith(
        client.downloadAndVerify(via(grow.origin, sized), files.path('grown.zip')),
        'size_mismatch',
        0,
      );
      expect(files.leftovers()).toEqual(before);
    } finally {
      await flip.close();
      await grow.close();
    }
  });

  it('a download that cannot start is network_error, and the error never repeats the URL or its token', async () => {
    const token = 'f'.repeat(20) + 'SECRETTOKEN'.toLowerCase() + 'e'.repeat(33);
    const answer = { download_url: '', file_sha256: sha256(Buffer.from('x')), file_size: 1 };
    for (const url of [
      `${await deadOrigin()}/v1/software/download?token=${token}`,
      `http://[bad host/?token=${token}`,
    ]) {
      const e = await rejectsWith(
        client.downloadAndVerify({ ...answer, download_url: url }, files.path('dead.zip')),
        'network_error',
        0,
      );
      const said = `${e.message} ${e.stack} ${String(e.cause)} ${(e.cause as Error).stack}`;
      expect(said).not.toContain(token);
    }
    expect(files.exists('dead.zip')).toBe(false);
  });

  it("an answer whose file_sha256 is not the download's X-Package-Sha256 is refused before a byte is written", async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const pkg = await client.package({ slug: p.slug, purpose: 'install', ...license });
    const other = { ...pkg, file_sha256: sha256(Buffer.from('another package')) };
    await rejectsWith(client.downloadAndVerify(other, files.path('other.zip')), 'sha256_mismatch', 0);
    expect(files.exists('other.zip')).toBe(false);
  });
});

describe('release signatures (Ed25519 over the SHA-384 digest), with keys made here', () => {
  // Signatures made here, with keys the store does not have, over the real bytes the store serves:
  // the package answer's own signature is taken off, and the downloads go through a hop that takes
  // off the store's X-Content-Signature, so that each case's signature is the only one.
  const active = testKey('k1-test0001');
  const retired = testKey('k1-test0000', '2026-01-01T00:00:00.000Z');
  const keys = [active.key, retired.key];
  let p: Awaited<ReturnType<typeof licensedProduct>>;
  let license: ReturnType<typeof licenseFor>;
  let unsigning: Awaited<ReturnType<typeof startTamperingProxy>>;
  const unsigned = async () => ({
    ...(await client.package({ slug: p.slug, purpose: 'install', ...license })),
    signature: null,
    signing_key_id: null,
  });
  const fresh = async () => {
    const pkg = await unsigned();
    return { ...pkg, download_url: pkg.download_url!.replace(origin, unsigning.origin) };
  };
  beforeAll(async () => {
    p = await licensedProduct(t);
    license = licenseFor(p.key);
    await client.activate(license);
    unsigning = await startTamperingProxy(origin, (body) => body, undefined, { 'x-content-signature': null });
  });
  afterAll(async () => unsigning.close());

  it('a valid signature verifies, with the active key and with a retired key still listed', async () => {
    const signed = {
      ...(await fresh()),
      signature: signRelease(p.zip, active.privateKey),
      signing_key_id: active.key.id,
    };
    const done = await client.downloadAndVerify(signed, files.path('signed.zip'), {
      keys,
      requireSignature: true,
    });
    expect(done.signing_key_id).toBe(active.key.id);
    const old = {
      ...(await fresh()),
      signature: signRelease(p.zip, retired.privateKey),
      signing_key_id: retired.key.id,
    };
    expect((await client.downloadAndVerify(old, files.path('old.zip'), { keys })).signing_key_id).toBe(
      retired.key.id,
    );
  });

  it('tampered, unknown key, wrong key, malformed: refused, and the file is removed', async () => {
    const before = files.leftovers();
    const other = Buffer.concat([p.zip, Buffer.from([1])]);
    const cases: [Record<string, unknown>, string][] = [
      [
        { signature: signRelease(other, active.privateKey), signing_key_id: active.key.id },
        'signature_invalid',
      ],
      [
        { signature: signRelease(p.zip, active.privateKey), signing_key_id: retired.key.id },
        'signature_invalid',
      ],
      [
        { signature: signRelease(p.zip, active.privateKey), signing_key_id: 'k1-ffffffff' },
        'signing_key_unknown',
      ],
      [{ signature: 'not base64 at all!', signing_key_id: active.key.id }, 'signature_invalid'],
      [
        { signature: Buffer.alloc(63).toString('base64'), signing_key_id: active.key.id },
        'signature_invalid',
      ],
    ];
    for (const [signature, code] of cases) {
      await rejectsWith(
        client.downloadAndVerify({ ...(await fresh()), ...signature }, files.path('bad.zip'), { keys }),
        code,
        0,
      );
    }
    expect(files.leftovers()).toEqual(before);
  });

  it("without keys given, the store's list is used, fetched again once for a key it does not have", async () => {
    const signed = {
      ...(await fresh()),
      signature: signRelease(p.zip, active.privateKey),
      signing_key_id: active.key.id,
    };
    await rejectsWith(
      client.downloadAndVerify(signed, files.path('store-keys.zip')),
      'signing_key_unknown',
      0,
    );
    expect(files.exists('store-keys.zip')).toBe(false);
  });

  it('requireSignature refuses an unsigned release and writes nothing; without it, an unsigned one passes', async () => {
    await rejectsWith(
      client.downloadAndVerify(await fresh(), files.path('unsigned.zip'), { requireSignature: true }),
      'signature_required',
      0,
    );
    expect(files.exists('unsigned.zip')).toBe(false);
    expect(
      (await client.downloadAndVerify(await fresh(), files.path('unsigned.zip'))).signing_key_id,
    ).toBeNull();
  });

  it('the X-Content-Signature header alone is checked too, and one that differs from the answer is refused', async () => {
    const good = signRelease(p.zip, active.privateKey);
    const bad = signRelease(Buffer.from('other bytes'), active.privateKey);
    const through = async (header: string, answer: Record<string, unknown>, name: string) => {
      const proxy = await startTamperingProxy(origin, (body) => body, undefined, {
        'x-content-signature': header,
      });
      try {
        const pkg = await unsigned();
        return await client.downloadAndVerify(
          { ...pkg, ...answer, download_url: pkg.download_url!.replace(origin, proxy.origin) },
          files.path(name),
          { keys, requireSignature: true },
        );
      } finally {
        await proxy.close();
      }
    };
    expect((await through(good, {}, 'header.zip')).signing_key_id).toBe(active.key.id);
    const before = files.leftovers();
    await rejectsWith(through(bad, {}, 'header-bad.zip'), 'signature_invalid', 0);
    await rejectsWith(
      through(bad, { signature: good, signing_key_id: active.key.id }, 'header-other.zip'),
      'signature_invalid',
      0,
    );
    expect(files.leftovers()).toEqual(before);
  });

  it('verifyPackageSignature: the digest must be SHA-384; without a key id any listed key may verify', () => {
    const signature = signRelease(p.zip, retired.privateKey);
    expect(verifyPackageSignature(sha384(p.zip), signature, null, keys)).toBe(retired.key.id);
    throwsWith(
      () => verifyPackageSignature(sha384(p.zip), signature, null, [active.key]),
      'signature_invalid',
    );
    throwsWith(() => verifyPackageSignature(sha384(p.zip), signature, null, []), 'signing_key_unknown');
    const sha256Digest = createHash('sha256').update(p.zip).digest();
    throwsWith(() => verifyPackageSignature(sha256Digest, signature, null, keys), 'signature_invalid');
    const badKey = { ...active.key, public_key: 'AAAA' };
    throwsWith(
      () => verifyPackageSignature(sha384(p.zip), signature, active.key.id, [badKey]),
      'signature_invalid',
    );
  });
});

describe('verifyReceipt with a real receipt from the store', () => {
  let p: Awaited<ReturnType<typeof licensedProduct>>;
  let license: ReturnType<typeof licenseFor>;
  beforeAll(async () => {
    p = await licensedProduct(t);
    license = licenseFor(p.key, 'https://WWW.Shop.Example.com:443/wp-admin/');
    await client.activate(license);
  });
  const receipt = async () => (await client.validate(license)).receipt!;

  it('valid: answers the claims; the site may be given as the app knows it', async () => {
    const r = await receipt();
    const keys = await client.signingKeys();
    const claims = verifyReceipt(r, keys, { site: license });
    expect(claims).toMatchObject({
      v: 1,
      product_id: p.product.id,
      license_id: p.licenseId,
      installation_id: license.installation_id,
      domain: 'www.shop.example.com',
      status: 'valid',
    });
    expect(JSON.stringify(claims)).not.toContain(p.key);
  });

  it('tampered payload, tampered signature, wrong key, unknown key: refused', async () => {
    const r = await receipt();
    const keys = await client.signingKeys();
    const claims = JSON.parse(Buffer.from(r.payload, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...claims, valid_until: '2099-01-01T00:00:00Z' })).toString(
      'base64url',
    );
    throwsWith(() => verifyReceipt({ ...r, payload: forged }, keys), 'signature_invalid');
    const flipped = Buffer.from(r.signature, 'base64');
    flipped[0]! ^= 0x80;
    throwsWith(
      () => verifyReceipt({ ...r, signature: flipped.toString('base64') }, keys),
      'signature_invalid',
    );
    const impostor = keys.map((k) => ({ ...k, public_key: testKey(k.id).key.public_key }));
    throwsWith(() => verifyReceipt(r, impostor), 'signature_invalid');
    throwsWith(() => verifyReceipt({ ...r, signing_key_id: 'k1-00000000' }, keys), 'signing_key_unknown');
    throwsWith(() => verifyReceipt(r, []), 'signing_key_unknown');
    for (const bad of [null, 'receipt', {}, { ...r, payload: 'not base64url!' }, { ...r, signature: 42 }]) {
      throwsWith(() => verifyReceipt(bad, keys), 'receipt_malformed');
    }
  });

  it('another site, after valid_until, issued in the future: refused', async () => {
    const r = await receipt();
    const keys = await client.signingKeys();
    const claims = verifyReceipt(r, keys);
    throwsWith(
      () => verifyReceipt(r, keys, { site: { ...license, domain: 'other.example.com' } }),
      'receipt_site_mismatch',
    );
    throwsWith(
      () => verifyReceipt(r, keys, { site: { ...license, installation_id: identity().installation_id } }),
      'receipt_site_mismatch',
    );
    const until = new Date(claims.valid_until);
    expect(verifyReceipt(r, keys, { now: new Date(until.getTime() - 1000) }).valid_until).toBe(
      claims.valid_until,
    );
    throwsWith(() => verifyReceipt(r, keys, { now: until }), 'receipt_expired');
    const issued = new Date(claims.issued_at).getTime();
    throwsWith(() => verifyReceipt(r, keys, { now: new Date(issued - 7200_000) }), 'receipt_not_yet_valid');
  });

  it('after a rotation the retired key stays listed and the receipt it signed still verifies', async () => {
    const r = await receipt();
    const clock = movableClock();
    const cached = new Tollgate({ url: origin, now: clock.now });
    const before = await cached.signingKeys();
    await adminOk(t, 'POST', '/signing-keys/rotate', {});
    // The list is kept 5 minutes, as the route's Cache-Control allows, then fetched again.
    clock.advance(299);
    expect(await cached.signingKeys()).toEqual(before);
    clock.advance(2);
    expect((await cached.signingKeys()).length).toBe(before.length + 1);
    const keys = await client.signingKeys({ refresh: true });
    expect(keys.find((k) => k.id === r.signing_key_id)?.retired_at).not.toBeNull();
    expect(verifyReceipt(r, keys, { site: license }).domain).toBe('www.shop.example.com');
    const next = await receipt();
    expect(next.signing_key_id).not.toBe(r.signing_key_id);
    expect(verifyReceipt(next, keys, { site: license }).installation_id).toBe(license.installation_id);
  });
});

describe('429: the client backs off for retry_after', () => {
  it('after a 429 no request goes out until retry_after has passed, for check and package alike', async () => {
    const p = await licensedProduct(t);
    const license = licenseFor(p.key);
    await client.activate(license);
    const clock = movableClock(t.app.services.clock.now().getTime());
    let requests = 0;
    const counted = new Tollgate({
      url: origin,
      now: clock.now,
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    await setSettings(t, { rate_limit: 1 });
    // A fresh rate window: the earlier tests' requests from this address are in the one before.
    await advanceClock(t, 60);
    clock.advance(60);
    try {
      const ask = () => counted.check({ slug: p.slug, version: '1.0.0', ...license });
      await ask();
      const limited = await rejectsWith(ask(), 'rate_limited', 429);
      expect(limited.retry_after).toBeGreaterThan(0);
      expect(limited.retry_after).toBeLessThanOrEqual(60);
      expect(limited.unavailable).toBe(true);
      const sent = requests;
      const held = await rejectsWith(ask(), 'rate_limited', 429);
      expect(held.retry_after).toBeLessThanOrEqual(limited.retry_after!);
      await rejectsWith(
        counted.package({ slug: p.slug, purpose: 'install', ...license }),
        'rate_limited',
        429,
      );
      expect(requests).toBe(sent);
      // validate is not counted by the store, and is not held back.
      expect((await counted.validate(license)).valid).toBe(true);
      expect(requests).toBe(sent + 1);

      clock.advance(limited.retry_after! + 1);
      await advanceClock(t, limited.retry_after! + 1);
      expect((await ask()).eligible).toBe(false);
      expect(requests).toBe(sent + 2);
    } finally {
      await setSettings(t, { rate_limit: 100 });
    }
  });
});

describe('verifyWebhook against a real signed delivery', () => {
  const SECRET = 'sdk-webhook-secret-☃';

  it('verifies the delivery of a revocation and answers its envelope; anything changed is refused', async () => {
    const receiver = await startReceiver(204);
    try {
      await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
      const p = await licensedProduct(t);
      await adminOk(t, 'DELETE', `/licenses/${p.licenseId}`);
      const ours = (body: string) => body.includes(`"license_id":${p.licenseId}}`);
      const req = await waitFor(() => receiver.requests.find((r) => ours(r.body)), 'the revocation delivery');
      const now = t.app.services.clock.now();

      const envelope = verifyWebhook(req.body, req.headers, SECRET, { now });
      expect(envelope).toMatchObject({ event: 'license.revoked', data: { license_id: p.licenseId } });
      expect(envelope.event_id).toBe(req.headers['webhook-id']);
      expect(
        verifyWebhook(
          Buffer.from(req.body, 'utf8'),
          new Headers(req.headers as Record<string, string>),
          SECRET,
          { now },
        ).event_id,
      ).toBe(envelope.event_id);

      const headers = req.headers as Record<string, string>;
      throwsWith(
        () => verifyWebhook(req.body, headers, 'another-secret', { now }),
        'webhook_signature_invalid',
      );
      throwsWith(() => verifyWebhook(`${req.body} `, headers, SECRET, { now }), 'webhook_signature_invalid');
      throwsWith(() => verifyWebhook(req.body, headers, '', { now }), 'webhook_signature_invalid');
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const { [name]: _, ...without } = headers;
        throwsWith(() => verifyWebhook(req.body, without, SECRET, { now }), 'webhook_signature_invalid');
      }
      // Only X-Tollgate-Signature, which covers the body alone and so can be replayed: refused.
      const { 'webhook-signature': _s, ...legacyOnly } = headers;
      expect(legacyOnly['x-tollgate-signature']).toMatch(/^sha256=/);
      throwsWith(() => verifyWebhook(req.body, legacyOnly, SECRET, { now }), 'webhook_signature_invalid');
      throwsWith(
        () => verifyWebhook(req.body, { ...headers, 'webhook-id': 'another-id' }, SECRET, { now }),
        'webhook_signature_invalid',
      );
      throwsWith(
        () => verifyWebhook(req.body, { ...headers, 'x-tollgate-event-id': 'another-id' }, SECRET, { now }),
        'webhook_signature_invalid',
      );
      throwsWith(
        () => verifyWebhook(req.body, { ...headers, 'webhook-timestamp': '1e3' }, SECRET, { now }),
        'webhook_timestamp_invalid',
      );
      const later = new Date(now.getTime() + 301_000);
      throwsWith(() => verifyWebhook(req.body, headers, SECRET, { now: later }), 'webhook_timestamp_invalid');
      expect(verifyWebhook(req.body, headers, SECRET, { now: later, toleranceSeconds: 600 }).event).toBe(
        'license.revoked',
      );
    } finally {
      await setSettings(t, { webhook_url: '', webhook_secret: '' });
      await receiver.close();
    }
  });
});

describe("the docs' vendor code (docs/sdk-js.md, 'A licensed, self-updating app')", () => {
  /** The page's first js block: the whole vendor side, run here as the page shows it. */
  const block = () => {
    const text = readFileSync(new URL('../../docs/sdk-js.md', import.meta.url), 'utf8');
    const m = /## A licensed, self-updating app[\s\S]*?```js\n([\s\S]*?)```/.exec(text);
    if (!m) throw new Error("docs/sdk-js.md has no js block under 'A licensed, self-updating app'");
    return m[1]!;
  };

  it('is at most 15 lines, and activates, validates, checks, downloads and verifies the update', async () => {
    const code = block();
    expect(code.split('\n').filter((line) => line.trim() !== '').length).toBeLessThanOrEqual(15);
    const p = await licensedProduct(t);
    const zip = makeZip(4000);
    await publish(t, p.product.id, '1.2.0', [], zip);
    const site = identity('app.example.com');
    const settings = {
      licenseKey: p.key,
      siteUrl: `https://${site.domain}/`,
      installationId: site.installation_id,
    };
    const installed: string[] = [];
    // The page's module, with its import taken from the SDK's source and its exports returned.
    const body = code
      .replace(/^import .*$/m, '')
      .replaceAll('export ', '')
      .replace("'https://store.example'", JSON.stringify(origin))
      .replace("'acme-app'", JSON.stringify(p.slug));
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
      ...args: string[]
    ) => (...values: unknown[]) => Promise<{ onKeySaved(): Promise<unknown>; start(): Promise<void> }>;
    const app = await new AsyncFunction(
      'FileReceiptStorage',
      'Tollgate',
      'settings',
      'dataDir',
      'VERSION',
      'install',
      `${body}\nreturn { onKeySaved, start };`,
    )(sdk.FileReceiptStorage, sdk.Tollgate, settings, files.dir, '1.0.0', async (path: string) => {
      installed.push(path);
    });

    await rejectsWith(app.start(), 'domain_not_activated', 403);
    await app.onKeySaved();
    await app.start();
    expect(installed).toEqual([files.path(`acme-app-1.2.0.zip`)]);
    expect(readFileSync(installed[0]!).equals(zip)).toBe(true);
    expect(files.exists('receipt.json')).toBe(true);
  });
});
