import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import type { NewToken } from '../../src/modules/distribution/tokens.repository.js';
import { identityKey } from '../../src/modules/identity/identity.js';
import { randomHex, sha256 } from '../../src/random.js';
import { advanceClock, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  type Customer,
  createCustomer,
  createLicense,
  identity,
  makeZip,
  publish,
  setLicenseColumns,
  softwareProduct,
} from '../helpers/factories.js';
import { call } from './helpers.js';

/**
 * The account download token (docs/distribution.md, 'What a token is bound to', 'Account
 * downloads'): minted by the Downloads page's form and redeemed by GET /software/download, over
 * real HTTP against the listening server. Single use, expiry and the claim are every token's; the
 * claim re-checks the product, the license's owner, status and entitlement.
 */
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { rate_limit: 100 });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;

interface Fixture {
  customer: Customer;
  productId: number;
  licenseId: number;
  licenseKey: string;
  releaseId: number;
  zip: Buffer;
}

/** A customer's license of a protected product with one published release. */
async function fixture(): Promise<Fixture> {
  const customer = await createCustomer(t);
  const product = await softwareProduct(t);
  const zip = makeZip(3000);
  const release = await publish(t, product.id, '1.0.0', [], zip);
  const license = await createLicense(t, { product_id: product.id, user_id: customer.id });
  return {
    customer,
    productId: product.id,
    licenseId: license.id,
    licenseKey: license.license_key,
    releaseId: release.version_id,
    zip,
  };
}

