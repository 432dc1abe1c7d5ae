import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The administrator's order list sorts by total (docs/checkout.md, 'Routes'): with (total, id) the
 * planner walks the index and stops after the page, instead of sorting every order for each page.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.createIndex('orders_total').on('orders').columns(['total', 'id']).execute();
}
