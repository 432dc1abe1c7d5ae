import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { Link } from 'wouter';
import { get, query } from '../api';
import { day, limit } from '../format';
import type { License, LicenseList } from '../types';
import { Badge, Page } from '../ui/feedback';
import { ChoiceSelect, FilterSelect, PagedList } from '../ui/list';
import { columnsFor } from '../ui/table';
import { positive, useUrlState } from '../ui/url';
import { useProductChoices } from './Products';

const col = columnsFor<License>();
const columns = [
  col.accessor('license_key', {
    header: 'License key',
    cell: (c) => (
      <Link href={`/licenses/${c.row.original.id}`} className="key">
        {c.getValue()}
      </Link>
    ),
  }),
  col.accessor('product_name', {
    header: 'Product',
    cell: (c) => {
      const v = c.row.original.variation_name;
      return v ? `${c.getValue()} — ${v}` : c.getValue();
    },
  }),
  col.accessor('user_email', { header: 'Customer' }),
  col.accessor('status', {
    header: 'Status',
    cell: (c) => (
      <Badge value={c.row.original.is_expired && c.getValue() === 'active' ? 'expired' : c.getValue()} />
    ),
  }),
  col.accessor('activation_count', {
    header: 'Sites',
    cell: (c) => `${c.getValue()} of ${limit(c.row.original.activation_limit)}`,
  }),
  col.accessor('expires_at', { header: 'Expires', cell: (c) => day(c.getValue(), 'never') }),
  col.accessor('created_at', { header: 'Issued', cell: (c) => day(c.getValue()) }),
];

/** Licenses: search, filter by status and product, server pages (GET /v1/licenses). */
export function Licenses() {
  const [params, set] = useUrlState();
  const search = params.get('search') ?? '';
  const status = params.get('status') ?? '';
  const productId = params.get('product_id') ?? '';
  // The server sorts (docs/licensing.md, section 7); '' is its default, newest first.
  const sort = params.get('sort') ?? '';
  const order = params.get('order') ?? '';
  const page = positive(params.get('page'), 1);
  const perPage = positive(params.get('per_page'), 25);
  const products = useProductChoices();
  const searchId = useId();

  const list = useQuery({
    queryKey: ['licenses', { search, status, productId, sort, order, page, perPage }],
    queryFn: () =>
      get<LicenseList>(
        `/licenses${query({ search, status, product_id: productId, sort, order, page, per_page: perPage })}`,
      ).then((l) => ({ rows: l.licenses, total: l.total })),
    placeholderData: keepPreviousData,
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
      <search aria-label="Search licenses">
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            const data = new FormData(e.currentTarget);
            set({ search: String(data.get('search') ?? '').trim(), page: undefined });
          }}
        >
          <div className="search-group">
            <div className="field">
              <label htmlFor={searchId}>Search</label>
              <input
                id={searchId}
                name="search"
                type="search"
                defaultValue={search}
                key={search}
                placeholder="Key or its end, email, domain, installation id"
              />
            </div>
            <button type="submit">Search</button>
          </div>
          <FilterSelect
            label="Status"
            value={status}
            choices={[
              ['active', 'Active'],
              ['revoked', 'Revoked'],
              ['expired', 'Expired'],
            ]}
            onChange={(v) => set({ status: v, page: undefined })}
          />
          <FilterSelect
            label="Product"
            value={productId}
            choices={(products.data ?? []).map((p) => [String(p.id), p.name] as const)}
            onChange={(v) => set({ product_id: v, page: undefined })}
          />
          <ChoiceSelect
            label="Sort by"
            value={sort}
            choices={[
              ['', 'Newest first'],
              ['created_at', 'Issued'],
              ['usage_expires_at', 'Expires'],
              ['status', 'Status'],
              ['product', 'Product'],
            ]}
            onChange={(v) => set({ sort: v, page: undefined })}
          />
          <ChoiceSelect
            label="Order"
            value={order}
            choices={[
              ['', 'Default'],
              ['asc', 'Ascending'],
              ['desc', 'Descending'],
            ]}
            onChange={(v) => set({ order: v, page: undefined })}
          />
        </form>
      </search>
      <PagedList
        what="Licenses"
        list={list}
        columns={columns}
        rowKey={(l) => String(l.id)}
        empty={search || status || productId ? 'No license matches these filters.' : 'No licenses yet.'}
        page={page}
        perPage={perPage}
        set={set}
      />
    </Page>
  );
}
