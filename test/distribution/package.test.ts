import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { admin, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import {
  adminId,
  createLicense,
  createProduct,
  createSubscription,
  identity,
  publish,
  setLicenseColumns,
  softwareProduct,
} from '../helpers/factories.js';
import { call, download, type Fixture, pkg, protectedFixture, publicFixture, tokenOf } from './helpers.js';

let t: TestApp;
let f: Fixture;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
  f = await protectedFixture(t);
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const body = (extra: Record<string, unknown> = {}) => ({
  slug: f.slug,
  purpose: 'install',
  ...f.creds,
  ...extra,
});

describe('POST /software/package: the response', () => {
  it('a protected local release: every field, a single-use URL and the entitlement subset', async () => {
    const res = await pkg(t, body());
    expect(res.statusCode).toBe(200);
    const b = res.json();
    expect(b).toMatchObject({
      success: true,
      purpose: 'install',
      product: { id: f.product.id, name: f.product.name, slug: f.slug },
      version_id: f.release.version_id,
      version: '1.0.0',
      artifact_download_id: f.release.artifact_download_id,
      file_name: f.release.file_name,
      file_size: f.zip.length,
      file_sha256: f.release.file_sha256,
      // Signed at upload since #25 (docs/releases.md, 'Signatures and Content-MD5'); was null.
      signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/),
      signing_key_id: expect.stringMatching(/^k1-[0-9a-f]{8}$/),
      signed_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      manual_download_only: false,
      token_binding_version: 1,
      entitlement: {
        license_required: true,
        license_active: true,
        update_entitled: true,
        policy_mode: 'legacy',
      },
    });
    expect(b.release_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(b.token_expires_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(b).not.toHaveProperty('external_link_url');
    const url = new URL(b.download_url);
    expect(url.pathname).toBe('/v1/software/download');
    const token = url.searchParams.get('token')!;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    // Only the hash is stored, with the whole binding.
    const rows = await db().selectFrom('download_tokens').selectAll().execute();
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    const row = rows.at(-1)!;
    expect(row).toMatchObject({
      binding_version: 1,
      policy: 'protected',
      product_id: f.product.id,
      release_id: f.release.version_id,
      artifact_id: f.release.artifact_id,
      artifact_sha256: f.release.file_sha256,
      purpose: 'install',
      license_id: f.licenseId,
      activation_id: f.activationId,
      activation_revision: 1,
      installation_id: f.site.installation_id,
      domain_normalized: 'shop.example.com',
      used_at: null,
      invalidated_at: null,
    });
    // Default lifetime: 5 minutes.
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(5 * 60_000);
  });

  it('token lifetime follows token_expiry (minutes)', async () => {
    await setSettings(t, { token_expiry: 12 });
    await pkg(t, body());
    const row = await db()
      .selectFrom('download_tokens')
      .selectAll()
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(12 * 60_000);
    await setSettings(t, { token_expiry: 5 });
  });

  it('the token is bound to the activation revision the preflight read, and redeems with it', async () => {
    const g = await protectedFixture(t);
    await db()
      .updateTable('activations')
      .set({ activation_revision: 4 })
      .where('id', '=', g.activationId)
      .execute();
    const res = await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds });
    expect(res.statusCode).toBe(200);
    const row = await db()
      .selectFrom('download_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(tokenOf(res.json().download_url)))
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ activation_id: g.activationId, activation_revision: 4 });
    expect((await download(t, res.json().download_url)).statusCode).toBe(200);
  });

  it('a public product needs no license and binds no license or activation', async () => {
    const p = await publicFixture(t);
    const res = await pkg(t, { slug: p.slug, purpose: 'reinstall' });
    expect(res.statusCode).toBe(200);
    expect(res.json().entitlement.license_required).toBe(false);
    const row = await db()
      .selectFrom('download_tokens')
      .selectAll()
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      policy: 'public',
      license_id: null,
      activation_id: null,
      identity_key: null,
    });
  });

  it('an external release: manual_download_only, no token, external_link_url', async () => {
    const g = await protectedFixture(t);
    const ext = await admin(t, 'POST', `/software/products/${g.product.id}/versions`, {
      version: '2.0.0',
      external_url: 'https://downloads.example.com/p-2.0.0.zip',
      file_sha256: 'a'.repeat(64),
      file_size: 1234,
    });
    expect(ext.statusCode).toBe(201);
    const before = await db().selectFrom('download_tokens').select('id').execute();
    const res = await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds });
    expect(res.statusCode).toBe(200);
    const b = res.json();
    expect(b).toMatchObject({
      version: '2.0.0',
      manual_download_only: true,
      download_url: null,
      token_expires_at: null,
      token_binding_version: null,
      external_link_url: `${t.app.services.urls.base}/software/products/${g.product.id}/versions/${ext.json().version_id}/external-link`,
    });
    expect((await db().selectFrom('download_tokens').select('id').execute()).length).toBe(before.length);
  });
});

