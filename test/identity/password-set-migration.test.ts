import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Migration 2026112871_buyers_password_set on a store with accounts: a database migrated up to the
 * migration before it gets accounts as an older store has them, then the later migrations run, on
 * the database under test. Only customers that checkout provably made without a password, and
 * that never used a password link, count as having none.
 */
let d: TestDatabase;
beforeAll(async () => {
  d = await freshDatabase({ upTo: '2026112810_artifact_stored_etag' });
});
afterAll(async () => d.drop());

describe('migration 2026112871_buyers_password_set', () => {
  it('marks only checkout accounts that never set a password as having none', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the columns of the schema before the migration
    const db = d.database.db as any;
    const now = new Date().toISOString();
    const user = async (email: string, role = 'customer') =>
      Number(
        (
          await db
            .insertInto('users')
            .values({
              email,
              password_hash: 'x',
              role,
              first_name: '',
              last_name: '',
              created_at: now,
              updated_at: now,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id,
      );
    const token = (user_id: number, purpose: string, used: boolean) =>
      db
        .insertInto('password_tokens')
        .values({
          token_hash: `${user_id}${purpose}${used}`.padEnd(64, '0'),
          user_id,
          purpose,
          expires_at: now,
          used_at: used ? now : null,
          created_at: now,
        })
        .execute();
    const message = (user_id: number | string) =>
      db
        .insertInto('mail_messages')
        .values({
          kind: 'account_created',
          recipient: 'x@example.com',
          subject: 'Your account',
          data: typeof user_id === 'number' ? JSON.stringify({ user_id, first_name: '' }) : user_id,
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        })
        .execute();

    const mailed = await user('mailed@example.com');
    await message(mailed);
    const linked = await user('linked@example.com');
    await token(linked, 'welcome', false);
    const setByLink = await user('set@example.com');
    await token(setByLink, 'welcome', true);
    const reset = await user('reset@example.com');
    await message(reset);
    await token(reset, 'reset', true);
    const plain = await user('plain@example.com');
    const admin = await user('admin@example.com', 'administrator');
    await message(admin);
    await message('not json');

    await migrateToLatest(db, d.database.dialect);

    const rows = await d.database.db.selectFrom('users').select(['id', 'password_set']).execute();
    const set = new Map(rows.map((r) => [Number(r.id), Number(r.password_set)]));
    expect(set.get(mailed)).toBe(0);
    expect(set.get(linked)).toBe(0);
    expect(set.get(setByLink)).toBe(1);
    expect(set.get(reset)).toBe(1);
    expect(set.get(plain)).toBe(1);
    expect(set.get(admin)).toBe(1);
  });
});
