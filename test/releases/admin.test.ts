import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { hashChunks } from '../../src/modules/releases/storage/local.js';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer, makeZip, publish, softwareProduct } from '../helpers/factories.js';
import { vaultFiles } from '../helpers/vault.js';
import { hashOf, versions } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const url = (p: number, v?: number, action?: string) =>
  `/v1/software/products/${p}/versions${v ? `/${v}` : ''}${action ? `/${action}` : ''}`;
const put = (p: number, v: number, payload: object) =>
  t.app.inject({ method: 'PUT', url: url(p, v), headers: t.adminAuth, payload });
const post = (p: number, v: number, action: string, payload?: object) =>
  t.app.inject({
    method: 'POST',
    url: url(p, v, action),
    headers: t.adminAuth,
    ...(payload ? { payload } : {}),
  });
const db = () => t.app.services.database.db;

/** The stored file of a release's artifact. */
async function vaultPathOf(artifactId: number): Promise<string> {
  const a = await db()
    .selectFrom('artifacts')
    .selectAll()
    .where('id', '=', artifactId)
    .executeTakeFirstOrThrow();
  return join(t.config.vaultDir, a.storage_key);
}

describe('GET /software/products/{id}/versions', () => {
  it('answers the software config and every release, drafts and withdrawn included', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const b = await publish(t, product.id, '1.1.0');
    const c = await publish(t, product.id, '1.2.0-beta', [['status', 'draft']]);
    expect((await post(product.id, a.version_id, 'withdraw')).statusCode).toBe(200);
    const list = await t.app.inject({ method: 'GET', url: url(product.id), headers: t.adminAuth });
    expect(list.statusCode).toBe(200);
    const body = list.json();
    expect(body.config).toMatchObject({
      product_id: product.id,
      slug: product.slug,
      filename_template: '{slug}-{version}.zip',
    });
    expect(body.automatic_storage_driver).toBe('local');
    expect(
      body.releases.map((r: { version_id: number; status: string }) => [r.version_id, r.status]),
    ).toEqual([
      [b.version_id, 'published'],
      [c.version_id, 'draft'],
      [a.version_id, 'withdrawn'],
    ]);
  });

  it('is administrator-only and 404 for an unknown product', async () => {
    expectError(await t.app.inject({ method: 'GET', url: url(1) }), 401, 'rest_not_logged_in');
    const customer = await createCustomer(t, 'lister@example.com');
    expectError(
      await t.app.inject({ method: 'GET', url: url(1), headers: { cookie: customer.headers.cookie } }),
      403,
      'rest_forbidden',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: url(999999), headers: t.adminAuth }),
      404,
      'product_not_found',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/software/products/abc/versions', headers: t.adminAuth }),
      400,
      'rest_invalid_param',
    );
  });
});

