import { minorUnits, mysqlUtc, openWordPressDb, plausibleEmail, readMeta, readPaged } from '../mysql.js';
import { isPhpArray, type PhpValue, tryPhpUnserialize } from '../php.js';
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
  ImportRelease,
  ImportSource,
  ImportSubscription,
  ImportSubscriptionStatus,
  ImportTotals,
  ImportVariation,
} from '../records.js';
import { problem } from '../records.js';

/**
 * Easy Digital Downloads 3 with Software Licensing and Recurring Payments, read from the store's
 * own database (docs/migrating.md, 'From Easy Digital Downloads'). Read-only: nothing is written
 * to the old store. Every list is read in pages by id.
 */

type Row = Record<string, string | number | null>;

/** EDD 3's order statuses (edd_get_payment_statuses) -> ours; `edd_subscription` is a renewal. */
const ORDER_STATUS: Record<string, ImportOrderStatus> = {
  complete: 'completed',
  publish: 'completed',
  edd_subscription: 'completed',
  partially_refunded: 'completed',
  refunded: 'refunded',
  pending: 'pending',
  processing: 'pending',
  on_hold: 'pending',
  failed: 'failed',
  abandoned: 'failed',
  revoked: 'cancelled',
  cancelled: 'cancelled',
};
/** The statuses whose orders were paid, for the revenue in totals(). */
const PAID = Object.keys(ORDER_STATUS).filter((s) => ORDER_STATUS[s] === 'completed');

const LICENSE_STATUS: Record<string, ImportLicenseStatus> = {
  active: 'active',
  inactive: 'inactive',
  expired: 'expired',
  disabled: 'disabled',
};

/** EDD Recurring's statuses (EDD_Subscription::get_statuses). `pending` never started: not imported. */
const SUBSCRIPTION_STATUS: Record<string, ImportSubscriptionStatus> = {
  active: 'active',
  trialling: 'active',
  failing: 'on-hold',
  cancelled: 'cancelled',
  completed: 'expired',
  expired: 'expired',
};

/** EDD Recurring's periods -> period and interval. */
const PERIOD: Record<string, { period: 'day' | 'week' | 'month' | 'year'; interval: number }> = {
  day: { period: 'day', interval: 1 },
  week: { period: 'week', interval: 1 },
  month: { period: 'month', interval: 1 },
  quarter: { period: 'month', interval: 3 },
  'semi-year': { period: 'month', interval: 6 },
  year: { period: 'year', interval: 1 },
};

/** "12", 12 -> 12; anything else -> null. */
const int = (v: unknown): number | null => {
  const s = String(v ?? '').trim();
  return /^-?\d+$/.test(s) ? Number(s) : null;
};

/** An activation limit as EDD keeps it: a count, 0 unlimited; missing or blank -> null. */
const limit = (v: unknown): number | null => {
  const n = int(v);
  return n === null || n < 0 ? null : n;
};

export const variationId = (downloadId: unknown, priceId: unknown) => `${downloadId}:${priceId}`;

export interface EddSourceOptions {
  /** mysql://user:pass@host:port/database */
  db: string;
  /** WordPress's table prefix, `wp_` by default. */
  prefix?: string;
  pageSize?: number;
}

