import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import {
  createCustomer,
  createLicense,
  publish,
  setLicenseColumns,
  softwareProduct,
} from '../helpers/factories.js';
import { call, download, protectedFixture, publicFixture } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const check = (q: Record<string, string>, method: 'GET' | 'POST' = 'GET') =>
  method === 'GET'
    ? call(t, 'GET', `/software/check?${new URLSearchParams(q)}`)
    : call(t, 'POST', '/software/check', q);

describe('GET|POST /software/check', () => {
  it('eligible for a newer local release: every field, a working single-use URL (GET and POST)', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.2.0', [['changelog', 'Faster.']]);
    for (const method of ['GET', 'POST'] as const) {
      const res = await check({ slug: f.slug, version: '1.0.0', ...f.creds }, method);
      expect(res.statusCode).toBe(200);
      const b = res.json();
      expect(b).toMatchObject({
        success: true,
        update_available: true,
        available: true,
        eligible: true,
        update_eligible: true,
        product: { id: f.product.id, slug: f.slug },
        current_version: '1.0.0',
        latest_version: '1.2.0',
        available_version: '1.2.0',
        eligible_version: '1.2.0',
        eligibility_reason: null,
        changelog: 'Faster.',
        // Signed at upload since #25 (docs/releases.md, 'Signatures and Content-MD5'); was null.
        signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/),
        signing_key_id: expect.stringMatching(/^k1-[0-9a-f]{8}$/),
        signed_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        manual_download_only: false,
        token_binding_version: 1,
        entitlement: { license_required: true },
        changelog_url: `${t.app.services.urls.base}/software/changelog?slug=${f.slug}`,
      });
      expect(b.file_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect((await download(t, b.download_url)).statusCode).toBe(200);
    }
  });

  it('up to date: nothing available, no token, latest_version = current', async () => {
    const p = await publicFixture(t);
    const b = (await check({ slug: p.slug, version: '1.0.0' })).json();
    expect(b).toMatchObject({
      update_available: false,
      available: false,
      eligible: false,
      latest_version: '1.0.0',
      available_version: null,
      eligible_version: null,
      download_url: null,
      token_expires_at: null,
      token_binding_version: null,
      entitlement: { license_required: false },
    });
  });

  it('available but not entitled: eligibility_reason release_not_entitled, no download_url', async () => {
    const f = await protectedFixture(t);
    await setLicenseColumns(db(), f.licenseId, {
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
        historical_downloads: false,
      }),
    });
    const b = (await check({ slug: f.slug, version: '0.9.0', ...f.creds })).json();
    expect(b).toMatchObject({
      available: true,
      eligible: false,
      update_available: false,
      available_version: '1.0.0',
      eligible_version: null,
      latest_version: '1.0.0',
      eligibility_reason: 'release_not_entitled',
      download_url: null,
    });
  });

  it('preflight errors: module_disabled, missing_params, current_version_required, product_not_found, license_required', async () => {
    const f = await protectedFixture(t);
    await setSettings(t, { software_enabled: false });
    expectError(await check({ slug: f.slug, version: '1.0.0' }), 503, 'module_disabled');
    await setSettings(t, { software_enabled: true });
    expectError(await check({ slug: f.slug }), 400, 'missing_params');
    expectError(await check({ version: '1.0.0' }), 400, 'missing_params');
    expectError(await check({ slug: f.slug, version: '' }), 400, 'current_version_required');
    expectError(await check({ slug: 'nope', version: '1.0.0' }), 404, 'product_not_found');
    expectError(await check({ slug: f.slug, version: '1.0.0' }), 403, 'license_required');
    expectError(await check({ slug: f.slug, version: '1.0.0', license_key: f.key }), 400, 'missing_identity');
  });
});

