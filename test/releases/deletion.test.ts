import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageDriver } from '../../src/modules/releases/storage/driver.js';
import { createTestApp, expectError, postForm, type TestApp } from '../helpers/app.js';
import { makeZip, publish, softwareProduct } from '../helpers/factories.js';
import { versions } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const db = () => t.app.services.database.db;
const preview = (productId: number, payload: object) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/software/products/${productId}/artifact-deletions/preview`,
    headers: t.adminAuth,
    payload,
  });
const execute = (productId: number, payload: object) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/software/products/${productId}/artifact-deletions`,
    headers: t.adminAuth,
    payload,
  });

interface Preview {
  acknowledgement: string;
  fingerprint: string;
  totals: Record<string, number>;
  targets: Record<string, unknown>[];
}

/** Preview, then execute with exactly what the preview asked for. */
async function previewAndDelete(productId: number, targets: object) {
  const p = await preview(productId, targets);
  expect(p.statusCode).toBe(200);
  const { acknowledgement, fingerprint } = p.json() as Preview;
  return execute(productId, { ...targets, acknowledgement, fingerprint });
}

async function artifactRow(id: number) {
  return db().selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Rebinds an artifact to a test driver (a storage extension with other capabilities). */
async function useDriver(artifactId: number, name: string) {
  await db().updateTable('artifacts').set({ driver: name }).where('id', '=', artifactId).execute();
}

describe('preview: impact of deleting artifacts', () => {
  it('resolves release_ids to artifacts and reports releases, current flags, tokens, file metadata and a fingerprint', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const b = await publish(t, product.id, '1.1.0');
    const res = await preview(product.id, { release_ids: [b.version_id], artifact_ids: [a.artifact_id] });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Preview;
    expect(body.targets.map((x) => x.artifact_id)).toEqual([a.artifact_id, b.artifact_id]);
    expect(body.targets[1]).toMatchObject({
      storage_driver: 'local',
      file_sha256: b.file_sha256,
      stored: { exists: true },
      releases: [{ version_id: b.version_id, version: '1.1.0', status: 'published', is_current: true }],
      outstanding_tokens: 0,
    });
    expect(body.totals).toMatchObject({
      artifacts: 2,
      releases: 2,
      published_releases: 2,
      current_releases: 1,
      outstanding_tokens: 0,
    });
    expect(body.acknowledgement).toBe('delete 2 artifacts and 2 releases');
    expect(body.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    // A preview changes nothing.
    expect((await artifactRow(a.artifact_id)).state).toBe('available');
  });

  it('counts outstanding tokens through the token module seam (and they enter the fingerprint)', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const first = (await preview(product.id, { artifact_ids: [a.artifact_id] })).json() as Preview;
    t.app.services.releases.setOutstandingTokenCounter(
      async (ids) => new Map(ids.map((id) => [id, id === a.artifact_id ? 3 : 0])),
    );
    const second = (await preview(product.id, { artifact_ids: [a.artifact_id] })).json() as Preview;
    expect(second.totals.outstanding_tokens).toBe(3);
    expect(second.fingerprint).not.toBe(first.fingerprint);
    t.app.services.releases.setOutstandingTokenCounter(async (ids) => new Map(ids.map((id) => [id, 0])));
  });

  const productIdFor = async () => (await softwareProduct(t)).id;
  it.each([
    ['no targets', {}, 400, 'missing_targets'],
    ['empty lists', { artifact_ids: [], release_ids: [] }, 400, 'missing_targets'],
    [
      '101 targets',
      {
        artifact_ids: Array.from({ length: 60 }, (_, i) => i + 1),
        release_ids: Array.from({ length: 41 }, (_, i) => i + 1),
      },
      400,
      'max_targets_exceeded',
    ],
    ['a path', { artifact_ids: [1], path: '/var/lib/vault/x.zip' }, 400, 'invalid_parameters'],
    ['a storage key', { storage_key: 'ab/cd.zip' }, 400, 'invalid_parameters'],
    ['a force flag', { artifact_ids: [1], force: true }, 400, 'invalid_parameters'],
    ['string ids', { artifact_ids: ['1'] }, 400, 'rest_invalid_param'],
    ['an unknown artifact', { artifact_ids: [99999] }, 404, 'artifact_not_found'],
    ['an unknown release', { release_ids: [99999] }, 404, 'release_not_found'],
  ] as const)('%s is refused (%i %s)', async (_n, body, status, code) => {
    expectError(await preview(await productIdFor(), body), status, code);
  });

  it('an artifact or release of another product is 403 cross_product_permission_denied', async () => {
    const p1 = await softwareProduct(t);
    const p2 = await softwareProduct(t);
    const r = await publish(t, p2.id, '1.0.0');
    expectError(
      await preview(p1.id, { artifact_ids: [r.artifact_id] }),
      403,
      'cross_product_permission_denied',
    );
    expectError(
      await preview(p1.id, { release_ids: [r.version_id] }),
      403,
      'cross_product_permission_denied',
    );
    expectError(
      await execute(p1.id, { release_ids: [r.version_id], acknowledgement: 'x', fingerprint: 'y' }),
      403,
      'cross_product_permission_denied',
    );
    expectError(await preview(999999, { artifact_ids: [r.artifact_id] }), 404, 'product_not_found');
  });

  it('an external link cannot be deleted by the service (501 storage_delete_unsupported)', async () => {
    const product = await softwareProduct(t);
    const ext = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/versions`,
      headers: t.adminAuth,
      payload: { version: '1.0.0', external_url: 'https://example.com/a.zip', file_sha256: 'c'.repeat(64) },
    });
    expectError(
      await preview(product.id, { artifact_ids: [ext.json().artifact_id] }),
      501,
      'storage_delete_unsupported',
    );
  });

  it('a driver without stat is 501 storage_stat_unsupported; a malformed stat is 500 invalid_driver_stat_contract', async () => {
    const registry = t.app.services.releases.storage.registry;
    registry.register({ name: 'test_nostat', managed: true, delete: async () => ({ outcome: 'deleted' }) });
    registry.register({
      name: 'test_badstat',
      managed: true,
      delete: async () => ({ outcome: 'deleted' }),
      stat: async () => ({ exists: 'yes', size: -1, mtimeMs: null }) as never,
    });
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    await useDriver(a.artifact_id, 'test_nostat');
    expectError(
      await preview(product.id, { artifact_ids: [a.artifact_id] }),
      501,
      'storage_stat_unsupported',
    );
    await useDriver(a.artifact_id, 'test_badstat');
    expectError(
      await preview(product.id, { artifact_ids: [a.artifact_id] }),
      500,
      'invalid_driver_stat_contract',
    );
    await useDriver(a.artifact_id, 'test_gone');
    expectError(
      await preview(product.id, { artifact_ids: [a.artifact_id] }),
      501,
      'unsupported_storage_driver',
    );
  });
});

describe('execute: acknowledgement, fingerprint, deletion and its job', () => {
  it('deletes the file, marks the artifact deleted, withdraws its releases through the hooks, and records the job', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const keep = await publish(t, product.id, '0.9.0', [['set_current', 'false']]);
    const path = join(t.config.vaultDir, (await artifactRow(a.artifact_id)).storage_key);
    expect(existsSync(path)).toBe(true);
    const withdrawn: string[] = [];
    t.app.services.releases.onWithdraw(async ({ release, reason }) => {
      if (release.product_id === product.id) withdrawn.push(`${release.id}:${reason}`);
    });
    const res = await previewAndDelete(product.id, { release_ids: [a.version_id] });
    expect(res.statusCode).toBe(200);
    const job = res.json();
    expect(job).toMatchObject({
      status: 'completed',
      product_id: product.id,
      artifact_ids: [a.artifact_id],
      results: [{ artifact_id: a.artifact_id, state: 'deleted', error_code: null }],
      attempts: 1,
      error_code: null,
    });
    expect(existsSync(path)).toBe(false);
    expect((await artifactRow(a.artifact_id)).state).toBe('deleted');
    expect(withdrawn).toEqual([`${a.version_id}:artifact_deleted`]);
    const list = await versions(t, product.id);
    expect(list.releases.find((r) => r.version_id === a.version_id)).toMatchObject({
      status: 'withdrawn',
      is_current: false,
    });
    expect(list.releases.find((r) => r.version_id === keep.version_id)).toMatchObject({
      status: 'published',
    });

    const status = await t.app.inject({
      method: 'GET',
      url: `/v1/software/artifact-deletions/${job.op_id}`,
      headers: t.adminAuth,
    });
    expect(status.json()).toEqual(job);
    const retry = await t.app.inject({
      method: 'POST',
      url: `/v1/software/artifact-deletions/${job.op_id}/retry`,
      headers: t.adminAuth,
    });
    expect(retry.statusCode).toBe(200);
    expect(retry.json().status).toBe('completed');

    // A deleted artifact is no longer available: not for deletion, republish, or a new binding.
    expectError(await preview(product.id, { artifact_ids: [a.artifact_id] }), 409, 'artifact_not_available');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${product.id}/versions/${a.version_id}/republish`,
        headers: t.adminAuth,
      }),
      409,
      'artifact_not_available',
    );
  });

  it('the acknowledgement is required and must be exact (400 deletion_confirmation_required)', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const p = (await preview(product.id, { artifact_ids: [a.artifact_id] })).json() as Preview;
    for (const body of [
      { artifact_ids: [a.artifact_id], fingerprint: p.fingerprint },
      { artifact_ids: [a.artifact_id], acknowledgement: p.acknowledgement },
      { artifact_ids: [a.artifact_id], acknowledgement: 'yes', fingerprint: p.fingerprint },
      { artifact_ids: [a.artifact_id], acknowledgement: '', fingerprint: p.fingerprint },
    ]) {
      expectError(await execute(product.id, body), 400, 'deletion_confirmation_required');
    }
    expectError(
      await execute(product.id, {
        artifact_ids: [a.artifact_id],
        acknowledgement: p.acknowledgement,
        fingerprint: p.fingerprint,
        force: true,
      }),
      400,
      'invalid_parameters',
    );
    expect((await artifactRow(a.artifact_id)).state).toBe('available');
  });

  it('anything that changed since the preview is 409 deletion_preview_stale', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const b = await publish(t, product.id, '1.1.0');
    const targets = { artifact_ids: [a.artifact_id] };
    // A release flag changed.
    let p = (await preview(product.id, targets)).json() as Preview;
    await t.app.inject({
      method: 'PUT',
      url: `/v1/software/products/${product.id}/versions/${a.version_id}`,
      headers: t.adminAuth,
      payload: { is_current: true },
    });
    expectError(
      await execute(product.id, {
        ...targets,
        acknowledgement: p.acknowledgement,
        fingerprint: p.fingerprint,
      }),
      409,
      'deletion_preview_stale',
    );
    // The file changed on disk (mtime).
    p = (await preview(product.id, targets)).json() as Preview;
    const path = join(t.config.vaultDir, (await artifactRow(a.artifact_id)).storage_key);
    utimesSync(path, new Date(), new Date(Date.now() - 3_600_000));
    expectError(
      await execute(product.id, {
        ...targets,
        acknowledgement: p.acknowledgement,
        fingerprint: p.fingerprint,
      }),
      409,
      'deletion_preview_stale',
    );
    // A bound release was withdrawn.
    p = (await preview(product.id, { release_ids: [b.version_id] })).json() as Preview;
    await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/versions/${b.version_id}/withdraw`,
      headers: t.adminAuth,
    });
    expectError(
      await execute(product.id, {
        release_ids: [b.version_id],
        acknowledgement: p.acknowledgement,
        fingerprint: p.fingerprint,
      }),
      409,
      'deletion_preview_stale',
    );
    expect((await artifactRow(a.artifact_id)).state).toBe('available');
    expect((await artifactRow(b.artifact_id)).state).toBe('available');
  });

  it('a failed deletion leaves delete_failed, blocks other jobs, and a retry completes it', async () => {
    let present = true;
    const flaky: StorageDriver = {
      name: 'test_flaky',
      managed: true,
      stat: async () =>
        present ? { exists: true, size: 10, mtimeMs: 1000 } : { exists: false, size: null, mtimeMs: null },
      delete: async () => ({ outcome: 'deleted' }), // claims success but the file stays: absence unconfirmed
    };
    t.app.services.releases.storage.registry.register(flaky);
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    await useDriver(a.artifact_id, 'test_flaky');
    const res = await previewAndDelete(product.id, { artifact_ids: [a.artifact_id] });
    expectError(res, 500, 'storage_delete_failed');
    const op = res.json().data.op_id as string;
    expect(res.json().data.job).toMatchObject({ status: 'failed', error_code: 'storage_delete_failed' });
    expect((await artifactRow(a.artifact_id)).state).toBe('delete_failed');
    // The artifact is in a deletion job: no new one, no new release bound to it.
    expectError(
      await preview(product.id, { artifact_ids: [a.artifact_id] }),
      409,
      'artifact_delete_in_progress',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${product.id}/versions/${a.version_id}/republish`,
        headers: t.adminAuth,
      }),
      409,
      'artifact_not_available',
    );
    const job = await t.app.inject({
      method: 'GET',
      url: `/v1/software/artifact-deletions/${op}`,
      headers: t.adminAuth,
    });
    expect(job.json()).toMatchObject({
      status: 'failed',
      results: [{ artifact_id: a.artifact_id, state: 'delete_failed', error_code: 'storage_delete_failed' }],
    });
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/artifact-deletions/${op}/retry`,
        headers: t.adminAuth,
      }),
      500,
      'storage_delete_failed',
    );
    present = false;
    const retry = await t.app.inject({
      method: 'POST',
      url: `/v1/software/artifact-deletions/${op}/retry`,
      headers: t.adminAuth,
    });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ status: 'completed', attempts: 3 });
    expect((await artifactRow(a.artifact_id)).state).toBe('deleted');
  });

  it('a job running in another process is 409 artifact_delete_in_progress on retry', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const job = (await previewAndDelete(product.id, { artifact_ids: [a.artifact_id] })).json();
    await db()
      .updateTable('artifact_deletions')
      .set({ status: 'running', updated_at: new Date().toISOString() })
      .where('op_id', '=', job.op_id)
      .execute();
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/artifact-deletions/${job.op_id}/retry`,
        headers: t.adminAuth,
      }),
      409,
      'artifact_delete_in_progress',
    );
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/software/artifact-deletions/00000000-0000-4000-8000-000000000000',
        headers: t.adminAuth,
      }),
      404,
      'deletion_job_not_found',
    );
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/software/artifact-deletions/not-an-op',
        headers: t.adminAuth,
      }),
      400,
      'rest_invalid_param',
    );
  });

  it('an invalid delete outcome is 500 invalid_driver_delete_contract', async () => {
    t.app.services.releases.storage.registry.register({
      name: 'test_baddelete',
      managed: true,
      stat: async () => ({ exists: true, size: 1, mtimeMs: 1 }),
      delete: async () => ({ outcome: 'maybe' }) as never,
    });
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    await useDriver(a.artifact_id, 'test_baddelete');
    expectError(
      await previewAndDelete(product.id, { artifact_ids: [a.artifact_id] }),
      500,
      'invalid_driver_delete_contract',
    );
    expect((await artifactRow(a.artifact_id)).state).toBe('delete_failed');
  });

  it('a protected catalogue artifact that was deleted cannot be bound to a new release (409 artifact_not_available)', async () => {
    const product = await softwareProduct(t);
    const up = await postForm(t, `/v1/products/${product.id}/downloads`, [
      ['file', { filename: 'p.zip', content: makeZip() }],
    ]);
    const downloadId = up.json().download_id;
    const prot = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/artifacts/protect`,
      headers: t.adminAuth,
      payload: { download_id: downloadId },
    });
    const artifactId = prot.json().artifact_id;
    expect((await previewAndDelete(product.id, { artifact_ids: [artifactId] })).statusCode).toBe(200);
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${product.id}/versions`,
        headers: t.adminAuth,
        payload: { version: '1.0.0', legacy_download_id: downloadId, status: 'draft' },
      }),
      409,
      'artifact_not_available',
    );
  });
});

