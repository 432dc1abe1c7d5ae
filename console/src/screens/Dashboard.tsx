import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactNode, useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { Link } from 'wouter';
import { type Answer, api, ok } from '../api';
import { when } from '../format';
import { Badge, ErrorNote, Loading, Page } from '../ui/feedback';
import { ChoiceSelect } from '../ui/list';
import { columnsFor, DataTable } from '../ui/table';
import { useUrlState } from '../ui/url';
import { FirstHour } from './FirstHour';

/** GET /v1/reports/dashboard (docs/api.md, 'Reports'). */
type Report = Answer<'/v1/reports/dashboard'>;
type DayCount = Report['activations']['per_day'][number];

/** Amounts of several currencies on one line: "98.00 USD · 20.00 EUR", or "0". */
const amounts = (rows: { currency: string; total: string }[]) =>
  rows.length === 0 ? '0' : rows.map((s) => `${s.total} ${s.currency}`).join(' · ');
const percent = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1 });

const PERIODS = [
  ['7', 'Last 7 days'],
  ['30', 'Last 30 days'],
  ['90', 'Last 90 days'],
] as const;

/** Line colours, each at least 3:1 against white, told apart by the legend's words too. */
const COLOURS = ['#1f5fbf', '#b42318', '#2f7a4a', '#8a4baf', '#9a5b00', '#0f6e7a'];

const number = new Intl.NumberFormat('en');
/** Axis steps for counts: never 0.2 of an update check. */
const WHOLE_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8,
];
const orders = (n: number) => `${number.format(n)} ${n === 1 ? 'order' : 'orders'}`;
const shortDay = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
const dayLabel = (day: string) => shortDay.format(new Date(`${day}T00:00:00Z`));

interface Line {
  label: string;
  /** Counts step by whole numbers on the axis; money does not. */
  whole?: boolean;
  values: number[];
  /** How a value reads in the data table. */
  text: (i: number) => string;
}

interface Row {
  day: string;
  cells: string[];
}

/**
 * One chart: a uPlot canvas sized to its container (so it fits a phone), a caption, and the same
 * figures as a table the owner can open: the canvas itself is hidden from screen readers.
 */
