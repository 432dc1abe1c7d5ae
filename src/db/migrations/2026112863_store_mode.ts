import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Test mode (docs/payments.md, 'Test mode and live mode'). Orders and licenses get a `test` flag
 * (1 = made in test mode; every existing row is real, 0), and the store its `store_mode`:
 *
 * - a store that has taken a payment (an order processing, completed, or refunded after it was
 *   paid) is `live`; its gateways stay as they are, except the test card, which a live store
 *   never offers (any 4242… card would buy a license);
 * - any other store is `test`. A store with no order at all (a new one) also has the offline
 *   gateways without payment instructions switched off: enabling one now needs its instructions.
 *   A store with orders keeps its offline gateways, so an order on hold can still be paid.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('orders')
    .addColumn('test', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('licenses')
    .addColumn('test', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  const paid = await db
    .selectFrom('orders')
    .select('id')
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['processing', 'completed']),
        eb.and([eb('status', '=', 'refunded'), eb('paid_at', 'is not', null)]),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  const mode = paid ? 'live' : 'test';
  await db
    .insertInto('settings')
    .values({ key: 'store_mode', value: JSON.stringify(mode) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  if (paid) {
    await db.updateTable('payment_gateways').set({ enabled: 0 }).where('id', '=', 'test_card').execute();
    return;
  }
  const anyOrder = await db.selectFrom('orders').select('id').limit(1).executeTakeFirst();
  if (!anyOrder) {
    await db
      .updateTable('payment_gateways')
      .set({ enabled: 0 })
      .where('id', 'in', ['bacs', 'cheque'])
      .where(sql`trim(instructions)`, '=', '')
      .execute();
  }
}
