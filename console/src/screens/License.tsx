import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link } from 'wouter';
import { api, type Body, ok } from '../api';
import { day, limit, parseUtc, when } from '../format';
import type { Activation, License } from '../resources';
import { useConfirm } from '../ui/confirm';
import { Badge, beforeLoaded, ErrorNote, Notice, Page } from '../ui/feedback';
import { columnsFor, DataTable } from '../ui/table';
import { History } from './Audit';
import { useLicenseTransfers } from './LicenseTransfers';

const back = <Link href="/licenses">← Licenses</Link>;

/** One license (GET /v1/licenses/{id}): its facts, its sites, and what the owner may change. */
export function LicensePage({ id }: { id: number }) {
  const client = useQueryClient();
  const [notice, setNotice] = useState('');
  const confirm = useConfirm();
  const license = useQuery({
    queryKey: ['license', id],
    queryFn: () => ok(api.GET('/v1/licenses/{id}', { params: { path: { id } } })),
    enabled: Number.isInteger(id) && id > 0,
  });
  const refresh = async (message: string) => {
    setNotice(message);
    await client.invalidateQueries({ queryKey: ['license', id] });
    await client.invalidateQueries({ queryKey: ['licenses'] });
    await client.invalidateQueries({ queryKey: ['audit-events'] });
  };

  const transfers = useLicenseTransfers(id, confirm.ask, refresh);

  const valid = Number.isInteger(id) && id > 0;
  const gate = beforeLoaded('license', valid, license, back);
  if (gate || !license.data) return gate;
  const l = license.data;
  const revoked = l.status === 'revoked';
  const stagingCount = l.activations.filter(
    (a) => a.status === 'active' && a.environment === 'staging',
  ).length;

  const revoke = () =>
    confirm.ask({
      title: 'Revoke this license?',
      body: (
        <p>
          <span className="key">{l.license_key}</span> stops working on every site at once, and its download
          links stop working. <strong>This cannot be undone.</strong>
        </p>
      ),
      confirmLabel: 'Revoke license',
      danger: true,
      action: async () => {
        await ok(api.DELETE('/v1/licenses/{id}', { params: { path: { id: l.id } } }));
        await refresh('The license is revoked.');
      },
    });

  // A suspension (a full refund's, docs/payments.md) is taken back through PATCH /v1/licenses/{id}.
  const reinstate = () =>
    confirm.ask({
      title: 'Reinstate this license?',
      body: <p>It works again on its sites, as before it was suspended.</p>,
      confirmLabel: 'Reinstate license',
      action: async () => {
        await ok(
          api.PATCH('/v1/licenses/{id}', { params: { path: { id: l.id } }, body: { status: 'active' } }),
        );
        await refresh('The license is active again.');
      },
    });

  const deactivate = (a: Activation) =>
    confirm.ask({
      title: `Deactivate ${a.domain}?`,
      body: (
        <p>
          The site stops being licensed and frees its slot. It can activate again later while the license
          allows it.
        </p>
      ),
      confirmLabel: 'Deactivate site',
      danger: true,
      action: async () => {
        // The administrator route (docs/licensing.md, section 7): no license key, and it works
        // even when licensing or customer deactivation is switched off.
        await ok(
          api.POST('/v1/licenses/{id}/activations/{activation_id}/deactivate', {
            params: { path: { id: l.id, activation_id: a.id } },
            body: {},
          }),
        );
        await refresh(`${a.domain} is deactivated.`);
      },
    });

  const col = columnsFor<Activation>();
  const columns = [
    col.accessor('domain', {
      header: 'Site',
      cell: (c) => (
        <>
          {c.getValue()}
          {c.row.original.environment === 'staging' ? (
            <>
              {' '}
              <Badge value="staging" />
            </>
          ) : null}
        </>
      ),
    }),
    col.accessor('status', {
      header: 'Status',
      cell: (c) => (
        <>
          <Badge value={c.getValue()} />
          {c.row.original.deactivation_reason === 'reinstalled' ? (
            <span className="muted"> replaced by a reinstall (#{c.row.original.replaced_by})</span>
          ) : null}
          {c.row.original.deactivation_reason === 'stale' ? (
            <span className="muted"> released: not seen</span>
          ) : null}
        </>
      ),
    }),
    col.accessor('installation_id', { header: 'Installation', cell: (c) => <code>{c.getValue()}</code> }),
    col.accessor('ip_address', { header: 'IP address' }),
    col.accessor('activated_at', { header: 'Activated', cell: (c) => when(c.getValue()), sortFn: 'text' }),
    col.accessor('last_seen_at', { header: 'Last seen', cell: (c) => when(c.getValue()), sortFn: 'text' }),
    col.accessor('deactivated_at', {
      header: 'Deactivated',
      cell: (c) => when(c.getValue()),
      sortFn: 'text',
    }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) =>
        c.row.original.status === 'active' ? (
          <button type="button" className="danger small" onClick={() => deactivate(c.row.original)}>
            Deactivate<span className="sr-only"> {c.row.original.domain}</span>
          </button>
        ) : null,
    }),
  ];

  return (
    <Page
      title={`License ${l.license_key}`}
      back={back}
      actions={
        revoked ? null : (
          <>
            {l.status === 'suspended' ? (
              <button type="button" className="primary" onClick={reinstate}>
                Reinstate
              </button>
            ) : (
              <button type="button" onClick={transfers.offer}>
                Transfer
              </button>
            )}
            <button type="button" className="danger" onClick={revoke}>
              Revoke
            </button>
          </>
        )
      }
    >
      <Notice>{notice}</Notice>
      <section aria-labelledby="facts" className="card">
        <h2 id="facts">Details</h2>
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <Badge value={l.is_expired && !revoked ? 'expired' : l.status} />
          </dd>
          <dt>Product</dt>
          <dd>
            <Link href={`/products/${l.product_id}`}>{l.product_name}</Link>
            {l.variation_name ? ` — ${l.variation_name}` : ''}
          </dd>
          <dt>Customer</dt>
          <dd>
            {l.user_name ? `${l.user_name} ` : ''}
            <Link href={`/customers/${l.user_id}`}>{l.user_email}</Link>{' '}
            <span className="muted">(customer #{l.user_id})</span>
          </dd>
          <dt>Sites</dt>
          <dd>
            {l.activation_count} active of {limit(l.activation_limit)}
            {stagingCount > 0 ? `, and ${stagingCount} staging (not counted)` : ''}
          </dd>
          <dt>Usage expires</dt>
          <dd>{when(l.expires_at, 'never')}</dd>
          <dt>Updates</dt>
          <dd>
            {l.entitlements.update_entitled
              ? `entitled${l.entitlements.updates_expires_at ? ` until ${day(l.entitlements.updates_expires_at)}` : ''}`
              : 'not entitled'}
          </dd>
          <dt>Order</dt>
          <dd>{l.order_id ? `#${l.order_id}` : 'issued by hand'}</dd>
          <dt>Issued</dt>
          <dd>{when(l.created_at)}</dd>
        </dl>
      </section>
      {revoked ? null : <ChangeLicense license={l} onChanged={refresh} />}
      {l.status === 'active' &&
      !l.is_expired &&
      (l.subscription_id === null || l.entitlements.subscription_status === 'active') ? (
        <ChangeTier license={l} onChanged={refresh} />
      ) : null}
      <section aria-labelledby="sites">
        <h2 id="sites">Activations</h2>
        <DataTable
          caption="Activations"
          columns={columns}
          data={l.activations}
          sortable
          empty="No site has activated this license yet."
        />
      </section>
      {transfers.section}
      <History type="license" id={l.id} />
      {confirm.dialog}
    </Page>
  );
}

