import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminOk, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface Event {
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}
const history = async (id: number) =>
  (await admin(t, 'GET', `/audit-events?entity_type=coupon&entity_id=${id}`)).json() as Event[];

describe('coupons in the audit trail', () => {
  it('create, update and delete: one event each; a refused update records nothing', async () => {
    const coupon = await adminOk<{ id: number }>(t, 'POST', '/coupons', {
      code: 'audit10',
      discount_type: 'percent',
      amount: '10',
    });
    expect((await history(coupon.id)).map((e) => e.action)).toEqual(['create']);
    await adminOk(t, 'PATCH', `/coupons/${coupon.id}`, { amount: '15' });
    const [updated] = await history(coupon.id);
    expect(updated!.action).toBe('update');
    expect(Object.keys(updated!.changes)).toEqual(['amount']);
    expect((await admin(t, 'PATCH', `/coupons/${coupon.id}`, { amount: 'lots' })).statusCode).toBe(400);
    expect(await history(coupon.id)).toHaveLength(2);
    await adminOk(t, 'DELETE', `/coupons/${coupon.id}`);
    const [deleted] = await history(coupon.id);
    expect(deleted).toMatchObject({
      action: 'delete',
      changes: { code: { before: 'audit10', after: null } },
    });
  });
});
