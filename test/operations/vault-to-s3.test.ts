import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { backup } from '../../src/backup.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/types.js';
import { sha256 } from '../../src/random.js';
import { download, type Fixture, issue, protectedFixture } from '../distribution/helpers.js';
import { admin, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { dialectUnderTest } from '../helpers/db.js';
import { makeZip, publish } from '../helpers/factories.js';
import { startS3, type TestBucket } from '../helpers/s3.js';
import { vaultFiles } from '../helpers/vault.js';

/**
 * Switching a store to a bucket (docs/operations.md, 'Object storage'): releases kept in the vault
 * stay served by the vault's drivers while new uploads go to the bucket, and
 * `vault:migrate-to-s3` moves the vault there, verifying each object before its row switches;
 * running it again is harmless. A backup then names the bucket's artifacts without copying them.
 */
const PREFIX = 'moved/';
const VAULT_KEY = randomBytes(32).toString('base64');
let s3: TestBucket;
/** The store as it was: vault only. */
let t: TestApp;
/** The same store (database, vault, key) restarted with the S3_* variables set. */
let withBucket: TestApp;
let bucketApp: App;
let client: S3Client;

beforeAll(async () => {
  s3 = await startS3();
  t = await createTestApp({ env: { VAULT_KEY } });
  await setSettings(t, { rate_limit: 1000 });
  const config: Config = { ...t.config, s3: loadConfig(s3.env(PREFIX)).s3 };
  bucketApp = await buildApp(config, t.db.database);
  withBucket = { ...t, app: bucketApp, config };
  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
});
afterAll(async () => {
  client?.destroy();
  await bucketApp?.close();
  await t?.close();
  await s3?.stop();
});

const db = () => t.app.services.database.db;
const artifactOf = (id: number) =>
  db().selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Downloads a fixture's release through `app`, expecting its exact bytes. */
async function downloadsWhole(app: TestApp, f: Fixture) {
  const answer = await issue(app, f);
  const res = await download(app, answer.download_url);
  expect(res.statusCode).toBe(200);
  expect(res.rawPayload.equals(f.zip)).toBe(true);
}

/** The command line's environment for the same store: database, vault, key and bucket. */
function storeEnv(): Record<string, string> {
  const database: Record<string, string> =
    t.db.config.kind === 'postgres'
      ? { DATABASE_URL: t.db.config.url, DATA_DIR: t.config.dataDir }
      : { DATA_DIR: dirname(t.db.config.file) };
  return { ...database, VAULT_DIR: t.config.vaultDir, VAULT_KEY, ...s3.env(PREFIX) };
}

describe('switching a store to the bucket', () => {
  let plain: Fixture;
  let sealed: Fixture;

  beforeAll(async () => {
    plain = await protectedFixture(t, { software: { storage_driver: 'local' }, zip: makeZip(120_000) });
    sealed = await protectedFixture(t, {
      software: { storage_driver: 'local_encrypted' },
      zip: makeZip(90_000),
    });
  });

  it('releases stored in the vault stay readable, new uploads go to the bucket', async () => {
    expect([plain.release.storage_driver, sealed.release.storage_driver]).toEqual([
      'local',
      'local_encrypted',
    ]);
    expect(vaultFiles(t.config.vaultDir).length).toBe(2);
    await downloadsWhole(withBucket, plain);
    await downloadsWhole(withBucket, sealed);
    const fresh = await protectedFixture(withBucket, { zip: makeZip(3000) });
    expect(fresh.release.storage_driver).toBe('s3');
    await downloadsWhole(withBucket, fresh);
    expect(vaultFiles(t.config.vaultDir).length).toBe(2);
  });

  it('vault:migrate-to-s3 moves the vault, verified, and a second run finds nothing to do', async () => {
    const run = await cli(['vault:migrate-to-s3'], storeEnv());
    expect(run.stderr).not.toContain('warning: artifact');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('moved 2 artifacts to the bucket');
    for (const [f, driver] of [
      [plain, 's3'],
      [sealed, 's3_encrypted'],
    ] as const) {
      const a = await artifactOf(f.release.artifact_id);
      expect(a).toMatchObject({ driver, state: 'available' });
      expect(a.stored_etag).toBeTruthy();
      const o = await client.send(
        new GetObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${a.storage_key}` }),
      );
      expect(Number(o.ContentLength)).toBe(Number(a.stored_size));
      await o.Body!.transformToByteArray();
      await downloadsWhole(withBucket, f);
      // The move is in the audit trail, Tollgate's own doing on the operator's command.
      const trail = await admin(t, 'GET', `/audit-events?entity_type=artifact&entity_id=${a.id}`);
      expect(trail.json()).toEqual([
        expect.objectContaining({
          action: 'move_storage',
          actor: expect.objectContaining({ kind: 'system', name: 'vault_migration' }),
          changes: {
            storage_driver: { before: driver === 's3' ? 'local' : 'local_encrypted', after: driver },
          },
        }),
      ]);
    }
    expect(vaultFiles(t.config.vaultDir)).toEqual([]);
    const again = await bucketApp.services.bucketMigration.run();
    expect(again).toEqual({ moved: [], failed: [], removedLeftovers: 0 });
  });

  it('a run that stopped after a switch leaves a vault copy, which the next run removes', async () => {
    const a = await artifactOf(plain.release.artifact_id);
    const leftover = join(t.config.vaultDir, ...a.storage_key.split('/'));
    mkdirSync(dirname(leftover), { recursive: true });
    writeFileSync(leftover, plain.zip);
    const result = await bucketApp.services.bucketMigration.run();
    expect(result).toEqual({ moved: [], failed: [], removedLeftovers: 1 });
    expect(existsSync(leftover)).toBe(false);
    await downloadsWhole(withBucket, plain);
  });

  it('a vault file that does not match its checksum is not moved, and leaves no object', async () => {
    const zip = makeZip(4000);
    const release = await publish(t, plain.product.id, '3.0.0', [], zip);
    const a = await artifactOf(release.artifact_id);
    expect(a.driver).toBe('local');
    const path = join(t.config.vaultDir, ...a.storage_key.split('/'));
    const bytes = readFileSync(path);
    bytes[100] = bytes[100]! ^ 0xff;
    writeFileSync(path, bytes);
    const result = await bucketApp.services.bucketMigration.run();
    expect(result.moved).toEqual([]);
    expect(result.failed).toEqual([{ artifact_id: a.id, reason: 'hash_mismatch' }]);
    expect((await artifactOf(a.id)).driver).toBe('local');
    const trail = await admin(t, 'GET', `/audit-events?entity_type=artifact&entity_id=${a.id}`);
    expect(trail.json()).toEqual([]);
    await expect(
      client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${a.storage_key}` })),
    ).rejects.toMatchObject({ name: 'NoSuchKey' });
    writeFileSync(path, zip);
    const fixed = await bucketApp.services.bucketMigration.run();
    expect(fixed.moved).toEqual([{ artifact_id: a.id, from: 'local', to: 's3' }]);
  });

  it.skipIf(dialectUnderTest === 'postgres')(
    'a backup (SQLite) names the artifacts in the bucket without copying them',
    async () => {
      if (t.db.config.kind !== 'sqlite') return;
      const target = mkdtempSync(join(tmpdir(), 'tollgate-backup-'));
      try {
        const manifest = await backup(
          { dataDir: t.config.dataDir, databaseFile: t.db.config.file, vaultDir: t.config.vaultDir },
          join(target, 'b'),
        );
        const inBucket = await db()
          .selectFrom('artifacts')
          .select(({ fn }) => fn.countAll<number>().as('n'))
          .where('driver', 'in', ['s3', 's3_encrypted'])
          .executeTakeFirstOrThrow();
        expect(manifest.in_bucket).toBe(Number(inBucket.n));
        expect(manifest.in_bucket).toBeGreaterThanOrEqual(4);
        expect(manifest.files.filter((f) => f.path.startsWith('vault/'))).toEqual([]);
        expect(sha256(readFileSync(join(target, 'b', 'tollgate.sqlite')))).toBe(manifest.files[0]!.sha256);
      } finally {
        rmSync(target, { recursive: true, force: true });
      }
    },
  );
});
