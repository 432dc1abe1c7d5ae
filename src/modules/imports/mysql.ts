import type { Pool, RowDataPacket } from 'mysql2/promise';
import { currencyDecimals, toMinor } from '../catalogue/money.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { ImportProblem } from './records.js';

/**
 * What the WordPress store readers (EDD, WooCommerce) share: a lazily opened connection to the old
 * store's MySQL/MariaDB, paging by id, and the conversions of its dates and decimal amounts.
 * mysql2 is imported on first use, so the server itself never loads it.
 */
export interface WordPressDb {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Rows of `sql` (which selects `idColumn` and ends in its top-level WHERE clause) in pages of `pageSize`, by ascending id. */
  pages<T = Record<string, unknown>>(
    sql: string,
    idColumn: string,
    params?: unknown[],
    pageSize?: number,
  ): AsyncIterable<T>;
  /** The table name with the store's prefix, checked to be a plain identifier. */
  table(name: string): string;
  close(): Promise<void>;
}

export const PAGE_SIZE = 5000;

export function openWordPressDb(url: string, prefix: string): WordPressDb {
  if (!/^[A-Za-z0-9_]*$/.test(prefix))
    throw new Error('the table prefix may hold only letters, digits and _');
  let pool: Promise<Pool> | null = null;
  const connect = () => {
    pool ??= import('mysql2/promise').then((mysql) => {
      // Dates as the strings MySQL stores (WordPress keeps UTC in the *_gmt columns and EDD 3's
      // tables); decimals as strings, so no amount goes through a float.
      const p = mysql.createPool({
        uri: url,
        connectionLimit: 2,
        dateStrings: true,
        decimalNumbers: false,
        supportBigNumbers: true,
        bigNumberStrings: true,
        timezone: 'Z',
        charset: 'utf8mb4',
      });
      // FROM_UNIXTIME and friends in UTC, whatever the server's zone.
      p.on('connection', (c) => {
        c.query("SET time_zone = '+00:00'");
      });
      return p;
    });
    return pool;
  };
  const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const [rows] = await (await connect()).query<RowDataPacket[]>(sql, params);
    return rows as T[];
  };
  return {
    query,
    async *pages<T>(sql: string, idColumn: string, params: unknown[] = [], pageSize = PAGE_SIZE) {
      let after: string | number = -1;
      for (;;) {
        const rows = await query<Record<string, unknown>>(
          `${sql} AND ${idColumn} > ? ORDER BY ${idColumn} LIMIT ${pageSize}`,
          [...params, after],
        );
        for (const row of rows) yield row as T;
        if (rows.length < pageSize) return;
        // The id as the row names it: `p.ID` may be selected as `id`.
        const last = rows[rows.length - 1]!;
        const name = idColumn.split('.').pop()!.toLowerCase();
        after = last[Object.keys(last).find((k) => k.toLowerCase() === name)!] as string | number;
      }
    },
    table: (name) => `\`${prefix}${name}\``,
    async close() {
      if (pool) await (await pool).end();
      pool = null;
    },
  };
}

/** "2024-01-10 10:00:05" (UTC) -> RFC 3339; the zero date, "0" and anything else -> undefined. */
export function mysqlUtc(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}$/.test(value)) return undefined;
  if (value.startsWith('0000-00-00')) return undefined;
  const d = new Date(`${value.replace(' ', 'T')}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

const NO_SETTINGS = { currencies: [] } as unknown as Settings;

/**
 * A decimal amount as the old store keeps it ("238.000000000") -> minor units of `currency`,
 * exactly; null when it has fractions of a minor unit or is not a number. Negative amounts are
 * refused by toMinor, so the sign is carried here.
 */
export function minorUnits(amount: unknown, currency: string): number | null {
  const text = String(amount ?? '').trim();
  if (!/^-?\d+(\.\d+)?$/.test(text)) return null;
  const negative = text.startsWith('-');
  const minor = toMinor(negative ? text.slice(1) : text, currencyDecimals(currency, NO_SETTINGS));
  if (minor === null) return null;
  return negative && minor !== 0 ? -minor : minor;
}

/** A syntactically valid email, as the writer will accept it. */
export const plausibleEmail = (email: string): boolean =>
  email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email);

/** WordPress-style meta (`meta_key`, `meta_value`) of the ids in one page, as id -> key -> value. */
export async function readMeta(
  db: WordPressDb,
  table: string,
  idColumn: string,
  ids: unknown[],
  keys: string[],
) {
  const out = new Map<string, Record<string, string>>();
  if (ids.length === 0) return out;
  // The meta row's own id, by which a later row of the same key wins as it does in WordPress.
  const metaId = table === 'usermeta' ? 'umeta_id' : table === 'wc_orders_meta' ? 'id' : 'meta_id';
  const rows = await db.query<Record<string, unknown>>(
    `SELECT ${idColumn} AS id, meta_key, meta_value FROM ${db.table(table)} WHERE ${idColumn} IN (?) AND meta_key IN (?) ORDER BY ${metaId}`,
    [ids, keys],
  );
  for (const r of rows) {
    const m = out.get(String(r.id)) ?? {};
    m[r.meta_key as string] = String(r.meta_value ?? '');
    out.set(String(r.id), m);
  }
  return out;
}

/** The rows of `sql` in pages by id, each page translated at once (so its meta is read in one query). */
export async function* readPaged<T, R>(
  db: WordPressDb,
  sql: string,
  idColumn: string,
  pageSize: number | undefined,
  translate: (rows: R[]) => Promise<Array<T | ImportProblem>>,
): AsyncIterable<T | ImportProblem> {
  const size = pageSize ?? PAGE_SIZE;
  let page: R[] = [];
  for await (const row of db.pages<R>(sql, idColumn, [], size)) {
    page.push(row);
    if (page.length === size) {
      yield* await translate(page);
      page = [];
    }
  }
  if (page.length) yield* await translate(page);
}
