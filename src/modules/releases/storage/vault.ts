import { constants } from 'node:fs';
import {
  access,
  chmod,
  copyFile,
  type FileHandle,
  mkdir,
  open,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  statfs,
  unlink,
} from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type Readable, type Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { uuid } from '../../../random.js';
import type { StagedFile } from './driver.js';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** A staging file of a live process is never swept; one of any process is swept after this long. */
const STAGING_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** Storage keys the vault accepts: two-level, plain names only (no traversal by construction). */
export const STORAGE_KEY = /^[0-9a-f]{2}\/[0-9a-f-]{36}\.(zip|tgv)$/;

export interface VaultHealth {
  path: string;
  exists: boolean;
  writable: boolean;
  /** Octal permission bits, e.g. "0700". */
  mode: string | null;
  /** The public root the vault lies in (or that lies in the vault), if any. */
  publicRoot: string | null;
  freeBytes: number | null;
  totalBytes: number | null;
}

/** Is `child` the same as, or inside, `parent`? Both must be absolute and resolved. */
export function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
async function realish(p: string): Promise<string> {
  const abs = resolve(p);
  try {
    return await realpath(abs);
  } catch {
    const parent = dirname(abs);
    if (parent === abs) return abs;
    return join(await realish(parent), abs.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
  }
}

/**
 * The private artifact vault: a directory (0700) outside every public root, holding files (0600)
 * under generated names, plus `.staging/` where uploads land first. Staging files are named after
 * their host and process so a restart can sweep what a dead process left behind without touching
 * another live process's upload.
 */
export class Vault {
  readonly stagingDir: string;
  private readonly stagingPrefix = `${hostname().replace(/[^A-Za-z0-9-]/g, '_')}-${process.pid}-`;

  constructor(
    readonly dir: string,
    readonly publicRoots: string[],
    /** fsync staged files before they can be committed (see DurableFileSink). */
    private readonly durable = true,
  ) {
    this.stagingDir = join(dir, '.staging');
  }

  /** Creates the vault and staging directories with owner-only permissions. */
  async ensure(): Promise<void> {
    for (const d of [this.dir, this.stagingDir]) {
      await mkdir(d, { recursive: true, mode: DIR_MODE });
      await chmod(d, DIR_MODE);
    }
  }

  /** The absolute path of a storage key; anything but a generated key is refused. */
  pathOf(storageKey: string): string {
    if (!STORAGE_KEY.test(storageKey)) throw new Error('invalid vault storage key');
    return join(this.dir, ...storageKey.split('/'));
  }

  /**
   * Streams `source` (through `through`, if given) into a new private staging file (0600,
   * exclusive create, flushed to disk before it is handed back). A failure removes it.
   */
  async stageRaw(source: Readable, through: Transform[]): Promise<{ path: string; size: number }> {
    await this.ensure();
    const path = join(this.stagingDir, `${this.stagingPrefix}${uuid()}.part`);
    const out = new DurableFileSink(path, this.durable);
    try {
      await pipeline([source, ...through, out]);
    } catch (e) {
      await out.abort();
      await unlink(path).catch(() => {});
      throw e;
    }
    return { path, size: out.bytesWritten };
  }

  /** Stages bytes for `storageKey`; they become part of the vault only by `commit()` (one rename). */
  async stage(source: Readable, storageKey: string, through: Transform[]): Promise<StagedFile> {
    const target = this.pathOf(storageKey);
    const { path, size } = await this.stageRaw(source, through);
    let done = false;
    return {
      storedSize: size,
      keyId: null,
      commit: async () => {
        await mkdir(dirname(target), { recursive: true, mode: DIR_MODE });
        await rename(path, target);
        done = true;
        await fsyncDir(dirname(target));
      },
      discard: async () => {
        if (!done) await unlink(path).catch(() => {});
      },
    };
  }

  /**
   * Removes staging files left by processes that no longer run on this host (a crash or SIGKILL
   * mid-upload), and any staging file older than a day. Runs once at start, before this process
   * accepts uploads, so a file carrying this process's own pid is a dead predecessor's.
   */
  async sweepStaging(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.stagingDir);
    } catch {
      return 0;
    }
    const host = `${hostname().replace(/[^A-Za-z0-9-]/g, '_')}-`;
    let removed = 0;
    for (const name of names) {
      const path = join(this.stagingDir, name);
      let stale = false;
      if (name.startsWith(host)) {
        const pid = Number(name.slice(host.length).split('-')[0]);
        stale = !Number.isInteger(pid) || pid === process.pid || !processAlive(pid);
      }
      if (!stale) {
        const s = await stat(path).catch(() => null);
        stale = s !== null && Date.now() - s.mtimeMs > STAGING_MAX_AGE_MS;
      }
      if (stale) {
        await rm(path, { force: true, recursive: true }).catch(() => {});
        removed += 1;
      }
    }
    return removed;
  }

  /** Every file stored in the vault under a generated key, with its modification time. */
  async storedFiles(): Promise<{ key: string; mtimeMs: number }[]> {
    const out: { key: string; mtimeMs: number }[] = [];
    for (const prefix of await readdir(this.dir).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
      for (const name of await readdir(join(this.dir, prefix)).catch(() => [] as string[])) {
        const key = `${prefix}/${name}`;
        if (!STORAGE_KEY.test(key)) continue;
        const s = await stat(join(this.dir, prefix, name)).catch(() => null);
        if (s?.isFile()) out.push({ key, mtimeMs: s.mtimeMs });
      }
    }
    return out;
  }

  async stagingUsage(): Promise<{ files: number; bytes: number }> {
    let files = 0;
    let bytes = 0;
    for (const name of await readdir(this.stagingDir).catch(() => [] as string[])) {
      const s = await stat(join(this.stagingDir, name)).catch(() => null);
      if (s?.isFile()) {
        files += 1;
        bytes += s.size;
      }
    }
    return { files, bytes };
  }

  /** The public root containing the vault (or contained in it), or null when the vault is private. */
  async publicRootConflict(): Promise<string | null> {
    const vault = await realish(this.dir);
    for (const root of this.publicRoots) {
      const r = await realish(root);
      if (isWithin(vault, r) || isWithin(r, vault)) return root;
    }
    return null;
  }

  async health(): Promise<VaultHealth> {
    const s = await stat(this.dir).catch(() => null);
    let writable = false;
    if (s) {
      writable = await access(this.dir, constants.W_OK)
        .then(() => true)
        .catch(() => false);
    } else {
      // Not there yet: viable when it can be created.
      writable = await this.ensure()
        .then(() => true)
        .catch(() => false);
    }
    const fsStat = await statfs(s ? this.dir : await nearestExisting(this.dir)).catch(() => null);
    const after = s ?? (await stat(this.dir).catch(() => null));
    return {
      path: this.dir,
      exists: after !== null,
      writable,
      mode: after ? `0${(after.mode & 0o777).toString(8)}` : null,
      publicRoot: await this.publicRootConflict(),
      freeBytes: fsStat ? fsStat.bavail * fsStat.bsize : null,
      totalBytes: fsStat ? fsStat.blocks * fsStat.bsize : null,
    };
  }
}

