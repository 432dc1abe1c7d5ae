import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { currencyDecimals, fromMinor } from '../catalogue/money.js';
import { legacyIdentity } from '../identity/identity.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { LicenseStatus } from '../licensing/licensing.tables.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { ImportsRepository } from './imports.repository.js';
import {
  IMPORT_ORDER,
  type ImportActivation,
  type ImportCustomer,
  type ImportKind,
  type ImportLicense,
  type ImportProblem,
  type ImportProduct,
  type ImportSource,
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
  kind: 'customers' | 'licenses' | 'activations';
  /** Rows the source holds. */
  source: number;
  /** Rows now in Tollgate from this source (made now or before). */
  imported: number;
  /** Rows reported and left out. */
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
  totals: ImportTotals;
  /** Every row of the source is either in Tollgate or reported. */
  ok: boolean;
}

const MAX_PROBLEMS = 10_000;

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

/** The kinds this importer writes today; a source's other kinds are reported, never half-written. */
const WRITTEN: ImportKind[] = ['customers', 'products', 'licenses', 'activations'];

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
        if (!WRITTEN.includes(kind)) {
          run.problem({
            kind,
            sourceId: (item as { sourceId?: string }).sourceId ?? '',
            reason: 'not_supported',
          });
          continue;
        }
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
        } catch (e) {
          run.problem({ kind, sourceId: (item as { sourceId: string }).sourceId, reason: reasonOf(e) });
        }
      }
      if (pending.length > 0) await this.batch(run, kind as 'licenses' | 'activations', pending);
      await opts.onProgress?.(run.counts);
    }
    if (!opts.dryRun) {
      await withTransaction(this.database, async (tx) => {
        for (const kind of WRITTEN) {
          const c = run.count(kind);
          if (c.created + c.present + c.skipped === 0) continue;
          await this.audit.record(
            systemActor('import'),
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
    const reconciliation = (['customers', 'licenses', 'activations'] as const).map((kind) => {
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
    return {
      source: source.name,
      dryRun: opts.dryRun,
      counts: run.counts,
      problems: run.problems,
      problemCount: run.problemCount,
      reconciliation,
      totals,
      ok: reconciliation.every((r) => r.ok),
    };
  }

  private one(run: Run, kind: ImportKind, item: unknown): Promise<'created' | 'present'> {
    switch (kind) {
      case 'customers':
        return this.customer(run, item as ImportCustomer);
      case 'products':
        return this.product(run, item as ImportProduct);
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

  private async customer(run: Run, c: ImportCustomer): Promise<'created' | 'present'> {
    const known = await this.repo.target(run.source, 'customers', c.sourceId);
    if (known !== undefined) return 'present';
    if (run.dryRun) {
      run.plan('customers', c.sourceId);
      return 'created';
    }
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
      await this.remember(run, 'customers', c.sourceId, user.id, tx);
      return user.created ? 'created' : 'present';
    });
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
    if (known !== undefined) return 'present';
    const write = await this.licenseWrite(run, l);
    if (run.dryRun) {
      if ((await this.licenses.idOfKey(l.key)) !== undefined) return 'present';
      run.plan('licenses', l.sourceId);
      return 'created';
    }
    return withTransaction(this.database, write);
  }

  /** A license's checks (what it refers to was imported), then its writing, in the caller's transaction. */
  private async licenseWrite(run: Run, l: ImportLicense): Promise<Write> {
    const productId = await this.target(run, 'products', l.productSourceId, 'unknown_product');
    const userId = await this.target(run, 'customers', l.customerSourceId, 'unknown_customer');
    const variationId = l.variationSourceId
      ? await this.target(run, 'variations', l.variationSourceId, 'unknown_variation')
      : 0;
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
}

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
  private readonly plans = new Map<string, Map<string, number>>();

  constructor(
    readonly source: string,
    readonly dryRun: boolean,
  ) {}

  count(kind: ImportKind): KindCount {
    return this.counts[kind];
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
