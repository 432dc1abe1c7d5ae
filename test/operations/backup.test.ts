import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { BackupError, backup, type Manifest, restore, type StorePaths } from '../../src/backup.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { protectedFixture, siteCreds } from '../distribution/helpers.js';
import { ADMIN, basic, postForm, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { dialectUnderTest } from '../helpers/db.js';
import { adminId, makeZip, publish, softwareProduct } from '../helpers/factories.js';
import { startServer } from '../helpers/server.js';

/**
 * Backups and restore of a store on SQLite (docs/backups.md): `tollgate backup <dir>` while the
 * store serves, `tollgate restore <dir>` into a fresh data directory, and the refusals of both.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The store's vault key, kept apart from its backups as docs/backups.md tells operators to. */
const VAULT_KEY = randomBytes(32).toString('base64');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Every file below `dir`, as sorted `/`-separated relative paths. */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(dir.length + 1)
        .split('\\')
        .join('/'),
    )
    .sort();
}

const tmp = (tag: string) => mkdtempSync(join(tmpdir(), `tollgate-${tag}-`));

/**
 * A store as `tollgate serve` runs it: its database at DATA_DIR/tollgate.sqlite and its vault in
 * DATA_DIR, built in this process so the test's factories can seed it.
 */
async function storeOnDisk(): Promise<TestApp & { dataDir: string; paths: StorePaths }> {
  const dataDir = tmp('backup-store');
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', VAULT_KEY });
  if (config.database.kind !== 'sqlite') throw new Error('the store of this test is on SQLite');
  const database = openDatabase(config.database);
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp(config, database);
  const admin = await app.services.accounts.ensureAdministrator(ADMIN.email, ADMIN.password);
  const { password } = await app.services.accounts.createAppPassword(admin.id, 'tests');
  const file = config.database.file;
  return {
    app,
    db: { config: config.database, database, drop: () => database.close() },
    config,
    logs: () => '',
    adminAuth: { authorization: basic(ADMIN.email, password) },
    dataDir,
    paths: { dataDir, databaseFile: file, vaultDir: config.vaultDir },
    async close() {
      await app.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;

/** Each command is a Node.js process of its own (a few seconds each on a loaded machine). */
const PROCESSES = { timeout: 300_000 };

describe.runIf(dialectUnderTest === 'sqlite')('backup and restore of a store on SQLite', () => {
  let store: Awaited<ReturnType<typeof storeOnDisk>>;
  let url: string;
  const dirs: string[] = [];
  const dir = (tag: string) => {
    const d = tmp(tag);
    dirs.push(d);
    return d;
  };
  /** A published, licensed product with an active site: 1.0.0 plain, 1.1.0 encrypted at rest. */
  let fixture: Awaited<ReturnType<typeof protectedFixture>>;
  let encryptedZip: Buffer;
  let encryptedRelease: { artifact_id: number; file_sha256: string };
  let backupDir: string;
  const legacyZip = makeZip(900);
  const legacyPaths: string[] = [];

  beforeAll(async () => {
    store = await storeOnDisk();
    fixture = await protectedFixture(store);
    encryptedZip = makeZip(2500);
    encryptedRelease = await publish(
      store,
      fixture.product.id,
      '1.1.0',
      [['storage_driver', 'local_encrypted']],
      encryptedZip,
    );
    // Two files of the legacy catalogue's public uploads folder; the second one's file is then
    // removed by hand, as an operator might.
    for (const content of [legacyZip, makeZip(700)]) {
      const up = await postForm(store, `/v1/products/${fixture.product.id}/downloads`, [
        ['file', { filename: 'legacy.zip', content }],
      ]);
      expect(up.statusCode).toBe(201);
      const row = await store.db.database.db
        .selectFrom('legacy_downloads')
        .select('public_path')
        .where('download_id', '=', up.json().download_id)
        .executeTakeFirstOrThrow();
      legacyPaths.push(row.public_path);
    }
    rmSync(join(store.dataDir, 'public', legacyPaths[1]!));
    await store.app.listen({ port: 0, host: '127.0.0.1' });
    const address = store.app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await store?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it(
    'backs up while the store answers requests, and a store restored from it serves the same license and release',
    PROCESSES,
    async () => {
      backupDir = join(dir('backup-target'), 'nightly');
      let running = true;
      const answers: number[] = [];
      const userId = await adminId(store);
      // Validations and new licenses (writes) over real HTTP for as long as the backup runs.
      const traffic = async () => {
        while (running) {
          const validate = await fetch(`${url}/v1/licenses/validate`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ license_key: fixture.key, ...fixture.site }),
          });
          answers.push(validate.status);
          await validate.arrayBuffer();
          const issue = await fetch(`${url}/v1/licenses`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...store.adminAuth },
            body: JSON.stringify({ product_id: fixture.product.id, user_id: userId }),
          });
          answers.push(issue.status);
          await issue.arrayBuffer();
        }
      };
      const clients = [traffic(), traffic(), traffic()];
      const run = await cli(['backup', backupDir], { DATA_DIR: store.dataDir });
      running = false;
      await Promise.all(clients);
      expect(run.code, run.stderr).toBe(0);
      expect(answers.length).toBeGreaterThan(0);
      expect(answers.filter((s) => s !== 200 && s !== 201)).toEqual([]);

      // The manifest: the database, both vault files and the public upload still on disk, each with its size and SHA-256.
      const manifest = manifestOf(backupDir);
      expect(manifest).toMatchObject({
        format: 1,
        database: 'tollgate.sqlite',
        skipped: [{ path: `public/${legacyPaths[1]}`, reason: 'missing' }],
      });
      expect(run.stderr).toContain(legacyPaths[1]);
      expect(manifest.tollgate_version).toBe(
        JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
      );
      expect(Number.isNaN(Date.parse(manifest.created_at))).toBe(false);
      const rows = await store.db.database.db
        .selectFrom('artifacts')
        .select(['id', 'storage_key'])
        .where('id', 'in', [fixture.release.artifact_id, encryptedRelease.artifact_id])
        .orderBy('id')
        .execute();
      expect(manifest.files.map((f) => f.path).sort()).toEqual(
        ['tollgate.sqlite', ...rows.map((r) => `vault/${r.storage_key}`), `public/${legacyPaths[0]}`].sort(),
      );
      expect(manifest.files.find((f) => f.path === `public/${legacyPaths[0]}`)?.sha256).toBe(
        sha256(legacyZip),
      );
      expect(filesBelow(backupDir)).toEqual([...manifest.files.map((f) => f.path), 'manifest.json'].sort());
      for (const f of manifest.files) {
        const bytes = readFileSync(join(backupDir, f.path));
        expect({ size: bytes.length, sha256: sha256(bytes) }).toEqual({ size: f.size, sha256: f.sha256 });
        // Private files owner-only; a public upload readable by the web server that serves it.
        expect(statSync(join(backupDir, f.path)).mode & 0o777).toBe(
          f.path.startsWith('public/') ? 0o644 : 0o600,
        );
      }
      // A plain artifact is stored as uploaded; the encrypted one is ciphertext, not the zip.
      const plain = manifest.files.find((f) => f.path === `vault/${rows[0]!.storage_key}`)!;
      expect(plain.sha256).toBe(sha256(fixture.zip));
      const sealed = manifest.files.find((f) => f.path === `vault/${rows[1]!.storage_key}`)!;
      expect(sealed.sha256).not.toBe(sha256(encryptedZip));
      // The vault key is not in the backup, even when the store generated one.
      expect(filesBelow(backupDir).some((p) => p.includes('vault.key'))).toBe(false);

      // Restore into a fresh data directory, then serve it from a real server process.
      const restoredDir = join(dir('restored'), 'data');
      const restored = await cli(['restore', backupDir], { DATA_DIR: restoredDir });
      expect(restored.code, restored.stderr).toBe(0);
      expect(statSync(restoredDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(restoredDir, 'tollgate.sqlite')).mode & 0o777).toBe(0o600);
      expect(filesBelow(restoredDir).filter((p) => p.includes('.part'))).toEqual([]);
      const server = await startServer({ DATA_DIR: restoredDir, VAULT_KEY });
      try {
        const validate = await fetch(`${server.url}/v1/licenses/validate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ license_key: fixture.key, ...fixture.site }),
        });
        expect(validate.status).toBe(200);
        expect(await validate.json()).toMatchObject({
          valid: true,
          license_key: fixture.key,
          product_id: fixture.product.id,
        });

        const pkg = await fetch(`${server.url}/v1/software/package`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            slug: fixture.slug,
            purpose: 'install',
            ...siteCreds(fixture.key, fixture.site),
          }),
        });
        expect(pkg.status).toBe(200);
        const { download_url } = (await pkg.json()) as { download_url: string };
        const download = await fetch(download_url);
        expect(download.status).toBe(200);
        const body = Buffer.from(await download.arrayBuffer());
        expect(sha256(body)).toBe(sha256(encryptedZip));
        expect(sha256(body)).toBe(encryptedRelease.file_sha256);

        const legacy = await fetch(`${server.url}/${legacyPaths[0]}`);
        expect(legacy.status).toBe(200);
        expect(sha256(Buffer.from(await legacy.arrayBuffer()))).toBe(sha256(legacyZip));
      } finally {
        expect(await server.stop()).toBe(0);
      }

      // Restoring again over the store that now has a database is refused, and changes nothing.
      const before = sha256(readFileSync(join(restoredDir, 'tollgate.sqlite')));
      const again = await cli(['restore', backupDir], { DATA_DIR: restoredDir });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('[database_exists]');
      expect(sha256(readFileSync(join(restoredDir, 'tollgate.sqlite')))).toBe(before);
      expect(filesBelow(restoredDir).filter((p) => p.includes('.part'))).toEqual([]);
    },
  );

  it('refuses a backup directory that is not empty, and writes nothing into it', PROCESSES, async () => {
    const target = dir('backup-busy');
    writeFileSync(join(target, 'notes.txt'), 'keep me');
    const run = await cli(['backup', target], { DATA_DIR: store.dataDir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('[target_not_empty]');
    expect(filesBelow(target)).toEqual(['notes.txt']);
    expect(readFileSync(join(target, 'notes.txt'), 'utf8')).toBe('keep me');
  });

  it(
    'refuses to restore a backup with one changed byte, in the database or a vault file, and writes nothing',
    PROCESSES,
    async () => {
      const manifest = manifestOf(backupDir);
      for (const path of ['tollgate.sqlite', manifest.files.find((f) => f.path.startsWith('vault/'))!.path]) {
        const damaged = join(dir('backup-damaged'), 'copy');
        cpSync(backupDir, damaged, { recursive: true });
        const bytes = readFileSync(join(damaged, path));
        bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
        writeFileSync(join(damaged, path), bytes);
        const dataDir = join(dir('restore-damaged'), 'data');
        const run = await cli(['restore', damaged], { DATA_DIR: dataDir });
        expect(run.code, path).toBe(1);
        expect(run.stderr).toContain('[backup_corrupt]');
        expect(existsSync(dataDir)).toBe(false);
      }
    },
  );

  it(
    'refuses to restore a directory without a manifest, and a missing file of the manifest',
    PROCESSES,
    async () => {
      const empty = dir('not-a-backup');
      const dataDir = join(dir('restore-none'), 'data');
      const none = await cli(['restore', empty], { DATA_DIR: dataDir });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('[manifest_missing]');

      const partial = join(dir('backup-partial'), 'copy');
      cpSync(backupDir, partial, { recursive: true });
      const vaultFile = manifestOf(partial).files.find((f) => f.path.startsWith('vault/'))!.path;
      rmSync(join(partial, vaultFile));
      const run = await cli(['restore', partial], { DATA_DIR: dataDir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('[backup_corrupt]');
      expect(existsSync(dataDir)).toBe(false);
    },
  );

  it('restores next to a vault file with the same content, and refuses one with other content', async () => {
    const vaultFile = manifestOf(backupDir).files.find((f) => f.path.startsWith('vault/'))!.path;
    const dataDir = join(dir('restore-conflict'), 'data');
    const paths: StorePaths = {
      dataDir,
      databaseFile: join(dataDir, 'tollgate.sqlite'),
      vaultDir: join(dataDir, 'vault'),
    };
    const there = join(dataDir, ...vaultFile.split('/'));
    mkdirSync(dirname(there), { recursive: true });
    writeFileSync(there, 'other bytes');
    const error = await restore(paths, backupDir).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as BackupError).code).toBe('target_conflict');
    expect(existsSync(paths.databaseFile)).toBe(false);
    expect(readFileSync(there, 'utf8')).toBe('other bytes');
    expect(filesBelow(dataDir)).toEqual([vaultFile]);

    cpSync(join(backupDir, vaultFile), there);
    const result = await restore(paths, backupDir);
    expect(result).toMatchObject({ written: result.manifest.files.length - 1, present: 1 });
    expect(sha256(readFileSync(paths.databaseFile))).toBe(
      sha256(readFileSync(join(backupDir, 'tollgate.sqlite'))),
    );
  });

  it('a file deleted while the backup copies: a fresh snapshot that no longer names it, or a clear failure', async () => {
    const product = await softwareProduct(store);
    const a = await publish(store, product.id, '2.0.0');
    const b = await publish(store, product.id, '2.1.0');
    const keyOf = async (id: number) =>
      (
        await store.db.database.db
          .selectFrom('artifacts')
          .select('storage_key')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).storage_key;
    const keyA = await keyOf(a.artifact_id);
    const keyB = await keyOf(b.artifact_id);

    // A deletion begins right after the first snapshot: it marks the artifact, then removes the
    // file (the order of src/modules/releases/deletions.service.ts). The backup takes a second
    // snapshot, in which the artifact is being deleted, and leaves it out.
    const target = join(dir('backup-retry'), 'b');
    const attempts: number[] = [];
    const manifest = await backup(store.paths, target, {
      afterSnapshot: async (attempt) => {
        attempts.push(attempt);
        if (attempt !== 1) return;
        await store.db.database.db
          .updateTable('artifacts')
          .set({ state: 'delete_pending' })
          .where('id', '=', a.artifact_id)
          .execute();
        rmSync(join(store.paths.vaultDir, ...keyA.split('/')));
      },
    });
    expect(attempts).toEqual([1, 2]);
    const paths = manifest.files.map((f) => f.path);
    expect(paths).not.toContain(`vault/${keyA}`);
    expect(paths).toContain(`vault/${keyB}`);
    const copy = openSqlite(join(target, 'tollgate.sqlite'), { readonly: true });
    try {
      expect(copy.prepare('SELECT state FROM artifacts WHERE id = ?').get(a.artifact_id)).toEqual({
        state: 'delete_pending',
      });
    } finally {
      copy.close();
    }
    expect(filesBelow(target)).toEqual([...paths, 'manifest.json'].sort());

    // A file that goes missing while the database still calls it available, every time: the
    // backup fails with its code and leaves the directory empty.
    rmSync(join(store.paths.vaultDir, ...keyB.split('/')));
    const failed = join(dir('backup-fail'), 'b');
    const error = await backup(store.paths, failed).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BackupError);
    expect((error as BackupError).code).toBe('artifact_missing');
    expect(filesBelow(failed)).toEqual([]);
  });
});

describe('backup on PostgreSQL', () => {
  it('refuses, pointing to pg_dump, and touches nothing', PROCESSES, async () => {
    const target = join(tmp('backup-pg'), 'b');
    try {
      // The command refuses before it connects: any PostgreSQL URL shows it.
      const url = process.env.DATABASE_URL ?? 'postgres://tollgate@127.0.0.1:1/none';
      const dataDir = join(target, '..', 'data');
      for (const command of ['backup', 'restore']) {
        const run = await cli([command, target], { DATABASE_URL: url, DATA_DIR: dataDir });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('[postgres_not_supported]');
        expect(run.stderr).toContain('docs/backups.md');
        expect(existsSync(target)).toBe(false);
        expect(existsSync(dataDir)).toBe(false);
      }
    } finally {
      rmSync(join(target, '..'), { recursive: true, force: true });
    }
  });
});

describe('the command line', () => {
  it('answers usage for a backup or restore without a directory', PROCESSES, async () => {
    const dataDir = join(tmp('backup-usage'), 'data');
    try {
      for (const command of ['backup', 'restore']) {
        const run = await cli([command], { DATA_DIR: dataDir });
        expect(run.code).toBe(2);
        expect(existsSync(dataDir)).toBe(false);
      }
    } finally {
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  });
});
