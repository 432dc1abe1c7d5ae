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
      await app.close();
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

/** Creates a customer through the admin API and signs them in. */
export async function createCustomer(t: TestApp, email: string, password = 'customer-password-1') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/users',
    headers: t.adminAuth,
    payload: { email, password, role: 'customer' },
  });
  if (res.statusCode !== 201) throw new Error(`create customer failed: ${res.body}`);
  const user = res.json() as { id: number };
  return { id: user.id, email, password, headers: await login(t.app, email, password) };
}

/** Asserts a REST error envelope: status and code, never message text. */
export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  const body = res.json() as { code?: string; data?: { status?: number } };
  if (res.statusCode !== status || body.code !== code || body.data?.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${res.statusCode} ${res.body}`);
  }
}
