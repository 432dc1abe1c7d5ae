import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { errorFromAnswer, TollgateError } from './errors.js';
import { type SigningKey, verifyPackageSignature } from './signatures.js';

/**
 * What downloadAndVerify needs of a check or package answer: the URL and what the bytes must be.
 * `signature` and `signing_key_id` are the release's, when the store signs its releases.
 */
export interface DownloadablePackage {
  download_url: string | null;
  file_sha256: string | null;
  file_size?: number | null;
  signature?: string | null;
  signing_key_id?: string | null;
}

export interface DownloadOptions {
  /** Refuse a release that carries no signature (`signature_required`). */
  requireSignature?: boolean;
  /** The keys to verify the signature with; default the store's list (fetched again once for an unknown key). */
  keys?: readonly SigningKey[];
  /** Cancels the transfer. */
  signal?: AbortSignal;
}

export interface VerifiedDownload {
  path: string;
  size: number;
  /** Hex SHA-256 of the bytes, as checked. */
  sha256: string;
  /** The key that verified the signature; null for an unsigned release. */
  signing_key_id: string | null;
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/**
 * What a transfer's failure may say: its system code or its kind, never its text, which can
 * repeat the URL and with it the token (Node's "Failed to parse URL from …").
 */
function scrubbed(cause: unknown): Error {
  const inner = (cause as { cause?: { code?: unknown } } | null)?.cause;
  const code = (cause as { code?: unknown } | null)?.code ?? inner?.code;
  return new Error(typeof code === 'string' ? code : cause instanceof Error ? cause.name : 'unknown');
}

/** Reads the store's error envelope of a refused download, without trusting it to be JSON. */
async function refusal(response: Response): Promise<TollgateError> {
  let body: unknown = null;
  try {
    body = JSON.parse(await response.text());
  } catch {
    // Not the envelope: errorFromAnswer says so.
  }
  return errorFromAnswer(response.status, body, response.headers.get('retry-after'));
}

/**
 * docs/sdk-js.md, 'downloadAndVerify'. The bytes go to a temporary file beside `destination` and
 * are renamed onto it only once every check has passed, so `destination` never holds bytes that
 * were not verified; a failed check removes the temporary file.
 */
export async function download(
  pkg: DownloadablePackage,
  destination: string,
  opts: DownloadOptions,
  store: { fetch: typeof fetch; keys: (refresh: boolean) => Promise<SigningKey[]> },
): Promise<VerifiedDownload> {
  if (!pkg.download_url) {
    throw new TollgateError(
      'no_download_url',
      'The answer carries no download URL (a manual or external release)',
    );
  }
  let response: Response;
  try {
    // A download URL is a bearer token: never followed elsewhere, never put in an error.
    response = await store.fetch(pkg.download_url, {
      redirect: 'error',
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (cause) {
    throw new TollgateError('network_error', 'The package could not be downloaded', {
      cause: scrubbed(cause),
    });
  }
  if (response.status !== 200) throw await refusal(response);

  const cancel = async (error: TollgateError) => {
    await response.body?.cancel().catch(() => {});
    return error;
  };
  const headerSha = response.headers.get('x-package-sha256');
  const expectedSha = (pkg.file_sha256 ?? headerSha ?? '').toLowerCase();
  if (!SHA256_HEX.test(expectedSha)) {
    throw await cancel(new TollgateError('sha256_missing', 'No SHA-256 to check the package against'));
  }
  if (headerSha !== null && headerSha.toLowerCase() !== expectedSha) {
    throw await cancel(
      new TollgateError('sha256_mismatch', 'The download and the answer give different SHA-256s'),
    );
  }
  const headerSignature = response.headers.get('x-content-signature');
  const signature = pkg.signature ?? headerSignature;
  if (pkg.signature && headerSignature !== null && headerSignature !== pkg.signature) {
    throw await cancel(
      new TollgateError('signature_invalid', 'The download and the answer give different signatures'),
    );
  }
  if (!signature && opts.requireSignature) {
    throw await cancel(new TollgateError('signature_required', 'The release is not signed'));
  }
  const length = response.headers.get('content-length');
  const expectedSize = pkg.file_size ?? (length !== null && /^\d+$/.test(length) ? Number(length) : null);
  if (!response.body) throw new TollgateError('size_mismatch', 'The download has no body');

  const temporary = `${destination}.${randomBytes(6).toString('hex')}.part`;
  const sha256 = createHash('sha256');
  const sha384 = createHash('sha384');
  let size = 0;
  try {
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        // More than announced is refused at once, not after it has filled the disk.
        if (expectedSize !== null && size > expectedSize) {
          done(new TollgateError('size_mismatch', 'The download is larger than announced'));
          return;
        }
        sha256.update(chunk);
        sha384.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(
        Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
        measure,
        createWriteStream(temporary, { flags: 'wx' }),
      );
    } catch (cause) {
      if (cause instanceof TollgateError) throw cause;
      throw new TollgateError('network_error', 'The download broke off', { cause: scrubbed(cause) });
    }
    if (expectedSize !== null && size !== expectedSize) {
      throw new TollgateError('size_mismatch', 'The download is not the announced size');
    }
    const actualSha = sha256.digest('hex');
    if (actualSha !== expectedSha) {
      throw new TollgateError('sha256_mismatch', "The downloaded bytes do not match the package's SHA-256");
    }
    let signingKeyId: string | null = null;
    if (signature) {
      const digest = sha384.digest();
      const named = pkg.signing_key_id ?? null;
      let keys = opts.keys ?? (await store.keys(false));
      if (!opts.keys && named !== null && !keys.some((k) => k.id === named)) keys = await store.keys(true);
      signingKeyId = verifyPackageSignature(digest, signature, named, keys);
    }
    await rename(temporary, destination);
    return { path: destination, size, sha256: actualSha, signing_key_id: signingKeyId };
  } catch (e) {
    await unlink(temporary).catch(() => {});
    throw e;
  }
}