describe('token storage failures', () => {
  it('500 token_write_failed when the token cannot be stored (package and check); nothing half-issued', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.5.0');
    const repo = t.app.services.distribution.tokens;
    const original = repo.insert.bind(repo);
    repo.insert = async () => {
      throw new Error('disk full');
    };
    try {
      expectError(
        await call(t, 'POST', '/software/package', { slug: f.slug, purpose: 'install', ...f.creds }),
        500,
        'token_write_failed',
      );
      expectError(await check({ slug: f.slug, version: '1.0.0', ...f.creds }), 500, 'token_write_failed');
    } finally {
      repo.insert = original;
    }
  });
});

describe('GET /software/changelog', () => {
  it('published releases only, exact version, changelog object shape; works with the module off', async () => {
    const p = await publicFixture(t);
    await publish(t, p.product.id, '1.1.0', [
      ['changelog', '{"narrative":"New","points":[{"type":"added","text":"X"}]}'],
    ]);
    await publish(t, p.product.id, '1.2.0', [['status', 'draft']]);
    await setSettings(t, { software_enabled: false });
    const res = await call(t, 'GET', `/software/changelog?slug=${p.slug}`);
    await setSettings(t, { software_enabled: true });
    expect(res.statusCode).toBe(200);
    const b = res.json();
    expect(b.slug).toBe(p.slug);
    expect(b.versions.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect(b.versions[0]).toMatchObject({
      changelog: { narrative: 'New', points: [{ type: 'added', text: 'X' }] },
      download_count: 0,
      // Signed at upload since #25 (docs/releases.md, 'Signatures and Content-MD5'); was null.
      signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/),
      signing_key_id: expect.stringMatching(/^k1-[0-9a-f]{8}$/),
    });
    expect(b.versions[1].changelog).toEqual({ narrative: '', points: [] });
    const one = await call(t, 'GET', `/software/changelog?slug=${p.slug}&version=1.0.0`);
    expect(one.json().versions).toHaveLength(1);
    expectError(
      await call(t, 'GET', `/software/changelog?slug=${p.slug}&version=1.2.0`),
      404,
      'version_not_found',
    );
    expectError(
      await call(t, 'GET', `/software/changelog?slug=${p.slug}&version=1.0`),
      404,
      'version_not_found',
    );
  });

  it('400 missing_slug, 404 product_not_found, 409 software_slug_ambiguous; never rate limited', async () => {
    expectError(await call(t, 'GET', '/software/changelog'), 400, 'missing_slug');
    expectError(await call(t, 'GET', '/software/changelog?slug=none-such'), 404, 'product_not_found');
    const a = await softwareProduct(t);
    const b = await softwareProduct(t);
    await db().updateTable('products').set({ slug: a.slug }).where('id', '=', b.id).execute();
    expectError(await call(t, 'GET', `/software/changelog?slug=${a.slug}`), 409, 'software_slug_ambiguous');
    await setSettings(t, { rate_limit: 1 });
    const p = await publicFixture(t);
    for (let i = 0; i < 15; i++) {
      expect(
        (await call(t, 'GET', `/software/changelog?slug=${p.slug}`, undefined, {}, '10.9.9.9')).statusCode,
      ).toBe(200);
    }
    await setSettings(t, { rate_limit: 100 });
  });
});

