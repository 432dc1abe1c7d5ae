import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';

/** Image files by their content-hashed name (docs/storefront.md, 'Images'). */
export class MediaRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Stores the files of one image; a name already stored is the same bytes (names are content hashes). */
  async insert(files: { name: string; content_type: string; bytes: Buffer }[], now: string, tx?: Tx) {
    for (const f of files) {
      await on(this.db, tx)
        .insertInto('media')
        .values({ ...f, created_at: now })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    }
  }

  /** One file by its primary key. */
  find(name: string, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('media')
      .select(['content_type', 'bytes'])
      .where('name', '=', name)
      .executeTakeFirst();
  }

  /** The names of the files stored before `before` (names only: the bytes stay on disk). */
  async namesBefore(before: string, tx?: Tx): Promise<string[]> {
    const rows = await on(this.db, tx)
      .selectFrom('media')
      .select('name')
      .where('created_at', '<', before)
      .execute();
    return rows.map((r) => r.name);
  }

  async remove(names: string[], tx?: Tx): Promise<number> {
    if (names.length === 0) return 0;
    const result = await on(this.db, tx).deleteFrom('media').where('name', 'in', names).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
