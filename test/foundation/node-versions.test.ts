import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_DRIVER } from '../../src/db/sqlite.js';
import { SUPPORTED_NODE, unsupportedNode } from '../../src/node-version.js';

// The Node.js versions Tollgate runs on (docs/development.md, "Node.js versions").

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tollgate-node-'));
  dirs.push(d);
  return d;
};

describe('supported Node.js versions', () => {
  it('accepts each supported line from its lowest release, and nothing else', () => {
    for (const v of ['20.19.0', '20.20.2', '22.14.0', '22.23.3', '24.0.0', '24.21.0']) {
      expect(unsupportedNode(v), v).toBeNull();
    }
    for (const v of ['18.20.8', '19.9.0', '20.18.3', '21.7.3', '22.13.1', '23.11.0', '25.0.0', '26.1.0']) {
      expect(unsupportedNode(v), v).not.toBeNull();
    }
    for (const v of ['', 'v24.1.0', 'banana', '24']) expect(unsupportedNode(v), v).not.toBeNull();
  });

  it('the Node.js running this suite is one of them, with its own better-sqlite3', () => {
    expect(unsupportedNode(process.versions.node)).toBeNull();
    const major = Number(process.versions.node.split('.')[0]);
    expect(SQLITE_DRIVER).toBe(major >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20');
  });

  it('package.json states the same versions', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe(SUPPORTED_NODE.map((l) => `^${l.major}.${l.minor}.0`).join(' || '));
  });
});

interface Run {
  code: number | null;
  signal: string | null;
  listened: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs `src/main.ts serve` with `process.versions.node` made to read `version`; stops it with
 * SIGTERM if it starts listening.
 */
function startAs(version: string, dataDir: string): Promise<Run> {
  const pretend = `Object.defineProperty(process.versions, 'node', { value: ${JSON.stringify(version)} });`;
  // After tsx, which reads the version to choose how to load TypeScript.
  const args = ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(pretend)}`];
  const child = spawn(process.execPath, [...args, 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Run = { code: null, signal: null, listened: false, stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => {
    run.stdout += d.toString();
    if (!run.listened && /listening on /.test(run.stdout)) {
      run.listened = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    run.stderr += d.toString();
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ ...run, code, signal });
    });
  });
}

describe('a start on an unsupported Node.js', () => {
  it.each(['18.20.8', '19.9.0', '20.18.3', '23.11.0', '26.0.0'])(
    'Node.js %s: exits 1 with a one-line message before opening the database',
    async (version) => {
      const dataDir = join(tempDir(), 'data');
      const run = await startAs(version, dataDir);
      expect(run.code).toBe(1);
      expect(run.listened).toBe(false);
      expect(run.stdout).toBe('');
      // One line, not a stack trace.
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(existsSync(dataDir)).toBe(false);
    },
    40_000,
  );

  it('the same start, reading the version of the Node.js running the suite, serves', async () => {
    const dataDir = join(tempDir(), 'data');
    const run = await startAs(process.versions.node, dataDir);
    expect(run.listened).toBe(true);
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({
      code: 0,
      signal: null,
      stderr: '',
    });
    expect(existsSync(join(dataDir, 'tollgate.sqlite'))).toBe(true);
  }, 40_000);
});
