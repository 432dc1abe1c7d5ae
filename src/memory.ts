/**
 * Moving a package makes buffers that die young: upload chunks (one per socket read), sealed and
 * decrypted records. V8 frees a dead buffer's memory only when it collects, and it lets about
 * 32 MB of such memory pile up before a young-generation collection, whatever the semi-space
 * size; the C library then keeps much of what was freed. A young-generation collection is cheap
 * when most of the young generation is dead, so the code that makes such buffers reports them,
 * and every SCAVENGE_EVERY bytes one is asked for (docs/performance.md, 'Young-generation
 * collections on our schedule').
 *
 * The reporting code holds at most a chunk or two per transfer, so a collection finds them dead
 * rather than promoting them to the old generation (where only a full collection would free them).
 *
 * The collector is the `gc` function Node's start-up flag `--expose-gc` gives the global scope;
 * `npm start`, dist/main.js run as a program (its `#!` line) and bench/lib.ts pass it. Without it
 * (e.g. `node dist/main.js`) reports are only counted: transfers then take about 20 MB more RSS
 * (docs/administration.md gives operators the flag).
 */
const SCAVENGE_EVERY = 8 * 1024 * 1024;

type Collect = (
  options?: { type: 'minor' } | { type: 'major'; execution: 'sync'; flavor: 'last-resort' },
) => void;

const collect = (globalThis as { gc?: Collect }).gc;
let allocated = 0;

/** Reports `bytes` of buffers just made that are dead once passed on. */
export function shortLived(bytes: number): void {
  allocated += bytes;
  if (allocated < SCAVENGE_EVERY) return;
  allocated = 0;
  collect?.({ type: 'minor' });
}

/**
 * Start-up leaves garbage behind: the sources, schemas and serialisers compiled once, and the
 * migrations' and wiring's temporaries. V8 would collect it only under pressure or when its memory
 * reducer runs, eight seconds later, so a server ready and idle held about 25 MB it no longer
 * used (140 MB of RSS on Node 22, 116 MB once collected). One full collection when the server is ready frees it at once (docs/performance.md, 'What
 * an idle server loads'); it costs a few milliseconds, once.
 */
export function collectStartupGarbage(): void {
  // 'last-resort': the collection that also gives the heap's unused pages back (as V8's memory
  // reducer does on its own about eight seconds later), not only the dead objects.
  collect?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  // Node 20's V8 knows no flavour (the call above is a young-generation collection there).
  collect?.();
}
