import { stat } from 'node:fs/promises';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type CurrencyContext, currencySymbol, resolveCurrency } from '../catalogue/currency.js';
import { currencyDecimals, fromMinor } from '../catalogue/money.js';
import { legacyIdentity } from '../identity/identity.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { LicenseStatus } from '../licensing/licensing.tables.js';
import type { OrdersService } from '../orders/orders.service.js';
import { plainOrder } from '../orders/orders.service.js';
import type { OrderStatus } from '../orders/orders.tables.js';
import type { PublishingService } from '../releases/publishing.service.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { StripeService } from '../stripe/stripe.service.js';
import { STRIPE_SUBSCRIPTION } from '../subscriptions/subscriptions.model.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { ImportsRepository } from './imports.repository.js';
import {
  IMPORT_ORDER,
  type ImportActivation,
  type ImportCustomer,
  type ImportKind,
  type ImportLicense,
  type ImportOrder,
  type ImportOrderStatus,
  type ImportProblem,
  type ImportProduct,
  type ImportRelease,
  type ImportSource,
  type ImportSubscription,
  type ImportTotals,
  isProblem,
} from './records.js';

/** What one kind of record came to: made now, found from an earlier run (or already in the store), or not imported. */
export interface KindCount {
  created: number;
  present: number;
  skipped: number;
}

export interface Reconciliation {
  kind: 'customers' | 'licenses' | 'activations' | 'orders' | 'subscriptions';
  /** Rows the source holds. */
  source: number;
  /** Rows now in Tollgate from this source (made now or before). */
  imported: number;
  /** Rows reported and left out. */
  skipped: number;
  /** source = imported + skipped. */
  ok: boolean;
}

/** The paid orders' totals of one currency, in its minor units: the source's against the imported. */
export interface RevenueReconciliation {
  currency: string;
  /** What the source says its paid orders came to. */
  source: number;
  /** The paid orders now in Tollgate from this source (made now or before). */
  imported: number;
  /** The paid orders the importer reported and left out (a reader's problem rows have no amount). */
  skipped: number;
  /** source = imported + skipped. */
  ok: boolean;
}

export interface ImportReport {
  source: string;
  dryRun: boolean;
  counts: Record<ImportKind, KindCount>;
  /** Every row not imported, with its reason (the first 10,000; `problemCount` counts them all). */
  problems: ImportProblem[];
  problemCount: number;
  reconciliation: Reconciliation[];
  /** Per currency, every currency the source or the import names. */
  revenue: RevenueReconciliation[];
  /** Imported customers whose Stripe customer (`cus_…`) is kept, and how many of them with a card. */
  stripe: { customers: number; cards: number };
  totals: ImportTotals;
  /** Every row of the source is either in Tollgate or reported. */
  ok: boolean;
}

const MAX_PROBLEMS = 10_000;

/** The kinds whose rows are counted against the source's own counts. */
const RECONCILED = ['customers', 'orders', 'subscriptions', 'licenses', 'activations'] as const;

/** The old store's order states, as a Tollgate order stores them. */
const ORDER_STATUS: Record<ImportOrderStatus, OrderStatus> = {
  pending: 'pending',
  completed: 'completed',
  refunded: 'refunded',
  failed: 'failed',
  cancelled: 'cancelled',
};

const SUBSCRIPTION_STATUSES = new Set(['active', 'on-hold', 'pending-cancel', 'cancelled', 'expired']);
/** The states in which a subscription renews: its currency must be one the store charges in. */
const RUNNING = new Set(['active', 'on-hold', 'pending-cancel']);
const PERIODS = new Set(['day', 'week', 'month', 'year']);

/** Who makes what an import makes, in the audit trail. */
const IMPORT_ACTOR = systemActor('import');

const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]{1,250}$/;

const isAmount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
/** An RFC 3339 time as Tollgate stores it, or a refusal. */
function time(value: string, reason: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) throw new ImportRefusal(reason);
  return iso(new Date(ms));
}

/**
 * Licenses and activations are written this many to a transaction (docs/performance.md, 'Importing
 * another store'): a commit per record was most of the activations' time on PostgreSQL. Each
 * record is still whole (the transaction holds it with its map row), and a batch that fails is
 * written again record by record, so one bad record costs only itself.
 */
