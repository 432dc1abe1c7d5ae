import { createHmac } from 'node:crypto';
import { safeEqual } from '../../../random.js';
import { minorUnits, mysqlUtc, openWordPressDb, plausibleEmail, readMeta, readPaged } from '../mysql.js';
import type {
  ImportActivation,
  ImportCustomer,
  ImportKind,
  ImportLicense,
  ImportLicenseStatus,
  ImportOrder,
  ImportOrderItem,
  ImportOrderStatus,
  ImportProblem,
  ImportProduct,
  ImportRecord,
  ImportSource,
  ImportSubscription,
  ImportSubscriptionStatus,
  ImportTotals,
} from '../records.js';
import { isProblem, problem } from '../records.js';
import { DefuseError, defuseDecrypt, loadDefuseKey } from './defuse.js';

/**
 * WooCommerce with License Manager for WooCommerce and/or the WooCommerce API Manager, read from
 * the store's own database (docs/migrating.md, 'From WooCommerce'). Orders come from the HPOS
 * tables when the store uses them (`woocommerce_custom_orders_table_enabled`), else from the
 * legacy `shop_order` posts. Read-only; every list is read in pages by id.
 */

type Row = Record<string, string | number | null>;

const ORDER_STATUS: Record<string, ImportOrderStatus> = {
  'wc-completed': 'completed',
  // Paid, waiting for fulfilment: for software, a paid order.
  'wc-processing': 'completed',
  'wc-refunded': 'refunded',
  'wc-pending': 'pending',
  'wc-on-hold': 'pending',
  'wc-failed': 'failed',
  'wc-cancelled': 'cancelled',
};
const PAID = ['wc-completed', 'wc-processing'];

/** WooCommerce Subscriptions' statuses; `wc-pending` never started and is reported. */
const SUBSCRIPTION_STATUS: Record<string, ImportSubscriptionStatus> = {
  'wc-active': 'active',
  'wc-on-hold': 'on-hold',
  'wc-pending-cancel': 'pending-cancel',
  'wc-cancelled': 'cancelled',
  'wc-expired': 'expired',
};
const SUBSCRIPTION_META = ['_billing_period', '_billing_interval', '_schedule_next_payment'];

/** LMFWC's LicenseStatus: 1 sold, 2 delivered, 3 active, 4 inactive. */
const LICENSE_STATUS: Record<string, ImportLicenseStatus> = {
  '1': 'active',
  '2': 'active',
  '3': 'active',
  '4': 'inactive',
};

/** WooCommerce Subscriptions' states in which the API Manager still grants a subscription's resources. */
const SUBSCRIPTION_RUNNING = ['wc-active', 'wc-pending-cancel', 'wc-on-hold'];

/**
 * The API Manager's rows are numbered apart from License Manager's, so their source ids carry a
 * prefix: both plugins' licenses are in one list of one source.
 */
const WCAM = 'wcam:';

