import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, type Body, ok } from '../api';
import { when } from '../format';
import type { LicenseListItem, Order } from '../resources';
import { useConfirm } from '../ui/confirm';
import { Badge, beforeLoaded, ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { Field } from '../ui/form';
import { columnsFor, DataTable } from '../ui/table';
import { orderStatusLabel } from '../words';
import { History } from './Audit';
import { licenseKeyColumn } from './Licenses';
import { OrderInvoices } from './OrderInvoices';
import { OrderRefunds } from './OrderRefunds';
import { buyer, money, ORDER_STATUSES } from './Orders';

const back = <Link href="/orders">← Orders</Link>;

/** Statuses that stop an order (its held stock goes back): asked for in a dialog. */
const STOPPING = new Set(['cancelled', 'failed']);

const itemCol = columnsFor<Order['items'][number]>();
const licenseCol = columnsFor<LicenseListItem>();
const licenseColumns = [
  licenseKeyColumn,
  licenseCol.accessor('product_name', { header: 'Product' }),
  licenseCol.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} /> }),
];

/** The statuses the console can set (its select offers only these). */
type Settable = Body<'/v1/orders/{id}/status', 'post'>['status'];

/**
 * One order (GET /v1/orders/{id}): items, totals, buyer, the licenses it issued, and its status
 * (POST /v1/orders/{id}/status; a paid status issues the licenses once).
 */
