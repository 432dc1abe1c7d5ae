import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { ReportsTables } from './reports.tables.js';

export interface SiteRow {
  day: string;
  product_id: number;
  site: string;
}

export type InstalledBaseCountRow = ReportsTables['field_counts'];

/** Rows per statement: well under SQLite's and PostgreSQL's limits on bound values. */
const CHUNK = 500;

/** The installed-base report's statements (installed-base.ts): none runs on a request's path. */
export class InstalledBaseRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Inserts the sites not yet counted on their day and returns those it inserted: a site another
   * process has already counted (committed or in flight, which PostgreSQL waits for) is left out.
   */
  async addSites(rows: SiteRow[], tx: Tx): Promise<SiteRow[]> {
    const inserted: SiteRow[] = [];
    for (let i = 0; i < rows.length; i += CHUNK) {
      const got = await on(this.db, tx)
        .insertInto('field_sites')
        .values(rows.slice(i, i + CHUNK))
        .onConflict((oc) => oc.columns(['day', 'product_id', 'site']).doNothing())
        .returning(['day', 'product_id', 'site'])
        .execute();
      inserted.push(...got);
    }
    return inserted;
  }

  /** Adds to the counts (`sites = sites + excluded.sites`), so every process adds its own. */
  async addCounts(rows: InstalledBaseCountRow[], tx: Tx): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      await on(this.db, tx)
        .insertInto('field_counts')
        .values(rows.slice(i, i + CHUNK))
        .onConflict((oc) =>
          oc
            .columns(['product_id', 'day', 'kind', 'name', 'version'])
            .doUpdateSet((eb) => ({ sites: eb('field_counts.sites', '+', eb.ref('excluded.sites')) })),
        )
        .execute();
    }
  }

  /** Forgets the site hashes of days before `sitesFrom` and the counts of days before `countsFrom`. */
  async prune(sitesFrom: string, countsFrom: string, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('field_sites').where('day', '<', sitesFrom).execute();
    await on(this.db, tx).deleteFrom('field_counts').where('day', '<', countsFrom).execute();
  }

  /** The counts of one product over the days `from` to `to`, both included. */
  async counts(productId: number, from: string, to: string, tx?: Tx): Promise<InstalledBaseCountRow[]> {
    const rows = await on(this.db, tx)
      .selectFrom('field_counts')
      .select(['product_id', 'day', 'kind', 'name', 'version', 'sites'])
      .where('product_id', '=', productId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .orderBy('day')
      .execute();
    // PostgreSQL answers bigint as text.
    return rows.map((r) => ({ ...r, sites: Number(r.sites) }));
  }
}
