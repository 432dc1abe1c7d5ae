import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Whether an account has a password of its own (docs/storefront.md, 'Set a password'): 0 for an
 * account checkout made with an unusable hash, until its buyer sets one. Existing accounts count
 * as having one, except customers that checkout provably made without one: an "account created"
 * message or a set-your-password link names them, and no password link of theirs was ever used
 * (a password set through Profile needed a current password such an account never had).
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('password_set', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  const made = new Set<number>();
  const welcomed = await db
    .selectFrom('password_tokens')
    .select('user_id')
    .where('purpose', '=', 'welcome')
    .execute();
  for (const row of welcomed) made.add(Number(row.user_id));
  const created = await db
    .selectFrom('mail_messages')
    .select('data')
    .where('kind', '=', 'account_created')
    .execute();
  for (const row of created) {
    try {
      const id = (JSON.parse(String(row.data)) as { user_id?: unknown }).user_id;
      if (typeof id === 'number') made.add(id);
    } catch {
      // A message whose facts cannot be read names nobody.
    }
  }
  const ids = [...made];
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .updateTable('users')
      .set({ password_set: 0 })
      .where('id', 'in', ids.slice(i, i + 500))
      .where('role', '=', 'customer')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('password_tokens as t')
              .select('t.id')
              .whereRef('t.user_id', '=', 'users.id')
              .where('t.used_at', 'is not', null),
          ),
        ),
      )
      .execute();
  }
}
