import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { type Clock, systemClock } from './clock.js';
import { openSqlite } from './db/sqlite.js';
import { hashFile } from './modules/releases/storage/local.js';

/**
 * Backup and restore of a store on SQLite (docs/backups.md): a consistent snapshot of the
 * database taken with SQLite's online backup, then the vault files and public uploads that
 * snapshot names, each checked against the checksum the database stores, and a manifest with the
 * size and SHA-256 of every file. Restore checks the manifest before it writes anything and puts
 * each file in place by rename. The vault key is never part of a backup.
 */

export const MANIFEST = 'manifest.json';
export const MANIFEST_FORMAT = 1;
const DATABASE_NAME = 'tollgate.sqlite';
/** A vault storage key (src/modules/releases/storage/vault.ts): two levels of generated names. */
const STORAGE_KEY = /^[0-9a-f]{2}\/[0-9a-f-]{36}\.(zip|tgv)$/;
/**
 * A public upload's path below DATA_DIR/public, in segments as the server names and serves them
 * (PUBLIC_SEGMENT, src/modules/releases/artifacts.service.ts).
 */
const PUBLIC_PATH = /^uploads(\/[A-Za-z0-9][A-Za-z0-9._+-]{0,199})+$/;
/** How often a backup takes a fresh snapshot when a file it names is deleted while it copies. */
const ATTEMPTS = 3;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** Public uploads are served by the web server: readable by it, as when they were uploaded. */
const PUBLIC_FILE_MODE = 0o644;

export type BackupErrorCode =
  | 'target_not_empty'
  | 'database_missing'
  | 'artifact_missing'
  | 'artifact_integrity_failed'
  | 'manifest_missing'
  | 'manifest_invalid'
  | 'backup_corrupt'
  | 'database_exists'
  | 'target_conflict'
  | 'postgres_not_supported';

/** A refusal or failure of a backup or restore, with a stable code the CLI prints. */
export class BackupError extends Error {
  constructor(
    readonly code: BackupErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ManifestFile {
  /** Relative to the backup directory, `/`-separated. */
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: number;
  created_at: string;
  tollgate_version: string;
  /** The database file's name in the backup directory. */
  database: string;
  files: ManifestFile[];
  /** Public uploads the database names that were missing or changed on disk, left out. */
  skipped: { path: string; reason: 'missing' | 'changed' | 'unsafe_path' }[];
  /**
   * Artifacts the snapshot names that live in the S3 bucket (`s3`, `s3_encrypted`): not copied,
   * the bucket is backed up with its own tools (docs/backups.md). Absent in older manifests.
   */
  in_bucket?: number;
}

/** Where a store on SQLite keeps its data (from the configuration, src/config.ts). */
export interface StorePaths {
  /** DATA_DIR: the public uploads are in its `public/` folder, the generated vault key beside it. */
  dataDir: string;
  /** The SQLite database file. */
  databaseFile: string;
  /** VAULT_DIR. */
  vaultDir: string;
}

export interface BackupOptions {
  clock?: Clock;
  /** Called between the snapshot and the copy of the files, with the attempt's number (tests). */
  afterSnapshot?: (attempt: number) => Promise<void> | void;
}

/** The version of Tollgate that wrote a backup (package.json, one level above src/ and dist/). */
export function tollgateVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

interface Copied {
  size: number;
  sha256: string;
}

/** Streams `from` into a new file `to` (exclusive create, flushed), answering its size and SHA-256. */
async function copyHashed(from: string, to: string, mode: number): Promise<Copied> {
  await mkdir(dirname(to), { recursive: true, mode: DIR_MODE });
  const hash = createHash('sha256');
  let size = 0;
  const out = await open(to, 'wx', mode);
  try {
    await pipeline(createReadStream(from), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.length;
        await out.write(chunk);
      }
    });
    await out.sync();
  } catch (e) {
    await out.close().catch(() => {});
    await unlink(to).catch(() => {});
    throw e;
  }
  await out.close();
  await chmod(to, mode);
  return { size, sha256: hash.digest('hex') };
}

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT';

