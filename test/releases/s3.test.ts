import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { encryptedSize } from '../../src/modules/releases/storage/crypto-stream.js';
import { keyIdOf } from '../../src/modules/vault/keyring.js';
import { sha256 } from '../../src/random.js';
import { type Fixture, issue, protectedFixture, tokenOf } from '../distribution/helpers.js';
import { admin, createTestApp, expectError, postForm, setSettings, type TestApp } from '../helpers/app.js';
import { makeZip, softwareProduct, uploadRelease } from '../helpers/factories.js';
import { startS3, type TestBucket } from '../helpers/s3.js';
import { stagingFiles, vaultFiles } from '../helpers/vault.js';

/**
 * The S3 drivers (docs/releases.md, 'Objects in a bucket') against s3rver through the real SDK
 * (endpoint, path style, signatures): uploads stream to the bucket, downloads over real HTTP are
 * checked before the claim and fail closed, deletions delete objects, and the credentials stay
 * out of the logs.
 */
const PREFIX = 'store/';
let s3: TestBucket;
let t: TestApp;
let base: string;
let client: S3Client;

beforeAll(async () => {
  s3 = await startS3();
  t = await createTestApp({ env: s3.env(PREFIX), captureLogs: true });
  await setSettings(t, { rate_limit: 1000 });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
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
  await t?.close();
  await s3?.stop();
});

const db = () => t.app.services.database.db;
const store = () => t.app.services.releases.storage.objects!.store;
const artifactOf = (id: number) =>
  db().selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function objectBytes(key: string): Promise<Buffer> {
  const o = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return Buffer.from(await o.Body!.transformToByteArray());
}

const putObject = (key: string, body: Buffer) =>
  client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));

async function objectKeys(): Promise<string[]> {
  const list = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
  return (list.Contents ?? []).map((o) => o.Key!).sort();
}

