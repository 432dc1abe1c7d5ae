import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** A local S3 emulator with one bucket, and what a server needs to reach it. */
export interface TestBucket {
  /** `http://127.0.0.1:<port>`: give it as S3_ENDPOINT with S3_FORCE_PATH_STYLE=1. */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The S3_* environment of a server that stores its artifacts in this bucket. */
  env(prefix?: string): Record<string, string>;
  /** Stops the emulator and removes its files. */
  stop(): Promise<void>;
}

/**
 * Starts s3rver (an S3 emulator) in this process on a free loopback port, with `bucket` created,
 * its objects kept in a temporary directory. The emulator checks request signatures, so a client
 * goes through the SDK's real signing, endpoint and path-style code paths.
 */
export async function startS3(bucket = 'tollgate-test'): Promise<TestBucket> {
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  // Credentials of this bucket only (s3rver checks every request's signature against them), so a
  // test can look for them where they must never be, such as the logs.
  const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(30).toString('base64');
  const { DUMMY_ACCOUNT } = createRequire(import.meta.url)('s3rver/lib/models/account.js') as {
    DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void; revokeAccessKey(id: string): void };
  };
  DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    env: (prefix = '') => ({
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: accessKeyId,
      S3_SECRET_ACCESS_KEY: secretAccessKey,
      S3_FORCE_PATH_STYLE: '1',
      ...(prefix ? { S3_PREFIX: prefix } : {}),
    }),
    async stop() {
      await server.close();
      DUMMY_ACCOUNT.revokeAccessKey(accessKeyId);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
