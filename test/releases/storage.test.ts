import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { withTransaction } from '../../src/db/transaction.js';
import type { App } from '../../src/http/types.js';
import { keyIdOf } from '../../src/modules/vault/keyring.js';
import { ADMIN, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { publish, softwareProduct } from '../helpers/factories.js';
import { stagingFiles } from '../helpers/vault.js';
import { enableStripe, STRIPE_KEYS, signed, stripeEvent } from '../stripe/helpers.js';

describe('configuration of the vault', () => {
  it('VAULT_KEY must be base64 of 32 bytes, with a message saying so', () => {
    expect(() => loadConfig({ VAULT_KEY: 'c2hvcnQ=' })).toThrow(ConfigError);
    expect(() => loadConfig({ VAULT_KEY: 'c2hvcnQ=' })).toThrow(/VAULT_KEY must be base64 of exactly 32/);
    expect(() => loadConfig({ VAULT_KEY: `${'!'.repeat(43)}=` })).toThrow(/VAULT_KEY/);
    expect(() => loadConfig({ VAULT_PREVIOUS_KEYS: `${randomBytes(32).toString('base64')},nope` })).toThrow(
      /VAULT_PREVIOUS_KEYS\[1\]/,
    );
    const key = randomBytes(32);
    const c = loadConfig({
      VAULT_KEY: key.toString('base64'),
      VAULT_PREVIOUS_KEYS: randomBytes(32).toString('base64'),
    });
    expect(c.vaultKey?.equals(key)).toBe(true);
    expect(c.vaultPreviousKeys).toHaveLength(1);
  });

  it('MAX_UPLOAD_BYTES defaults to 512 MiB and must be a whole number in range', () => {
    expect(loadConfig({}).maxUploadBytes).toBe(512 * 1024 * 1024);
    expect(() => loadConfig({ MAX_UPLOAD_BYTES: '10MB' })).toThrow(/MAX_UPLOAD_BYTES must be a whole number/);
    expect(() => loadConfig({ MAX_UPLOAD_BYTES: '10' })).toThrow(/MAX_UPLOAD_BYTES/);
  });

  it('the vault defaults to DATA_DIR/vault and DATA_DIR/public is always a public root', () => {
    const c = loadConfig({ DATA_DIR: '/srv/tollgate', PUBLIC_ROOTS: '/var/www/html:/srv/static' });
    expect(c.vaultDir).toBe('/srv/tollgate/vault');
    expect(c.publicRoots).toEqual(['/srv/tollgate/public', '/var/www/html', '/srv/static']);
    expect(loadConfig({ DATA_DIR: '/srv/tollgate', VAULT_DIR: '/mnt/vault' }).vaultDir).toBe('/mnt/vault');
  });
});

describe('staging sweep at start', () => {
  it('removes what a dead process left, keeps what a live one is writing', async () => {
    const t = await createTestApp();
    try {
      const staging = join(t.config.vaultDir, '.staging');
      mkdirSync(staging, { recursive: true });
      const host = hostname().replace(/[^A-Za-z0-9-]/g, '_');
      // PID 2^22+1 is above Linux's pid_max: certainly not running.
      writeFileSync(join(staging, `${host}-4194305-dead.part`), 'partial');
      writeFileSync(join(staging, `${host}-1-live.part`), 'init is alive');
      const second = await buildApp({ ...t.config, logLevel: 'silent' }, t.db.database);
      await second.ready();
      expect(stagingFiles(t.config.vaultDir)).toEqual([`${host}-1-live.part`]);
      await second.close();
    } finally {
      await t.close();
    }
  });
});

/** A store sealing with `key`, and other apps on its data and database with other vault keys. */
async function keyedStore(key: Buffer) {
  const t = await createTestApp({ env: { VAULT_KEY: key.toString('base64') } });
  const apps: App[] = [];
  return {
    t,
    async withKeys(current: Buffer, previous: Buffer[]): Promise<App> {
      const app = await buildApp(
        { ...t.config, vaultKey: current, vaultPreviousKeys: previous },
        t.db.database,
      );
      apps.push(app);
      return app;
    },
    /** `POST /v1/software/storage/rotate-key` on `app`, as the administrator. */
    rotate(app: App) {
      return app.inject({ method: 'POST', url: '/v1/software/storage/rotate-key', headers: t.adminAuth });
    },
    /** The storage status's `encryption`, as `app` sees it. */
    async encryption(app: App) {
      const res = await app.inject({
        method: 'GET',
        url: '/v1/software/storage/status',
        headers: t.adminAuth,
      });
      return res.json().encryption;
    },
    async close() {
      for (const app of apps) await app.close();
      await t.close();
    },
  };
}

describe('encryption keys: generated, configured, rotated', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  let store: Awaited<ReturnType<typeof keyedStore>>;
  let t: TestApp;
  let productId: number;
  let versionId: number;
  const withKeys = (current: Buffer, previous: Buffer[]) => store.withKeys(current, previous);

  beforeAll(async () => {
    store = await keyedStore(keyA);
    t = store.t;
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    productId = product.id;
    const r = await publish(t, productId, '1.0.0');
    versionId = r.version_id;
    await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${productId}/versions/${versionId}/withdraw`,
      headers: t.adminAuth,
    });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('the storage status names the key source and id, never the key', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/software/storage/status',
      headers: t.adminAuth,
    });
    expect(res.json().encryption).toMatchObject({
      key_source: 'env',
      key_id: keyIdOf(keyA),
      key_file: null,
      previous_key_ids: [],
    });
    expect(res.body).not.toContain(keyA.toString('base64'));
    expect(res.body).not.toContain(keyA.toString('hex'));
  });

  it('without the sealing key an artifact cannot be revalidated (500 vault_key_unavailable)', async () => {
    const app = await withKeys(keyB, []);
    expectError(
      await app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/versions/${versionId}/republish`,
        headers: t.adminAuth,
      }),
      500,
      'vault_key_unavailable',
    );
  });

  it('rotation re-seals with the new key; afterwards the old key is no longer needed', async () => {
    const rotating = await withKeys(keyB, [keyA]);
    expect(await store.encryption(rotating)).toMatchObject({
      key_id: keyIdOf(keyB),
      previous_key_ids: [keyIdOf(keyA)],
      artifacts_on_previous_keys: 1,
    });
    const res = await store.rotate(rotating);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key_id: keyIdOf(keyB), resealed: 1 });
    expect((await store.encryption(rotating)).artifacts_on_previous_keys).toBe(0);
    const onlyB = await withKeys(keyB, []);
    const republish = await onlyB.inject({
      method: 'POST',
      url: `/v1/software/products/${productId}/versions/${versionId}/republish`,
      headers: t.adminAuth,
    });
    expect(republish.statusCode).toBe(200);
    expect(republish.json().status).toBe('published');
    expectError(
      await onlyB.inject({
        method: 'POST',
        url: '/v1/software/storage/rotate-key',
        headers: t.adminAuth,
        payload: { all: true },
      }),
      400,
      'invalid_parameters',
    );
    expectError(
      await onlyB.inject({ method: 'POST', url: '/v1/software/storage/rotate-key' }),
      401,
      'rest_not_logged_in',
    );
  });

  it('storage status is administrator-only', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/software/storage/status' }),
      401,
      'rest_not_logged_in',
    );
  });
});

