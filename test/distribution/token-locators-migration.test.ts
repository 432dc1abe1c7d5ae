import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Migration 2026113100_token_locators on a store with tokens (docs/distribution.md, 'What a token
 * is'): every row and id kept, ids going on after the highest ever given, the hash no longer unique
 * but for the tokens minted before (no locator), and the indexes the queries use.
 */
let d: TestDatabase;
beforeAll(async () => {
  d = await freshDatabase({ upTo: '2026113090_subscription_gateway_ended' });
});
afterAll(async () => d.drop());

const row = (n: number) => ({
  token_hash: String(n).repeat(64).slice(0, 64),
  binding_version: 1,
  policy: 'public',
  product_id: 1,
  release_id: 2,
  artifact_id: 3,
  artifact_sha256: 'a'.repeat(64),
  purpose: 'update',
  license_id: null,
  activation_id: null,
  activation_revision: null,
  identity_key: null,
  installation_id: null,
  domain_normalized: null,
  user_id: null,
  created_at: '2026-11-28T00:00:00.000Z',
  expires_at: '2026-11-28T00:05:00.000Z',
  used_at: n === 2 ? '2026-11-28T00:01:00.000Z' : null,
  invalidated_at: null,
  invalidated_reason: null,
});

describe('migration 2026113100_token_locators', () => {
  it('keeps every token and id, and makes the hash unique only where no locator is stored', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the columns of the schema before the migration
    const db = d.database.db as any;
    const insert = (values: Record<string, unknown>) =>
      db.insertInto('download_tokens').values(values).returning('id').executeTakeFirstOrThrow();
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await insert(row(n))).id as number);
    // The newest is pruned: the next id must still come after it.
    await db.deleteFrom('download_tokens').where('id', '=', ids[2]).execute();
    const before = await db.selectFrom('download_tokens').selectAll().orderBy('id').execute();

    await migrateToLatest(d.database.db, d.database.dialect);

    // Another statement text than before: SQLite's statements are kept by text, with their columns.
    const after = await db
      .selectFrom('download_tokens')
      .selectAll()
      .where('id', '>', 0)
      .orderBy('id')
      .execute();
    expect(after).toEqual(before.map((r: object) => ({ ...r, token_locator: null })));
    const next = await insert({ ...row(4), token_locator: 1_790_000_000_000 });
    expect(next.id).toBe(ids[2]! + 1);

    // A hash may repeat under locators (the pair finds the row); among unlocated tokens it may not.
    await insert({ ...row(4), token_locator: 1_790_000_000_001 });
    await expect(insert({ ...row(1), token_locator: null })).rejects.toThrow();

    const indexes =
      d.database.dialect === 'postgres'
        ? (
            await sql<{ name: string }>`select indexname as name from pg_indexes
              where tablename = 'download_tokens'`.execute(db)
          ).rows
        : (
            await sql<{ name: string }>`select name from sqlite_master
              where type = 'index' and tbl_name = 'download_tokens'`.execute(db)
          ).rows;
    expect(indexes.map((i) => i.name).sort()).toEqual(
      [
        'download_tokens_account_license',
        'download_tokens_activation_id',
        'download_tokens_artifact_id',
        'download_tokens_locator',
        'download_tokens_release_id',
        'download_tokens_unlocated',
        ...(d.database.dialect === 'postgres' ? ['download_tokens_pkey'] : []),
      ].sort(),
    );
  });
});
