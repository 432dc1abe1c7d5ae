import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { sha256 } from '../../src/random.js';
import type { TestApp } from '../helpers/app.js';
import { type ApiProduct, createProduct } from '../helpers/catalogue.js';
import { zipParts } from '../helpers/zip.js';

/** A valid zip archive (stored entries) with `payload` bytes of random content per entry. */
export function makeZip(payload = 1000, entries = 1, comment = ''): Buffer {
  const files = Array.from({ length: entries }, (_, i) => ({
    name: `plugin/file-${i}.php`,
    data: randomBytes(payload),
  }));
  return Buffer.concat([...zipParts(files, comment)]);
}

export type FormValue = string | { filename: string; content: Buffer; type?: string };

/** A multipart/form-data body, parts in the order given. */
export function multipart(fields: [string, FormValue][]): { body: Buffer; contentType: string } {
  const boundary = `----tollgate${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of fields) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if (typeof value === 'string') {
      chunks.push(
        Buffer.from(`Content-Disposition: form-data; name="${name}"\r\n\r\n`),
        Buffer.from(value),
        Buffer.from('\r\n'),
      );
    } else {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\n` +
            `Content-Type: ${value.type ?? 'application/zip'}\r\n\r\n`,
        ),
        value.content,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

let seq = 0;

/** A published, licensed product with a software slug (and any extra software config). */
export async function softwareProduct(
  t: TestApp,
  software: Record<string, unknown> = {},
  overrides: Record<string, unknown> = {},
): Promise<ApiProduct> {
  seq += 1;
  return createProduct(t, overrides, {
    slug: `plugin-${process.pid}-${seq}`,
    software_enabled: 'yes',
    ...software,
  } as never);
}

/** POSTs a multipart form to a path as the administrator. */
export function postForm(
  t: TestApp,
  url: string,
  fields: [string, FormValue][],
  headers: Record<string, string> = t.adminAuth,
): Promise<LightMyRequestResponse> {
  const { body, contentType } = multipart(fields);
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': contentType },
    payload: body,
  });
}

/** Uploads a release: version and a zip (made when not given), plus any other fields. */
export async function uploadRelease(
  t: TestApp,
  productId: number,
  version: string,
  extra: [string, string][] = [],
  zip: Buffer = makeZip(),
): Promise<LightMyRequestResponse> {
  return postForm(t, `/v1/software/products/${productId}/versions`, [
    ['version', version],
    ...extra,
    ['file', { filename: 'upload.zip', content: zip }],
  ]);
}

/** Uploads and expects 201; answers the release body. */
export async function publish(
  t: TestApp,
  productId: number,
  version: string,
  extra: [string, string][] = [],
  zip?: Buffer,
): Promise<Record<string, unknown> & { version_id: number; artifact_id: number; file_sha256: string }> {
  const res = await uploadRelease(t, productId, version, extra, zip);
  if (res.statusCode !== 201) throw new Error(`upload failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export const hashOf = (b: Buffer) => sha256(b);

/** Lists a product's releases as the administrator. */
export async function versions(t: TestApp, productId: number) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/v1/software/products/${productId}/versions`,
    headers: t.adminAuth,
  });
  if (res.statusCode !== 200) throw new Error(`list failed: ${res.statusCode} ${res.body}`);
  return res.json() as {
    releases: { version_id: number; status: string; is_current: boolean; version: string }[];
  };
}

/** Every file in the vault (relative paths), staging excluded. */
export function vaultFiles(t: TestApp): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.staging') continue;
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  if (existsSync(t.config.vaultDir)) walk(t.config.vaultDir, '');
  return out.sort();
}

export function stagingFiles(t: TestApp): string[] {
  const dir = join(t.config.vaultDir, '.staging');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Snapshot of everything an upload could change: releases, artifacts, vault and staging files. */
export async function snapshot(t: TestApp) {
  const db = t.app.services.database.db;
  const releases = await db.selectFrom('releases').selectAll().orderBy('id').execute();
  const artifacts = await db.selectFrom('artifacts').selectAll().orderBy('id').execute();
  return { releases, artifacts, vault: vaultFiles(t), staging: stagingFiles(t) };
}
