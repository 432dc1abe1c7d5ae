import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { standardWebhooksSecret } from '../../src/modules/webhooks/signer.js';
import { refuseTarget } from '../../src/modules/webhooks/target.js';
import { createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { eventRow, type Receiver, startReceiver } from './helpers.js';

const SECRET = 'correct-horse-webhook-secret';
/** The timeout test's attempt timeout: production's 10 s, shortened so the test need not wait it. */
const ATTEMPT_TIMEOUT_MS = 2_000;

let t: TestApp;
let receiver: Receiver;

beforeEach(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  receiver = await startReceiver(200);
});
afterEach(async () => {
  await t.close();
  await receiver.close();
});

const db = () => t.app.services.database.db;
const revoke = (licenseId = 1) => t.app.services.outbox.record('license.revoked', { license_id: licenseId });
const hits = (eventId: string) =>
  receiver.requests.filter((r) => r.headers['x-tollgate-event-id'] === eventId);

async function attempts() {
  const res = await t.app.inject({ method: 'GET', url: '/v1/webhooks/attempts', headers: t.adminAuth });
  expect(res.statusCode).toBe(200);
  return res.json() as Array<Record<string, unknown>>;
}

describe('webhook delivery', () => {
  it('sends the stored payload bytes at once, signed so @octokit/webhooks-methods and standardwebhooks verify it', async () => {
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    t.app.services.dispatcher.start();
    const eventId = await revoke(7);
    const [req] = await waitFor(() => hits(eventId).length === 1 && hits(eventId), 'first attempt');
    const stored = await eventRow(db(), eventId);

    expect(req!.method).toBe('POST');
    expect(req!.body).toBe(stored.payload);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-tollgate-event-id']).toBe(eventId);
    const ts = Number(req!.headers['x-tollgate-timestamp']);
    expect(String(ts)).toBe(req!.headers['x-tollgate-timestamp']);
    expect(Math.abs(ts - Math.floor(t.app.services.clock.now().getTime() / 1000))).toBeLessThanOrEqual(5);

    const signature = req!.headers['x-tollgate-signature'] as string;
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify(SECRET, req!.body, signature)).toBe(true);
    expect(await verify('another-secret', req!.body, signature)).toBe(false);
    expect(await verify(SECRET, `${req!.body} `, signature)).toBe(false);

    const headers = {
      'webhook-id': req!.headers['webhook-id'] as string,
      'webhook-timestamp': req!.headers['webhook-timestamp'] as string,
      'webhook-signature': req!.headers['webhook-signature'] as string,
    };
    expect(headers['webhook-id']).toBe(eventId);
    expect(headers['webhook-timestamp']).toBe(String(ts));
    expect(new Webhook(standardWebhooksSecret(SECRET)).verify(req!.body, headers)).toEqual(
      JSON.parse(stored.payload),
    );
    expect(() => new Webhook(standardWebhooksSecret('another-secret')).verify(req!.body, headers)).toThrow();

    await waitFor(async () => (await eventRow(db(), eventId)).status === 'delivered', 'delivered status');
    const log = await attempts();
    expect(log).toEqual([
      {
        event_id: eventId,
        event: 'license.revoked',
        attempt: 1,
        response_code: 200,
        delivered: true,
        error: null,
        attempted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      },
    ]);
  });

  it('a failing receiver gets exactly the scheduled retries (60, 300, 1800, 7200 s) as the test clock moves, then the event is abandoned', async () => {
    receiver.reply = 503;
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    const clock = t.app.services.testClock!;
    const dispatcher = t.app.services.dispatcher;
    // One pass of the dispatcher, run here rather than waited for: what is due is sent, and only that.
    const pass = async () => {
      await dispatcher.tick();
      await dispatcher.drain();
    };
    const eventId = await revoke();
    await pass();
    expect(hits(eventId)).toHaveLength(1);

    for (const [i, delay] of [60, 300, 1800, 7200].entries()) {
      // The next attempt is scheduled exactly `delay` seconds after the start of the previous one.
      const row = await eventRow(db(), eventId);
      expect(row).toMatchObject({ attempts: i + 1, locked_until: null });
      const [last] = await db()
        .selectFrom('webhook_attempts')
        .select('attempted_at')
        .where('event_id', '=', eventId)
        .orderBy('id', 'desc')
        .limit(1)
        .execute();
      expect(Date.parse(row.next_attempt_at!) - Date.parse(last!.attempted_at)).toBe(delay * 1000);

      await clock.advance(delay - 10);
      await pass();
      expect(hits(eventId).length, `no attempt ${i + 2} before its delay`).toBe(i + 1);
      await clock.advance(10);
      await pass();
      expect(hits(eventId).length, `attempt ${i + 2}`).toBe(i + 2);
    }
    expect((await eventRow(db(), eventId)).status).toBe('abandoned');
    await clock.advance(30 * 86400);
    await pass();
    expect(hits(eventId)).toHaveLength(5);

    const log = (await attempts()).reverse();
    expect(log.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(
      log.every((a) => a.response_code === 503 && a.delivered === false && typeof a.error === 'string'),
    ).toBe(true);
    const times = log.map((a) => Date.parse(a.attempted_at as string) / 1000);
    const gaps = times.slice(1).map((s, i) => s - times[i]!);
    // Never early; late only by the real seconds the test spends between clock moves.
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual([60, 300, 1800, 7200][i]!);
      expect(gap).toBeLessThanOrEqual([60, 300, 1800, 7200][i]! + 8);
    });
    const row = await eventRow(db(), eventId);
    expect(row.attempts).toBe(5);
    expect(row.next_attempt_at).toBeNull();
  }, 60_000);

  it('a refused connection is a failed attempt without response code, retried after 60 s', async () => {
    const closed = await startReceiver(200);
    const url = closed.url;
    await closed.close();
    await setSettings(t, { webhook_url: url, webhook_secret: SECRET });
    const eventId = await revoke();
    await t.app.services.dispatcher.tick();
    await t.app.services.dispatcher.drain();
    const [a] = await attempts();
    expect(a).toMatchObject({ event_id: eventId, attempt: 1, response_code: null, delivered: false });
    expect(a!.error).toMatch(/network error/);
    const row = await eventRow(db(), eventId);
    expect(row.status).toBe('pending');
    expect(Date.parse(row.next_attempt_at!) - Date.parse(a!.attempted_at as string)).toBeGreaterThanOrEqual(
      59_000,
    );
  });

  it('an attempt is cut off after its timeout and counted as a timeout', async () => {
    // Its own server, with the short timeout (the others keep 10 s, so a loaded machine never
    // turns a slow delivery into a timeout).
    await t.close();
    t = await createTestApp({
      env: { TEST_CLOCK: '1' },
      build: { webhookAttemptTimeoutMs: ATTEMPT_TIMEOUT_MS },
    });
    receiver.reply = 'hang';
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    const eventId = await revoke();
    const started = Date.now();
    await t.app.services.dispatcher.tick();
    await t.app.services.dispatcher.drain();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(ATTEMPT_TIMEOUT_MS + 5_000);
    const [a] = await attempts();
    expect(a).toMatchObject({
      event_id: eventId,
      response_code: null,
      delivered: false,
      error: `timeout after ${ATTEMPT_TIMEOUT_MS / 1000} s`,
    });
    expect((await eventRow(db(), eventId)).status).toBe('pending');
  });

  it('redirects are not followed: a 3xx is a failed attempt', async () => {
    receiver.reply = 307;
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    await revoke();
    await t.app.services.dispatcher.tick();
    await t.app.services.dispatcher.drain();
    expect((await attempts())[0]).toMatchObject({ response_code: 307, delivered: false });
    expect(receiver.requests).toHaveLength(1);
  });
});

