import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, postForm, type TestApp } from '../helpers/app.js';
import { makeZip, publish, softwareProduct } from '../helpers/factories.js';
import { vaultFiles } from '../helpers/vault.js';
import { hashOf, snapshot } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const SHA = 'a'.repeat(64);
const postJson = (productId: number, payload: unknown, headers: Record<string, string> = t.adminAuth) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/software/products/${productId}/versions`,
    headers,
    payload: payload as object,
  });

describe('JSON publication of an external HTTPS link', () => {
  let productId: number;
  let slug: string;
  beforeAll(async () => {
    const p = await softwareProduct(t);
    productId = p.id;
    slug = p.slug!;
  });

  it('publishes a manual-download release with the administrator-supplied SHA-256, never fetching it', async () => {
    const res = await postJson(productId, {
      version: '2.0.0',
      external_url: 'https://downloads.example.com/plugin-2.0.0.zip',
      file_sha256: SHA,
      file_size: 12345,
      changelog: { narrative: 'Big release', points: [{ type: 'added', text: 'Everything' }] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      version: '2.0.0',
      status: 'published',
      is_current: true,
      storage_driver: 'external',
      manual_download_only: true,
      external_url: 'https://downloads.example.com/plugin-2.0.0.zip',
      file_sha256: SHA,
      file_size: 12345,
      file_name: `${slug}-2.0.0.zip`,
    });
  });

  it('status draft and set_current false are honoured; file_size is optional', async () => {
    const res = await postJson(productId, {
      version: '2.1.0-rc1',
      external_url: 'https://downloads.example.com/rc.zip',
      file_sha256: SHA,
      status: 'draft',
      set_current: 'false',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 'draft', is_current: false, file_size: null });
  });

  const bad: [string, Record<string, unknown>, number, string][] = [
    ['an http link', { external_url: 'http://downloads.example.com/p.zip' }, 400, 'invalid_external_url'],
    [
      'a link with credentials',
      { external_url: 'https://user:pw@downloads.example.com/p.zip' },
      400,
      'invalid_external_url',
    ],
    ['a javascript: link', { external_url: 'javascript:alert(1)' }, 400, 'invalid_external_url'],
    [
      'a link with a newline',
      { external_url: 'https://downloads.example.com/a\r\nb.zip' },
      400,
      'invalid_external_url',
    ],
    ['a huge link', { external_url: `https://example.com/${'a'.repeat(3000)}` }, 400, 'invalid_external_url'],
    ['an uppercase checksum', { file_sha256: SHA.toUpperCase() }, 400, 'invalid_file_sha256'],
    ['a short checksum', { file_sha256: 'abc' }, 400, 'invalid_file_sha256'],
    ['a numeric checksum', { file_sha256: 12 }, 400, 'invalid_file_sha256'],
    ['no checksum', { file_sha256: undefined }, 400, 'rest_missing_param'],
    ['a traversal file_name', { file_name: '../../etc/passwd.zip' }, 400, 'invalid_filename'],
    ['a numeric version', { version: 3 }, 400, 'invalid_version'],
    ['an injected version', { version: '3.0\r\nX: y' }, 400, 'invalid_version'],
    ['a negative size', { file_size: -1 }, 400, 'rest_invalid_param'],
    ['a string size', { file_size: '10' }, 400, 'rest_invalid_param'],
    ['an unknown field', { storage_key: 'x' }, 400, 'invalid_parameters'],
    ['a force flag', { force: true }, 400, 'invalid_parameters'],
    ['both link and catalogue id', { legacy_download_id: 'abc' }, 400, 'invalid_parameters'],
    ['an invalid status', { status: 'withdrawn' }, 400, 'rest_invalid_param'],
    ['an invalid changelog', { changelog: { narrative: 'x', points: 'no' } }, 400, 'invalid_changelog'],
    ['a duplicate version', { version: '2.0.0' }, 409, 'version_exists'],
  ];

  it.each(bad)('%s is refused and nothing changes', async (_name, patch, status, code) => {
    const before = await snapshot(t);
    const body = {
      version: '2.0.1',
      external_url: 'https://downloads.example.com/p.zip',
      file_sha256: SHA,
      ...patch,
    };
    expectError(await postJson(productId, JSON.parse(JSON.stringify(body))), status, code);
    expect(await snapshot(t)).toEqual(before);
  });

  it('JSON without a link or catalogue id is 400 missing_file; no version is 400 rest_missing_param', async () => {
    expectError(await postJson(productId, { version: '9.0.0' }), 400, 'missing_file');
    expectError(
      await postJson(productId, { external_url: 'https://example.com/a.zip', file_sha256: SHA }),
      400,
      'rest_missing_param',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/versions`,
        headers: { ...t.adminAuth, 'content-type': 'application/json' },
        payload: '{"version": ',
      }),
      400,
      'rest_invalid_json',
    );
  });
});

describe('legacy catalogue files: public folder, protect, publish, delete the public source', () => {
  let productId: number;
  let otherId: number;
  let zip: Buffer;
  let download: { download_id: string; file_name: string; file_sha256: string; public_url: string };

  beforeAll(async () => {
    productId = (await softwareProduct(t)).id;
    otherId = (await softwareProduct(t)).id;
    zip = makeZip(4000);
    const res = await postForm(t, `/v1/products/${productId}/downloads`, [
      ['file', { filename: '../../My Plugin (final).zip', content: zip }],
    ]);
    expect(res.statusCode).toBe(201);
    download = res.json();
  });

  it('POST /products/{id}/downloads answers 201 with a public URL anyone can fetch', async () => {
    expect(download).toMatchObject({
      file_name: 'My-Plugin-final-.zip',
      file_sha256: hashOf(zip),
      file_size: zip.length,
    });
    expect(download.public_url).toMatch(
      /^http:\/\/.+\/uploads\/\d{4}\/\d\d\/[0-9a-f]{8}\/My-Plugin-final-\.zip$/,
    );
    const path = new URL(download.public_url).pathname;
    const res = await t.app.inject({ method: 'GET', url: path });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.rawPayload.equals(zip)).toBe(true);
    // The file really lives under DATA_DIR/public.
    expect(existsSync(join(t.config.dataDir, 'public', path))).toBe(true);
  });

  it('the public folder serves nothing outside it', async () => {
    for (const url of [
      '/uploads/../vault',
      '/uploads/%2e%2e/%2e%2e/tollgate.sqlite',
      '/uploads/.staging',
      '/uploads/',
    ]) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(404);
    }
  });

  it('the catalogue upload needs an administrator and a multipart file', async () => {
    expectError(
      await postForm(
        t,
        `/v1/products/${productId}/downloads`,
        [['file', { filename: 'a.zip', content: zip }]],
        {},
      ),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await postForm(t, `/v1/products/999999/downloads`, [['file', { filename: 'a.zip', content: zip }]]),
      404,
      'product_not_found',
    );
    expectError(
      await postForm(t, `/v1/products/${productId}/downloads`, [['name', 'x']]),
      400,
      'invalid_parameters',
    );
    expectError(await postForm(t, `/v1/products/${productId}/downloads`, []), 400, 'missing_file');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/products/${productId}/downloads`,
        headers: t.adminAuth,
        payload: { file: 'x' },
      }),
      415,
      'rest_unsupported_media_type',
    );
  });

  it('publishing an unprotected catalogue file is 403 unprotected_artifact_prohibited', async () => {
    const before = await snapshot(t);
    expectError(
      await postJson(productId, { version: '1.0.0', legacy_download_id: download.download_id }),
      403,
      'unprotected_artifact_prohibited',
    );
    expectError(
      await postJson(productId, { version: '1.0.0', legacy_download_id: 'no-such-id' }),
      404,
      'legacy_download_not_found',
    );
    expect(await snapshot(t)).toEqual(before);
  });

  it("another product's catalogue file is 403 cross_product_artifact_prohibited (protect and publish)", async () => {
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${otherId}/artifacts/protect`,
        headers: t.adminAuth,
        payload: { download_id: download.download_id },
      }),
      403,
      'cross_product_artifact_prohibited',
    );
    expectError(
      await postJson(otherId, { version: '1.0.0', legacy_download_id: download.download_id }),
      403,
      'cross_product_artifact_prohibited',
    );
  });

  it('protect copies the file into the vault (201), and again answers the same artifact (200)', async () => {
    const url = `/v1/software/products/${productId}/artifacts/protect`;
    const first = await t.app.inject({
      method: 'POST',
      url,
      headers: t.adminAuth,
      payload: { download_id: download.download_id },
    });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      file_sha256: hashOf(zip),
      file_size: zip.length,
      artifact_download_id: download.download_id,
    });
    const again = await t.app.inject({
      method: 'POST',
      url,
      headers: t.adminAuth,
      payload: { download_id: download.download_id },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().artifact_id).toBe(first.json().artifact_id);
    expect(vaultFiles(t.config.vaultDir).length).toBeGreaterThan(0);
    expectError(
      await t.app.inject({ method: 'POST', url, headers: t.adminAuth, payload: { download_id: '../x' } }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await t.app.inject({ method: 'POST', url, headers: t.adminAuth, payload: { download_id: 'unknown' } }),
      404,
      'legacy_download_not_found',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url,
        headers: t.adminAuth,
        payload: { download_id: 'x', path: '/etc' },
      }),
      400,
      'invalid_parameters',
    );
  });

  it('while the public copy exists a release may only be a draft (409 source_still_public)', async () => {
    expectError(
      await postJson(productId, { version: '1.0.0', legacy_download_id: download.download_id }),
      409,
      'source_still_public',
    );
    const draft = await postJson(productId, {
      version: '1.0.0',
      legacy_download_id: download.download_id,
      status: 'draft',
    });
    expect(draft.statusCode).toBe(201);
    expect(draft.json()).toMatchObject({
      status: 'draft',
      artifact_download_id: download.download_id,
      file_sha256: hashOf(zip),
    });
    const id = draft.json().version_id;
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/versions/${id}/republish`,
        headers: t.adminAuth,
      }),
      409,
      'source_still_public',
    );
    // Removing the public source after verifying the vault copy, then publishing.
    const del = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${productId}/versions/${id}/delete-public-source`,
      headers: t.adminAuth,
    });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({
      success: true,
      version_id: id,
      download_id: download.download_id,
      removed: true,
    });
    expect(
      (await t.app.inject({ method: 'GET', url: new URL(download.public_url).pathname })).statusCode,
    ).toBe(404);
    const again = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${productId}/versions/${id}/delete-public-source`,
      headers: t.adminAuth,
    });
    expect(again.json().removed).toBe(false);
    const pub = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${productId}/versions/${id}/republish`,
      headers: t.adminAuth,
    });
    expect(pub.statusCode).toBe(200);
    expect(pub.json()).toMatchObject({ status: 'published', is_current: true });
    // A legacy-bound release takes no external-only fields.
    expectError(
      await postJson(productId, {
        version: '1.0.1',
        legacy_download_id: download.download_id,
        file_sha256: SHA,
      }),
      400,
      'invalid_parameters',
    );
  });

  it('delete-public-source on a plain upload is 409 no_public_source', async () => {
    const r = await publish(t, productId, '5.0.0');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/versions/${r.version_id}/delete-public-source`,
        headers: t.adminAuth,
      }),
      409,
      'no_public_source',
    );
  });

  it('a public file replaced after upload is not protected (409 public_source_mismatch)', async () => {
    const res = await postForm(t, `/v1/products/${productId}/downloads`, [
      ['file', { filename: 'swap.zip', content: makeZip(100) }],
    ]);
    const d = res.json();
    writeFileSync(join(t.config.dataDir, 'public', new URL(d.public_url).pathname), makeZip(100));
    const before = await snapshot(t);
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/artifacts/protect`,
        headers: t.adminAuth,
        payload: { download_id: d.download_id },
      }),
      409,
      'public_source_mismatch',
    );
    expect(await snapshot(t)).toEqual(before);
  });

  it('a catalogue file that is not a zip cannot be protected (400 invalid_archive)', async () => {
    const res = await postForm(t, `/v1/products/${productId}/downloads`, [
      ['file', { filename: 'manual.pdf', content: Buffer.from('%PDF-1.4 no zip') }],
    ]);
    expect(res.statusCode).toBe(201);
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/v1/software/products/${productId}/artifacts/protect`,
        headers: t.adminAuth,
        payload: { download_id: res.json().download_id },
      }),
      400,
      'invalid_archive',
    );
  });
});