async function entriesOf(dir: string): Promise<string[] | null> {
  try {
    return await readdir(dir);
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

interface ArtifactRef {
  id: number;
  driver: string;
  storage_key: string;
  state: string;
  file_size: number | null;
  stored_size: number | null;
  file_sha256: string;
}

interface LegacyRef {
  public_path: string;
  file_size: number;
  file_sha256: string;
}

/** The files a database snapshot names: vault artifacts not deleted, public uploads not removed. */
function referencesOf(snapshotFile: string): {
  artifacts: ArtifactRef[];
  legacy: LegacyRef[];
  inBucket: number;
} {
  const db = openSqlite(snapshotFile, { fileMustExist: true });
  try {
    // The snapshot stands alone: no WAL beside it, in the backup or once restored.
    db.pragma('journal_mode = DELETE');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') {
      throw new BackupError(
        'backup_corrupt',
        `the database snapshot fails SQLite's quick_check: ${String(check)}`,
      );
    }
    const artifacts = db
      .prepare(
        `SELECT id, driver, storage_key, state, file_size, stored_size, file_sha256 FROM artifacts
         WHERE driver IN ('local', 'local_encrypted') AND state <> 'deleted' ORDER BY id`,
      )
      .all() as ArtifactRef[];
    const legacy = db
      .prepare(
        'SELECT public_path, file_size, file_sha256 FROM legacy_downloads WHERE removed_at IS NULL ORDER BY id',
      )
      .all() as LegacyRef[];
    const { n } = db
      .prepare(
        `SELECT count(*) AS n FROM artifacts WHERE driver IN ('s3', 's3_encrypted') AND state <> 'deleted'`,
      )
      .get() as { n: number };
    return { artifacts, legacy, inBucket: n };
  } finally {
    db.close();
  }
}

/**
 * Does a copied vault file match what the database stores? A plain artifact by its SHA-256 and
 * size; an encrypted one, whose bytes on disk are ciphertext, by its stored size (its plaintext
 * checksum needs the vault key, which a backup does not use).
 */
function matches(a: ArtifactRef, copied: Copied): boolean {
  if (a.driver === 'local') {
    return copied.sha256 === a.file_sha256 && (a.file_size === null || copied.size === Number(a.file_size));
  }
  return a.stored_size === null || copied.size === Number(a.stored_size);
}

/** Refuses a target that exists and holds anything; creates it (0700) otherwise. */
async function prepareTarget(target: string): Promise<void> {
  const info = await lstat(target).catch(() => null);
  if (info && !info.isDirectory()) {
    throw new BackupError('target_not_empty', `${target} exists and is not a directory`);
  }
  const entries = await entriesOf(target);
  if (entries && entries.length > 0) {
    throw new BackupError(
      'target_not_empty',
      `the backup directory ${target} is not empty: give an empty or new one`,
    );
  }
  await mkdir(target, { recursive: true, mode: DIR_MODE });
  await chmod(target, DIR_MODE);
}

/** Empties the target again after a failed attempt (it was empty when the backup began). */
async function emptyTarget(target: string): Promise<void> {
  for (const name of (await entriesOf(target)) ?? [])
    await rm(join(target, name), { recursive: true, force: true });
}

/**
 * Backs up a store on SQLite into `target`, an empty or new directory, while its server keeps
 * serving: SQLite's online backup takes a consistent snapshot of the database in one read
 * transaction (in WAL mode it blocks no writer), then the vault files and public uploads that
 * snapshot names are copied and checked. A vault file the snapshot names as available but which
 * is gone (a deletion that began after the snapshot) makes the backup start again with a fresh
 * snapshot, up to three times; a backup is never written that names a file it lacks. The
 * manifest is written last: a directory without one is not a backup.
 */
export async function backup(
  paths: StorePaths,
  target: string,
  options: BackupOptions = {},
): Promise<Manifest> {
  const clock = options.clock ?? systemClock;
  await prepareTarget(target);
  try {
    const info = await stat(paths.databaseFile).catch(() => null);
    if (!info?.isFile()) {
      throw new BackupError('database_missing', `there is no database at ${paths.databaseFile}`);
    }
    let missing: string[] = [];
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const createdAt = clock.now().toISOString();
      const snapshot = join(target, DATABASE_NAME);
      const source = openSqlite(paths.databaseFile, { fileMustExist: true });
      try {
        source.pragma('busy_timeout = 5000');
        // All pages in one step, in one read transaction: another process's commit between
        // steps would make SQLite start the copy again. This runs in a process of its own.
        await source.backup(snapshot, { progress: () => 0x7fffffff });
      } finally {
        source.close();
      }
      await chmod(snapshot, FILE_MODE);
      const refs = referencesOf(snapshot);
      await options.afterSnapshot?.(attempt);

      const files: ManifestFile[] = [];
      const skipped: Manifest['skipped'] = [];
      const corrupt: string[] = [];
      missing = [];
      for (const a of refs.artifacts) {
        if (!STORAGE_KEY.test(a.storage_key)) {
          throw new BackupError('artifact_integrity_failed', `artifact ${a.id} has an invalid storage key`);
        }
        const rel = `vault/${a.storage_key}`;
        let copied: Copied;
        try {
          copied = await copyHashed(
            join(paths.vaultDir, ...a.storage_key.split('/')),
            join(target, rel),
            FILE_MODE,
          );
        } catch (e) {
          if (!isMissing(e)) throw e;
          // Being deleted in the snapshot: its file may be gone already, and it is not needed.
          if (a.state === 'available') missing.push(`artifact ${a.id} (${a.storage_key})`);
          continue;
        }
        if (!matches(a, copied)) {
          if (a.state === 'available') corrupt.push(`artifact ${a.id} (${a.storage_key})`);
          await unlink(join(target, rel));
          continue;
        }
        files.push({ path: rel, ...copied });
      }
      if (corrupt.length > 0) {
        throw new BackupError(
          'artifact_integrity_failed',
          `vault files differ from the checksums the database stores: ${corrupt.join(', ')}`,
        );
      }
      if (missing.length > 0) {
        await emptyTarget(target);
        continue;
      }
      for (const l of refs.legacy) {
        if (
          !PUBLIC_PATH.test(l.public_path) ||
          l.public_path.split('/').some((s) => s === '.' || s === '..')
        ) {
          skipped.push({ path: `public/${l.public_path}`, reason: 'unsafe_path' });
          continue;
        }
        const rel = `public/${l.public_path}`;
        let copied: Copied;
        try {
          copied = await copyHashed(
            join(paths.dataDir, 'public', ...l.public_path.split('/')),
            join(target, rel),
            PUBLIC_FILE_MODE,
          );
        } catch (e) {
          if (!isMissing(e)) throw e;
          skipped.push({ path: rel, reason: 'missing' });
          continue;
        }
        if (copied.sha256 !== l.file_sha256 || copied.size !== Number(l.file_size)) {
          await unlink(join(target, rel));
          skipped.push({ path: rel, reason: 'changed' });
          continue;
        }
        files.push({ path: rel, ...copied });
      }
      const database = await hashFile(snapshot);
      const manifest: Manifest = {
        format: MANIFEST_FORMAT,
        created_at: createdAt,
        tollgate_version: tollgateVersion(),
        database: DATABASE_NAME,
        files: [{ path: DATABASE_NAME, ...database }, ...files],
        skipped,
        in_bucket: refs.inBucket,
      };
      await writeNew(join(target, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
      return manifest;
    }
    throw new BackupError(
      'artifact_missing',
      `vault files named by the database went missing while the backup ran, ${ATTEMPTS} times: ${missing.join(', ')}; ` +
        'run the backup again once artifact deletions have finished',
    );
  } catch (e) {
    await emptyTarget(target).catch(() => {});
    throw e;
  }
}

async function writeNew(path: string, text: string): Promise<void> {
  const out = await open(path, 'wx', FILE_MODE);
  try {
    await out.writeFile(text);
    await out.sync();
  } finally {
    await out.close();
  }
}

/** Reads and checks the shape of a backup's manifest; every path must be one a backup writes. */
export async function readManifest(source: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(join(source, MANIFEST), 'utf8');
  } catch (e) {
    if (isMissing(e))
      throw new BackupError('manifest_missing', `${source} has no ${MANIFEST}: it is not a backup`);
    throw e;
  }
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch {
    throw new BackupError('manifest_invalid', `${MANIFEST} is not valid JSON`);
  }
  const invalid = (why: string) => new BackupError('manifest_invalid', `${MANIFEST}: ${why}`);
  if (typeof m !== 'object' || m === null || m.format !== MANIFEST_FORMAT) {
    throw invalid(`unknown format (this Tollgate reads format ${MANIFEST_FORMAT})`);
  }
  if (m.database !== DATABASE_NAME) throw invalid('unexpected database file name');
  if (!Array.isArray(m.files)) throw invalid('no file list');
  const seen = new Set<string>();
  for (const f of m.files as unknown[]) {
    const file = f as ManifestFile;
    if (
      typeof file !== 'object' ||
      file === null ||
      typeof file.path !== 'string' ||
      !Number.isSafeInteger(file.size) ||
      file.size < 0 ||
      typeof file.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(file.sha256)
    ) {
      throw invalid('a file entry is malformed');
    }
    const ok =
      file.path === DATABASE_NAME ||
      (file.path.startsWith('vault/') && STORAGE_KEY.test(file.path.slice(6))) ||
      (file.path.startsWith('public/') &&
        PUBLIC_PATH.test(file.path.slice(7)) &&
        !file.path.split('/').some((s) => s === '.' || s === '..'));
    if (!ok || seen.has(file.path)) throw invalid(`unexpected file ${JSON.stringify(file.path)}`);
    seen.add(file.path);
  }
  if (!seen.has(DATABASE_NAME)) throw invalid('the database file is not listed');
  return m;
}

/** Where a backup's file goes in a store. */
function destinationOf(paths: StorePaths, rel: string): string {
  if (rel === DATABASE_NAME) return paths.databaseFile;
  if (rel.startsWith('vault/')) return join(paths.vaultDir, ...rel.slice(6).split('/'));
  return join(paths.dataDir, ...rel.split('/'));
}

export interface RestoreResult {
  manifest: Manifest;
  /** Files put in place (the database and each vault file and public upload). */
  written: number;
  /** Vault files and uploads already in place with the same content. */
  present: number;
}

/**
 * Restores a backup into a store without a database. Every file of the manifest is checked
 * (size and SHA-256) before anything is written; then each is copied beside its destination
 * under a temporary name and checked again, and only when all are copied are they renamed into
 * place, the database last. A failure removes the temporary files and leaves the store as it
 * was. A vault file or upload already in place with the same content is kept; one with other
 * content makes the restore refuse.
 */
export async function restore(paths: StorePaths, source: string): Promise<RestoreResult> {
  const manifest = await readManifest(source);
  const bad: string[] = [];
  for (const f of manifest.files) {
    const got = await hashFile(join(source, ...f.path.split('/'))).catch((e: unknown) => {
      if (isMissing(e)) return null;
      throw e;
    });
    if (!got) bad.push(`${f.path} is missing`);
    else if (got.size !== f.size || got.sha256 !== f.sha256)
      bad.push(`${f.path} does not match its checksum`);
  }
  if (bad.length > 0) {
    throw new BackupError(
      'backup_corrupt',
      `the backup in ${source} is damaged, nothing was restored: ${bad.join('; ')}`,
    );
  }

  for (const f of [paths.databaseFile, `${paths.databaseFile}-wal`]) {
    if (await stat(f).catch(() => null)) {
      throw new BackupError(
        'database_exists',
        `${f} exists: restore only into a data directory without a database (move the old one away first)`,
      );
    }
  }
  const todo: { file: ManifestFile; to: string }[] = [];
  let present = 0;
  for (const f of manifest.files) {
    const to = destinationOf(paths, f.path);
    if (f.path !== DATABASE_NAME) {
      const there = await hashFile(to).catch((e: unknown) => {
        if (isMissing(e)) return null;
        throw e;
      });
      if (there && there.sha256 === f.sha256 && there.size === f.size) {
        present++;
        continue;
      }
      if (there)
        throw new BackupError(
          'target_conflict',
          `${to} exists with other content: restore into an empty store`,
        );
    }
    todo.push({ file: f, to });
  }

  await mkdir(paths.dataDir, { recursive: true, mode: DIR_MODE });
  await chmod(paths.dataDir, DIR_MODE);
  await mkdir(paths.vaultDir, { recursive: true, mode: DIR_MODE });
  await chmod(paths.vaultDir, DIR_MODE);
  const suffix = `.restore-${process.pid}.part`;
  const parts: string[] = [];
  try {
    for (const { file, to } of todo) {
      const part = `${to}${suffix}`;
      const mode = file.path.startsWith('public/') ? PUBLIC_FILE_MODE : FILE_MODE;
      if (file.path.startsWith('public/')) await mkdir(dirname(to), { recursive: true });
      parts.push(part);
      const copied = await copyHashed(join(source, ...file.path.split('/')), part, mode);
      if (copied.size !== file.size || copied.sha256 !== file.sha256) {
        throw new BackupError(
          'backup_corrupt',
          `${file.path} changed while it was restored: nothing was restored`,
        );
      }
    }
    // The database last: a store is restored once its database is there.
    const ordered = [...todo].sort(
      (a, b) => Number(a.file.path === DATABASE_NAME) - Number(b.file.path === DATABASE_NAME),
    );
    for (const { to } of ordered) await rename(`${to}${suffix}`, to);
  } catch (e) {
    for (const p of parts) await unlink(p).catch(() => {});
    throw e;
  }
  await syncDir(dirname(paths.databaseFile));
  return { manifest, written: todo.length, present };
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (!handle) return;
  try {
    await handle.sync().catch(() => {});
  } finally {
    await handle.close();
  }
}
