import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, postForm, type TestApp } from '../helpers/app.js';
import {
  configureSoftware,
  createCustomer,
  createProduct,
  makeZip,
  publish,
  softwareProduct,
  uploadRelease,
} from '../helpers/factories.js';
import { stagingFiles, vaultFiles } from '../helpers/vault.js';
import { hashOf, snapshot, versions } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('POST /software/products/{id}/versions (multipart): a valid upload is published', () => {
  it('hashes in flight, vaults the file privately, names it from the template and makes it current', async () => {
    const product = await softwareProduct(t);
    const zip = makeZip(5000, 3);
    const r = await publish(t, product.id, '1.2.0', [], zip);
    expect(r).toMatchObject({
      product_id: product.id,
      version: '1.2.0',
      status: 'published',
      is_current: true,
      file_name: `${product.slug}-1.2.0.zip`,
      file_size: zip.length,
      file_sha256: hashOf(zip),
      storage_driver: 'local',
      manual_download_only: false,
      download_count: 0,
      // Signed at upload since #25 (docs/releases.md, 'Signatures and Content-MD5'); was null.
      signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/),
      signing_key_id: expect.stringMatching(/^k1-[0-9a-f]{8}$/),
      signed_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      changelog: null,
    });
    expect(r.artifact_download_id).toMatch(UUID_V4);
    expect(r.published_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const stored = vaultFiles(t.config.vaultDir).find((f) => f.includes(String(r.artifact_download_id)))!;
    const path = join(t.config.vaultDir, stored);
    expect(readFileSync(path).equals(zip)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(t.config.vaultDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(stagingFiles(t.config.vaultDir)).toEqual([]);
  });

  it('set_current defaults to true and moves the flag; set_current=false leaves it', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    const b = await publish(t, product.id, '1.1.0');
    let list = await versions(t, product.id);
    expect(list.releases.filter((r) => r.is_current).map((r) => r.version_id)).toEqual([b.version_id]);
    await publish(t, product.id, '1.0.1', [['set_current', 'false']]);
    list = await versions(t, product.id);
    expect(list.releases.filter((r) => r.is_current).map((r) => r.version_id)).toEqual([b.version_id]);
    expect(list.releases.find((r) => r.version_id === a.version_id)?.is_current).toBe(false);
  });

  it('status=draft stages a draft that is neither published nor current', async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '2.0.0-beta1', [['status', 'draft']]);
    expect(r).toMatchObject({ status: 'draft', is_current: false, published_at: null });
    expectError(
      await uploadRelease(t, product.id, '2.0.0-beta2', [
        ['status', 'draft'],
        ['set_current', 'true'],
      ]),
      400,
      'invalid_parameters',
    );
  });

  it('changelog is a narrative string or a {narrative, points} JSON object', async () => {
    const product = await softwareProduct(t);
    const text = await publish(t, product.id, '1.0.0', [['changelog', 'Line one\nLine two']]);
    expect(text.changelog).toBe('Line one\nLine two');
    const obj = { narrative: 'Faster.', points: [{ type: 'fixed', text: 'A crash on save' }] };
    const json = await publish(t, product.id, '1.0.1', [['changelog', JSON.stringify(obj)]]);
    expect(json.changelog).toEqual(obj);
    for (const bad of [
      '{"narrative": 1}',
      '{not json',
      '{"points":[{"type":"Fixed!","text":"x"}]}',
      '{"extra":1}',
    ]) {
      expectError(
        await uploadRelease(t, product.id, '1.0.9', [['changelog', bad]]),
        400,
        'invalid_changelog',
      );
    }
  });

  it('a custom filename matching the template is kept; any other is refused', async () => {
    const product = await softwareProduct(t, { filename_template: '{slug}-v{version}.zip' });
    const r = await publish(t, product.id, '3.0.0', [
      ['filename', `${product.slug!.toUpperCase()}-v3.0.0.ZIP`],
    ]);
    expect(r.file_name).toBe(`${product.slug!.toUpperCase()}-v3.0.0.ZIP`);
    expectError(
      await uploadRelease(t, product.id, '3.0.1', [['filename', `${product.slug}-v3.0.2.zip`]]),
      400,
      'filename_template_mismatch',
    );
  });

  it('the product storage driver applies when the upload names none', async () => {
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    const zip = makeZip(70_000);
    const r = await publish(t, product.id, '1.0.0', [], zip);
    expect(r.storage_driver).toBe('local_encrypted');
    const stored = vaultFiles(t.config.vaultDir).find((f) => f.includes(String(r.artifact_download_id)))!;
    expect(stored.endsWith('.tgv')).toBe(true);
    const bytes = readFileSync(join(t.config.vaultDir, stored));
    expect(bytes.includes(zip.subarray(100, 200))).toBe(false);
    expect(r.file_sha256).toBe(hashOf(zip));
    // The key was generated once into DATA_DIR, owner-only.
    expect(statSync(join(t.config.dataDir, 'vault.key')).mode & 0o777).toBe(0o600);
    const artifact = await t.app.services.database.db
      .selectFrom('artifacts')
      .selectAll()
      .where('id', '=', r.artifact_id)
      .executeTakeFirstOrThrow();
    expect(artifact.key_id).toMatch(/^[0-9a-f]{16}$/);
    // An explicit storage_driver overrides the product's.
    const plain = await publish(t, product.id, '1.0.1', [['storage_driver', 'local']]);
    expect(plain.storage_driver).toBe('local');
  });
});

