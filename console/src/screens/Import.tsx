import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { type Answer, api, ok } from '../api';
import { when } from '../format';
import { Badge, ErrorNote, Notice, Page } from '../ui/feedback';
import { TextField } from '../ui/form';
import { RowButton } from '../ui/list';
import { columnsFor, DataTable } from '../ui/table';

/** GET /v1/imports/{id} (docs/migrating.md, 'From the console'). */
type Job = Answer<'/v1/imports/{id}'>;
type Report = NonNullable<Job['report']>;
type Summary = Answer<'/v1/imports'>[number];
type Source = Job['source'];

const SOURCES: { value: Source; label: string; hint: string }[] = [
  { value: 'csv', label: 'CSV files', hint: "Tollgate's generic CSV format" },
  {
    value: 'edd',
    label: 'Easy Digital Downloads',
    hint: 'with Software Licensing, from its WordPress database',
  },
  {
    value: 'woocommerce',
    label: 'WooCommerce',
    hint: 'with License Manager for WooCommerce or the API Manager',
  },
  { value: 'freemius', label: 'Freemius', hint: 'its exported CSV files' },
];
const sourceName = (s: string) => SOURCES.find((x) => x.value === s)?.label ?? s;

/** The kinds of records, in the order they are imported, with their names for people. */
const KINDS: [keyof Job['counts'], string][] = [
  ['customers', 'Customers'],
  ['products', 'Products'],
  ['releases', 'Releases'],
  ['orders', 'Orders'],
  ['subscriptions', 'Subscriptions'],
  ['licenses', 'Licenses'],
  ['activations', 'Sites'],
];
const kindName = (k: string) => KINDS.find(([v]) => v === k)?.[1] ?? k;