describe('key rotation re-seals the secrets other modules seal with the vault key', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  let store: Awaited<ReturnType<typeof keyedStore>>;
  afterAll(async () => {
    await store?.close();
  });
  /** A signed Stripe event the webhook route acknowledges: only a store that can open the secret verifies it. */
  const stripeDelivery = (app: App) => {
    const { payload, headers } = signed(stripeEvent('customer.created', { id: 'cus_rotation' }));
    return app.inject({ method: 'POST', url: '/v1/stripe/webhook', payload, headers });
  };

  it('the Stripe secrets and the signing key move to the new key, are recorded, and work with only it', async () => {
    store = await keyedStore(keyA);
    const { t, withKeys } = store;
    const status = (app: App) => store.encryption(app);
    await enableStripe(t);
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    await publish(t, product.id, '1.0.0'); // signs, so the signing key exists, sealed with key A

    // Only the new key, before rotating: the webhook secret cannot be opened.
    expectError(await stripeDelivery(await withKeys(keyB, [])), 500, 'vault_key_unavailable');

    const rotating = await withKeys(keyB, [keyA]);
    expect(await status(rotating)).toMatchObject({
      artifacts_on_previous_keys: 1,
      secrets_on_previous_keys: 3,
      secrets_with_unknown_key: 0,
    });
    const res = await store.rotate(rotating);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ key_id: keyIdOf(keyB), resealed: 1, secrets_resealed: 3 });
    const names = body.secrets.map((s: { secret: string }) => s.secret).sort();
    expect(names.slice(0, 2)).toEqual(['settings.stripe_secret_key', 'settings.stripe_webhook_secret']);
    expect(names[2]).toMatch(/^signing_key\.k1-[0-9a-f]+$/);
    for (const s of body.secrets) expect(s).toMatchObject({ from_key_id: keyIdOf(keyA), ok: true });
    expect(await status(rotating)).toMatchObject({
      artifacts_on_previous_keys: 0,
      secrets_on_previous_keys: 0,
    });

    // The trail names the key ids of each secret, never a secret or a key.
    const trail = await rotating.inject({
      method: 'GET',
      url: '/v1/audit-events?entity_type=settings',
      headers: t.adminAuth,
    });
    const rotations = (trail.json() as { action: string; changes: Record<string, unknown> }[]).filter(
      (e) => e.action === 'rotate_key',
    );
    expect(rotations.map((e) => Object.keys(e.changes)[0]).sort()).toEqual([
      'stripe_secret_key.key_id',
      'stripe_webhook_secret.key_id',
    ]);
    for (const e of rotations) {
      expect(Object.values(e.changes)).toEqual([{ before: keyIdOf(keyA), after: keyIdOf(keyB) }]);
    }
    for (const secret of [
      STRIPE_KEYS.stripe_secret_key,
      STRIPE_KEYS.stripe_webhook_secret,
      keyA.toString('base64'),
    ]) {
      expect(trail.body).not.toContain(secret);
    }
    const signingTrail = await rotating.inject({
      method: 'GET',
      url: '/v1/audit-events?entity_type=signing_key',
      headers: t.adminAuth,
    });
    expect(signingTrail.json()).toContainEqual(
      expect.objectContaining({
        action: 'rotate_key',
        changes: { 'private_key.key_id': { before: keyIdOf(keyA), after: keyIdOf(keyB) } },
      }),
    );

    // With only the new key: the webhook verifies, and a new upload is signed.
    const onlyB = await withKeys(keyB, []);
    expect((await stripeDelivery(onlyB)).statusCode).toBe(200);
    const upload = await publish({ ...t, app: onlyB }, product.id, '1.1.0');
    expect(upload.signature).toEqual(expect.any(String));

    // Nothing left on an old key: a second rotation does nothing.
    const again = await store.rotate(onlyB);
    expect(again.json()).toMatchObject({ resealed: 0, secrets_resealed: 0, secrets: [] });
  });

  it('a secret changed after rotation read it is left with its new value', async () => {
    const app = await store.withKeys(keyB, []);
    const { settings, signing } = app.services;
    const [read] = (await settings.sealedSecrets()).filter((x) => x.id === 'stripe_secret_key');
    const [key] = await signing.sealedSecrets();
    await setSettings({ ...store.t, app }, { stripe_secret_key: 'sk_test_changedMeanwhile' });
    await signing.rotate({ user_id: 1, email: ADMIN.email }); // retires the key read above, erasing its private half
    const stale = Buffer.from('stale');
    const replaced = await withTransaction(store.t.db.database, async (tx) => [
      await settings.replaceSealed(read!.id, read!.sealed, stale, tx),
      await signing.replaceSealed(key!.id, key!.sealed, stale, tx),
    ]);
    expect(replaced).toEqual([false, false]);
    expect(await settings.secret('stripe_secret_key')).toBe('sk_test_changedMeanwhile');
    expect((await signing.sealedSecrets()).map((k) => k.id)).not.toContain(key!.id);
  });
});
