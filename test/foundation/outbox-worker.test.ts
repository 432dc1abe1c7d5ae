import type { FastifyBaseLogger } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestClock } from '../../src/clock.js';
import { withTransaction } from '../../src/db/transaction.js';
import { RETRY_DELAYS as MAIL_DELAYS } from '../../src/modules/mail/mail.worker.js';
import { RETRY_DELAYS as WEBHOOK_DELAYS } from '../../src/modules/webhooks/webhooks.worker.js';
import { OutboxQueries } from '../../src/outbox/outbox.repository.js';
import { nextAttempt, type Outbox, OutboxWorker } from '../../src/outbox/worker.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

// The shared outbox worker (docs/development.md, 'Outboxes'): the loop with an outbox of its own
// made here in memory, then the shared statements on the database under test.

type Row = { id: number };

const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

const logger = () => {
  const log = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn() };
  return log as typeof log & FastifyBaseLogger;
};

/** An in-memory outbox: `due` rows are claimed in order; each handle waits until the test settles it. */
function memoryOutbox(maxInFlight: number, rows: number) {
  const due: Row[] = Array.from({ length: rows }, (_, i) => ({ id: i + 1 }));
  const state = {
    due,
    limits: [] as number[],
    handled: [] as number[],
    released: [] as Array<{ id: number; lease: string }>,
    cutOffs: 0,
    /** How a handle ends: at once (the default), or when the test calls the settle it stored. */
    handle: async (_row: Row, _signal: AbortSignal): Promise<void> => {},
  };
  const outbox: Outbox<Row, string> = {
    name: 'test outbox',
    maxInFlight,
    leaseMs: 30_000,
    beforeTick: async () => 'batch',
    claim: async (_now, _lease, limit) => {
      state.limits.push(limit);
      return state.due.splice(0, limit);
    },
    handle: async (row, _lease, batch, signal) => {
      expect(batch).toBe('batch');
      await state.handle(row, signal);
      state.handled.push(row.id);
    },
    release: async (row, lease) => {
      state.released.push({ id: row.id, lease });
    },
    cutOff: () => {
      state.cutOffs++;
    },
    describe: (row) => ({ row_id: row.id }),
  };
  return { outbox, state };
}

const clock = { now: () => new Date(Date.UTC(2026, 10, 25, 12, 0, 0)) };
const workers: OutboxWorker<Row, string>[] = [];
function worker(outbox: Outbox<Row, string>, tickMs: number, extra: { testClock?: TestClock } = {}) {
  const log = logger();
  const w = new OutboxWorker(outbox, { clock, testClock: extra.testClock ?? null, log, tickMs });
  workers.push(w);
  return { w, log };
}
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

