import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link } from 'wouter';
import { type Answer, api, ok } from '../api';
import { ErrorNote, Loading, Page } from '../ui/feedback';
import { columnsFor, DataTable } from '../ui/table';

/** GET /v1/reports/tax (docs/taxes.md, 'The tax report'). */
type TaxReport = Answer<'/v1/reports/tax'>;
type Row = TaxReport['rows'][number];
type ReverseSale = TaxReport['reverse_charge'][number];

/** The quarter a date falls in, e.g. 2026-Q4 (UTC, as the report counts). */
const quarterOf = (d: Date) => `${d.getUTCFullYear()}-Q${Math.floor(d.getUTCMonth() / 3) + 1}`;

/** This quarter and the seven before it: two years of returns to look back on. */
function recentQuarters(): string[] {
  const now = new Date();
  return Array.from({ length: 8 }, (_, i) =>
    quarterOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 3 * i, 1))),
  );
}

const percent = (rate: string) => `${Number(rate)}%`;

/**
 * The quarter's tax per buyer's country and rate, as the OSS return asks for it: the figures to
 * copy into the return, refunds already subtracted, and the reverse-charge sales apart (they
 * go into the recapitulative statement, not the return).
 */
export function TaxReportPage() {
  const quarters = recentQuarters();
  const [quarter, setQuarter] = useState(quarters[0]!);
  const selectId = useId();
  const report = useQuery({
    queryKey: ['tax-report', quarter],
    queryFn: () => ok(api.GET('/v1/reports/tax', { params: { query: { quarter } } })),
  });
  const r = report.data;
  return (
    <Page title="Tax report">
      <p className="muted">
        Tax collected on paid orders, per buyer’s country and rate, with the refunds of the quarter taken off.
        Amounts are in each order’s currency. Check the figures before filing: this is not tax advice.
      </p>
      <div className="field-range">
        <label htmlFor={selectId}>Quarter</label>
        <select id={selectId} value={quarter} onChange={(e) => setQuarter(e.target.value)}>
          {quarters.map((q) => (
            <option key={q} value={q}>
              {q}
            </option>
          ))}
        </select>{' '}
        <a href={`/v1/reports/tax?quarter=${quarter}&format=csv`} download>
          Download {quarter} as CSV
        </a>
      </div>
      <ErrorNote error={report.error} />
      {report.isPending ? (
        <Loading what="the tax report" />
      ) : r ? (
        <>
          <DataTable
            caption={`Tax per country and rate, ${r.quarter}`}
            columns={rowColumns}
            data={r.rows}
            rowKey={(x) => `${x.country} ${x.rate} ${x.currency}`}
            empty="No taxed sale this quarter."
          />
          <h2>Reverse-charge sales</h2>
          <p className="muted">Sold without VAT to businesses in other EU countries, by their VAT number.</p>
          <DataTable
            caption={`Reverse-charge sales, ${r.quarter}`}
            columns={reverseColumns}
            data={r.reverse_charge}
            rowKey={(x) => String(x.order_id)}
            empty="No reverse-charge sale this quarter."
          />
        </>
      ) : null}
    </Page>
  );
}

const col = columnsFor<Row>();
const rowColumns = [
  col.accessor('country', { header: 'Country' }),
  col.accessor('rate', { header: 'Rate', cell: (c) => percent(c.getValue()) }),
  col.accessor('currency', { header: 'Currency' }),
  col.accessor('orders', { header: 'Orders' }),
  col.accessor('net', { header: 'Sales without tax' }),
  col.accessor('tax', { header: 'Tax' }),
  col.accessor('refunded_tax', { header: 'Tax refunded' }),
  col.accessor('total_net', { header: 'Net to declare' }),
  col.accessor('total_tax', { header: 'Tax to declare' }),
];

const rc = columnsFor<ReverseSale>();
const reverseColumns = [
  rc.accessor('order_id', {
    header: 'Order',
    cell: (c) => <Link href={`/orders/${c.getValue()}`}>#{c.getValue()}</Link>,
  }),
  rc.accessor('paid_at', { header: 'Paid', cell: (c) => c.getValue().slice(0, 10) }),
  rc.accessor('buyer_tax_id', { header: 'VAT number' }),
  rc.accessor('country', { header: 'Billing country' }),
  rc.accessor('currency', { header: 'Currency' }),
  rc.accessor('net', { header: 'Amount' }),
];
