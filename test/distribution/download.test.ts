import { readFileSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import { TOKEN_RETENTION_MS } from '../../src/modules/distribution/tokens.js';
import { sha256 } from '../../src/random.js';
import {
  admin,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { setLicenseColumns } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { call, download, type Fixture, issue, protectedFixture, publicFixture, tokenOf } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const tokenQuery = (url: string) =>
  db()
    .selectFrom('download_tokens')
    .selectAll()
    .where('token_hash', '=', sha256(tokenOf(url)));
const tokenRow = (url: string) => tokenQuery(url).executeTakeFirstOrThrow();
const unclaimed = async (url: string) => expect((await tokenRow(url)).used_at).toBeNull();

async function vaultPath(artifactId: number) {
  const a = await db()
    .selectFrom('artifacts')
    .selectAll()
    .where('id', '=', artifactId)
    .executeTakeFirstOrThrow();
  return t.app.services.releases.storage.vault.pathOf(a.storage_key);
}

describe('GET /software/download: success and single use', () => {
  it('streams the exact bytes with every header, once; the second try is token_consumed', async () => {
    const f = await protectedFixture(t);
    const { download_url } = await issue(t, f);
    const res = await download(t, download_url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${f.release.file_name}"`);
    expect(res.headers['content-length']).toBe(String(f.zip.length));
    expect(res.headers['accept-ranges']).toBe('none');
    expect(res.headers['x-package-sha256']).toBe(sha256(f.zip));
    expect(res.headers['cache-control']).toBe('no-cache, must-revalidate');
    expect(res.headers.pragma).toBe('no-cache');
    expect(res.headers.expires).toBe('0');
    expect(sha256(res.rawPayload)).toBe(sha256(f.zip));
    expect((await tokenRow(download_url)).used_at).not.toBeNull();
    const rel = await db()
      .selectFrom('releases')
      .select('download_count')
      .where('id', '=', f.release.version_id)
      .executeTakeFirstOrThrow();
    expect(Number(rel.download_count)).toBe(1);
    expectError(await download(t, download_url), 403, 'token_consumed');
  });

  it('public product tokens redeem too; encrypted-at-rest releases stream the plaintext', async () => {
    const p = await publicFixture(t);
    const pub = (await call(t, 'POST', '/software/package', { slug: p.slug, purpose: 'install' })).json();
    const res = await download(t, pub.download_url);
    expect(res.statusCode).toBe(200);
    expect(sha256(res.rawPayload)).toBe(sha256(p.zip));
    const e = await protectedFixture(t, { software: { storage_driver: 'local_encrypted' } });
    const enc = await issue(t, e);
    const r2 = await download(t, enc.download_url);
    expect(r2.statusCode).toBe(200);
    expect(sha256(r2.rawPayload)).toBe(sha256(e.zip));
  });
});

describe('GET /software/download: refusals that never consume', () => {
  let f: Fixture;
  let url: string;
  beforeAll(async () => {
    f = await protectedFixture(t);
    url = (await issue(t, f)).download_url;
  });

  it('400 download_override_rejected for any other query parameter', async () => {
    expectError(await download(t, `${url}&version=9`), 400, 'download_override_rejected');
    expectError(await download(t, `${url}&token=${tokenOf(url)}`), 400, 'download_override_rejected');
    await unclaimed(url);
  });

  it('405 head_not_supported with Allow: GET and Accept-Ranges: none', async () => {
    const u = new URL(url);
    const res = await t.app.inject({ method: 'HEAD', url: `${u.pathname}${u.search}` });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.headers['accept-ranges']).toBe('none');
    await unclaimed(url);
  });

  it('416 range_not_supported with Accept-Ranges: none', async () => {
    const res = await download(t, url, { range: 'bytes=0-10' });
    expectError(res, 416, 'range_not_supported');
    expect(res.headers['accept-ranges']).toBe('none');
    await unclaimed(url);
  });

  it('400 missing_token when empty or absent; 403 invalid_token for an unknown token', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/software/download' }), 400, 'missing_token');
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/software/download?token=' }),
      400,
      'missing_token',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: `/v1/software/download?token=${'0'.repeat(64)}` }),
      403,
      'invalid_token',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/software/download?token=short' }),
      403,
      'invalid_token',
    );
  });

  it('503 module_disabled while distribution is off', async () => {
    await setSettings(t, { software_enabled: false });
    expectError(await download(t, url), 503, 'module_disabled');
    await setSettings(t, { software_enabled: true });
    await unclaimed(url);
    expect((await download(t, url)).statusCode).toBe(200);
  });
});

