import { createHash } from 'node:crypto';
import { type FileHandle, open, stat, unlink } from 'node:fs/promises';
import type { Readable, Transform } from 'node:stream';
import type {
  ArtifactRef,
  DeleteOutcome,
  StagedFile,
  StatSnapshot,
  StorageDriver,
  VerifyResult,
} from './driver.js';
import type { Vault } from './vault.js';

/**
 * Read size for files in the vault: 1 MiB, as the download reference does. Each read is a system
 * call; at 64 KiB they cost a quarter of a local download's throughput here.
 */
export const READ_CHUNK = 1024 * 1024;

/**
 * Read buffers are lent out and taken back rather than made per file: a buffer that lives as long as
 * a download reaches V8's old generation, where only a full collection frees it, and those are
 * rare (dead 1 MiB buffers piled up to about 45 MB over twenty downloads).
 */
const spareBuffers: Buffer[] = [];
const SPARE_BUFFERS = 4;

export function borrowReadBuffer(): Buffer {
  return spareBuffers.pop() ?? Buffer.allocUnsafeSlow(READ_CHUNK);
}

/** Takes a buffer back; its borrower must hold no view of it any more. */
export function returnReadBuffer(buffer: Buffer): void {
  if (spareBuffers.length < SPARE_BUFFERS) spareBuffers.push(buffer);
}

/**
 * A file's bytes in READ_CHUNK reads through a ring of three buffers: the next read fills one while
 * the consumer has the other two, so a chunk stays valid until the consumer asks for the second
 * chunk after it (StorageDriver.open). A download keeps at most two chunks in the socket and
 * allocates nothing per chunk (fresh buffers per read were garbage that V8 collected late: tens of
 * MB of RSS). The handle is closed at the end, on error, and when the consumer stops early.
 */
export function readChunks(handle: FileHandle): AsyncGenerator<Buffer, void, undefined> {
  return closingUnread(handle, ringReads(handle));
}

/**
 * A generator's `finally` runs only once its body has started: a consumer that stops before
 * asking for the first chunk (a response that failed first, a stream destroyed before it read)
 * would leave the file open until the handle is garbage-collected. This closes it then too.
 */
export function closingUnread(
  handle: { close(): Promise<void> },
  chunks: AsyncGenerator<Buffer, void, undefined>,
): AsyncGenerator<Buffer, void, undefined> {
  let started = false;
  const closeUnstarted = async () => {
    if (started) return;
    started = true;
    await handle.close();
  };
  return {
    next() {
      started = true;
      return chunks.next();
    },
    async return(value) {
      await closeUnstarted();
      return chunks.return(value);
    },
    async throw(error) {
      await closeUnstarted();
      return chunks.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

async function* ringReads(handle: FileHandle): AsyncGenerator<Buffer, void, undefined> {
  const ring = [borrowReadBuffer(), borrowReadBuffer(), borrowReadBuffer()];
  const readInto = (buffer: Buffer) => {
    const read = handle.read(buffer, 0, buffer.length, null);
    // Awaited later; until then a failure must not count as unhandled.
    read.catch(() => {});
    return read;
  };
  let filling = 0;
  let pending = readInto(ring[filling]!);
  try {
    for (;;) {
      const { bytesRead, buffer } = await pending;
      if (bytesRead === 0) return;
      filling = (filling + 1) % ring.length;
      pending = readInto(ring[filling]!);
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    // A read still filling a buffer must end before the buffer is lent again or the file closed.
    await pending.catch(() => {});
    for (const buffer of ring) returnReadBuffer(buffer);
    await handle.close();
  }
}

/** Stat of a vault file: a missing file is `exists:false`, any other failure propagates. */
export async function statVaultFile(path: string): Promise<StatSnapshot> {
  try {
    const s = await stat(path);
    return { exists: true, size: s.size, mtimeMs: s.mtimeMs };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, size: null, mtimeMs: null };
    throw e;
  }
}

/** Size and lowercase hex SHA-256 of a stream or of chunks, in bounded memory. */
export async function hashChunks(source: AsyncIterable<Buffer>): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of source) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest('hex') };
}

export async function hashFile(path: string): Promise<{ size: number; sha256: string }> {
  return hashChunks(readChunks(await open(path, 'r')));
}

/** Opens a vault file for reading; a missing file fails here rather than mid-response. */
export async function openVaultFile(path: string): Promise<FileHandle> {
  const handle = await open(path, 'r');
  const s = await handle.stat().catch(async (e: Error) => {
    await handle.close();
    throw e;
  });
  if (!s.isFile()) {
    await handle.close();
    throw new Error('not a file');
  }
  return handle;
}

export async function deleteVaultFile(path: string): Promise<DeleteOutcome> {
  try {
    await unlink(path);
    return { outcome: 'deleted' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { outcome: 'absent' };
    throw e;
  }
}

/** `local`: plain files in the private vault. */
export class LocalVaultDriver implements StorageDriver {
  readonly name = 'local';
  readonly managed = true;

  constructor(private readonly vault: Vault) {}

  put(source: Readable, storageKey: string, inspect?: Transform): Promise<StagedFile> {
    return this.vault.stage(source, storageKey, inspect ? [inspect] : []);
  }

  async open(ref: ArtifactRef): Promise<AsyncGenerator<Buffer, void, undefined>> {
    return readChunks(await openVaultFile(this.vault.pathOf(ref.storageKey)));
  }

  stat(ref: ArtifactRef): Promise<StatSnapshot> {
    return statVaultFile(this.vault.pathOf(ref.storageKey));
  }

  delete(ref: ArtifactRef): Promise<DeleteOutcome> {
    return deleteVaultFile(this.vault.pathOf(ref.storageKey));
  }

  async verify(ref: ArtifactRef): Promise<VerifyResult> {
    const path = this.vault.pathOf(ref.storageKey);
    const snapshot = await statVaultFile(path);
    if (!snapshot.exists) return { ok: false, reason: 'missing' };
    if (ref.fileSize !== null && snapshot.size !== ref.fileSize)
      return { ok: false, reason: 'size_mismatch' };
    const { size, sha256 } = await hashFile(path);
    if (ref.fileSize !== null && size !== ref.fileSize) return { ok: false, reason: 'size_mismatch' };
    if (sha256 !== ref.sha256) return { ok: false, reason: 'hash_mismatch' };
    return { ok: true, snapshot };
  }
}
