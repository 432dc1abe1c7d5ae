import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/errors.js';

/**
 * Who made a change: the signed-in administrator, or the user of the application password. A
 * route passes it to the service method it calls (docs/development.md, 'Who made a change').
 */
export interface Actor {
  user_id: number;
  email: string;
}

/**
 * Who acted when no person did: a site, named by its normalised domain, whose reinstall took one of
 * its license's activations over (docs/licensing.md, '2.4 Reinstalls'). It is recorded with
 * `actor_kind` `site`; the trail shows it as `{kind, name}` with no user.
 */
export interface SiteActor {
  kind: 'site';
  name: string;
}

export const siteActor = (domain: string): SiteActor => ({ kind: 'site', name: domain });

/**
 * Tollgate itself, when one of its background jobs made the change: `name` says which, e.g.
 * `stale_activations` (docs/licensing.md, 'Last seen and stale activations'). Recorded with
 * `actor_kind` `system`; the trail shows it as `{kind, name}` with no user.
 */
export interface SystemActor {
  kind: 'system';
  name: string;
}

export const systemActor = (job: string): SystemActor => ({ kind: 'system', name: job });

/** The caller of a guarded route as an actor; a route without `requireAdmin` has none to give. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.user) throw new ApiError('rest_not_logged_in');
  return { user_id: request.user.id, email: request.user.email };
}

/** Field -> its value before and after the change; only changed fields are kept. */
export type Changes = Record<string, { before: unknown; after: unknown }>;

/** The entities whose changes are recorded. */
export type EntityType =
  | 'license'
  | 'product'
  | 'release'
  | 'artifact'
  | 'settings'
  | 'order'
  | 'coupon'
  | 'tax_rate'
  | 'shipping_zone'
  | 'user'
  | 'subscription'
  | 'payment_gateway'
  | 'webhook_event'
  | 'legacy_download'
  | 'mail_message'
  | 'signing_key'
  | 'test_data'
  | 'import';

/** What a service hands to the trail, inside the change's own transaction. */
export interface AuditEntry {
  entity_type: EntityType;
  entity_id: number;
  action: string;
  changes: Changes;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields of `after` whose value differs from `before` (missing counts as null). */
export function diff(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields?: string[],
): Changes {
  const out: Changes = {};
  for (const field of fields ?? Object.keys(after)) {
    const b = before[field] ?? null;
    const a = after[field] ?? null;
    if (!same(a, b)) out[field] = { before: b, after: a };
  }
  return out;
}

/** A license key is never recorded: only its last four characters, to tell keys apart. */
export const maskKey = (key: string): string => `…${key.slice(-4)}`;
