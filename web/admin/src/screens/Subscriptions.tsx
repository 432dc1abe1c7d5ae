import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { getPage, query } from '../api';
import { day } from '../format';
import type { SubscriptionListItem } from '../types';
import { Badge, Page } from '../ui/feedback';
import { ChoiceSelect, FilterSelect, PagedList } from '../ui/list';
import { type ColumnsOf, columnsFor } from '../ui/table';
import { positive, useUrlState } from '../ui/url';
import { useProductChoices } from './Products';

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
    col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} /> }),
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
  const [params, set] = useUrlState();
  const status = params.get('status') ?? '';
  const productId = params.get('product_id') ?? '';
  const userId = params.get('user_id') ?? '';
  // '' is the server's default order: newest first.
  const sort = params.get('sort') ?? '';
  const order = params.get('order') ?? '';
  const page = positive(params.get('page'), 1);
  const perPage = Math.min(100, positive(params.get('per_page'), 25));
  const products = useProductChoices();

  const list = useQuery({
    queryKey: ['subscriptions', { status, productId, userId, sort, order, page, perPage }],
    queryFn: () =>
      getPage<SubscriptionListItem>(
        `/subscriptions${query({
          status,
          product_id: productId,
          user_id: userId,
          sort,
          order,
          page,
          per_page: perPage,
        })}`,
      ),
    placeholderData: keepPreviousData,
  });

  return (
    <Page title="Subscriptions">
      <search aria-label="Filter subscriptions">
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <FilterSelect
            label="Status"
            value={status}
            choices={SUBSCRIPTION_STATUSES.map((s) => [s, s] as const)}
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
              ['created_at', 'Started'],
              ['next_payment_at', 'Next payment'],
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
      {userId ? (
        <p>
          Subscriptions of <Link href={`/customers/${userId}`}>customer #{userId}</Link> only.{' '}
          <button type="button" className="link" onClick={() => set({ user_id: undefined, page: undefined })}>
            Show every customer’s
          </button>
        </p>
      ) : null}
      <PagedList
        what="Subscriptions"
        list={list}
        columns={columns}
        rowKey={(s) => String(s.id)}
        empty={
          status || productId || userId ? 'No subscription matches these filters.' : 'No subscriptions yet.'
        }
        page={page}
        perPage={perPage}
        set={set}
      />
    </Page>
  );
}
