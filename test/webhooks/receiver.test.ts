import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkConfig } from '../../examples/webhook-receiver/config.js';
import {
  createReceiver,
  type Receiver as ReferenceReceiver,
} from '../../examples/webhook-receiver/receiver.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { tollgateSignature } from '../../src/modules/webhooks/signer.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { eventRow, type Receiver, recordEvent, startReceiver } from './helpers.js';

const SECRET = 'store-a-webhook-secret';
const SITE = { domain: 'shop.example.org', installation_id: '0f8fad5b-d9cb-469f-a165-70867728950e' };

const VALID = { status: 200, json: { valid: true, error: null, effective_status: 'valid' } };
const REVOKED = { status: 403, json: { valid: false, error: 'revoked', effective_status: 'revoked' } };

let t: TestApp;
let dir: string;
let validation: Receiver; // the pinned POST /licenses/validate stand-in
let decoy: Receiver; // what payloads name as authoritative_validation_url: must never be called
let receiver: ReferenceReceiver;
let receiverUrl: string;

async function openReceiver(secrets: string[] = [SECRET]) {
  receiver = createReceiver(
    checkConfig({
      host: '127.0.0.1',
      port: 0,
      database: join(dir, 'receiver.sqlite'),
      stores: {
        'store-a': { secrets, validation_url: validation.url },
        'store-b': { secrets: ['store-b-secret'], validation_url: validation.url },
      },
      revalidate_interval_ms: 100,
      retry_delay_ms: 200,
      busy_timeout_ms: 100,
    }),
  );
  receiverUrl = await receiver.listen();
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-receiver-'));
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  validation = await startReceiver(VALID);
  decoy = await startReceiver(200);
  await openReceiver();
  await setSettings(t, { webhook_url: `${receiverUrl}/webhooks/store-a`, webhook_secret: SECRET });
  t.app.services.dispatcher.start();
});
afterEach(async () => {
  await t.close();
  await receiver.close();
  await validation.close();
  await decoy.close();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => t.app.services.database.db;
const emit = (event: Parameters<typeof recordEvent>[1], data: Parameters<typeof recordEvent>[2]) =>
  recordEvent(db(), event, data as never, decoy.url);
const inbox = () =>
  receiver.store.db
    .prepare('SELECT store, event_id, event, payload, status FROM inbox ORDER BY id')
    .all() as Array<{
    store: string;
    event_id: string;
    event: string;
    payload: string;
    status: string;
  }>;
const license = (store: string, id: number) =>
  receiver.store.db.prepare('SELECT * FROM licenses WHERE store = ? AND license_id = ?').get(store, id) as
    | { valid: number | null; effective_status: string | null }
    | undefined;
const validatedKeys = () =>
  validation.requests.map((r) => (JSON.parse(r.body) as { license_key: string }).license_key);

async function lastAttempt(eventId: string) {
  return waitFor(
    async () =>
      db()
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('event_id', '=', eventId)
        .orderBy('id', 'desc')
        .executeTakeFirst(),
    `an attempt of ${eventId}`,
  );
}

/** Posts straight to the receiver, for the rules our own sender never breaks. */
function post(body: string, headers: Record<string, string>, scope = 'store-a') {
  return fetch(`${receiverUrl}/webhooks/${scope}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

const envelope = (eventId = '3b241101-e2bb-4255-8caf-4136c566a962') =>
  JSON.stringify({
    event_id: eventId,
    event: 'license.revoked',
    timestamp: '2026-01-01T00:00:00Z',
    data: { license_id: 99 },
    authoritative_validation_url: 'https://evil.example/validate',
  });

describe('the reference receiver against the real sender', () => {
  it('accepts a signed event with 204 after committing it, then revalidates the mapped license at the pinned URL only', async () => {
    receiver.store.upsertLicense({
      store: 'store-a',
      license_id: 11,
      subscription_id: null,
      license_key: 'KEY-11',
      ...SITE,
    });
    validation.reply = REVOKED;
    const eventId = await emit('license.revoked', { license_id: 11 });
    const attempt = await lastAttempt(eventId);
    expect(attempt).toMatchObject({ response_code: 204, delivered: 1 });
    expect(inbox()).toEqual([
      {
        store: 'store-a',
        event_id: eventId,
        event: 'license.revoked',
        payload: (await eventRow(db(), eventId)).payload,
        status: expect.any(String),
      },
    ]);
    await waitFor(() => inbox()[0]!.status === 'done', 'revalidation');
    expect(validation.requests).toHaveLength(1);
    expect(JSON.parse(validation.requests[0]!.body)).toEqual({ license_key: 'KEY-11', ...SITE });
    expect(decoy.requests).toHaveLength(0);
    expect(license('store-a', 11)).toMatchObject({ valid: 0 });
  });

  it('answers before revalidating: a validation endpoint that never answers does not hold the webhook', async () => {
    receiver.store.upsertLicense({
      store: 'store-a',
      license_id: 12,
      subscription_id: null,
      license_key: 'KEY-12',
      ...SITE,
    });
    validation.reply = 'hang';
    const eventId = await emit('license.renewed', { license_id: 12, subscription_id: 4, order_id: 9 });
    expect(await lastAttempt(eventId)).toMatchObject({ response_code: 204, delivered: 1 });
    await waitFor(() => validation.requests.length === 1, 'the validation call');
    expect(inbox()[0]!.status).toBe('pending');
  });

  it('refuses an unknown store scope with 401, which the sender logs and retries', async () => {
    await setSettings(t, { webhook_url: `${receiverUrl}/webhooks/unknown-store` });
    const eventId = await emit('license.revoked', { license_id: 1 });
    expect(await lastAttempt(eventId)).toMatchObject({ response_code: 401, delivered: 0 });
    expect((await eventRow(db(), eventId)).status).toBe('pending');
    expect(inbox()).toEqual([]);
  });

  it('refuses a wrong secret, a missing or malformed signature, and a body changed after signing with 401', async () => {
    await setSettings(t, { webhook_secret: 'not-the-store-secret' });
    const eventId = await emit('license.revoked', { license_id: 1 });
    expect(await lastAttempt(eventId)).toMatchObject({ response_code: 401, delivered: 0 });

    const body = envelope();
    expect((await post(body, {})).status).toBe(401);
    expect((await post(body, { 'x-tollgate-signature': 'sha256=zz' })).status).toBe(401);
    expect((await post(body, { 'x-tollgate-signature': tollgateSignature(SECRET, `${body} `) })).status).toBe(
      401,
    );
    // A valid signature for another store is not valid for this one.
    expect(
      (await post(body, { 'x-tollgate-signature': tollgateSignature('store-b-secret', body) })).status,
    ).toBe(401);
    expect(inbox()).toEqual([]);
  });

  it('takes the event id from the signed body; an X-Tollgate-Event-Id header that differs is refused', async () => {
    const body = envelope();
    const sig = { 'x-tollgate-signature': tollgateSignature(SECRET, body) };
    const mismatch = await post(body, {
      ...sig,
      'x-tollgate-event-id': '9a7b3c1e-0000-4000-8000-000000000000',
    });
    expect(mismatch.status).toBe(400);
    expect(inbox()).toEqual([]);
    const withoutHeader = await post(body, sig);
    expect(withoutHeader.status).toBe(204);
    expect(inbox().map((r) => r.event_id)).toEqual(['3b241101-e2bb-4255-8caf-4136c566a962']);
  });

  it('answers a duplicate (the same event redelivered) with 200 and does no new work', async () => {
    receiver.store.upsertLicense({
      store: 'store-a',
      license_id: 13,
      subscription_id: null,
      license_key: 'KEY-13',
      ...SITE,
    });
    const eventId = await emit('license.revoked', { license_id: 13 });
    await waitFor(() => inbox()[0]?.status === 'done', 'first revalidation');
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/webhooks/events/${eventId}/redeliver`,
      headers: t.adminAuth,
    });
    expect(res.statusCode).toBe(202);
    await waitFor(
      async () =>
        (await db().selectFrom('webhook_attempts').select('id').where('event_id', '=', eventId).execute())
          .length === 2,
      'the redelivery',
    );
    expect(await lastAttempt(eventId)).toMatchObject({ response_code: 200, delivered: 1 });
    await sleep(300);
    expect(inbox()).toHaveLength(1);
    expect(validatedKeys()).toEqual(['KEY-13']);
  });

  it('answers 500 when the commit fails, so the sender retries, and accepts the retry', async () => {
    const blocker = openSqlite(join(dir, 'receiver.sqlite'));
    blocker.exec('BEGIN IMMEDIATE');
    const eventId = await emit('license.revoked', { license_id: 1 });
    expect(await lastAttempt(eventId)).toMatchObject({ attempt: 1, response_code: 500, delivered: 0 });
    blocker.exec('ROLLBACK');
    blocker.close();
    expect(inbox()).toEqual([]);
    await t.app.services.testClock!.advance(60);
    await waitFor(async () => (await lastAttempt(eventId)).attempt === 2, 'the retry');
    expect(await lastAttempt(eventId)).toMatchObject({ response_code: 204, delivered: 1 });
    expect(inbox().map((r) => r.event_id)).toEqual([eventId]);
  });

  it('revalidates every local license mapped to the subscription, for that store only', async () => {
    const map = (store: string, id: number, sub: number) =>
      receiver.store.upsertLicense({
        store,
        license_id: id,
        subscription_id: sub,
        license_key: `KEY-${store}-${id}`,
        ...SITE,
      });
    map('store-a', 21, 5);
    map('store-a', 22, 5);
    map('store-a', 23, 6);
    map('store-b', 24, 5);
    await emit('subscription.status_changed', {
      subscription_id: 5,
      status: 'cancelled',
      reason: 'customer request',
    });
    await waitFor(() => inbox()[0]?.status === 'done', 'revalidation');
    expect(validatedKeys().sort()).toEqual(['KEY-store-a-21', 'KEY-store-a-22']);
    expect(license('store-a', 21)).toMatchObject({ valid: 1, effective_status: 'valid' });
    expect(license('store-a', 23)).toMatchObject({ valid: null });
    expect(license('store-b', 24)).toMatchObject({ valid: null });
  });

  it('retries a revalidation that failed transiently instead of losing the event', async () => {
    receiver.store.upsertLicense({
      store: 'store-a',
      license_id: 31,
      subscription_id: null,
      license_key: 'KEY-31',
      ...SITE,
    });
    let calls = 0;
    validation.reply = () => (++calls === 1 ? 503 : VALID);
    await emit('license.revoked', { license_id: 31 });
    await waitFor(() => inbox()[0]?.status === 'done', 'revalidation after a retry');
    expect(calls).toBe(2);
    expect(license('store-a', 31)).toMatchObject({ valid: 1 });
  });

  it('accepts both the current and the previous secret while the store rotates its secret', async () => {
    await receiver.close();
    await openReceiver(['new-secret', SECRET]);
    await setSettings(t, { webhook_url: `${receiverUrl}/webhooks/store-a` });
    const first = await emit('license.revoked', { license_id: 1 });
    expect(await lastAttempt(first)).toMatchObject({ response_code: 204 });
    await setSettings(t, { webhook_secret: 'new-secret' });
    const second = await emit('license.revoked', { license_id: 2 });
    expect(await lastAttempt(second)).toMatchObject({ response_code: 204 });
    expect(inbox()).toHaveLength(2);
  });

  it('refuses a configuration whose pinned validation URL is not https (except loopback)', () => {
    expect(() =>
      checkConfig({
        database: ':memory:',
        stores: { s: { secrets: ['x'], validation_url: 'http://store.example.com/v1' } },
      }),
    ).toThrow(/https/);
    expect(() =>
      checkConfig({
        database: ':memory:',
        stores: { s: { secrets: [], validation_url: 'https://store.example.com/v1' } },
      }),
    ).toThrow(/secret/);
  });
});
