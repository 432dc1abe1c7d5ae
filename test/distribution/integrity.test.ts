import { createHash, createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { admin, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { makeZip, publish } from '../helpers/factories.js';
import { call, download, type Fixture, issue, pkg, protectedFixture, publicFixture } from './helpers.js';

/**
 * What a download carries for WordPress to check by itself (docs/distribution.md, '4. GET
 * /software/download' and 'Verifying a release'): Content-MD5 and X-Content-Signature stored at
 * upload, next to X-Package-Sha256, for the plain and the encrypted vault; and the signature
 * fields of the package, check and changelog answers.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('base64');

interface PublicKey {
  id: string;
  public_key: string;
}

async function keys(): Promise<PublicKey[]> {
  const res = await t.app.inject({ method: 'GET', url: '/v1/software/signing-keys' });
  expect(res.statusCode).toBe(200);
  return res.json().keys;
}

/** Ed25519 over the raw SHA-384 of the bytes, with the listed key of that id. */
function verifies(bytes: Buffer, signature: string, keyId: string, list: PublicKey[]): boolean {
  const key = list.find((k) => k.id === keyId);
  if (!key) return false;
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.public_key, 'base64').toString('base64url') },
    format: 'jwk',
  });
  return verify(
    null,
    createHash('sha384').update(bytes).digest(),
    publicKey,
    Buffer.from(signature, 'base64'),
  );
}

const SIGNATURE_FIELDS = ['signature', 'signing_key_id', 'signed_at'] as const;
const signatureOf = (body: Record<string, unknown>) =>
  Object.fromEntries(SIGNATURE_FIELDS.map((k) => [k, body[k]]));

describe('the headers of a download', () => {
  for (const driver of ['local', 'local_encrypted'] as const) {
    it(`${driver}: Content-MD5 is the base64 MD5 of the bytes received, X-Content-Signature verifies them`, async () => {
      const zip = makeZip(70_000);
      const f = await protectedFixture(t, { software: { storage_driver: driver }, zip });
      expect(f.release.storage_driver).toBe(driver);
      const answer = await issue(t, f);
      const res = await download(t, answer.download_url);
      expect(res.statusCode).toBe(200);
      const bytes = res.rawPayload;
      expect(bytes.equals(zip)).toBe(true);
      expect(res.headers['x-package-sha256']).toBe(sha256(bytes));
      expect(res.headers['content-md5']).toBe(md5(bytes));
      const signature = res.headers['x-content-signature'] as string;
      expect(signature).toBe(answer.signature);
      const list = await keys();
      expect(verifies(bytes, signature, answer.signing_key_id as string, list)).toBe(true);
      // One byte changed in transit: the signature no longer verifies, and the MD5 differs.
      const changed = Buffer.from(bytes);
      changed[1000] = changed[1000]! ^ 0x20;
      expect(verifies(changed, signature, answer.signing_key_id as string, list)).toBe(false);
      expect(md5(changed)).not.toBe(res.headers['content-md5']);
    });
  }

  it('the headers are the stored values, not computed per download; an unsigned artifact sends neither', async () => {
    const f = await protectedFixture(t);
    // Values no hash of these bytes gives: a download that hashed would send others.
    const stored = { file_md5: 'AAAAAAAAAAAAAAAAAAAAAA==', signature: `${'B'.repeat(86)}==` };
    await db().updateTable('artifacts').set(stored).where('id', '=', f.release.artifact_id).execute();
    const first = await download(t, (await issue(t, f)).download_url);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-md5']).toBe(stored.file_md5);
    expect(first.headers['x-content-signature']).toBe(stored.signature);
    // An artifact not signed (as before the signing data step ran): the download still works.
    await db()
      .updateTable('artifacts')
      .set({ file_md5: null, signature: null, signing_key_id: null, signed_at: null })
      .where('id', '=', f.release.artifact_id)
      .execute();
    const second = await download(t, (await issue(t, f)).download_url);
    expect(second.statusCode).toBe(200);
    expect(second.rawPayload.equals(f.zip)).toBe(true);
    expect(second.headers).not.toHaveProperty('content-md5');
    expect(second.headers).not.toHaveProperty('x-content-signature');
    expect(second.headers['x-package-sha256']).toBe(f.release.file_sha256);
  });

  it('a refused download carries neither header', async () => {
    const f = await protectedFixture(t);
    const url = (await issue(t, f)).download_url;
    expect((await download(t, url)).statusCode).toBe(200);
    const again = await download(t, url);
    expect(again.statusCode).toBe(403);
    expect(again.json().code).toBe('token_consumed');
    expect(again.headers).not.toHaveProperty('content-md5');
    expect(again.headers).not.toHaveProperty('x-content-signature');
  });
});

