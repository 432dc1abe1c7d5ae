import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely';
import type { Dialect } from '../database.js';

/** Frozen helpers for migrations: one definition of an autoincrement key and of common column kinds. */
// biome-ignore lint/suspicious/noExplicitAny: migrations never import application types
type Table = CreateTableBuilder<string, any>;

export function withId(t: Table, dialect: Dialect): Table {
  return dialect === 'postgres'
    ? t.addColumn('id', 'serial', (c) => c.primaryKey())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Timestamps are ISO 8601 UTC text with milliseconds in both databases: one code path, sortable. */
export const ts = 'varchar(30)';

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();