interface LimitForm {
  activation_limit: string;
}
interface ExpiryForm {
  date: string;
}

const dateInput = (value: string | null) => {
  const d = value ? parseUtc(value) : null;
  return d ? d.toISOString().slice(0, 10) : '';
};

/** PATCH /v1/licenses/{id}: the activation limit, and the usage expiry (extend, or none). */
function ChangeLicense({
  license,
  onChanged,
}: {
  license: License;
  onChanged: (message: string) => Promise<void>;
}) {
  const ids = { limit: useId(), limitHint: useId(), date: useId(), dateHint: useId() };
  const limitForm = useForm<LimitForm>({ values: { activation_limit: String(license.activation_limit) } });
  const expiryForm = useForm<ExpiryForm>({ values: { date: dateInput(license.expires_at) } });
  const change = useMutation({
    mutationFn: (body: Body<'/v1/licenses/{id}', 'patch'>) =>
      ok(api.PATCH('/v1/licenses/{id}', { params: { path: { id: license.id } }, body })),
  });

  // A refusal is shown from `change.error`, in words; nothing else is to be done with it here.
  const run = async (body: Record<string, unknown>, message: string) => {
    try {
      await change.mutateAsync(body);
    } catch {
      return;
    }
    await onChanged(message);
  };
  const setExpiry = (date: string | null) =>
    run(
      { usage_expires_at: date ? `${date}T23:59:59Z` : null },
      date
        ? `The license now works until the end of ${day(`${date}T12:00:00Z`)} (UTC).`
        : 'The license no longer expires.',
    );
  const extendBy = (days: number) => {
    const base = license.expires_at ? parseUtc(license.expires_at) : null;
    const from = base && base.getTime() > Date.now() ? base : new Date();
    const next = new Date(from.getTime() + days * 86_400_000).toISOString().slice(0, 10);
    expiryForm.setValue('date', next);
    return setExpiry(next);
  };

  return (
    <section aria-labelledby="change" className="card">
      <h2 id="change">Change</h2>
      <ErrorNote error={change.error} />
      <div className="two">
        <form
          onSubmit={limitForm.handleSubmit((f) =>
            run(
              { activation_limit: Number(f.activation_limit) },
              `The activation limit is now ${limit(Number(f.activation_limit))}.`,
            ),
          )}
        >
          <div className="field">
            <label htmlFor={ids.limit}>Activation limit</label>
            <input
              id={ids.limit}
              type="number"
              min={0}
              max={1000000}
              inputMode="numeric"
              aria-describedby={ids.limitHint}
              aria-invalid={limitForm.formState.errors.activation_limit ? true : undefined}
              {...limitForm.register('activation_limit', {
                required: 'Enter a number of sites.',
                pattern: { value: /^\d+$/, message: 'A whole number of sites, 0 for unlimited.' },
              })}
            />
            <p className="hint" id={ids.limitHint}>
              {limitForm.formState.errors.activation_limit?.message ?? 'Sites at once; 0 = unlimited.'}
            </p>
          </div>
          <button type="submit" disabled={change.isPending}>
            Change limit
          </button>
        </form>
        <form onSubmit={expiryForm.handleSubmit((f) => setExpiry(f.date || null))}>
          <div className="field">
            <label htmlFor={ids.date}>Works until (end of day, UTC)</label>
            <input
              id={ids.date}
              type="date"
              aria-describedby={ids.dateHint}
              {...expiryForm.register('date')}
            />
            <p className="hint" id={ids.dateHint}>
              Leave empty for no expiry.
            </p>
          </div>
          <div className="buttons">
            <button type="submit" disabled={change.isPending}>
              Set expiry
            </button>
            {license.expires_at ? (
              <>
                <button type="button" onClick={() => extendBy(30)} disabled={change.isPending}>
                  Extend 30 days
                </button>
                <button type="button" onClick={() => extendBy(365)} disabled={change.isPending}>
                  Extend 1 year
                </button>
              </>
            ) : null}
          </div>
        </form>
      </div>
    </section>
  );
}