/** A unix time in seconds (the API Manager's columns) -> RFC 3339; 0 and anything else -> undefined. */
const unixUtc = (value: unknown): string | undefined => {
  const seconds = Number(value);
  return Number.isSafeInteger(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : undefined;
};

/** A guest's orders belong to one customer per billing email. */
const guestId = (email: string) => `guest:${email.trim().toLowerCase()}`;

export interface WooCommerceSourceOptions {
  db: string;
  prefix?: string;
  /** LMFWC_PLUGIN_DEFUSE (or the content of uploads/lmfwc-files/defuse.txt): decrypts the license keys. */
  defuseKey?: string;
  /** LMFWC_PLUGIN_SECRET (or uploads/lmfwc-files/secret.txt): when given, each decrypted key is checked against its hash. */
  secret?: string;
  pageSize?: number;
}

export function wooCommerceSource(opts: WooCommerceSourceOptions): ImportSource {
  const prefix = opts.prefix ?? 'wp_';
  const db = openWordPressDb(opts.db, prefix);
  const t = db.table;
  const key = opts.defuseKey ? loadDefuseKey(opts.defuseKey) : null;
  const paged = <T>(
    sql: string,
    idColumn: string,
    translate: (rows: Row[]) => Promise<Array<T | ImportProblem>>,
  ) => readPaged<T, Row>(db, sql, idColumn, opts.pageSize, translate);

  const option = async (name: string) =>
    (await db.query<Row>(`SELECT option_value FROM ${t('options')} WHERE option_name = ?`, [name]))[0]
      ?.option_value;
  let storage: Promise<'hpos' | 'posts'> | null = null;
  const orderStorage = () => {
    storage ??= option('woocommerce_custom_orders_table_enabled').then((v) =>
      v === 'yes' ? 'hpos' : 'posts',
    );
    return storage;
  };
  let base: Promise<string> | null = null;
  const baseCurrency = () => {
    base ??= option('woocommerce_currency').then((v) =>
      typeof v === 'string' && /^[A-Z]{3}$/.test(v) ? v : 'USD',
    );
    return base;
  };

  /** Order headers in one shape from either storage. */
  const ORDERS = {
    hpos: (
      type = 'shop_order',
    ) => `SELECT o.id, o.parent_order_id AS parent, o.status, o.currency, o.tax_amount AS tax, o.total_amount AS total, o.customer_id,
        o.billing_email, o.payment_method, o.transaction_id, o.date_created_gmt AS created, d.date_paid_gmt AS paid
      FROM ${t('wc_orders')} o LEFT JOIN ${t('wc_order_operational_data')} d ON d.order_id = o.id
      WHERE o.type = '${type}'`,
    posts: (
      type = 'shop_order',
    ) => `SELECT p.ID AS id, p.post_parent AS parent, p.post_status AS status, p.post_date_gmt AS created,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_order_currency' LIMIT 1) AS currency,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_order_tax' LIMIT 1) AS tax,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_order_total' LIMIT 1) AS total,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_customer_user' LIMIT 1) AS customer_id,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_billing_email' LIMIT 1) AS billing_email,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_payment_method' LIMIT 1) AS payment_method,
        (SELECT meta_value FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_transaction_id' LIMIT 1) AS transaction_id,
        (SELECT FROM_UNIXTIME(meta_value) FROM ${t('postmeta')} WHERE post_id = p.ID AND meta_key = '_date_paid' AND meta_value > 0 LIMIT 1) AS paid
      FROM ${t('posts')} p WHERE p.post_type = '${type}' AND p.post_status NOT IN ('trash', 'auto-draft', 'wc-checkout-draft')`,
  };
  const ORDER_ID = { hpos: 'o.id', posts: 'p.ID' };

  async function* customers(): AsyncIterable<ImportCustomer | ImportProblem> {
    const capabilities = `${prefix}capabilities`;
    yield* paged<ImportCustomer>(
      `SELECT u.ID, u.user_email, u.user_pass, u.user_registered FROM ${t('users')} u
       JOIN ${t('usermeta')} c ON c.user_id = u.ID AND c.meta_key = '${capabilities}' AND c.meta_value LIKE '%"customer"%'
       WHERE u.ID > 0`,
      'u.ID',
      async (rows) => {
        const meta = await readMeta(
          db,
          'usermeta',
          'user_id',
          rows.map((r) => r.ID),
          ['first_name', 'last_name', 'billing_first_name', 'billing_last_name', '_stripe_customer_id'],
        );
        return rows.map((r): ImportCustomer | ImportProblem => {
          const email = String(r.user_email ?? '').trim();
          if (!plausibleEmail(email)) return problem('customers', r.ID, 'invalid_email', email);
          const m = meta.get(String(r.ID)) ?? {};
          const firstName = m.first_name || m.billing_first_name;
          const lastName = m.last_name || m.billing_last_name;
          return {
            sourceId: String(r.ID),
            email,
            ...(firstName ? { firstName } : {}),
            ...(lastName ? { lastName } : {}),
            ...(r.user_pass ? { passwordHash: String(r.user_pass) } : {}),
            ...(m._stripe_customer_id?.startsWith('cus_') ? { stripeCustomerId: m._stripe_customer_id } : {}),
            ...(mysqlUtc(r.user_registered) ? { createdAt: mysqlUtc(r.user_registered) } : {}),
          };
        });
      },
    );
    // Guests: one customer per billing email of their orders. The emails already yielded are kept
    // to yield each once; a store's guests are far fewer than its licenses.
    const seen = new Set<string>();
    const kind = await orderStorage();
    for await (const r of db.pages<Row>(
      `SELECT * FROM (${ORDERS[kind]()}) g WHERE (customer_id IS NULL OR customer_id = 0)`,
      'id',
    )) {
      const email = String(r.billing_email ?? '').trim();
      const id = guestId(email);
      if (seen.has(id)) continue;
      seen.add(id);
      if (!plausibleEmail(email)) yield problem('customers', id, 'invalid_email', email);
      else yield { sourceId: id, email, ...(mysqlUtc(r.created) ? { createdAt: mysqlUtc(r.created) } : {}) };
    }
  }

  function products() {
    return paged<ImportProduct>(
      `SELECT ID, post_title, post_name FROM ${t('posts')}
       WHERE post_type = 'product' AND post_status NOT IN ('trash', 'auto-draft')`,
      'ID',
      async (rows) => {
        const ids = rows.map((r) => r.ID);
        const variations = ids.length
          ? await db.query<Row>(
              `SELECT ID, post_parent, post_title FROM ${t('posts')}
               WHERE post_type = 'product_variation' AND post_status NOT IN ('trash', 'auto-draft') AND post_parent IN (?) ORDER BY menu_order, ID`,
              [ids],
            )
          : [];
        const prices = await readMeta(
          db,
          'postmeta',
          'post_id',
          [...ids, ...variations.map((v) => v.ID)],
          ['_price'],
        );
        const code = await baseCurrency();
        return rows.map((r): ImportProduct | ImportProblem => {
          const price = minorUnits(prices.get(String(r.ID))?._price || '0', code);
          if (price === null)
            return problem('products', r.ID, 'invalid_price', prices.get(String(r.ID))?._price);
          const own = [];
          for (const v of variations.filter((v) => String(v.post_parent) === String(r.ID))) {
            const amount = minorUnits(prices.get(String(v.ID))?._price || '0', code);
            if (amount === null)
              return problem('products', r.ID, 'invalid_price', prices.get(String(v.ID))?._price);
            own.push({
              sourceId: String(v.ID),
              name: String(v.post_title),
              price: amount,
              activationLimit: null,
            });
          }
          return {
            sourceId: String(r.ID),
            name: String(r.post_title),
            ...(r.post_name ? { slug: String(r.post_name) } : {}),
            price,
            activationLimit: null,
            variations: own,
          };
        });
      },
    );
  }

  async function* orders(): AsyncIterable<ImportOrder | ImportProblem> {
    const kind = await orderStorage();
    yield* paged<ImportOrder>(ORDERS[kind](), ORDER_ID[kind], async (rows) => {
      const ids = rows.map((r) => r.id);
      const items = ids.length
        ? await db.query<Row>(
            `SELECT order_item_id, order_item_name, order_id FROM ${t('woocommerce_order_items')}
             WHERE order_item_type = 'line_item' AND order_id IN (?) ORDER BY order_item_id`,
            [ids],
          )
        : [];
      const meta = await readMeta(
        db,
        'woocommerce_order_itemmeta',
        'order_item_id',
        items.map((i) => i.order_item_id),
        ['_product_id', '_variation_id', '_qty', '_line_total', '_line_tax'],
      );
      return rows.map((r): ImportOrder | ImportProblem => {
        const status = ORDER_STATUS[String(r.status)];
        if (!status) return problem('orders', r.id, 'unknown_status', String(r.status));
        const code = String(r.currency ?? '').toUpperCase();
        const total = minorUnits(r.total, code);
        const tax = minorUnits(r.tax ?? '0', code);
        if (total === null || tax === null)
          return problem('orders', r.id, 'invalid_amount', `${r.total} ${code}`);
        const lines: ImportOrderItem[] = [];
        for (const i of items.filter((i) => String(i.order_id) === String(r.id))) {
          const m = meta.get(String(i.order_item_id)) ?? {};
          // WooCommerce keeps line totals before tax.
          const net = minorUnits(m._line_total ?? '0', code);
          const lineTax = minorUnits(m._line_tax ?? '0', code);
          if (net === null || lineTax === null)
            return problem('orders', r.id, 'invalid_amount', `${m._line_total} ${code}`);
          lines.push({
            productSourceId: String(m._product_id),
            ...(Number(m._variation_id) > 0 ? { variationSourceId: String(m._variation_id) } : {}),
            name: String(i.order_item_name),
            quantity: Number(m._qty ?? 1),
            total: net + lineTax,
            ...(lineTax ? { tax: lineTax } : {}),
          });
        }
        const registered = Number(r.customer_id) > 0;
        const paid = mysqlUtc(r.paid);
        return {
          sourceId: String(r.id),
          customerSourceId: registered ? String(r.customer_id) : guestId(String(r.billing_email ?? '')),
          status,
          currency: code,
          total,
          ...(tax ? { tax } : {}),
          ...(r.payment_method ? { gateway: String(r.payment_method) } : {}),
          ...(r.transaction_id ? { transactionId: String(r.transaction_id) } : {}),
          createdAt: mysqlUtc(r.created) ?? new Date(0).toISOString(),
          ...(status === 'completed' && paid ? { paidAt: paid } : {}),
          items: lines,
        };
      });
    });
  }

  /** Whether the store has a table: License Manager's and the API Manager's exist only where installed. */
  const tables = new Map<string, Promise<boolean>>();
  const hasTable = (name: string) => {
    let known = tables.get(name);
    if (!known) {
      known = db
        .query<Row>(
          'SELECT 1 AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
          [`${prefix}${name}`],
        )
        .then((rows) => rows.length > 0);
      tables.set(name, known);
    }
    return known;
  };

  /** The customer of an order (`orderColumn`): its user, or the guest of its billing email. */
  const orderCustomer = (kind: 'hpos' | 'posts', orderColumn: string) =>
    kind === 'hpos'
      ? `SELECT CASE WHEN customer_id > 0 THEN customer_id ELSE CONCAT('guest:', LOWER(TRIM(billing_email))) END FROM ${t('wc_orders')} WHERE id = ${orderColumn}`
      : `SELECT CASE WHEN c.meta_value > 0 THEN c.meta_value ELSE CONCAT('guest:', LOWER(TRIM(e.meta_value))) END
         FROM ${t('postmeta')} c LEFT JOIN ${t('postmeta')} e ON e.post_id = c.post_id AND e.meta_key = '_billing_email'
         WHERE c.post_id = ${orderColumn} AND c.meta_key = '_customer_user' LIMIT 1`;

  /** A product or variation the licenses refer to, as WooCommerce still has it (trashed ones are gone). */
  const PRODUCT_JOIN = (column: string) =>
    `LEFT JOIN ${t('posts')} p ON p.ID = ${column} AND p.post_type IN ('product', 'product_variation') AND p.post_status NOT IN ('trash', 'auto-draft')`;

  /** The product fields of a license record: a variation's id stands for itself under its product. */
  const productOf = (r: Row, id: unknown) =>
    r.post_type === 'product_variation'
      ? { productSourceId: String(r.post_parent), variationSourceId: String(id) }
      : { productSourceId: String(id) };

  /** License Manager's licenses: their query and their translation (which decrypts the keys); null without any. */
  async function lmfwcRows() {
    if (!(await hasTable('lmfwc_licenses'))) return null;
    if (!key) {
      const any = await db.query<Row>(`SELECT id FROM ${t('lmfwc_licenses')} LIMIT 1`);
      if (any.length === 0) return null;
      throw new DefuseError('License Manager for WooCommerce keys need the defuse key (--defuse-key)');
    }
    const kind = await orderStorage();
    return {
      sql: `SELECT l.id, l.order_id, l.product_id, l.user_id, l.license_key, l.hash, l.expires_at, l.status,
              l.times_activated_max, l.created_at, p.ID AS product, p.post_type, p.post_parent, (${orderCustomer(kind, 'l.order_id')}) AS order_customer
       FROM ${t('lmfwc_licenses')} l ${PRODUCT_JOIN('l.product_id')}
       WHERE l.id > 0`,
      translate: (r: Row) => lmfwcLicense(r, key),
    };
  }

  function lmfwcLicense(r: Row, defuse: NonNullable<typeof key>): ImportLicense | ImportProblem {
    if (r.product === null) return problem('licenses', r.id, 'unknown_product', String(r.product_id));
    let plain: string;
    try {
      plain = defuseDecrypt(String(r.license_key), defuse);
    } catch (e) {
      if (e instanceof DefuseError) return problem('licenses', r.id, 'undecryptable_key');
      throw e;
    }
    if (opts.secret) {
      const hash = createHmac('sha256', opts.secret).update(plain).digest('hex');
      if (!safeEqual(hash, String(r.hash))) return problem('licenses', r.id, 'hash_mismatch');
    }
    const status = LICENSE_STATUS[String(r.status)];
    if (!status) return problem('licenses', r.id, 'unknown_status', String(r.status));
    const customer = Number(r.user_id) > 0 ? String(r.user_id) : r.order_customer;
    if (!customer) return problem('licenses', r.id, 'unknown_customer');
    return {
      sourceId: String(r.id),
      key: plain,
      ...productOf(r, r.product_id),
      customerSourceId: String(customer),
      ...(Number(r.order_id) > 0 ? { orderSourceId: String(r.order_id) } : {}),
      status,
      expiresAt: mysqlUtc(r.expires_at) ?? null,
      // LMFWC leaves the maximum empty for unlimited activations.
      activationLimit: r.times_activated_max === null ? 0 : Number(r.times_activated_max),
      ...(mysqlUtc(r.created_at) ? { createdAt: mysqlUtc(r.created_at) } : {}),
    };
  }

  /**
   * License Manager's keys that are imported, to their license: a store that ran both plugins may
   * hold a key in both, and it is imported once. Built once, only where the API Manager is there
   * too (License Manager's licenses are then read twice); a key and an id per license, as the
   * guests' emails above.
   */
  let lmfwcKeys: Promise<Map<string, string>> | null = null;
  const keysOfLmfwc = () => {
    lmfwcKeys ??= (async () => {
      const keys = new Map<string, string>();
      const lmfwc = await lmfwcRows();
      if (!lmfwc) return keys;
      for await (const r of db.pages<Row>(lmfwc.sql, 'l.id', [], opts.pageSize)) {
        const l = lmfwc.translate(r);
        if (!isProblem(l) && !keys.has(l.key)) keys.set(l.key, l.sourceId);
      }
      return keys;
    })();
    return lmfwcKeys;
  };

  const hasApiManager = async () =>
    (await hasTable('wc_am_api_resource')) && (await hasTable('wc_am_api_activation'));

  async function* licenses(): AsyncIterable<ImportLicense | ImportProblem> {
    const lmfwc = await lmfwcRows();
    if (lmfwc) {
      yield* paged<ImportLicense>(lmfwc.sql, 'l.id', async (rows) => rows.map(lmfwc.translate));
    }
    if (await hasApiManager()) yield* apiResources();
  }

  /**
   * The API Manager's API resources: one per product bought on an order (or a subscription), with
   * its Product Order API Key, kept unchanged. A resource of a subscription lasts while the
   * subscription runs, as the API Manager grants it; its expiry is the subscription's.
   */
  async function* apiResources(): AsyncIterable<ImportLicense | ImportProblem> {
    const kind = await orderStorage();
    const lmfwc = await keysOfLmfwc();
    const subscriptionStatus =
      kind === 'hpos'
        ? `SELECT status FROM ${t('wc_orders')} WHERE id = r.sub_id AND type = 'shop_subscription'`
        : `SELECT post_status FROM ${t('posts')} WHERE ID = r.sub_id AND post_type = 'shop_subscription'`;
    yield* paged<ImportLicense>(
      `SELECT r.api_resource_id, r.product_order_api_key, r.order_id, r.product_id, r.user_id,
              r.activations_purchased_total, r.active, r.access_expires, r.access_granted, r.sub_id,
              p.ID AS product, p.post_type, p.post_parent, (${orderCustomer(kind, 'r.order_id')}) AS order_customer,
              (${subscriptionStatus}) AS subscription_status,
              (SELECT meta_value FROM ${t('postmeta')} WHERE post_id IN (p.ID, p.post_parent) AND meta_key = '_api_activations_unlimited' AND meta_value = 'yes' LIMIT 1) AS unlimited
       FROM ${t('wc_am_api_resource')} r ${PRODUCT_JOIN('r.product_id')}
       WHERE r.api_resource_id > 0`,
      'r.api_resource_id',
      async (rows) =>
        rows.map((r): ImportLicense | ImportProblem => {
          const id = `${WCAM}${r.api_resource_id}`;
          const apiKey = String(r.product_order_api_key ?? '');
          if (!apiKey.trim()) return problem('licenses', id, 'no_key');
          const kept = lmfwc.get(apiKey);
          // Reported by where it was kept, never the key itself.
          if (kept !== undefined) return problem('licenses', id, 'duplicate_key', kept);
          if (r.product === null) return problem('licenses', id, 'unknown_product', String(r.product_id));
          const customer = Number(r.user_id) > 0 ? String(r.user_id) : r.order_customer;
          if (!customer) return problem('licenses', id, 'unknown_customer');
          // The product's "Unlimited Activations" is stored as a large number; none bought is no seat.
          const purchased = Number(r.activations_purchased_total);
          if (!r.unlimited && !(purchased > 0)) return problem('licenses', id, 'no_activations');
          const subscription = Number(r.sub_id) > 0 ? String(r.sub_id) : undefined;
          const ended =
            subscription !== undefined && !SUBSCRIPTION_RUNNING.includes(String(r.subscription_status));
          return {
            sourceId: id,
            key: apiKey,
            ...productOf(r, r.product_id),
            customerSourceId: String(customer),
            ...(Number(r.order_id) > 0 ? { orderSourceId: String(r.order_id) } : {}),
            ...(subscription ? { subscriptionSourceId: subscription } : {}),
            // `active` 0: the API Manager refuses the key (refunded, or switched off by the store).
            status: Number(r.active) === 1 ? (ended ? 'expired' : 'active') : 'disabled',
            expiresAt: unixUtc(r.access_expires) ?? null,
            activationLimit: r.unlimited ? 0 : purchased,
            ...(unixUtc(r.access_granted) ? { createdAt: unixUtc(r.access_granted) } : {}),
          };
        }),
    );
  }

  /**
   * The API Manager's activations: the site (`object`, the URL the client sent) on its resource's
   * license. A resource whose key License Manager also held has its sites on that license.
   */
  async function* activations(): AsyncIterable<ImportActivation | ImportProblem> {
    if (!(await hasApiManager())) return;
    const lmfwc = await keysOfLmfwc();
    yield* paged<ImportActivation>(
      `SELECT a.activation_id, a.api_resource_id, a.object, a.activation_time, r.product_order_api_key
       FROM ${t('wc_am_api_activation')} a LEFT JOIN ${t('wc_am_api_resource')} r ON r.api_resource_id = a.api_resource_id
       WHERE a.activation_id > 0`,
      'a.activation_id',
      async (rows) =>
        rows.map((r): ImportActivation | ImportProblem => {
          const id = `${WCAM}${r.activation_id}`;
          const url = String(r.object ?? '').trim();
          if (!url) return problem('activations', id, 'no_url');
          const kept = r.product_order_api_key ? lmfwc.get(String(r.product_order_api_key)) : undefined;
          return {
            sourceId: id,
            licenseSourceId: kept ?? `${WCAM}${r.api_resource_id}`,
            url,
            ...(unixUtc(r.activation_time) ? { activatedAt: unixUtc(r.activation_time) } : {}),
          };
        }),
    );
  }

  /** WooCommerce Subscriptions: `shop_subscription` orders, in the same storage as the orders. */
  async function* subscriptions(): AsyncIterable<ImportSubscription | ImportProblem> {
    const kind = await orderStorage();
    yield* paged<ImportSubscription>(ORDERS[kind]('shop_subscription'), ORDER_ID[kind], async (rows) => {
      const ids = rows.map((r) => r.id);
      const meta =
        kind === 'hpos'
          ? await readMeta(db, 'wc_orders_meta', 'order_id', ids, SUBSCRIPTION_META)
          : await readMeta(db, 'postmeta', 'post_id', ids, SUBSCRIPTION_META);
      const items = ids.length
        ? await db.query<Row>(
            `SELECT i.order_id, MAX(CASE WHEN m.meta_key = '_product_id' THEN m.meta_value END) AS product,
                    MAX(CASE WHEN m.meta_key = '_variation_id' THEN m.meta_value END) AS variation
             FROM ${t('woocommerce_order_items')} i JOIN ${t('woocommerce_order_itemmeta')} m ON m.order_item_id = i.order_item_id
             WHERE i.order_item_type = 'line_item' AND i.order_id IN (?) GROUP BY i.order_item_id, i.order_id ORDER BY i.order_item_id`,
            [ids],
          )
        : [];
      return rows.map((r): ImportSubscription | ImportProblem => {
        const status = SUBSCRIPTION_STATUS[String(r.status)];
        if (!status) return problem('subscriptions', r.id, 'unknown_status', String(r.status));
        const m = meta.get(String(r.id)) ?? {};
        const period = m._billing_period;
        if (period !== 'day' && period !== 'week' && period !== 'month' && period !== 'year') {
          return problem('subscriptions', r.id, 'unknown_period', period);
        }
        const item = items.find((i) => String(i.order_id) === String(r.id));
        if (!item) return problem('subscriptions', r.id, 'no_product');
        const code = String(r.currency ?? '').toUpperCase();
        const total = minorUnits(r.total, code);
        if (total === null) return problem('subscriptions', r.id, 'invalid_amount', `${r.total} ${code}`);
        const running = status === 'active' || status === 'on-hold' || status === 'pending-cancel';
        const registered = Number(r.customer_id) > 0;
        return {
          sourceId: String(r.id),
          customerSourceId: registered ? String(r.customer_id) : guestId(String(r.billing_email ?? '')),
          productSourceId: String(item.product),
          ...(Number(item.variation) > 0 ? { variationSourceId: String(item.variation) } : {}),
          ...(Number(r.parent) > 0 ? { parentOrderSourceId: String(r.parent) } : {}),
          status,
          billingPeriod: period,
          billingInterval: Math.max(1, Number(m._billing_interval) || 1),
          // Stored in UTC as "Y-m-d H:i:s"; 0 when no payment is scheduled.
          nextPaymentAt: running ? (mysqlUtc(m._schedule_next_payment) ?? null) : null,
          currency: code,
          recurringTotal: total,
          ...(r.payment_method ? { gateway: String(r.payment_method) } : {}),
          ...(mysqlUtc(r.created) ? { createdAt: mysqlUtc(r.created) } : {}),
        };
      });
    });
  }

  // WooCommerce has no release metadata: that kind yields nothing. License Manager for
  // WooCommerce 2 keeps no sites (only a count per license); the API Manager's are read above.
  async function* nothing(): AsyncIterable<never> {}

  const readers: { [K in ImportKind]: () => AsyncIterable<ImportRecord<K> | ImportProblem> } = {
    customers,
    products,
    releases: nothing,
    orders,
    subscriptions,
    licenses,
    activations,
  };

  return {
    name: 'woocommerce',
    read: <K extends ImportKind>(kind: K) =>
      readers[kind]() as AsyncIterable<ImportRecord<K> | ImportProblem>,
    async totals(): Promise<ImportTotals> {
      const kind = await orderStorage();
      const apiManager = await hasApiManager();
      const count = async (sql: string) => Number((await db.query<Row>(sql))[0]?.n ?? 0);
      const revenue: Record<string, number> = {};
      const sums = await db.query<Row>(
        `SELECT currency, SUM(total) AS total FROM (${ORDERS[kind]()}) o WHERE status IN (?) GROUP BY currency`,
        [PAID],
      );
      for (const s of sums) {
        const code = String(s.currency).toUpperCase();
        const minor = minorUnits(s.total, code);
        if (minor !== null) revenue[code] = (revenue[code] ?? 0) + minor;
      }
      const registered = await count(
        `SELECT COUNT(*) AS n FROM ${t('usermeta')} WHERE meta_key = '${prefix}capabilities' AND meta_value LIKE '%"customer"%'`,
      );
      const guests = await count(
        `SELECT COUNT(DISTINCT LOWER(TRIM(billing_email))) AS n FROM (${ORDERS[kind]()}) o WHERE customer_id IS NULL OR customer_id = 0`,
      );
      return {
        customers: registered + guests,
        licenses:
          ((await hasTable('lmfwc_licenses'))
            ? await count(`SELECT COUNT(*) AS n FROM ${t('lmfwc_licenses')}`)
            : 0) + (apiManager ? await count(`SELECT COUNT(*) AS n FROM ${t('wc_am_api_resource')}`) : 0),
        activations: apiManager ? await count(`SELECT COUNT(*) AS n FROM ${t('wc_am_api_activation')}`) : 0,
        orders: await count(`SELECT COUNT(*) AS n FROM (${ORDERS[kind]()}) o`),
        subscriptions: await count(`SELECT COUNT(*) AS n FROM (${ORDERS[kind]('shop_subscription')}) o`),
        revenue,
      };
    },
    close: () => db.close(),
  };
}