/** The Download button: the page's form, posted with the session and its nonce; answers the 303's Location. */
async function mint(f: Fixture, licenseId = f.licenseId, releaseId = f.releaseId): Promise<string> {
  const res = await fetch(`${base}/account/downloads/${licenseId}/${releaseId}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: f.customer.headers.cookie,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ _nonce: f.customer.headers['x-rest-nonce'] }).toString(),
  });
  expect(res.status, await res.clone().text()).toBe(303);
  const location = res.headers.get('location')!;
  expect(location).toMatch(/\/v1\/software\/download\?token=[0-9a-f]{64}$/);
  return location;
}

/** GET the download URL on the listening server. */
function redeem(url: string) {
  const u = new URL(url);
  return fetch(`${base}${u.pathname}${u.search}`);
}

async function expectCode(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(((await res.json()) as { code: string }).code).toBe(code);
}

const tokenRow = (url: string) =>
  db()
    .selectFrom('download_tokens')
    .selectAll()
    .where('token_hash', '=', sha256(new URL(url).searchParams.get('token')!))
    .executeTakeFirstOrThrow();

describe('account tokens: mint and redeem', () => {
  it('binds the license and the customer, no site; streams the bytes once, then token_consumed', async () => {
    const f = await fixture();
    const url = await mint(f);
    expect(await tokenRow(url)).toMatchObject({
      binding_version: 1,
      policy: 'account',
      product_id: f.productId,
      release_id: f.releaseId,
      purpose: 'install',
      license_id: f.licenseId,
      user_id: f.customer.id,
      activation_id: null,
      activation_revision: null,
      identity_key: null,
      installation_id: null,
      domain_normalized: null,
      used_at: null,
    });
    const res = await redeem(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(f.zip));
    expect((await tokenRow(url)).used_at).not.toBeNull();
    await expectCode(await redeem(url), 403, 'token_consumed');
  });

  it('the Download button is limited like issuance: parallel clicks past rate_limit get 429 rate_limited, no token', async () => {
    const f = await fixture();
    // A fresh one-minute window, so that the address's cap holds none of this file's other tokens.
    await advanceClock(t, 61);
    await setSettings(t, { rate_limit: 3 });
    try {
      const clicks = await Promise.all(
        Array.from({ length: 10 }, () =>
          fetch(`${base}/account/downloads/${f.licenseId}/${f.releaseId}`, {
            method: 'POST',
            redirect: 'manual',
            headers: {
              cookie: f.customer.headers.cookie,
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams({ _nonce: f.customer.headers['x-rest-nonce'] }).toString(),
          }),
        ),
      );
      const statuses = clicks.map((r) => r.status).sort();
      expect(statuses).toEqual([303, 303, 303, 429, 429, 429, 429, 429, 429, 429]);
      for (const r of clicks.filter((c) => c.status === 429)) {
        expect(r.headers.get('retry-after')).toBe('60');
        expect(await r.text()).toContain('data-code="rate_limited"');
      }
      const minted = await db()
        .selectFrom('download_tokens')
        .select(sql<number>`count(*)`.as('n'))
        .where('license_id', '=', f.licenseId)
        .executeTakeFirstOrThrow();
      expect(Number(minted.n)).toBe(3);
    } finally {
      await setSettings(t, { rate_limit: 100 });
      await advanceClock(t, 61);
    }
  });

  it('single use under parallel redemption: exactly one 200', async () => {
    const f = await fixture();
    const url = await mint(f);
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const res = await redeem(url);
        if (res.status === 200) {
          expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(f.zip));
          return 'ok';
        }
        expect(res.status).toBe(403);
        return ((await res.json()) as { code: string }).code;
      }),
    );
    expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
    for (const a of answers.filter((a) => a !== 'ok')) expect(a).toBe('token_consumed');
  });

  it('403 token_expired once its lifetime has passed', async () => {
    const f = await fixture();
    const url = await mint(f);
    await advanceClock(t, 5 * 60);
    await expectCode(await redeem(url), 403, 'token_expired');
  });
});

describe('account tokens: revocation finds them through their own index', () => {
  it('the update of a revoked license’s account tokens reads download_tokens_account_license', async () => {
    const query = db()
      .updateTable('download_tokens')
      .set({ invalidated_at: 'x', invalidated_reason: 'revoked' })
      .where('license_id', '=', 1)
      .where('user_id', 'is not', null)
      .where('used_at', 'is', null)
      .where('invalidated_at', 'is', null)
      .compile();
    const sqlite = t.db.database.sqlite;
    let plan: string;
    if (sqlite) {
      const rows = sqlite.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as {
        detail: string;
      }[];
      plan = rows.map((r) => r.detail).join('\n');
    } else {
      // A test table is small enough for a sequential scan to win: ask whether the index can serve.
      plan = await db()
        .transaction()
        .execute(async (tx) => {
          await sql`set local enable_seqscan = off`.execute(tx);
          const r = await sql<{
            'QUERY PLAN': string;
          }>`explain ${sql.raw(query.sql.replace(/\$(\d+)/g, (_, n) => `'${String(query.parameters[Number(n) - 1])}'`))}`.execute(
            tx,
          );
          return r.rows.map((row) => row['QUERY PLAN']).join('\n');
        });
    }
    expect(plan).toContain('download_tokens_account_license');
  });
});

describe('account tokens: what the claim re-checks (nothing is used up)', () => {
  it('a revoked license invalidates its account tokens (in the revocation): token_invalidated', async () => {
    const f = await fixture();
    const url = await mint(f);
    const other = await fixture();
    const untouched = await mint(other);
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/v1/licenses/${f.licenseId}`,
      headers: t.adminAuth,
    });
    expect(res.statusCode).toBe(200);
    expect(await tokenRow(url)).toMatchObject({ invalidated_reason: 'revoked', used_at: null });
    await expectCode(await redeem(url), 403, 'token_invalidated');
    expect((await tokenRow(untouched)).invalidated_at).toBeNull();
    expect((await redeem(untouched)).status).toBe(200);
  });

  it('a license moved to another customer: 403 unauthorized', async () => {
    const f = await fixture();
    const url = await mint(f);
    const other = await createCustomer(t);
    await db().updateTable('licenses').set({ user_id: other.id }).where('id', '=', f.licenseId).execute();
    await expectCode(await redeem(url), 403, 'unauthorized');
    expect((await tokenRow(url)).used_at).toBeNull();
    await db()
      .updateTable('licenses')
      .set({ user_id: f.customer.id })
      .where('id', '=', f.licenseId)
      .execute();
    expect((await redeem(url)).status).toBe(200);
  });

  it('an expired license: 403 expired', async () => {
    const f = await fixture();
    const url = await mint(f);
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: '2001-01-01T00:00:00Z' });
    await expectCode(await redeem(url), 403, 'expired');
    expect((await tokenRow(url)).used_at).toBeNull();
  });

  it('a release no longer entitled (the updates window closed before it): 403 release_not_entitled', async () => {
    const f = await fixture();
    const url = await mint(f);
    await setLicenseColumns(db(), f.licenseId, {
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
        historical_downloads: false,
      }),
    });
    await expectCode(await redeem(url), 403, 'release_not_entitled');
    expect((await tokenRow(url)).used_at).toBeNull();
  });

  it('a product made public: 403 license_policy_changed; licensing switched off: 503 licensing_unavailable', async () => {
    const f = await fixture();
    const url = await mint(f);
    await setSettings(t, { licensing_enabled: false });
    await expectCode(await redeem(url), 503, 'licensing_unavailable');
    await setSettings(t, { licensing_enabled: true });
    await db()
      .updateTable('products')
      .set({ licensing_enabled: 'no' })
      .where('id', '=', f.productId)
      .execute();
    await expectCode(await redeem(url), 403, 'license_policy_changed');
    expect((await tokenRow(url)).used_at).toBeNull();
  });

  it('deactivating a site of the license leaves the account token valid', async () => {
    const f = await fixture();
    const site = identity('downloads.example.com');
    const act = await call(t, 'POST', '/licenses/activate', { license_key: f.licenseKey, ...site });
    expect(act.statusCode).toBe(200);
    const url = await mint(f);
    const deact = await call(t, 'POST', '/licenses/deactivate', {
      license_key: f.licenseKey,
      activation_id: act.json().activation_id,
    });
    expect(deact.statusCode).toBe(200);
    expect((await tokenRow(url)).invalidated_at).toBeNull();
    expect((await redeem(url)).status).toBe(200);
  });
});

