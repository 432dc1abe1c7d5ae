import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { type Answer, api, ok } from '../api';
import { ErrorNote, Loading } from '../ui/feedback';
import { columnsFor, DataTable } from '../ui/table';

/** GET /v1/software/products/{id}/field (docs/api.md, 'Reports'). */
export type InstalledBaseReport = Answer<'/v1/software/products/{product_id}/field'>;

const RANGES = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 365 days' },
];
/** Versions with a colour of their own in the bars; the others share "Older". */
const COLOURED = 6;

const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part * 1000) / whole) / 10);

type DayRow = InstalledBaseReport['days'][number];
type PlatformRow = InstalledBaseReport['platforms'][number];
type PhpRow = InstalledBaseReport['php'][number];

/**
 * "In the field" on a product's page (docs/admin.md, 'In the field'): how many sites ran each
 * version day by day, and the platform and PHP versions of the last day with sites, so a vendor
 * can see an update being taken up and decide when to stop supporting an old PHP. Each bar is
 * drawn beside its figures in words, and hidden from screen readers, which read the figures.
 */
export function InstalledBaseSection({ productId }: { productId: number }) {
  const [days, setDays] = useState(30);
  const selectId = useId();
  const report = useQuery({
    queryKey: ['field', productId, days],
    // The server counts the days from its own today.
    queryFn: () =>
      ok(
        api.GET('/v1/software/products/{product_id}/field', {
          params: { path: { product_id: productId }, query: { days } },
        }),
      ),
    placeholderData: (previous) => previous,
  });
  const r = report.data;
  return (
    <section aria-labelledby="field" className="field">
      <h2 id="field">In the field</h2>
      <p className="muted">
        Sites that checked for updates or validated their license, counted once a day each, by the version
        they run; and the WordPress and PHP versions they run on. No site's address is kept.
      </p>
      <div className="field-range">
        <label htmlFor={selectId}>Days</label>
        <select id={selectId} value={days} onChange={(e) => setDays(Number(e.target.value))}>
          {RANGES.map((o) => (
            <option key={o.days} value={o.days}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <ErrorNote error={report.error} />
      {report.isPending ? (
        <Loading what="the installed-base report" />
      ) : r ? (
        r.as_of === null ? (
          <p className="empty">
            No site has reported in these days. Sites are counted when they check for updates or validate with
            the SDKs, which send their version, WordPress and PHP versions.
          </p>
        ) : (
          <FieldFigures report={r} />
        )
      ) : null}
    </section>
  );
}

function FieldFigures({ report }: { report: InstalledBaseReport }) {
  // Colours follow the versions of the whole range, newest first: one version keeps its colour.
  const order: string[] = [];
  for (const d of [...report.days].reverse())
    for (const v of d.versions) if (!order.includes(v.version)) order.push(v.version);
  const colourOf = (version: string) => {
    const i = order.indexOf(version);
    return i >= 0 && i < COLOURED ? `v${i}` : 'older';
  };
  const shown = report.days.filter((d) => d.sites > 0).reverse();
  return (
    <>
      <h3>Versions, day by day</h3>
      <ul className="field-legend" aria-label="Colours of the versions">
        {order.slice(0, COLOURED).map((v) => (
          <li key={v}>
            <span className={`swatch ${colourOf(v)}`} aria-hidden="true" /> {v}
          </li>
        ))}
        {order.length > COLOURED ? (
          <li>
            <span className="swatch older" aria-hidden="true" /> Older
          </li>
        ) : null}
      </ul>
      <DataTable
        caption="Sites per version and day, newest day first"
        columns={dayColumns(colourOf)}
        data={shown}
        rowKey={(d) => d.day}
        empty="No site reported."
      />
      <h3>Platforms on {report.as_of}</h3>
      <p className="muted">
        Of the {report.sites} {report.sites === 1 ? 'site' : 'sites'} counted that day; sites that sent no
        platform or PHP version are left out.
      </p>
      <DataTable
        caption={`Platform versions on ${report.as_of}`}
        columns={platformColumns}
        data={report.platforms}
        rowKey={(p) => `${p.platform} ${p.version}`}
        empty="No site sent its platform."
      />
      <DataTable
        caption={`PHP versions on ${report.as_of}`}
        columns={phpColumns}
        data={report.php}
        rowKey={(p) => p.version}
        empty="No site sent its PHP version."
      />
    </>
  );
}

function Share({ share }: { share: number }) {
  return (
    <span className="field-share">
      <span className="field-bar" aria-hidden="true">
        <span className="field-seg v0" style={{ width: `${share}%` }} />
      </span>
      {share}%
    </span>
  );
}

const dayCol = columnsFor<DayRow>();
function dayColumns(colourOf: (v: string) => string) {
  return [
    dayCol.accessor('day', { header: 'Day' }),
    dayCol.accessor('sites', { header: 'Sites' }),
    dayCol.accessor('versions', {
      id: 'versions',
      header: 'Versions',
      cell: (c) => {
        const d = c.row.original;
        return (
          <div className="field-day">
            <span className="field-bar stacked" aria-hidden="true">
              {d.versions.map((v) => (
                <span
                  key={v.version}
                  className={`field-seg ${colourOf(v.version)}`}
                  style={{ width: `${(v.sites * 100) / d.sites}%` }}
                />
              ))}
            </span>
            <span>
              {d.versions.map((v, i) => (
                <span key={v.version} className="field-version">
                  {i > 0 ? ', ' : ''}
                  {v.version}: {v.sites} ({percent(v.sites, d.sites)}%)
                </span>
              ))}
            </span>
          </div>
        );
      },
    }),
  ];
}

const platformCol = columnsFor<PlatformRow>();
const platformColumns = [
  platformCol.accessor('platform', { header: 'Platform' }),
  platformCol.accessor('version', { header: 'Version', cell: (c) => c.getValue() || 'not sent' }),
  platformCol.accessor('sites', { header: 'Sites' }),
  platformCol.accessor('share', { header: 'Share', cell: (c) => <Share share={c.getValue()} /> }),
];

const phpCol = columnsFor<PhpRow>();
const phpColumns = [
  phpCol.accessor('version', { header: 'PHP', cell: (c) => `PHP ${c.getValue()}` }),
  phpCol.accessor('sites', { header: 'Sites' }),
  phpCol.accessor('share', { header: 'Share', cell: (c) => <Share share={c.getValue()} /> }),
];