/** GET /software/download over a real connection, as a site's updater does it. */
async function fetchDownload(url: string) {
  const u = new URL(url);
  const res = await fetch(`${base}${u.pathname}${u.search}`);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

async function tokenUsed(url: string): Promise<boolean> {
  const row = await db()
    .selectFrom('download_tokens')
    .select('used_at')
    .where('token_hash', '=', sha256(tokenOf(url)))
    .executeTakeFirstOrThrow();
  return row.used_at !== null;
}

async function published(driver: '' | 'local_encrypted', zip: Buffer): Promise<Fixture> {
  return protectedFixture(t, { software: { storage_driver: driver }, zip });
}

describe('uploads stream to the bucket', () => {
  it.each([
    ['', 's3'],
    ['local_encrypted', 's3_encrypted'],
  ] as const)(
    'product driver "%s" stores %s objects under the prefix; the vault stays empty',
    async (configured, driver) => {
      const zip = makeZip(200_000);
      const f = await published(configured, zip);
      expect(f.release.storage_driver).toBe(driver);
      const a = await artifactOf(f.release.artifact_id);
      expect(a).toMatchObject({ driver, file_size: zip.length, file_sha256: sha256(zip) });
      expect(a.stored_etag).toMatch(/^"[^"]+"$/);
      const stored = await objectBytes(`${PREFIX}${a.storage_key}`);
      if (driver === 's3') expect(stored.equals(zip)).toBe(true);
      else {
        expect(stored.length).toBe(encryptedSize(zip.length));
        expect(Number(a.stored_size)).toBe(stored.length);
        expect(stored.includes(zip.subarray(100, 164))).toBe(false);
      }
      expect(vaultFiles(t.config.vaultDir)).toEqual([]);
      expect(stagingFiles(t.config.vaultDir)).toEqual([]);
    },
  );

  it.each([
    ['', 's3'],
    ['local_encrypted', 's3_encrypted'],
  ] as const)(
    'a file above the part size goes up in parts ("%s" → %s) and downloads whole',
    async (configured, _driver) => {
      const send = vi.spyOn(await store().client(), 'send');
      try {
        const zip = makeZip(6 * 1024 * 1024);
        const f = await published(configured, zip);
        const commands = send.mock.calls.map(([c]) => c.constructor.name);
        expect(commands).toContain('CreateMultipartUploadCommand');
        expect(commands.filter((c) => c === 'UploadPartCommand').length).toBe(2);
        expect(commands).toContain('CompleteMultipartUploadCommand');
        const res = await fetchDownload((await issue(t, f)).download_url);
        expect(res.status).toBe(200);
        expect(res.body.equals(zip)).toBe(true);
      } finally {
        send.mockRestore();
      }
    },
  );

  it('an upload whose client goes away mid-file stores nothing (the multipart upload is given up)', async () => {
    const f = await published('', makeZip(1000));
    const before = await objectKeys();
    const releasesBefore = (await db().selectFrom('releases').select('id').execute()).length;
    const send = vi.spyOn(await store().client(), 'send');
    const upload = vi.spyOn(store(), 'upload');
    try {
      const boundary = 'tollgateabort';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n5.0.0\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.zip"\r\n` +
          'Content-Type: application/zip\r\n\r\n',
      );
      const req = request(`${base}/v1/software/products/${f.product.id}/versions`, {
        method: 'POST',
        headers: { ...t.adminAuth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      req.on('error', () => {});
      req.write(head);
      // Past one part, so the bucket has a multipart upload under way when the client leaves.
      req.write(makeZip(7 * 1024 * 1024).subarray(0, 6 * 1024 * 1024));
      await vi.waitFor(
        () => expect(send.mock.calls.map(([c]) => c.constructor.name)).toContain('UploadPartCommand'),
        { timeout: 10_000 },
      );
      req.destroy();
      await vi.waitFor(() => expect(upload.mock.results.length).toBe(1));
      await expect(upload.mock.results[0]!.value).rejects.toBeDefined();
      const commands = send.mock.calls.map(([c]) => c.constructor.name);
      expect(commands).not.toContain('CompleteMultipartUploadCommand');
      expect(commands).toContain('AbortMultipartUploadCommand');
      expect(await objectKeys()).toEqual(before);
      expect((await db().selectFrom('releases').select('id').execute()).length).toBe(releasesBefore);
    } finally {
      send.mockRestore();
      upload.mockRestore();
    }
  });

  it('a refused upload leaves no object behind', async () => {
    const before = await objectKeys();
    const f = await published('', makeZip(1000));
    const notZip = Buffer.alloc(300_000, 7);
    for (const driver of ['local', 'local_encrypted']) {
      const res = await uploadRelease(t, f.product.id, '9.0.0', [['storage_driver', driver]], notZip);
      expectError(res, 400, 'invalid_archive');
    }
    expect((await objectKeys()).length).toBe(before.length + 1);
  });
});

describe('downloads from the bucket', () => {
  it.each([
    ['', 's3'],
    ['local_encrypted', 's3_encrypted'],
  ] as const)(
    '"%s" → %s: the pre-check trusts the ETag recorded at upload, so the object is read once',
    async (configured, _driver) => {
      const zip = makeZip(150_000);
      const f = await published(configured, zip);
      const get = vi.spyOn(store(), 'get');
      try {
        const answer = await issue(t, f);
        const res = await fetchDownload(answer.download_url);
        expect(res.status).toBe(200);
        expect(res.body.equals(zip)).toBe(true);
        expect(res.headers.get('x-package-sha256')).toBe(sha256(zip));
        expect(get).toHaveBeenCalledTimes(1);
        expect(await tokenUsed(answer.download_url)).toBe(true);
      } finally {
        get.mockRestore();
      }
    },
  );

  it('plain: a replaced object of the same size is read in full and refused before the claim', async () => {
    const zip = makeZip(100_000);
    const f = await published('', zip);
    const a = await artifactOf(f.release.artifact_id);
    const key = `${PREFIX}${a.storage_key}`;
    const tampered = Buffer.from(zip);
    tampered[5000] = tampered[5000]! ^ 0xff;
    await putObject(key, tampered);
    const answer = await issue(t, f);
    const res = await fetchDownload(answer.download_url);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body.toString())).toMatchObject({
      code: 'artifact_integrity_failed',
      data: { reason: 'hash_mismatch' },
    });
    expect(await tokenUsed(answer.download_url)).toBe(false);
    // The same bytes put back (a new ETag): read in full, they verify, and the same token works.
    await putObject(key, zip);
    const again = await fetchDownload(answer.download_url);
    expect(again.status).toBe(200);
    expect(again.body.equals(zip)).toBe(true);
  });

  it('encrypted: a flipped bit fails authentication before the claim', async () => {
    const zip = makeZip(100_000);
    const f = await published('local_encrypted', zip);
    const a = await artifactOf(f.release.artifact_id);
    const key = `${PREFIX}${a.storage_key}`;
    const sealed = await objectBytes(key);
    sealed[sealed.length - 40] = sealed[sealed.length - 40]! ^ 0x01;
    await putObject(key, sealed);
    const answer = await issue(t, f);
    const res = await fetchDownload(answer.download_url);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body.toString())).toMatchObject({
      code: 'artifact_integrity_failed',
      data: { reason: 'authentication_failed' },
    });
    expect(await tokenUsed(answer.download_url)).toBe(false);
  });

  it('a missing object is artifact_not_found, and the token is not consumed', async () => {
    for (const configured of ['', 'local_encrypted'] as const) {
      const f = await published(configured, makeZip(5000));
      const a = await artifactOf(f.release.artifact_id);
      await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${a.storage_key}` }));
      const answer = await issue(t, f);
      const res = await fetchDownload(answer.download_url);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString()).code).toBe('artifact_not_found');
      expect(await tokenUsed(answer.download_url)).toBe(false);
    }
  });
});

describe('catalogue files (legacy downloads)', () => {
  it('protect copies a catalogue file into the bucket; its release downloads from there', async () => {
    const f = await published('', makeZip(1000));
    const legacyZip = makeZip(30_000);
    const id = f.product.id;
    const upload = await postForm(t, `/v1/products/${id}/downloads`, [
      ['file', { filename: 'plugin.zip', content: legacyZip }],
    ]);
    expect(upload.statusCode).toBe(201);
    const { download_id } = upload.json();
    const protect = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${id}/artifacts/protect`,
      headers: t.adminAuth,
      payload: { download_id },
    });
    expect(protect.statusCode).toBe(201);
    const a = await artifactOf(protect.json().artifact_id);
    expect(a.driver).toBe('s3');
    expect((await objectBytes(`${PREFIX}${a.storage_key}`)).equals(legacyZip)).toBe(true);
    const draft = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${id}/versions`,
      headers: t.adminAuth,
      payload: { version: '2.0.0', legacy_download_id: download_id, status: 'draft' },
    });
    expect(draft.statusCode).toBe(201);
    const versionUrl = `/v1/software/products/${id}/versions/${draft.json().version_id}`;
    for (const step of ['delete-public-source', 'republish']) {
      const res = await t.app.inject({ method: 'POST', url: `${versionUrl}/${step}`, headers: t.adminAuth });
      expect(res.statusCode).toBe(200);
    }
    const res = await fetchDownload((await issue(t, f)).download_url);
    expect(res.status).toBe(200);
    expect(res.body.equals(legacyZip)).toBe(true);
  });
});

describe('leftovers', () => {
  it("objects no artifact names are removed after a day; artifacts' and foreign objects stay", async () => {
    const f = await published('', makeZip(2000));
    const a = await artifactOf(f.release.artifact_id);
    const orphan = `${PREFIX}0a/0a000000-0000-4000-8000-000000000001.zip`;
    const foreign = `${PREFIX}notes/readme.txt`;
    const outside = 'elsewhere/0a/0a000000-0000-4000-8000-000000000002.zip';
    for (const key of [orphan, foreign, outside]) await putObject(key, Buffer.from('x'));
    const rows = await db().selectFrom('artifacts').select('storage_key').execute();
    const known = new Set(rows.map((r) => r.storage_key));
    expect(await store().sweepOrphans(known)).toBe(0);
    expect(await store().sweepOrphans(known, Date.now() + 25 * 60 * 60 * 1000)).toBe(1);
    const keys = await objectKeys();
    expect(keys).not.toContain(orphan);
    expect(keys).toEqual(expect.arrayContaining([foreign, outside, `${PREFIX}${a.storage_key}`]));
  });
});

describe('deletion', () => {
  it('a deletion job deletes the object and confirms it is gone', async () => {
    const f = await published('local_encrypted', makeZip(5000));
    const a = await artifactOf(f.release.artifact_id);
    const target = { artifact_ids: [a.id] };
    const url = `/v1/software/products/${f.product.id}/artifact-deletions`;
    const preview = await t.app.inject({
      method: 'POST',
      url: `${url}/preview`,
      headers: t.adminAuth,
      payload: target,
    });
    expect(preview.statusCode).toBe(200);
    const { acknowledgement, fingerprint, targets } = preview.json();
    expect(targets[0].stored).toMatchObject({ exists: true, size: Number(a.stored_size) });
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: t.adminAuth,
      payload: { ...target, acknowledgement, fingerprint },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('completed');
    await expect(
      client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${a.storage_key}` })),
    ).rejects.toMatchObject({ name: 'NotFound' });
    expect((await artifactOf(a.id)).state).toBe('deleted');
  });
});

