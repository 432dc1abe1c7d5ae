import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { sqliteDriverPath } from './sqlite.js';

/** SQLite's own automatic checkpoint, in WAL pages: its default, restored when the worker goes. */
const AUTOCHECKPOINT_PAGES = 1000;
const RETRY_MS = 60_000;

export interface CheckpointerOptions {
  /** Group commits in one second that make the store busy and start the worker. */
  busyCommitsPerSecond?: number;
  /**
   * How often the worker checkpoints: by default every 250 ms, about 2,000 WAL pages at the update
   * check's busiest. A page written again before the next checkpoint is copied once: 50 ms
   * checkpoints cost the check a few µs more a request (docs/performance.md, 'WAL checkpoints on a
   * worker thread').
   */
  pollMs?: number;
  /** How long without a busy second before the worker goes. */
  idleMs?: number;
}

/**
 * The worker: its own connection, a PASSIVE checkpoint every `pollMs` (one never waits for, nor
 * blocks, a reader or the writer) whose outcome it reports, closed on any message. CommonJS, run from this string, so the
 * same code serves the build and the tests (which run the TypeScript sources).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
const db = new SQLite(workerData.file);
db.pragma('synchronous = ' + workerData.synchronous);
const timer = setInterval(() => {
  try { parentPort.postMessage(db.pragma('wal_checkpoint(PASSIVE)')[0]); } catch {}
}, workerData.pollMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * WAL checkpoints on a thread of their own while the store is busy writing.
 *
 * SQLite copies the WAL back into the database file every 1,000 pages, on the connection whose
 * commit crossed the mark. Under update checks (a token written each) that stalled the event loop
 * 20–25 ms every few hundred requests (two fsyncs and a thousand page copies), a fifth of the
 * time, and set the check's p99 (docs/performance.md, 'WAL checkpoints on a worker thread'). While
 * group commits come faster than `busyCommitsPerSecond`, a worker thread checkpoints instead and
 * the main connection's automatic checkpoint is off. After `idleMs` without a busy second the worker
 * closes and the automatic checkpoint returns: the thread's isolate costs about 9 MB of RSS,
 * which a quiet store need not spend. If the worker fails, the automatic checkpoint returns too,
 * and no worker is tried for a minute.
 */
/** What the worker's last checkpoint found: WAL frames, and how many of them are in the database file. */
export interface CheckpointOutcome {
  log: number;
  checkpointed: number;
}

export class Checkpointer {
  private worker: Worker | null = null;
  /** The worker's last checkpoint, while one runs (null before its first). */
  last: CheckpointOutcome | null = null;
  private second = 0;
  private commits = 0;
  private lastBusy = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private retryAt = 0;
  private readonly busyCommits: number;
  private readonly pollMs: number;
  private readonly idleMs: number;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly file: string,
    private readonly synchronous: string,
    options: CheckpointerOptions = {},
  ) {
    this.busyCommits = options.busyCommitsPerSecond ?? 50;
    this.pollMs = options.pollMs ?? 250;
    this.idleMs = options.idleMs ?? 10_000;
  }

  /** Whether the worker is checkpointing. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** After every group commit: counts it, and starts the worker on a busy second. */
  committed(): void {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.commits = 0;
    }
    if (++this.commits < this.busyCommits) return;
    this.lastBusy = now;
    if (!this.worker && now >= this.retryAt) this.start();
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(WORKER, {
        eval: true,
        workerData: {
          // The same better-sqlite3 as the main thread's (src/db/sqlite.ts).
          module: sqliteDriverPath(),
          file: this.file,
          synchronous: this.synchronous,
          pollMs: this.pollMs,
        },
        // It holds a connection and a timer, nothing else.
        resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
      });
    } catch {
      this.failed();
      return;
    }
    this.sqlite.pragma('wal_autocheckpoint = 0');
    worker.unref();
    this.worker = worker;
    this.last = null;
    worker.on('message', (outcome: CheckpointOutcome) => {
      this.last = outcome;
    });
    // Whatever ends it (done, or failed), the main connection checkpoints again.
    worker.once('error', () => this.failed());
    worker.once('exit', () => {
      if (this.worker === worker) this.stopped();
    });
    this.idleTimer = setInterval(
      () => {
        if (Date.now() - this.lastBusy >= this.idleMs) void this.stop();
      },
      Math.min(this.idleMs, 1000),
    );
    this.idleTimer.unref();
  }

  /** A worker that cannot start or run is not tried again for a minute; SQLite checkpoints. */
  private failed(): void {
    this.retryAt = Date.now() + RETRY_MS;
  }

  private stopped(): void {
    this.worker = null;
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = null;
    if (this.sqlite.open) this.sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  }

  /** Asks the worker to close its connection; answers when it has. */
  stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    this.stopped();
    return new Promise((resolve) => {
      worker.once('exit', () => resolve());
      worker.postMessage('stop');
    });
  }
}