describe('PUT /software/products/{id}/versions/{version_id}: only changelog and is_current change', () => {
  it('updates the changelog and moves the current flag', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    await publish(t, product.id, '1.1.0');
    const res = await put(product.id, a.version_id, { changelog: 'Fixed', is_current: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ changelog: 'Fixed', is_current: true, version: '1.0.0' });
    expect(
      (await versions(t, product.id)).releases.filter((r) => r.is_current).map((r) => r.version_id),
    ).toEqual([a.version_id]);
    const cleared = await put(product.id, a.version_id, { changelog: null, is_current: false });
    expect(cleared.json()).toMatchObject({ changelog: null, is_current: false });
    expect((await versions(t, product.id)).releases.some((r) => r.is_current)).toBe(false);
  });

  it('any other field is 400 invalid_parameters and nothing changes', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    for (const payload of [
      { version: '9.9.9' },
      { file_sha256: 'a'.repeat(64) },
      { status: 'draft' },
      { artifact_id: 1 },
      { changelog: 'x', storage_key: 'y' },
    ]) {
      expectError(await put(product.id, a.version_id, payload), 400, 'invalid_parameters');
    }
    expectError(await put(product.id, a.version_id, { is_current: 'yes' }), 400, 'rest_invalid_param');
    expectError(
      await put(product.id, a.version_id, { changelog: { narrative: 5 } }),
      400,
      'invalid_changelog',
    );
    expectError(
      await put(product.id, a.version_id, { changelog: 'x'.repeat(70_000) }),
      400,
      'invalid_changelog',
    );
    const list = await versions(t, product.id);
    expect(list.releases[0]).toMatchObject({ version: '1.0.0', status: 'published', is_current: true });
  });

  it('a draft or withdrawn release cannot be made current (410)', async () => {
    const product = await softwareProduct(t);
    const d = await publish(t, product.id, '2.0.0', [['status', 'draft']]);
    expectError(await put(product.id, d.version_id, { is_current: true }), 410, 'release_not_published');
    const w = await publish(t, product.id, '1.0.0');
    await post(product.id, w.version_id, 'withdraw');
    expectError(await put(product.id, w.version_id, { is_current: true }), 410, 'release_withdrawn');
  });

  it("another product's release is 404 release_not_found", async () => {
    const p1 = await softwareProduct(t);
    const p2 = await softwareProduct(t);
    const r = await publish(t, p1.id, '1.0.0');
    expectError(await put(p2.id, r.version_id, { changelog: 'x' }), 404, 'release_not_found');
    expectError(await post(p2.id, r.version_id, 'withdraw'), 404, 'release_not_found');
    expectError(await post(p2.id, r.version_id, 'republish'), 404, 'release_not_found');
    expectError(await put(p1.id, 999999, { changelog: 'x' }), 404, 'release_not_found');
  });
});

