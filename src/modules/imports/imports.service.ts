import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import { BATCH, type LicensesImport } from './import-licenses.js';
import type { PeopleImport } from './import-people.js';
import type { ReleasesImport } from './import-releases.js';
import {
  type ImportLinks,
  idOf,
  isAmount,
  type KindCount,
  type OldGatewaySubscription,
  type Outcome,
  Run,
  reasonOf,
} from './import-run.js';
import type { SalesImport } from './import-sales.js';
import {
  IMPORT_ORDER,
  type ImportActivation,
  type ImportCustomer,
  type ImportKind,
  type ImportLicense,
  type ImportOrder,
  type ImportProblem,
  type ImportProduct,
  type ImportRelease,
  type ImportSource,
  type ImportSubscription,
  type ImportTotals,
  isProblem,
} from './records.js';

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
  /** Licenses of earlier runs linked now to their order or subscription, and the links kept. */
  links: ImportLinks;
  /** Running subscriptions a gateway other than Stripe bills by itself: the owner cancels them there. */
  oldGateways: OldGatewaySubscription[];
  totals: ImportTotals;
  /** Every row of the source is either in Tollgate or reported. */
  ok: boolean;
}

/** The kinds whose rows are counted against the source's own counts. */
const RECONCILED = ['customers', 'orders', 'subscriptions', 'licenses', 'activations'] as const;

/** Who makes what an import makes, in the audit trail. */
const IMPORT_ACTOR = systemActor('import');

/** How often (in records) a run reports its progress, besides at the end of each kind. */
export const PROGRESS_EVERY = 500;

/**
 * Where a run stands: called every `PROGRESS_EVERY` records and when a kind ends, with the counts
 * so far. A callback that throws stops the run there (between records, so each is whole).
 */
export type ImportProgress = (counts: Record<ImportKind, KindCount>) => void | Promise<void>;

/** The writers of each kind of record, which a run hands every record to. */
export interface ImportWriters {
  people: PeopleImport;
  releases: ReleasesImport;
  sales: SalesImport;
  licenses: LicensesImport;
}

/**
 * Moves an old store's records into Tollgate (docs/migrating.md, 'Importing'): customers, products
 * and their variations, licenses with their keys unchanged, and the sites activated on them. Each
 * record is written in a transaction of its own with its row of the import map, so a run that
 * stops part-way leaves every record whole, and the next run finds what the first made (by the map,
 * and by the natural keys: an email, a product slug, a license key, a site) instead of making it
 * twice. A dry run reads and checks everything and writes nothing. Imported records start no
 * webhooks and send no email: they happened in the old store.
 *
 * This is the run: the source read kind by kind, each record handed to its kind's writer
 * (`import-people.ts`, `import-releases.ts`, `import-sales.ts`, `import-licenses.ts`), then the
 * audit entries and the reconciliation report.
 */
export class ImportService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly writers: ImportWriters,
    private readonly audit: AuditService,
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
            await this.writers.licenses.batch(run, kind as 'licenses' | 'activations', pending);
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
      if (pending.length > 0)
        await this.writers.licenses.batch(run, kind as 'licenses' | 'activations', pending);
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
      links: run.links,
      oldGateways: run.oldGateways,
      totals,
      ok: reconciliation.every((r) => r.ok) && revenue.every((r) => r.ok),
    };
  }

  private one(run: Run, kind: ImportKind, item: unknown): Promise<Outcome> {
    const { people, releases, sales, licenses } = this.writers;
    switch (kind) {
      case 'customers':
        return people.customer(run, item as ImportCustomer);
      case 'products':
        return people.product(run, item as ImportProduct);
      case 'releases':
        return releases.release(run, item as ImportRelease);
      case 'orders':
        return sales.order(run, item as ImportOrder);
      case 'subscriptions':
        return sales.subscription(run, item as ImportSubscription);
      case 'licenses':
        return licenses.license(run, item as ImportLicense);
      default:
        return licenses.activation(run, item as ImportActivation);
    }
  }
}
