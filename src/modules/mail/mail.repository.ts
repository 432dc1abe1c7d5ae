import { type Insertable, type Selectable, sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { on, type Tx } from '../../db/transaction.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import type { MailStatus, MailTables } from './mail.tables.js';

export type MailRow = Selectable<MailTables['mail_messages']>;
export type MailInsert = Insertable<MailTables['mail_messages']>;

/** The app_state row that remembers when the first expiry scan ran (expiry.worker.ts). */
const EXPIRY_SCAN_KEY = 'mail_license_expiry_scan_started_at';

/** A license whose expiry a notice is about, with what the message says. */
export interface ExpiringLicense {
  id: number;
  license_key: string;
  usage_expires_at: string;
  product_name: string | null;
  email: string | null;
  first_name: string | null;
}

/**
 * Queries of the mail outbox, and the reads a message's facts come from (orders, licenses,
 * subscriptions and users, read in the transaction of the change that causes the message, as
 * orders.repository.ts reads the licenses of an order). Timestamps are ISO text.
 */
export class MailRepository extends OutboxRepository<'mail_messages'> {
  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    super(database, 'mail_messages');
  }

  /** Adds a message in the caller's transaction; one with a dedupe key that exists already is not added. */
  async insert(values: MailInsert, tx?: Tx): Promise<number | null> {
    const row = await on(this.db, tx)
      .insertInto('mail_messages')
      .values(values)
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row ? Number(row.id) : null;
  }

  /**
   * The newest message that was attempted: whether the store's last try at sending mail worked
   * (found down the id index from the newest row, past the few still waiting for a first try).
   */
  lastAttempted(tx?: Tx): Promise<Pick<MailRow, 'status' | 'last_error'> | undefined> {
    return on(this.db, tx)
      .selectFrom('mail_messages')
      .select(['status', 'last_error'])
      .where('attempts', '>', 0)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** One page of messages, newest first, and the total of the filter (indexes: id; status, id). */
  async list(
    filter: { status?: MailStatus },
    limit: number,
    offset: number,
    tx?: Tx,
  ): Promise<{ rows: MailRow[]; total: number }> {
    let rows = on(this.db, tx).selectFrom('mail_messages').selectAll();
    let count = on(this.db, tx)
      .selectFrom('mail_messages')
      .select((eb) => eb.fn.countAll<string | number>().as('n'));
    if (filter.status) {
      rows = rows.where('status', '=', filter.status);
      count = count.where('status', '=', filter.status);
    }
    const [page, total] = await Promise.all([
      rows.orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      count.executeTakeFirstOrThrow(),
    ]);
    return { rows: page, total: Number(total.n) };
  }

  find(id: number, tx?: Tx): Promise<MailRow | undefined> {
    return on(this.db, tx).selectFrom('mail_messages').selectAll().where('id', '=', id).executeTakeFirst();
  }

  // ---- The facts messages are made of ----

  user(id: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('users')
      .select(['id', 'email', 'first_name', 'last_name'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  orderItems(orderId: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('order_items')
      .select(['name', 'quantity', 'total'])
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
  }

  /** The license keys an order issued, with their products' names. */
  orderLicenses(orderId: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('licenses')
      .leftJoin('products', 'products.id', 'licenses.product_id')
      .select(['licenses.license_key', 'products.name as product_name'])
      .where('licenses.order_id', '=', orderId)
      .orderBy('licenses.id')
      .execute();
  }

  /** A subscription's product name and its customer (a status change's message). */
  subscription(id: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .leftJoin('products', 'products.id', 'subscriptions.product_id')
      .leftJoin('users', 'users.id', 'subscriptions.user_id')
      .select([
        'subscriptions.id',
        'subscriptions.next_payment_at',
        'products.name as product_name',
        'users.email',
        'users.first_name',
      ])
      .where('subscriptions.id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Active licenses whose usage expiry is in (from, to] and that have no message of this kind for
   * that expiry yet (its dedupe key `<kind>:<license id>:<expiry><suffix>`), in expiry order (index
   * licenses_usage_expiry; the dedupe key's unique index): one page of the expiry scan. `term`
   * keeps only (true) or leaves out (false) the licenses a purchase renews, which get renewal
   * reminders: no subscription, no trial, a usage term in days (docs/email.md, 'Messages').
   */
  unnotifiedExpiries(
    kind: string,
    from: string,
    to: string,
    limit: number,
    opts: { suffix?: string; term?: boolean } = {},
    tx?: Tx,
  ): Promise<ExpiringLicense[]> {
    const suffix = opts.suffix ?? '';
    let query = on(this.db, tx)
      .selectFrom('licenses')
      .leftJoin('products', 'products.id', 'licenses.product_id')
      .leftJoin('users', 'users.id', 'licenses.user_id')
      .select([
        'licenses.id',
        'licenses.license_key',
        'licenses.usage_expires_at',
        'products.name as product_name',
        'users.email',
        'users.first_name',
      ])
      .where('licenses.status', '=', 'active')
      .where('licenses.usage_expires_at', '>', from)
      .where('licenses.usage_expires_at', '<=', to)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('mail_messages')
              .select('mail_messages.id')
              .whereRef(
                'mail_messages.dedupe_key',
                '=',
                sql<string>`${sql.lit(`${kind}:`)} || cast(licenses.id as varchar(20)) || ${sql.lit(':')} || licenses.usage_expires_at || ${suffix}`,
              ),
          ),
        ),
      );
    if (opts.term !== undefined) {
      query = query.where((eb) => {
        const term = eb.and([
          eb('licenses.subscription_id', 'is', null),
          eb('licenses.trial', '=', 0),
          // The snapshot's text as src/modules/catalogue/policy.ts writes it: a term in days.
          // (never null: the negation must keep the licenses without a policy).
          eb(sql<string>`coalesce(licenses.entitlement_policy, '')`, 'like', '%"usage":{"mode":"days",%'),
        ]);
        return opts.term ? term : eb.not(term);
      });
    }
    return query
      .orderBy('licenses.usage_expires_at')
      .orderBy('licenses.id')
      .limit(limit)
      .execute() as Promise<ExpiringLicense[]>;
  }

  /** When this store first scanned license expiries: licenses expired before it are never announced. */
  async scanStart(tx?: Tx): Promise<string | null> {
    const row = await on(this.db, tx)
      .selectFrom('app_state')
      .select('value')
      .where('key', '=', EXPIRY_SCAN_KEY)
      .executeTakeFirst();
    return row?.value ?? null;
  }

  async setScanStart(value: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('app_state')
      .values({ key: EXPIRY_SCAN_KEY, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }
}