describe('the outbox worker loop', () => {
  it('claims up to the free slots, and nothing while every slot is taken', async () => {
    const { outbox, state } = memoryOutbox(3, 5);
    const settles: Array<() => void> = [];
    state.handle = () => new Promise<void>((resolve) => settles.push(resolve));
    const { w } = worker(outbox, 60_000);
    expect(await w.tick()).toBe(3);
    expect(state.limits).toEqual([3]);
    expect(await w.tick()).toBe(0);
    expect(state.limits).toEqual([3]);
    settles.shift()!();
    await waitFor(() => state.handled.length === 1, 'the first row handled');
    expect(await w.tick()).toBe(1);
    expect(state.limits).toEqual([3, 1]);
    for (const settle of settles.splice(0)) settle();
    await w.drain();
    expect(sorted(state.handled)).toEqual([1, 2, 3, 4]);
  });

  it('ticks again at once while ticks fill every free slot, and then waits for the next tick', async () => {
    const { outbox, state } = memoryOutbox(2, 7);
    // A tick a minute: the rows after the first two can only come from ticks that run at once.
    const { w } = worker(outbox, 60_000);
    w.start();
    expect(w.started).toBe(true);
    await waitFor(() => state.handled.length === 7, 'every row handled', { timeoutMs: 3000 });
    // A tick that found fewer rows than slots is the last until the next tick is due.
    await sleep(200);
    const claims = state.limits.length;
    await sleep(300);
    expect(state.limits.length).toBe(claims);
    expect(state.limits.length).toBeLessThan(10);
  });

  it('runs the before-each-tick hook and syncs the test clock before every claim; null claims nothing', async () => {
    const { outbox, state } = memoryOutbox(2, 3);
    const order: string[] = [];
    const testClock = { sync: vi.fn(async () => void order.push('sync')) } as unknown as TestClock;
    let off = true;
    outbox.beforeTick = async () => {
      order.push('before');
      return off ? null : 'batch';
    };
    const { w } = worker(outbox, 60_000, { testClock });
    expect(await w.tick()).toBe(0);
    expect(state.limits).toEqual([]);
    off = false;
    expect(await w.tick()).toBe(2);
    expect(order).toEqual(['sync', 'before', 'sync', 'before']);
  });

  it('stop cuts the work in flight off and releases it with its lease, uncounted', async () => {
    const { outbox, state } = memoryOutbox(2, 2);
    state.handle = (_row, signal) =>
      new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const { w, log } = worker(outbox, 60_000);
    w.start();
    await waitFor(() => state.limits.length === 1, 'the first claim');
    await w.stop();
    expect(w.started).toBe(false);
    expect(state.cutOffs).toBe(1);
    expect(state.handled).toEqual([]);
    const lease = new Date(clock.now().getTime() + 30_000).toISOString();
    expect(state.released.sort((a, b) => a.id - b.id)).toEqual([
      { id: 1, lease },
      { id: 2, lease },
    ]);
    expect(log.error).not.toHaveBeenCalled();
  });

  it('rows claimed by a tick that stop overtook are released without an attempt', async () => {
    const { outbox, state } = memoryOutbox(2, 2);
    let claimNow: (() => void) | null = null;
    const claim = outbox.claim;
    outbox.claim = async (now, lease, limit) => {
      await new Promise<void>((resolve) => {
        claimNow = resolve;
      });
      return claim(now, lease, limit);
    };
    const handle = vi.fn(state.handle);
    state.handle = handle;
    const { w } = worker(outbox, 60_000);
    w.start();
    await waitFor(() => claimNow !== null, 'the claim under way');
    const stopped = w.stop();
    claimNow!();
    await stopped;
    expect(handle).not.toHaveBeenCalled();
    expect(sorted(state.released.map((r) => r.id))).toEqual([1, 2]);
  });

  it('a handler or a claim that throws is logged, and the loop goes on', async () => {
    const { outbox, state } = memoryOutbox(1, 3);
    state.handle = async (row) => {
      if (row.id === 1) throw new Error('handler broke');
    };
    let claims = 0;
    const claim = outbox.claim;
    outbox.claim = async (now, lease, limit) => {
      if (++claims === 2) throw new Error('claim broke');
      return claim(now, lease, limit);
    };
    const { w, log } = worker(outbox, 20);
    w.start();
    await waitFor(() => state.handled.length === 2, 'the rows after the failures');
    expect(state.handled).toEqual([2, 3]);
    // The row whose handler threw keeps its lease (it comes back when the lease runs out).
    expect(state.released).toEqual([]);
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ row_id: 1, err: expect.any(Error) }),
      'test outbox: attempt failed',
    );
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ err: expect.any(Error) }),
      'test outbox tick failed',
    );
    expect(w.started).toBe(true);
  });
});

describe('the retry schedule', () => {
  it('answers when the next attempt is due after each failed one, and null after the last', () => {
    const started = new Date(Date.UTC(2026, 10, 25, 12, 0, 0));
    expect(nextAttempt(1, [60, 300], started)).toBe('2026-11-25T12:01:00.000Z');
    expect(nextAttempt(2, [60, 300], started)).toBe('2026-11-25T12:05:00.000Z');
    expect(nextAttempt(3, [60, 300], started)).toBeNull();
  });

  it('keeps each outbox its own documented delays (docs/webhooks.md, docs/email.md)', () => {
    expect(WEBHOOK_DELAYS).toEqual([60, 300, 1800, 7200]);
    expect(MAIL_DELAYS).toEqual([60, 300, 1800, 7200, 21_600]);
  });
});

