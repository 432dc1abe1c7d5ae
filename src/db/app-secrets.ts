import type { Kysely } from 'kysely';
import { randomHex } from '../random.js';
import type { DB } from './schema.js';

/**
 * Named server secrets of 32 random bytes, created once in `app_state` (the first process to
 * start wins the insert) and then read by every process that shares the database, so that what
 * one process signs another verifies. Each is loaded once per process; a failed load is retried.
 */
export class AppSecrets {
  private readonly loaded = new Map<string, Promise<Buffer>>();

  constructor(private readonly db: Kysely<DB>) {}

  get(name: string): Promise<Buffer> {
    let secret = this.loaded.get(name);
    if (!secret) {
      secret = this.load(name).catch((e) => {
        this.loaded.delete(name);
        throw e;
      });
      this.loaded.set(name, secret);
    }
    return secret;
  }

  private async load(name: string): Promise<Buffer> {
    await this.db
      .insertInto('app_state')
      .values({ key: name, value: randomHex(32) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('app_state')
      .select('value')
      .where('key', '=', name)
      .executeTakeFirstOrThrow();
    return Buffer.from(row.value, 'hex');
  }
}
