import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';

const dirs: string[] = [];
const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serverEnv(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-srv-'));
  dirs.push(dataDir);
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_EMAIL: 'root@example.com',
    ADMIN_PASSWORD: 'server-test-pw',
  };
  if (process.env.DATABASE_URL) {
    const db = await freshDatabase();
    dbs.push(db);
    env.DATABASE_URL = (db.config as { url: string }).url;
  }
  return env;
}

describe('the server process', () => {
  it('starts on PORT=0, prints its URL, serves health, and exits 0 on SIGTERM', async () => {
    const server = await startServer(await serverEnv());
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${server.url}/v1/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    const login = await fetch(`${server.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'root@example.com', password: 'server-test-pw' }),
    });
    expect(login.status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it('finishes an in-flight request before exiting on SIGTERM', async () => {
    const server = await startServer(await serverEnv());
    const body = JSON.stringify({ email: 'root@example.com', password: 'server-test-pw' });
    const { port } = new URL(server.url);
    // Send half the request, signal the server, then send the rest: the request is provably in flight.
    let stopped: Promise<number | null> = Promise.resolve(null);
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/auth/login',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      req.on('socket', (socket) =>
        socket.on('connect', async () => {
          await new Promise((r) => setTimeout(r, 200));
          stopped = server.stop();
          await new Promise((r) => setTimeout(r, 200));
          req.end(body.slice(10));
        }),
      );
    });
    const res = await response;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).user.email).toBe('root@example.com');
    expect(await stopped).toBe(0);
  });

  it('refuses a bad configuration value with a clear message and exit code 1', async () => {
    const env = await serverEnv();
    await expect(startServer({ ...env, PORT: 'eighty' }, 15_000)).rejects.toThrow(
      /configuration error: PORT/,
    );
  });
});
