import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashGate } from '../../src/modules/accounts/password.js';
import { dialectUnderTest } from '../helpers/db.js';
import { type Cluster, type ServerProcess, startCluster, startServer } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

describe('the password hash gate', () => {
  it('runs a bounded number at once, queues a few, and refuses the rest at once with 503 server_busy', async () => {
    const gate = new HashGate(1, 1);
    const order: string[] = [];
    let finishFirst!: () => void;
    const first = gate.run(
      () =>
        new Promise<void>((resolve) => {
          order.push('first');
          finishFirst = resolve;
        }),
    );
    const second = gate.run(async () => {
      order.push('second');
    });
    await expect(gate.run(async () => order.push('third'))).rejects.toMatchObject({
      code: 'server_busy',
      status: 503,
      data: { retry_after: 1 },
    });
    await sleep(10);
    expect(order).toEqual(['first']);
    finishFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
    // Both slots are free again.
    await gate.run(async () => order.push('fourth'));
    expect(order).toEqual(['first', 'second', 'fourth']);
  });
});

/** Parallel sign-ins over real HTTP; on PostgreSQL spread over two server processes. */
describe('sign-in throttling under parallel requests', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => cluster.stop());

  const signIn = (i: number, email: string, password: string, headers: Record<string, string> = {}) =>
    fetch(`${cluster.servers[i % cluster.servers.length]!.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ email, password }),
    }).then(async (res) => ({ status: res.status, code: ((await res.json()) as { code?: string }).code }));

  it('60 parallel sign-ins to one account check at most 5 passwords; the rest are 429 at once', async () => {
    const email = 'cluster-admin@example.com';
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        signIn(i, email, i === 59 ? 'cluster admin password' : `wrong-${i}`),
      ),
    );
    const checked = answers.filter((a) => a.status === 401 || a.status === 200);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(answers.filter((a) => a.status === 401).every((a) => a.code === 'invalid_credentials')).toBe(true);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(55);
    expect(refused.every((a) => a.code === 'too_many_login_attempts')).toBe(true);
    // Now locked for the window: even the right password is refused.
    expect((await signIn(0, email, 'cluster admin password')).status).toBe(429);
  });
});

describe.runIf(dialectUnderTest === 'sqlite')('a burst of anonymous sign-ins from many addresses', () => {
  // The gate is the process's own, whatever the database: one SQLite server shows it.
  let server: ServerProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-burst-'));
  beforeAll(async () => {
    server = await startServer({ DATA_DIR: dataDir, TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is answered quickly: each request 401 or 503 server_busy with Retry-After, none left hanging', async () => {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`${server.url}/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i % 250}` },
          body: JSON.stringify({ email: `nobody-${i}@example.com`, password: 'guess' }),
          signal: AbortSignal.timeout(15_000),
        }).then(async (res) => ({
          status: res.status,
          code: ((await res.json()) as { code?: string }).code,
          retryAfter: res.headers.get('retry-after'),
        })),
      ),
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((a) => a.code === 'server_busy' && a.retryAfter === '1')).toBe(true);
    expect(answers.filter((a) => a.status === 401).length).toBeGreaterThan(0);
    expect(answers.every((a) => a.status === 401 || a.status === 503)).toBe(true);
  });
});