describe('key rotation', () => {
  it('re-seals sealed objects under the new key as new objects; a corrupt or missing one is reported and left as it was', async () => {
    const zip = makeZip(120_000);
    const f = await published('local_encrypted', zip);
    const a = await artifactOf(f.release.artifact_id);
    expect(a.driver).toBe('s3_encrypted');
    const corrupt = await artifactOf((await published('local_encrypted', makeZip(3000))).release.artifact_id);
    const sealed = await objectBytes(`${PREFIX}${corrupt.storage_key}`);
    sealed[sealed.length - 40] = sealed[sealed.length - 40]! ^ 0x01;
    await putObject(`${PREFIX}${corrupt.storage_key}`, sealed);
    const gone = await artifactOf((await published('local_encrypted', makeZip(3000))).release.artifact_id);
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${gone.storage_key}` }));

    // The new key in VAULT_KEY; the old one is the generated DATA_DIR/vault.key, still read.
    const keyB = randomBytes(32);
    const rotating = await buildApp({ ...t.config, vaultKey: keyB, vaultPreviousKeys: [] }, t.db.database);
    try {
      const before = await objectKeys();
      const res = await rotating.inject({
        method: 'POST',
        url: '/v1/software/storage/rotate-key',
        headers: t.adminAuth,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json() as {
        key_id: string;
        results: { artifact_id: number; from_key_id: string; ok: boolean; error?: string }[];
      };
      expect(body.key_id).toBe(keyIdOf(keyB));
      const resultOf = (id: number) => body.results.find((r) => r.artifact_id === id);
      expect(resultOf(a.id)).toEqual({ artifact_id: a.id, from_key_id: a.key_id, ok: true });
      expect(resultOf(corrupt.id)).toMatchObject({ ok: false, error: 'authentication_failed' });
      expect(resultOf(gone.id)).toMatchObject({ ok: false, error: 'missing' });

      // The artifact names a new object, sealed with the new key; the old object is gone.
      const after = await artifactOf(a.id);
      expect(after.storage_key).not.toBe(a.storage_key);
      expect(after).toMatchObject({
        driver: 's3_encrypted',
        key_id: keyIdOf(keyB),
        stored_size: encryptedSize(zip.length),
        file_sha256: a.file_sha256,
      });
      const keys = await objectKeys();
      expect(keys).toContain(`${PREFIX}${after.storage_key}`);
      expect(keys).not.toContain(`${PREFIX}${a.storage_key}`);
      // The failures changed nothing: same rows, the corrupt object as it was, nothing new left.
      expect(await artifactOf(corrupt.id)).toEqual(corrupt);
      expect(await artifactOf(gone.id)).toEqual(gone);
      expect((await objectBytes(`${PREFIX}${corrupt.storage_key}`)).equals(sealed)).toBe(true);
      expect(keys.length).toBe(before.length);
      expect(after.stored_etag).toBe(
        (
          await client.send(
            new HeadObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}${after.storage_key}` }),
          )
        ).ETag,
      );

      // It downloads byte for byte, the ETag check trusted (the object is read once).
      const answer = await issue(t, f);
      const u = new URL(answer.download_url);
      const download = await rotating.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      expect(download.statusCode).toBe(200);
      expect(download.rawPayload.equals(zip)).toBe(true);

      const audit = await admin(t, 'GET', `/audit-events?entity_type=artifact&entity_id=${a.id}`);
      expect(audit.json()).toEqual([
        expect.objectContaining({
          action: 'rotate_key',
          changes: { key_id: { before: a.key_id, after: keyIdOf(keyB) } },
        }),
      ]);
      const status = await rotating.inject({
        method: 'GET',
        url: '/v1/software/storage/status',
        headers: t.adminAuth,
      });
      // What is still on the old key is what could not be re-sealed (and earlier tests' leftovers).
      const onPrevious = await db()
        .selectFrom('artifacts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('driver', 'in', ['s3_encrypted', 'local_encrypted'])
        .where('state', '!=', 'deleted')
        .where('key_id', '!=', keyIdOf(keyB))
        .executeTakeFirstOrThrow();
      expect(status.json().encryption.artifacts_on_previous_keys).toBe(Number(onPrevious.n));
      expect(Number(onPrevious.n)).toBeGreaterThanOrEqual(2);
      // Run again: the re-sealed one is not touched, the failures are reported again.
      const again = (
        await rotating.inject({
          method: 'POST',
          url: '/v1/software/storage/rotate-key',
          headers: t.adminAuth,
        })
      ).json() as typeof body;
      expect(again.results.find((r) => r.artifact_id === a.id)).toBeUndefined();
      expect((await artifactOf(a.id)).storage_key).toBe(after.storage_key);
    } finally {
      await rotating.close();
    }
  });
});