export function eddSource(opts: EddSourceOptions): ImportSource {
  const db = openWordPressDb(opts.db, opts.prefix ?? 'wp_');
  const pageSize = opts.pageSize;
  const t = db.table;
  let baseCurrency: Promise<string> | null = null;
  const currency = () => {
    baseCurrency ??= db
      .query<Row>(`SELECT option_value FROM ${t('options')} WHERE option_name = 'edd_settings'`)
      .then((rows) => {
        const settings = tryPhpUnserialize(rows[0]?.option_value as string | undefined);
        const code = isPhpArray(settings) ? settings.currency : null;
        return typeof code === 'string' && /^[A-Za-z]{3}$/.test(code) ? code.toUpperCase() : 'USD';
      });
    return baseCurrency;
  };

  const metaOf = (table: string, idColumn: string, ids: unknown[], keys: string[]) =>
    readMeta(db, table, idColumn, ids, keys);
  const paged = <T>(
    sql: string,
    idColumn: string,
    translate: (rows: Row[]) => Promise<Array<T | ImportProblem>>,
  ) => readPaged<T, Row>(db, sql, idColumn, pageSize, translate);

  function customers() {
    return paged<ImportCustomer>(
      `SELECT c.id, c.email, c.name, c.date_created, u.user_pass, u.ID AS user_id
       FROM ${t('edd_customers')} c LEFT JOIN ${t('users')} u ON u.ID = c.user_id AND c.user_id > 0
       WHERE c.id > 0`,
      'c.id',
      async (rows) => {
        const stripeKey = '_edd_stripe_customer_id';
        const customerMeta = await metaOf(
          'edd_customermeta',
          'edd_customer_id',
          rows.map((r) => r.id),
          [stripeKey],
        );
        const userIds = rows.map((r) => r.user_id).filter((id) => id !== null);
        const userMeta = await metaOf('usermeta', 'user_id', userIds, [stripeKey, 'first_name', 'last_name']);
        return rows.map((r): ImportCustomer | ImportProblem => {
          const email = String(r.email ?? '').trim();
          if (!plausibleEmail(email)) return problem('customers', r.id, 'invalid_email', email);
          const um = r.user_id === null ? {} : (userMeta.get(String(r.user_id)) ?? {});
          const stripe = customerMeta.get(String(r.id))?.[stripeKey] || um[stripeKey];
          const [first, ...rest] = String(r.name ?? '')
            .trim()
            .split(/\s+/);
          const firstName = um.first_name || first;
          const lastName = um.last_name || rest.join(' ');
          return {
            sourceId: String(r.id),
            email,
            ...(firstName ? { firstName } : {}),
            ...(lastName ? { lastName } : {}),
            ...(r.user_pass ? { passwordHash: String(r.user_pass) } : {}),
            ...(stripe?.startsWith('cus_') ? { stripeCustomerId: stripe } : {}),
            ...(mysqlUtc(r.date_created) ? { createdAt: mysqlUtc(r.date_created) } : {}),
          };
        });
      },
    );
  }

  const DOWNLOADS = `SELECT ID, post_title, post_name, post_modified_gmt FROM ${t('posts')}
    WHERE post_type = 'download' AND post_status NOT IN ('trash', 'auto-draft')`;
  const PRODUCT_META = [
    'edd_price',
    '_variable_pricing',
    'edd_variable_prices',
    '_edd_sl_enabled',
    '_edd_sl_limit',
    '_edd_sl_version',
    '_edd_sl_changelog',
    '_edd_product_type',
    '_edd_bundled_products',
  ];

  function products() {
    return paged<ImportProduct>(DOWNLOADS, 'ID', async (rows) => {
      const meta = await metaOf(
        'postmeta',
        'post_id',
        rows.map((r) => r.ID),
        PRODUCT_META,
      );
      const code = await currency();
      return rows.map((r): ImportProduct | ImportProblem => {
        const m = meta.get(String(r.ID)) ?? {};
        const price = minorUnits(m.edd_price || '0', code);
        if (price === null) return problem('products', r.ID, 'invalid_price', m.edd_price);
        const variations: ImportVariation[] = [];
        if (m._variable_pricing === '1') {
          const options = tryPhpUnserialize(m.edd_variable_prices);
          if (!isPhpArray(options)) return problem('products', r.ID, 'invalid_price_options');
          for (const [index, option] of Object.entries(options)) {
            if (!isPhpArray(option)) return problem('products', r.ID, 'invalid_price_options', index);
            const amount = minorUnits(option.amount ?? '0', code);
            if (amount === null) return problem('products', r.ID, 'invalid_price', String(option.amount));
            const recurring = option.recurring === 'yes' ? PERIOD[String(option.period)] : undefined;
            variations.push({
              sourceId: variationId(r.ID, index),
              name: String(option.name ?? index),
              price: amount,
              activationLimit: 'license_limit' in option ? limit(option.license_limit) : null,
              ...(recurring ? { billingPeriod: recurring.period, billingInterval: recurring.interval } : {}),
            });
          }
        }
        const bundled =
          m._edd_product_type === 'bundle' ? bundledIds(tryPhpUnserialize(m._edd_bundled_products)) : [];
        return {
          sourceId: String(r.ID),
          name: String(r.post_title),
          ...(r.post_name ? { slug: String(r.post_name) } : {}),
          price,
          activationLimit: limit(m._edd_sl_limit),
          variations,
          ...(bundled.length ? { bundledProductSourceIds: bundled } : {}),
        };
      });
    });
  }

  function releases() {
    return paged<ImportRelease>(DOWNLOADS, 'ID', async (rows) => {
      const meta = await metaOf(
        'postmeta',
        'post_id',
        rows.map((r) => r.ID),
        ['_edd_sl_version', '_edd_sl_changelog'],
      );
      const out: ImportRelease[] = [];
      for (const r of rows) {
        const m = meta.get(String(r.ID));
        if (!m?._edd_sl_version) continue;
        out.push({
          productSourceId: String(r.ID),
          version: m._edd_sl_version,
          ...(m._edd_sl_changelog ? { changelog: m._edd_sl_changelog } : {}),
          ...(mysqlUtc(r.post_modified_gmt) ? { createdAt: mysqlUtc(r.post_modified_gmt) } : {}),
        });
      }
      return out;
    });
  }

  function orders() {
    return paged<ImportOrder>(
      `SELECT id, status, customer_id, gateway, currency, tax, total, date_created, date_completed
       FROM ${t('edd_orders')} WHERE type = 'sale'`,
      'id',
      async (rows) => {
        const ids = rows.map((r) => r.id);
        const items = ids.length
          ? await db.query<Row>(
              `SELECT order_id, product_id, product_name, price_id, quantity, tax, total
               FROM ${t('edd_order_items')} WHERE order_id IN (?) ORDER BY order_id, cart_index, id`,
              [ids],
            )
          : [];
        const transactions = ids.length
          ? await db.query<Row>(
              `SELECT object_id, transaction_id FROM ${t('edd_order_transactions')}
               WHERE object_type = 'order' AND object_id IN (?) ORDER BY id`,
              [ids],
            )
          : [];
        const txOf = new Map(transactions.map((x) => [String(x.object_id), String(x.transaction_id)]));
        const itemsOf = new Map<string, Row[]>();
        for (const i of items)
          itemsOf.set(String(i.order_id), [...(itemsOf.get(String(i.order_id)) ?? []), i]);
        return rows.map((r): ImportOrder | ImportProblem => {
          const status = ORDER_STATUS[String(r.status)];
          if (!status) return problem('orders', r.id, 'unknown_status', String(r.status));
          const code = String(r.currency).toUpperCase();
          const total = minorUnits(r.total, code);
          const tax = minorUnits(r.tax, code);
          if (total === null || tax === null)
            return problem('orders', r.id, 'invalid_amount', `${r.total} ${code}`);
          const lines: ImportOrderItem[] = [];
          for (const i of itemsOf.get(String(r.id)) ?? []) {
            const lineTotal = minorUnits(i.total, code);
            const lineTax = minorUnits(i.tax, code);
            if (lineTotal === null || lineTax === null)
              return problem('orders', r.id, 'invalid_amount', `${i.total} ${code}`);
            lines.push({
              productSourceId: String(i.product_id),
              ...(i.price_id !== null ? { variationSourceId: variationId(i.product_id, i.price_id) } : {}),
              name: String(i.product_name),
              quantity: Number(i.quantity),
              total: lineTotal,
              ...(lineTax ? { tax: lineTax } : {}),
            });
          }
          const tx = txOf.get(String(r.id));
          return {
            sourceId: String(r.id),
            customerSourceId: String(r.customer_id),
            status,
            currency: code,
            total,
            ...(tax ? { tax } : {}),
            ...(r.gateway ? { gateway: String(r.gateway) } : {}),
            ...(tx ? { transactionId: tx } : {}),
            createdAt: mysqlUtc(r.date_created) ?? new Date(0).toISOString(),
            ...(status === 'completed' && mysqlUtc(r.date_completed)
              ? { paidAt: mysqlUtc(r.date_completed) }
              : {}),
            items: lines,
          };
        });
      },
    );
  }

  function subscriptions() {
    return paged<ImportSubscription>(
      `SELECT s.id, s.customer_id, s.period, s.recurring_amount, s.parent_payment_id, s.product_id, s.price_id,
              s.created, s.expiration, s.status, s.profile_id, o.currency, o.gateway
       FROM ${t('edd_subscriptions')} s LEFT JOIN ${t('edd_orders')} o ON o.id = s.parent_payment_id
       WHERE s.id > 0`,
      's.id',
      async (rows) => {
        // EDD Recurring records a renewal payment as an order of the status `edd_subscription`
        // whose `parent` is the first order, and names its subscription in the order's meta
        // (EDD_Subscription::add_payment: `subscription_id`).
        const renewals = rows.length
          ? await db.query<Row>(
              `SELECT m.meta_value AS subscription_id, o.id FROM ${t('edd_ordermeta')} m
               JOIN ${t('edd_orders')} o ON o.id = m.edd_order_id AND o.type = 'sale'
               WHERE m.meta_key = 'subscription_id' AND m.meta_value IN (?) ORDER BY o.id`,
              [rows.map((r) => String(r.id))],
            )
          : [];
        const renewalsOf = new Map<string, string[]>();
        for (const o of renewals) {
          const of = String(o.subscription_id);
          renewalsOf.set(of, [...(renewalsOf.get(of) ?? []), String(o.id)]);
        }
        return rows.map((r): ImportSubscription | ImportProblem => {
          const status = SUBSCRIPTION_STATUS[String(r.status)];
          if (!status) return problem('subscriptions', r.id, 'unknown_status', String(r.status));
          const period = PERIOD[String(r.period)];
          if (!period) return problem('subscriptions', r.id, 'unknown_period', String(r.period));
          if (r.currency === null)
            return problem('subscriptions', r.id, 'unknown_order', String(r.parent_payment_id));
          const code = String(r.currency).toUpperCase();
          const amount = minorUnits(r.recurring_amount, code);
          if (amount === null)
            return problem('subscriptions', r.id, 'invalid_amount', `${r.recurring_amount} ${code}`);
          const running = status === 'active' || status === 'on-hold';
          return {
            sourceId: String(r.id),
            customerSourceId: String(r.customer_id),
            productSourceId: String(r.product_id),
            // EDD keeps price_id 0 for a download without price options.
            ...(Number(r.price_id) > 0 ? { variationSourceId: variationId(r.product_id, r.price_id) } : {}),
            parentOrderSourceId: String(r.parent_payment_id),
            ...(renewalsOf.has(String(r.id)) ? { renewalOrderSourceIds: renewalsOf.get(String(r.id)) } : {}),
            status,
            billingPeriod: period.period,
            billingInterval: period.interval,
            // EDD's expiration is the end of the paid period: the next renewal.
            nextPaymentAt: running ? (mysqlUtc(r.expiration) ?? null) : null,
            currency: code,
            recurringTotal: amount,
            ...(r.gateway ? { gateway: String(r.gateway) } : {}),
            ...(r.profile_id ? { gatewayProfileId: String(r.profile_id) } : {}),
            ...(mysqlUtc(r.created) ? { createdAt: mysqlUtc(r.created) } : {}),
          };
        });
      },
    );
  }

  function licenses() {
    return paged<ImportLicense>(
      `SELECT l.id, l.license_key, l.status, l.download_id, l.price_id, l.payment_id, l.date_created,
              l.expiration, l.parent, l.customer_id, p.ID AS product_exists
       FROM ${t('edd_licenses')} l
       LEFT JOIN ${t('posts')} p ON p.ID = l.download_id AND p.post_type = 'download' AND p.post_status NOT IN ('trash', 'auto-draft')
       WHERE l.id > 0`,
      'l.id',
      async (rows) => {
        const meta = await metaOf(
          'edd_licensemeta',
          'edd_license_id',
          rows.map((r) => r.id),
          ['_edd_sl_limit'],
        );
        // A license of a subscription: EDD Recurring ties them by the first order and the download.
        const payments = [...new Set(rows.map((r) => r.payment_id))];
        const subs = payments.length
          ? await db.query<Row>(
              `SELECT id, parent_payment_id, product_id FROM ${t('edd_subscriptions')} WHERE parent_payment_id IN (?) ORDER BY id`,
              [payments],
            )
          : [];
        const subOf = new Map(subs.map((s) => [`${s.parent_payment_id}:${s.product_id}`, String(s.id)]));
        return rows.map((r): ImportLicense | ImportProblem => {
          const key = String(r.license_key ?? '');
          if (key.trim() === '') return problem('licenses', r.id, 'missing_key');
          if (r.product_exists === null)
            return problem('licenses', r.id, 'unknown_product', String(r.download_id));
          const status = LICENSE_STATUS[String(r.status)];
          if (!status) return problem('licenses', r.id, 'unknown_status', String(r.status));
          const expiration = int(r.expiration);
          const sub = subOf.get(`${r.payment_id}:${r.download_id}`);
          return {
            sourceId: String(r.id),
            key,
            productSourceId: String(r.download_id),
            ...(r.price_id !== null ? { variationSourceId: variationId(r.download_id, r.price_id) } : {}),
            customerSourceId: String(r.customer_id),
            ...(Number(r.payment_id) > 0 ? { orderSourceId: String(r.payment_id) } : {}),
            ...(sub ? { subscriptionSourceId: sub } : {}),
            ...(Number(r.parent) > 0 ? { parentSourceId: String(r.parent) } : {}),
            status,
            // A unix time; 0 or none is a lifetime license.
            expiresAt: expiration ? new Date(expiration * 1000).toISOString() : null,
            activationLimit: limit(meta.get(String(r.id))?._edd_sl_limit),
            ...(mysqlUtc(r.date_created) ? { createdAt: mysqlUtc(r.date_created) } : {}),
          };
        });
      },
    );
  }

  function activations() {
    // Deactivated sites (activated = 0) are history, not seats.
    return paged<ImportActivation>(
      `SELECT site_id, site_name, license_id, is_local FROM ${t('edd_license_activations')} WHERE activated = 1`,
      'site_id',
      async (rows) =>
        rows.map(
          (r): ImportActivation => ({
            sourceId: String(r.site_id),
            licenseSourceId: String(r.license_id),
            url: String(r.site_name),
            ...(Number(r.is_local) === 1 ? { staging: true } : {}),
          }),
        ),
    );
  }

  const readers: { [K in ImportKind]: () => AsyncIterable<ImportRecord<K> | ImportProblem> } = {
    customers,
    products,
    releases,
    orders,
    subscriptions,
    licenses,
    activations,
  };

  return {
    name: 'edd',
    read: <K extends ImportKind>(kind: K) =>
      readers[kind]() as AsyncIterable<ImportRecord<K> | ImportProblem>,
    async totals(): Promise<ImportTotals> {
      const count = async (sql: string, params: unknown[] = []) =>
        Number((await db.query<Row>(sql, params))[0]?.n ?? 0);
      const revenue: Record<string, number> = {};
      const sums = await db.query<Row>(
        `SELECT currency, SUM(total) AS total FROM ${t('edd_orders')} WHERE type = 'sale' AND status IN (?) GROUP BY currency`,
        [PAID],
      );
      for (const s of sums) {
        const code = String(s.currency).toUpperCase();
        const minor = minorUnits(s.total, code);
        if (minor !== null) revenue[code] = (revenue[code] ?? 0) + minor;
      }
      return {
        customers: await count(`SELECT COUNT(*) AS n FROM ${t('edd_customers')}`),
        licenses: await count(`SELECT COUNT(*) AS n FROM ${t('edd_licenses')}`),
        activations: await count(
          `SELECT COUNT(*) AS n FROM ${t('edd_license_activations')} WHERE activated = 1`,
        ),
        orders: await count(`SELECT COUNT(*) AS n FROM ${t('edd_orders')} WHERE type = 'sale'`),
        subscriptions: await count(`SELECT COUNT(*) AS n FROM ${t('edd_subscriptions')}`),
        revenue,
      };
    },
    close: () => db.close(),
  };
}

/** `_edd_bundled_products`: download ids, some as "id_priceid" for one price option; the download's ids, once each. */
function bundledIds(value: PhpValue): string[] {
  if (!isPhpArray(value)) return [];
  const ids = Object.values(value)
    .map((v) => String(v).split('_')[0]!)
    .filter((id) => /^\d+$/.test(id));
  return [...new Set(ids)];
}