describe('GET external-link', () => {
  async function externalRelease(productId: number, version = '2.0.0') {
    const res = await admin(t, 'POST', `/software/products/${productId}/versions`, {
      version,
      external_url: `https://downloads.example.com/p-${version}.zip`,
      file_sha256: 'e'.repeat(64),
    });
    expect(res.statusCode).toBe(201);
    return res.json() as { version_id: number; file_name: string };
  }
  const link = (
    productId: number,
    versionId: number,
    q: Record<string, string> = {},
    headers: Record<string, string> = {},
  ) =>
    call(
      t,
      'GET',
      `/software/products/${productId}/versions/${versionId}/external-link?${new URLSearchParams(q)}`,
      undefined,
      headers,
    );

  it('protected: identity and entitlement checked; default purpose reinstall', async () => {
    const f = await protectedFixture(t);
    const ext = await externalRelease(f.product.id);
    const res = await link(f.product.id, ext.version_id, f.creds);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      download_url: 'https://downloads.example.com/p-2.0.0.zip',
      version: '2.0.0',
      file_name: ext.file_name,
      file_sha256: 'e'.repeat(64),
      purpose: 'reinstall',
      manual_download: true,
    });
    expect((await link(f.product.id, ext.version_id, { ...f.creds, purpose: 'update' })).json().purpose).toBe(
      'update',
    );
    expectError(
      await link(f.product.id, ext.version_id, { ...f.creds, purpose: 'x' }),
      400,
      'invalid_purpose',
    );
    expectError(await link(f.product.id, ext.version_id), 403, 'license_required');
    expectError(await link(f.product.id, f.release.version_id, f.creds), 400, 'not_external_version');
    expectError(await link(f.product.id, 999999, f.creds), 404, 'release_not_found');
    await setLicenseColumns(db(), f.licenseId, {
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
        historical_downloads: false,
      }),
    });
    expectError(await link(f.product.id, ext.version_id, f.creds), 403, 'release_not_entitled');
    await setLicenseColumns(db(), f.licenseId, { entitlement_policy: null });
    await admin(t, 'POST', `/software/products/${f.product.id}/versions/${ext.version_id}/withdraw`, {});
    expectError(await link(f.product.id, ext.version_id, f.creds), 410, 'release_withdrawn');
    const draft = await admin(t, 'POST', `/software/products/${f.product.id}/versions`, {
      version: '2.1.0',
      external_url: 'https://downloads.example.com/d.zip',
      file_sha256: 'e'.repeat(64),
      status: 'draft',
    });
    expectError(await link(f.product.id, draft.json().version_id, f.creds), 410, 'release_not_published');
    await setSettings(t, { software_enabled: false });
    expectError(await link(f.product.id, ext.version_id, f.creds), 503, 'module_disabled');
    await setSettings(t, { software_enabled: true });
  });

  it('artifact problems of an external record: 500 artifact_integrity_missing, 501 unsupported_storage_driver', async () => {
    const f = await protectedFixture(t);
    const ext = await externalRelease(f.product.id);
    const rel = await db()
      .selectFrom('releases')
      .select('artifact_id')
      .where('id', '=', ext.version_id)
      .executeTakeFirstOrThrow();
    await db()
      .updateTable('artifacts')
      .set({ storage_key: 'http://insecure.example.com/x.zip' })
      .where('id', '=', rel.artifact_id)
      .execute();
    expectError(await link(f.product.id, ext.version_id, f.creds), 500, 'artifact_integrity_missing');
    await db().updateTable('artifacts').set({ driver: 'ftp' }).where('id', '=', rel.artifact_id).execute();
    expectError(await link(f.product.id, ext.version_id, f.creds), 501, 'unsupported_storage_driver');
  });

  it('public product: 401 authentication_required, 403 customer_not_entitled, purchaser and administrator allowed', async () => {
    const p = await publicFixture(t);
    const ext = await externalRelease(p.product.id);
    expectError(await link(p.product.id, ext.version_id), 401, 'authentication_required');
    const stranger = await createCustomer(t, `stranger-${Date.now()}@example.com`);
    expectError(
      await link(p.product.id, ext.version_id, {}, { cookie: stranger.headers.cookie }),
      403,
      'customer_not_entitled',
    );
    const buyer = await createCustomer(t, `buyer-${Date.now()}@example.com`);
    await createLicense(t, { product_id: p.product.id, user_id: buyer.id });
    expect((await link(p.product.id, ext.version_id, {}, { cookie: buyer.headers.cookie })).statusCode).toBe(
      200,
    );
    expect((await link(p.product.id, ext.version_id, {}, t.adminAuth)).statusCode).toBe(200);
    expectError(await link(999999, ext.version_id, {}, t.adminAuth), 404, 'product_not_found');
  });
});