describe('/software/products/{id}/artifacts/{artifact_id}', () => {
  it('shows an artifact and deletes it with the same confirmation rules', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const detail = await t.app.inject({
      method: 'GET',
      url: `/v1/software/products/${product.id}/artifacts/${a.artifact_id}`,
      headers: t.adminAuth,
    });
    expect(detail.json()).toMatchObject({
      artifact_id: a.artifact_id,
      state: 'available',
      storage_driver: 'local',
      releases: [{ version_id: a.version_id, is_current: true }],
    });
    const del = (payload: object) =>
      t.app.inject({
        method: 'DELETE',
        url: `/v1/software/products/${product.id}/artifacts/${a.artifact_id}`,
        headers: t.adminAuth,
        payload,
      });
    expectError(await del({}), 400, 'deletion_confirmation_required');
    expectError(
      await del({ acknowledgement: 'x', fingerprint: 'y', path: '/tmp' }),
      400,
      'invalid_parameters',
    );
    const p = (await preview(product.id, { artifact_ids: [a.artifact_id] })).json() as Preview;
    const res = await del({ acknowledgement: p.acknowledgement, fingerprint: p.fingerprint });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('completed');
  });

  it("another product's artifact is 403 cross_product_artifact_prohibited; unknown is 404", async () => {
    const p1 = await softwareProduct(t);
    const p2 = await softwareProduct(t);
    const a = await publish(t, p2.id, '1.0.0');
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/v1/software/products/${p1.id}/artifacts/${a.artifact_id}`,
        headers: t.adminAuth,
      }),
      403,
      'cross_product_artifact_prohibited',
    );
    expectError(
      await t.app.inject({
        method: 'DELETE',
        url: `/v1/software/products/${p1.id}/artifacts/${a.artifact_id}`,
        headers: t.adminAuth,
        payload: { acknowledgement: 'x', fingerprint: 'y' },
      }),
      403,
      'cross_product_artifact_prohibited',
    );
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/v1/software/products/${p1.id}/artifacts/999999`,
        headers: t.adminAuth,
      }),
      404,
      'artifact_not_found',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: `/v1/software/products/${p1.id}/artifacts/1` }),
      401,
      'rest_not_logged_in',
    );
  });
});