describe('credentials', () => {
  it('a bucket that cannot be written refuses the upload (503) and logs no credential', async () => {
    const broken = await createTestApp({
      env: { ...s3.env(PREFIX), S3_BUCKET: 'no-such-bucket' },
      captureLogs: true,
    });
    try {
      const product = await softwareProduct(broken);
      const res = await uploadRelease(broken, product.id, '1.0.0');
      expectError(res, 503, 'storage_unavailable');
      expect(res.json().data.reason).toBe('NoSuchBucket');
      expect(await broken.app.services.database.db.selectFrom('artifacts').select('id').execute()).toEqual(
        [],
      );
      const logs = broken.logs();
      expect(logs).toContain('storage_unavailable');
      expect(logs).not.toContain(s3.secretAccessKey);
      expect(logs).not.toContain(s3.accessKeyId);
    } finally {
      await broken.close();
    }
  });

  it('never reach the logs, nor the storage status', async () => {
    const status = await t.app.inject({
      method: 'GET',
      url: '/v1/software/storage/status',
      headers: t.adminAuth,
    });
    expect(status.statusCode).toBe(200);
    expect(status.json().drivers).toEqual(expect.arrayContaining(['s3', 's3_encrypted']));
    expect(status.json().bucket).toEqual({ bucket: s3.bucket, prefix: PREFIX, endpoint: s3.endpoint });
    expect(status.json().automatic_driver).toBe('s3');
    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const text of [logs, status.body]) {
      expect(text).not.toContain(s3.secretAccessKey);
      expect(text).not.toContain(s3.accessKeyId);
    }
  });
});

