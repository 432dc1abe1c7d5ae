/**
 * The calls of one turn of the event loop, handed together to `flush` at its end (`setImmediate`,
 * after the turn's I/O callbacks): what the SQLite batches (batch.ts) and the PostgreSQL batches
 * (pg-batch.ts, http/rate-batch.ts) gather before they run their statements as one.
 */
export class TurnQueue<T> {
  private queue: T[] = [];
  private scheduled = false;

  constructor(private readonly flush: (batch: T[]) => void) {}

  push(call: T): void {
    this.queue.push(call);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  private readonly drain = () => {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    this.flush(batch);
  };
}
