import { iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { ImportKind, ImportProblem, ImportRelease } from './records.js';

/** What one kind of record came to: made now, found from an earlier run (or already in the store), or not imported. */
export interface KindCount {
  created: number;
  present: number;
  skipped: number;
}

export type Outcome = 'created' | 'present';

/** A record's writing, in the caller's transaction (checked before, so it only writes). */
export type Write = (tx: Tx) => Promise<Outcome>;

const MAX_PROBLEMS = 10_000;

/** A license whose link the import left as it was, as the report lists it. */
export interface KeptLink {
  /** The license's id in the source. */
  license: string;
  kind: 'orders' | 'subscriptions';
  /** The source's id of the order or subscription the license names. */
  sourceId: string;
  /** The Tollgate order or subscription the license stays linked to. */
  keptId: number;
}

/**
 * Licenses an earlier run imported without their order or subscription, linked by this run: how
 * many to an order, how many to a subscription, and those already linked to another (the first 10,000).
 */
export interface ImportLinks {
  orders: number;
  subscriptions: number;
  kept: KeptLink[];
}

/**
 * A subscription of the source that still renews and that its gateway bills by itself (a profile
 * id that is not Stripe's `sub_…`, e.g. PayPal's `I-…`): Tollgate cannot ask that gateway, so the
 * report lists it for the owner to cancel there before Tollgate's renewal falls due.
 */
export interface OldGatewaySubscription {
  /** The subscription's id in the source. */
  subscription: string;
  gateway: string;
  profile: string;
  nextPaymentAt: string | null;
}

/** One run's counts, problems, and (in a dry run) what it would have made. */
export class Run {
  readonly counts = Object.fromEntries(
    (
      ['customers', 'products', 'releases', 'orders', 'licenses', 'activations', 'subscriptions'] as const
    ).map((k) => [k, { created: 0, present: 0, skipped: 0 }]),
  ) as Record<ImportKind, KindCount>;
  readonly problems: ImportProblem[] = [];
  problemCount = 0;
  /** Paid orders' totals per currency: written or found, and reported. */
  readonly revenues = new Map<string, { imported: number; skipped: number }>();
  readonly stripe = { customers: 0, cards: 0 };
  /** Licenses of earlier runs linked now to their order or subscription, and the links kept. */
  readonly links: ImportLinks = { orders: 0, subscriptions: 0, kept: [] };
  /** Running subscriptions a gateway other than Stripe bills by itself: to cancel there (the first 10,000). */
  readonly oldGateways: OldGatewaySubscription[] = [];
  /** The source's subscriptions that still renew (active, on hold or ending at the period's end). */
  readonly renewing = new Set<string>();
  private readonly plans = new Map<string, Map<string, number>>();

  constructor(
    readonly source: string,
    readonly dryRun: boolean,
  ) {}

  count(kind: ImportKind): KindCount {
    return this.counts[kind];
  }

  revenue(currency: string): { imported: number; skipped: number } {
    let r = this.revenues.get(currency);
    if (!r) {
      r = { imported: 0, skipped: 0 };
      this.revenues.set(currency, r);
    }
    return r;
  }

  problem(p: ImportProblem): void {
    this.counts[p.kind].skipped++;
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(p);
  }

  /** A license already linked to another order or subscription than the source's: kept, and reported. */
  keptLink(k: KeptLink): void {
    if (this.links.kept.length < MAX_PROBLEMS) this.links.kept.push(k);
  }

  oldGateway(s: OldGatewaySubscription): void {
    if (this.oldGateways.length < MAX_PROBLEMS) this.oldGateways.push(s);
  }

  /** A dry run's stand-in id (-1) for what it would make, so later kinds find it; or a record's known id. */
  plan(kind: string, sourceId: string, id = -1): void {
    const m = this.plans.get(kind) ?? new Map<string, number>();
    m.set(sourceId, id);
    this.plans.set(kind, m);
  }

  planned(kind: string, sourceId: string): number | undefined {
    return this.plans.get(kind)?.get(sourceId);
  }
}

/** A record the importer will not write, and why (reported as a problem). */
export class ImportRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** A record's problem reason: the importer's refusal, the service's error code, or a failed write. */
export const reasonOf = (e: unknown) =>
  e instanceof ImportRefusal ? e.reason : e instanceof ApiError ? e.code : 'write_failed';

/** A record's id in the report: a release has none of its own, so its product and version. */
export function idOf(kind: ImportKind, item: unknown): string {
  if (kind === 'releases') {
    const r = item as ImportRelease;
    return `${r.productSourceId}@${r.version}`;
  }
  return (item as { sourceId?: string }).sourceId ?? '';
}

export const isAmount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** An RFC 3339 time as Tollgate stores it, or a refusal. */
export function time(value: string, reason: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) throw new ImportRefusal(reason);
  return iso(new Date(ms));
}