describe('configuration (S3_*)', () => {
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
  const refused = (env: Record<string, string>, message: RegExp) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(secret);
  };

  it('S3_BUCKET selects object storage, with defaults for the rest', () => {
    expect(loadConfig({}).s3).toBeNull();
    expect(loadConfig({ S3_BUCKET: 'releases' }).s3).toEqual({
      bucket: 'releases',
      prefix: '',
      region: 'us-east-1',
      endpoint: null,
      forcePathStyle: false,
      credentials: null,
    });
    expect(
      loadConfig({
        S3_BUCKET: 'releases',
        S3_ENDPOINT: 'https://minio.example.com:9000/',
        S3_REGION: 'auto',
        S3_PREFIX: 'tollgate/prod',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
        S3_SECRET_ACCESS_KEY: secret,
      }).s3,
    ).toEqual({
      bucket: 'releases',
      prefix: 'tollgate/prod/',
      region: 'auto',
      endpoint: 'https://minio.example.com:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: secret },
    });
  });

  it('refuses what cannot work, with a message that names the variable and never shows a secret', () => {
    refused({ S3_ENDPOINT: 'http://127.0.0.1:9000' }, /S3_ENDPOINT set without S3_BUCKET/);
    refused({ S3_BUCKET: 'b', S3_SECRET_ACCESS_KEY: secret }, /S3_BUCKET must be/);
    refused({ S3_BUCKET: 'releases', S3_SECRET_ACCESS_KEY: secret }, /must be set together/);
    refused(
      { S3_BUCKET: 'releases', S3_ENDPOINT: 'http://127.0.0.1:9000' },
      /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required/,
    );
    refused({ S3_BUCKET: 'releases', S3_ENDPOINT: 'ftp://host' }, /S3_ENDPOINT must use http or https/);
    refused({ S3_BUCKET: 'releases', S3_FORCE_PATH_STYLE: 'yes' }, /S3_FORCE_PATH_STYLE must be/);
    refused({ S3_BUCKET: 'releases', S3_PREFIX: 'a/../b' }, /S3_PREFIX must be/);
    refused({ S3_BUCKET: 'releases', S3_PREFIX: 'a//b' }, /S3_PREFIX must be/);
  });
});
