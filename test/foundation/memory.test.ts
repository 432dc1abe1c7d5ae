import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE } from '../../bench/lib.js';
import { borrowReadBuffer, READ_CHUNK, returnReadBuffer } from '../../src/modules/releases/storage/local.js';

/**
 * Runs a Node.js with `flags` that reports four times 8 MB of short-lived buffers to
 * src/memory.ts, and answers the young-generation collections it saw in the next 50 ms.
 */
function minorCollectionsAfterReports(flags: string[]): number {
  const script = `
    import { constants, PerformanceObserver } from 'node:perf_hooks';
    const { shortLived } = await import('./src/memory.ts');
    let minor = 0;
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
    });
    observer.observe({ entryTypes: ['gc'] });
    for (let i = 0; i < 4; i++) shortLived(8 * 1024 * 1024);
    setTimeout(() => { observer.disconnect(); console.log(minor); }, 50);
  `;
  const out = execFileSync(
    process.execPath,
    [...flags, '--import', 'tsx', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return Number(out.trim());
}

describe('memory of package transfers', () => {
  it('asks V8 for a young-generation collection every 8 MB of reported short-lived buffers, under --expose-gc', () => {
    expect(minorCollectionsAfterReports(['--expose-gc'])).toBeGreaterThanOrEqual(4);
  });

  it('without --expose-gc, only counts the reports', () => {
    expect(() => minorCollectionsAfterReports([])).not.toThrow();
  });

  it('every way the server is started passes --expose-gc: npm start, dist/main.js as a program, the benchmarks', () => {
    const start = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start as string;
    expect(start).toMatch(/ node [^&]*--expose-gc[^&]* dist\/main\.js serve$/);
    const shebang = readFileSync('src/main.ts', 'utf8').split('\n')[0]!;
    expect(shebang).toMatch(/^#!.* node .*--expose-gc/);
    expect(SERVER_NODE).toContain('--expose-gc');
  });

  it('read buffers are lent and taken back, not made per file', () => {
    const a = borrowReadBuffer();
    const b = borrowReadBuffer();
    expect(a.length).toBe(READ_CHUNK);
    expect(a === b).toBe(false);
    returnReadBuffer(a);
    returnReadBuffer(b);
    const again = [borrowReadBuffer(), borrowReadBuffer()];
    // Identity, not content: the same two buffers come back.
    expect(again.includes(a) && again.includes(b)).toBe(true);
    for (const buffer of again) returnReadBuffer(buffer);
  });
});