describe('the releases a check chooses from (kept in memory on SQLite while nothing changes)', () => {
  const eligible = async (f: { slug: string; creds: Record<string, string> }) =>
    (await check({ slug: f.slug, version: '0.9.0', ...f.creds })).json().eligible;
  const generation = async () =>
    Number(
      (await db().selectFrom('release_changes').select('generation').executeTakeFirstOrThrow()).generation,
    );

  it('a change to a release, its artifact or a catalogue download, by any writer, is seen by the next check', async () => {
    const f = await protectedFixture(t);
    const rel = await db()
      .selectFrom('releases')
      .selectAll()
      .where('product_id', '=', f.product.id)
      .executeTakeFirstOrThrow();
    expect(await eligible(f)).toBe(true);
    // By hand in SQL, as an operator or another process would: no application code is told.
    await db()
      .updateTable('releases')
      .set({ file_sha256: 'b'.repeat(64) })
      .where('id', '=', rel.id)
      .execute();
    expect(await eligible(f)).toBe(false);
    await db()
      .updateTable('releases')
      .set({ file_sha256: rel.file_sha256 })
      .where('id', '=', rel.id)
      .execute();
    expect(await eligible(f)).toBe(true);
    await db()
      .updateTable('artifacts')
      .set({ state: 'delete_failed' })
      .where('id', '=', rel.artifact_id)
      .execute();
    expect(await eligible(f)).toBe(false);
    const source = `legacy-${rel.id}`;
    await db()
      .updateTable('artifacts')
      .set({ state: 'available', source_download_id: source })
      .where('id', '=', rel.artifact_id)
      .execute();
    expect(await eligible(f)).toBe(true);
    // The artifact's public source in the old catalogue appears, then goes.
    await db()
      .insertInto('legacy_downloads')
      .values({
        download_id: source,
        product_id: f.product.id,
        file_name: 'plugin.zip',
        public_path: `uploads/${source}/plugin.zip`,
        file_size: 1,
        file_sha256: 'c'.repeat(64),
        created_at: new Date().toISOString(),
        removed_at: null,
      })
      .execute();
    expect(await eligible(f)).toBe(false);
    await db().deleteFrom('legacy_downloads').where('download_id', '=', source).execute();
    expect(await eligible(f)).toBe(true);
    await db().deleteFrom('releases').where('id', '=', rel.id).execute();
    expect((await check({ slug: f.slug, version: '0.9.0', ...f.creds })).json()).toMatchObject({
      available: false,
      eligible: false,
    });
  });

  it('a download is not a change; on SQLite the kept candidates serve while the counter stands', async () => {
    const f = await protectedFixture(t);
    const body = (await check({ slug: f.slug, version: '0.9.0', ...f.creds })).json();
    const sqlite = dialectUnderTest === 'sqlite';
    const before = sqlite ? await generation() : 0;
    expect((await download(t, body.download_url)).statusCode).toBe(200);
    const rel = await db()
      .selectFrom('releases')
      .selectAll()
      .where('product_id', '=', f.product.id)
      .executeTakeFirstOrThrow();
    expect(rel.download_count).toBe(1);
    await db()
      .updateTable('releases')
      .set({ file_sha256: 'b'.repeat(64) })
      .where('id', '=', rel.id)
      .execute();
    if (sqlite) {
      // The download left the counter; the change moved it. Put back, the kept candidates serve.
      const after = await generation();
      expect(after).toBe(before + 1);
      await db().updateTable('release_changes').set({ generation: before }).execute();
      expect(await eligible(f)).toBe(true);
      await db().updateTable('release_changes').set({ generation: after }).execute();
    }
    expect(await eligible(f)).toBe(false);
  });
});
