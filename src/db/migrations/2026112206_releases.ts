import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // The public uploads folder of the old catalogue: files anyone can fetch at their public URL.
  await withId(db.schema.createTable('legacy_downloads'), dialect)
    .addColumn('download_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('product_id', 'integer', (c) => c.notNull().references('products.id'))
    .addColumn('file_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('public_path', 'varchar(1024)', (c) => c.notNull())
    .addColumn('file_size', 'bigint', (c) => c.notNull())
    .addColumn('file_sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('removed_at', ts)
    .execute();
  await db.schema
    .createIndex('legacy_downloads_product')
    .on('legacy_downloads')
    .column('product_id')
    .execute();

  // Stored packages. A release binds to one; several releases may bind to the same one.
  await withId(db.schema.createTable('artifacts'), dialect)
    .addColumn('product_id', 'integer', (c) => c.notNull().references('products.id'))
    .addColumn('download_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('driver', 'varchar(40)', (c) => c.notNull())
    .addColumn('storage_key', 'varchar(2048)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(32)')
    .addColumn('file_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('file_size', 'bigint')
    .addColumn('stored_size', 'bigint')
    .addColumn('file_sha256', 'varchar(100)', (c) => c.notNull())
    .addColumn('state', 'varchar(20)', (c) => c.notNull())
    .addColumn('source_download_id', 'varchar(64)')
    .addColumn('deletion_op', 'varchar(36)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('deleted_at', ts)
    .execute();
  await db.schema.createIndex('artifacts_product').on('artifacts').column('product_id').execute();
  await db.schema.createIndex('artifacts_source').on('artifacts').column('source_download_id').execute();

  await withId(db.schema.createTable('releases'), dialect)
    .addColumn('product_id', 'integer', (c) => c.notNull().references('products.id'))
    .addColumn('version', 'varchar(100)', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('is_current', 'integer', (c) => c.notNull())
    .addColumn('release_date', ts, (c) => c.notNull())
    .addColumn('published_at', ts)
    .addColumn('withdrawn_at', ts)
    .addColumn('changelog', 'text')
    .addColumn('download_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('artifact_id', 'integer', (c) => c.notNull().references('artifacts.id'))
    .addColumn('file_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('file_size', 'bigint')
    .addColumn('file_sha256', 'varchar(100)', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('releases_product_version', ['product_id', 'version'])
    .execute();
  await db.schema
    .createIndex('releases_product_status')
    .on('releases')
    .columns(['product_id', 'status'])
    .execute();
  await db.schema.createIndex('releases_artifact').on('releases').column('artifact_id').execute();
  // At most one current release per product, whatever races the application loses.
  await db.schema
    .createIndex('releases_one_current')
    .on('releases')
    .column('product_id')
    .unique()
    .where(sql.ref('is_current'), '=', sql.lit(1))
    .execute();

  await withId(db.schema.createTable('artifact_deletions'), dialect)
    .addColumn('op_id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('product_id', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('artifact_ids', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('results', 'text', (c) => c.notNull())
    .addColumn('error_code', 'varchar(60)')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('requested_by', 'integer')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('completed_at', ts)
    .execute();
}
