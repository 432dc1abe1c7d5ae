import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import { MemoryCounts } from '../../count-table.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { VERSION_PATTERN } from '../releases/releases.model.js';
import { FlushWorker } from './flush.worker.js';
import type { InstalledBaseCountRow, InstalledBaseRepository, SiteRow } from './installed-base.repository.js';
import { HOST_VERSION_PATTERN, PLATFORM_PATTERN } from './installed-base.schemas.js';

/** How often what was seen is added to the database (and once more when the server closes). */
export const INSTALLED_BASE_FLUSH_EVERY_MS = 5000;
/** How long the daily figures are kept (docs/distribution.md, 'What runs in the field'). */
export const INSTALLED_BASE_RETENTION_DAYS = 400;
/** Sites remembered per process for the current day; one forgotten and seen again is deduplicated by the database. */
export const INSTALLED_BASE_SEEN_MAX = 100_000;
/** Sites waiting for the next flush; beyond it, new sites are left uncounted until the flush. */
export const INSTALLED_BASE_PENDING_MAX = 50_000;

const DAY_MS = 86_400_000;
const SECRET = 'field_site_key';
const VERSION = new RegExp(VERSION_PATTERN);
const HOST_VERSION = new RegExp(HOST_VERSION_PATTERN);
const PLATFORM = new RegExp(PLATFORM_PATTERN);
const MAJOR_MINOR = /^\d+(?:\.\d+)?/;

/** What a request says the site runs: the fields of the update check and of validate. */
export interface SiteFacts {
  version?: unknown;
  platform?: unknown;
  platform_version?: unknown;
  php_version?: unknown;
}

interface Seen {
  day: string;
  productId: number;
  site: string;
  version: string;
  platform: string | null;
  platformVersion: string;
  php: string | null;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** `8.1.2-1ubuntu2.14` → `8.1`: what a vendor decides on, and less that tells one site from another. */
const majorMinor = (v: unknown): string | null =>
  typeof v === 'string' && HOST_VERSION.test(v) ? (MAJOR_MINOR.exec(v)?.[0] ?? null) : null;

/**
 * What runs in the field: for each product and UTC day (by the server's clock), how many distinct
 * sites run each version, and on which platform and PHP versions (docs/distribution.md, 'What runs
 * in the field'). The update check and validate call `record`: a clock read, a map lookup and,
 * for a site not yet seen today, a push; no statement. Every INSTALLED_BASE_FLUSH_EVERY_MS and on close the
 * sites seen since are flushed in one transaction: their keyed hashes are inserted into
 * `field_sites` (`ON CONFLICT DO NOTHING`), and only those inserted, the sites no process had
 * counted that day, are added to `field_counts`. So a site counts once a day, with what it
 * reported first that day, however many processes it reaches. The hash is an HMAC under a server
 * secret over the day, the product and the site (its identity key, else its address), so it
 * neither names a site nor links one day to the next; those rows are pruned after a day.
 */
export class InstalledBase extends FlushWorker {
  /**
   * The sites counted today, by product: a table that allocates nothing per site (its window is
   * the day; twice as many slots as sites, so that a new site finds a free one), where a map of
   * 100,000 names was about 6% of the update check's CPU at 100,000 sites (docs/performance.md,
   * 'The installed-base report's sites in a table').
   */
  private readonly seen = new MemoryCounts(2 * INSTALLED_BASE_SEEN_MAX);
  private pending: Seen[] = [];
  private day = '';
  private dayStart = 0;
  private dayEnd = 0;
  private prunedDay = '';
  private full = false;

  constructor(
    private readonly database: Database,
    private readonly repo: InstalledBaseRepository,
    private readonly clock: Clock,
    private readonly secrets: AppSecrets,
    private readonly log: FastifyBaseLogger,
  ) {
    super(INSTALLED_BASE_FLUSH_EVERY_MS);
  }

