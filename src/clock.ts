/** The only source of time: services take a Clock so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * The test clock of CONTRACT §8: system time plus an offset an administrator can advance.
 * The offset lives in the database so that every server process sharing it sees the same time;
 * `sync` reloads it (once per request and per background tick).
 */
export class TestClock implements Clock {
  private offsetMs = 0;

  constructor(
    private readonly load: () => Promise<number>,
    private readonly store: (offsetMs: number) => Promise<void>,
  ) {}

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  async sync(): Promise<void> {
    this.offsetMs = await this.load();
  }

  async advance(seconds: number): Promise<Date> {
    await this.sync();
    this.offsetMs += seconds * 1000;
    await this.store(this.offsetMs);
    return this.now();
  }
}

/** ISO 8601 UTC with milliseconds: the storage form of every timestamp (sorts as text). */
export const iso = (d: Date): string => d.toISOString();

/** RFC 3339 UTC without fractional seconds, the form of the specification's `*_utc` fields. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `YYYY-MM-DD HH:MM:SS` UTC, the specification's legacy timestamp form. */
export const mysqlTime = (d: Date): string => d.toISOString().slice(0, 19).replace('T', ' ');