describe('the signature fields of the answers', () => {
  let f: Fixture;
  let newer: Record<string, unknown>;
  beforeAll(async () => {
    f = await protectedFixture(t);
    newer = await publish(t, f.product.id, '1.1.0', [['changelog', 'Faster.']]);
  });

  it('package, check (GET and POST) and the changelog feed answer the stored signature of the release offered', async () => {
    const expected = signatureOf(newer);
    expect(expected.signature).toMatch(/^[A-Za-z0-9+/]{86}==$/);
    expect(expected.signing_key_id).toMatch(/^k1-[0-9a-f]{8}$/);
    expect(expected.signed_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    const update = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds });
    expect(update.statusCode).toBe(200);
    expect(signatureOf(update.json())).toEqual(expected);
    // install picks the current release, 1.1.0 too; reinstall the same.
    const install = await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds });
    expect(signatureOf(install.json())).toEqual(expected);

    const query = new URLSearchParams({ slug: f.slug, version: '1.0.0', ...f.creds });
    const getCheck = await call(t, 'GET', `/software/check?${query}`);
    expect(getCheck.statusCode).toBe(200);
    expect(getCheck.json().eligible_version).toBe('1.1.0');
    expect(signatureOf(getCheck.json())).toEqual(expected);
    const postCheck = await call(t, 'POST', '/software/check', {
      slug: f.slug,
      version: '1.0.0',
      ...f.creds,
    });
    expect(signatureOf(postCheck.json())).toEqual(expected);

    // Up to date: no release offered, the three are null.
    const current = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.1.0', ...f.creds });
    expect(current.json().available).toBe(false);
    expect(signatureOf(current.json())).toEqual({ signature: null, signing_key_id: null, signed_at: null });

    const feed = await call(t, 'GET', `/software/changelog?slug=${f.slug}`);
    expect(feed.statusCode).toBe(200);
    const versions = feed.json().versions as Record<string, unknown>[];
    expect(versions.map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect(signatureOf(versions[0]!)).toEqual(expected);
    expect(signatureOf(versions[1]!)).toEqual(signatureOf(f.release));
    const one = await call(t, 'GET', `/software/changelog?slug=${f.slug}&version=1.0.0`);
    expect(signatureOf(one.json().versions[0])).toEqual(signatureOf(f.release));
  });

  it('an external release answers null signature fields in package, check and changelog', async () => {
    const p = await publicFixture(t);
    const ext = await admin(t, 'POST', `/software/products/${p.product.id}/versions`, {
      version: '2.0.0',
      external_url: 'https://downloads.example.com/p-2.0.0.zip',
      file_sha256: 'e'.repeat(64),
    });
    expect(ext.statusCode).toBe(201);
    const none = { signature: null, signing_key_id: null, signed_at: null };
    const answer = await pkg(t, { slug: p.slug, purpose: 'install' });
    expect(answer.json().manual_download_only).toBe(true);
    expect(signatureOf(answer.json())).toEqual(none);
    const check = await call(t, 'POST', '/software/check', { slug: p.slug, version: '1.0.0' });
    expect(check.json().eligible_version).toBe('2.0.0');
    expect(signatureOf(check.json())).toEqual(none);
    const feed = (await call(t, 'GET', `/software/changelog?slug=${p.slug}`)).json();
    expect(signatureOf(feed.versions[0])).toEqual(none);
    expect(feed.versions[1].signature).toMatch(/^[A-Za-z0-9+/]{86}==$/);
  });
});