describe('the attempt log', () => {
  it('keeps only the 100 most recent attempts, newest first, each with the documented fields', async () => {
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    const ids: string[] = [];
    for (let i = 1; i <= 105; i++) ids.push(await revoke(i));
    t.app.services.dispatcher.start();
    await waitFor(() => receiver.requests.length >= 105, '105 deliveries', { timeoutMs: 20_000 });
    await waitFor(
      async () =>
        (await db().selectFrom('webhook_events').select('id').where('status', '!=', 'delivered').execute())
          .length === 0,
      'all delivered',
    );
    await t.app.services.dispatcher.stop();
    const log = await attempts();
    expect(log).toHaveLength(100);
    const count = await db()
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(100);
    for (const a of log) {
      expect(Object.keys(a).sort()).toEqual(
        ['attempt', 'attempted_at', 'delivered', 'error', 'event', 'event_id', 'response_code'].sort(),
      );
    }
    const times = log.map((a) => Date.parse(a.attempted_at as string));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    // The five oldest deliveries are the ones pruned. The dispatcher claims events oldest first,
    // 8 at a time, and claims more only once one of those has finished: the oldest attempts are
    // of the first 8 events recorded, so the 5 pruned are 5 of those and every later event is kept.
    const logged = new Set(log.map((a) => a.event_id));
    const pruned = ids.flatMap((id, i) => (logged.has(id) ? [] : [i]));
    expect(pruned).toHaveLength(5);
    expect(pruned.filter((i) => i >= 8)).toEqual([]);
    expect(ids.filter((id) => logged.has(id))).toHaveLength(100);
  }, 40_000);

  it('is for administrators only', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/webhooks/attempts' }),
      401,
      'rest_not_logged_in',
    );
    const customer = await createCustomer(t, 'buyer@example.com');
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/webhooks/attempts',
        headers: { cookie: customer.headers.cookie },
      }),
      403,
      'rest_forbidden',
    );
  });
});

