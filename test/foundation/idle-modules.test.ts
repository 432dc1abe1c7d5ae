import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The object storage SDK and the Stripe SDK are loaded only by a store that uses them
 * (docs/performance.md, 'Memory'): a server started without S3_BUCKET and without a Stripe key
 * has not loaded either once it listens. Read from the process's own module records
 * (test/helpers/loaded-modules.ts), not from its memory, which load and timing move.
 */

let database: TestDatabase;
const dirs: string[] = [];

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function loadedModules(env: Record<string, string>): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-idle-'));
  dirs.push(dataDir);
  const server: ServerProcess = await startServer(
    {
      DATA_DIR: dataDir,
      ...(database.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
      ...env,
    },
    30_000,
    ['--import', './test/helpers/loaded-modules.ts'],
  );
  try {
    process.kill(server.pid, 'SIGUSR2');
    let line: string | undefined;
    await waitFor(() => {
      line = /loaded-modules (.*)\n/.exec(server.output())?.[1];
      return line !== undefined;
    }, 'the server did not report its modules');
    return JSON.parse(line!) as string[];
  } finally {
    await server.stop();
  }
}

const under = (modules: string[], pkg: string) => modules.filter((m) => m.includes(`/node_modules/${pkg}/`));

describe('modules an idle server has loaded', () => {
  it('without S3_BUCKET and a Stripe key: neither the object storage SDK nor the Stripe SDK, nor the PDF library, VAT rules or states', async () => {
    const modules = await loadedModules({});
    // The record sees packages at all: the server's framework is in it.
    expect(under(modules, 'fastify').length).toBeGreaterThan(0);
    expect(under(modules, '@aws-sdk')).toEqual([]);
    expect(under(modules, 'stripe')).toEqual([]);
    // Invoices are rendered on demand (src/modules/invoices/invoices.pdf.ts).
    expect(under(modules, 'pdf-lib')).toEqual([]);
    // The VAT number rules and the states of every country wait for the first page that needs them.
    expect(under(modules, 'jsvat')).toEqual([]);
    expect(under(modules, 'country-region-data')).toEqual([]);
  });

  it('with S3_BUCKET: the object storage SDK, loaded for the start-up sweep of the bucket', async () => {
    // Nothing listens at the endpoint: the sweep fails and is left for the next start.
    const modules = await loadedModules({
      S3_BUCKET: 'tollgate-idle',
      S3_ENDPOINT: 'http://127.0.0.1:9',
      S3_ACCESS_KEY_ID: 'idle',
      S3_SECRET_ACCESS_KEY: 'idle-secret',
      S3_FORCE_PATH_STYLE: '1',
    });
    expect(under(modules, '@aws-sdk/client-s3').length).toBeGreaterThan(0);
    expect(under(modules, 'stripe')).toEqual([]);
  });
});
