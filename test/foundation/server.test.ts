import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

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
    expect(server.output()).not.toMatch(/no administrator yet/);
    expect(await server.stop()).toBe(0);
  });

  it('says how to create the first administrator when the store has none', async () => {
    const { ADMIN_EMAIL: _e, ADMIN_PASSWORD: _p, ...env } = await serverEnv();
    const server = await startServer(env);
    expect(server.output()).toMatch(/no administrator yet/);
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
          await sleep(200);
          stopped = server.stop();
          await sleep(200);
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

describe('closing', () => {
  it('does not wait on a keep-alive connection whose answer ends after the close began', async () => {
    const t = await createTestApp();
    // An answer whose headers leave before the close and whose last byte after it: without
    // Connection: close, its connection turns idle only once the close has begun.
    let finish = () => {};
    t.app.get('/slow-end', (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': 10 });
      reply.raw.write('hello');
      finish = () => reply.raw.end('world');
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    try {
      const body = new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/slow-end', agent }, (res) => {
          expect(res.headers.connection).toBe('keep-alive');
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve(text));
        })
          .on('error', reject)
          .end();
      });
      await sleep(200);
      const started = Date.now();
      const closed = t.close();
      await sleep(100);
      finish();
      expect(await body).toBe('helloworld');
      await closed;
      // Node would keep the connection for the keep-alive timeout (72 s) before letting go.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      agent.destroy();
    }
  }, 30_000);
});
