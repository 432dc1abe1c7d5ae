import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, page, query } from '../api';
import { when } from '../format';
import type { AuditEvent } from '../resources';
import { ErrorNote, Loading, Page } from '../ui/feedback';
import { FilterSelect, ListFilters, PagedList, useServerList } from '../ui/list';
import { columnsFor, DataTable } from '../ui/table';
import { actionLabel, fieldLabel, humanise, orderStatusLabel, subscriptionStatusLabel } from '../words';

const ENTITY_TYPES = [
  ['license', 'License'],
  ['product', 'Product'],
  ['release', 'Release'],
  ['artifact', 'Artifact (release file)'],
  ['order', 'Order'],
  ['coupon', 'Coupon'],
  ['tax_rate', 'Tax rate'],
  ['shipping_zone', 'Shipping zone'],
  ['settings', 'Settings'],
  ['user', 'User'],
  ['subscription', 'Subscription'],
  ['payment_gateway', 'Payment gateways'],
  ['webhook_event', 'Webhook event'],
  ['legacy_download', 'Catalogue file'],
  ['signing_key', 'Signing keys'],
] as const;

/**
 * The console's page for an audited object; a release, an artifact and a catalogue file have none
 * of their own (they are under their product), a tax rate, a shipping zone, the payment gateways
 * and a webhook event are on their lists.
 */
function entityHref(type: string, id: number): string | null {
  switch (type) {
    case 'license':
      return `/licenses/${id}`;
    case 'product':
      return `/products/${id}`;
    case 'order':
      return `/orders/${id}`;
    case 'coupon':
      return `/coupons/${id}`;
    case 'tax_rate':
      return '/tax-rates';
    case 'shipping_zone':
      return '/shipping-zones';
    case 'settings':
      return '/settings';
    case 'user':
      return `/customers/${id}`;
    case 'subscription':
      return `/subscriptions/${id}`;
    case 'payment_gateway':
      return '/payment-gateways';
    case 'webhook_event':
      return '/webhooks';
    default:
      return null;
  }
}

/** The entity types' words, for the filter and for each entry's object. */
const ENTITY_WORDS: Record<string, string> = Object.fromEntries(ENTITY_TYPES);
/** Objects of which the store has one: no number after their name. */
const SINGLE = new Set(['settings', 'payment_gateway', 'signing_key']);

function Entity({ type, id }: { type: string; id: number }) {
  const name = ENTITY_WORDS[type] ?? humanise(type);
  const words = SINGLE.has(type) ? name : `${name} #${id}`;
  const href = entityHref(type, id);
  return href ? <Link href={href}>{words}</Link> : <span>{words}</span>;
}

const shown = (v: unknown): string =>
  v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v);

/** A status as the owner reads it elsewhere in the console (the order's and subscription's words). */
const shownValue = (type: string, field: string, v: unknown): string =>
  field === 'status' && typeof v === 'string' && type === 'order'
    ? orderStatusLabel(v)
    : field === 'status' && typeof v === 'string' && type === 'subscription'
      ? subscriptionStatusLabel(v)
      : shown(v);

/** Each changed field, its value before and after (docs/admin.md, 'Audit trail'). */
function Changes({ changes, type }: { changes: AuditEvent['changes']; type: string }) {
  const fields = Object.entries(changes ?? {});
  if (fields.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="changes">
      {fields.map(([field, c]) => (
        <li key={field} data-field={field}>
          <span className="field-name">{fieldLabel(field)}</span>: {shownValue(type, field, c?.before)} →{' '}
          {shownValue(type, field, c?.after)}
        </li>
      ))}
    </ul>
  );
}

/** The jobs of Tollgate itself that record changes, in words (docs/admin.md, 'Audit trail'). */
const JOBS: Record<string, string> = {
  stale_activations: 'stale activation',
  vault_migration: 'vault moved to the bucket',
};

/** Who made a change: a person's email, a site, or Tollgate itself and which of its jobs. */
function actorName(actor: AuditEvent['actor']): string {
  const name = actor.name ?? '';
  if (actor.kind === 'site') return `Site ${name}`;
  if (actor.kind === 'system') return `Tollgate (${JOBS[name] ?? name})`;
  return actor.email ?? '';
}

const col = columnsFor<AuditEvent>();
const whoWhen = [
  col.accessor('created_at', { header: 'When', cell: (c) => when(c.getValue()) }),
  col.accessor((e) => actorName(e.actor), {
    id: 'actor',
    header: 'Who',
  }),
];
const rest = [
  col.accessor('action', {
    header: 'Action',
    cell: (c) => <span data-action={c.getValue()}>{actionLabel(c.getValue())}</span>,
  }),
  col.accessor('changes', {
    header: 'Changes',
    cell: (c) => <Changes changes={c.getValue()} type={c.row.original.entity_type} />,
  }),
];
const columns = [
  ...whoWhen,
  col.accessor('entity_type', {
    header: 'What',
    cell: (c) => <Entity type={c.getValue()} id={c.row.original.entity_id} />,
  }),
  ...rest,
];
const historyColumns = [...whoWhen, ...rest];

/** Audit: every administrator change, newest first, by entity type (GET /v1/audit-events). */
export function Audit() {
  const l = useServerList({
    key: ['audit-events'],
    names: ['entity_type'],
    fetchPage: (query) => page(api.GET('/v1/audit-events', { params: { query } })),
    defaultPerPage: 50,
  });

  return (
    <Page title="Audit">
      <ListFilters label="Filter the audit trail" params={l}>
        <FilterSelect
          label="Entity type"
          value={l.entity_type}
          choices={ENTITY_TYPES}
          onChange={l.filter('entity_type')}
        />
      </ListFilters>
      <PagedList
        what="Audit events"
        of={l}
        columns={columns}
        empty={l.entity_type ? 'No change of this kind is recorded.' : 'No change is recorded yet.'}
      />
    </Page>
  );
}

/**
 * An object's own history on its page: its latest changes, and a link to the Audit screen for the
 * rest of that entity type.
 */
export function History({ type, id }: { type: 'license' | 'product' | 'order'; id: number }) {
  const events = useQuery({
    queryKey: ['audit-events', { type, id }],
    queryFn: () =>
      page(
        api.GET('/v1/audit-events', {
          params: { query: { entity_type: type, entity_id: id, page: 1, per_page: 20 } },
        }),
      ),
  });
  return (
    <section aria-labelledby="history">
      <h2 id="history">History</h2>
      <ErrorNote error={events.error} />
      {events.isPending ? (
        <Loading what="the history" />
      ) : events.data ? (
        <>
          <DataTable
            caption="Recorded changes"
            columns={historyColumns}
            data={events.data.rows}
            empty="No change by an administrator is recorded."
          />
          {events.data.total > events.data.rows.length ? (
            <p className="muted">
              The latest {events.data.rows.length} of {events.data.total} changes.{' '}
              <Link href={`/audit${query({ entity_type: type })}`}>All {type} changes</Link>
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
