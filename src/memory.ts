import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Moving a package makes buffers that die young: upload chunks (one per socket read), sealed and
 * decrypted records. V8 frees a dead buffer's memory only when it collects, and it lets about
 * 32 MB of such memory pile up before a young-generation collection; the C library then keeps much
 * of what was freed (measured: +40 MB of RSS for a 200 MB upload, on a plain Node server too).
 * A young-generation collection is cheap when most of the young generation is dead, so the code
 * that makes such buffers reports them, and every SCAVENGE_EVERY bytes one is asked for.
 *
 * The reporting code holds at most a chunk or two per transfer, so a collection finds them dead
 * rather than promoting them to the old generation (where only a full collection would free them).
 * The collector is V8's `gc` extension, exposed to a private context only: no command-line flag,
 * and no `gc` in the global scope.
 */
const SCAVENGE_EVERY = 8 * 1024 * 1024;

type Collect = (options: { type: 'minor' }) => void;

function collector(): Collect | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? (gc as Collect) : null;
  } catch {
    return null;
  }
}

const collect = collector();
let allocated = 0;

/** Reports `bytes` of buffers just made that are dead once passed on. */
export function shortLived(bytes: number): void {
  allocated += bytes;
  if (allocated < SCAVENGE_EVERY) return;
  allocated = 0;
  collect?.({ type: 'minor' });
}
