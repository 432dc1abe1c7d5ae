/** What `check` answers once the condition holds: any value but the falsy ones. */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export interface WaitOptions {
  /** The bound: past it, the wait throws. 8 s by default (the webhook dispatcher ticks every second). */
  timeoutMs?: number;
  /** Pause between looks; 50 ms by default. */
  intervalMs?: number;
  /** Runs between looks (e.g. keeps a worker busy while the test waits on it). */
  meanwhile?: () => void;
}

/**
 * Waits on a condition, with a bound and a message: calls `check` (sync or async) until it answers
 * a truthy value and answers that value; once `timeoutMs` has passed with no such answer, throws
 * `timed out waiting for <what>`. The one way tests wait for something another process, worker or
 * background loop is doing; to let time pass on purpose (something must *not* happen), use `sleep`.
 *
 *     const [req] = await waitFor(() => hits(id).length === 1 && hits(id), 'the first attempt');
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  { timeoutMs = 8000, intervalMs = 50, meanwhile }: WaitOptions = {},
): Promise<Truthy<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    meanwhile?.();
    await sleep(intervalMs);
  }
}

/** Lets `ms` of real time pass. Not for waiting on a condition: that is `waitFor`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
