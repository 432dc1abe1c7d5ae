import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, ok, page } from '../api';
import { day, limit } from '../format';
import type { Product } from '../resources';
import { Badge, Page } from '../ui/feedback';
import { FilterSelect, ListFilters, PagedList, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';

/** Products for a choice list (a filter, a new license): the newest 100, which the API's page allows. */
export function useProductChoices() {
  return useQuery({
    queryKey: ['products', 'choices'],
    queryFn: () => ok(api.GET('/v1/products', { params: { query: { page: 1, per_page: 100 } } })),
    staleTime: 60_000,
  });
}

/** The filter of a list by product (licenses, subscriptions); '' is any product. */
export function ProductFilter({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const products = useProductChoices();
  return (
    <FilterSelect
      label="Product"
      value={value}
      choices={(products.data ?? []).map((p) => [String(p.id), p.name] as const)}
      onChange={onChange}
    />
  );
}

/** The product types of the API, in words (the filter and the list's Type column). */
const TYPES: Record<string, string> = {
  simple: 'Simple',
  variable: 'With variations',
  subscription: 'Subscription',
  'variable-subscription': 'Subscription with variations',
};

const col = columnsFor<Product>();
const columns = [
  col.accessor('name', {
    header: 'Name',
    cell: (c) => <Link href={`/products/${c.row.original.id}`}>{c.getValue()}</Link>,
  }),
  col.accessor('type', { header: 'Type', cell: (c) => TYPES[c.getValue()] ?? c.getValue() }),
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
  // '' is the server's default order: newest first.
  const l = useServerList({
    key: ['products'],
    names: ['search', 'status', 'type', 'sort', 'order'],
    fetchPage: (query) => page(api.GET('/v1/products', { params: { query } })),
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
      <ListFilters
        label="Search products"
        params={l}
        sorts={[
          ['', 'Newest first'],
          ['created_at', 'Created'],
          ['name', 'Name'],
          ['price', 'Price'],
          ['status', 'Status'],
        ]}
      >
        <FilterSelect
          label="Status"
          value={l.status}
          choices={[
            ['publish', 'Published'],
            ['draft', 'Draft'],
          ]}
          onChange={l.filter('status')}
        />
        <FilterSelect
          label="Type"
          value={l.type}
          choices={Object.entries(TYPES)}
          onChange={l.filter('type')}
        />
      </ListFilters>
      <PagedList
        what="Products"
        of={l}
        columns={columns}
        empty={l.search || l.status || l.type ? 'No product matches these filters.' : 'No products yet.'}
      />
    </Page>
  );
}
