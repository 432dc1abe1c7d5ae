import { ApiError } from '../../http/errors.js';
import { allocate, fromMinor } from '../catalogue/money.js';
import type { TaxLine } from '../orders/orders.model.js';
import type { TaxedOrderRow, TaxReportRepository } from './report.repository.js';

/** One country, rate and currency of the quarter: what the OSS return asks per member state and rate. */
export interface TaxReportRow {
  country: string;
  /** Percent with four places. */
  rate: string;
  currency: string;
  orders: number;
  /** Sales without tax, and the tax on them (decimal strings). */
  net: string;
  tax: string;
  refunds: number;
  refunded_net: string;
  refunded_tax: string;
  /** Sales less refunds: what is declared. */
  total_net: string;
  total_tax: string;
}

export interface ReverseChargeSale {
  order_id: number;
  paid_at: string;
  country: string;
  buyer_tax_id: string;
  currency: string;
  net: string;
}

export interface TaxReport {
  quarter: string;
  /** The quarter's first instant and the next quarter's first (UTC). */
  from: string;
  to: string;
  rows: TaxReportRow[];
  reverse_charge: ReverseChargeSale[];
}

/** `2026-Q4` → its UTC range; null for a malformed quarter. */
export function quarterRange(quarter: string): { from: string; to: string } | null {
  const m = /^(\d{4})-Q([1-4])$/.exec(quarter);
  if (!m) return null;
  const year = Number(m[1]);
  const q = Number(m[2]);
  if (year < 2000 || year > 2999) return null;
  const from = new Date(Date.UTC(year, (q - 1) * 3, 1));
  const to = new Date(Date.UTC(year, q * 3, 1));
  return { from: from.toISOString(), to: to.toISOString() };
}

interface Bucket {
  country: string;
  rate: string;
  currency: string;
  decimals: number;
  orders: number;
  net: number;
  tax: number;
  refunds: number;
  refundedNet: number;
  refundedTax: number;
}

const ratesOf = (o: Pick<TaxedOrderRow, 'tax_lines'>): TaxLine[] =>
  (JSON.parse(o.tax_lines) as TaxLine[]).filter((l) => Number(l.amount) !== 0);

/**
 * The tax report of a quarter (docs/taxes.md, 'The tax report'): tax collected per country of
 * the buyer, rate and currency, from the tax each paid order recorded per rate; refunds made in
 * the quarter come off in the same rows, their tax the order's in the proportion the refund bears
 * to the order's total (as the credit note computes it). Each rate's taxable amount is the
 * order's total without tax. Reverse-charge sales carry no VAT and are listed apart.
 */
export class TaxReportService {
  constructor(private readonly repo: TaxReportRepository) {}

  async report(quarter: string): Promise<TaxReport> {
    const range = quarterRange(quarter);
    if (!range) throw new ApiError('invalid_tax_quarter');
    const [sales, refunds] = await Promise.all([
      this.repo.sales(range.from, range.to),
      this.repo.refunds(range.from, range.to),
    ]);
    const buckets = new Map<string, Bucket>();
    const bucket = (o: TaxedOrderRow | Omit<TaxedOrderRow, 'paid_at'>, rate: string) => {
      const key = `${o.tax_country}|${rate}|${o.currency}`;
      let b = buckets.get(key);
      if (!b) {
        b = {
          country: o.tax_country,
          rate,
          currency: o.currency,
          decimals: o.decimals,
          orders: 0,
          net: 0,
          tax: 0,
          refunds: 0,
          refundedNet: 0,
          refundedTax: 0,
        };
        buckets.set(key, b);
      }
      return b;
    };
    const reverse: ReverseChargeSale[] = [];
    for (const o of sales) {
      if (o.reverse_charge === 1) {
        reverse.push({
          order_id: o.id,
          paid_at: o.paid_at,
          country: o.tax_country,
          buyer_tax_id: o.buyer_tax_id,
          currency: o.currency,
          net: fromMinor(o.total - o.total_tax, o.decimals),
        });
        continue;
      }
      for (const line of ratesOf(o)) {
        const b = bucket(o, line.rate);
        b.orders += 1;
        b.net += o.total - o.total_tax;
        b.tax += Number(line.amount);
      }
    }
    for (const r of refunds) {
      const lines = ratesOf(r);
      if (r.reverse_charge === 1 || lines.length === 0) continue;
      const tax = r.total > 0 ? Math.round((r.total_tax * r.amount) / r.total) : 0;
      const shares = allocate(
        tax,
        lines.map((l) => Math.max(0, Number(l.amount))),
      );
      lines.forEach((line, i) => {
        const b = bucket(r, line.rate);
        b.refunds += 1;
        b.refundedNet += r.amount - tax;
        b.refundedTax += shares[i]!;
      });
    }
    const rows = [...buckets.values()]
      .sort(
        (a, b) =>
          a.country.localeCompare(b.country) ||
          Number(a.rate) - Number(b.rate) ||
          a.currency.localeCompare(b.currency),
      )
      .map((b): TaxReportRow => {
        const money = (minor: number) => fromMinor(minor, b.decimals);
        return {
          country: b.country,
          rate: b.rate,
          currency: b.currency,
          orders: b.orders,
          net: money(b.net),
          tax: money(b.tax),
          refunds: b.refunds,
          refunded_net: money(b.refundedNet),
          refunded_tax: money(b.refundedTax),
          total_net: money(b.net - b.refundedNet),
          total_tax: money(b.tax - b.refundedTax),
        };
      });
    return { quarter, ...range, rows, reverse_charge: reverse };
  }
}

/** A CSV cell: quoted when it holds a comma, quote or line break; a leading =, +, - or @ defused. */
function cell(v: string | number): string {
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The report as CSV: the rows, then the reverse-charge sales under their own header. */
export function reportCsv(report: TaxReport): string {
  const lines: (string | number)[][] = [
    [
      'section',
      'country',
      'rate',
      'currency',
      'orders',
      'net',
      'tax',
      'refunds',
      'refunded_net',
      'refunded_tax',
      'total_net',
      'total_tax',
    ],
    ...report.rows.map((r) => [
      'sales',
      r.country,
      r.rate,
      r.currency,
      r.orders,
      r.net,
      r.tax,
      r.refunds,
      r.refunded_net,
      r.refunded_tax,
      r.total_net,
      r.total_tax,
    ]),
    [],
    ['section', 'order_id', 'paid_at', 'country', 'buyer_tax_id', 'currency', 'net'],
    ...report.reverse_charge.map((s) => [
      'reverse_charge',
      s.order_id,
      s.paid_at,
      s.country,
      s.buyer_tax_id,
      s.currency,
      s.net,
    ]),
  ];
  return `${lines.map((l) => l.map(cell).join(',')).join('\r\n')}\r\n`;
}
