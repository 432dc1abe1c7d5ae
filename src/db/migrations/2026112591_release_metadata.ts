import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * What WordPress shows of a release (docs/releases.md, 'Metadata WordPress shows'): the versions
 * it needs and was tested with, and the name, description, homepage and author its plugin or
 * theme header gave. Read from the uploaded zip, editable by the administrator; null when
 * unknown, so every existing release reads as "nothing said".
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  const columns: [string, `varchar(${number})`][] = [
    ['requires', 'varchar(20)'],
    ['tested', 'varchar(20)'],
    ['requires_php', 'varchar(20)'],
    ['name', 'varchar(200)'],
    ['description', 'varchar(2000)'],
    ['homepage', 'varchar(2000)'],
    ['author', 'varchar(200)'],
  ];
  for (const [name, type] of columns) {
    await db.schema.alterTable('releases').addColumn(name, type).execute();
  }
}
