import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The account download token (docs/distribution.md, 'What a token is bound to'): a customer's own
 * download from /account/downloads binds the license and the customer's user id, and no site.
 * `user_id` is null on every other token. Revocation finds a license's account tokens through the
 * partial index, which holds account tokens only: the update check's tokens (user_id null) write no
 * page of it (docs/performance.md, 'Download token writes').
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('download_tokens').addColumn('user_id', 'integer').execute();
  await db.schema
    .createIndex('download_tokens_account_license')
    .on('download_tokens')
    .column('license_id')
    .where(sql.ref('user_id'), 'is not', null)
    .execute();
}
