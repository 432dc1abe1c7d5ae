import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, admin, createTestApp, type TestApp } from '../helpers/app.js';
import { publish, softwareProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

interface Event {
  actor: { email: string };
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}
const history = async (versionId: number) =>
  (await admin(t, 'GET', `/audit-events?entity_type=release&entity_id=${versionId}`)).json() as Event[];
const versionUrl = (p: number, v: number, action = '') => `/software/products/${p}/versions/${v}${action}`;

describe('releases in the audit trail', () => {
  it('upload, make current with a changelog, withdraw and republish: one event each, newest first', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '1.0.0');
    await publish(t, product.id, '1.1.0');
    let events = await history(a.version_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ action: 'create', actor: { email: ADMIN.email } });
    expect(events[0]!.changes.version).toEqual({ before: null, after: '1.0.0' });
    expect(events[0]!.changes.status).toEqual({ before: null, after: 'published' });

    expect(
      (await admin(t, 'PUT', versionUrl(product.id, a.version_id), { changelog: 'Fixed', is_current: true }))
        .statusCode,
    ).toBe(200);
    events = await history(a.version_id);
    expect(events[0]!.action).toBe('make_current');
    expect(events[0]!.changes.is_current).toEqual({ before: 0, after: 1 });
    expect(events[0]!.changes.changelog!.before).toBeNull();
    expect(events[0]!.changes.changelog!.after).not.toBeNull();

    expect((await admin(t, 'POST', versionUrl(product.id, a.version_id, '/withdraw'))).statusCode).toBe(200);
    events = await history(a.version_id);
    expect(events[0]).toMatchObject({
      action: 'withdraw',
      changes: { status: { before: 'published', after: 'withdrawn' } },
    });
    // Withdrawing a withdrawn release changes nothing and records nothing.
    await admin(t, 'POST', versionUrl(product.id, a.version_id, '/withdraw'));
    expect(await history(a.version_id)).toHaveLength(3);

    expect((await admin(t, 'POST', versionUrl(product.id, a.version_id, '/republish'), {})).statusCode).toBe(
      200,
    );
    events = await history(a.version_id);
    expect(events.map((e) => e.action)).toEqual(['republish', 'withdraw', 'make_current', 'create']);
    expect(events[0]!.changes.status).toEqual({ before: 'withdrawn', after: 'published' });
  });

  it('a refused change records nothing', async () => {
    const product = await softwareProduct(t);
    const a = await publish(t, product.id, '2.0.0');
    expect(
      (await admin(t, 'PUT', versionUrl(product.id, a.version_id), { version: '9.9.9' })).statusCode,
    ).toBe(400);
    expect((await admin(t, 'POST', versionUrl(product.id, a.version_id, '/republish'), {})).statusCode).toBe(
      409,
    );
    expect(await history(a.version_id)).toHaveLength(1);
  });
});