describe('POST versions (multipart): bad input is refused and nothing changes', () => {
  let productId: number;
  beforeAll(async () => {
    productId = (await softwareProduct(t)).id;
    await publish(t, productId, '1.0.0');
  });

  const cases: [string, () => ReturnType<typeof uploadRelease>, number, string][] = [
    [
      'missing version',
      () =>
        postForm(t, `/v1/software/products/${productId}/versions`, [
          ['file', { filename: 'a.zip', content: makeZip() }],
        ]),
      400,
      'rest_missing_param',
    ],
    ['a version with a space', () => uploadRelease(t, productId, '1.0 beta'), 400, 'invalid_version'],
    ['a traversal version', () => uploadRelease(t, productId, '../../1.0'), 400, 'invalid_version'],
    [
      'a header-injection version',
      () => uploadRelease(t, productId, '1.0\r\nX-Evil: 1'),
      400,
      'invalid_version',
    ],
    ['an overlong version', () => uploadRelease(t, productId, `1.${'0'.repeat(80)}`), 400, 'invalid_version'],
    ['a duplicate version', () => uploadRelease(t, productId, '1.0.0'), 409, 'version_exists'],
    [
      'a traversal filename',
      () => uploadRelease(t, productId, '1.0.1', [['filename', '../../etc/passwd.zip']]),
      400,
      'invalid_filename',
    ],
    [
      'a filename with a slash',
      () => uploadRelease(t, productId, '1.0.1', [['filename', 'a/b.zip']]),
      400,
      'invalid_filename',
    ],
    [
      'a header-injection filename',
      () => uploadRelease(t, productId, '1.0.1', [['filename', 'a\r\nContent-Type: text/html.zip']]),
      400,
      'invalid_filename',
    ],
    [
      'a filename not ending .zip',
      () => uploadRelease(t, productId, '1.0.1', [['filename', 'plugin-1.0.1.exe']]),
      400,
      'invalid_filename',
    ],
    [
      'a .exe upload',
      () =>
        postForm(t, `/v1/software/products/${productId}/versions`, [
          ['version', '1.0.1'],
          ['file', { filename: 'setup.exe', content: makeZip() }],
        ]),
      400,
      'invalid_file_type',
    ],
    [
      'bytes that are not a zip',
      () => uploadRelease(t, productId, '1.0.1', [], Buffer.from('MZ this is no archive'.repeat(10))),
      400,
      'invalid_archive',
    ],
    ['an empty zip', () => uploadRelease(t, productId, '1.0.1', [], makeZip(0, 0)), 400, 'invalid_archive'],
    [
      'a truncated zip',
      () => uploadRelease(t, productId, '1.0.1', [], makeZip(3000).subarray(0, 2000)),
      400,
      'invalid_archive',
    ],
    [
      'an unknown field',
      () => uploadRelease(t, productId, '1.0.1', [['storage_key', 'ab/../../x']]),
      400,
      'invalid_parameters',
    ],
    [
      'a force flag',
      () => uploadRelease(t, productId, '1.0.1', [['force', 'true']]),
      400,
      'invalid_parameters',
    ],
    [
      'a field given twice',
      () => uploadRelease(t, productId, '1.0.1', [['version', '1.0.2']]),
      400,
      'invalid_parameters',
    ],
    [
      'a huge field',
      () => uploadRelease(t, productId, '1.0.1', [['changelog', 'x'.repeat(200 * 1024)]]),
      400,
      'rest_invalid_param',
    ],
    [
      'set_current not a boolean',
      () => uploadRelease(t, productId, '1.0.1', [['set_current', 'yes']]),
      400,
      'rest_invalid_param',
    ],
    [
      'an unknown status',
      () => uploadRelease(t, productId, '1.0.1', [['status', 'withdrawn']]),
      400,
      'rest_invalid_param',
    ],
    [
      'an unsupported driver',
      () => uploadRelease(t, productId, '1.0.1', [['storage_driver', 's3']]),
      501,
      'unsupported_storage_driver',
    ],
    [
      'external as an upload driver',
      () => uploadRelease(t, productId, '1.0.1', [['storage_driver', 'external']]),
      400,
      'rest_invalid_param',
    ],
    [
      'storage_driver after the file',
      () =>
        postForm(t, `/v1/software/products/${productId}/versions`, [
          ['version', '1.0.1'],
          ['file', { filename: 'a.zip', content: makeZip() }],
          ['storage_driver', 'local_encrypted'],
        ]),
      400,
      'invalid_parameters',
    ],
    [
      'no file part',
      () => postForm(t, `/v1/software/products/${productId}/versions`, [['version', '1.0.1']]),
      400,
      'missing_file',
    ],
    [
      'two files',
      () =>
        postForm(t, `/v1/software/products/${productId}/versions`, [
          ['version', '1.0.1'],
          ['file', { filename: 'a.zip', content: makeZip() }],
          ['file', { filename: 'b.zip', content: makeZip() }],
        ]),
      400,
      'invalid_parameters',
    ],
    [
      'a file under another field name',
      () =>
        postForm(t, `/v1/software/products/${productId}/versions`, [
          ['version', '1.0.1'],
          ['archive', { filename: 'a.zip', content: makeZip() }],
        ]),
      400,
      'invalid_parameters',
    ],
  ];

  it.each(cases)('%s', async (_name, send, status, code) => {
    const before = await snapshot(t);
    expectError(await send(), status, code);
    expect(await snapshot(t)).toEqual(before);
  });

  it('a form-encoded or text body is 415 and a malformed multipart body is 400', async () => {
    const before = await snapshot(t);
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/versions`,
        headers: { ...t.adminAuth, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'version=1.0.5',
      }),
      415,
      'rest_unsupported_media_type',
    );
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${productId}/versions`,
      headers: { ...t.adminAuth, 'content-type': 'multipart/form-data; boundary=xyz' },
      payload:
        '--xyz\r\nContent-Disposition: form-data; name="version"\r\n\r\n1.0.5\r\n--xyz\r\nContent-Disp',
    });
    expect(res.statusCode).toBe(400);
    expect(await snapshot(t)).toEqual(before);
  });

  it('an unknown product is 404 product_not_found; a product without slug is 409', async () => {
    expectError(await uploadRelease(t, 999999, '1.0.0'), 404, 'product_not_found');
    // Products made through the API get a slug from their name (docs/catalogue.md); one made
    // before that, without a slug, is inserted as it was.
    const bare = await createProduct(t, {}, { via: 'database' });
    expectError(await uploadRelease(t, bare.id, '1.0.0'), 409, 'software_slug_required');
    await configureSoftware(t, bare.id, { slug: `bare-${bare.id}` });
    expect((await uploadRelease(t, bare.id, '1.0.0')).statusCode).toBe(201);
  });

  it('only administrators publish: 401 anonymous, 403 customer', async () => {
    const before = await snapshot(t);
    expectError(
      await postForm(
        t,
        `/v1/software/products/${productId}/versions`,
        [
          ['version', '1.0.8'],
          ['file', { filename: 'a.zip', content: makeZip() }],
        ],
        {},
      ),
      401,
      'rest_not_logged_in',
    );
    const customer = await createCustomer(t, 'buyer@example.com');
    expectError(
      await postForm(
        t,
        `/v1/software/products/${productId}/versions`,
        [
          ['version', '1.0.9'],
          ['file', { filename: 'a.zip', content: makeZip() }],
        ],
        customer.headers,
      ),
      403,
      'rest_forbidden',
    );
    expect(await snapshot(t)).toEqual(before);
  });
});

