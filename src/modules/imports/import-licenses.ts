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
      'idOfKey' | 'create' | 'linkImported' | 'importActivation'
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
    const known = await this.map.known(
      run,
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
    const id = licenseId ?? (await this.map.found(run, 'licenses', l.sourceId));
    const subscriptionId = await this.map.found(run, 'subscriptions', l.subscriptionSourceId);
    if (id === undefined || subscriptionId === undefined) return;
    await withTransaction(this.database, (tx) => this.licenses.linkImported(id, subscriptionId, tx));
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
