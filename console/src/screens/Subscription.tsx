import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, type Body, ok, page } from '../api';
import { when } from '../format';
import { useConfirm } from '../ui/confirm';
import { Badge, beforeLoaded, ErrorNote, Notice, Page } from '../ui/feedback';
import { Field } from '../ui/form';
import { PagedSection, useSectionList } from '../ui/list';
import { subscriptionStatusLabel } from '../words';
import { fullName, orderColumns } from './Customers';
import { recurring, SUBSCRIPTION_STATUSES, schedule } from './Subscriptions';

const back = <Link href="/subscriptions">← Subscriptions</Link>;

/** A cancelled or expired subscription has ended: the console offers nothing more on it. */
const ENDED = new Set(['cancelled', 'expired']);

/** The renewal worker's holds of an imported subscription the old store's Stripe may still bill (docs/migrating.md). */
const OLD_GATEWAY_HOLDS = new Set(['old_subscription_active', 'old_subscription_unverified']);

/** The statuses the console can set (its select offers only these). */
type Settable = Body<'/v1/subscriptions/{id}/status', 'post'>['status'];

/**
 * One subscription (GET /v1/subscriptions/{id}): its facts, customer and product, its status
 * (POST …/status; cancelling asks first), its renewal orders (GET /v1/orders?subscription_id=) and
 * a renewal order for the due payment (POST …/renewal-orders).
 */
