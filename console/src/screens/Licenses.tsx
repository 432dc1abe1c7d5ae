import { Link } from 'wouter';
import { api, ok } from '../api';
import { day, limit } from '../format';
import { inputLimits } from '../limits';
import type { LicenseListItem } from '../resources';
import { Page, StatusBadge } from '../ui/feedback';
import { FilterSelect, ListFilters, PagedList, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';
import { TEST_CHOICES } from './Orders';
import { ProductFilter } from './Products';

const col = columnsFor<LicenseListItem>();
/** A license's key, linked to its page (in every list of licenses). */
export const licenseKeyColumn = col.accessor('license_key', {
  header: 'License key',
  cell: (c) => (
    <Link href={`/licenses/${c.row.original.id}`} className="key">
      {c.getValue()}
    </Link>
  ),
});
/** A license's status, “expired” for an active one past its end (the API keeps it `active`). */
export const licenseStatusColumn = col.accessor('status', {
  header: 'Status',
  cell: (c) => (
    <StatusBadge
      value={c.row.original.is_expired && c.getValue() === 'active' ? 'expired' : c.getValue()}
      test={c.row.original.test}
    />
  ),
});
const columns = [
  licenseKeyColumn,
  col.accessor('product_name', {
    header: 'Product',
    cell: (c) => {
      const v = c.row.original.variation_name;
      return v ? `${c.getValue()} — ${v}` : c.getValue();
    },
  }),
  col.accessor('user_email', { header: 'Customer' }),
  licenseStatusColumn,
  col.accessor('activation_count', {
    header: 'Sites',
    cell: (c) => `${c.getValue()} of ${limit(c.row.original.activation_limit)}`,
  }),
  col.accessor('expires_at', { header: 'Expires', cell: (c) => day(c.getValue(), 'never') }),
  col.accessor('created_at', { header: 'Issued', cell: (c) => day(c.getValue()) }),
];

/** Licenses: search, filter by status and product, server pages (GET /v1/licenses). */
export function Licenses() {
  // The server sorts (docs/licensing.md, section 7); '' is its default, newest first.
  const l = useServerList({
    key: ['licenses'],
    names: ['search', 'status', 'product_id', 'test', 'sort', 'order'],
    fetchPage: (query) =>
      ok(api.GET('/v1/licenses', { params: { query } })).then((r) => ({ rows: r.licenses, total: r.total })),
  });

  return (
    <Page
      title="Licenses"
      actions={
        <Link href="/licenses/new" className="button primary">
          New license
        </Link>
      }
    >
      <ListFilters
        label="Search licenses"
        params={l}
        placeholder="Key or its end, email, domain, installation id"
        searchMaxLength={inputLimits('licenseSearch', 'search').maxLength}
        sorts={[
          ['', 'Newest first'],
          ['created_at', 'Issued'],
          ['usage_expires_at', 'Expires'],
          ['status', 'Status'],
          ['product', 'Product'],
        ]}
      >
        <FilterSelect
          label="Status"
          value={l.status}
          choices={[
            ['active', 'Active'],
            ['revoked', 'Revoked'],
            ['expired', 'Expired'],
          ]}
          onChange={l.filter('status')}
        />
        <ProductFilter value={l.product_id} onChange={l.filter('product_id')} />
        <FilterSelect label="Kind" value={l.test} choices={TEST_CHOICES} onChange={l.filter('test')} />
      </ListFilters>
      <PagedList
        what="Licenses"
        of={l}
        columns={columns}
        empty={
          l.search || l.status || l.product_id || l.test
            ? 'No license matches these filters.'
            : 'No licenses yet.'
        }
      />
    </Page>
  );
}