export function OrderPage({ id }: { id: number }) {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const valid = Number.isInteger(id) && id > 0;
  const order = useQuery({
    queryKey: ['order', id],
    queryFn: () => ok(api.GET('/v1/orders/{id}', { params: { path: { id } } })),
    enabled: valid,
  });
  const customerId = order.data?.customer_id ?? null;
  // GET /v1/licenses has no order filter: the customer's licenses, kept when they name this order.
  const licenses = useQuery({
    queryKey: ['licenses', { user_id: customerId, order: id }],
    queryFn: () =>
      ok(
        api.GET('/v1/licenses', {
          params: { query: { user_id: customerId ?? undefined, page: 1, per_page: 500 } },
        }),
      ),
    enabled: customerId !== null,
    select: (list) => list.licenses.filter((l) => l.order_id === id),
  });
  const [chosen, setChosen] = useState<Settable | ''>('');

  const gate = beforeLoaded('order', valid, order, back);
  if (gate || !order.data) return gate;
  const o = order.data;
  const next = chosen || o.status;

  const change = async (status: Settable) => {
    setError(null);
    setNotice('');
    await ok(api.POST('/v1/orders/{id}/status', { params: { path: { id: o.id } }, body: { status } }));
    setNotice(`Order #${o.number} is now ${orderStatusLabel(status)}.`);
    setChosen('');
    await client.invalidateQueries({ queryKey: ['order', id] });
    await client.invalidateQueries({ queryKey: ['orders'] });
    await client.invalidateQueries({ queryKey: ['licenses'] });
    await client.invalidateQueries({ queryKey: ['audit-events'] });
  };
  const submit = async () => {
    // Nothing chosen, or the status it has already.
    if (!chosen || chosen === o.status) return;
    if (STOPPING.has(chosen)) {
      confirm.ask({
        title: `Mark order #${o.number} ${orderStatusLabel(chosen)}?`,
        body: (
          <p>
            Its held stock goes back on sale. Licenses it already issued stay as they are: revoke them on
            their own pages if they must stop working.
          </p>
        ),
        confirmLabel: `Mark ${orderStatusLabel(chosen)}`,
        danger: true,
        action: () => change(chosen),
      });
      return;
    }
    setBusy(true);
    try {
      await change(chosen);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const items = [
    itemCol.accessor('name', { header: 'Item' }),
    itemCol.accessor('quantity', { header: 'Quantity' }),
    itemCol.accessor('price', { header: 'Price', cell: (c) => money(o, c.getValue()) }),
    itemCol.accessor('total_tax', { header: 'Tax', cell: (c) => money(o, c.getValue()) }),
    itemCol.accessor('total', { header: 'Total', cell: (c) => money(o, c.getValue()) }),
  ];

  return (
    <Page title={`Order #${o.number}`} back={back}>
      <Notice>{notice}</Notice>
      <section aria-labelledby="order-facts" className="card">
        <h2 id="order-facts">Details</h2>
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <Badge value={o.status} label={orderStatusLabel(o.status)} />
          </dd>
          <dt>Customer</dt>
          <dd>
            {buyer(o)} {o.billing.email ? <span>{o.billing.email}</span> : null}{' '}
            {o.customer_id === null ? (
              <span className="muted">(guest, no account)</span>
            ) : (
              <Link href={`/customers/${o.customer_id}`}>customer #{o.customer_id}</Link>
            )}
            {o.subscription_id !== null ? (
              <>
                {' '}
                · renewal of{' '}
                <Link href={`/subscriptions/${o.subscription_id}`}>subscription #{o.subscription_id}</Link>
              </>
            ) : null}
          </dd>
          <dt>Payment</dt>
          <dd>
            {o.payment_method_title || o.payment_method || '—'}
            {o.paid_at ? `, paid ${when(o.paid_at)}` : ', not paid'}
          </dd>
          {o.disputed_at ? (
            <>
              <dt>Dispute</dt>
              <dd>
                <strong>Disputed</strong> {when(o.disputed_at)}: see the notes, and answer it in the Stripe
                Dashboard
              </dd>
            </>
          ) : null}
          <dt>Placed</dt>
          <dd>
            {when(o.created_at)} <span className="muted">({o.created_via})</span>
          </dd>
          {o.customer_note ? (
            <>
              <dt>Note</dt>
              <dd>{o.customer_note}</dd>
            </>
          ) : null}
        </dl>
      </section>
      <section aria-labelledby="order-status" className="card">
        <h2 id="order-status">Status</h2>
        <ErrorNote error={error} />
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <Field
            label="New status"
            hint={`${orderStatusLabel('processing')} or ${orderStatusLabel('completed')} marks the order paid and issues its licenses (once).`}
          >
            {(p) => (
              <select {...p} value={next} onChange={(e) => setChosen(e.target.value as Settable)}>
                {ORDER_STATUSES.filter((s) => s !== 'refunded' || o.status === 'refunded').map((s) => (
                  <option key={s} value={s}>
                    {orderStatusLabel(s)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="submit" className="primary" disabled={busy || next === o.status}>
            Change status
          </button>
        </form>
      </section>
      <section aria-labelledby="order-items">
        <h2 id="order-items">Items</h2>
        <DataTable caption="Items" columns={items} data={o.items} empty="No items." />
        <dl className="facts totals">
          <dt>Subtotal</dt>
          <dd>{money(o, o.subtotal)}</dd>
          {o.coupons.map((c) => (
            <FactPair key={c.code} term={`Coupon ${c.code}`} value={`−${money(o, c.discount_total)}`} />
          ))}
          {o.shipping_lines.map((l) => (
            <FactPair key={l.id} term={`Shipping: ${l.method_title}`} value={money(o, l.total)} />
          ))}
          {o.tax_lines.length > 1
            ? o.tax_lines.map((l) => (
                <FactPair key={l.name} term={`${l.name} ${Number(l.rate)}%`} value={money(o, l.amount)} />
              ))
            : null}
          <dt>
            Tax{o.tax_lines.length === 1 ? ` (${o.tax_lines[0]!.name} ${Number(o.tax_lines[0]!.rate)}%)` : ''}
          </dt>
          <dd>
            {money(o, o.total_tax)}
            {o.prices_include_tax ? ' (included in prices)' : ''}
            {o.reverse_charge ? ' (reverse charge: the buyer accounts for the VAT)' : ''}
          </dd>
          <dt>Total</dt>
          <dd>
            <strong>{money(o, o.total)}</strong>
          </dd>
          {Number(o.refunded_total) > 0 ? (
            <FactPair term="Refunded" value={`−${money(o, o.refunded_total)}`} />
          ) : null}
        </dl>
      </section>
      <TaxEvidence order={o} />
      <section aria-labelledby="order-licenses">
        <h2 id="order-licenses">Licenses issued</h2>
        {o.customer_id === null ? (
          <p>A guest order issues no license.</p>
        ) : licenses.isPending ? (
          <Loading what="the order's licenses" />
        ) : (
          <>
            <ErrorNote error={licenses.error} />
            <DataTable
              caption="Licenses issued"
              columns={licenseColumns}
              data={licenses.data ?? []}
              empty="None yet: licenses are issued when the order is paid."
            />
          </>
        )}
      </section>
      <OrderInvoices order={o} />
      <OrderRefunds order={o} />
      <History type="order" id={id} />
      {confirm.dialog}
    </Page>
  );
}

const VAT_CHECK: Record<string, string> = {
  valid: 'valid (confirmed by VIES)',
  invalid: 'refused by VIES',
  unverified: 'not confirmed: VIES did not answer in time, VAT charged',
  not_checked: 'not checked: VIES covers EU numbers only',
};

/**
 * Where the buyer is, as the order recorded it (docs/taxes.md, 'Evidence of location'): what a
 * tax authority asks a seller of digital services to keep, two pieces of it agreeing.
 */
function TaxEvidence({ order: o }: { order: Order }) {
  const e = o.tax_evidence;
  const none = 'not known';
  return (
    <section aria-labelledby="order-tax" className="card">
      <h2 id="order-tax">Tax and the buyer’s location</h2>
      <dl className="facts">
        <dt>Taxed as</dt>
        <dd>{o.tax_country || 'no country (no tax)'}</dd>
        <dt>Billing country</dt>
        <dd>{e.billing_country ?? none}</dd>
        <dt>IP address’s country</dt>
        <dd>
          {e.ip_country ?? none}
          {e.country_confirmed ? ' (differs: the buyer confirmed the billing country)' : ''}
        </dd>
        <dt>Card’s country</dt>
        <dd>{e.card_country ?? none}</dd>
        {o.buyer_tax_id ? (
          <>
            <dt>VAT number</dt>
            <dd>
              {o.buyer_tax_id}
              {e.vat_check ? `: ${VAT_CHECK[e.vat_check.status] ?? e.vat_check.status}` : ''}
              {e.vat_check?.name ? ` (${e.vat_check.name})` : ''}
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}

function FactPair({ term, value }: { term: string; value: string }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
}