describe('GET /software/download: token states', () => {
  it('403 token_expired once the lifetime has passed (test clock)', async () => {
    const f = await protectedFixture(t);
    const { download_url } = await issue(t, f);
    await advanceClock(t, 5 * 60);
    expectError(await download(t, download_url), 403, 'token_expired');
  });

  it('403 token_invalidated after deactivation, revocation and withdrawal (in their transactions)', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    const deact = await call(t, 'POST', '/licenses/deactivate', {
      license_key: f.key,
      activation_id: f.activationId,
    });
    expect(deact.statusCode).toBe(200);
    expectError(await download(t, a), 403, 'token_invalidated');
    expect((await tokenRow(a)).invalidated_reason).toBe('deactivated');

    const g = await protectedFixture(t);
    const b = (await issue(t, g)).download_url;
    const other = (await issue(t, await protectedFixture(t))).download_url;
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${g.licenseId}`, headers: t.adminAuth }))
        .statusCode,
    ).toBe(200);
    expectError(await download(t, b), 403, 'token_invalidated');
    expect((await tokenRow(b)).invalidated_reason).toBe('revoked');
    // Found through the license's activations: another license's token is left alone.
    expect((await tokenRow(other)).invalidated_at).toBeNull();

    const h = await protectedFixture(t);
    const c = (await issue(t, h)).download_url;
    await admin(
      t,
      'POST',
      `/software/products/${h.product.id}/versions/${h.release.version_id}/withdraw`,
      {},
    );
    expectError(await download(t, c), 403, 'token_invalidated');
    expect((await tokenRow(c)).invalidated_reason).toBe('withdrawn');
  });

  it('403 token_binding_required when the binding is not v1 or its identity is incomplete', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    await db()
      .updateTable('download_tokens')
      .set({ binding_version: 0 })
      .where('token_hash', '=', sha256(tokenOf(a)))
      .execute();
    expectError(await download(t, a), 403, 'token_binding_required');
    const b = (await issue(t, f)).download_url;
    await db()
      .updateTable('download_tokens')
      .set({ identity_key: null })
      .where('token_hash', '=', sha256(tokenOf(b)))
      .execute();
    expectError(await download(t, b), 403, 'token_binding_required');
  });
});

describe('GET /software/download: re-checks in the claim transaction', () => {
  const clearInvalidation = (url: string) =>
    db()
      .updateTable('download_tokens')
      .set({ invalidated_at: null, invalidated_reason: null })
      .where('token_hash', '=', sha256(tokenOf(url)))
      .execute();

  it('410 release_withdrawn / release_not_published; 404 release_not_found', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    await admin(
      t,
      'POST',
      `/software/products/${f.product.id}/versions/${f.release.version_id}/withdraw`,
      {},
    );
    await clearInvalidation(a);
    expectError(await download(t, a), 410, 'release_withdrawn');
    await db()
      .updateTable('releases')
      .set({ status: 'draft' })
      .where('id', '=', f.release.version_id)
      .execute();
    expectError(await download(t, a), 410, 'release_not_published');
    await db()
      .updateTable('download_tokens')
      .set({ release_id: 999999 })
      .where('token_hash', '=', sha256(tokenOf(a)))
      .execute();
    expectError(await download(t, a), 404, 'release_not_found');
    await unclaimed(a);
  });

  it('403 software_product_unavailable and license_policy_changed', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    await db()
      .updateTable('products')
      .set({ software_enabled: 'no' })
      .where('id', '=', f.product.id)
      .execute();
    expectError(await download(t, a), 403, 'software_product_unavailable');
    await db()
      .updateTable('products')
      .set({ software_enabled: 'yes', status: 'draft' })
      .where('id', '=', f.product.id)
      .execute();
    expectError(await download(t, a), 403, 'software_product_unavailable');
    await db()
      .updateTable('products')
      .set({ status: 'publish', licensing_enabled: 'no' })
      .where('id', '=', f.product.id)
      .execute();
    expectError(await download(t, a), 403, 'license_policy_changed');
    await unclaimed(a);
  });

  it('license state is re-read: revoked, expired, release_not_entitled, licensing_unavailable', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: '2001-01-01T00:00:00Z' });
    expectError(await download(t, a), 403, 'expired');
    await setLicenseColumns(db(), f.licenseId, {
      usage_expires_at: null,
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
        historical_downloads: false,
      }),
    });
    expectError(await download(t, a), 403, 'release_not_entitled');
    await setLicenseColumns(db(), f.licenseId, { entitlement_policy: null, status: 'revoked' });
    expectError(await download(t, a), 403, 'revoked');
    await setLicenseColumns(db(), f.licenseId, { status: 'active' });
    await setSettings(t, { licensing_enabled: false });
    expectError(await download(t, a), 503, 'licensing_unavailable');
    await setSettings(t, { licensing_enabled: true });
    await unclaimed(a);
    expect((await download(t, a)).statusCode).toBe(200);
  });

  it('403 activation_inactive and activation_binding_changed', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    await db()
      .updateTable('activations')
      .set({ activation_revision: 7 })
      .where('id', '=', f.activationId)
      .execute();
    expectError(await download(t, a), 403, 'activation_binding_changed');
    await call(t, 'POST', '/licenses/deactivate', { license_key: f.key, activation_id: f.activationId });
    await clearInvalidation(a);
    expectError(await download(t, a), 403, 'activation_inactive');
    await unclaimed(a);
  });

  it('403 release_binding_changed; 403 updater_external_link_prohibited', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    await db()
      .updateTable('download_tokens')
      .set({ artifact_sha256: 'c'.repeat(64) })
      .where('token_hash', '=', sha256(tokenOf(a)))
      .execute();
    expectError(await download(t, a), 403, 'release_binding_changed');
    const ext = await admin(t, 'POST', `/software/products/${f.product.id}/versions`, {
      version: '3.0.0',
      external_url: 'https://downloads.example.com/x.zip',
      file_sha256: 'd'.repeat(64),
      set_current: false,
    });
    await db()
      .updateTable('download_tokens')
      .set({ release_id: ext.json().version_id })
      .where('token_hash', '=', sha256(tokenOf(a)))
      .execute();
    expectError(await download(t, a), 403, 'updater_external_link_prohibited');
    await unclaimed(a);
  });
});

describe('GET /software/download: artifact checks before the claim', () => {
  it('404 artifact_not_found when the vault file is gone; token stays unclaimed', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    unlinkSync(await vaultPath(f.release.artifact_id));
    expectError(await download(t, a), 404, 'artifact_not_found');
    await unclaimed(a);
  });

  it('500 artifact_integrity_failed when the bytes changed on disk (local and encrypted)', async () => {
    for (const driver of ['local', 'local_encrypted']) {
      const f = await protectedFixture(t, { software: { storage_driver: driver } });
      const a = (await issue(t, f)).download_url;
      const path = await vaultPath(f.release.artifact_id);
      const bytes = readFileSync(path);
      bytes.writeUInt8(bytes.readUInt8(bytes.length - 40) ^ 0xff, bytes.length - 40);
      writeFileSync(path, bytes);
      expectError(await download(t, a), 500, 'artifact_integrity_failed');
      await unclaimed(a);
    }
  });

  it('409 artifact_changed when size or mtime moves between the pre-check and the claim', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    const releases = t.app.services.releases;
    const original = releases.precheckArtifact.bind(releases);
    const path = await vaultPath(f.release.artifact_id);
    releases.precheckArtifact = async (r) => {
      const snap = await original(r);
      utimesSync(path, new Date(), new Date(Date.now() + 10_000));
      return snap;
    };
    try {
      expectError(await download(t, a), 409, 'artifact_changed');
    } finally {
      releases.precheckArtifact = original;
    }
    await unclaimed(a);
  });

  it('a row gone between the pre-check and the claim: the claim answers its precise error, not a 500', async () => {
    // The claim's one joined read finds no row when any row is missing: the rows are then read one
    // by one, and the first check that fails answers.
    const releases = t.app.services.releases;
    const original = releases.precheckArtifact.bind(releases);
    const gone = async (url: string, remove: () => Promise<unknown>) => {
      releases.precheckArtifact = async (r, row) => {
        const snap = await original(r, row);
        await remove();
        return snap;
      };
      try {
        return await download(t, url);
      } finally {
        releases.precheckArtifact = original;
      }
    };
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    const activation = await db()
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', f.activationId)
      .executeTakeFirstOrThrow();
    expectError(
      await gone(a, () => db().deleteFrom('activations').where('id', '=', f.activationId).execute()),
      403,
      'activation_inactive',
    );
    await unclaimed(a);
    await db().insertInto('activations').values(activation).execute();
    expectError(
      await gone(a, () =>
        db()
          .deleteFrom('download_tokens')
          .where('token_hash', '=', sha256(tokenOf(a)))
          .execute(),
      ),
      403,
      'invalid_token',
    );
  });

  it('a package that cannot be read after the claim gets an error answer, not a 200', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    const releases = t.app.services.releases;
    const original = releases.openArtifact.bind(releases);
    releases.openArtifact = async (release) => {
      const opened = await original(release);
      await opened.chunks.return();
      return {
        ...opened,
        chunks: (async function* () {
          yield* [];
          throw new Error('read failed');
        })(),
      };
    };
    try {
      expectError(await download(t, a), 500, 'internal_error');
    } finally {
      releases.openArtifact = original;
    }
    expect((await tokenRow(a)).used_at).not.toBeNull();
    expectError(await download(t, a), 403, 'token_consumed');
  });

  it('a failure after the claim never reopens the token', async () => {
    const f = await protectedFixture(t);
    const a = (await issue(t, f)).download_url;
    const releases = t.app.services.releases;
    const original = releases.openArtifact.bind(releases);
    releases.openArtifact = async () => {
      throw new Error('disk vanished');
    };
    try {
      expect((await download(t, a)).statusCode).toBe(500);
    } finally {
      releases.openArtifact = original;
    }
    expect((await tokenRow(a)).used_at).not.toBeNull();
    expectError(await download(t, a), 403, 'token_consumed');
  });
});

const issuer = () => t.app.services.distribution.issuer;
const exists = async (url: string) => (await tokenQuery(url).executeTakeFirst()) !== undefined;
const tokenCount = async () =>
  Number(
    (
      await db()
        .selectFrom('download_tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

// Last in this file: it moves the test clock a week on. Earlier tests' tokens are removed first, so
// that which of them a prune reaches does not depend on what those tests issued.
describe('download token retention', () => {
  beforeAll(async () => {
    await db().deleteFrom('download_tokens').execute();
  });

  it('deletes tokens expired for over 7 days, whatever their state, after a mint; newer ones stay', async () => {
    const f = await protectedFixture(t);
    const used = (await issue(t, f)).download_url;
    expect((await download(t, used)).statusCode).toBe(200);
    const unclaimed = (await issue(t, f)).download_url;
    const g = await protectedFixture(t);
    const invalidated = (await issue(t, g)).download_url;
    await call(t, 'POST', '/licenses/deactivate', { license_key: g.key, activation_id: g.activationId });
    const old = [used, unclaimed, invalidated];

    // Seven days after issuance they expired 7 days minus the 5-minute lifetime ago: all kept.
    await advanceClock(t, TOKEN_RETENTION_MS / 1000);
    await issuer().prune();
    for (const url of old) expect(await exists(url)).toBe(true);
    expectError(await download(t, unclaimed), 403, 'token_expired');
    expectError(await download(t, used), 403, 'token_expired');

    // Past retention: the next mint prunes them (in the background, at most once an hour).
    await advanceClock(t, 6 * 60);
    const fresh = (await issue(t, f)).download_url;
    const gone = async () => {
      for (const url of old) if (await exists(url)) return false;
      return true;
    };
    await waitFor(gone, 'the background prune of the expired tokens');
    for (const url of old) expect(await exists(url)).toBe(false);
    expect(await exists(fresh)).toBe(true);
    expectError(await download(t, unclaimed), 403, 'invalid_token');
    expectError(await download(t, used), 403, 'invalid_token');
    expect((await download(t, fresh)).statusCode).toBe(200);
  });

  it('prunes a backlog in batches, oldest first, and stops at the first token still kept', async () => {
    await db().deleteFrom('download_tokens').execute();
    const now = t.app.services.clock.now().getTime();
    const row = (i: number, expiresAt: number) => ({
      token_hash: sha256(`backlog-${i}`),
      binding_version: 1,
      policy: 'public' as const,
      product_id: 1,
      release_id: 1,
      artifact_id: 1,
      artifact_sha256: 'a'.repeat(64),
      purpose: 'install' as const,
      created_at: iso(new Date(expiresAt - 300_000)),
      expires_at: iso(new Date(expiresAt)),
    });
    const long = now - TOKEN_RETENTION_MS - 60_000;
    // 1,234 past retention (more than two batches), then one still kept, then two more past it.
    const rows = Array.from({ length: 1234 }, (_, i) => row(i, long + i));
    rows.push(row(5000, now - TOKEN_RETENTION_MS + 60_000), row(5001, long), row(5002, long));
    for (let i = 0; i < rows.length; i += 200)
      await db()
        .insertInto('download_tokens')
        .values(rows.slice(i, i + 200))
        .execute();

    expect(await issuer().prune()).toBe(1234);
    expect(await tokenCount()).toBe(3);
    // Nothing at the head is past retention now: a prune reads one batch of the head and stops.
    expect(await issuer().prune()).toBe(0);
    expect(await tokenCount()).toBe(3);
  });
});