describe('redelivery', () => {
  it('schedules a delivered event again now, with the same id and bytes', async () => {
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    t.app.services.dispatcher.start();
    const eventId = await revoke();
    await waitFor(async () => (await eventRow(db(), eventId)).status === 'delivered', 'first delivery');
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/events/${eventId}/redeliver`,
      headers: t.adminAuth,
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      event_id: eventId,
      event: 'license.revoked',
      status: 'pending',
      attempts: 0,
    });
    await waitFor(() => hits(eventId).length === 2, 'redelivery');
    const [first, second] = hits(eventId);
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['x-tollgate-event-id']).toBe(first!.headers['x-tollgate-event-id']);
  });

  it('answers 404 for an unknown event, 400 for a malformed id, 401 without credentials', async () => {
    const unknown = '5b2d6f8e-1c1a-4c84-9d0e-2b7f0f1f2a3b';
    const url = `/v1/webhooks/events/${unknown}/redeliver`;
    expectError(
      await t.app.inject({ method: 'POST', url, headers: t.adminAuth }),
      404,
      'webhook_event_not_found',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks/events/not-a-uuid/redeliver',
        headers: t.adminAuth,
      }),
      400,
      'rest_invalid_param',
    );
    expectError(await t.app.inject({ method: 'POST', url }), 401, 'rest_not_logged_in');
  });
});

describe('when delivery cannot happen', () => {
  it('with webhook_url empty, due events are skipped without an attempt and not sent when a url is set later', async () => {
    const eventId = await revoke();
    await t.app.services.dispatcher.tick();
    // A few seconds of grace first, in case another process has already seen a new url.
    expect((await eventRow(db(), eventId)).status).toBe('pending');
    await t.app.services.testClock!.advance(6);
    await t.app.services.dispatcher.tick();
    const row = await eventRow(db(), eventId);
    expect(row.status).toBe('skipped');
    expect(row.attempts).toBe(0);
    expect(await attempts()).toEqual([]);

    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    t.app.services.dispatcher.start();
    const later = await revoke(2);
    await waitFor(() => hits(later).length === 1, 'an event recorded after the url was set');
    expect(hits(eventId)).toHaveLength(0);
    // The administrator can still send a skipped event on purpose.
    await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/events/${eventId}/redeliver`,
      headers: t.adminAuth,
    });
    await waitFor(() => hits(eventId).length === 1, 'redelivered skipped event');
  });

  it('never posts to this service itself; the attempt is logged as refused', async () => {
    await setSettings(t, {
      webhook_url: `${t.app.services.urls.origin}/v1/health`,
      webhook_secret: SECRET,
    });
    const eventId = await revoke();
    await t.app.services.dispatcher.tick();
    await t.app.services.dispatcher.drain();
    expect((await attempts())[0]).toMatchObject({
      event_id: eventId,
      response_code: null,
      delivered: false,
      error: 'target is this service',
    });
  });

  it('recognises this service by its PUBLIC_URL origin and by a loopback address on its listening port', () => {
    const self = { origin: 'https://store.example.com', port: 8080 };
    expect(refuseTarget('https://store.example.com/hooks', self)).toBe('target is this service');
    expect(refuseTarget('https://STORE.example.com:443/x', self)).toBe('target is this service');
    expect(refuseTarget('http://127.0.0.1:8080/x', self)).toBe('target is this service');
    expect(refuseTarget('http://localhost:8080/x', self)).toBe('target is this service');
    expect(refuseTarget('http://[::1]:8080/x', self)).toBe('target is this service');
    expect(refuseTarget('http://127.0.0.1:8081/x', self)).toBeNull();
    expect(refuseTarget('https://vendor.example.net/hook', self)).toBeNull();
    expect(refuseTarget('ftp://vendor.example.net/hook', self)).toBe('invalid target url');
  });

  it('with webhook_secret empty nothing is sent and the attempt is logged as failed', async () => {
    await setSettings(t, { webhook_url: receiver.url });
    await revoke();
    await t.app.services.dispatcher.tick();
    await t.app.services.dispatcher.drain();
    expect(receiver.requests).toHaveLength(0);
    expect((await attempts())[0]).toMatchObject({ delivered: false, error: expect.stringMatching(/secret/) });
  });

  it('stopping with an attempt in flight aborts it without counting it; a restart delivers the event', async () => {
    receiver.reply = 'hang';
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    const dispatcher = t.app.services.dispatcher;
    dispatcher.start();
    const eventId = await revoke();
    await waitFor(() => hits(eventId).length === 1, 'attempt in flight');
    await dispatcher.stop();
    const row = await eventRow(db(), eventId);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, locked_until: null });
    expect(await attempts()).toEqual([]);
    receiver.reply = 200;
    dispatcher.start();
    await waitFor(
      async () => (await eventRow(db(), eventId)).status === 'delivered',
      'delivery after restart',
    );
    expect((await attempts())[0]).toMatchObject({ attempt: 1, delivered: true });
  });
});
