import { type ExpressionBuilder, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { type Precompiled, precompile } from '../../db/precompiled.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import { URL_ONLY_INSTALLATION } from '../identity/identity.js';
import type { ActivationRow, LicenseForIdentity, LicenseRecord, LicenseRow } from './licensing.model.js';
import type { ActivationEnvironment, LicenseStatus } from './licensing.tables.js';

/**
 * 'active' as a literal, not a bound parameter: SQLite uses the partial index
 * `activations_one_active_identity` (WHERE status = 'active') only when it can see the value.
 */
const ACTIVE = sql.lit<'active'>('active');
/** A literal for the same reason: the production count reads the partial index activations_active_production. */
const PRODUCTION = sql.lit<ActivationEnvironment>('production');
const STAGING = sql.lit<ActivationEnvironment>('staging');

type RawRecord = Omit<LicenseRecord, 'activation_count'> & { activation_count: unknown };

/**
 * The count arrives as a bigint-ish value on some drivers. The row is ours, so it is fixed in place
 * rather than copied with a spread: this runs on every validate and update check, and on Node 20
 * each property set after a spread costs about a microsecond (docs/performance.md, 'Object
 * literals, timestamps and hooks').
 */
function asRecord<T extends { activation_count: unknown }>(
  row: T,
): Omit<T, 'activation_count'> & { activation_count: number } {
  row.activation_count = Number(row.activation_count ?? 0);
  return row as Omit<T, 'activation_count'> & { activation_count: number };
}

/**
 * What one search term may name (docs/licensing.md, '7. For store administrators'), each found
 * through an index (migration 2026112421_license_search): the service decides which apply.
 */
export interface LicenseSearch {
  /** The whole key, as typed and upper-cased. */
  keys: string[];
  /** The key's last characters, lower-case, at least 4. */
  keyTail?: string;
  /** The start of the customer's email, lower-case. */
  emailPrefix?: string;
  /** The start of a site's normalised domain. */
  domainPrefix?: string;
  installationId?: string;
}

export interface LicenseFilter {
  search?: LicenseSearch;
  /** 'active' or 'revoked' as stored; 'expired' is `expired_by` below. */
  status?: string;
  product_id?: number;
  user_id?: number;
  /** The licenses an order issued (the storefront's receipt; index licenses_order). */
  order_id?: number;
  test?: boolean;
  /** Canonical RFC 3339 UTC (the stored form of usage_expires_at, which sorts as text). */
  expires_before?: string;
  expires_after?: string;
  /** Now, canonical: not revoked and the usage expiry is before it. */
  expired_by?: string;
}

export type LicenseSort = 'id' | 'created_at' | 'usage_expires_at' | 'status' | 'product';

/**
 * Each sort key is one column with the license id as tie-break, so that pages never overlap; each
 * has an index on (column, id) (migration 2026112401_list_indexes) that the planner walks instead
 * of sorting the table. `product` orders by product id: by name it would have to sort every
 * license by a joined column.
 */
const SORT_COLUMNS = {
  id: 'l.id',
  created_at: 'l.created_at',
  usage_expires_at: 'l.usage_expires_at',
  status: 'l.status',
  product: 'l.product_id',
} as const;

export type NewActivation = Omit<
  ActivationRow,
  | 'id'
  | 'activation_revision'
  | 'deactivated_at'
  | 'status'
  | 'updated_at'
  | 'environment'
  | 'deactivation_reason'
  | 'replaced_by'
  | 'last_seen_at'
> & { environment?: ActivationEnvironment };

export type LicensePatch = Partial<
  Pick<LicenseRow, 'activation_limit' | 'usage_expires_at' | 'entitlement_policy' | 'status' | 'updated_at'>
>;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
/** GLOB's own wildcards as literal characters (a one-character class each). */
const escapeGlob = (text: string) => text.replace(/[[*?]/g, (c) => `[${c}]`);

/**
 * Every licensing query. The activation and deactivation flows are split into one method per
 * step (lock, read, write) so the service can name the step that failed and tests can make
 * exactly one step fail by subclassing; the services open their transactions on `database`, the
 * database this repository runs on, so a test can make the begin or the commit fail there too.
 */
export class LicenseRepository {
  private readonly db: Kysely<DB>;
  private readonly dialect: Dialect;
  /** findForIdentity's statements, compiled once (src/db/precompiled.ts). */
  private readonly forIdentity: ReturnType<LicenseRepository['compileForIdentity']>;
  private readonly forIdentityWithRevision: ReturnType<LicenseRepository['compileForIdentity']>;
  /** touchLastSeen's statement, compiled once; on SQLite it joins the turn's group commit. */
  private readonly lastSeen: Precompiled<'id' | 'now' | 'cutoff', unknown>;

  constructor(readonly database: Pick<Database, 'db' | 'dialect' | 'sqlite' | 'readBatch' | 'groupCommit'>) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.forIdentity = this.compileForIdentity(false);
    this.forIdentityWithRevision = this.compileForIdentity(true);
    this.lastSeen = precompile(
      database,
      ['id', 'now', 'cutoff'] as const,
      (p) =>
        this.db
          .updateTable('activations')
          .set({ last_seen_at: p.now })
          .where('id', '=', p.id as unknown as number)
          .where('status', '=', ACTIVE)
          .where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<', p.cutoff)])),
      { write: true },
    );
  }

  /**
   * Sets the active activation's last_seen_at to `now` unless it is already `cutoff` or later: of
   * several processes that see a site in the same hour, only the first changes the row.
   */
  async touchLastSeen(id: number, now: string, cutoff: string): Promise<void> {
    await this.lastSeen.all({ id, now, cutoff });
  }

  /**
   * Licenses with what the licensing rules read around them: the product's and variation's limits,
   * the subscription's status and the count of active activations. Each caller adds the license
   * columns it needs.
   */
  private withTerms(tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('licenses as l')
      .leftJoin('products as p', 'p.id', 'l.product_id')
      .leftJoin('product_variations as v', (j) =>
        j.onRef('v.id', '=', 'l.variation_id').onRef('v.product_id', '=', 'l.product_id'),
      )
      .leftJoin('subscriptions as s', 's.id', 'l.subscription_id')
      .select([
        'p.activation_limit as product_activation_limit',
        'p.activation_mode as product_activation_mode',
        'v.id as variation_found',
        'v.activation_limit as variation_activation_limit',
        's.id as subscription_found',
        's.status as subscription_status',
      ])
      .select((eb) =>
        eb
          .selectFrom('activations as a')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('a.license_id', '=', 'l.id')
          .where('a.status', '=', ACTIVE)
          // Staging sites do not count against the limit (docs/licensing.md, '2.3 Staging and development sites').
          .where('a.environment', '=', PRODUCTION)
          .as('activation_count'),
      );
  }

  /** The whole license record: every column, with the names of its product, variation and owner. */
  private records(tx?: Tx) {
    return this.withTerms(tx)
      .leftJoin('users as u', 'u.id', 'l.user_id')
      .selectAll('l')
      .select([
        'p.name as product_name',
        'p.slug as product_slug',
        'v.name as variation_name',
        'u.email as user_email',
        'u.first_name as user_first_name',
        'u.last_name as user_last_name',
      ]);
  }

  private async one(query: Promise<RawRecord | undefined>): Promise<LicenseRecord | undefined> {
    const row = await query;
    return row ? asRecord(row) : undefined;
  }

  findByKey(key: string, tx?: Tx): Promise<LicenseRecord | undefined> {
    return this.one(this.records(tx).where('l.license_key', '=', key).executeTakeFirst());
  }

  findById(id: number, tx?: Tx): Promise<LicenseRecord | undefined> {
    return this.one(this.records(tx).where('l.id', '=', id).executeTakeFirst());
  }

  /**
   * The hot path of validate, activate and the update routes: the license and whether this
   * identity holds an active activation, in one query, with only the columns those callers read
   * (each column is a value built per request; the owner's name and the product's names are not
   * needed to decide anything). The update routes also need the activation's revision, which a
   * download token is bound to; reading it costs one more B-tree lookup (the activation row;
   * its id alone comes from the index), so only they ask for it.
   */
  private compileForIdentity(withRevision: boolean) {
    return precompile(
      this.database,
      ['key', 'identity'] as const,
      (p) =>
        this.withTerms()
          .select([
            'l.id',
            'l.license_key',
            'l.product_id',
            'l.variation_id',
            'l.subscription_id',
            'l.status',
            'l.activation_limit',
            'l.usage_expires_at',
            'l.entitlement_policy',
            'l.created_at',
            'l.trial',
          ])
          // At most one row joins: activations_one_active_identity is unique where status is active.
          .leftJoin('activations as ia', (j) =>
            j
              .onRef('ia.license_id', '=', 'l.id')
              .on('ia.identity_key', '=', p.identity)
              .on('ia.status', '=', ACTIVE),
          )
          .select([
            'ia.id as identity_activation_id',
            sql<number | null>`${withRevision ? sql.ref('ia.activation_revision') : sql`null`}`.as(
              'identity_activation_revision',
            ),
          ])
          .where('l.license_key', '=', p.key),
      // The lookups of one turn go to PostgreSQL as one statement (src/db/pg-batch.ts).
      { pgBatch: { key: 'text', identity: 'text' } },
    );
  }

  async findForIdentity(
    key: string,
    identityKey: string,
    opts: { revision?: boolean } = {},
  ): Promise<LicenseForIdentity | undefined> {
    const query = opts.revision ? this.forIdentityWithRevision : this.forIdentity;
    const row = await query.first({ key, identity: identityKey });
    return row && asRecord(row);
  }

  private filtered(filter: LicenseFilter) {
    return (
      // Every condition is on the license row alone: the count needs no join (at a million licenses
      // the two joins tripled its time).
      eb: ExpressionBuilder<DB & { l: DB['licenses'] }, 'l'>,
    ) => {
      const conditions = [];
      if (filter.status) conditions.push(eb('l.status', '=', filter.status as LicenseRow['status']));
      if (filter.expired_by !== undefined) {
        conditions.push(eb('l.status', '!=', 'revoked' as LicenseRow['status']));
        conditions.push(eb('l.usage_expires_at', '<', filter.expired_by));
      }
      if (filter.expires_before !== undefined) {
        conditions.push(eb('l.usage_expires_at', '<', filter.expires_before));
      }
      if (filter.expires_after !== undefined) {
        conditions.push(eb('l.usage_expires_at', '>', filter.expires_after));
      }
      if (filter.product_id !== undefined) conditions.push(eb('l.product_id', '=', filter.product_id));
      if (filter.user_id !== undefined) conditions.push(eb('l.user_id', '=', filter.user_id));
      if (filter.order_id !== undefined) conditions.push(eb('l.order_id', '=', filter.order_id));
      if (filter.test !== undefined) conditions.push(eb('l.test', '=', filter.test ? 1 : 0));
      if (filter.search) conditions.push(eb('l.id', 'in', this.searched(filter.search)));
      return eb.and(conditions);
    };
  }

  /**
   * The ids of the licenses one search term names, as one union of index lookups: the planner
   * reads each index for its few rows, where an OR across tables would make it scan the licenses.
   */
  private searched(search: LicenseSearch) {
    const db = this.db;
    const prefix = (column: string, start: string) =>
      this.dialect === 'sqlite'
        ? sql<boolean>`${sql.ref(column)} glob ${`${escapeGlob(start)}*`}`
        : sql<boolean>`${sql.ref(column)} like ${`${escapeLike(start)}%`}`;
    const tail =
      this.dialect === 'sqlite'
        ? sql<string>`lower(substr(${sql.ref('k.license_key')}, -4))`
        : sql<string>`lower(right(${sql.ref('k.license_key')}, 4))`;
    let ids = db.selectFrom('licenses as k').select('k.id').where('k.license_key', 'in', search.keys);
    if (search.keyTail) {
      const typed = search.keyTail;
      ids = ids.union(
        db
          .selectFrom('licenses as k')
          .select('k.id')
          .where(tail, '=', typed.slice(-4))
          .where(
            sql<boolean>`lower(${sql.ref('k.license_key')}) like ${`%${escapeLike(typed)}`} escape '\\'`,
          ),
      );
    }
    if (search.emailPrefix) {
      ids = ids.union(
        db
          .selectFrom('licenses as k')
          .innerJoin('users as e', 'e.id', 'k.user_id')
          .select('k.id')
          .where(prefix('e.email', search.emailPrefix)),
      );
    }
    const sites: RawBuilder<boolean>[] = [];
    if (search.domainPrefix) sites.push(prefix('a.domain_normalized', search.domainPrefix));
    if (search.installationId)
      sites.push(sql<boolean>`${sql.ref('a.installation_id')} = ${search.installationId}`);
    if (sites.length > 0) {
      ids = ids.union(
        db
          .selectFrom('activations as a')
          .select('a.license_id as id')
          .where((eb) => eb.or(sites)),
      );
    }
    return ids;
  }

  async list(
    filter: LicenseFilter,
    page: number,
    perPage: number,
    sort: { by: LicenseSort; order: 'asc' | 'desc' } = { by: 'id', order: 'desc' },
    tx?: Tx,
  ): Promise<{ rows: LicenseRecord[]; total: number }> {
    // Expired licenses are the old ones, so walking another index from the newest would pass over
    // every live license first. SQLite (which has no statistics here) is told, by the unary plus,
    // not to use that order, so it reads the expired range of licenses_usage_expiry and sorts only
    // that range.
    const byExpiry = filter.expired_by !== undefined || filter.expires_before !== undefined;
    const unordered = byExpiry && sort.by !== 'usage_expires_at' && this.dialect === 'sqlite';
    const column = (name: string) => (unordered ? sql`+${sql.ref(name)}` : sql.ref(name));
    let query = this.records(tx).where(this.filtered(filter));
    if (sort.by === 'usage_expires_at' && this.dialect === 'postgres') {
      // A license with no usage expiry sorts first ascending, as SQLite puts nulls; the PostgreSQL
      // index is built NULLS FIRST to match, so this order walks it.
      query = query.orderBy(SORT_COLUMNS[sort.by], (o) =>
        sort.order === 'asc' ? o.asc().nullsFirst() : o.desc().nullsLast(),
      );
    } else if (sort.by !== 'id') {
      query = query.orderBy(column(SORT_COLUMNS[sort.by]), sort.order);
    }
    const rows = await query
      .orderBy(column('l.id'), sort.order)
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute();
    const count = await on(this.db, tx)
      .selectFrom('licenses as l')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(this.filtered(filter))
      .executeTakeFirstOrThrow();
    return {
      rows: rows.map(asRecord),
      total: Number(count.n),
    };
  }

  async listByUser(userId: number, tx?: Tx): Promise<LicenseRecord[]> {
    const rows = await this.records(tx).where('l.user_id', '=', userId).orderBy('l.id', 'asc').execute();
    return rows.map(asRecord);
  }

  activationsOf(licenseIds: number[], tx?: Tx): Promise<ActivationRow[]> {
    if (licenseIds.length === 0) return Promise.resolve([]);
    return on(this.db, tx)
      .selectFrom('activations')
      .selectAll()
      .where('license_id', 'in', licenseIds)
      .orderBy('id', 'asc')
      .execute();
  }

  // ---- what download redemption and token invalidation read (distribution, via LicenseLookupService)

  /**
   * The license row and its subscription's status, the row locked on PostgreSQL. Two reads: FOR
   * UPDATE cannot lock the nullable side of an outer join.
   */
  async lockWithSubscription(
    id: number,
    tx?: Tx,
  ): Promise<{ license: LicenseRow; subscriptionStatus: string | null } | undefined> {
    const license = await this.lockLicense(id, tx);
    if (!license) return undefined;
    const subscription =
      license.subscription_id === null
        ? undefined
        : await on(this.db, tx)
            .selectFrom('subscriptions')
            .select('status')
            .where('id', '=', license.subscription_id)
            .executeTakeFirst();
    return { license, subscriptionStatus: subscription?.status ?? null };
  }

  lockActivation(id: number, tx?: Tx): Promise<ActivationRow | undefined> {
    return on(this.db, tx)
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** The ids of every activation of the license, active or not. */
  /** Deletes the licenses of test orders and their activations (and approval tokens, by cascade). */
  async deleteTestLicenses(tx?: Tx): Promise<{ licenses: number; activations: number }> {
    const db = on(this.db, tx);
    const testIds = db.selectFrom('licenses').select('id').where('test', '=', 1);
    const a = await db.deleteFrom('activations').where('license_id', 'in', testIds).executeTakeFirst();
    const l = await db.deleteFrom('licenses').where('test', '=', 1).executeTakeFirst();
    return { licenses: Number(l.numDeletedRows), activations: Number(a.numDeletedRows) };
  }

  async activationIdsOf(licenseId: number, tx?: Tx): Promise<number[]> {
    const rows = await on(this.db, tx)
      .selectFrom('activations')
      .select('id')
      .where('license_id', '=', licenseId)
      .execute();
    return rows.map((r) => r.id);
  }

  /** The ids of a license's active activations, oldest first. */
  async activeActivationIdsOf(licenseId: number, tx?: Tx): Promise<number[]> {
    const rows = await on(this.db, tx)
      .selectFrom('activations')
      .select('id')
      .where('license_id', '=', licenseId)
      .where('status', '=', ACTIVE)
      .orderBy('id')
      .execute();
    return rows.map((r) => Number(r.id));
  }

  /** Whether the user holds any license for the product. */
  async hasLicenseFor(userId: number, productId: number, tx?: Tx): Promise<boolean> {
    const row = await on(this.db, tx)
      .selectFrom('licenses')
      .select('id')
      .where('user_id', '=', userId)
      .where('product_id', '=', productId)
      .executeTakeFirst();
    return !!row;
  }

  // ---- administration writes

  /** Inserts a license; undefined when the key is taken (unique constraint, exact under concurrency). */
  async insertLicense(values: Omit<LicenseRow, 'id'>, tx?: Tx): Promise<number | undefined> {
    const row = await on(this.db, tx)
      .insertInto('licenses')
      .values(values)
      .onConflict((oc) => oc.column('license_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row?.id;
  }

  /** The customer's unconverted trial of the product, locked for its conversion; undefined when none. */
  async lockTrialOf(userId: number, productId: number, tx?: Tx): Promise<number | undefined> {
    const query = on(this.db, tx)
      .selectFrom('licenses')
      .select('id')
      .where('user_id', '=', userId)
      .where('product_id', '=', productId)
      // A literal, as the partial index licenses_trial says it (src/db/database.ts, equalitiesUnplanned).
      .where('trial', '=', sql.lit(1))
      .orderBy('id')
      .limit(1);
    return (await forUpdate(this.dialect)(query).executeTakeFirst())?.id;
  }

  async updateLicense(
    id: number,
    patch: LicensePatch | Partial<Omit<LicenseRow, 'id'>>,
    tx?: Tx,
  ): Promise<void> {
    await on(this.db, tx).updateTable('licenses').set(patch).where('id', '=', id).execute();
  }

  /** The order and subscription each of these licenses is linked to (the importer's late links). */
  async linksOf(
    ids: number[],
    tx?: Tx,
  ): Promise<Map<number, { order_id: number | null; subscription_id: number | null }>> {
    if (ids.length === 0) return new Map();
    const rows = await on(this.db, tx)
      .selectFrom('licenses')
      .select(['id', 'order_id', 'subscription_id'])
      .where('id', 'in', ids)
      .execute();
    return new Map(
      rows.map((r) => [
        Number(r.id),
        {
          order_id: r.order_id === null ? null : Number(r.order_id),
          subscription_id: r.subscription_id === null ? null : Number(r.subscription_id),
        },
      ]),
    );
  }

  /** Links a license to an order or a subscription while it has none; answers whether it did. */
  async linkUnset(
    id: number,
    column: 'order_id' | 'subscription_id',
    target: number,
    now: string,
    tx?: Tx,
  ): Promise<boolean> {
    const result = await on(this.db, tx)
      .updateTable('licenses')
      .set({ [column]: target, updated_at: now })
      .where('id', '=', id)
      .where(column, 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Whether the row exists (the checks before a license is issued, in the caller's transaction). */
  private async exists(table: 'products' | 'users' | 'subscriptions', id: number, tx?: Tx): Promise<boolean> {
    return !!(await on(this.db, tx).selectFrom(table).select('id').where('id', '=', id).executeTakeFirst());
  }

  productExists(id: number, tx?: Tx): Promise<boolean> {
    return this.exists('products', id, tx);
  }

  async variationOf(productId: number, variationId: number, tx?: Tx): Promise<boolean> {
    return !!(await on(this.db, tx)
      .selectFrom('product_variations')
      .select('id')
      .where('id', '=', variationId)
      .where('product_id', '=', productId)
      .executeTakeFirst());
  }

  /** For callers inside a transaction, which may not use another connection (SQLite has one). */
  userExists(id: number, tx: Tx): Promise<boolean> {
    return this.exists('users', id, tx);
  }

  subscriptionExists(id: number, tx?: Tx): Promise<boolean> {
    return this.exists('subscriptions', id, tx);
  }

  /** Marks the license revoked; false when it already was (no second event). */
  revoke(id: number, now: string, tx?: Tx): Promise<boolean> {
    return this.moveStatus(id, ['!=', 'revoked'], 'revoked', now, tx);
  }

  /** Marks an active license suspended; false when it was not active. */
  suspend(id: number, now: string, tx?: Tx): Promise<boolean> {
    return this.moveStatus(id, ['=', 'active'], 'suspended', now, tx);
  }

  /** Marks a suspended license active again; false when it was not suspended. */
  reinstate(id: number, now: string, tx?: Tx): Promise<boolean> {
    return this.moveStatus(id, ['=', 'suspended'], 'active', now, tx);
  }

  /** One conditional UPDATE, so that two callers racing make one change (and one event). */
  private async moveStatus(
    id: number,
    [op, from]: ['=' | '!=', LicenseStatus],
    to: LicenseStatus,
    now: string,
    tx?: Tx,
  ): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('licenses')
      .set({ status: to, updated_at: now })
      .where('id', '=', id)
      .where('status', op, from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The licenses issued for an order, oldest first. */
  async idsOfOrder(orderId: number, tx?: Tx): Promise<number[]> {
    const rows = await on(this.db, tx)
      .selectFrom('licenses')
      .select('id')
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
    return rows.map((r) => Number(r.id));
  }

  // ---- the steps of activation and deactivation, inside the service's transaction

  /**
   * Reads the license row inside the transaction. On PostgreSQL the row is locked FOR UPDATE, so
   * activations of one license from any number of processes run one at a time; SQLite has one
   * connection per process and Kysely runs its transactions one at a time already.
   */
  lockLicense(id: number, tx?: Tx): Promise<LicenseRow | undefined> {
    return on(this.db, tx)
      .selectFrom('licenses')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** The license's activations by one identity, active or not: what the two reads below narrow. */
  private activationsByIdentity(licenseId: number, identityKey: string, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('activations')
      .selectAll()
      .where('license_id', '=', licenseId)
      .where('identity_key', '=', identityKey);
  }

  findActiveActivation(licenseId: number, identityKey: string, tx?: Tx): Promise<ActivationRow | undefined> {
    return this.activationsByIdentity(licenseId, identityKey, tx)
      .where('status', '=', ACTIVE)
      .executeTakeFirst();
  }

  /** The identity's most recent activation of the license, active or not. */
  findLatestByIdentity(licenseId: number, identityKey: string, tx?: Tx): Promise<ActivationRow | undefined> {
    return this.activationsByIdentity(licenseId, identityKey, tx)
      .orderBy('status', 'asc') // 'active' sorts before 'deactivated'
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** One activation by its id alone, any status (the signed package link names it). */
  activationById(id: number): Promise<ActivationRow | undefined> {
    return this.db.selectFrom('activations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findActivation(licenseId: number, activationId: number, tx?: Tx): Promise<ActivationRow | undefined> {
    return on(this.db, tx)
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', activationId)
      .where('license_id', '=', licenseId)
      .executeTakeFirst();
  }

  /**
   * The license's active sites of one environment: production ones are what its activation limit
   * counts, staging ones what `staging_activation_limit` counts.
   */
  async countActive(licenseId: number, environment: ActivationEnvironment, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('activations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('license_id', '=', licenseId)
      .where('status', '=', ACTIVE)
      .where('environment', '=', environment === 'staging' ? STAGING : PRODUCTION)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The license's active activations on one normalised domain (a reinstall takes them over). */
  findActiveOnDomain(licenseId: number, domainNormalized: string, tx?: Tx): Promise<ActivationRow[]> {
    return on(this.db, tx)
      .selectFrom('activations')
      .selectAll()
      .where('license_id', '=', licenseId)
      .where('domain_normalized', '=', domainNormalized)
      .where('status', '=', ACTIVE)
      .orderBy('id', 'asc')
      .execute();
  }

  /**
   * Deactivates an activation a reinstall took over, naming its successor: as deactivateActivation
   * (the revision moves on, so its download tokens fail), with its reason.
   */
  async markTakenOver(id: number, replacedBy: number, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('activations')
      .set((eb) => ({
        status: 'deactivated',
        deactivated_at: now,
        updated_at: now,
        activation_revision: eb('activation_revision', '+', 1),
        deactivation_reason: 'reinstalled',
        replaced_by: replacedBy,
      }))
      .where('id', '=', id)
      .where('status', '=', ACTIVE)
      .execute();
  }

  /**
   * Gives a URL-only (legacy) activation the full identity its site now sends, keeping its row and
   * so its seat (docs/licensing.md, 'Legacy activations'). The revision moves on, so download tokens
   * issued to the URL-only identity stop working.
   */
  async upgradeLegacyActivation(
    id: number,
    identity: { identity_key: string; installation_id: string; domain: string },
    now: string,
    tx?: Tx,
  ): Promise<void> {
    await on(this.db, tx)
      .updateTable('activations')
      .set((eb) => ({
        identity_key: identity.identity_key,
        installation_id: identity.installation_id,
        domain: identity.domain,
        updated_at: now,
        last_seen_at: now,
        activation_revision: eb('activation_revision', '+', 1),
      }))
      .where('id', '=', id)
      .where('status', '=', ACTIVE)
      .where('installation_id', '=', URL_ONLY_INSTALLATION)
      .execute();
  }

  async insertActivation(values: NewActivation, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('activations')
      .values({
        ...values,
        status: 'active',
        activation_revision: 1,
        updated_at: values.activated_at,
        last_seen_at: values.activated_at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /**
   * Active activations last seen before `cutoff`, oldest first (the partial index
   * activations_active_last_seen): what the stale-activation job releases, a batch at a time.
   */
  staleActivations(cutoff: string, limit: number): Promise<{ id: number; license_id: number }[]> {
    return this.db
      .selectFrom('activations')
      .select(['id', 'license_id'])
      .where('status', '=', ACTIVE)
      .where('last_seen_at', '<', cutoff)
      .orderBy('last_seen_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
  }

  /**
   * Deactivates the activation as deactivateActivation does, with the reason 'stale', only while it
   * is still active and still unseen since `cutoff`: the claim that makes one process, once, release
   * it. Answers the row as it was, or undefined when nothing changed.
   */
  async deactivateStale(
    id: number,
    cutoff: string,
    now: string,
    tx?: Tx,
  ): Promise<ActivationRow | undefined> {
    const before = await on(this.db, tx)
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
    if (!before) return undefined;
    const r = await on(this.db, tx)
      .updateTable('activations')
      .set((eb) => ({
        status: 'deactivated',
        deactivated_at: now,
        updated_at: now,
        activation_revision: eb('activation_revision', '+', 1),
        deactivation_reason: 'stale',
      }))
      .where('id', '=', id)
      .where('status', '=', ACTIVE)
      .where('last_seen_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0 ? before : undefined;
  }

  async deactivateActivation(id: number, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('activations')
      .set((eb) => ({
        status: 'deactivated',
        deactivated_at: now,
        updated_at: now,
        activation_revision: eb('activation_revision', '+', 1),
      }))
      .where('id', '=', id)
      .where('status', '=', ACTIVE)
      .execute();
  }
}