const INSTALLATION = '00000000-0000-4000-8000-000000000000';

describe('account tokens: incomplete or mixed bindings are token_binding_required', () => {
  /** Writes a token row straight through the repository and answers its download URL. */
  async function rowWith(f: Fixture, overrides: Partial<NewToken>): Promise<string> {
    const token = randomHex(32);
    const release = await db()
      .selectFrom('releases as r')
      .innerJoin('artifacts as a', 'a.id', 'r.artifact_id')
      .select(['r.artifact_id', 'a.file_sha256'])
      .where('r.id', '=', f.releaseId)
      .executeTakeFirstOrThrow();
    const now = t.app.services.clock.now();
    await t.app.services.distribution.tokens.insertAccount({
      token_hash: sha256(token),
      binding_version: 1,
      policy: 'account',
      product_id: f.productId,
      release_id: f.releaseId,
      artifact_id: release.artifact_id,
      artifact_sha256: release.file_sha256,
      purpose: 'install',
      license_id: f.licenseId,
      activation_id: null,
      activation_revision: null,
      identity_key: null,
      installation_id: null,
      domain_normalized: null,
      user_id: f.customer.id,
      created_at: iso(now),
      expires_at: iso(new Date(now.getTime() + 3_600_000)),
      used_at: null,
      invalidated_at: null,
      invalidated_reason: null,
      ...overrides,
    });
    return `${base}/v1/software/download?token=${token}`;
  }

  it('the complete row redeems; each incomplete or mixed one is refused and stays unused', async () => {
    const f = await fixture();
    expect((await redeem(await rowWith(f, {}))).status).toBe(200);
    const cases: [string, Partial<NewToken>][] = [
      ['account without its customer', { user_id: null }],
      ['account without its license', { license_id: null }],
      ['account with an activation', { activation_id: 1 }],
      ['account with an activation revision', { activation_revision: 1 }],
      ['account with a site identity', { identity_key: 'a'.repeat(64) }],
      ['account with an installation id', { installation_id: INSTALLATION }],
      ['account with a domain', { domain_normalized: 'example.com' }],
      ['account for an update', { purpose: 'update' }],
      // Complete as a protected token but for the customer: the kinds do not mix.
      [
        'protected with a customer',
        {
          policy: 'protected',
          activation_id: 1,
          activation_revision: 1,
          installation_id: INSTALLATION,
          domain_normalized: 'example.com',
          identity_key: identityKey(INSTALLATION, 'example.com'),
        },
      ],
      ['public with a customer', { policy: 'public', license_id: null }],
      ['an unknown policy', { policy: 'other' as 'account' }],
    ];
    for (const [what, overrides] of cases) {
      const url = await rowWith(f, overrides);
      const res = await redeem(url);
      expect(res.status, what).toBe(403);
      expect(((await res.json()) as { code: string }).code, what).toBe('token_binding_required');
      expect((await tokenRow(url)).used_at, what).toBeNull();
    }
  });
});
