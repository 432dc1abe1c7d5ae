import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';

/**
 * A process whose vault keys cannot open the store's sealed secrets (the signing key's private
 * half, the Stripe settings) refuses to start, naming VAULT_KEY and VAULT_PREVIOUS_KEYS; one that
 * loses them later (another process rotated the key) answers /v1/health with 503
 * (docs/operations.md, 'The same keys and files for every process'). On PostgreSQL the processes
 * share the database while they run; on SQLite, which one process serves, one after the other.
 */

const ADMIN = { email: 'vault-admin@example.com', password: 'vault admin password' };
const key = () => randomBytes(32).toString('base64');
const K1 = key();
const K2 = key();

let database: TestDatabase;
const dirs: string[] = [];
const running: ServerProcess[] = [];
let env: (extra: Record<string, string>) => Record<string, string>;

beforeAll(async () => {
  database = await freshDatabase();
  const shared = mkdtempSync(join(tmpdir(), 'tollgate-vault-mismatch-'));
  dirs.push(shared);
  env = (extra) => ({
    // On SQLite the database file lives in its own directory: every process uses it as DATA_DIR.
    ...(database.config.kind === 'postgres'
      ? { DATABASE_URL: database.config.url, DATA_DIR: mkdtempSync(join(shared, 'data-')) }
      : { DATA_DIR: join(database.config.file, '..') }),
    ...extra,
  });
});

afterAll(async () => {
  await Promise.allSettled(running.map((s) => s.stop()));
  await database.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(extra: Record<string, string>): Promise<ServerProcess> {
  const s = await startServer(env(extra));
  running.push(s);
  return s;
}

async function stop(s: ServerProcess) {
  await s.stop();
  running.splice(running.indexOf(s), 1);
}

async function health(s: ServerProcess) {
  const res = await fetch(`${s.url}/v1/health`);
  return { status: res.status, body: await res.json() };
}

describe('a process with another vault key', () => {
  let first: ServerProcess;

  it('the first process seals the signing key with its VAULT_KEY and is healthy', async () => {
    first = await start({ VAULT_KEY: K1, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
    const admin = await signIn(first.url, ADMIN.email, ADMIN.password);
    const rotated = await fetch(`${first.url}/v1/signing-keys/rotate`, { method: 'POST', headers: admin });
    expect(rotated.status).toBe(200);
    expect(await health(first)).toEqual({ status: 200, body: { ok: true } });
  });

  it('refuses to start, naming VAULT_KEY and VAULT_PREVIOUS_KEYS', async () => {
    if (database.config.kind === 'sqlite') await stop(first);
    // Another key, and no key at all (a key generated into its own DATA_DIR).
    for (const extra of [{ VAULT_KEY: K2 }, {}] as Record<string, string>[]) {
      const refused = start(extra);
      await expect(refused).rejects.toThrow(/server exited with 1/);
      const message = String(await refused.catch((e: Error) => e.message));
      expect(message).toMatch(/configuration error: .*VAULT_KEY.*VAULT_PREVIOUS_KEYS/);
      expect(message).toContain('signing_key.');
    }
  });

  it('starts with the store key among VAULT_PREVIOUS_KEYS; after it rotates, a process left on the old key is unhealthy', async () => {
    const second = await start({ VAULT_KEY: K2, VAULT_PREVIOUS_KEYS: `${key()},${K1}` });
    expect(await health(second)).toEqual({ status: 200, body: { ok: true } });
    const admin = await signIn(second.url, ADMIN.email, ADMIN.password);
    const rotate = await fetch(`${second.url}/v1/software/storage/rotate-key`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rotate.status).toBe(200);
    const rotated = (await rotate.json()) as { secrets: { ok: boolean }[] };
    expect(rotated.secrets.every((x: { ok: boolean }) => x.ok)).toBe(true);
    expect(await health(second)).toEqual({ status: 200, body: { ok: true } });
    if (database.config.kind === 'sqlite') {
      await stop(second);
      // Started again on K1 alone, the first process refuses.
      await expect(start({ VAULT_KEY: K1 })).rejects.toThrow(/VAULT_KEY.*VAULT_PREVIOUS_KEYS/);
      return;
    }
    // The first process, still on K1 alone, can no longer open what the second re-sealed.
    expect(await health(first)).toEqual({
      status: 503,
      body: { ok: false, reason: 'vault_key_mismatch', secrets_with_unknown_key: 1 },
    });
  });
});