async function nearestExisting(p: string): Promise<string> {
  let cur = resolve(p);
  for (;;) {
    if (await stat(cur).catch(() => null)) return cur;
    const parent = dirname(cur);
    if (parent === cur) return cur;
    cur = parent;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Makes a rename durable: the directory entry reaches the disk. */
async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => null);
  if (!fh) return;
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename itself is still atomic.
  } finally {
    await fh.close();
  }
}

/** Moves a staged file to `target` (another directory, perhaps another filesystem). */
export async function moveFile(from: string, target: string, mode = FILE_MODE): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  try {
    await rename(from, target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    await copyFile(from, target, constants.COPYFILE_EXCL);
    await unlink(from);
  }
  await chmod(target, mode);
}

/** Start a background fdatasync after this many bytes were written since the last one. */
const SYNC_EVERY = 8 * 1024 * 1024;

/**
 * A staging file (0600, exclusive create) written in batches. When `durable`, it is on the disk
 * when it finishes: fdatasync runs in the background every 8 MiB while the upload streams, so the
 * closing fsync only has the tail left. Otherwise it is as durable as the page cache: nothing is
 * lost when the process dies, the last uploads may be on power loss.
 */
export class DurableFileSink extends Writable {
  bytesWritten = 0;
  private fh: FileHandle | null = null;
  private sinceSync = 0;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly path: string,
    private readonly durable: boolean,
  ) {
    super({ highWaterMark: 512 * 1024 });
  }

  override _construct(cb: (e?: Error | null) => void): void {
    open(this.path, 'wx', FILE_MODE).then(
      (fh) => {
        this.fh = fh;
        cb();
      },
      (e: Error) => cb(e),
    );
  }

  override _writev(chunks: { chunk: Buffer }[], cb: (e?: Error | null) => void): void {
    const buffers = chunks.map((c) => c.chunk);
    this.writeAll(buffers).then(() => cb(), cb);
  }

  private async writeAll(buffers: Buffer[]): Promise<void> {
    let pending = buffers;
    while (pending.length > 0) {
      const { bytesWritten } = await this.fh!.writev(pending);
      this.bytesWritten += bytesWritten;
      this.sinceSync += bytesWritten;
      // A short write: continue with what is left.
      let skip = bytesWritten;
      const rest: Buffer[] = [];
      for (const b of pending) {
        if (skip >= b.length) skip -= b.length;
        else {
          rest.push(skip > 0 ? b.subarray(skip) : b);
          skip = 0;
        }
      }
      pending = rest;
    }
    if (this.durable && this.sinceSync >= SYNC_EVERY && !this.syncing) {
      this.sinceSync = 0;
      this.syncing = this.fh!.datasync().finally(() => {
        this.syncing = null;
      });
      this.syncing.catch(() => {});
    }
  }

  override _final(cb: (e?: Error | null) => void): void {
    (async () => {
      await this.syncing;
      if (this.durable) await this.fh!.sync();
      await this.fh!.close();
      this.fh = null;
    })().then(() => cb(), cb);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    this.abort().then(
      () => cb(err),
      () => cb(err),
    );
  }

  /** Closes the file after a failure (the caller removes it). */
  async abort(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (!fh) return;
    await this.syncing?.catch(() => {});
    await fh.close().catch(() => {});
  }
}
