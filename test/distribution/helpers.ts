import { randomInt } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import {
  type ApiProduct,
  adminId,
  createLicense,
  identity,
  type LicenseBody,
  makeZip,
  publish,
  softwareProduct,
} from '../helpers/factories.js';

/** A fresh loopback-looking address per call, so the per-IP rate bucket never interferes. */
export const someIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

export function call(
  t: TestApp,
  method: 'GET' | 'POST' | 'HEAD',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
  ip = someIp(),
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url: `/v1${url}`,
    headers,
    remoteAddress: ip,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export const pkg = (t: TestApp, body: Record<string, unknown>, ip?: string) =>
  call(t, 'POST', '/software/package', body, {}, ip);

export interface Fixture {
  product: ApiProduct;
  slug: string;
  key: string;
  licenseId: number;
  site: { domain: string; installation_id: string };
  activationId: number;
  zip: Buffer;
  release: { version_id: number; artifact_id: number; file_sha256: string } & Record<string, unknown>;
  /** The request fields of a protected package request for this site. */
  creds: { license_key: string; site_url: string; installation_id: string };
}

/** The fields that name a licensed site in package and check requests. */
export const siteCreds = (licenseKey: string, site: { domain: string; installation_id: string }) => ({
  license_key: licenseKey,
  site_url: `https://${site.domain}/`,
  installation_id: site.installation_id,
});

/** A protected product with slug, one published release, a license and an active site. */
export async function protectedFixture(
  t: TestApp,
  opts: {
    license?: Partial<LicenseBody>;
    product?: Record<string, unknown>;
    software?: Record<string, unknown>;
    version?: string;
    releaseExtra?: [string, string][];
    zip?: Buffer;
  } = {},
): Promise<Fixture> {
  const product = await softwareProduct(t, opts.software ?? {}, opts.product ?? {});
  const zip = opts.zip ?? makeZip(2000);
  const release = await publish(t, product.id, opts.version ?? '1.0.0', opts.releaseExtra ?? [], zip);
  const license = await createLicense(t, {
    product_id: product.id,
    user_id: await adminId(t),
    ...opts.license,
  });
  const site = identity('shop.example.com');
  const act = await call(t, 'POST', '/licenses/activate', { license_key: license.license_key, ...site });
  expect(act.statusCode).toBe(200);
  return {
    product,
    slug: product.slug!,
    key: license.license_key,
    licenseId: license.id,
    site,
    activationId: act.json().activation_id,
    zip,
    release,
    creds: siteCreds(license.license_key, site),
  };
}

/** A public product (licensing_enabled "no") with one published release. */
export async function publicFixture(t: TestApp, version = '1.0.0') {
  const product = await softwareProduct(t, { licensing_enabled: 'no' });
  const zip = makeZip(1500);
  const release = await publish(t, product.id, version, [], zip);
  return { product, slug: product.slug!, zip, release };
}

/** The token of a download_url. */
export const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

/** GET /software/download for a download_url (path and query only). */
export function download(t: TestApp, url: string, headers: Record<string, string> = {}) {
  const u = new URL(url);
  return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers });
}

export async function issue(t: TestApp, f: Fixture, purpose = 'install') {
  const res = await pkg(t, { slug: f.slug, purpose, ...f.creds });
  if (res.statusCode !== 200) throw new Error(`package failed: ${res.statusCode} ${res.body}`);
  return res.json() as { download_url: string; [k: string]: unknown };
}
