import { randomFillSync } from 'node:crypto';

/** How many buckets' slots a count looks through before it forgets one (the table's probe limit). */
const PROBES = 16;

/**
 * Counts by bucket in the current window, every bucket's window the same length (the issuance
 * limits' minute, the installed-base report's day), in a fixed open-addressing table in one typed
 * array: a bucket is known by two 32-bit hashes of its name (seeded at random per process, so no
 * client can aim its address at another's bucket), and a slot counted in an ended window is
 * free. So a count allocates nothing, nothing is pruned, and the garbage collector never sees a
 * bucket: keeping them in a Map, an object and a name per bucket, with exact
 * least-recently-counted order, cost the update check about 4 µs of its 37, mostly in the
 * collector (docs/performance.md, 'Issuance counters in a table of their own').
 *
 * A new bucket takes the first free slot of the PROBES after its home slot; when all are taken in
 * this window it takes the one with the lowest count. So a client that keeps counting (the one that
 * hits its limit) stays, and a flood of new addresses can only make the least counted count again
 * from zero, best effort. Two buckets are confused only if both their hashes agree: about one
 * chance in 2^64 for a pair.
 */
export class MemoryCounts {
  private readonly mask: number;
  /**
   * Four words a slot, so that a probe reads one cache line: the two hashes, the count and the
   * window it was counted in, as its start in seconds plus one; a slot of any other window is
   * free. So a slot never counted in holds 0, and the table is left as allocated: zeroed pages
   * that take no memory until a count touches them.
   */
  private readonly slots: Uint32Array;
  private readonly seeds = new Uint32Array(2);
  private h1 = 0;
  private h2 = 0;

  /** `slots`: rounded up to a power of two; the most buckets one window holds. */
  constructor(slots: number) {
    const size = 2 ** Math.ceil(Math.log2(Math.max(PROBES, slots)));
    this.mask = size - 1;
    this.slots = new Uint32Array(size * 4);
    randomFillSync(this.seeds);
  }

  /** Adds one to the bucket in window `start` (whole seconds); answers its count. */
  add(bucket: string, start: number): number {
    const found = this.find(bucket, start);
    const slots = this.slots;
    const window = start + 1;
    if (found >= 0) return ++slots[found + 2]!;
    // Not counted in this window: the first free slot of its probes, else the least counted.
    let free = -1;
    let least = -1;
    for (let i = 0, at = this.h1 & this.mask; i < PROBES; i++, at = (at + 1) & this.mask) {
      const o = at * 4;
      if (slots[o + 3] !== window) {
        free = o;
        break;
      }
      if (least < 0 || slots[o + 2]! < slots[least + 2]!) least = o;
    }
    const o = free >= 0 ? free : least;
    slots[o] = this.h1;
    slots[o + 1] = this.h2;
    slots[o + 2] = 1;
    slots[o + 3] = window;
    return 1;
  }

  /** The bucket's count in window `start` (what the tests read). */
  peek(bucket: string, start: number): number {
    const found = this.find(bucket, start);
    return found >= 0 ? this.slots[found + 2]! : 0;
  }

  /** How many buckets window `start` holds (what the tests read: a scan of the table). */
  held(start: number): number {
    let n = 0;
    for (let o = 3; o < this.slots.length; o += 4) if (this.slots[o] === start + 1) n++;
    return n;
  }

  /** The offset of the bucket's slot in window `start`, or -1; leaves its two hashes in h1 and h2. */
  private find(bucket: string, start: number): number {
    // Two multiplicative hashes of the UTF-16 code units (FNV-1a and a murmur-style mix), each
    // from its own random seed.
    let h1 = this.seeds[0]! ^ 0x811c9dc5;
    let h2 = this.seeds[1]!;
    for (let i = 0; i < bucket.length; i++) {
      const c = bucket.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    h1 = (h1 ^ (h1 >>> 16)) >>> 0;
    h2 = h2 >>> 0;
    this.h1 = h1;
    this.h2 = h2;
    const slots = this.slots;
    const window = start + 1;
    for (let i = 0, at = h1 & this.mask; i < PROBES; i++, at = (at + 1) & this.mask) {
      const o = at * 4;
      if (slots[o + 3] === window && slots[o] === h1 && slots[o + 1] === h2) return o;
    }
    return -1;
  }
}
