import { constants, PerformanceObserver } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { shortLived } from '../../src/memory.js';
import { borrowReadBuffer, READ_CHUNK, returnReadBuffer } from '../../src/modules/releases/storage/local.js';
import { sleep } from '../helpers/wait.js';

describe('memory of package transfers', () => {
  it('asks V8 for a young-generation collection every 8 MB of reported short-lived buffers', async () => {
    const kinds: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        kinds.push((e as unknown as { detail: { kind: number } }).detail.kind);
    });
    observer.observe({ entryTypes: ['gc'] });
    const minor = () => kinds.filter((k) => k === constants.NODE_PERFORMANCE_GC_MINOR).length;
    try {
      for (let i = 0; i < 4; i++) shortLived(8 * 1024 * 1024);
      await sleep(50);
      expect(minor()).toBeGreaterThanOrEqual(4);
    } finally {
      observer.disconnect();
    }
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
