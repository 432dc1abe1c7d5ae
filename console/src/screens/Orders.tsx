import { Link } from 'wouter';
import { api, page } from '../api';
import { when } from '../format';
import type { Order } from '../resources';
import { Page, StatusBadge } from '../ui/feedback';
import { FilterSelect, ListFilters, PagedList, useServerList } from '../ui/list';
import { columnsFor } from '../ui/table';
import { orderStatusLabel } from '../words';

/** The statuses of GET /v1/orders?status= and POST /v1/orders/{id}/status (docs/checkout.md). */
export const ORDER_STATUSES = [
  'pending',
  'processing',
  'on-hold',
  'completed',
  'failed',
  'cancelled',
  'refunded',
];

/**
 * The "Kind" filter of the orders and licenses lists (`test=` of docs/payments.md, 'Test mode and
 * live mode'): real ones, or those made in test mode.
 */
export const TEST_CHOICES = [
  ['false', 'Real'],
  ['true', 'Test orders'],
] as const;

/** What an order's total reads like: its own currency, as the order was priced. */
export const money = (o: Pick<Order, 'currency'>, amount: string) => `${amount} ${o.currency}`;

/** The buyer as the order recorded them (billing); a guest has no customer account. */
export const buyer = (o: Order) =>
  [o.billing.first_name, o.billing.last_name].filter(Boolean).join(' ') || o.billing.email || 'guest';

const col = columnsFor<Order>();
const columns = [
  col.accessor('number', {
    header: 'Order',
    cell: (c) => <Link href={`/orders/${c.row.original.id}`}>#{c.getValue()}</Link>,
  }),
  col.accessor('status', {
    header: 'Status',
    cell: (c) => (
      <StatusBadge value={c.getValue()} label={orderStatusLabel(c.getValue())} test={c.row.original.test} />
    ),
  }),
  col.display({
    id: 'customer',
    header: 'Customer',
    cell: (c) => (
      <>
        {buyer(c.row.original)}
        {c.row.original.billing.email ? <span className="muted"> {c.row.original.billing.email}</span> : null}
      </>
    ),
  }),
  col.display({
    id: 'items',
    header: 'Items',
    cell: (c) => c.row.original.items.map((i) => `${i.name} × ${i.quantity}`).join(', '),
  }),
  col.accessor('total', { header: 'Total', cell: (c) => money(c.row.original, c.getValue()) }),
  col.accessor('payment_method_title', { header: 'Payment' }),
  col.accessor('created_at', { header: 'Placed', cell: (c) => when(c.getValue()) }),
];

/** Orders: filter by status, sorted and paginated by the server (GET /v1/orders, docs/checkout.md). */
export function Orders() {
  const l = useServerList({
    key: ['orders'],
    names: ['status', 'test', 'sort', 'order'],
    fetchPage: (query) => page(api.GET('/v1/orders', { params: { query } })),
  });

  return (
    <Page title="Orders">
      <ListFilters
        label="Filter orders"
        params={l}
        sorts={[
          ['', 'Newest first'],
          ['total', 'Total'],
        ]}
      >
        <FilterSelect
          label="Status"
          value={l.status}
          choices={ORDER_STATUSES.map((s) => [s, orderStatusLabel(s)] as const)}
          onChange={l.filter('status')}
        />
        <FilterSelect label="Kind" value={l.test} choices={TEST_CHOICES} onChange={l.filter('test')} />
      </ListFilters>
      <PagedList
        what="Orders"
        of={l}
        columns={columns}
        empty={l.status ? 'No order has this status.' : l.test ? 'No order of this kind.' : 'No orders yet.'}
      />
    </Page>
  );
}
