import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { Link } from 'wouter';
import { get, getPage, query } from '../api';
import { day, limit } from '../format';
import type { Product } from '../types';
import { Badge, Page } from '../ui/feedback';
import { ChoiceSelect, FilterSelect, PagedList } from '../ui/list';
import { columnsFor } from '../ui/table';
import { positive, useUrlState } from '../ui/url';

/** Products for a choice list (a filter, a new license): the newest 100, which the API's page allows. */
export function useProductChoices() {
  return useQuery({
    queryKey: ['products', 'choices'],
    queryFn: () => get<Product[]>('/products?per_page=100'),
    staleTime: 60_000,
  });
}

const TYPES = ['simple', 'variable', 'subscription', 'variable-subscription'];

const col = columnsFor<Product>();
const columns = [
  col.accessor('name', {
    header: 'Name',
    cell: (c) => <Link href={`/products/${c.row.original.id}`}>{c.getValue()}</Link>,
  }),
  col.accessor('type', { header: 'Type' }),
  col.accessor('status', {
    header: 'Status',
    cell: (c) => <Badge value={c.getValue() === 'publish' ? 'published' : c.getValue()} />,
  }),
  col.accessor('price', { header: 'Price' }),
  col.accessor('activation_limit', { header: 'Sites', cell: (c) => limit(c.getValue()) }),
  col.accessor('slug', {
    header: 'Software',
    cell: (c) =>
      c.row.original.software_enabled === 'yes' && c.getValue() ? (
        <code>{c.getValue()}</code>
      ) : (
        'not distributed'
      ),
  }),
  col.accessor('updated_at', { header: 'Updated', cell: (c) => day(c.getValue()) }),
  col.display({
    id: 'releases',
    header: 'Releases',
    cell: (c) => (
      <Link href={`/products/${c.row.original.id}/releases`}>
        Releases<span className="sr-only"> of {c.row.original.name}</span>
      </Link>
    ),
  }),
];

/**
 * Products: search, filter by status and type, sorted and paginated by the server
 * (GET /v1/products with `sort` and `order`, X-WP-Total; docs/catalogue.md, 'Products').
 */
export function Products() {
  const [params, set] = useUrlState();
  const search = params.get('search') ?? '';
  const status = params.get('status') ?? '';
  const type = params.get('type') ?? '';
  // '' is the server's default order: newest first.
  const sort = params.get('sort') ?? '';
  const order = params.get('order') ?? '';
  const page = positive(params.get('page'), 1);
  const perPage = Math.min(100, positive(params.get('per_page'), 25));
  const searchId = useId();

  const list = useQuery({
    queryKey: ['products', { search, status, type, sort, order, page, perPage }],
    queryFn: () =>
      getPage<Product>(`/products${query({ search, status, type, sort, order, page, per_page: perPage })}`),
    placeholderData: keepPreviousData,
  });

  return (
    <Page
      title="Products"
      actions={
        <Link href="/products/new" className="button primary">
          New product
        </Link>
      }
    >
      <search aria-label="Search products">
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            set({
              search: String(new FormData(e.currentTarget).get('search') ?? '').trim(),
              page: undefined,
            });
          }}
        >
          <div className="search-group">
            <div className="field">
              <label htmlFor={searchId}>Search</label>
              <input id={searchId} name="search" type="search" defaultValue={search} key={search} />
            </div>
            <button type="submit">Search</button>
          </div>
          <FilterSelect
            label="Status"
            value={status}
            choices={[
              ['publish', 'Published'],
              ['draft', 'Draft'],
            ]}
            onChange={(v) => set({ status: v, page: undefined })}
          />
          <FilterSelect
            label="Type"
            value={type}
            choices={TYPES.map((t) => [t, t] as const)}
            onChange={(v) => set({ type: v, page: undefined })}
          />
          <ChoiceSelect
            label="Sort by"
            value={sort}
            choices={[
              ['', 'Newest first'],
              ['created_at', 'Created'],
              ['name', 'Name'],
              ['price', 'Price'],
              ['status', 'Status'],
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
        what="Products"
        list={list}
        columns={columns}
        rowKey={(p) => String(p.id)}
        empty={search || status || type ? 'No product matches these filters.' : 'No products yet.'}
        page={page}
        perPage={perPage}
        set={set}
      />
    </Page>
  );
}
