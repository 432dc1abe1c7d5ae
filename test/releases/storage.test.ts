import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/types.js';
import { keyIdOf } from '../../src/modules/releases/storage/keyring.js';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { publish, softwareProduct } from '../helpers/factories.js';
import { stagingFiles } from '../helpers/vault.js';

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

describe('encryption keys: generated, configured, rotated', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  let t: TestApp;
  let productId: number;
  let versionId: number;
  const extra: App[] = [];

  /** Another app on the same data and database with other keys. */
  async function withKeys(current: Buffer, previous: Buffer[]): Promise<App> {
    const app = await buildApp(
      { ...t.config, vaultKey: current, vaultPreviousKeys: previous },
      t.db.database,
    );
    extra.push(app);
    return app;
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { VAULT_KEY: keyA.toString('base64') } });
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
    for (const app of extra) await app.close();
    await t?.close();
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
    const before = await rotating.inject({
      method: 'GET',
      url: '/v1/software/storage/status',
      headers: t.adminAuth,
    });
    expect(before.json().encryption).toMatchObject({
      key_id: keyIdOf(keyB),
      previous_key_ids: [keyIdOf(keyA)],
      artifacts_on_previous_keys: 1,
    });
    const res = await rotating.inject({
      method: 'POST',
      url: '/v1/software/storage/rotate-key',
      headers: t.adminAuth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key_id: keyIdOf(keyB), resealed: 1 });
    const after = await rotating.inject({
      method: 'GET',
      url: '/v1/software/storage/status',
      headers: t.adminAuth,
    });
    expect(after.json().encryption.artifacts_on_previous_keys).toBe(0);
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
