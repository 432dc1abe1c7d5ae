import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, ok, page } from '../api';
import { day, when } from '../format';
import type { LicenseListItem, Order, User } from '../resources';
import { Badge, beforeLoaded, Page } from '../ui/feedback';
import { ListFilters, PagedList, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';
import { orderStatusLabel } from '../words';
import { licenseKeyColumn, licenseStatusColumn } from './Licenses';
import { money } from './Orders';
import { subscriptionColumns } from './Subscriptions';

export const fullName = (u: Pick<User, 'first_name' | 'last_name'>) =>
  [u.first_name, u.last_name].filter(Boolean).join(' ');

/**
 * The page of a list that is one section of a screen (a customer's orders, licenses and
 * subscriptions): kept in the section, not in the address, so that the sections page on their own.
 */
export function usePaging(initialPerPage = 10) {
  const [page, setPage] = useState(1);
  const [perPage, setPerPage] = useState(initialPerPage);
  const set = (changes: Record<string, string | number | undefined>) => {
    if ('per_page' in changes) setPerPage(Number(changes.per_page) || initialPerPage);
    setPage(changes.page === undefined ? 1 : Number(changes.page));
  };
  return { page, perPage, set };
}

const orderCol = columnsFor<Order>();
/** Orders in a section of another object's page (a subscription's renewals, a customer's orders). */
export const orderColumns = [
  orderCol.accessor('number', {
    header: 'Order',
    cell: (c) => <Link href={`/orders/${c.row.original.id}`}>#{c.getValue()}</Link>,
  }),
  orderCol.accessor('status', {
    header: 'Status',
    cell: (c) => <Badge value={c.getValue()} label={orderStatusLabel(c.getValue())} />,
  }),
  orderCol.accessor('total', { header: 'Total', cell: (c) => money(c.row.original, c.getValue()) }),
  orderCol.accessor('created_via', { header: 'Made by' }),
  orderCol.accessor('renewal_due_at', { header: 'Pays for', cell: (c) => when(c.getValue()) }),
  orderCol.accessor('created_at', { header: 'Placed', cell: (c) => when(c.getValue()) }),
];

const col = columnsFor<User>();
const columns = [
  col.accessor('email', {
    header: 'Email',
    cell: (c) => <Link href={`/customers/${c.row.original.id}`}>{c.getValue()}</Link>,
  }),
  col.display({ id: 'name', header: 'Name', cell: (c) => fullName(c.row.original) || '—' }),
  col.accessor('id', { header: 'Number', cell: (c) => `#${c.getValue()}` }),
];

/**
 * Customers: search by email or name, sorted and paginated by the server
 * (GET /v1/users?role=customer, X-WP-Total; docs/administration.md).
 */
export function Customers() {
  const l = useServerList({
    key: ['users', 'customer'],
    names: ['search', 'sort', 'order'],
    fixed: { role: 'customer' },
    fetchPage: (query) => page(api.GET('/v1/users', { params: { query } })),
  });

  return (
    <Page title="Customers">
      <ListFilters
        label="Search customers"
        params={l}
        placeholder="Email or name"
        sorts={[
          ['', 'Newest first'],
          ['email', 'Email'],
          ['name', 'Name (last, first)'],
        ]}
      />
      <PagedList
        what="Customers"
        of={l}
        columns={columns}
        empty={l.search ? 'No customer matches this search.' : 'No customers yet.'}
      />
    </Page>
  );
}

const licenseCol = columnsFor<LicenseListItem>();
const licenseColumns = [
  licenseKeyColumn,
  licenseCol.accessor('product_name', { header: 'Product' }),
  licenseStatusColumn,
  licenseCol.accessor('expires_at', { header: 'Expires', cell: (c) => day(c.getValue(), 'never') }),
  licenseCol.accessor('created_at', { header: 'Issued', cell: (c) => day(c.getValue()) }),
];

const customerSubscriptionColumns = subscriptionColumns(false);

const back = <Link href="/customers">← Customers</Link>;

/**
 * One customer (GET /v1/users/{id}) with three lists, each paginated by the server: their orders
 * (GET /v1/orders?customer_id=), licenses (GET /v1/licenses?user_id=) and subscriptions
 * (GET /v1/subscriptions?user_id=).
 */
export function CustomerPage({ id }: { id: number }) {
  const valid = Number.isInteger(id) && id > 0;
  const user = useQuery({
    queryKey: ['user', id],
    queryFn: () => ok(api.GET('/v1/users/{id}', { params: { path: { id } } })),
    enabled: valid,
  });
  const orderPaging = usePaging();
  const licensePaging = usePaging();
  const subscriptionPaging = usePaging();
  const orders = useQuery({
    queryKey: ['orders', { customer: id, page: orderPaging.page, perPage: orderPaging.perPage }],
    queryFn: () =>
      page(
        api.GET('/v1/orders', {
          params: { query: { customer_id: id, page: orderPaging.page, per_page: orderPaging.perPage } },
        }),
      ),
    enabled: valid,
    placeholderData: keepPreviousData,
  });
  const licenses = useQuery({
    queryKey: ['licenses', { user: id, page: licensePaging.page, perPage: licensePaging.perPage }],
    queryFn: () =>
      ok(
        api.GET('/v1/licenses', {
          params: { query: { user_id: id, page: licensePaging.page, per_page: licensePaging.perPage } },
        }),
      ).then((l) => ({ rows: l.licenses, total: l.total })),
    enabled: valid,
    placeholderData: keepPreviousData,
  });
  const subscriptions = useQuery({
    queryKey: [
      'subscriptions',
      { user: id, page: subscriptionPaging.page, perPage: subscriptionPaging.perPage },
    ],
    queryFn: () =>
      page(
        api.GET('/v1/subscriptions', {
          params: {
            query: { user_id: id, page: subscriptionPaging.page, per_page: subscriptionPaging.perPage },
          },
        }),
      ),
    enabled: valid,
    placeholderData: keepPreviousData,
  });

  const gate = beforeLoaded('customer', valid, user, back);
  if (gate || !user.data) return gate;
  const u = user.data;
  return (
    <Page
      title={fullName(u) || u.email}
      back={back}
      actions={
        <Link href={`/licenses/new?user_id=${u.id}`} className="button">
          New license
        </Link>
      }
    >
      <section aria-labelledby="customer-facts" className="card">
        <h2 id="customer-facts">Details</h2>
        <dl className="facts">
          <dt>Email</dt>
          <dd>{u.email}</dd>
          <dt>Name</dt>
          <dd>{fullName(u) || '—'}</dd>
          <dt>Number</dt>
          <dd>#{u.id}</dd>
          <dt>Role</dt>
          <dd>{u.role}</dd>
        </dl>
      </section>
      <section aria-labelledby="customer-orders">
        <h2 id="customer-orders">Orders</h2>
        <PagedList
          what="Orders"
          of={{ list: orders, ...orderPaging }}
          columns={orderColumns}
          empty="No orders."
        />
      </section>
      <section aria-labelledby="customer-licenses">
        <h2 id="customer-licenses">Licenses</h2>
        <PagedList
          what="Licenses"
          of={{ list: licenses, ...licensePaging }}
          columns={licenseColumns}
          empty="No licenses."
        />
      </section>
      <section aria-labelledby="customer-subscriptions">
        <h2 id="customer-subscriptions">Subscriptions</h2>
        <PagedList
          what="Subscriptions"
          of={{ list: subscriptions, ...subscriptionPaging }}
          columns={customerSubscriptionColumns}
          empty="No subscriptions."
        />
      </section>
    </Page>
  );
}