/**
 * Upgrade or downgrade for the customer (docs/selling.md, 'Upgrades and downgrades'): the tiers
 * the license may move to with their prorated prices, and the order that moves it, which the
 * customer pays through the store's pay page (a move that costs nothing applies at once).
 */
function ChangeTier({
  license,
  onChanged,
}: {
  license: License;
  onChanged: (message: string) => Promise<void>;
}) {
  const ids = { target: useId(), hint: useId() };
  const [choice, setChoice] = useState('');
  const [order, setOrder] = useState<{ id: number; total: string; currency: string } | null>(null);
  const quote = useQuery({
    queryKey: ['license', license.id, 'upgrades'],
    queryFn: () => ok(api.GET('/v1/licenses/{id}/upgrades', { params: { path: { id: license.id } } })),
  });
  const create = useMutation({
    mutationFn: (body: { product_id: number; variation_id?: number }) =>
      ok(api.POST('/v1/licenses/{id}/upgrade-order', { params: { path: { id: license.id } }, body })),
  });
  // A license that cannot change tier (a trial) has no section; nor has one without another tier.
  if (!quote.data || quote.data.targets.length === 0) return null;
  const q = quote.data;
  const targets = q.targets;
  const selected = choice || `${targets[0]!.product_id}:${targets[0]!.variation_id}`;
  const submit = async () => {
    const [productId, variationId] = selected.split(':').map(Number);
    const body = variationId
      ? { product_id: productId!, variation_id: variationId }
      : { product_id: productId! };
    let made: Awaited<ReturnType<typeof create.mutateAsync>>;
    try {
      made = await create.mutateAsync(body);
    } catch {
      return;
    }
    if (made.status === 'pending') {
      setOrder({ id: made.order_id, total: made.total, currency: made.currency });
      await onChanged(`Upgrade order #${made.order_id} is waiting for the customer's payment.`);
    } else {
      setOrder(null);
      await onChanged('The license moved to its new tier: the move cost nothing.');
    }
  };
  return (
    <section aria-labelledby="tier" className="card">
      <h2 id="tier">Upgrade or downgrade</h2>
      <ErrorNote error={create.error} />
      <p>
        Paid for this tier: {q.paid} {q.currency}.{' '}
        {q.days_left === null
          ? 'No expiry: all of it counts as credit.'
          : `${q.days_left} of ${q.period_days} days left.`}{' '}
        Credit: {q.credit} {q.currency}.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="field">
          <label htmlFor={ids.target}>New tier</label>
          <select
            id={ids.target}
            value={selected}
            aria-describedby={ids.hint}
            onChange={(e) => setChoice(e.target.value)}
          >
            {targets.map((t) => (
              <option key={`${t.product_id}:${t.variation_id}`} value={`${t.product_id}:${t.variation_id}`}>
                {t.name} — {t.direction}, {limit(t.activation_limit)} sites, pays {t.total} {q.currency}
              </option>
            ))}
          </select>
          <p className="hint" id={ids.hint}>
            The key stays. The customer pays the order on the store's pay page; the new tier applies then.
          </p>
        </div>
        <button type="submit" disabled={create.isPending}>
          Create upgrade order
        </button>
      </form>
      {order ? (
        <p>
          <Link href={`/orders/${order.id}`}>Order #{order.id}</Link>: {order.total} {order.currency},
          pending.
        </p>
      ) : null}
    </section>
  );
}
