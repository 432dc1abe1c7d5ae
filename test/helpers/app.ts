import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { type BuildOptions, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/types.js';
import { freshDatabase, type TestDatabase } from './db.js';

export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

export interface TestApp {
  app: App;
  db: TestDatabase;
  config: Config;
  /** Every log line written so far (only when captureLogs was asked for). */
  logs(): string;
  /** Basic-auth header of an application password of the bootstrap administrator. */
  adminAuth: { authorization: string };
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  captureLogs?: boolean;
  /** Build options besides the log stream (e.g. a shorter webhook attempt timeout). */
  build?: Omit<BuildOptions, 'logStream'>;
}

/** A fully wired app on a fresh database, with an administrator and its application password. */
export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-data-'));
  const config: Config = {
    ...loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: opts.captureLogs ? 'info' : 'silent', ...opts.env }),
    database: db.config,
  };
  let captured = '';
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    captured += chunk.toString('utf8');
  });
  const app = await buildApp(config, db.database, {
    ...opts.build,
    ...(opts.captureLogs ? { logStream: stream } : {}),
  });
  const admin = await app.services.accounts.ensureAdministrator(ADMIN.email, ADMIN.password);
  const { password } = await app.services.accounts.createAppPassword(admin.id, 'tests');
  const adminAuth = { authorization: basic(ADMIN.email, password) };
  return {
    app,
    db,
    config,
    logs: () => captured,
    adminAuth,
    async close() {
      // As the server's own stop does (src/cli.ts): a connection still busy after 10 seconds
      // (a client that stopped mid-body on a loaded machine) is cut off rather than holding close.
      const force = setTimeout(() => app.server.closeAllConnections(), 10_000);
      force.unref();
      await app.close();
      clearTimeout(force);
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Signs in through the API and returns headers that authenticate state-changing requests. */
export async function login(app: App, email: string, password: string) {
  const res = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  const cookie = res.cookies.find((c) => c.name === 'tollgate_session');
  const { nonce } = res.json() as { nonce: string };
  return { cookie: `tollgate_session=${cookie!.value}`, 'x-rest-nonce': nonce };
}

/** Asserts a REST error envelope: status and code, never message text. */
export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  const body = res.json() as { code?: string; data?: { status?: number } };
  if (res.statusCode !== status || body.code !== code || body.data?.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${res.statusCode} ${res.body}`);
  }
}

export type AdminMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request to `/v1<url>` as the administrator (application password); a JSON body when `payload` is given. */
export function admin(t: TestApp, method: AdminMethod, url: string, payload?: unknown) {
  return t.app.inject({
    method,
    url: `/v1${url}`,
    headers: t.adminAuth,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

/** `admin`, expecting a 2xx answer; answers its JSON body. */
export async function adminOk<T = Record<string, unknown>>(
  t: TestApp,
  method: AdminMethod,
  url: string,
  payload?: unknown,
): Promise<T> {
  const res = await admin(t, method, url, payload);
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as T;
}

/** PATCHes store settings (PATCH /settings) as the administrator, expecting 200 (e.g. `{webhook_url, webhook_secret}`). */
export async function setSettings(t: TestApp, patch: Record<string, unknown>) {
  const res = await admin(t, 'PATCH', '/settings', patch);
  if (res.statusCode !== 200) throw new Error(`settings: ${res.statusCode} ${res.body}`);
}

/** Moves the test clock (an app built with TEST_CLOCK=1) `seconds` forward, expecting 200. */
export async function advanceClock(t: TestApp, seconds: number) {
  const res = await admin(t, 'POST', '/test-clock', { advance_seconds: seconds });
  if (res.statusCode !== 200) throw new Error(`test clock: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

/** An unauthenticated POST to `/v1<url>` (a JSON body), as a customer's site sends it. */
export function post(t: TestApp, url: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: `/v1${url}`, payload: payload as object, headers });
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

/** POSTs a multipart form to a path (the full path, `/v1` included) as the administrator unless told otherwise. */
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