describe('upload limit', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await createTestApp({ env: { MAX_UPLOAD_BYTES: '20000' } });
  });
  afterAll(async () => small?.close());

  it('an upload over MAX_UPLOAD_BYTES is 413 upload_too_large and leaves nothing behind', async () => {
    const product = await softwareProduct(small);
    const before = await snapshot(small);
    expectError(
      await uploadRelease(small, product.id, '1.0.0', [], makeZip(30_000)),
      413,
      'upload_too_large',
    );
    expect(await snapshot(small)).toEqual(before);
    expect((await uploadRelease(small, product.id, '1.0.0', [], makeZip(10_000))).statusCode).toBe(201);
  });
});

describe('automatic driver', () => {
  let exposed: TestApp;
  beforeAll(async () => {
    // A vault inside the public web root is not private: automatic picks encryption.
    exposed = await createTestApp({ env: { VAULT_DIR: 'public/vault' } });
  });
  afterAll(async () => exposed?.close());

  it('is local_encrypted when the vault lies under a public root, and local is then refused', async () => {
    const product = await softwareProduct(exposed);
    const r = await publish(exposed, product.id, '1.0.0');
    expect(r.storage_driver).toBe('local_encrypted');
    expectError(
      await uploadRelease(exposed, product.id, '1.0.1', [['storage_driver', 'local']]),
      409,
      'vault_not_private',
    );
    const status = await exposed.app.inject({
      method: 'GET',
      url: '/v1/software/storage/status',
      headers: exposed.adminAuth,
    });
    expect(status.json()).toMatchObject({
      automatic_driver: 'local_encrypted',
      vault: { under_public_root: true, private: false, writable: true },
    });
  });

  it('is local when the vault is private', async () => {
    const status = await t.app.inject({
      method: 'GET',
      url: '/v1/software/storage/status',
      headers: t.adminAuth,
    });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toMatchObject({
      automatic_driver: 'local',
      vault: {
        path: t.config.vaultDir,
        under_public_root: false,
        private: true,
        writable: true,
        mode: '0700',
      },
      encryption: { algorithm: 'AES-256-GCM', chunk_size: 65536 },
      staging: { files: 0 },
    });
    expect(status.json().vault.free_bytes).toBeGreaterThan(0);
    expect(status.json().counts.artifacts.local).toBeGreaterThan(0);
  });
});

describe('parallel publication', () => {
  it('parallel uploads of one version: exactly one wins, the rest are 409 and leave no file', async () => {
    const product = await softwareProduct(t);
    const before = vaultFiles(t.config.vaultDir).length;
    const results = await Promise.all(Array.from({ length: 4 }, () => uploadRelease(t, product.id, '7.0.0')));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expectError(r, 409, 'version_exists');
    expect(vaultFiles(t.config.vaultDir).length).toBe(before + 1);
    expect(stagingFiles(t.config.vaultDir)).toEqual([]);
  });

  it('parallel uploads that each take the current flag leave exactly one current release', async () => {
    const product = await softwareProduct(t);
    const results = await Promise.all(
      ['8.0.0', '8.0.1', '8.0.2', '8.0.3'].map((v) => uploadRelease(t, product.id, v)),
    );
    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 201, 201]);
    const list = await versions(t, product.id);
    expect(list.releases.filter((r) => r.is_current)).toHaveLength(1);
  });
});
