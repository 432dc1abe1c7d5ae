import { Link } from 'wouter';
import { api, page } from '../api';
import { day } from '../format';
import type { SubscriptionListItem } from '../resources';
import { Badge, Page } from '../ui/feedback';
import { FilterSelect, ListFilters, PagedList, useServerList } from '../ui/list';
import { type ColumnsOf, columnsFor } from '../ui/table';
import { subscriptionStatusLabel } from '../words';
import { ProductFilter } from './Products';

/** The statuses of GET /v1/subscriptions?status= and POST /v1/subscriptions/{id}/status (docs/checkout.md). */
export const SUBSCRIPTION_STATUSES = [
  'pending',
  'active',
  'on-hold',
  'pending-cancel',
  'cancelled',
  'expired',
] as const;

/** “every month”, “every 3 weeks”. */
export const schedule = (s: Pick<SubscriptionListItem, 'billing_period' | 'billing_interval'>) =>
  s.billing_period
    ? (s.billing_interval ?? 1) === 1
      ? `every ${s.billing_period}`
      : `every ${s.billing_interval} ${s.billing_period}s`
    : '—';

export const recurring = (s: Pick<SubscriptionListItem, 'recurring_total' | 'currency'>) =>
  s.recurring_total === null ? '—' : `${s.recurring_total} ${s.currency ?? ''}`.trim();

const col = columnsFor<SubscriptionListItem>();

/** The list's columns; a customer's page leaves out the customer (`withCustomer` false). */
export function subscriptionColumns(withCustomer: boolean): ColumnsOf<SubscriptionListItem> {
  return [
    col.accessor('id', {
      header: 'Subscription',
      cell: (c) => <Link href={`/subscriptions/${c.getValue()}`}>#{c.getValue()}</Link>,
    }),
    ...(withCustomer
      ? [
          col.accessor('user_email', {
            header: 'Customer',
            cell: (c) => (
              <Link href={`/customers/${c.row.original.user_id}`}>
                {c.getValue() || `customer #${c.row.original.user_id}`}
              </Link>
            ),
          }),
        ]
      : []),
    col.accessor('product_name', {
      header: 'Product',
      cell: (c) => c.getValue() || `product #${c.row.original.product_id}`,
    }),
    col.accessor('status', {
      header: 'Status',
      cell: (c) => <Badge value={c.getValue()} label={subscriptionStatusLabel(c.getValue())} />,
    }),
    col.accessor('recurring_total', {
      header: 'Renews at',
      cell: (c) => `${recurring(c.row.original)} ${schedule(c.row.original)}`,
    }),
    col.accessor('next_payment_at', { header: 'Next payment', cell: (c) => day(c.getValue(), 'none') }),
    col.accessor('created_at', { header: 'Started', cell: (c) => day(c.getValue()) }),
  ];
}

const columns = subscriptionColumns(true);

/**
 * Subscriptions: filter by status and product, sorted and paginated by the server
 * (GET /v1/subscriptions, X-WP-Total; docs/checkout.md, 'Routes').
 */
export function Subscriptions() {
  // '' is the server's default order: newest first.
  const l = useServerList({
    key: ['subscriptions'],
    names: ['status', 'product_id', 'user_id', 'sort', 'order'],
    fetchPage: (query) => page(api.GET('/v1/subscriptions', { params: { query } })),
  });

  return (
    <Page title="Subscriptions">
      <ListFilters
        label="Filter subscriptions"
        params={l}
        sorts={[
          ['', 'Newest first'],
          ['created_at', 'Started'],
          ['next_payment_at', 'Next payment'],
        ]}
      >
        <FilterSelect
          label="Status"
          value={l.status}
          choices={SUBSCRIPTION_STATUSES.map((s) => [s, subscriptionStatusLabel(s)] as const)}
          onChange={l.filter('status')}
        />
        <ProductFilter value={l.product_id} onChange={l.filter('product_id')} />
      </ListFilters>
      {l.user_id ? (
        <p>
          Subscriptions of <Link href={`/customers/${l.user_id}`}>customer #{l.user_id}</Link> only.{' '}
          <button
            type="button"
            className="link"
            onClick={() => l.set({ user_id: undefined, page: undefined })}
          >
            Show every customer’s
          </button>
        </p>
      ) : null}
      <PagedList
        what="Subscriptions"
        of={l}
        columns={columns}
        empty={
          l.status || l.product_id || l.user_id
            ? 'No subscription matches these filters.'
            : 'No subscriptions yet.'
        }
      />
    </Page>
  );
}