const STATUS_WORDS: Record<Job['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

const FAILURES: Record<string, string> = {
  interrupted:
    'The server stopped during the import. Run it again: what it made already is found, not made twice.',
  source_unavailable: 'The old store could not be read.',
  import_failed: 'The import stopped on an unexpected error.',
};

const active = (job: { status: string } | undefined) => job?.status === 'queued' || job?.status === 'running';
const number = (n: number) => n.toLocaleString('en-US');

/**
 * Import (docs/migrating.md, 'From the console'): choose the old store, run a dry run or the
 * import as a job on the server (POST /v1/imports), follow its progress (GET /v1/imports/{id},
 * polled while it runs), then read its report: counts per kind, the reconciliation, the rows not
 * imported. The recent jobs are listed below; a job still running when the screen opens is followed.
 */
export function Import() {
  const client = useQueryClient();
  const [source, setSource] = useState<Source>('csv');
  const [dir, setDir] = useState('');
  const [dbUrl, setDbUrl] = useState('');
  const [prefix, setPrefix] = useState('wp_');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [jobId, setJobId] = useState<number | null>(null);
  const sourceLegend = useId();
  const recent = useQuery({
    queryKey: ['imports'],
    queryFn: () => ok(api.GET('/v1/imports')),
    refetchInterval: (q) => (q.state.data?.some(active) ? 2000 : false),
  });
  const job = useQuery({
    queryKey: ['imports', jobId],
    queryFn: () => ok(api.GET('/v1/imports/{id}', { params: { path: { id: jobId as number } } })),
    enabled: jobId !== null,
    refetchInterval: (q) => (q.state.data === undefined || active(q.state.data) ? 500 : false),
  });
  const running = active(job.data);

  // Opening the screen while an import runs follows that import.
  const first = recent.data?.[0];
  useEffect(() => {
    if (jobId === null && first && active(first)) setJobId(first.id);
  }, [first, jobId]);
  // A job that ended refreshes the list of recent jobs.
  const ended = job.data && !active(job.data) ? job.data.id : null;
  useEffect(() => {
    if (ended !== null) client.invalidateQueries({ queryKey: ['imports'], exact: true });
  }, [ended, client]);

  const wantsDir = source === 'csv' || source === 'freemius';
  const start = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    setError(null);
    setBusy(true);
    try {
      const started = await ok(
        api.POST('/v1/imports', {
          body: {
            source,
            dry_run: submitter?.value !== 'import',
            ...(wantsDir ? { dir: dir.trim() } : { db_url: dbUrl.trim(), table_prefix: prefix.trim() }),
          },
        }),
      );
      client.setQueryData(['imports', started.id], started);
      setJobId(started.id);
      await client.invalidateQueries({ queryKey: ['imports'], exact: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="Import">
      <p className="lead">
        Move customers, products, licenses and their sites from the store you used before. License keys stay
        as they were. Run a dry run first: it reads and checks everything and writes nothing. Running an
        import again is safe: what it made before is found, not made twice.
      </p>
      <form className="card" onSubmit={start} aria-label="Start an import">
        <fieldset aria-labelledby={sourceLegend}>
          <legend id={sourceLegend}>Import from</legend>
          {SOURCES.map((s) => (
            <label key={s.value} className="check">
              <input
                type="radio"
                name="source"
                value={s.value}
                checked={source === s.value}
                onChange={() => setSource(s.value)}
              />{' '}
              <span>
                {s.label} <span className="muted">({s.hint})</span>
              </span>
            </label>
          ))}
        </fieldset>
        {wantsDir ? (
          <SourceField
            label="Folder on the server"
            hint="A folder inside the store's data folder's imports folder (its name there, e.g. acme-export), or inside a folder named in IMPORT_ROOTS."
            value={dir}
            onChange={setDir}
          />
        ) : (
          <div className="two">
            <SourceField
              label="Database URL"
              hint="mysql://user:password@host/database, read only by this import: never stored nor shown."
              value={dbUrl}
              onChange={setDbUrl}
              secret
            />
            <SourceField
              label="Table prefix"
              hint="As in wp-config.php."
              value={prefix}
              onChange={setPrefix}
            />
          </div>
        )}
        <ErrorNote error={error} title="The import did not start" />
        <div className="buttons">
          <button type="submit" value="dry-run" className="primary" disabled={busy || running}>
            Dry run
          </button>
          <button type="submit" value="import" disabled={busy || running}>
            Import
          </button>
        </div>
      </form>
      <ErrorNote error={job.error} />
      {job.data ? <JobView job={job.data} /> : null}
      <h2>Recent imports</h2>
      <ErrorNote error={recent.error} />
      <DataTable
        caption="Recent imports, newest first"
        columns={recentColumns((id) => setJobId(id), jobId)}
        data={recent.data ?? []}
        empty="No import has been run from the console yet."
      />
    </Page>
  );
}

/** A job: its progress while it runs, then its outcome and report. */
function JobView({ job }: { job: Job }) {
  const progressId = useId();
  const what = `${job.dry_run ? 'Dry run' : 'Import'} #${job.id} from ${sourceName(job.source)}`;
  return (
    <section aria-labelledby={`${progressId}-h`} className="card">
      <h2 id={`${progressId}-h`}>{what}</h2>
      <div className="progress">
        <label htmlFor={progressId}>
          {job.total === null
            ? `${STATUS_WORDS[job.status]}: reading the source…`
            : `${STATUS_WORDS[job.status]}: ${number(job.processed)} of ${number(job.total)} records`}
        </label>
        {job.total === null || job.total === 0 ? (
          <progress id={progressId} {...(job.status === 'done' ? { max: 1, value: 1 } : {})} />
        ) : (
          <progress id={progressId} max={job.total} value={Math.min(job.processed, job.total)} />
        )}
      </div>
      {job.status === 'failed' ? (
        <div className="note error" role="alert" data-code={job.failure?.reason}>
          <strong>{what} failed: </strong>
          {FAILURES[job.failure?.reason ?? ''] ?? job.failure?.reason}
          {job.failure?.message ? (
            <>
              {' '}
              <span className="wrap-anywhere">({job.failure.message})</span>
            </>
          ) : null}
        </div>
      ) : null}
      {job.status === 'done' && job.report ? <ReportView report={job.report} dryRun={job.dry_run} /> : null}
    </section>
  );
}

type CountRow = { kind: string; created: number; present: number; skipped: number };
type Reconciled = Report['reconciliation'][number];
type Problem = Report['problems'][number];

/** A required text field of the import form; `secret` for the database URL (never shown, never filled in). */
function SourceField({
  label,
  hint,
  value,
  onChange,
  secret = false,
}: {
  label: string;
  hint: string;
  value: string;
  onChange: (value: string) => void;
  secret?: boolean;
}) {
  return (
    <TextField
      label={label}
      hint={hint}
      {...(secret ? { type: 'password', autoComplete: 'off' } : {})}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      required
      spellCheck={false}
    />
  );
}

function ReportView({ report, dryRun }: { report: Report; dryRun: boolean }) {
  const counts: CountRow[] = KINDS.map(([kind]) => ({ kind, ...report.counts[kind] })).filter(
    (c) => c.created + c.present + c.skipped > 0,
  );
  return (
    <>
      <Notice>
        {report.ok
          ? `${dryRun ? 'Dry run done, nothing written' : 'Import done'}: every row of the source is ${dryRun ? 'importable' : 'in Tollgate'} or listed below.`
          : 'Done, but the figures do not reconcile: see the table below.'}
      </Notice>
      <h3>Per kind of record</h3>
      <DataTable
        caption={dryRun ? 'What the import would do, per kind' : 'What the import did, per kind'}
        columns={countColumns(dryRun)}
        data={counts}
        rowKey={(c) => c.kind}
        empty="The source holds no records."
      />
      <h3>Reconciliation</h3>
      <DataTable
        caption="Reconciliation: the source's rows are imported or reported"
        columns={reconciliationColumns}
        data={report.reconciliation}
        rowKey={(r) => r.kind}
        empty="Nothing to reconcile."
      />
      <h3>Revenue</h3>
      <DataTable
        caption="Paid orders per currency: the source's revenue is imported or reported"
        columns={revenueColumns}
        data={report.revenue}
        rowKey={(r) => r.currency}
        empty="The source holds no paid orders."
      />
      {report.stripe.customers > 0 ? (
        <p>
          {number(report.stripe.customers)} Stripe {report.stripe.customers === 1 ? 'customer' : 'customers'}{' '}
          kept, {number(report.stripe.cards)} with the card their subscriptions renew on.
        </p>
      ) : null}
      {report.links && report.links.orders + report.links.subscriptions > 0 ? (
        <p>
          Licenses of earlier imports linked now: {number(report.links.orders)} to their order,{' '}
          {number(report.links.subscriptions)} to their subscription.
        </p>
      ) : null}
      {report.old_gateways && report.old_gateways.length > 0 ? (
        <>
          <h3>Cancel these at the old gateway</h3>
          <p>
            These subscriptions still renew, and their gateway bills them by itself: Tollgate cannot ask it
            whether it still does. Cancel each one there (or in the old store) before its next payment, or the
            customer pays twice: once there, once for Tollgate's renewal.
          </p>
          <DataTable
            caption="Subscriptions the old gateway still bills by itself"
            columns={oldGatewayColumns}
            data={report.old_gateways}
            rowKey={(g) => g.subscription}
            empty=""
          />
        </>
      ) : null}
      <h3>
        {report.problem_count === 0
          ? 'Every row can be imported'
          : `${number(report.problem_count)} ${report.problem_count === 1 ? 'row' : 'rows'} not imported`}
      </h3>
      {report.problem_count > report.problems.length ? (
        <p className="muted">The first {number(report.problems.length)} are listed.</p>
      ) : null}
      {report.problems.length > 0 ? (
        <DataTable
          caption="Rows not imported, and why"
          columns={problemColumns}
          data={report.problems}
          rowKey={(p) => `${p.kind} ${p.source_id} ${p.reason}`}
          empty=""
        />
      ) : null}
    </>
  );
}

const cc = columnsFor<CountRow>();
const countColumns = (dryRun: boolean) => [
  cc.accessor('kind', { header: 'Records', cell: (c) => kindName(c.getValue()) }),
  cc.accessor('created', {
    header: dryRun ? 'Would be made' : 'Made now',
    cell: (c) => number(c.getValue()),
  }),
  cc.accessor('present', { header: 'Already there', cell: (c) => number(c.getValue()) }),
  cc.accessor('skipped', { header: 'Not imported', cell: (c) => number(c.getValue()) }),
];

const rc = columnsFor<Reconciled>();
const reconciliationColumns = [
  rc.accessor('kind', { header: 'Records', cell: (c) => kindName(c.getValue()) }),
  rc.accessor('source', { header: 'In the source', cell: (c) => number(c.getValue()) }),
  rc.accessor('imported', { header: 'Imported', cell: (c) => number(c.getValue()) }),
  rc.accessor('skipped', { header: 'Not imported', cell: (c) => number(c.getValue()) }),
  rc.accessor('ok', {
    header: 'Reconciled',
    cell: (c) => (c.getValue() ? <Badge value="ok" label="Yes" /> : <Badge value="failed" label="No" />),
  }),
];

type Revenue = Report['revenue'][number];
/** An amount in minor units of `currency`, written with that currency's decimals. */
function inCurrency(minor: number, currency: string): string {
  try {
    const format = new Intl.NumberFormat('en', { style: 'currency', currency });
    return format.format(minor / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
  } catch {
    // A code the browser does not know (the source's own spelling): the minor units as they are.
    return `${number(minor)} ${currency} (minor units)`;
  }
}
const vc = columnsFor<Revenue>();
const revenueColumns = [
  vc.accessor('currency', { header: 'Currency' }),
  vc.accessor('source', {
    header: 'In the source',
    cell: (c) => inCurrency(c.getValue(), c.row.original.currency),
  }),
  vc.accessor('imported', {
    header: 'Imported',
    cell: (c) => inCurrency(c.getValue(), c.row.original.currency),
  }),
  vc.accessor('skipped', {
    header: 'Not imported',
    cell: (c) => inCurrency(c.getValue(), c.row.original.currency),
  }),
  vc.accessor('ok', {
    header: 'Reconciled',
    cell: (c) => (c.getValue() ? <Badge value="ok" label="Yes" /> : <Badge value="failed" label="No" />),
  }),
];

type OldGateway = NonNullable<Report['old_gateways']>[number];
const gc = columnsFor<OldGateway>();
const oldGatewayColumns = [
  gc.accessor('subscription', {
    header: 'Subscription in the source',
    cell: (c) => <span className="wrap-anywhere">{c.getValue()}</span>,
  }),
  gc.accessor('gateway', { header: 'Gateway', cell: (c) => c.getValue() || '—' }),
  gc.accessor('gateway_profile_id', {
    header: "Gateway's id",
    cell: (c) => <code className="wrap-anywhere">{c.getValue()}</code>,
  }),
  gc.accessor('next_payment_at', {
    header: 'Next payment',
    cell: (c) => (c.getValue() ? when(c.getValue()!) : '—'),
  }),
];

const pc = columnsFor<Problem>();
const problemColumns = [
  pc.accessor('kind', { header: 'Records', cell: (c) => kindName(c.getValue()) }),
  pc.accessor('source_id', {
    header: 'Id in the source',
    cell: (c) => <span className="wrap-anywhere">{c.getValue()}</span>,
  }),
  pc.accessor('reason', { header: 'Reason', cell: (c) => <code>{c.getValue()}</code> }),
  pc.accessor('detail', {
    header: 'Value',
    cell: (c) => (c.getValue() ? <span className="wrap-anywhere">{c.getValue()}</span> : '—'),
  }),
];

const jc = columnsFor<Summary>();
const recentColumns = (show: (id: number) => void, shown: number | null) => [
  jc.accessor('created_at', { header: 'Started', cell: (c) => when(c.getValue()) }),
  jc.accessor('source', { header: 'From', cell: (c) => sourceName(c.getValue()) }),
  jc.accessor('dry_run', { header: 'Kind', cell: (c) => (c.getValue() ? 'Dry run' : 'Import') }),
  jc.accessor('status', {
    header: 'Status',
    cell: (c) => <Badge value={c.getValue()} label={STATUS_WORDS[c.getValue()]} />,
  }),
  jc.accessor('processed', {
    header: 'Records',
    cell: (c) =>
      c.row.original.total === null
        ? number(c.getValue())
        : `${number(c.getValue())} of ${number(c.row.original.total)}`,
  }),
  jc.display({
    id: 'actions',
    header: 'Actions',
    cell: (c) => (
      <RowButton
        label="Show"
        row={`${c.row.original.dry_run ? 'dry run' : 'import'} #${c.row.original.id}`}
        disabled={shown === c.row.original.id}
        onClick={() => show(c.row.original.id)}
      />
    ),
  }),
];
