import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, admin, adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createOrder,
  createProduct,
  enableOfflineGateways,
  uniqueEmail,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  await setSettings(t, { checkout_rate_limit: 1000 });
});
afterAll(async () => t.close());

interface Event {
  actor: { email: string };
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}
const history = async (id: number) =>
  (await admin(t, 'GET', `/audit-events?entity_type=order&entity_id=${id}`)).json() as Event[];

describe('orders in the audit trail', () => {
  it("a status change is one event; the same status again, or a refused one, records nothing; the licenses it issues are the server's", async () => {
    const product = await createProduct(t, { activation_limit: 1 });
    const out = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email: uniqueEmail('audit') },
      payment_method: 'bacs',
    });
    const licensesBefore = (await admin(t, 'GET', '/audit-events?entity_type=license')).headers['x-wp-total'];
    await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'completed' });
    const events = await history(out.order_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ action: 'status', actor: { email: ADMIN.email } });
    expect(events[0]!.changes.status!.after).toBe('completed');
    // The license the payment issued is the server's doing, not an administrator change.
    expect((await admin(t, 'GET', '/audit-events?entity_type=license')).headers['x-wp-total']).toBe(
      licensesBefore,
    );
    await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'completed' });
    expect((await admin(t, 'POST', `/orders/${out.order_id}/status`, { status: 'shipped' })).statusCode).toBe(
      400,
    );
    expect(await history(out.order_id)).toHaveLength(1);
  });
});
