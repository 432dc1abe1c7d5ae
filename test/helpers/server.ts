import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dialectUnderTest, freshDatabase, type TestDatabase } from './db.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  url: string;
  pid: number;
  output(): string;
  stop(): Promise<number | null>;
  /** Sends `signal` (e.g. SIGKILL to simulate a crash) and resolves once the process is gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the real server (`src/main.ts serve`) as a child process on a free loopback port and
 * waits for its `listening on` line. Used for real-HTTP tests and the two-process tests.
 */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  /** More options for node, before the entry point (e.g. another `--import`). */
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', ...nodeArgs, 'src/main.ts', 'serve'],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), timeoutMs);
    const onData = () => {
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        // Gone already, by an exit or a signal (kill): its 'exit' event will not come again.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
    kill: (signal) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

export interface Cluster {
  /** One server on SQLite (its one connection serialises transactions); two on PostgreSQL. */
  servers: ServerProcess[];
  /** The database they share, for seeding rows directly. */
  database: TestDatabase;
  /** Their DATA_DIR (the vault lives in it). */
  dataDir: string;
  /** Cookie and X-REST-Nonce of the bootstrap administrator, signed in on the first server. */
  adminHeaders: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Real server processes sharing one fresh database, for concurrency tests over real HTTP: on
 * PostgreSQL two processes, so only database locks keep results exact. `env` adds to their
 * environment (e.g. STRIPE_API_URL).
 */
export async function startCluster(
  admin = { email: 'cluster-admin@example.com', password: 'cluster admin password' },
  env: Record<string, string> = {},
): Promise<Cluster> {
  const database = await freshDatabase();
  // On SQLite the database file's own (fresh) directory; on PostgreSQL one made for the cluster.
  const dataDir =
    database.config.kind === 'postgres'
      ? mkdtempSync(join(tmpdir(), 'tollgate-cluster-'))
      : dirname(database.config.file);
  const serverEnv: Record<string, string> = {
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    DATA_DIR: dataDir,
    ...(database.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
    ...env,
  };
  const servers = [await startServer(serverEnv)];
  if (dialectUnderTest === 'postgres') servers.push(await startServer(serverEnv));
  const adminHeaders = await signIn(servers[0]!.url, admin.email, admin.password);
  return {
    servers,
    database,
    dataDir,
    adminHeaders,
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Signs in to a server process over real HTTP (POST /v1/auth/login) and answers the headers that
 * authenticate that user's state-changing requests: the session cookie and X-REST-Nonce.
 */
export async function signIn(
  baseUrl: string,
  email: string,
  password: string,
): Promise<{ cookie: string; 'x-rest-nonce': string }> {
  const res = await fetch(`${baseUrl}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('tollgate_session='))!
    .split(';')[0]!;
  return { cookie, 'x-rest-nonce': ((await res.json()) as { nonce: string }).nonce };
}
