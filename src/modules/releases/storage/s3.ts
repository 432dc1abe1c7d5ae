import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { BoundedMap } from '../../../bounded-map.js';
import type { S3Config } from '../../../config.js';
import { ApiError } from '../../../http/errors.js';
import type { Keyring } from '../../vault/keyring.js';
import { makeHeader } from '../../vault/seal.js';
import { Inspector } from '../inspect.js';
import { decryptSealed, EncryptStream, encryptedSize, type SealedReader } from './crypto-stream.js';
import {
  type ArtifactRef,
  type DeleteOutcome,
  IntegrityError,
  type StagedFile,
  type StatSnapshot,
  type StorageDriver,
  type VerifyResult,
} from './driver.js';
import { closingUnread, hashChunks } from './local.js';
import { STORAGE_KEY } from './vault.js';

/**
 * The SDK, loaded when a bucket is first used: a store without S3_BUCKET never loads it (tens of
 * MB of an idle server's memory, docs/performance.md, 'Memory').
 */
let sdkLoad: Promise<[typeof import('@aws-sdk/client-s3'), typeof import('@aws-sdk/lib-storage')]> | null =
  null;
const loadSdk = () => {
  sdkLoad ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
  return sdkLoad;
};

/** S3's smallest part (every part but the last): lib-storage refuses less. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
/** S3 takes at most this many parts in one multipart upload. */
const MAX_PARTS = 10_000;
/** Parts sent at once: an upload holds about (this + 1) parts in memory. */
const QUEUE_SIZE = 2;
/**
 * A multipart upload a crash left open is aborted, and an object no artifact names is deleted,
 * once this old: on AWS a multipart object's LastModified is when its upload began, so a large
 * upload that just completed may look old while its release is still being committed.
 */
const LEFTOVER_MIN_AGE_MS = 24 * 60 * 60 * 1000;
/** Objects whose ETag this process checked, so the stream after a check reads that same object. */
const VERIFIED_KEPT = 10_000;

/** The part size for uploads up to `maxUploadBytes`: small parts bound memory, 10,000 must suffice. */
export function partSizeFor(maxUploadBytes: number): number {
  return Math.max(MIN_PART_SIZE, Math.ceil(maxUploadBytes / MAX_PARTS));
}

export interface ObjectHead {
  size: number;
  mtimeMs: number;
  etag: string | null;
}

/** A failure that means "no such object" in S3's and in its emulators' words. */
function isNotFound(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata?.httpStatusCode === 404;
}

/**
 * A bucket (and key prefix) holding artifacts under the same generated storage keys as the vault.
 * Credentials go to the SDK's client only: nothing here logs, prints or returns them.
 */
export class ObjectStore {
  private clientMade: Promise<S3Client> | null = null;
  readonly bucket: string;
  readonly prefix: string;
  /** Null for AWS's own endpoint; shown by the storage status (never with credentials). */
  readonly endpoint: string | null;

  constructor(
    config: S3Config,
    readonly partSize: number,
  ) {
    this.bucket = config.bucket;
    this.prefix = config.prefix;
    this.endpoint = config.endpoint;
    this.config = config;
  }

  private readonly config: S3Config;

