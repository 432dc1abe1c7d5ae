import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, ok, page } from '../api';
import { day, when } from '../format';
import type { LicenseListItem, Order, User } from '../resources';
import { Badge, beforeLoaded, Page } from '../ui/feedback';
import { ListFilters, PagedList, PagedSection, useSectionList, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';
import { orderStatusLabel } from '../words';
import { licenseKeyColumn, licenseStatusColumn } from './Licenses';
import { money } from './Orders';
import { subscriptionColumns } from './Subscriptions';

export const fullName = (u: Pick<User, 'first_name' | 'last_name'>) =>
  [u.first_name, u.last_name].filter(Boolean).join(' ');

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
  const orders = useSectionList(['orders', { customer: id }], valid, (q) =>
    page(api.GET('/v1/orders', { params: { query: { customer_id: id, ...q } } })),
  );
  const licenses = useSectionList(['licenses', { user: id }], valid, (q) =>
    ok(api.GET('/v1/licenses', { params: { query: { user_id: id, ...q } } })).then((l) => ({
      rows: l.licenses,
      total: l.total,
    })),
  );
  const subscriptions = useSectionList(['subscriptions', { user: id }], valid, (q) =>
    page(api.GET('/v1/subscriptions', { params: { query: { user_id: id, ...q } } })),
  );

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
      <PagedSection
        id="customer-orders"
        what="Orders"
        of={orders}
        columns={orderColumns}
        empty="No orders."
      />
      <PagedSection
        id="customer-licenses"
        what="Licenses"
        of={licenses}
        columns={licenseColumns}
        empty="No licenses."
      />
      <PagedSection
        id="customer-subscriptions"
        what="Subscriptions"
        of={subscriptions}
        columns={customerSubscriptionColumns}
        empty="No subscriptions."
      />
    </Page>
  );
}