describe('withdraw and republish', () => {
  it('published → withdrawn clears current and runs the withdraw hooks in the same transaction', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const seen: { id: number; status: string; reason: string; count: number }[] = [];
    t.app.services.releases.onWithdraw(async ({ tx: trx, release, reason }) => {
      // The hook sees the withdrawal inside the transaction (the row it reads is already withdrawn).
      const row = await trx
        .selectFrom('releases')
        .select('status')
        .where('id', '=', release.id)
        .executeTakeFirstOrThrow();
      seen.push({ id: release.id, status: row.status, reason, count: 1 });
    });
    const res = await post(product.id, r.version_id, 'withdraw');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'withdrawn', is_current: false });
    expect(res.json().withdrawn_at).toMatch(/^\d{4}-/);
    expect(seen.filter((s) => s.id === r.version_id)).toEqual([
      { id: r.version_id, status: 'withdrawn', reason: 'withdrawn', count: 1 },
    ]);
    // Withdrawing again is a no-op answer.
    const again = await post(product.id, r.version_id, 'withdraw');
    expect(again.statusCode).toBe(200);
    expect(seen.filter((s) => s.id === r.version_id)).toHaveLength(1);
  });

  it('a failing hook rolls the withdrawal back (tokens and status never disagree)', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    t.app.services.releases.onWithdraw(async ({ release }) => {
      if (release.id === r.version_id) throw new ApiError('token_write_failed');
    });
    expectError(await post(product.id, r.version_id, 'withdraw'), 500, 'token_write_failed');
    expect((await versions(t, product.id)).releases[0]).toMatchObject({
      status: 'published',
      is_current: true,
    });
  });

  it('a draft cannot be withdrawn; unknown fields are refused', async () => {
    const product = await softwareProduct(t);
    const d = await publish(t, product.id, '1.0.0', [['status', 'draft']]);
    expectError(await post(product.id, d.version_id, 'withdraw'), 409, 'release_state_conflict');
    const p = await publish(t, product.id, '1.0.1');
    expectError(await post(product.id, p.version_id, 'withdraw', { force: true }), 400, 'invalid_parameters');
    expectError(
      await post(product.id, p.version_id, 'republish', { set_current: 'yes' }),
      400,
      'rest_invalid_param',
    );
  });

  it('draft → published becomes current; withdrawn → published keeps its first publication time', async () => {
    const product = await softwareProduct(t);
    const old = await publish(t, product.id, '1.0.0');
    const draft = await publish(t, product.id, '1.1.0', [['status', 'draft']]);
    const pub = await post(product.id, draft.version_id, 'republish');
    expect(pub.statusCode).toBe(200);
    expect(pub.json()).toMatchObject({ status: 'published', is_current: true });
    expect(pub.json().published_at).toMatch(/^\d{4}-/);
    expectError(await post(product.id, draft.version_id, 'republish'), 409, 'release_state_conflict');

    await post(product.id, old.version_id, 'withdraw');
    const restored = await post(product.id, old.version_id, 'republish');
    expect(restored.json()).toMatchObject({
      status: 'published',
      is_current: false,
      published_at: old.published_at,
      withdrawn_at: null,
    });
    const current = await post(product.id, old.version_id, 'withdraw').then(() =>
      post(product.id, old.version_id, 'republish', { set_current: true }),
    );
    expect(current.json().is_current).toBe(true);
  });

  it('republish revalidates the artifact: missing file, changed bytes, bad checksum, unknown driver', async () => {
    const product = await softwareProduct(t);
    const zip = makeZip(3000);
    const r = await publish(t, product.id, '1.0.0', [], zip);
    await post(product.id, r.version_id, 'withdraw');
    const path = await vaultPathOf(r.artifact_id);

    writeFileSync(path, makeZip(3000));
    expectError(await post(product.id, r.version_id, 'republish'), 500, 'artifact_integrity_failed');
    unlinkSync(path);
    expectError(await post(product.id, r.version_id, 'republish'), 404, 'artifact_not_found');
    writeFileSync(path, zip);

    await db()
      .updateTable('artifacts')
      .set({ file_sha256: 'not-a-checksum' })
      .where('id', '=', r.artifact_id)
      .execute();
    expectError(await post(product.id, r.version_id, 'republish'), 500, 'artifact_integrity_missing');
    await db()
      .updateTable('artifacts')
      .set({ file_sha256: hashOf(zip), driver: 's3' })
      .where('id', '=', r.artifact_id)
      .execute();
    expectError(await post(product.id, r.version_id, 'republish'), 501, 'unsupported_storage_driver');
    await db().updateTable('artifacts').set({ driver: 'local' }).where('id', '=', r.artifact_id).execute();

    expect((await post(product.id, r.version_id, 'republish')).json().status).toBe('published');
  });

  it('an encrypted artifact is revalidated by an authenticated pass: a flipped bit blocks republish', async () => {
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    const r = await publish(t, product.id, '1.0.0', [], makeZip(150_000));
    await post(product.id, r.version_id, 'withdraw');
    const path = await vaultPathOf(r.artifact_id);
    const { readFileSync } = await import('node:fs');
    const original = readFileSync(path);
    const flipped = Buffer.from(original);
    flipped[100_000]! ^= 0x80;
    writeFileSync(path, flipped);
    expectError(await post(product.id, r.version_id, 'republish'), 500, 'artifact_integrity_failed');
    writeFileSync(path, original);
    expect((await post(product.id, r.version_id, 'republish')).statusCode).toBe(200);
  });
});

