import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, identity, licenseFixture } from '../helpers/factories.js';

let t: TestApp;
const invalidated: number[] = [];
beforeAll(async () => {
  t = await createTestApp();
  // The wiring's deactivation hook invalidates download tokens; this one only sees that hooks run.
  t.app.services.activations.onDeactivate(async (id) => {
    invalidated.push(id);
  });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const url = (licenseId: number, activationId: number) =>
  `/licenses/${licenseId}/activations/${activationId}/deactivate`;

async function activated() {
  const f = await licenseFixture(t, { activation_limit: 1 });
  const res = (
    await post(t, '/licenses/activate', { license_key: f.key, ...identity('site.example') })
  ).json();
  return { ...f, activationId: res.activation_id as number };
}

describe('POST /licenses/{id}/activations/{activation_id}/deactivate', () => {
  it('deactivates without the key, runs the deactivation hooks, frees the slot and records one event', async () => {
    const { license, key, activationId } = await activated();
    const res = await admin(t, 'POST', url(license.id, activationId));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    const row = await db()
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', activationId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('deactivated');
    expect(invalidated).toContain(activationId);
    expect(
      (await post(t, '/licenses/activate', { license_key: key, ...identity('other.example') })).statusCode,
    ).toBe(200);
    const events = await db()
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_type', '=', 'license')
      .where('entity_id', '=', license.id)
      .where('action', '=', 'deactivate_activation')
      .execute();
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.changes)).toEqual({
      activation_id: { before: activationId, after: activationId },
      status: { before: 'active', after: 'deactivated' },
    });
  });

  it('an inactive activation is answered as the public route answers it: success, nothing changed or recorded', async () => {
    const { license, activationId } = await activated();
    await admin(t, 'POST', url(license.id, activationId));
    const before = await db().selectFrom('audit_events').select('id').execute();
    const res = await admin(t, 'POST', url(license.id, activationId));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect(await db().selectFrom('audit_events').select('id').execute()).toHaveLength(before.length);
  });

  it('works while customer deactivation and the licensing API are switched off', async () => {
    const { license, activationId } = await activated();
    await setSettings(t, { customer_deactivation_enabled: false, licensing_enabled: false });
    try {
      expect((await admin(t, 'POST', url(license.id, activationId))).statusCode).toBe(200);
    } finally {
      await setSettings(t, { customer_deactivation_enabled: true, licensing_enabled: true });
    }
  });

  it("404 license_not_found, 404 no_activation (also for another license's activation), 400 for bad ids or a body", async () => {
    const a = await activated();
    const b = await activated();
    expectError(await admin(t, 'POST', url(999999, a.activationId)), 404, 'license_not_found');
    expectError(await admin(t, 'POST', url(a.license.id, 999999)), 404, 'no_activation');
    expectError(await admin(t, 'POST', url(a.license.id, b.activationId)), 404, 'no_activation');
    expect(
      (await admin(t, 'POST', `/licenses/abc/activations/${a.activationId}/deactivate`)).statusCode,
    ).toBe(400);
    expect((await admin(t, 'POST', `/licenses/${a.license.id}/activations/0/deactivate`)).statusCode).toBe(
      400,
    );
    expectError(
      await admin(t, 'POST', url(a.license.id, a.activationId), { force: true }),
      400,
      'invalid_parameters',
    );
    const row = await db()
      .selectFrom('activations')
      .select('status')
      .where('id', '=', b.activationId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('active');
  });

  it('anonymous 401, customer 403', async () => {
    const { license, activationId } = await activated();
    const path = `/v1${url(license.id, activationId)}`;
    expectError(await t.app.inject({ method: 'POST', url: path }), 401, 'rest_not_logged_in');
    const customer = await createCustomer(t);
    expectError(
      await t.app.inject({ method: 'POST', url: path, headers: customer.headers }),
      403,
      'rest_forbidden',
    );
  });
});
