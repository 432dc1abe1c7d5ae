import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const root = mkdtempSync(join(tmpdir(), 'tollgate-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// The files are SQLite's; the data directory matters on both databases but is the same code.
describe.runIf(dialectUnderTest === 'sqlite')('file modes of the data directory and the database', () => {
  it('a new store: data directory 0700; database, WAL and shared-memory files 0600', async () => {
    const dataDir = join(root, 'new', 'data');
    const server = await startServer({
      DATA_DIR: dataDir,
      ADMIN_EMAIL: 'a@example.com',
      ADMIN_PASSWORD: 'a long password 1',
    });
    try {
      // A write, so that the WAL holds something.
      const res = await fetch(`${server.url}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'a@example.com', password: 'a long password 1' }),
      });
      expect(res.status).toBe(200);
      expect(mode(dataDir)).toBe(0o700);
      for (const f of ['tollgate.sqlite', 'tollgate.sqlite-wal', 'tollgate.sqlite-shm']) {
        expect(mode(join(dataDir, f)), f).toBe(0o600);
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('an older install with world-readable files is tightened at start', async () => {
    const dataDir = join(root, 'old');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    // Empty files are a valid empty database, WAL and shared-memory file to SQLite.
    for (const f of ['tollgate.sqlite', 'tollgate.sqlite-wal', 'tollgate.sqlite-shm']) {
      writeFileSync(join(dataDir, f), '', { flag: 'a' });
      chmodSync(join(dataDir, f), 0o644);
    }
    chmodSync(dataDir, 0o755);
    const server = await startServer({ DATA_DIR: dataDir });
    try {
      expect(mode(dataDir)).toBe(0o700);
      for (const f of ['tollgate.sqlite', 'tollgate.sqlite-wal', 'tollgate.sqlite-shm']) {
        expect(mode(join(dataDir, f)), f).toBe(0o600);
      }
    } finally {
      await server.stop();
    }
  });
});
