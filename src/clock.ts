/** The only source of time: services take a Clock so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * The test clock (docs/administration.md, 'The test clock'): system time plus an offset an
 * administrator can advance. The offset lives in the database so that every server process sharing
 * it sees the same time; `sync` reloads it (once per request and per background tick).
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

/**
 * Background housekeeping that rides on the activity creating the rows it deletes (an idle store
 * does no work, and no timer has to be started or stopped): `maybe(now)` starts the task at most
 * once every `everyMs` of clock time, the first call included, and never waits for it.
 */
export class Occasionally {
  private next = 0;

  constructor(
    private readonly everyMs: number,
    private readonly task: (now: Date) => Promise<unknown>,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  maybe(now: Date): void {
    if (now.getTime() < this.next) return;
    this.next = now.getTime() + this.everyMs;
    void this.task(now).catch(this.onError);
  }
}

const DAY_MS = 86_400_000;
const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `YYYY-MM-DD`, `HH:MM:SS` and milliseconds of a time, by arithmetic: V8's `toISOString` goes
 * through its date cache and a printf, about three times the cost, and the hot routes format
 * several timestamps per request. Years outside 1000–9999 (and invalid dates) take
 * `toISOString`'s own path, so every result, and every error, is the same as its.
 */
function utcParts(d: Date): [date: string, time: string, ms: string] | null {
  const t = d.getTime();
  const days = Math.floor(t / DAY_MS);
  // Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant, "chrono-compatible
  // low-level date algorithms"), counted from 0000-03-01 so leap days fall at the year's end.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (!(year >= 1000 && year <= 9999)) return null;
  let rest = t - days * DAY_MS;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  return [
    `${year}-${two(month)}-${two(day)}`,
    `${two(hour)}:${two(minute)}:${two(second)}`,
    three(rest - second * 1000),
  ];
}

/** ISO 8601 UTC with milliseconds: the storage form of every timestamp (sorts as text). */
export const iso = (d: Date): string => {
  const p = utcParts(d);
  return p ? `${p[0]}T${p[1]}.${p[2]}Z` : d.toISOString();
};

/** RFC 3339 UTC without fractional seconds, the form of the API's `*_utc` fields (docs/api.md). */
export const rfc3339 = (d: Date): string => {
  const p = utcParts(d);
  return p ? `${p[0]}T${p[1]}Z` : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
};

/**
 * `YYYY-MM-DD HH:MM:SS` UTC, the API's legacy timestamp form (docs/api.md, 'Timestamps and money').
 */
export const mysqlTime = (d: Date): string => {
  const p = utcParts(d);
  return p ? `${p[0]} ${p[1]}` : d.toISOString().slice(0, 19).replace('T', ' ');
};
