import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, issue, protectedFixture } from '../distribution/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  post,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { identity } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { type Receiver, startReceiver } from '../webhooks/helpers.js';

// Stale activations (docs/licensing.md, 'Last seen and stale activations'): with
// stale_activation_days set, a background job releases activations whose site was not seen for
// that many days, as a deactivation does, recorded by Tollgate itself and announced by webhook.

let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  receiver = await startReceiver(200);
  await setSettings(t, { rate_limit: 100, webhook_url: receiver.url, webhook_secret: 'stale-secret' });
  t.app.services.dispatcher.start();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const DAY = 24 * 3600;
const db = () => t.app.services.database.db;
const row = (id: number) =>
  db().selectFrom('activations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const pass = () => t.app.services.staleActivations.tick();
const events = () => db().selectFrom('webhook_events').select(['event', 'payload']).execute();

describe('stale_activation_days, the setting', () => {
  it('is null (off) by default and takes whole days from 1 to 3650, or null', async () => {
    expect((await adminOk(t, 'GET', '/settings')).stale_activation_days).toBeNull();
    for (const bad of [0, -1, 3651, 1.5, '30', true, {}]) {
      const res = await admin(t, 'PATCH', '/settings', { stale_activation_days: bad });
      expectError(res, 400, 'rest_invalid_param');
    }
    expect((await adminOk(t, 'GET', '/settings')).stale_activation_days).toBeNull();
    expect(
      (await adminOk(t, 'PATCH', '/settings', { stale_activation_days: 3650 })).stale_activation_days,
    ).toBe(3650);
    expect((await adminOk(t, 'PATCH', '/settings', { stale_activation_days: 1 })).stale_activation_days).toBe(
      1,
    );
    expect(
      (await adminOk(t, 'PATCH', '/settings', { stale_activation_days: null })).stale_activation_days,
    ).toBeNull();
  });
});

describe('the stale-activation job', () => {
  it('with the setting off, releases nothing however long a site is unseen', async () => {
    const f = await protectedFixture(t);
    await advanceClock(t, 3000 * DAY);
    expect(await pass()).toBe(0);
    expect((await row(f.activationId)).status).toBe('active');
    // Cleared for the next tests: nothing else is older than this pass's cutoff would be.
    await post(t, '/licenses/deactivate', { license_key: f.key, activation_id: f.activationId });
  });

  it('releases a site unseen for the days: seat freed, tokens invalidated, audit by Tollgate, webhook sent', async () => {
    const stale = await protectedFixture(t);
    const token = await issue(t, stale);
    expect(token.download_url).toBeTruthy();
    const seen = await protectedFixture(t);
    await setSettings(t, { stale_activation_days: 30 });
    // 29 days: neither is stale yet.
    await advanceClock(t, 29 * DAY);
    expect(await pass()).toBe(0);
    // One site keeps checking in; the other is gone.
    expect((await post(t, '/licenses/validate', { license_key: seen.key, ...seen.site })).statusCode).toBe(
      200,
    );
    await advanceClock(t, 2 * DAY);
    const lastSeen = (await row(stale.activationId)).last_seen_at!;
    expect(await pass()).toBe(1);

    const released = await row(stale.activationId);
    expect(released).toMatchObject({ status: 'deactivated', deactivation_reason: 'stale' });
    expect(released.deactivated_at).not.toBeNull();
    expect((await row(seen.activationId)).status).toBe('active');

    // As a deactivation: the site no longer validates, its seat is free, its tokens are invalidated.
    const validate = await post(t, '/licenses/validate', { license_key: stale.key, ...stale.site });
    expect(validate.statusCode).toBe(403);
    expect(validate.json().error).toBe('domain_not_activated');
    const tokens = await db()
      .selectFrom('download_tokens')
      .select(['invalidated_at', 'invalidated_reason'])
      .where('activation_id', '=', stale.activationId)
      .execute();
    expect(tokens.length).toBeGreaterThan(0);
    for (const tk of tokens) expect(tk.invalidated_reason).toBe('deactivated');
    const again = await post(t, '/licenses/activate', {
      license_key: stale.key,
      ...identity('new-home.example'),
    });
    expect(again.statusCode, again.body).toBe(200);

    // The answers show it.
    const license = await adminOk<{ activations: Record<string, unknown>[]; activation_count: number }>(
      t,
      'GET',
      `/licenses/${stale.licenseId}`,
    );
    expect(license.activations.find((a) => a.id === stale.activationId)).toMatchObject({
      status: 'deactivated',
      deactivation_reason: 'stale',
    });

    // The audit trail: Tollgate itself did it.
    const trail = await adminOk<Record<string, unknown>[]>(
      t,
      'GET',
      `/audit-events?entity_type=license&entity_id=${stale.licenseId}`,
    );
    const entry = trail.find((e) => e.action === 'deactivate_activation')!;
    expect(entry.actor).toEqual({ kind: 'system', name: 'stale_activations', user_id: null, email: null });
    expect(entry.changes).toMatchObject({
      activation_id: { after: stale.activationId },
      status: { before: 'active', after: 'deactivated' },
      deactivation_reason: { before: null, after: 'stale' },
    });

    // The webhook, received over real HTTP: ids and the last-seen time, no key.
    const sent = await waitFor(
      () => receiver.requests.find((r) => JSON.parse(r.body).event === 'activation.stale_deactivated'),
      'stale webhook delivered',
    );
    const envelope = JSON.parse(sent.body);
    expect(envelope.data).toEqual({
      license_id: stale.licenseId,
      activation_id: stale.activationId,
      last_seen_at: new Date(lastSeen).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    expect(sent.body).not.toContain(stale.key);

    // A second pass finds nothing more: one release, one entry, one event.
    expect(await pass()).toBe(0);
    const staleEvents = (await events()).filter((e) => e.event === 'activation.stale_deactivated');
    expect(staleEvents).toHaveLength(1);
  });

  it('a site seen just before the pass is kept (the claim re-checks under the lock)', async () => {
    const f = await protectedFixture(t);
    await advanceClock(t, 40 * DAY);
    // Its last_seen_at is refreshed between the query and the release.
    const job = t.app.services.staleActivations;
    const activations = t.app.services.activations;
    const now = new Date((await adminOk<{ now: string }>(t, 'GET', '/test-clock')).now);
    const cutoff = new Date(now.getTime() - 30 * DAY * 1000).toISOString();
    expect(
      (await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds })).statusCode,
    ).toBe(200);
    const done = await activations.deactivateStale(f.licenseId, f.activationId, cutoff, async () => {
      throw new Error('not reached');
    });
    expect(done).toBe(false);
    expect((await row(f.activationId)).status).toBe('active');
    // A whole pass too leaves it (earlier tests' sites, unseen for 40 days, are released).
    await job.tick();
    expect((await row(f.activationId)).status).toBe('active');
  });

  it('does nothing while licensing is switched off (sites cannot be seen then)', async () => {
    const f = await protectedFixture(t);
    await setSettings(t, { licensing_enabled: false });
    try {
      await advanceClock(t, 60 * DAY);
      expect(await pass()).toBe(0);
      expect((await row(f.activationId)).status).toBe('active');
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
    expect(await pass()).toBeGreaterThanOrEqual(1);
    expect((await row(f.activationId)).deactivation_reason).toBe('stale');
  });

  it('runs on its own in a listening server: within seconds of the test clock moving', async () => {
    const f = await protectedFixture(t);
    t.app.services.staleActivations.start();
    try {
      await advanceClock(t, 31 * DAY);
      await waitFor(
        async () => (await row(f.activationId)).status === 'deactivated',
        'released by the timer',
      );
    } finally {
      await t.app.services.staleActivations.stop();
    }
  });
});
