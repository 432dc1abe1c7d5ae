import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, ROOT } from '../wordpress/helpers.js';

const run = promisify(execFile);

/**
 * Whether the old-store readers' tests can run: MariaDB's server. `.ci/run` installs it; under CI
 * a missing server is a failure, not a skip.
 */
export const mariadbMissing = !existsSync('/usr/sbin/mariadbd');
export const skipMariaDb = mariadbMissing && !process.env.CI;

export interface OldStore {
  /** mysql://root@127.0.0.1:PORT/store */
  url: string;
  /** Runs SQL in the store's database (to add rows a test needs). */
  sql(text: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A throw-away MariaDB (scripts/mariadb-server.sh, as the WordPress tests start it) with one
 * database, `store`, loaded from test/import/fixtures/<fixture>.
 */
export async function startOldStore(fixture: string): Promise<OldStore> {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-oldstore-'));
  // MariaDB runs as another user when the tests run as root, and must reach its directory.
  chmodSync(work, 0o755);
  const dir = join(work, 'mariadb');
  const port = await freePort();
  const stop = async () => {
    await run(join(ROOT, 'scripts/mariadb-server.sh'), ['stop', dir]).catch(() => {});
    rmSync(work, { recursive: true, force: true });
  };
  const sql = async (text: string) => {
    await new Promise<void>((resolve, reject) => {
      const child = execFile(
        'mysql',
        ['-h127.0.0.1', `-P${port}`, '-uroot', '--default-character-set=utf8mb4', 'store'],
        (error) => (error ? reject(error) : resolve()),
      );
      child.stdin!.end(text);
    });
  };
  try {
    await run(join(ROOT, 'scripts/mariadb-server.sh'), ['start', dir, String(port)], { timeout: 120_000 });
    await run('mysql', [
      '-h127.0.0.1',
      `-P${port}`,
      '-uroot',
      '-e',
      'CREATE DATABASE store CHARACTER SET utf8mb4',
    ]);
    await sql(readFileSync(join(ROOT, 'test/import/fixtures', fixture), 'utf8'));
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `mysql://root@127.0.0.1:${port}/store`, sql, stop };
}