const BATCH = 100;

type Write = (tx: Tx) => Promise<'created' | 'present'>;

/** How often (in records) a run reports its progress, besides at the end of each kind. */
export const PROGRESS_EVERY = 500;

/**
 * Where a run stands: called every `PROGRESS_EVERY` records and when a kind ends, with the counts
 * so far. A callback that throws stops the run there (between records, so each is whole).
 */
export type ImportProgress = (counts: Record<ImportKind, KindCount>) => void | Promise<void>;

/** EDD's and the others' license states, as a Tollgate license stores them. */
function statusOf(license: ImportLicense): LicenseStatus {
  if (license.status === 'revoked') return 'revoked';
  if (license.status === 'disabled') return 'suspended';
  return 'active';
}

/**
 * Moves an old store's records into Tollgate (docs/migrating.md, 'Importing'): customers, products
 * and their variations, licenses with their keys unchanged, and the sites activated on them. Each
 * record is written in a transaction of its own with its row of the import map, so a run that
 * stops part-way leaves every record whole, and the next run finds what the first made (by the map,
 * and by the natural keys: an email, a product slug, a license key, a site) instead of making it
 * twice. A dry run reads and checks everything and writes nothing. Imported records start no
 * webhooks and send no email: they happened in the old store.
 */
export class ImportService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: ImportsRepository,
    private readonly accounts: AccountsService,
    private readonly catalogue: CatalogueService,
    private readonly licenses: LicenseService,
    private readonly orders: Pick<OrdersService, 'insertImported' | 'addStoreNote' | 'linkImportedRenewals'>,
    private readonly subscriptions: Pick<SubscriptionsService, 'insertImported'>,
    private readonly stripe: Pick<
      StripeService,
      'importedCard' | 'linkImported' | 'keepsCard' | 'oldSubscription'
    >,
    private readonly publishing: Pick<PublishingService, 'createFromFile'>,
    /** The largest release zip an upload takes (MAX_UPLOAD_BYTES). */
    private readonly maxUploadBytes: number,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  async run(
    source: ImportSource,
    opts: { dryRun: boolean; onProgress?: ImportProgress },
  ): Promise<ImportReport> {
    const run = new Run(source.name, opts.dryRun);
    let seen = 0;
    for (const kind of IMPORT_ORDER) {
      const batched = !opts.dryRun && (kind === 'licenses' || kind === 'activations');
      let pending: (ImportLicense | ImportActivation)[] = [];
      for await (const item of source.read(kind)) {
        if (opts.onProgress && ++seen % PROGRESS_EVERY === 0) await opts.onProgress(run.counts);
        if (isProblem(item)) {
          run.problem(item);
          continue;
        }
        // A paid order's total, counted as imported or skipped in the revenue reconciliation.
        const paid =
          kind === 'orders' && (item as ImportOrder).status === 'completed' ? (item as ImportOrder) : null;
        if (batched) {
          const record = item as ImportLicense | ImportActivation;
          // A source id seen again is written after the first, as a run without batches would.
          if (pending.length === BATCH || pending.some((p) => p.sourceId === record.sourceId)) {
            await this.batch(run, kind as 'licenses' | 'activations', pending);
            pending = [];
          }
          pending.push(record);
          continue;
        }
        try {
          const outcome = await this.one(run, kind, item);
          if (outcome === 'created') run.count(kind).created++;
          else run.count(kind).present++;
          if (paid) run.revenue(paid.currency).imported += paid.total;
        } catch (e) {
          run.problem({ kind, sourceId: idOf(kind, item), reason: reasonOf(e) });
          if (paid && isAmount(paid.total)) run.revenue(paid.currency).skipped += paid.total;
        }
      }
      if (pending.length > 0) await this.batch(run, kind as 'licenses' | 'activations', pending);
      await opts.onProgress?.(run.counts);
    }
    if (!opts.dryRun) {
      await withTransaction(this.database, async (tx) => {
        for (const kind of IMPORT_ORDER) {
          const c = run.count(kind);
          if (c.created + c.present + c.skipped === 0) continue;
          await this.audit.record(
            IMPORT_ACTOR,
            {
              entity_type: 'import',
              entity_id: 0,
              action: `import_${kind}`,
              changes: {
                source: { before: null, after: source.name },
                created: { before: null, after: c.created },
                present: { before: null, after: c.present },
                skipped: { before: null, after: c.skipped },
              },
            },
            tx,
          );
        }
      });
    }
    const totals = await source.totals();
    const reconciliation = RECONCILED.map((kind) => {
      const c = run.count(kind);
      const imported = c.created + c.present;
      return {
        kind,
        source: totals[kind],
        imported,
        skipped: c.skipped,
        ok: totals[kind] === imported + c.skipped,
      };
    });
    const currencies = [...new Set([...Object.keys(totals.revenue), ...run.revenues.keys()])].sort();
    const revenue = currencies.map((currency) => {
      const r = run.revenue(currency);
      const sourceTotal = totals.revenue[currency] ?? 0;
      return { currency, source: sourceTotal, ...r, ok: sourceTotal === r.imported + r.skipped };
    });
    return {
      source: source.name,
      dryRun: opts.dryRun,
      counts: run.counts,
      problems: run.problems,
      problemCount: run.problemCount,
      reconciliation,
      revenue,
      stripe: run.stripe,
      totals,
      ok: reconciliation.every((r) => r.ok) && revenue.every((r) => r.ok),
    };
  }

  private one(run: Run, kind: ImportKind, item: unknown): Promise<'created' | 'present'> {
    switch (kind) {
      case 'customers':
        return this.customer(run, item as ImportCustomer);
      case 'products':
        return this.product(run, item as ImportProduct);
      case 'releases':
        return this.release(run, item as ImportRelease);
      case 'orders':
        return this.order(run, item as ImportOrder);
      case 'subscriptions':
        return this.subscription(run, item as ImportSubscription);
      case 'licenses':
        return this.license(run, item as ImportLicense);
      default:
        return this.activation(run, item as ImportActivation);
    }
  }

  /**
   * Licenses or activations written together: the map says which were imported before (one
   * query), each other one is checked and prepared on its own (a refusal is its own problem), then
   * all are written in one transaction; if that fails, each again in a transaction of its own.
   */
  private async batch(
    run: Run,
    kind: 'licenses' | 'activations',
    items: (ImportLicense | ImportActivation)[],
  ) {
    const counts = run.count(kind);
    const known = await this.repo.known(
      run.source,
      kind,
      items.map((i) => i.sourceId),
    );
    const writes: { sourceId: string; write: Write }[] = [];
    for (const item of items) {
      if (known.has(item.sourceId)) {
        if (kind === 'licenses') await this.linkLateSubscription(run, item as ImportLicense);
        counts.present++;
        continue;
      }
      try {
        const write =
          kind === 'licenses'
            ? await this.licenseWrite(run, item as ImportLicense)
            : await this.activationWrite(run, item as ImportActivation);
        writes.push({ sourceId: item.sourceId, write });
      } catch (e) {
        run.problem({ kind, sourceId: item.sourceId, reason: reasonOf(e) });
      }
    }
    if (writes.length === 0) return;
    let outcomes: ('created' | 'present')[];
    try {
      outcomes = await withTransaction(this.database, async (tx) => {
        const done: ('created' | 'present')[] = [];
        for (const w of writes) done.push(await w.write(tx));
        return done;
      });
    } catch {
      outcomes = [];
      for (const w of writes) {
        try {
          outcomes.push(await withTransaction(this.database, w.write));
        } catch (e) {
          run.problem({ kind, sourceId: w.sourceId, reason: reasonOf(e) });
        }
      }
    }
    for (const outcome of outcomes) counts[outcome]++;
  }

  /** The Tollgate id of a record imported before (this run or an earlier one), or a refusal. */
  private async target(run: Run, kind: string, sourceId: string, missing: string): Promise<number> {
    const planned = run.planned(kind, sourceId);
    if (planned !== undefined) return planned;
    const id = await this.repo.target(run.source, kind, sourceId);
    if (id === undefined) throw new ImportRefusal(missing);
    // Products and variations are few and each is referred to by many licenses: kept for the run.
    if (kind === 'products' || kind === 'variations') run.plan(kind, sourceId, id);
    return id;
  }

  /** The Tollgate id of a record imported before, or null when it was not (it is not required). */
  private async optional(run: Run, kind: string, sourceId: string): Promise<number | null> {
    return run.planned(kind, sourceId) ?? (await this.repo.target(run.source, kind, sourceId)) ?? null;
  }

  private async customer(run: Run, c: ImportCustomer): Promise<'created' | 'present'> {
    const known = await this.repo.target(run.source, 'customers', c.sourceId);
    const stripeId =
      c.stripeCustomerId && STRIPE_CUSTOMER.test(c.stripeCustomerId) ? c.stripeCustomerId : null;
    if (known !== undefined) {
      // An earlier run's customer: their card is asked for again while none is kept (Stripe was
      // not set up then, or Stripe could not be reached).
      if (stripeId && !run.dryRun && !(await this.stripe.keepsCard(known))) {
        const stripe = await this.stripe.importedCard(stripeId);
        await withTransaction(this.database, (tx) => this.keepStripe(run, known, stripeId, stripe, tx));
      }
      return 'present';
    }
    if (run.dryRun) {
      run.plan('customers', c.sourceId);
      return 'created';
    }
    // Asked before the transaction: no transaction waits on Stripe.
    const stripe = stripeId ? await this.stripe.importedCard(stripeId) : undefined;
    return withTransaction(this.database, async (tx) => {
      const user = await this.accounts.importCustomer(
        {
          email: c.email,
          ...(c.firstName ? { first_name: c.firstName } : {}),
          ...(c.lastName ? { last_name: c.lastName } : {}),
          ...(c.passwordHash ? { password_hash: c.passwordHash } : {}),
        },
        tx,
      );
      if (stripeId) await this.keepStripe(run, user.id, stripeId, stripe, tx);
      await this.remember(run, 'customers', c.sourceId, user.id, tx);
      return user.created ? 'created' : 'present';
    });
  }

  /**
   * The customer's Stripe customer, with the card Stripe renews them on when the store takes
   * Stripe (`stripe` undefined: not set up yet, the card is asked for at the next run). One
   * Stripe no longer knows (null) is not kept: nothing could be charged to it.
   */
  private async keepStripe(
    run: Run,
    userId: number,
    customerId: string,
    stripe: Awaited<ReturnType<StripeService['importedCard']>>,
    tx: Tx,
  ): Promise<void> {
    if (stripe === null) return;
    await this.stripe.linkImported(userId, customerId, stripe?.card ?? null, tx);
    run.stripe.customers++;
    if (stripe?.card) run.stripe.cards++;
  }

  /**
   * The order's currency as the order records it: the store's own when it sells in it (symbol
   * and rate), else the ISO currency with its minor unit (an old store's sale in a currency this
   * store does not sell in; no rate is known for it).
   */
  private currencyOf(code: string, settings: Settings): CurrencyContext {
    const configured = resolveCurrency(settings, code);
    if (configured && configured.code === code) return configured;
    let decimals: number;
    try {
      if (!/^[A-Z]{3}$/.test(code)) throw new Error('not an ISO 4217 code');
      decimals = currencyDecimals(code, settings);
    } catch {
      throw new ImportRefusal('invalid_currency');
    }
    return {
      code,
      symbol: currencySymbol(code),
      decimals,
      rate: '',
      rate_id: '',
      rate_updated_at: null,
      base_currency: settings.base_currency,
      base_decimals: currencyDecimals(settings.base_currency, settings),
    };
  }

  /**
   * A release needs its zip here (every download is a checked upload, docs/releases.md): one the
   * old store knew only by its version and changelog is reported `no_file`, for the owner to
   * upload. One with its zip at hand is published from it as an upload of that zip would be, its
   * refusals (`invalid_archive`, `release_version_mismatch`, …) reported as the row's reason.
   */
  private async release(run: Run, r: ImportRelease): Promise<'created' | 'present'> {
    const sourceId = idOf('releases', r);
    const known = await this.repo.target(run.source, 'releases', sourceId);
    if (known !== undefined) return 'present';
    const productId = await this.target(run, 'products', r.productSourceId, 'unknown_product');
    if (!r.filePath) throw new ImportRefusal('no_file');
    const file = await stat(r.filePath).catch(() => null);
    if (!file?.isFile()) throw new ImportRefusal('file_unreadable');
    if (run.dryRun) {
      run.plan('releases', sourceId);
      return 'created';
    }
    const made = await this.publishing.createFromFile(
      productId,
      r.filePath,
      { version: r.version, ...(r.changelog ? { changelog: r.changelog } : {}) },
      this.maxUploadBytes,
    );
    await withTransaction(this.database, (tx) => this.remember(run, 'releases', sourceId, made.id, tx));
    return made.created ? 'created' : 'present';
  }

  /**
   * The old gateway as an order's payment method here: kept when Tollgate has a gateway of that
   * id (`stripe`, `bacs`, `cheque`), else none, so the order (and a subscription's renewals) can be
   * paid with any gateway rather than only with one this store does not have.
   */
  private async gatewayOf(name: string): Promise<string> {
    return name && (await this.catalogue.gateways.find(name)) ? name : '';
  }

  /**
   * An order of the old store, as it happened there: its items, totals, currency, status, dates,
   * gateway and customer. Nothing follows from it: no license is issued, no stock taken, no
   * invoice numbered, no email or webhook sent. Never a test order, whatever the store's mode.
   */
  private async order(run: Run, o: ImportOrder): Promise<'created' | 'present'> {
    const known = await this.repo.target(run.source, 'orders', o.sourceId);
    if (known !== undefined) return 'present';
    const status = ORDER_STATUS[o.status];
    if (!status) throw new ImportRefusal('invalid_status');
    const tax = o.tax ?? 0;
    if (!isAmount(o.total) || !isAmount(tax) || tax > o.total) throw new ImportRefusal('invalid_amount');
    const createdAt = time(o.createdAt, 'invalid_date');
    const paidAt = o.paidAt ? time(o.paidAt, 'invalid_date') : null;
    const settings = await this.settings.get();
    const ctx = this.currencyOf(o.currency, settings);
    const userId = await this.target(run, 'customers', o.customerSourceId, 'unknown_customer');
    const items: Parameters<OrdersService['insertImported']>[1] = [];
    for (const i of o.items) {
      const itemTax = i.tax ?? 0;
      if (!isAmount(i.total) || !isAmount(itemTax) || itemTax > i.total)
        throw new ImportRefusal('invalid_amount');
      if (!Number.isSafeInteger(i.quantity) || i.quantity < 1) throw new ImportRefusal('invalid_quantity');
      const productId = await this.target(run, 'products', i.productSourceId, 'unknown_product');
      const variationId = i.variationSourceId
        ? await this.target(run, 'variations', i.variationSourceId, 'unknown_variation')
        : 0;
      const net = i.total - itemTax;
      items.push({
        product_id: productId,
        variation_id: variationId,
        name: i.name.slice(0, 200),
        quantity: i.quantity,
        // The entry basis: with tax when prices include tax (docs/pricing.md).
        price: Math.round((settings.prices_include_tax ? i.total : net) / i.quantity),
        subtotal: net,
        subtotal_tax: itemTax,
        total: net,
        total_tax: itemTax,
        meta: '[]',
        subscription_id: null,
      });
    }
    if (run.dryRun) {
      run.plan('orders', o.sourceId);
      return 'created';
    }
    const gateway = (o.gateway ?? '').slice(0, 100);
    const method = await this.gatewayOf(gateway);
    const now = iso(this.clock.now());
    return this.first(async (tx) => {
      const id = await this.orders.insertImported(
        {
          ...plainOrder(ctx, settings, { customer_id: userId, created_via: 'import', total: o.total, now }),
          status,
          subtotal: o.total - tax,
          total_tax: tax,
          payment_method: method,
          payment_method_title: gateway,
          // Paid in the old store: completed when it was, refunded orders keep when they were paid.
          paid_at: status === 'completed' ? (paidAt ?? createdAt) : status === 'refunded' ? paidAt : null,
          refunded_total: status === 'refunded' ? o.total : 0,
          test: 0,
          created_at: createdAt,
          updated_at: now,
        },
        items,
        tx,
      );
      const transaction = o.transactionId ? `, transaction ${o.transactionId.slice(0, 200)}` : '';
      await this.orders.addStoreNote(
        id,
        `Imported from ${run.source} order ${o.sourceId.slice(0, 100)} (${o.status}${gateway ? `, paid with ${gateway}` : ''}${transaction}).`,
        now,
        tx,
      );
      return this.remember(run, 'orders', o.sourceId, id, tx);
    });
  }

  /**
   * A subscription of the old store, with its schedule, status, next payment and recurring total:
   * the renewal worker makes its renewal orders from its next payment on, as for any other, and
   * a Stripe customer kept with a card (the customer's import) pays them off-session.
   */
  private async subscription(run: Run, s: ImportSubscription): Promise<'created' | 'present'> {
    // Read in every run before the licenses, so they know which of theirs still renew.
    if (RUNNING.has(s.status)) run.renewing.add(s.sourceId);
    const known = await this.repo.target(run.source, 'subscriptions', s.sourceId);
    if (known !== undefined) {
      // Renewal orders an earlier run had not imported yet are linked now.
      const renewals = await this.renewalOrders(run, s);
      if (!run.dryRun && renewals.length > 0) {
        const now = iso(this.clock.now());
        await withTransaction(this.database, (tx) =>
          this.orders.linkImportedRenewals(renewals, known, now, tx),
        );
      }
      return 'present';
    }
    if (!SUBSCRIPTION_STATUSES.has(s.status)) throw new ImportRefusal('invalid_status');
    if (!PERIODS.has(s.billingPeriod) || !Number.isSafeInteger(s.billingInterval) || s.billingInterval < 1) {
      throw new ImportRefusal('invalid_period');
    }
    if (!isAmount(s.recurringTotal)) throw new ImportRefusal('invalid_amount');
    const next = s.nextPaymentAt ? time(s.nextPaymentAt, 'invalid_date') : null;
    const createdAt = s.createdAt ? time(s.createdAt, 'invalid_date') : null;
    const settings = await this.settings.get();
    // A subscription that renews is charged in its currency: one the store sells in.
    if (RUNNING.has(s.status) && resolveCurrency(settings, s.currency)?.code !== s.currency) {
      throw new ImportRefusal('currency_not_enabled');
    }
    this.currencyOf(s.currency, settings);
    const userId = await this.target(run, 'customers', s.customerSourceId, 'unknown_customer');
    const productId = await this.target(run, 'products', s.productSourceId, 'unknown_product');
    const variationId = s.variationSourceId
      ? await this.target(run, 'variations', s.variationSourceId, 'unknown_variation')
      : 0;
    // The first order when it was imported; a subscription whose order was left out stands alone.
    const parent = s.parentOrderSourceId ? await this.optional(run, 'orders', s.parentOrderSourceId) : null;
    const renewals = await this.renewalOrders(run, s);
    const method = await this.gatewayOf(s.gateway ?? '');
    const profile = (s.gatewayProfileId ?? '').slice(0, 255);
    // Never billed twice: one that Stripe still bills is left for the owner to cancel there.
    const ended =
      RUNNING.has(s.status) && STRIPE_SUBSCRIPTION.test(profile) ? await this.stripeEnded(profile) : null;
    if (run.dryRun) {
      run.plan('subscriptions', s.sourceId);
      return 'created';
    }
    const now = iso(this.clock.now());
    return this.first(async (tx) => {
      const id = await this.subscriptions.insertImported(
        {
          user_id: userId,
          product_id: productId,
          variation_id: variationId,
          status: s.status,
          next_payment_at: next,
          billing_period: s.billingPeriod,
          billing_interval: s.billingInterval,
          quantity: 1,
          currency: s.currency,
          recurring_total: s.recurringTotal,
          payment_method: method,
          parent_order_id: parent !== null && parent > 0 ? parent : null,
          status_reason: 'imported',
          gateway_profile_id: profile,
          gateway_profile_ended_at: ended,
          created_at: createdAt ?? now,
          updated_at: now,
        },
        tx,
      );
      await this.orders.linkImportedRenewals(renewals, id, now, tx);
      return this.remember(run, 'subscriptions', s.sourceId, id, tx);
    });
  }

  /** The Tollgate ids of a subscription's renewal orders of the old store that were imported. */
  private async renewalOrders(run: Run, s: ImportSubscription): Promise<number[]> {
    const ids: number[] = [];
    for (const sourceId of s.renewalOrderSourceIds ?? []) {
      const id = await this.optional(run, 'orders', sourceId);
      if (id !== null && id > 0) ids.push(id);
    }
    return ids;
  }

  /**
   * When Stripe said the old store's subscription no longer bills (asked before any transaction),
   * or a refusal: `old_subscription_active` while Stripe still bills it (the owner cancels it
   * there and runs the import again), `stripe_not_configured` when the store does not take
   * Stripe (nothing could be asked, nor renewed), `stripe_unavailable` (thrown) when Stripe is out
   * of reach.
   */
  private async stripeEnded(profile: string): Promise<string> {
    const state = await this.stripe.oldSubscription(profile);
    if (state === undefined) throw new ImportRefusal('stripe_not_configured');
    if (state === 'billing') throw new ImportRefusal('old_subscription_active');
    return iso(this.clock.now());
  }

  private async product(run: Run, p: ImportProduct): Promise<'created' | 'present'> {
    const known = await this.repo.target(run.source, 'products', p.sourceId);
    if (known !== undefined) return 'present';
    if (!p.slug) throw new ImportRefusal('missing_slug');
    if (run.dryRun) {
      run.plan('products', p.sourceId);
      for (const v of p.variations) run.plan('variations', v.sourceId);
      return 'created';
    }
    // A product with that slug is the one: made by an earlier run that stopped before its map
    // row, or by the owner, who created it before importing.
    let [product] = await this.catalogue.findPublishedBySlug(p.slug);
    const made = product === undefined;
    if (!product) {
      const settings = await this.settings.get();
      const decimals = currencyDecimals(settings.base_currency, settings);
      const money = (minor: number) => fromMinor(minor, decimals);
      product = await this.catalogue.createProduct({
        name: p.name.slice(0, 200),
        status: 'publish',
        type: p.variations.length > 0 ? 'variable' : 'simple',
        ...(p.variations.length > 0 ? {} : { price: money(p.price) }),
        virtual: true,
        ...(p.activationLimit !== undefined ? { activation_limit: p.activationLimit } : {}),
        ...(p.variations.length > 0
          ? {
              variations: p.variations.map((v) => ({
                name: v.name.slice(0, 200),
                price: money(v.price),
                attributes: { option: v.name.slice(0, 200) },
                ...(v.activationLimit !== undefined ? { activation_limit: v.activationLimit } : {}),
              })),
            }
          : {}),
      });
      await this.catalogue.updateSoftwareConfig(product.id, {
        slug: p.slug,
        software_enabled: 'yes',
        legacy_api: true,
      });
    }
    const id = product.id;
    const variations = product.variations;
    await withTransaction(this.database, async (tx) => {
      await this.remember(run, 'products', p.sourceId, id, tx);
      // Variations in the order given; found again by name when the product was there before.
      for (const [i, v] of p.variations.entries()) {
        const match = made ? variations[i] : variations.find((x) => x.name === v.name);
        if (match) await this.remember(run, 'variations', v.sourceId, match.id, tx);
      }
    });
    return made ? 'created' : 'present';
  }

  private async license(run: Run, l: ImportLicense): Promise<'created' | 'present'> {
    const known = await this.repo.target(run.source, 'licenses', l.sourceId);
    if (known !== undefined) {
      await this.linkLateSubscription(run, l, known);
      return 'present';
    }
    const write = await this.licenseWrite(run, l);
    if (run.dryRun) {
      if ((await this.licenses.idOfKey(l.key)) !== undefined) return 'present';
      run.plan('licenses', l.sourceId);
      return 'created';
    }
    return withTransaction(this.database, write);
  }

  /**
   * A license an earlier run imported while its subscription was left out (Stripe still billed it)
   * is linked to that subscription once a later run imports it, so its renewals extend the license.
   */
  private async linkLateSubscription(run: Run, l: ImportLicense, licenseId?: number): Promise<void> {
    if (run.dryRun || !l.subscriptionSourceId || !run.renewing.has(l.subscriptionSourceId)) return;
    const id = licenseId ?? (await this.repo.target(run.source, 'licenses', l.sourceId));
    const subscriptionId = await this.repo.target(run.source, 'subscriptions', l.subscriptionSourceId);
    if (id === undefined || subscriptionId === undefined) return;
    await withTransaction(this.database, (tx) => this.licenses.linkImported(id, subscriptionId, tx));
  }

  /** A license's checks (what it refers to was imported), then its writing, in the caller's transaction. */
  private async licenseWrite(run: Run, l: ImportLicense): Promise<Write> {
    const productId = await this.target(run, 'products', l.productSourceId, 'unknown_product');
    const userId = await this.target(run, 'customers', l.customerSourceId, 'unknown_customer');
    const variationId = l.variationSourceId
      ? await this.target(run, 'variations', l.variationSourceId, 'unknown_variation')
      : 0;
    // Its order when it was imported, and its subscription while that renews: a subscription
    // governs its licenses here (docs/licensing.md), and the old store let a license of an ended
    // one run to its own expiry, which it keeps. Left out, the license stands alone.
    const orderId = l.orderSourceId ? await this.optional(run, 'orders', l.orderSourceId) : null;
    const subscriptionId =
      l.subscriptionSourceId && run.renewing.has(l.subscriptionSourceId)
        ? await this.optional(run, 'subscriptions', l.subscriptionSourceId)
        : null;
    return async (tx) => {
      const existing = await this.licenses.idOfKey(l.key, tx);
      let id: number;
      if (existing !== undefined) id = existing;
      else {
        const expiry = l.expiresAt ?? (l.status === 'expired' ? iso(this.clock.now()) : null);
        const created = await this.licenses.create(
          {
            product_id: productId,
            variation_id: variationId,
            user_id: userId,
            ...(orderId ? { order_id: orderId } : {}),
            ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
            license_key: l.key,
            activation_limit: l.activationLimit,
            usage_expires_at: expiry,
            status: statusOf(l),
          },
          tx,
        );
        id = created.id;
      }
      await this.remember(run, 'licenses', l.sourceId, id, tx);
      return existing === undefined ? 'created' : 'present';
    };
  }

  private async activation(run: Run, a: ImportActivation): Promise<'created' | 'present'> {
    const known = await this.repo.target(run.source, 'activations', a.sourceId);
    if (known !== undefined) return 'present';
    const write = await this.activationWrite(run, a);
    if (run.dryRun) {
      run.plan('activations', a.sourceId);
      return 'created';
    }
    return withTransaction(this.database, write);
  }

  /** An activation's checks (its license was imported, its URL is one), then its writing. */
  private async activationWrite(run: Run, a: ImportActivation): Promise<Write> {
    const licenseId = await this.target(run, 'licenses', a.licenseSourceId, 'unknown_license');
    let site: ReturnType<typeof legacyIdentity>;
    try {
      site = legacyIdentity(a.url);
    } catch {
      throw new ImportRefusal('invalid_url');
    }
    return async (tx) => {
      const made = await this.licenses.importActivation(licenseId, site, a.staging === true, tx);
      await this.remember(run, 'activations', a.sourceId, made.id, tx);
      return made.created ? 'created' : 'present';
    };
  }

  private remember(run: Run, kind: string, sourceId: string, id: number, tx: Tx) {
    return this.repo.remember(run.source, kind, sourceId, id, iso(this.clock.now()), tx);
  }

  /**
   * Writes a record that has no natural key to be found by (an order, a subscription) with its
   * map row, or nothing at all when another run at the same time mapped the record first: the
   * write is rolled back, so two runs at once make it once.
   */
  private async first(write: (tx: Tx) => Promise<boolean>): Promise<'created' | 'present'> {
    try {
      return await withTransaction(this.database, async (tx) => {
        if (!(await write(tx))) throw new MappedElsewhere();
        return 'created' as const;
      });
    } catch (e) {
      if (e instanceof MappedElsewhere) return 'present';
      throw e;
    }
  }
}

/** A record's id in the report: a release has none of its own, so its product and version. */
function idOf(kind: ImportKind, item: unknown): string {
  if (kind === 'releases') {
    const r = item as ImportRelease;
    return `${r.productSourceId}@${r.version}`;
  }
  return (item as { sourceId?: string }).sourceId ?? '';
}

/** Rolls back a record's write: another run mapped the record first. */
class MappedElsewhere extends Error {}

/** A record's problem reason: the importer's refusal, the service's error code, or a failed write. */
const reasonOf = (e: unknown) =>
  e instanceof ImportRefusal ? e.reason : e instanceof ApiError ? e.code : 'write_failed';

/** A record the importer will not write, and why (reported as a problem). */
class ImportRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** One run's counts, problems, and (in a dry run) what it would have made. */
class Run {
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