  /**
   * Notes that `site` (an identity key, or a hash of the address) runs what `input` says. A
   * version that is not version-like (the update check takes any text) is not counted.
   */
  record(productId: number, site: string, input: SiteFacts): void {
    const version = input.version;
    if (typeof version !== 'string' || version.length > 64 || !VERSION.test(version)) return;
    const now = this.clock.now().getTime();
    if (now < this.dayStart || now >= this.dayEnd) this.switchDay(now);
    const key = `${productId}:${site}`;
    const day = this.dayStart / 1000;
    if (this.seen.peek(key, day) > 0) return;
    if (this.pending.length >= INSTALLED_BASE_PENDING_MAX) {
      if (!this.full)
        this.log.warn('installed-base report: too many new sites before a flush; some left uncounted');
      this.full = true;
      return;
    }
    this.seen.add(key, day);
    const platform =
      typeof input.platform === 'string' && PLATFORM.test(input.platform) ? input.platform : null;
    this.pending.push({
      day: this.day,
      productId,
      site,
      version,
      platform,
      platformVersion: platform === null ? '' : (majorMinor(input.platform_version) ?? ''),
      php: majorMinor(input.php_version),
    });
  }

  private switchDay(now: number): void {
    this.dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    this.dayEnd = this.dayStart + DAY_MS;
    this.day = dayOf(this.dayStart);
    // A new day counts every site again (the table's window is the day); the sites of the day
    // before wait in `pending`.
  }

  /** Adds what was counted so far to the database; on failure it is kept for the next flush. */
  protected async run(): Promise<void> {
    if (this.pending.length === 0) return;
    const today = dayOf(this.clock.now().getTime());
    const taken = this.pending;
    this.pending = [];
    this.full = false;
    await this.write(taken, today).catch((err) => {
      this.log.warn({ err }, 'installed-base report flush failed; kept for the next one');
      this.pending = taken.concat(this.pending).slice(0, INSTALLED_BASE_PENDING_MAX);
    });
  }

  private async write(taken: Seen[], today: string): Promise<void> {
    // The first flush of each day forgets what is past keeping.
    if (this.prunedDay !== today) {
      const t = new Date(`${today}T00:00:00.000Z`).getTime();
      await this.repo.prune(dayOf(t - DAY_MS), dayOf(t - INSTALLED_BASE_RETENTION_DAYS * DAY_MS));
      this.prunedDay = today;
    }
    const secret = await this.secrets.get(SECRET);
    const byHash = new Map<string, Seen>();
    const ids: string[] = [];
    for (const s of taken) {
      const site = createHmac('sha256', secret)
        .update(`${s.day}|${s.productId}|${s.site}`)
        .digest('hex')
        .slice(0, 32);
      const id = `${s.day}|${s.productId}|${site}`;
      if (byHash.has(id)) continue;
      byHash.set(id, s);
      ids.push(id);
    }
    // One order for every process, so that two flushes of one day wait on each other's rows
    // rather than deadlock: any total order does, and the ids' own (the product's id compared as
    // text) sorts without a comparison function, 1 µs a site instead of 1.3 to 2.9
    // (docs/performance.md, 'The installed-base report's flush').
    ids.sort();
    const rows = ids.map((id): SiteRow => {
      const s = byHash.get(id)!;
      return { day: s.day, product_id: s.productId, site: id.slice(id.lastIndexOf('|') + 1) };
    });
    await withTransaction(this.database, async (tx) => {
      const inserted = await this.repo.addSites(rows, tx);
      const counts = new Map<string, InstalledBaseCountRow>();
      const add = (s: Seen, kind: string, name: string, version: string) => {
        const k = `${s.productId}|${s.day}|${kind}|${name}|${version}`;
        const row = counts.get(k);
        if (row) row.sites += 1;
        else counts.set(k, { product_id: s.productId, day: s.day, kind, name, version, sites: 1 });
      };
      for (const r of inserted) {
        const s = byHash.get(`${r.day}|${r.product_id}|${r.site}`);
        if (!s) continue;
        add(s, 'version', '', s.version);
        if (s.platform !== null) add(s, 'platform', s.platform, s.platformVersion);
        if (s.php !== null) add(s, 'php', '', s.php);
      }
      const sorted = [...counts.entries()].sort(([a], [b]) => cmp(a, b)).map(([, row]) => row);
      await this.repo.addCounts(sorted, tx);
    });
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
