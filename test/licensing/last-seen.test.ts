import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, issue, protectedFixture } from '../distribution/helpers.js';
import { adminOk, advanceClock, createTestApp, post, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, identity, licenseFixture } from '../helpers/factories.js';

// Last seen (docs/licensing.md, 'Last seen and stale activations'): each activation's last_seen_at
// is set when it is made and refreshed by validate, the update check and package, written at most
// once an hour per activation. The test clock moves the hours.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const HOUR = 3600;
const db = () => t.app.services.database.db;
const row = (id: number) =>
  db().selectFrom('activations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const now = async () => new Date((await adminOk<{ now: string }>(t, 'GET', '/test-clock')).now);
/** A stored time within a few seconds of the test clock's now (the test clock runs on between requests). */
async function isNow(stored: string | null) {
  const gap = Math.abs(Date.parse(stored!) - (await now()).getTime());
  expect(gap, `${stored} is not now`).toBeLessThan(5000);
}

async function activated(domain: string, userId?: number) {
  const f = await licenseFixture(t, { activation_limit: 3 }, userId === undefined ? {} : { user_id: userId });
  const site = identity(domain);
  const res = await post(t, '/licenses/activate', { license_key: f.key, ...site });
  expect(res.statusCode, res.body).toBe(200);
  return { ...f, site, activationId: res.json().activation_id as number };
}

describe('last_seen_at', () => {
  it('is set at activation, to the activation time, and shown in the admin and customer answers', async () => {
    const a = await activated('seen-at-activation.example');
    const stored = await row(a.activationId);
    expect(stored.last_seen_at).toBe(stored.activated_at);
    const license = await adminOk<{ activations: Record<string, unknown>[] }>(
      t,
      'GET',
      `/licenses/${a.license.id}`,
    );
    const view = license.activations.find((x) => x.id === a.activationId)!;
    expect(view.last_seen_at).toBe(view.activated_at);
    expect(view.last_seen_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const list = await adminOk<Record<string, unknown>[]>(t, 'GET', `/licenses/${a.license.id}/activations`);
    expect(list[0]!.last_seen_at).toBe(view.last_seen_at);
  });

  it('validate writes it at most once an hour: two within the hour write once, a later one again', async () => {
    const a = await activated('hourly.example');
    const validate = async () => {
      const res = await post(t, '/licenses/validate', { license_key: a.key, ...a.site });
      expect(res.statusCode, res.body).toBe(200);
    };
    const activatedAt = (await row(a.activationId)).last_seen_at!;
    // Within the hour of the activation: no write.
    await advanceClock(t, 30 * 60);
    await validate();
    expect((await row(a.activationId)).last_seen_at).toBe(activatedAt);
    // Two hours on: written, to now.
    await advanceClock(t, 2 * HOUR);
    await validate();
    const first = (await row(a.activationId)).last_seen_at!;
    await isNow(first);
    expect(first > activatedAt).toBe(true);
    // 59 minutes later: not written again.
    await advanceClock(t, 59 * 60);
    await validate();
    expect((await row(a.activationId)).last_seen_at).toBe(first);
    // Past the hour: written again.
    await advanceClock(t, 2 * 60);
    await validate();
    const again = (await row(a.activationId)).last_seen_at!;
    expect(again > first).toBe(true);
    await isNow(again);
  });

  it('another process wrote within the hour: the conditional write leaves the row as it is', async () => {
    const a = await activated('other-process.example');
    await advanceClock(t, 3 * HOUR);
    // As if another process had just seen the site.
    const other = new Date((await now()).getTime() - 10 * 60 * 1000).toISOString();
    await db()
      .updateTable('activations')
      .set({ last_seen_at: other })
      .where('id', '=', a.activationId)
      .execute();
    const res = await post(t, '/licenses/validate', { license_key: a.key, ...a.site });
    expect(res.statusCode).toBe(200);
    expect((await row(a.activationId)).last_seen_at).toBe(other);
  });

  it('a validate the license refuses (expired) still counts as seen; an unknown site writes nothing', async () => {
    const a = await activated('expired-seen.example');
    await adminOk(t, 'PATCH', `/licenses/${a.license.id}`, {
      usage_expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    await advanceClock(t, 2 * HOUR);
    const res = await post(t, '/licenses/validate', { license_key: a.key, ...a.site });
    expect(res.statusCode).toBe(403);
    await isNow((await row(a.activationId)).last_seen_at);
    const before = await db()
      .selectFrom('activations')
      .select(['id', 'last_seen_at'])
      .orderBy('id')
      .execute();
    const unknown = await post(t, '/licenses/validate', {
      license_key: a.key,
      ...identity('never-activated.example'),
    });
    expect(unknown.statusCode).toBe(403);
    expect(
      await db().selectFrom('activations').select(['id', 'last_seen_at']).orderBy('id').execute(),
    ).toEqual(before);
  });

  it('a deactivated activation is never written', async () => {
    const a = await activated('gone.example');
    const res = await post(t, '/licenses/deactivate', { license_key: a.key, ...a.site });
    expect(res.statusCode).toBe(200);
    const before = await row(a.activationId);
    await advanceClock(t, 2 * HOUR);
    // The tracker would write now (over an hour since its activation), but the row is not active.
    await t.app.services.activations;
    const lookup = t.app.services.distribution;
    expect(lookup).toBeDefined();
    await post(t, '/licenses/validate', { license_key: a.key, ...a.site });
    expect((await row(a.activationId)).last_seen_at).toBe(before.last_seen_at);
  });

  it('the update check and package refresh it too, at most once an hour', async () => {
    const f = await protectedFixture(t);
    const at = (await row(f.activationId)).last_seen_at!;
    await advanceClock(t, 2 * HOUR);
    const check = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    expect(check.statusCode, check.body).toBe(200);
    const checked = (await row(f.activationId)).last_seen_at!;
    expect(checked > at).toBe(true);
    await isNow(checked);
    await advanceClock(t, 10 * 60);
    await issue(t, f);
    expect((await row(f.activationId)).last_seen_at).toBe(checked);
    await advanceClock(t, HOUR);
    await issue(t, f);
    const packaged = (await row(f.activationId)).last_seen_at!;
    expect(packaged > checked).toBe(true);
    await isNow(packaged);
  });

  it('the customer sees it on My licenses', async () => {
    const customer = await createCustomer(t);
    const a = await activated('customer-sees.example', customer.id);
    const headers = customer.headers;
    const res = await t.app.inject({ method: 'GET', url: '/v1/account/licenses', headers });
    expect(res.statusCode, res.body).toBe(200);
    const mine = (res.json() as { id: number; activations: Record<string, unknown>[] }[]).find(
      (l) => l.id === a.license.id,
    )!;
    expect(mine.activations[0]!.last_seen_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const page = await t.app.inject({
      method: 'GET',
      url: '/account/licenses',
      headers: { cookie: headers.cookie },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Last seen');
  });
});
