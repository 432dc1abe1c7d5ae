import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { legacyIdentity } from '../identity/identity.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { LicenseStatus } from '../licensing/licensing.tables.js';
import type { ImportMap } from './import-map.js';
import { ImportRefusal, type Outcome, type Run, reasonOf, type Write } from './import-run.js';
import type { ImportActivation, ImportLicense } from './records.js';

/**
 * Licenses and activations are written this many to a transaction (docs/performance.md, 'Importing
 * another store'): a commit per record was most of the activations' time on PostgreSQL. Each
 * record is still whole (the transaction holds it with its map row), and a batch that fails is
 * written again record by record, so one bad record costs only itself.
 */
export const BATCH = 100;

/** A license of the source that an earlier run imported, and its Tollgate id. */
interface Found {
  license: ImportLicense;
  id: number;
}

/** The distinct source ids these licenses name (an order, a subscription). */
const sourceIds = (found: Found[], of: (l: ImportLicense) => string | undefined): string[] => [
  ...new Set(found.map((f) => of(f.license)).filter((id): id is string => !!id)),
];

/** EDD's and the others' license states, as a Tollgate license stores them. */
function statusOf(license: ImportLicense): LicenseStatus {
  if (license.status === 'revoked') return 'revoked';
  if (license.status === 'disabled') return 'suspended';
  return 'active';
}

/**
 * The importer's licenses, keys unchanged, and the sites activated on them (docs/migrating.md,
 * 'Importing'): one by one in a dry run, in batches otherwise.
 */
export class LicensesImport {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly map: ImportMap,
    private readonly licenses: Pick<
      LicenseService,
      'idOfKey' | 'create' | 'linksOf' | 'linkImported' | 'importActivation'
    >,
    private readonly clock: Clock,
  ) {}

  /**
   * Licenses or activations written together: the map says which were imported before (one
   * query), each other one is checked and prepared on its own (a refusal is its own problem), then
   * all are written in one transaction; if that fails, each again in a transaction of its own.
   */
  async batch(run: Run, kind: 'licenses' | 'activations', items: (ImportLicense | ImportActivation)[]) {
    const counts = run.count(kind);
    const known = await this.map.targets(
      run,
      kind,
      items.map((i) => i.sourceId),
    );
    // What each one refers to, read for the batch at once rather than one query a record: the
    // licenses of activations, the customers of licenses (docs/performance.md, 'Importing another store').
    await this.map.preload(
      run,
      kind === 'licenses' ? 'customers' : 'licenses',
      items.map((i) =>
        kind === 'licenses' ? (i as ImportLicense).customerSourceId : (i as ImportActivation).licenseSourceId,
      ),
    );
    const found: Found[] = [];
    const writes: { sourceId: string; write: Write }[] = [];
    for (const item of items) {
      const id = known.get(item.sourceId);
      if (id !== undefined) {
        if (kind === 'licenses') found.push({ license: item as ImportLicense, id });
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
    await this.linkLate(run, found);
    if (writes.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = await withTransaction(this.database, async (tx) => {
        const done: Outcome[] = [];
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

  async license(run: Run, l: ImportLicense): Promise<Outcome> {
    const known = await this.map.found(run, 'licenses', l.sourceId);
    if (known !== undefined) {
      await this.linkLate(run, [{ license: l, id: known }]);
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
   * Licenses an earlier run imported without their order or subscription are linked to them once
   * they are imported (docs/migrating.md, 'Orders and subscriptions imported later'): an order the
   * earlier run did not read, a subscription left out while Stripe still billed it (from then on
   * its renewals extend the license). A subscription is linked only while it renews, as a new
   * license is. A license linked to another one meanwhile keeps it, and the report lists it.
   * Two queries for the batch, and a transaction only when a link is missing.
   */
  private async linkLate(run: Run, found: Found[]): Promise<void> {
    if (run.dryRun || found.length === 0) return;
    const renews = (l: ImportLicense) =>
      l.subscriptionSourceId && run.renewing.has(l.subscriptionSourceId) ? l.subscriptionSourceId : undefined;
    const orders = await this.map.targets(
      run,
      'orders',
      sourceIds(found, (l) => l.orderSourceId),
    );
    const subscriptions = await this.map.targets(run, 'subscriptions', sourceIds(found, renews));
    const wanted = found
      .map((f) => ({
        ...f,
        order: f.license.orderSourceId ? orders.get(f.license.orderSourceId) : undefined,
        subscription: subscriptions.get(renews(f.license) ?? ''),
      }))
      .filter((w) => w.order !== undefined || w.subscription !== undefined);
    if (wanted.length === 0) return;
    const current = await this.licenses.linksOf(wanted.map((w) => w.id));
    const missing: { id: number; links: { order_id?: number; subscription_id?: number } }[] = [];
    for (const w of wanted) {
      const now = current.get(w.id);
      if (!now) continue;
      const links: { order_id?: number; subscription_id?: number } = {};
      const sides = [
        ['order_id', 'orders', w.order, w.license.orderSourceId],
        ['subscription_id', 'subscriptions', w.subscription, w.license.subscriptionSourceId],
      ] as const;
      for (const [column, kind, target, sourceId] of sides) {
        const has = now[column];
        if (target === undefined || has === target) continue;
        if (has === null) links[column] = target;
        else run.keptLink({ license: w.license.sourceId, kind, sourceId: sourceId ?? '', keptId: has });
      }
      if (Object.keys(links).length > 0) missing.push({ id: w.id, links });
    }
    if (missing.length === 0) return;
    await withTransaction(this.database, async (tx) => {
      for (const m of missing) {
        const linked = await this.licenses.linkImported(m.id, m.links, tx);
        if (linked.order) run.links.orders++;
        if (linked.subscription) run.links.subscriptions++;
      }
    });
  }

  /** A license's checks (what it refers to was imported), then its writing, in the caller's transaction. */
  private async licenseWrite(run: Run, l: ImportLicense): Promise<Write> {
    const productId = await this.map.target(run, 'products', l.productSourceId, 'unknown_product');
    const userId = await this.map.target(run, 'customers', l.customerSourceId, 'unknown_customer');
    const variationId = l.variationSourceId
      ? await this.map.target(run, 'variations', l.variationSourceId, 'unknown_variation')
      : 0;
    // Its order when it was imported, and its subscription while that renews: a subscription
    // governs its licenses here (docs/licensing.md), and the old store let a license of an ended
    // one run to its own expiry, which it keeps. Left out, the license stands alone.
    const orderId = l.orderSourceId ? await this.map.optional(run, 'orders', l.orderSourceId) : null;
    const subscriptionId =
      l.subscriptionSourceId && run.renewing.has(l.subscriptionSourceId)
        ? await this.map.optional(run, 'subscriptions', l.subscriptionSourceId)
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
      await this.map.remember(run, 'licenses', l.sourceId, id, tx);
      return existing === undefined ? 'created' : 'present';
    };
  }

  async activation(run: Run, a: ImportActivation): Promise<Outcome> {
    const known = await this.map.found(run, 'activations', a.sourceId);
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
    const licenseId = await this.map.target(run, 'licenses', a.licenseSourceId, 'unknown_license');
    let site: ReturnType<typeof legacyIdentity>;
    try {
      site = legacyIdentity(a.url);
    } catch {
      throw new ImportRefusal('invalid_url');
    }
    return async (tx) => {
      const made = await this.licenses.importActivation(licenseId, site, a.staging === true, tx);
      await this.map.remember(run, 'activations', a.sourceId, made.id, tx);
      return made.created ? 'created' : 'present';
    };
  }
}
