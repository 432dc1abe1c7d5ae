import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** An order as the tax report reads it (amounts in minor units of its currency). */
export interface TaxedOrderRow {
  id: number;
  currency: string;
  decimals: number;
  total: number;
  total_tax: number;
  tax_country: string;
  tax_lines: string;
  reverse_charge: number;
  buyer_tax_id: string;
  paid_at: string;
}

/** A refund with its order's tax, as the tax report reads it. */
export interface TaxedRefundRow extends Omit<TaxedOrderRow, 'paid_at'> {
  refund_id: number;
  amount: number;
  created_at: string;
}

/**
 * A paid sale: paid, whatever became of it since (a refund is the report's own row). Test orders
 * took no money.
 */
const PAID = ['processing', 'completed', 'refunded'] as const;

const ORDER_COLUMNS = [
  'o.id',
  'o.currency',
  'o.decimals',
  'o.total',
  'o.total_tax',
  'o.tax_country',
  'o.tax_lines',
  'o.reverse_charge',
  'o.buyer_tax_id',
] as const;

/** The tax report's reads: timestamps are ISO 8601 UTC text, so a range is two string compares. */
export class TaxReportRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async sales(from: string, to: string): Promise<TaxedOrderRow[]> {
    const rows = await this.db
      .selectFrom('orders as o')
      .select([...ORDER_COLUMNS, 'o.paid_at'])
      .where('o.paid_at', '>=', from)
      .where('o.paid_at', '<', to)
      .where('o.status', 'in', [...PAID])
      .where('o.test', '=', 0)
      .where('o.tax_country', '!=', '')
      .orderBy('o.id')
      .execute();
    return rows.map((r) => ({ ...num(r), paid_at: r.paid_at! }));
  }

  async refunds(from: string, to: string): Promise<TaxedRefundRow[]> {
    const rows = await this.db
      .selectFrom('order_refunds as r')
      .innerJoin('orders as o', 'o.id', 'r.order_id')
      .select([...ORDER_COLUMNS, 'r.id as refund_id', 'r.amount', 'r.created_at'])
      .where('r.created_at', '>=', from)
      .where('r.created_at', '<', to)
      .where('o.test', '=', 0)
      .where('o.tax_country', '!=', '')
      .orderBy('r.id')
      .execute();
    return rows.map((r) => ({
      ...num(r),
      refund_id: r.refund_id,
      amount: Number(r.amount),
      created_at: r.created_at,
    }));
  }
}

// PostgreSQL's bigint sums and some drivers' integers come back as strings.
function num<T extends Omit<TaxedOrderRow, 'paid_at'>>(r: T): T {
  return {
    ...r,
    decimals: Number(r.decimals),
    total: Number(r.total),
    total_tax: Number(r.total_tax),
    reverse_charge: Number(r.reverse_charge),
  };
}
