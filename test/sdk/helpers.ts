import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { TollgateError } from '../../sdk/js/src/index.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { adminId, createLicense, identity, makeZip, publish, softwareProduct } from '../helpers/factories.js';

/**
 * A store listening on 127.0.0.1 (real HTTP for the SDK), with the test clock, its public
 * address set to where it listens (download URLs point there), and a rate limit that the tests'
 * many packages stay under.
 */
export async function listeningStore(): Promise<{ t: TestApp; origin: string }> {
  const t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  t.app.services.urls.origin = origin;
  await setSettings(t, { rate_limit: 100 });
  return { t, origin };
}

/** A clock the client reads and the test moves. */
export function movableClock(start = Date.now()) {
  let at = start;
  return {
    now: () => new Date(at),
    advance: (seconds: number) => {
      at += seconds * 1000;
    },
    set: (date: Date) => {
      at = date.getTime();
    },
  };
}

/** A protected product with a published release of `zip`, and a license for it. */
export async function licensedProduct(
  t: TestApp,
  opts: { activation_limit?: number; version?: string } = {},
) {
  const product = await softwareProduct(t, {}, { activation_limit: opts.activation_limit ?? 3 });
  const zip = makeZip(3000);
  const release = await publish(t, product.id, opts.version ?? '1.0.0', [], zip);
  const license = await createLicense(t, { product_id: product.id, user_id: await adminId(t) });
  return { product, slug: product.slug!, zip, release, key: license.license_key, licenseId: license.id };
}

/** The SDK's License for a fresh site of `domain`. */
export const licenseFor = (key: string, domain = 'shop.example.com') => ({
  license_key: key,
  ...identity(domain),
});

/** Awaits `promise`, expecting a TollgateError with this code and status; answers it. */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
  status: number,
): Promise<TollgateError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ${status} ${code}, got a success`);
    },
    (e: unknown) => e,
  );
  if (!(error instanceof TollgateError)) throw error;
  expect({ code: error.code, status: error.status }).toEqual({ code, status });
  return error;
}

/** Same for a function that throws synchronously. */
export function throwsWith(run: () => unknown, code: string, status = 0): TollgateError {
  try {
    run();
  } catch (e) {
    if (!(e instanceof TollgateError)) throw e;
    expect({ code: e.code, status: e.status }).toEqual({ code, status });
    return e;
  }
  throw new Error(`expected ${code}, got a success`);
}

/** A fresh directory for downloads; `leftovers` lists what is in it. */
export function downloadDir() {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sdk-'));
  return {
    dir,
    path: (name: string) => join(dir, name),
    leftovers: () => readdirSync(dir),
    exists: (name: string) => existsSync(join(dir, name)),
  };
}

/**
 * A real HTTP hop between the SDK and the store that hands each answer on with its body changed
 * by `alter` (a byte flipped, a byte added, an HTML page) and, when given, another status and
 * more headers (a header given as null is taken away): what a
 * broken mirror, a tampering middlebox or a reverse proxy's error page would do.
 * `Content-Length` follows the altered body.
 */
export async function startTamperingProxy(
  store: string,
  alter: (body: Buffer) => Buffer,
  status?: number,
  extraHeaders: Record<string, string | null> = {},
): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const upstream = await fetch(`${store}${req.url}`, {
        method: req.method ?? 'GET',
        headers: req.headers['content-type'] ? { 'content-type': req.headers['content-type'] } : {},
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = alter(Buffer.from(await upstream.arrayBuffer()));
      const headers: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name))
          headers[name] = value;
      });
      headers['content-length'] = String(body.length);
      for (const [name, value] of Object.entries(extraHeaders)) {
        if (value === null) delete headers[name];
        else headers[name] = value;
      }
      res.writeHead(status ?? upstream.status, headers).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback address where nothing listens: what the SDK meets when the store is down. */
export async function deadOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