  /** The SDK's client, made on first use (the SDK is loaded then). */
  client(): Promise<S3Client> {
    this.clientMade ??= loadSdk().then(
      ([s3]) =>
        new s3.S3Client({
          region: this.config.region,
          ...(this.config.endpoint ? { endpoint: this.config.endpoint } : {}),
          forcePathStyle: this.config.forcePathStyle,
          ...(this.config.credentials ? { credentials: this.config.credentials } : {}),
          // The SDK's default trailing checksums (aws-chunked bodies) are not understood by every
          // S3-compatible store (MinIO releases, R2, B2, emulators): send them only where required.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
    );
    return this.clientMade;
  }

  /** The SDK's modules and the client. */
  private async sdk() {
    const [s3, storage] = await loadSdk();
    return { s3, storage, client: await this.client() };
  }

  /** The object key of a storage key; anything but a generated key is refused, as in the vault. */
  keyOf(storageKey: string): string {
    if (!STORAGE_KEY.test(storageKey)) throw new Error('invalid vault storage key');
    return `${this.prefix}${storageKey}`;
  }

  /**
   * Streams `source` (through `through`) to the object `storageKey`: one PUT below a part size,
   * else a multipart upload holding at most a few parts in memory. The object exists only once
   * the upload completes (S3 makes a multipart object visible at its completion, whole); a failure
   * aborts the multipart upload, so nothing half-written is ever stored under the key.
   */
  async upload(
    source: Readable,
    storageKey: string,
    through: Transform[],
    contentType: string,
  ): Promise<{ size: number; etag: string | null }> {
    let size = 0;
    const counted = new Transform({
      highWaterMark: 1024 * 1024,
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        cb(null, chunk);
      },
    });
    const { storage, client } = await this.sdk();
    const upload = new storage.Upload({
      client,
      params: { Bucket: this.bucket, Key: this.keyOf(storageKey), Body: counted, ContentType: contentType },
      partSize: this.partSize,
      queueSize: QUEUE_SIZE,
    });
    let storeFailure: Error | null = null;
    // Whether the store failed while the bytes still flowed; else the source failed first (a
    // client gone, a size limit, a sealed source that fails authentication) and the upload only
    // gave up on the body it saw destroyed, with the source's own error.
    let storeFirst = false;
    const done = upload.done().catch((e: unknown) => {
      storeFailure = e instanceof Error ? e : new Error(String(e));
      storeFirst = !counted.destroyed;
      // The bytes have nowhere to go: stop the request body rather than wait on it forever.
      counted.destroy(storeFailure);
      throw storeFailure;
    });
    const [sent, piped] = await Promise.allSettled([done, pipeline([source, ...through, counted])]);
    // The source's own failure is the one to answer with.
    if (piped.status === 'rejected' && !storeFirst) {
      if (sent.status === 'fulfilled') await this.remove(storageKey).catch(() => {});
      throw piped.reason;
    }
    if (sent.status === 'rejected') {
      // The store's error name (NoSuchBucket, AccessDenied, …) tells the administrator what to
      // fix; its message and request details stay out of the answer.
      const reason = (storeFailure as Error | null)?.name ?? 'error';
      throw new ApiError('storage_unavailable', { data: { storage: 'bucket', reason } });
    }
    return { size, etag: sent.value.ETag ?? null };
  }

  /** The object's size, modification time and ETag, or null when there is none. */
  async head(storageKey: string): Promise<ObjectHead | null> {
    const { s3, client } = await this.sdk();
    try {
      const h = await client.send(
        new s3.HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(storageKey) }),
      );
      return { size: h.ContentLength ?? 0, mtimeMs: h.LastModified?.getTime() ?? 0, etag: h.ETag ?? null };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  /** The object's body; a missing object fails here (as ENOENT), before any byte is answered. */
  async get(storageKey: string): Promise<{ body: Readable; size: number; etag: string | null }> {
    const { s3, client } = await this.sdk();
    try {
      const o = await client.send(
        new s3.GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(storageKey) }),
      );
      return { body: o.Body as Readable, size: o.ContentLength ?? 0, etag: o.ETag ?? null };
    } catch (e) {
      if (isNotFound(e)) throw Object.assign(new Error('no such object'), { code: 'ENOENT' });
      throw e;
    }
  }

  /** Deletes the object (S3 answers the same whether or not it existed). */
  async remove(storageKey: string): Promise<void> {
    const { s3, client } = await this.sdk();
    await client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(storageKey) }));
  }

  /**
   * Aborts multipart uploads under the prefix that were started more than a day ago: what a
   * server killed mid-upload leaves (never an object, but the parts take space). A younger one
   * may belong to another server's upload in progress. Stores without the call are left alone
   * (a bucket lifecycle rule does the same, docs/operations.md).
   */
  async sweepUploads(nowMs = Date.now()): Promise<number> {
    let aborted = 0;
    try {
      const { s3, client } = await this.sdk();
      const list = await client.send(
        new s3.ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: this.prefix }),
      );
      for (const u of list.Uploads ?? []) {
        if (!u.Key || !u.UploadId || !u.Initiated || nowMs - u.Initiated.getTime() < LEFTOVER_MIN_AGE_MS)
          continue;
        await client.send(
          new s3.AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }),
        );
        aborted += 1;
      }
    } catch {
      return aborted;
    }
    return aborted;
  }

  /**
   * Deletes objects under the prefix with a generated name that `known` (every storage key an
   * artifact row holds) does not name and that are more than a day old: what a server killed
   * between an upload's completion and its release's commit leaves. Anything else under the
   * prefix is never touched. A store that refuses the listing is left alone.
   */
  async sweepOrphans(known: ReadonlySet<string>, nowMs = Date.now()): Promise<number> {
    let removed = 0;
    try {
      const { s3, client } = await this.sdk();
      let token: string | undefined;
      do {
        const page = await client.send(
          new s3.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) {
          const storageKey = o.Key?.slice(this.prefix.length) ?? '';
          if (!STORAGE_KEY.test(storageKey) || known.has(storageKey)) continue;
          if (!o.LastModified || nowMs - o.LastModified.getTime() < LEFTOVER_MIN_AGE_MS) continue;
          await this.remove(storageKey);
          removed += 1;
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch {
      return removed;
    }
    return removed;
  }
}

/** Reads an object's body as a sealed source: exactly `size` bytes, or it was cut. */
function bodyReader(body: Readable, size: number): SealedReader {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let rest: Buffer = Buffer.alloc(0);
  return {
    size: async () => size,
    async readFully(buffer, length) {
      for (let at = 0; at < length; ) {
        if (rest.length === 0) {
          const next = await chunks.next();
          if (next.done) throw new IntegrityError('authentication_failed');
          rest = next.value;
        }
        const n = Math.min(rest.length, length - at);
        rest.copy(buffer, at, 0, n);
        rest = rest.subarray(n);
        at += n;
      }
    },
    close: async () => {
      body.destroy();
    },
  };
}

/** An object's plain bytes as they arrive, released when the consumer stops (even unstarted). */
function bodyChunks(body: Readable): AsyncGenerator<Buffer, void, undefined> {
  async function* read(): AsyncGenerator<Buffer, void, undefined> {
    try {
      for await (const chunk of body) yield chunk as Buffer;
    } finally {
      body.destroy();
    }
  }
  return closingUnread({ close: async () => void body.destroy() }, read());
}

/**
 * `s3` and `s3_encrypted`: artifacts as objects in a bucket, plain or sealed in the encrypted
 * vault's format (src/modules/vault/seal.ts), under the prefix and the same generated storage keys.
 *
 * The pre-claim check (verify) asks the store, not the bytes, when it can: the ETag the store
 * gave the object when this service wrote it is kept with the artifact (`stored_etag`), and the
 * store computes it over the bytes it received; an object whose ETag and size are still those
 * is the one whose SHA-256, MD5 and size were computed while it streamed in, so it is not read a
 * second time before it is streamed. Any other object (an ETag that changed, or none recorded)
 * is read in full as in the vault: size, SHA-256, and every record's authentication. The stream
 * that follows reads only an object with the ETag that was checked, and an encrypted one is
 * authenticated record by record as it goes out.
 */
export class S3Driver implements StorageDriver {
  readonly name: 's3' | 's3_encrypted';
  readonly managed = true;
  private readonly verified = new BoundedMap<string, string>(VERIFIED_KEPT);

  constructor(
    private readonly store: ObjectStore,
    /** The vault's keyring for `s3_encrypted`; null for plain objects. */
    private readonly keyring: Keyring | null,
  ) {
    this.name = keyring ? 's3_encrypted' : 's3';
  }

  /** Bytes stored for a plaintext of `size` (null when unknown). */
  private storedSizeOf(size: number | null): number | null {
    if (size === null) return null;
    return this.keyring ? encryptedSize(size) : size;
  }

  /**
   * Uploads under the final key at once (see ObjectStore.upload: never half-written); `commit`
   * has nothing left to do, and `discard` deletes an object no row came to name. A crash in
   * between leaves an object no artifact names, never served (docs/releases.md).
   */
  async put(source: Readable, storageKey: string, inspect?: Transform): Promise<StagedFile> {
    const through: Transform[] = inspect ? [inspect] : [];
    let keyId: string | null = null;
    if (this.keyring) {
      const current = await this.keyring.currentKey();
      keyId = current.keyId;
      through.push(new EncryptStream(current.key, makeHeader(current.keyId)));
    }
    const type = this.keyring ? 'application/octet-stream' : 'application/zip';
    const { size, etag } = await this.store.upload(source, storageKey, through, type);
    if (etag) this.verified.set(storageKey, etag);
    let committed = false;
    return {
      storedSize: size,
      keyId,
      etag,
      commit: async () => {
        committed = true;
      },
      discard: async () => {
        if (committed) return;
        this.verified.delete(storageKey);
        await this.store.remove(storageKey).catch(() => {});
      },
    };
  }

  async open(ref: ArtifactRef): Promise<AsyncGenerator<Buffer, void, undefined>> {
    return this.openChecked(ref, this.verified.get(ref.storageKey) ?? ref.storedEtag ?? null);
  }

  /** The object's bytes, refused before the first one when it is not the object `etag` names. */
  private async openChecked(
    ref: ArtifactRef,
    etag: string | null,
  ): Promise<AsyncGenerator<Buffer, void, undefined>> {
    if (this.keyring) await this.keyring.load();
    const object = await this.store.get(ref.storageKey);
    const expectedSize = this.storedSizeOf(ref.fileSize);
    if ((etag !== null && object.etag !== etag) || (expectedSize !== null && object.size !== expectedSize)) {
      object.body.destroy();
      throw new IntegrityError(
        expectedSize !== null && object.size !== expectedSize ? 'size_mismatch' : 'hash_mismatch',
      );
    }
    const keyring = this.keyring;
    if (!keyring) return bodyChunks(object.body);
    return decryptSealed(bodyReader(object.body, object.size), (id) => keyring.get(id), ref.keyId);
  }

  /**
   * Re-seals a sealed object with the current key (key rotation) into a new object `storageKey`:
   * the old object is read in full, each record authenticated (whatever its ETag now: an object
   * copied between stores gets another, and the plaintext's SHA-256 is checked here anyway),
   * re-encrypted on its way up while the plaintext is hashed, and the new object is removed again
   * unless size and SHA-256 are the artifact's. The old object is left as it was: the caller
   * switches the artifact's row to the new one, then deletes it.
   */
  async reseal(
    ref: ArtifactRef,
    storageKey: string,
  ): Promise<{ keyId: string; storedSize: number; etag: string | null }> {
    if (!this.keyring) throw new Error('only sealed objects are re-sealed');
    const inspector = new Inspector();
    // Plaintext chunks are fresh buffers (never reused), so a stream may queue them.
    const head = await this.store.head(ref.storageKey);
    if (!head) throw Object.assign(new Error('no such object'), { code: 'ENOENT' });
    const plain = Readable.from(await this.openChecked(ref, head.etag), { objectMode: false });
    const staged = await this.put(plain, storageKey, inspector);
    if (inspector.sha256 !== ref.sha256 || (ref.fileSize !== null && inspector.size !== ref.fileSize)) {
      await staged.discard();
      throw new IntegrityError('hash_mismatch');
    }
    return { keyId: staged.keyId!, storedSize: staged.storedSize, etag: staged.etag ?? null };
  }

  async stat(ref: ArtifactRef): Promise<StatSnapshot> {
    const head = await this.store.head(ref.storageKey);
    if (!head) return { exists: false, size: null, mtimeMs: null };
    return { exists: true, size: head.size, mtimeMs: head.mtimeMs };
  }

  async delete(ref: ArtifactRef): Promise<DeleteOutcome> {
    this.verified.delete(ref.storageKey);
    const head = await this.store.head(ref.storageKey);
    await this.store.remove(ref.storageKey);
    return head ? { outcome: 'deleted' } : { outcome: 'absent' };
  }

  async verify(ref: ArtifactRef): Promise<VerifyResult> {
    const head = await this.store.head(ref.storageKey);
    if (!head) return { ok: false, reason: 'missing' };
    const snapshot: StatSnapshot = { exists: true, size: head.size, mtimeMs: head.mtimeMs };
    const expectedSize = this.storedSizeOf(ref.fileSize);
    if (expectedSize !== null && head.size !== expectedSize) return { ok: false, reason: 'size_mismatch' };
    if (this.keyring) {
      await this.keyring.load();
      if (ref.keyId && !this.keyring.get(ref.keyId)) return { ok: false, reason: 'key_unavailable' };
    }
    if (head.etag !== null && head.etag === ref.storedEtag) {
      this.verified.set(ref.storageKey, head.etag);
      return { ok: true, snapshot };
    }
    try {
      const { size, sha256 } = await hashChunks(await this.openChecked(ref, head.etag));
      if (ref.fileSize !== null && size !== ref.fileSize) return { ok: false, reason: 'size_mismatch' };
      if (sha256 !== ref.sha256) return { ok: false, reason: 'hash_mismatch' };
    } catch (e) {
      if (e instanceof IntegrityError) return { ok: false, reason: e.reason };
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, reason: 'missing' };
      throw e;
    }
    if (head.etag !== null) this.verified.set(ref.storageKey, head.etag);
    return { ok: true, snapshot };
  }
}
