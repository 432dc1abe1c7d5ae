import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { AccountsTables, PasswordTokenPurpose, Role } from './accounts.tables.js';

export type UserRow = Selectable<AccountsTables['users']>;

/** The user list's sort keys: `name` is the last name, then the first name. */
export type UserSort = 'id' | 'email' | 'name';

export class AccountsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  findUserByEmail(email: string, tx?: Tx): Promise<UserRow | undefined> {
    return on(this.db, tx).selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  findUserById(id: number, tx?: Tx): Promise<UserRow | undefined> {
    return on(this.db, tx).selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async hasAdministrator(tx?: Tx): Promise<boolean> {
    const row = await on(this.db, tx)
      .selectFrom('users')
      .select('id')
      .where('role', '=', 'administrator')
      .limit(1)
      .executeTakeFirst();
    return !!row;
  }

  /**
   * A page of users, newest first unless sorted; search in the email and the full name, ignoring
   * case. Each sort has the id as tie-break, so that pages never overlap, and an index with the
   * role in front (migration 2026112441_customer_lists). Only the public columns are read: the
   * password hash never leaves this method.
   */
  async listUsers(
    filter: { role?: Role; search?: string },
    limit: number,
    offset: number,
    sort: { by: UserSort; order: 'asc' | 'desc' } = { by: 'id', order: 'desc' },
    tx?: Tx,
  ): Promise<{ rows: Pick<UserRow, 'id' | 'email' | 'role' | 'first_name' | 'last_name'>[]; total: number }> {
    let q = on(this.db, tx).selectFrom('users');
    if (filter.role) q = q.where('role', '=', filter.role);
    if (filter.search) {
      const pattern = `%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where((eb) =>
        eb.or([
          sql<boolean>`lower(email) like ${pattern} escape ${'\\'}`,
          sql<boolean>`lower(first_name || ' ' || last_name) like ${pattern} escape ${'\\'}`,
        ]),
      );
    }
    const [rows, count] = await Promise.all([
      q
        .select(['id', 'email', 'role', 'first_name', 'last_name'])
        .$if(sort.by === 'email', (s) => s.orderBy('email', sort.order))
        .$if(sort.by === 'name', (s) => s.orderBy('last_name', sort.order).orderBy('first_name', sort.order))
        .orderBy('id', sort.order)
        .limit(limit)
        .offset(offset)
        .execute(),
      q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** Returns undefined when the email is taken (unique constraint), so concurrent creates stay exact. */
  async insertUser(
    u: {
      email: string;
      password_hash: string;
      password_set: boolean;
      role: Role;
      first_name: string;
      last_name: string;
      now: string;
    },
    tx?: Tx,
  ): Promise<UserRow | undefined> {
    return on(this.db, tx)
      .insertInto('users')
      .values({
        email: u.email,
        password_hash: u.password_hash,
        password_set: u.password_set ? 1 : 0,
        role: u.role,
        first_name: u.first_name,
        last_name: u.last_name,
        created_at: u.now,
        updated_at: u.now,
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  async updateUser(
    id: number,
    patch: { password_hash?: string; role?: Role; first_name?: string; last_name?: string; now: string },
    tx?: Tx,
  ): Promise<void> {
    const { now, ...rest } = patch;
    // A new hash is always a password someone chose.
    const set = rest.password_hash === undefined ? rest : { ...rest, password_set: 1 };
    await on(this.db, tx)
      .updateTable('users')
      .set({ ...set, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /**
   * The first password of an account that has none: one UPDATE that only an account still
   * without a password passes, so of two requests at once one sets it. Answers whether it did.
   */
  async setFirstPassword(id: number, passwordHash: string, now: string, tx?: Tx): Promise<boolean> {
    const result = await on(this.db, tx)
      .updateTable('users')
      .set({ password_hash: passwordHash, password_set: 1, updated_at: now })
      .where('id', '=', id)
      .where('password_set', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async insertSession(
    s: {
      id_hash: string;
      user_id: number;
      nonce: string;
      now: string;
      expires_at: string;
    },
    tx?: Tx,
  ) {
    await on(this.db, tx)
      .insertInto('sessions')
      .values({
        id_hash: s.id_hash,
        user_id: s.user_id,
        nonce: s.nonce,
        created_at: s.now,
        expires_at: s.expires_at,
      })
      .execute();
  }

  findSession(idHash: string, now: string, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select([
        'sessions.nonce',
        'users.id',
        'users.email',
        'users.role',
        'users.first_name',
        'users.last_name',
      ])
      .where('sessions.id_hash', '=', idHash)
      .where('sessions.expires_at', '>', now)
      .executeTakeFirst();
  }

  async deleteSession(idHash: string, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteExpiredSessions(now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }

  async insertAppPassword(
    a: {
      uuid: string;
      user_id: number;
      name: string;
      password_hash: string;
      now: string;
    },
    tx?: Tx,
  ) {
    await on(this.db, tx)
      .insertInto('application_passwords')
      .values({
        uuid: a.uuid,
        user_id: a.user_id,
        name: a.name,
        password_hash: a.password_hash,
        created_at: a.now,
      })
      .execute();
  }

  findAppPasswordUser(email: string, passwordHash: string, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('application_passwords')
      .innerJoin('users', 'users.id', 'application_passwords.user_id')
      .select(['application_passwords.id as app_password_id', 'users.id', 'users.email', 'users.role'])
      .select(['users.first_name', 'users.last_name'])
      .where('application_passwords.password_hash', '=', passwordHash)
      .where('users.email', '=', email)
      .executeTakeFirst();
  }

  listAppPasswords(userId: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('application_passwords')
      .select(['uuid', 'name', 'created_at', 'last_used_at'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
  }

  async deleteAppPassword(userId: number, uuid: string, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .deleteFrom('application_passwords')
      .where('user_id', '=', userId)
      .where('uuid', '=', uuid)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async touchAppPassword(id: number, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('application_passwords')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .execute();
  }

  // ---- Password tokens (docs/email.md, 'Passwords'): only their SHA-256 is stored ----

  async insertPasswordToken(
    t: {
      token_hash: string;
      user_id: number;
      purpose: PasswordTokenPurpose;
      expires_at: string;
      now: string;
    },
    tx?: Tx,
  ): Promise<void> {
    await on(this.db, tx)
      .insertInto('password_tokens')
      .values({
        token_hash: t.token_hash,
        user_id: t.user_id,
        purpose: t.purpose,
        expires_at: t.expires_at,
        used_at: null,
        created_at: t.now,
      })
      .execute();
  }

  /** An unused, unexpired token by its hash (the page's heading; nothing is changed). */
  findLivePasswordToken(tokenHash: string, purposes: PasswordTokenPurpose[], now: string, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('password_tokens')
      .select(['token_hash', 'user_id', 'purpose'])
      .where('token_hash', '=', tokenHash)
      .where('purpose', 'in', purposes)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  /**
   * Uses the token: one UPDATE that only an unused, unexpired token passes, so of two requests
   * with the same token (in any processes) one wins. Answers its user, or undefined.
   */
  consumePasswordToken(tokenHash: string, purposes: PasswordTokenPurpose[], now: string, tx?: Tx) {
    return on(this.db, tx)
      .updateTable('password_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('purpose', 'in', purposes)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning(['token_hash', 'user_id', 'purpose'])
      .executeTakeFirst();
  }

  /** A password was set: every other link of this user stops working. */
  async retirePasswordTokens(userId: number, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('password_tokens')
      .set({ used_at: now })
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .execute();
  }

  /** A password was reset by link: every session of the user ends. */
  async deleteUserSessions(userId: number, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('sessions').where('user_id', '=', userId).execute();
  }

  /** Every session of the user but one (the one that changed the password). */
  async deleteOtherSessions(userId: number, keepIdHash: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .deleteFrom('sessions')
      .where('user_id', '=', userId)
      .where('id_hash', '!=', keepIdHash)
      .execute();
  }
}
