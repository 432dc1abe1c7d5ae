import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Every eligible update check writes a download token, and each index of the table is one more
 * B-tree page written per token. Two served no query: revocation finds a license's tokens through
 * its activations (a licensed token always names its activation), and nothing looks tokens up by
 * expiry alone. Dropping them took about a fifth off the write (docs/performance.md, 'Download
 * token writes').
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.dropIndex('download_tokens_license_id').execute();
  await db.schema.dropIndex('download_tokens_expires_at').execute();
}
