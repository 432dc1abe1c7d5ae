import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/types.js';
import { keyIdOf } from '../../src/modules/vault/keyring.js';
import { ADMIN, admin, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { publish, softwareProduct } from '../helpers/factories.js';

interface Event {
  actor: { email: string };
  entity_id: number;
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

describe('artifact deletion in the audit trail', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const history = async (type: string, id: number) =>
    (await admin(t, 'GET', `/audit-events?entity_type=${type}&entity_id=${id}`)).json() as Event[];
  const deletions = (productId: number) => `/software/products/${productId}/artifact-deletions`;

  it('records the artifact set aside and its published release withdrawn, in the deletion', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const preview = await admin(t, 'POST', `${deletions(product.id)}/preview`, {
      release_ids: [r.version_id],
    });
    expect(preview.statusCode).toBe(200);
    const { acknowledgement, fingerprint } = preview.json() as {
      acknowledgement: string;
      fingerprint: string;
    };
    const done = await admin(t, 'POST', deletions(product.id), {
      release_ids: [r.version_id],
      acknowledgement,
      fingerprint,
    });
    expect(done.statusCode).toBe(200);
    const opId = done.json().op_id as string;

    const [artifact] = await history('artifact', r.artifact_id);
    expect(artifact).toMatchObject({
      action: 'delete',
      entity_id: r.artifact_id,
      actor: { email: ADMIN.email },
      changes: {
        state: { before: 'available', after: 'delete_pending' },
        deletion_op: { before: null, after: opId },
        file_name: { before: expect.any(String), after: null },
      },
    });
    const [release] = await history('release', r.version_id);
    expect(release).toMatchObject({
      action: 'withdraw',
      changes: { status: { before: 'published', after: 'withdrawn' } },
    });
    // The filter of GET /v1/audit-events knows the new entity type.
    const all = await admin(t, 'GET', '/audit-events?entity_type=artifact');
    expect(all.statusCode).toBe(200);
    expect(all.headers['x-wp-total']).toBe('1');
  });

  it('a refused deletion (wrong acknowledgement, stale fingerprint, a customer) records nothing', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const preview = await admin(t, 'POST', `${deletions(product.id)}/preview`, {
      artifact_ids: [r.artifact_id],
    });
    const { fingerprint, acknowledgement } = preview.json() as {
      acknowledgement: string;
      fingerprint: string;
    };
    expectError(
      await admin(t, 'POST', deletions(product.id), {
        artifact_ids: [r.artifact_id],
        acknowledgement: 'delete everything',
        fingerprint,
      }),
      400,
      'deletion_confirmation_required',
    );
    expectError(
      await admin(t, 'POST', deletions(product.id), {
        artifact_ids: [r.artifact_id],
        acknowledgement,
        fingerprint: 'f'.repeat(64),
      }),
      409,
      'deletion_preview_stale',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1${deletions(product.id)}`,
        payload: { artifact_ids: [r.artifact_id], acknowledgement, fingerprint },
      }),
      401,
      'rest_not_logged_in',
    );
    expect(await history('artifact', r.artifact_id)).toEqual([]);
    expect(await history('release', r.version_id)).toHaveLength(1); // its upload only
  });
});

describe('key rotation in the audit trail', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  let t: TestApp;
  const extra: App[] = [];
  afterAll(async () => {
    for (const app of extra) await app.close();
    await t?.close();
  });

  it('records each re-sealed artifact with its key ids, never a key; a second rotation records nothing', async () => {
    t = await createTestApp({ env: { VAULT_KEY: keyA.toString('base64') } });
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    const r = await publish(t, product.id, '1.0.0');
    const rotating = await buildApp(
      { ...t.config, vaultKey: keyB, vaultPreviousKeys: [keyA] },
      t.db.database,
    );
    extra.push(rotating);
    const rotate = () =>
      rotating.inject({ method: 'POST', url: '/v1/software/storage/rotate-key', headers: t.adminAuth });
    const res = await rotate();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ resealed: 1 });

    const read = async () =>
      (
        await rotating.inject({
          method: 'GET',
          url: `/v1/audit-events?entity_type=artifact&entity_id=${r.artifact_id}`,
          headers: t.adminAuth,
        })
      ).body;
    const body = await read();
    const events = JSON.parse(body) as Event[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'rotate_key',
      actor: { email: ADMIN.email },
      changes: { key_id: { before: keyIdOf(keyA), after: keyIdOf(keyB) } },
    });
    for (const key of [keyA, keyB]) {
      expect(body).not.toContain(key.toString('base64'));
      expect(body).not.toContain(key.toString('hex'));
    }
    // Nothing left on an old key: nothing changes, nothing is recorded.
    expect((await rotate()).json()).toMatchObject({ resealed: 0 });
    expect(JSON.parse(await read())).toHaveLength(1);
    // Refused callers change nothing and are not recorded.
    expectError(
      await rotating.inject({ method: 'POST', url: '/v1/software/storage/rotate-key' }),
      401,
      'rest_not_logged_in',
    );
    expect(JSON.parse(await read())).toHaveLength(1);
  });
});
