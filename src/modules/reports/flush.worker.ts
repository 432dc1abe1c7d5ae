/**
 * What the in-memory reports share (the dashboard's counters, the installed-base report): a flush that runs
 * every `everyMs` while started, one at a time, and once more when the server closes. Each extends
 * it with its `run`, which keeps what it could not write for the next time and never throws.
 */
export abstract class FlushWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly everyMs: number) {}

  protected abstract run(): Promise<void>;

  /** Starts the periodic flush (idempotent); the server starts it when it listens. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.everyMs);
    this.timer.unref();
  }

  /** Stops the periodic flush and flushes what is left (the app's close). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Flushes now, after the flush under way if there is one. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.run().finally(() => {
      this.running = null;
    });
    await this.running;
  }
}