describe('the shared outbox statements', () => {
  let d: TestDatabase;
  let queries: OutboxQueries<'mail_messages'>;
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 25, 12, minute, 0)).toISOString();
  beforeAll(async () => {
    d = await freshDatabase();
    queries = new OutboxQueries(d.database, 'mail_messages');
  });
  afterAll(async () => d?.drop());
  afterEach(async () => {
    await d.database.db.deleteFrom('mail_messages').execute();
  });

  const insert = async (dueMinute: number, fields: { locked_until?: string; status?: 'sent' } = {}) => {
    const row = await d.database.db
      .insertInto('mail_messages')
      .values({
        kind: 'subscription_status',
        recipient: 'shared@example.com',
        subject: 'Your subscription',
        data: '{}',
        dedupe_key: null,
        status: fields.status ?? 'pending',
        attempts: 0,
        next_attempt_at: at(dueMinute),
        locked_until: fields.locked_until ?? null,
        last_error: null,
        sent_at: null,
        created_at: at(0),
        updated_at: at(0),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  };

  it('claims due, unleased pending rows in due order, up to the limit, and sets their lease', async () => {
    const later = await insert(3);
    const first = await insert(1);
    const second = await insert(2);
    await insert(9); // not due
    await insert(1, { locked_until: at(20) }); // leased by another process
    await insert(1, { status: 'sent' });
    const expired = await insert(4, { locked_until: at(4) }); // its lease ran out
    const claimed = await queries.claimDue(at(5), at(6), 3);
    expect(sorted(claimed.map((r) => Number(r.id)))).toEqual(sorted([first, second, later]));
    expect(claimed.every((r) => r.locked_until === at(6))).toBe(true);
    const rest = await queries.claimDue(at(5), at(6), 3);
    expect(rest.map((r) => Number(r.id))).toEqual([expired]);
  });

  it('finishes and releases a row only under its own lease', async () => {
    const id = await insert(1);
    await queries.claimDue(at(5), at(6), 1);
    const next = {
      status: 'sent' as const,
      attempts: 1,
      next_attempt_at: null,
      sent_at: at(5),
      updated_at: at(5),
    };
    expect(await queries.finish(id, at(7), next)).toBe(false);
    await queries.release(id, at(7));
    const row = () =>
      d.database.db.selectFrom('mail_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(await row()).toMatchObject({ status: 'pending', locked_until: at(6) });
    expect(await queries.finish(id, at(6), next)).toBe(true);
    expect(await row()).toMatchObject({ status: 'sent', attempts: 1, locked_until: null });
    expect(await queries.finish(id, at(6), next)).toBe(false);

    const other = await insert(1);
    await queries.claimDue(at(5), at(6), 1);
    await queries.release(other, at(6));
    expect(await queries.claimDue(at(5), at(8), 1)).toMatchObject([{ locked_until: at(8), attempts: 0 }]);
  });

  it('locks a row as it is and reschedules it for a fresh series of attempts', async () => {
    const id = await insert(1);
    await d.database.db
      .updateTable('mail_messages')
      .set({ status: 'failed', attempts: 6, next_attempt_at: null, last_error: 'refused' })
      .execute();
    const before = await withTransaction(d.database, (tx) => queries.lock('id', id, tx));
    expect(before).toMatchObject({ id, status: 'failed', attempts: 6 });
    expect(await withTransaction(d.database, (tx) => queries.lock('id', id + 1000, tx))).toBeUndefined();
    expect(await queries.reschedule('id', id, at(30))).toMatchObject({
      status: 'pending',
      attempts: 0,
      next_attempt_at: at(30),
      locked_until: null,
      last_error: null,
    });
    expect(await queries.reschedule('id', id + 1000, at(30))).toBeUndefined();
  });

  it.runIf(dialectUnderTest === 'postgres')(
    'on PostgreSQL a claim skips the rows another transaction is claiming, without waiting for it',
    async () => {
      const ids = [await insert(1), await insert(2), await insert(3)];
      const tx = await d.database.db.startTransaction().execute();
      try {
        const held = await queries.claimDue(at(5), at(6), 2, tx);
        // Another connection: the rows the open transaction holds are skipped, not waited for.
        const other = await queries.claimDue(at(5), at(6), 3);
        expect(sorted(held.map((r) => Number(r.id)))).toEqual(ids.slice(0, 2));
        expect(other.map((r) => Number(r.id))).toEqual([ids[2]]);
      } finally {
        await tx.commit().execute();
      }
    },
  );
});
