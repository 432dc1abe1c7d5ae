import { type Static, Type } from 'typebox';
import { rfc3339 } from '../../clock.js';
import { ApiError } from '../../http/errors.js';

/**
 * The entitlement policy an administrator gives a product, and a license snapshots (its shape:
 * docs/catalogue.md, 'Products'): the catalogue's, which licensing and orders read.
 */
const Days = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });
export const EntitlementPolicyInput = Type.Object(
  {
    usage: Type.Object(
      { mode: Type.Enum(['lifetime', 'days', 'subscription']), days: Type.Optional(Days) },
      { additionalProperties: false },
    ),
    updates: Type.Object(
      { mode: Type.Enum(['license', 'days']), days: Type.Optional(Days) },
      { additionalProperties: false },
    ),
    support: Type.Optional(
      Type.Object(
        { mode: Type.Enum(['unspecified', 'days']), days: Type.Optional(Days) },
        { additionalProperties: false },
      ),
    ),
    historical_downloads: Type.Optional(Type.Boolean()),
    /**
     * The release channels the license may take (docs/licensing.md, 'Release channels'); absent
     * means every channel. A check that asks for more is served the least stable one listed.
     */
    channels: Type.Optional(
      Type.Array(Type.Enum(['stable', 'rc', 'beta', 'alpha']), {
        minItems: 1,
        maxItems: 4,
        uniqueItems: true,
      }),
    ),
  },
  { additionalProperties: false },
);
export type EntitlementPolicyInput = Static<typeof EntitlementPolicyInput>;

type Part = { mode: string; days?: number };

/** A policy with its defaults filled in: what products store and licenses snapshot. */
export interface NormalisedPolicy {
  usage: Part;
  updates: Part;
  support: Part;
  historical_downloads: boolean;
  /** Absent: every channel (and the stored text stays what it was before channels existed). */
  channels?: string[];
}

export interface PolicySnapshot extends NormalisedPolicy {
  issued_at: string;
}

const MAX_DAYS = 36500;
const DAY_MS = 86_400_000;

/**
 * The one validation of a policy (products and licenses alike): `days` is required (1 to 36500)
 * exactly when a mode is `days` and refused otherwise, so a stored policy never carries an
 * ignored number. `field` names the offending parameter in the error.
 */
export function normalisePolicy(
  input: EntitlementPolicyInput,
  field = 'entitlement_policy',
): NormalisedPolicy {
  const support: Part = input.support ?? { mode: 'unspecified' };
  const parts: Record<string, Part> = { usage: input.usage, updates: input.updates, support };
  for (const [name, part] of Object.entries(parts)) {
    const needsDays = part.mode === 'days';
    const ok = needsDays
      ? part.days !== undefined && part.days >= 1 && part.days <= MAX_DAYS
      : part.days === undefined;
    if (!ok) {
      throw new ApiError('invalid_entitlement_policy', {
        data: {
          params: { [`${field}.${name}.days`]: needsDays ? 'required, 1 to 36500' : 'only with mode days' },
        },
      });
    }
  }
  const pick = (p: Part): Part => (p.days === undefined ? { mode: p.mode } : { mode: p.mode, days: p.days });
  return {
    usage: pick(input.usage),
    updates: pick(input.updates),
    support: pick(support),
    historical_downloads: input.historical_downloads ?? false,
    ...(input.channels !== undefined ? { channels: [...input.channels] } : {}),
  };
}

/** The snapshot stored on a license: the normalised policy and the time its `days` windows count from. */
export function snapshotPolicy(input: EntitlementPolicyInput, issuedAt: Date): PolicySnapshot {
  return { issued_at: rfc3339(issuedAt), ...normalisePolicy(input) };
}

/** The usage expiry a policy implies when none is given: `days` after issue, else none. */
export function usageExpiryOf(snapshot: PolicySnapshot, issuedAt: Date): Date | null {
  return snapshot.usage.mode === 'days' && snapshot.usage.days !== undefined
    ? new Date(issuedAt.getTime() + snapshot.usage.days * DAY_MS)
    : null;
}