describe('POST /software/package: preflight errors in the documented order', () => {
  it('503 module_disabled before anything else', async () => {
    await setSettings(t, { software_enabled: false });
    expectError(await pkg(t, { nonsense: 1 }), 503, 'module_disabled');
    await setSettings(t, { software_enabled: true });
  });

  it('400 missing_params without slug or purpose, even with unknown fields', async () => {
    expectError(await pkg(t, { purpose: 'install' }), 400, 'missing_params');
    expectError(await pkg(t, { slug: f.slug, version: '1.0.0' }), 400, 'missing_params');
    expectError(await pkg(t, { slug: '', purpose: 'install' }), 400, 'missing_params');
  });

  it.each([
    'version',
    'release_id',
    'download_url',
    'storage_driver',
    'storage_key',
    'file_path',
    'artifact_id',
    'checksum',
  ])('400 unsupported_parameter for %s', async (field) => {
    expectError(await pkg(t, body({ [field]: 'x' })), 400, 'unsupported_parameter');
  });

  it('400 invalid_purpose', async () => {
    expectError(await pkg(t, body({ purpose: 'download' })), 400, 'invalid_purpose');
  });

  it('400 current_version_required for update without a non-empty current_version', async () => {
    expectError(await pkg(t, body({ purpose: 'update' })), 400, 'current_version_required');
    expectError(
      await pkg(t, body({ purpose: 'update', current_version: '' })),
      400,
      'current_version_required',
    );
  });

  it.each([['0.9'], [''], [null]])(
    '400 current_version_not_allowed on install/reinstall (value %j)',
    async (v) => {
      expectError(await pkg(t, body({ current_version: v })), 400, 'current_version_not_allowed');
      expectError(
        await pkg(t, body({ purpose: 'reinstall', current_version: v })),
        400,
        'current_version_not_allowed',
      );
    },
  );

  it('404 product_not_found for an unknown or unpublished slug', async () => {
    expectError(await pkg(t, body({ slug: 'no-such-slug' })), 404, 'product_not_found');
    const draft = await softwareProduct(t, {}, { status: 'draft' });
    expectError(await pkg(t, body({ slug: draft.slug })), 404, 'product_not_found');
  });

  it('409 software_slug_ambiguous when two published products share a slug', async () => {
    const a = await softwareProduct(t);
    const b = await createProduct(t, {});
    await db().updateTable('products').set({ slug: a.slug }).where('id', '=', b.id).execute();
    expectError(await pkg(t, body({ slug: a.slug })), 409, 'software_slug_ambiguous');
  });

  it('403 software_disabled when the product does not distribute software', async () => {
    const p = await softwareProduct(t, { software_enabled: 'no' });
    expectError(await pkg(t, body({ slug: p.slug })), 403, 'software_disabled');
  });

  it('503 licensing_unavailable for a protected product while licensing is off; public still served', async () => {
    const p = await publicFixture(t);
    await setSettings(t, { licensing_enabled: false });
    expectError(await pkg(t, body()), 503, 'licensing_unavailable');
    expect((await pkg(t, { slug: p.slug, purpose: 'install' })).statusCode).toBe(200);
    await setSettings(t, { licensing_enabled: true });
  });

  it('a missing or invalid licensing setting is protected (fail closed): license_required', async () => {
    const p = await softwareProduct(t, { licensing_enabled: 'No' });
    await publish(t, p.id, '1.0.0');
    expectError(await pkg(t, { slug: p.slug, purpose: 'install' }), 403, 'license_required');
  });

  it('403 license_required without a key; 400 missing_identity; 400 invalid_identity', async () => {
    expectError(await pkg(t, { slug: f.slug, purpose: 'install' }), 403, 'license_required');
    expectError(await pkg(t, { slug: f.slug, purpose: 'install', license_key: '' }), 403, 'license_required');
    expectError(
      await pkg(t, { slug: f.slug, purpose: 'install', license_key: f.key }),
      400,
      'missing_identity',
    );
    expectError(
      await pkg(t, body({ installation_id: f.site.installation_id.toUpperCase() })),
      400,
      'invalid_identity',
    );
    expectError(await pkg(t, body({ site_url: 'ftp://x' })), 400, 'invalid_identity');
  });

  it('403 invalid_license and license_product_mismatch', async () => {
    expectError(await pkg(t, body({ license_key: 'NOPE-NOPE' })), 403, 'invalid_license');
    const other = await protectedFixture(t);
    expectError(await pkg(t, body({ license_key: other.key })), 403, 'license_product_mismatch');
  });

  it('403 revoked, expired, invalid_usage_expiry, subscription_inactive, license_inactive', async () => {
    const g = await protectedFixture(t);
    const b = { slug: g.slug, purpose: 'install', ...g.creds };
    await setLicenseColumns(db(), g.licenseId, { usage_expires_at: '2000-01-01T00:00:00Z' });
    expectError(await pkg(t, b), 403, 'expired');
    await setLicenseColumns(db(), g.licenseId, { usage_expires_at: 'not a date' });
    expectError(await pkg(t, b), 403, 'invalid_usage_expiry');
    await setLicenseColumns(db(), g.licenseId, { usage_expires_at: null });
    const sub = await createSubscription(db(), await adminId(t), g.product.id, 'cancelled');
    await db().updateTable('licenses').set({ subscription_id: sub }).where('id', '=', g.licenseId).execute();
    expectError(await pkg(t, b), 403, 'subscription_inactive');
    await db().updateTable('licenses').set({ subscription_id: null }).where('id', '=', g.licenseId).execute();
    await db()
      .updateTable('licenses')
      .set({ status: 'suspended' as never })
      .where('id', '=', g.licenseId)
      .execute();
    expectError(await pkg(t, b), 403, 'license_inactive');
    await setLicenseColumns(db(), g.licenseId, { status: 'revoked' });
    expectError(await pkg(t, b), 403, 'revoked');
  });

  it('403 domain_not_activated for an identity without an active activation', async () => {
    const other = identity('other.example');
    expectError(
      await pkg(t, body({ site_url: other.domain, installation_id: other.installation_id })),
      403,
      'domain_not_activated',
    );
  });
});