function Chart({ id, title, days, lines }: { id: string; title: string; days: string[]; lines: Line[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const width = () => Math.max(200, Math.floor(el.clientWidth));
    const height = () => (el.clientWidth < 500 ? 200 : 240);
    const plot = new uPlot(
      {
        width: width(),
        height: height(),
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        // Days are UTC days: the axis shows them as such whatever the browser's time zone.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [{}, lines.some((l) => l.whole) ? { size: 56, incrs: WHOLE_STEPS } : { size: 56 }],
        series: [
          {},
          ...lines.map((l, i) => ({
            label: l.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            points: { show: days.length <= 31 },
          })),
        ],
      },
      [xs, ...lines.map((l) => l.values)],
      el,
    );
    const resized = new ResizeObserver(() => plot.setSize({ width: width(), height: height() }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [days, lines]);

  const col = columnsFor<Row>();
  const columns = [
    col.accessor('day', { header: 'Day', cell: (c) => dayLabel(c.getValue()) }),
    ...lines.map((l, i) => col.accessor((r) => r.cells[i], { id: `s${i}`, header: l.label })),
  ];
  const rows: Row[] = days.map((day, d) => ({ day, cells: lines.map((l) => l.text(d)) })).reverse();
  return (
    <figure className="chart" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>
        <h2>{title}</h2>
        <ul className="legend">
          {lines.map((l, i) => (
            <li key={l.label}>
              <span
                className="swatch"
                style={{ background: COLOURS[i % COLOURS.length] }}
                aria-hidden="true"
              />
              {l.label}
            </li>
          ))}
        </ul>
      </figcaption>
      <div ref={box} className="plot" aria-hidden="true" />
      <details>
        <summary>Show the figures as a table</summary>
        <DataTable
          caption={`${title}, newest day first`}
          columns={columns}
          data={rows}
          rowKey={(r) => r.day}
          empty="No days."
        />
      </details>
    </figure>
  );
}

const countLine = (label: string, s: { per_day: DayCount[] }): Line => {
  const values = s.per_day.map((d) => d.count);
  return { label, values, whole: true, text: (i) => number.format(values[i] ?? 0) };
};

function Figure({ label, value, children }: { label: string; value: string; children?: ReactNode }) {
  return (
    <li className="figure card">
      <span className="figure-label">{label}</span>
      <span className="figure-value">{value}</span>
      {children}
    </li>
  );
}

/** The dashboard: the console's home (docs/admin.md, 'Dashboard'). */
export function Dashboard() {
  const [params, set] = useUrlState();
  const wanted = params.get('days') ?? '30';
  const days = PERIODS.some(([v]) => v === wanted) ? wanted : '30';
  const report = useQuery({
    queryKey: ['reports', 'dashboard', days],
    queryFn: () => ok(api.GET('/v1/reports/dashboard', { params: { query: { days: Number(days) } } })),
    placeholderData: keepPreviousData,
  });
  const r = report.data;

  return (
    <Page title="Dashboard">
      <FirstHour />
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <ChoiceSelect
          label="Period"
          value={days}
          choices={PERIODS}
          onChange={(v) => set({ days: v === '30' ? undefined : v })}
        />
      </form>
      <ErrorNote error={report.error} />
      {report.isPending ? <Loading what="the dashboard" /> : r ? <Figures r={r} /> : null}
    </Page>
  );
}

function Figures({ r }: { r: Report }) {
  const days = useMemo(() => r.new_licenses.per_day.map((d) => d.day), [r]);
  const period = `${dayLabel(r.from)} – ${dayLabel(r.to)} (UTC)`;
  // Built once per answer: a chart is drawn again only when its figures change.
  const { salesLines, activity, software } = useMemo(
    () => ({
      salesLines: r.sales.map((s): Line => {
        const values = s.per_day.map((d) => d.total_minor / 10 ** s.decimals);
        return {
          label: s.currency,
          values,
          text: (i) => `${s.per_day[i]?.total ?? '0'} (${orders(s.per_day[i]?.orders ?? 0)})`,
        };
      }),
      activity: [countLine('New licenses', r.new_licenses), countLine('New activations', r.activations)],
      software: [countLine('Update checks', r.update_checks), countLine('Downloads', r.downloads)],
    }),
    [r],
  );
  const failing = r.failing_webhooks;

  return (
    <>
      <p className="muted">{period}</p>
      <ul className="figures" aria-label="Figures">
        <Figure
          label="Sales"
          value={r.sales.length === 0 ? '0' : r.sales.map((s) => `${s.total} ${s.currency}`).join(' · ')}
        >
          <span className="figure-note">
            {orders(r.sales.reduce((n, s) => n + s.orders, 0))} paid · <Link href="/orders">Orders</Link>
          </span>
        </Figure>
        <Figure label="New licenses" value={number.format(r.new_licenses.total)}>
          <Link href="/licenses" className="figure-note">
            Licenses
          </Link>
        </Figure>
        <Figure label="Active activations" value={number.format(r.activations.active)}>
          <span className="figure-note">
            {r.activations.staging > 0 ? `${number.format(r.activations.staging)} on staging sites, ` : ''}
            {number.format(r.activations.total)} new in the period
          </span>
        </Figure>
        {/* Their definitions: docs/selling.md, 'Reports'. */}
        <Figure
          label="Renewal rate"
          value={r.renewal_rate.rate === null ? '–' : percent.format(r.renewal_rate.rate)}
        >
          <span className="figure-note">
            {number.format(r.renewal_rate.renewals)} renewed, {number.format(r.renewal_rate.lapsed)} lapsed
          </span>
        </Figure>
        <Figure label="Upgrade revenue" value={amounts(r.upgrade_revenue)}>
          <span className="figure-note">
            {number.format(r.upgrade_revenue.reduce((n, u) => n + u.items, 0))} upgrades in the period
          </span>
        </Figure>
        <Figure label="Monthly recurring revenue" value={amounts(r.mrr)}>
          <span className="figure-note">
            {number.format(r.mrr.reduce((n, m) => n + m.subscriptions, 0))} subscriptions billing now
          </span>
        </Figure>
        <Figure label="Releases waiting as drafts" value={number.format(r.drafts.count)}>
          {r.drafts.latest.length > 0 ? (
            <ul className="figure-list">
              {r.drafts.latest.map((d) => (
                <li key={d.release_id}>
                  <Link href={`/products/${d.product_id}/releases`}>
                    {d.product_name || `Product #${d.product_id}`} {d.version}
                  </Link>
                </li>
              ))}
            </ul>
          ) : null}
        </Figure>
        <Figure label="Failing webhooks" value={number.format(failing.count)}>
          <Link href="/webhooks" className="figure-note">
            Webhooks
          </Link>
        </Figure>
      </ul>

      <div className="charts">
        <Chart id="chart-sales" title="Sales per day, by currency" days={days} lines={salesLines} />
        <Chart
          id="chart-licenses"
          title="New licenses and activations per day"
          days={days}
          lines={activity}
        />
        <Chart id="chart-software" title="Update checks and downloads per day" days={days} lines={software} />
      </div>
      {r.sales.length === 0 ? <p className="muted">No paid order in the period.</p> : null}

      {failing.latest.length > 0 ? (
        <section aria-labelledby="failing">
          <h2 id="failing">Failing webhooks</h2>
          <FailingTable rows={failing.latest} />
          <p>
            <Link href="/webhooks">Open the webhook log to redeliver</Link>
          </p>
        </section>
      ) : null}
    </>
  );
}

const failCol = columnsFor<Report['failing_webhooks']['latest'][number]>();
const failColumns = [
  failCol.accessor('failed_at', { header: 'Last attempt', cell: (c) => when(c.getValue()) }),
  failCol.accessor('event', { header: 'Event', cell: (c) => <code>{c.getValue()}</code> }),
  failCol.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} /> }),
  failCol.accessor('attempts', { header: 'Attempts' }),
  failCol.accessor((w) => (w.response_code === null ? (w.error ?? '—') : `HTTP ${w.response_code}`), {
    id: 'why',
    header: 'Status code or error',
  }),
];

function FailingTable({ rows }: { rows: Report['failing_webhooks']['latest'] }) {
  return (
    <DataTable
      caption="The latest failing webhook events"
      columns={failColumns}
      data={rows}
      rowKey={(w) => w.event_id}
      empty="No failing webhook."
    />
  );
}