export function SubscriptionPage({ id }: { id: number }) {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [chosen, setChosen] = useState<Settable | ''>('');
  const valid = Number.isInteger(id) && id > 0;
  const subscription = useQuery({
    queryKey: ['subscription', id],
    queryFn: () => ok(api.GET('/v1/subscriptions/{id}', { params: { path: { id } } })),
    enabled: valid,
  });
  const s = subscription.data;
  const customer = useQuery({
    queryKey: ['user', s?.user_id],
    queryFn: () => ok(api.GET('/v1/users/{id}', { params: { path: { id: s!.user_id } } })),
    enabled: s !== undefined,
  });
  const product = useQuery({
    queryKey: ['product', s?.product_id],
    queryFn: () => ok(api.GET('/v1/products/{id}', { params: { path: { id: s!.product_id } } })),
    enabled: s !== undefined,
  });
  const renewals = useSectionList(['orders', { subscription: id }], valid, (q) =>
    page(api.GET('/v1/orders', { params: { query: { subscription_id: id, ...q } } })),
  );

  const gate = beforeLoaded('subscription', valid, subscription, back);
  if (gate || !s) return gate;
  const next = chosen || s.status;
  const ended = ENDED.has(s.status);

  const refresh = async () => {
    await client.invalidateQueries({ queryKey: ['subscription', id] });
    await client.invalidateQueries({ queryKey: ['subscriptions'] });
    await client.invalidateQueries({ queryKey: ['orders'] });
  };
  const change = async (status: Settable) => {
    setError(null);
    setNotice('');
    await ok(api.POST('/v1/subscriptions/{id}/status', { params: { path: { id: s.id } }, body: { status } }));
    setNotice(`Subscription #${s.id} is now ${subscriptionStatusLabel(status)}.`);
    setChosen('');
    await refresh();
  };
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      await action();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const submit = () => {
    // Nothing chosen, or the status it has already.
    if (!chosen || chosen === s.status) return;
    if (chosen === 'cancelled') {
      confirm.ask({
        title: `Cancel subscription #${s.id}?`,
        body: (
          <p>
            It gets no more renewal orders, and the licenses it renews stop working as its licenses. The
            console offers no way back: this cannot be undone.
          </p>
        ),
        confirmLabel: 'Cancel subscription',
        danger: true,
        action: () => change('cancelled'),
      });
      return;
    }
    void run(() => change(chosen));
  };
  const renew = () =>
    run(async () => {
      const order = await ok(
        api.POST('/v1/subscriptions/{id}/renewal-orders', { params: { path: { id: s.id } } }),
      );
      setNotice(`Renewal order #${order.number} is ${order.status}: the customer pays it like any order.`);
      await refresh();
    });

  const who = customer.data;
  return (
    <Page title={`Subscription #${s.id}`} back={back}>
      <Notice>{notice}</Notice>
      <section aria-labelledby="subscription-facts" className="card">
        <h2 id="subscription-facts">Details</h2>
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <Badge value={s.status} label={subscriptionStatusLabel(s.status)} />
            {s.status === 'on-hold' && OLD_GATEWAY_HOLDS.has(s.status_reason) ? (
              <p>
                {s.status_reason === 'old_subscription_active'
                  ? "Not renewed: Stripe still bills the old store's subscription, so the customer would pay twice."
                  : "Not renewed: Stripe could not say whether it still bills the old store's subscription."}{' '}
                Cancel it at Stripe, then set this subscription active again.
              </p>
            ) : null}
          </dd>
          <dt>Customer</dt>
          <dd>
            <Link href={`/customers/${s.user_id}`}>
              {who ? fullName(who) || who.email : `customer #${s.user_id}`}
            </Link>
            {who && fullName(who) ? <span className="muted"> {who.email}</span> : null}
          </dd>
          <dt>Product</dt>
          <dd>
            <Link href={`/products/${s.product_id}`}>{product.data?.name ?? `product #${s.product_id}`}</Link>
            {s.variation_id ? <span className="muted"> (variation #{s.variation_id})</span> : null}
          </dd>
          <dt>Renews at</dt>
          <dd>
            {recurring(s)} {schedule(s)}
            {s.quantity > 1 ? <span className="muted"> (quantity {s.quantity})</span> : null}
          </dd>
          <dt>Next payment</dt>
          <dd>{when(s.next_payment_at, 'none')}</dd>
          <dt>Started</dt>
          <dd>
            {when(s.created_at)}
            {s.parent_order_id ? (
              <>
                {' '}
                with <Link href={`/orders/${s.parent_order_id}`}>order #{s.parent_order_id}</Link>
              </>
            ) : (
              <span className="muted"> (by an administrator)</span>
            )}
          </dd>
          <dt>Changed</dt>
          <dd>{when(s.updated_at)}</dd>
          {s.gateway_profile_id ? (
            <>
              <dt>Old gateway's id</dt>
              <dd>
                <code>{s.gateway_profile_id}</code>
              </dd>
            </>
          ) : null}
        </dl>
      </section>
      <section aria-labelledby="subscription-status" className="card">
        <h2 id="subscription-status">Status</h2>
        <ErrorNote error={error} />
        {ended ? (
          <p>This subscription has ended ({s.status}); it takes no further changes here.</p>
        ) : (
          <>
            <form
              className="inline-form"
              onSubmit={(e) => {
                e.preventDefault();
                submit();
              }}
            >
              <Field label="New status" hint="Cancelling asks for confirmation first.">
                {(p) => (
                  <select {...p} value={next} onChange={(e) => setChosen(e.target.value as Settable)}>
                    {SUBSCRIPTION_STATUSES.map((status) => (
                      <option key={status} value={status}>
                        {subscriptionStatusLabel(status)}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <button type="submit" className="primary" disabled={busy || next === s.status}>
                Change status
              </button>
            </form>
            <div className="field">
              <button type="button" onClick={() => void renew()} disabled={busy}>
                Create renewal order
              </button>
              <p className="hint">
                A pending order for the payment due {when(s.next_payment_at, 'now')}; the same order again if
                it exists.
              </p>
            </div>
          </>
        )}
      </section>
      <PagedSection
        id="subscription-renewals"
        what="Renewal orders"
        of={renewals}
        columns={orderColumns}
        empty="No renewal orders yet."
      />
      {confirm.dialog}
    </Page>
  );
}