describe('POST /software/package: release selection', () => {
  it('404 no_eligible_release with no published release, and for update with none newer', async () => {
    const p = await softwareProduct(t, { licensing_enabled: 'no' });
    expectError(await pkg(t, { slug: p.slug, purpose: 'install' }), 404, 'no_eligible_release');
    await publish(t, p.id, '1.0.0', [['status', 'draft']]);
    expectError(await pkg(t, { slug: p.slug, purpose: 'install' }), 404, 'no_eligible_release');
    expectError(
      await pkg(t, body({ purpose: 'update', current_version: '1.0.0' })),
      404,
      'no_eligible_release',
    );
    expectError(
      await pkg(t, body({ purpose: 'update', current_version: '1.0.0pl1' })),
      404,
      'no_eligible_release',
    );
  });

  it('update picks a newer release by version_compare; install picks the current one', async () => {
    const p = await publicFixture(t, '1.0.0');
    await publish(t, p.product.id, '1.1.0', [['set_current', 'false']]);
    const cur = await pkg(t, { slug: p.slug, purpose: 'install' });
    expect(cur.json().version).toBe('1.0.0');
    const upd = await pkg(t, { slug: p.slug, purpose: 'update', current_version: '1.0.0' });
    expect(upd.json().version).toBe('1.1.0');
    const rc = await pkg(t, { slug: p.slug, purpose: 'update', current_version: '1.0rc1' });
    expect(rc.json().version).toBe('1.0.0');
  });

  it('order: current first, then newest publication, then highest id; withdrawn never offered', async () => {
    const p = await publicFixture(t, '1.0.0');
    const r2 = await publish(t, p.product.id, '0.5.0', [['set_current', 'false']]);
    const r3 = await publish(t, p.product.id, '0.6.0', [['set_current', 'false']]);
    expect((await pkg(t, { slug: p.slug, purpose: 'install' })).json().version).toBe('1.0.0');
    await admin(
      t,
      'POST',
      `/software/products/${p.product.id}/versions/${p.release.version_id}/withdraw`,
      {},
    );
    // Same second publication: the higher id wins.
    const next = (await pkg(t, { slug: p.slug, purpose: 'install' })).json().version_id;
    expect([r2.version_id, r3.version_id]).toContain(next);
    expect(next).toBe(r3.version_id);
  });

  it('403 no_eligible_release when every candidate fails artifact validation', async () => {
    const p = await publicFixture(t);
    await db()
      .updateTable('releases')
      .set({ file_sha256: 'b'.repeat(64) })
      .where('id', '=', p.release.version_id)
      .execute();
    expectError(await pkg(t, { slug: p.slug, purpose: 'install' }), 403, 'no_eligible_release');
  });

  it('403 release_not_entitled when updates expired without historical downloads', async () => {
    const g = await protectedFixture(t);
    await setLicenseColumns(db(), g.licenseId, {
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
        support: { mode: 'unspecified' },
        historical_downloads: false,
      }),
    });
    const res = await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds });
    expectError(res, 403, 'release_not_entitled');
  });

  it('historical_downloads: an expired update window still gets a release published before the cutoff', async () => {
    const g = await protectedFixture(t, {
      license: {
        entitlement_policy: {
          usage: { mode: 'lifetime' },
          updates: { mode: 'days', days: 1 },
          support: { mode: 'unspecified' },
          historical_downloads: true,
        },
      },
    });
    // The window ended yesterday; the release was published two days ago, the newer one today.
    const past = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    await db()
      .updateTable('licenses')
      .set({ created_at: past(3) })
      .where('id', '=', g.licenseId)
      .execute();
    // Updates ended yesterday; with or without access to the releases of the entitled window.
    const policy = (historical_downloads: boolean) =>
      setLicenseColumns(db(), g.licenseId, {
        entitlement_policy: JSON.stringify({
          updates: { mode: 'days', expires_at: past(1) },
          support: { mode: 'unspecified' },
          historical_downloads,
        }),
      });
    await policy(true);
    await db()
      .updateTable('releases')
      .set({ published_at: past(2) })
      .where('id', '=', g.release.version_id)
      .execute();
    await publish(t, g.product.id, '2.0.0');
    const res = await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds });
    expect(res.statusCode).toBe(200);
    expect(res.json().version).toBe('1.0.0');
    expect(res.json().entitlement).toMatchObject({
      update_entitled: false,
      historical_downloads: true,
      policy_mode: 'explicit',
    });
    // Without history the same license gets the specific authorization error.
    await policy(false);
    expectError(await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds }), 403, 'release_not_entitled');
  });

  it('an unreadable entitlement snapshot (policy_mode missing) fails closed: release_not_entitled', async () => {
    const g = await protectedFixture(t);
    await setLicenseColumns(db(), g.licenseId, { entitlement_policy: '{broken' });
    expectError(await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds }), 403, 'release_not_entitled');
  });

  it('a license of the product owned by someone else still works (keys authorize, not users)', async () => {
    const lic = await createLicense(t, { product_id: f.product.id, user_id: await adminId(t) });
    const site = identity('second.example');
    await call(t, 'POST', '/licenses/activate', { license_key: lic.license_key, ...site });
    const res = await pkg(t, {
      slug: f.slug,
      purpose: 'reinstall',
      license_key: lic.license_key,
      site_url: site.domain,
      installation_id: site.installation_id,
    });
    expect(res.statusCode).toBe(200);
  });
});