describe('artifacts/validate', () => {
  it('compares a file name and version with the effective template', async () => {
    const product = await softwareProduct(t, { filename_template: '{slug}_{version}.zip' });
    const v = (payload: object) =>
      t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${product.id}/artifacts/validate`,
        headers: t.adminAuth,
        payload,
      });
    const ok = await v({ file_name: `${product.slug}_1.2.3.zip`, version: '1.2.3' });
    expect(ok.json()).toEqual({
      valid: true,
      expected_file_name: `${product.slug}_1.2.3.zip`,
      template: '{slug}_{version}.zip',
      reasons: [],
    });
    const mismatch = await v({ file_name: `${product.slug}_1.2.4.zip`, version: '1.2.3' });
    expect(mismatch.json()).toMatchObject({ valid: false, reasons: ['template_mismatch'] });
    const traversal = await v({ file_name: '../../etc/passwd.zip', version: '1.2.3' });
    expect(traversal.json().reasons).toContain('unsafe_file_name');
    expectError(await v({ file_name: 'a\r\nb.zip', version: '1.2.3' }), 400, 'rest_invalid_param');
    expectError(await v({ file_name: 'a.zip', version: '1 2' }), 400, 'invalid_version');
    expectError(await v({ file_name: 'a.zip' }), 400, 'rest_missing_param');
    expectError(await v({ file_name: 'a.zip', version: '1', extra: 1 }), 400, 'invalid_parameters');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/software/products/999999/artifacts/validate',
        headers: t.adminAuth,
        payload: { file_name: 'a.zip', version: '1' },
      }),
      404,
      'product_not_found',
    );
  });
});

describe('the service API the distribution module calls', () => {
  it('lists published candidates current first, then newest publication, then newest id', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const b = await publish(t, product.id, '1.1.0', [['set_current', 'false']]);
    const c = await publish(t, product.id, '0.9.0', [['set_current', 'false']]);
    await publish(t, product.id, '2.0.0', [['status', 'draft']]);
    const releases = t.app.services.releases;
    const ids = (await releases.listPublishedCandidates(product.id)).map((r) => r.version_id);
    expect(ids).toEqual([a.version_id, c.version_id, b.version_id]);
    expect((await releases.getRelease(a.version_id))?.version).toBe('1.0.0');
    expect(await releases.getRelease(999999)).toBeNull();
    expect(await releases.findPublishedVersion(product.id, '2.0.0')).toBeNull();
  });

  it('refuses draft and withdrawn releases with 410 (the download and external-link rule)', async () => {
    const releases = t.app.services.releases;
    expect(() => releases.assertPublished({ status: 'draft' })).toThrow(
      expect.objectContaining({ code: 'release_not_published', status: 410 }),
    );
    expect(() => releases.assertPublished({ status: 'withdrawn' })).toThrow(
      expect.objectContaining({ code: 'release_withdrawn', status: 410 }),
    );
    expect(() => releases.assertPublished({ status: 'published' })).not.toThrow();
  });

  it('prechecks, stats and opens local and encrypted artifacts; external ones are refused', async () => {
    const releases = t.app.services.releases;
    for (const driver of ['local', 'local_encrypted']) {
      const product = await softwareProduct(t, { storage_driver: driver });
      const zip = makeZip(200_000);
      const r = (await releases.getRelease((await publish(t, product.id, '1.0.0', [], zip)).version_id))!;
      expect(await releases.candidateProblem(r)).toBeNull();
      const snap = await releases.precheckArtifact(r);
      expect(snap.exists).toBe(true);
      expect(await releases.statArtifact(r)).toEqual(snap);
      const opened = await releases.openArtifact(r);
      expect(opened).toMatchObject({
        size: zip.length,
        sha256: hashOf(zip),
        fileName: `${product.slug}-1.0.0.zip`,
      });
      expect(await hashChunks(opened.chunks)).toEqual({ size: zip.length, sha256: hashOf(zip) });
      await t.app.services.database.db.transaction().execute(async (trx) => {
        expect((await releases.lockRelease(r.version_id, trx))?.version).toBe('1.0.0');
        await releases.recordDownload(r.version_id, trx);
      });
      expect((await releases.getRelease(r.version_id))?.download_count).toBe(1);
      unlinkSync(await vaultPathOf(r.artifact_id));
      await expect(releases.precheckArtifact(r)).rejects.toMatchObject({
        code: 'artifact_not_found',
        status: 404,
      });
    }
    const product = await softwareProduct(t);
    const ext = await t.app.inject({
      method: 'POST',
      url: url(product.id),
      headers: t.adminAuth,
      payload: { version: '1.0.0', external_url: 'https://example.com/a.zip', file_sha256: 'b'.repeat(64) },
    });
    const r = (await releases.getRelease(ext.json().version_id))!;
    expect(await releases.candidateProblem(r)).toBeNull();
    await expect(releases.precheckArtifact(r)).rejects.toMatchObject({
      code: 'updater_external_link_prohibited',
      status: 403,
    });
    await db().updateTable('artifacts').set({ file_sha256: 'x' }).where('id', '=', r.artifact_id).execute();
    expect(await releases.candidateProblem(r)).toBe('artifact_integrity_missing');
    expect(vaultFiles(t.config.vaultDir).length).toBeGreaterThan(0);
  });
});
