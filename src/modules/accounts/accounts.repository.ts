import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AccountsTables, Role } from './accounts.tables.js';

export type UserRow = Selectable<AccountsTables['users']>;

export class AccountsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  findUserByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  findUserById(id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Returns undefined when the email is taken (unique constraint), so concurrent creates stay exact. */
  async insertUser(u: {
    email: string;
    password_hash: string;
    role: Role;
    first_name: string;
    last_name: string;
    now: string;
  }): Promise<UserRow | undefined> {
    return this.db
      .insertInto('users')
      .values({
        email: u.email,
        password_hash: u.password_hash,
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

  async updateUser(id: number, patch: { password_hash?: string; role?: Role; now: string }): Promise<void> {
    const { now, ...rest } = patch;
    await this.db
      .updateTable('users')
      .set({ ...rest, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  async insertSession(s: {
    id_hash: string;
    user_id: number;
    nonce: string;
    now: string;
    expires_at: string;
  }) {
    await this.db
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

  findSession(idHash: string, now: string) {
    return this.db
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

  async deleteSession(idHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteExpiredSessions(now: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }

  async insertAppPassword(a: {
    uuid: string;
    user_id: number;
    name: string;
    password_hash: string;
    now: string;
  }) {
    await this.db
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

  findAppPasswordUser(email: string, passwordHash: string) {
    return this.db
      .selectFrom('application_passwords')
      .innerJoin('users', 'users.id', 'application_passwords.user_id')
      .select(['application_passwords.id as app_password_id', 'users.id', 'users.email', 'users.role'])
      .select(['users.first_name', 'users.last_name'])
      .where('application_passwords.password_hash', '=', passwordHash)
      .where('users.email', '=', email)
      .executeTakeFirst();
  }

  listAppPasswords(userId: number) {
    return this.db
      .selectFrom('application_passwords')
      .select(['uuid', 'name', 'created_at', 'last_used_at'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
  }

  async deleteAppPassword(userId: number, uuid: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('application_passwords')
      .where('user_id', '=', userId)
      .where('uuid', '=', uuid)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async touchAppPassword(id: number, now: string): Promise<void> {
    await this.db
      .updateTable('application_passwords')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .execute();
  }
}
