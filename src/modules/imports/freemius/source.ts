import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvRecords } from '../csv/parse.js';
import { minorUnits, mysqlUtc, plausibleEmail } from '../mysql.js';
import type {
  ImportActivation,
  ImportCustomer,
  ImportKind,
  ImportLicense,
  ImportOrder,
  ImportProblem,
  ImportProduct,
  ImportRecord,
  ImportSource,
  ImportSubscription,
  ImportTotals,
  ImportVariation,
} from '../records.js';
import { problem, readKind } from '../records.js';

/**
 * Freemius, from the exports a developer takes of a product (docs/migrating.md, 'From Freemius'):
 * a folder with one file per entity, named as Freemius's API names the lists (`plugins`, `plans`,
 * `pricing`, `users`, `payments`, `subscriptions`, `licenses`, `installs`), each either JSON as the
 * API answers it (`{"licenses": [...]}`, or a bare array) or CSV with the entity's fields as its
 * header. Fields are the API's (`secret_key`, `quota`, `billing_cycle`, `next_payment`, …); times
 * are Freemius's `YYYY-MM-DD HH:MM:SS` in UTC. Read-only; nothing is sent to Freemius.
 */

type Row = Record<string, unknown>;

const ENTITIES = [
  'plugins',
  'plans',
  'pricing',
  'users',
  'payments',
  'subscriptions',
  'licenses',
  'installs',
];

export async function freemiusSource(dir: string): Promise<ImportSource> {
  const lists = new Map<string, Row[]>();
  for (const name of ENTITIES) lists.set(name, await readList(dir, name));
  for (const name of ['plugins', 'users', 'licenses']) {
    if (!existsSync(join(dir, `${name}.json`)) && !existsSync(join(dir, `${name}.csv`))) {
      throw new Error(`${join(dir, `${name}.json`)} (or .csv) is missing`);
    }
  }
  return new FreemiusSource(lists);
}

/** One entity's list: its JSON (the API's wrapper object or an array), else its CSV. */
async function readList(dir: string, name: string): Promise<Row[]> {
  const json = join(dir, `${name}.json`);
  if (existsSync(json)) {
    const parsed: unknown = JSON.parse(readFileSync(json, 'utf8'));
    const list = Array.isArray(parsed) ? parsed : (parsed as Row | null)?.[name];
    if (!Array.isArray(list)) throw new Error(`${json}: neither a list nor {"${name}": [...]}`);
    return list.filter((r): r is Row => typeof r === 'object' && r !== null);
  }
  const csv = join(dir, `${name}.csv`);
  const rows: Row[] = [];
  if (!existsSync(csv)) return rows;
  for await (const { values } of csvRecords(createReadStream(csv, { encoding: 'utf8' }))) rows.push(values);
  return rows;
}

class FreemiusSource implements ImportSource {
  readonly name = 'freemius';
  /** The subscription that renews each license (its latest, as Freemius's API answers it). */
  private readonly subscriptionOf = new Map<string, string>();
  /** Payments refunded, by the id of the payment a refund is bound to. */
  private readonly refunded = new Set<string>();

  constructor(private readonly lists: Map<string, Row[]>) {
    for (const s of this.list('subscriptions')) {
      if (id(s.license_id)) this.subscriptionOf.set(id(s.license_id), id(s.id));
    }
    for (const p of this.list('payments')) {
      if (text(p.type) === 'refund' && id(p.bound_payment_id)) this.refunded.add(id(p.bound_payment_id));
    }
  }

  private list(name: string): Row[] {
    return this.lists.get(name) ?? [];
  }

  read<K extends ImportKind>(kind: K): AsyncIterable<ImportRecord<K> | ImportProblem> {
    return readKind(
      {
        customers: () => this.customers(),
        products: () => this.products(),
        orders: () => this.orders(),
        subscriptions: () => this.subscriptions(),
        licenses: () => this.licenses(),
        activations: () => this.activations(),
      },
      kind,
    );
  }

  private *customers(): Generator<ImportCustomer | ImportProblem> {
    for (const u of this.list('users')) {
      const sourceId = id(u.id);
      const email = text(u.email);
      if (!sourceId) yield problem('customers', '?', 'missing_id');
      else if (!plausibleEmail(email)) yield problem('customers', sourceId, 'invalid_email', email);
      else {
        yield {
          sourceId,
          email,
          ...(text(u.first) ? { firstName: text(u.first).slice(0, 100) } : {}),
          ...(text(u.last) ? { lastName: text(u.last).slice(0, 100) } : {}),
          ...optional('createdAt', mysqlUtc(u.created)),
        };
      }
    }
  }

  /** A product per plugin or theme; a variation per pricing of its plans (sites and price). */
  private *products(): Generator<ImportProduct | ImportProblem> {
    const plans = new Map(this.list('plans').map((p) => [id(p.id), p]));
    for (const plugin of this.list('plugins')) {
      const sourceId = id(plugin.id);
      const name = text(plugin.title);
      const slug = text(plugin.slug);
      if (!sourceId) {
        yield problem('products', '?', 'missing_id');
        continue;
      }
      if (!name) {
        yield problem('products', sourceId, 'missing_name');
        continue;
      }
      const variations: ImportVariation[] = [];
      let bad: string | null = null;
      for (const pricing of this.list('pricing')) {
        const plan = plans.get(id(pricing.plan_id));
        if (!plan || id(plan.plugin_id) !== sourceId) continue;
        const variation = variationOf(pricing, plan);
        if (typeof variation === 'string') bad = variation;
        else variations.push(variation);
      }
      if (bad !== null) {
        yield problem('products', sourceId, 'invalid_pricing', bad);
        continue;
      }
      const type = text(plugin.type);
      yield {
        sourceId,
        name,
        ...(SLUG.test(slug) ? { slug } : {}),
        price: variations[0]?.price ?? 0,
        activationLimit: null,
        ...(type === 'plugin' || type === 'theme' ? { softwareType: type } : {}),
        variations,
      };
    }
  }

  /** A payment is an order of its plan; a refund bound to it marks it refunded. */
  private *orders(): Generator<ImportOrder | ImportProblem> {
    const licenses = new Map(this.list('licenses').map((l) => [id(l.id), l]));
    for (const p of this.list('payments')) {
      if (text(p.type) === 'refund') continue;
      const sourceId = id(p.id);
      const currency = text(p.currency).toUpperCase() || 'USD';
      const total = minorUnits(p.gross, currency);
      const created = mysqlUtc(p.created);
      const license = licenses.get(id(p.license_id));
      const product = id(p.plugin_id) || (license ? id(license.plugin_id) : '');
      if (!sourceId) yield problem('orders', '?', 'missing_id');
      else if (!id(p.user_id)) yield problem('orders', sourceId, 'missing_customer');
      else if (!product) yield problem('orders', sourceId, 'unknown_product');
      else if (total === null || total < 0)
        yield problem('orders', sourceId, 'invalid_amount', text(p.gross));
      else if (!created) yield problem('orders', sourceId, 'invalid_date', text(p.created));
      else {
        const tax = minorUnits(p.vat ?? 0, currency) ?? 0;
        const pricing = license ? id(license.pricing_id) : '';
        yield {
          sourceId,
          customerSourceId: id(p.user_id),
          status: this.refunded.has(sourceId) ? 'refunded' : 'completed',
          currency,
          total,
          tax,
          ...optional('gateway', text(p.gateway) || undefined),
          ...optional('transactionId', text(p.external_id) || undefined),
          createdAt: created,
          paidAt: created,
          items: [
            {
              productSourceId: product,
              ...optional('variationSourceId', pricing || undefined),
              name: text(p.plan_title) || 'Freemius payment',
              quantity: 1,
              total,
              tax,
            },
          ],
        };
      }
    }
  }

  private *subscriptions(): Generator<ImportSubscription | ImportProblem> {
    const licenses = new Map(this.list('licenses').map((l) => [id(l.id), l]));
    for (const s of this.list('subscriptions')) {
      const sourceId = id(s.id);
      const currency = text(s.currency).toUpperCase() || 'USD';
      const amount = minorUnits(s.amount_per_cycle, currency);
      const cycle = Number(text(s.billing_cycle));
      const license = licenses.get(id(s.license_id));
      const product = id(s.plugin_id) || (license ? id(license.plugin_id) : '');
      if (!sourceId) yield problem('subscriptions', '?', 'missing_id');
      else if (!id(s.user_id)) yield problem('subscriptions', sourceId, 'missing_customer');
      else if (!product) yield problem('subscriptions', sourceId, 'unknown_product');
      else if (cycle !== 1 && cycle !== 12)
        yield problem('subscriptions', sourceId, 'invalid_period', text(s.billing_cycle));
      else if (amount === null || amount < 0) {
        yield problem('subscriptions', sourceId, 'invalid_amount', text(s.amount_per_cycle));
      } else {
        const cancelled = Boolean(mysqlUtc(s.canceled_at));
        yield {
          sourceId,
          customerSourceId: id(s.user_id),
          productSourceId: product,
          ...optional('variationSourceId', license ? id(license.pricing_id) || undefined : undefined),
          status: cancelled ? 'cancelled' : 'active',
          billingPeriod: cycle === 12 ? 'year' : 'month',
          billingInterval: 1,
          nextPaymentAt: cancelled ? null : (mysqlUtc(s.next_payment) ?? null),
          currency,
          recurringTotal: amount,
          ...optional('gateway', text(s.gateway) || undefined),
          ...optional('gatewayProfileId', text(s.external_id) || undefined),
          ...optional('createdAt', mysqlUtc(s.created)),
        };
      }
    }
  }

  private *licenses(): Generator<ImportLicense | ImportProblem> {
    for (const l of this.list('licenses')) {
      const sourceId = id(l.id);
      const key = text(l.secret_key);
      const expiration = text(l.expiration);
      const expiresAt = expiration === '' ? null : mysqlUtc(expiration);
      const quota = text(l.quota);
      if (!sourceId) yield problem('licenses', '?', 'missing_id');
      else if (!KEY.test(key)) yield problem('licenses', sourceId, 'invalid_key');
      else if (!id(l.plugin_id)) yield problem('licenses', sourceId, 'missing_product');
      else if (!id(l.user_id)) yield problem('licenses', sourceId, 'missing_customer');
      else if (expiresAt === undefined) yield problem('licenses', sourceId, 'invalid_expiry', expiration);
      else if (quota !== '' && !/^\d{1,5}$/.test(quota)) {
        yield problem('licenses', sourceId, 'invalid_activation_limit', quota);
      } else {
        const subscription = this.subscriptionOf.get(sourceId);
        yield {
          sourceId,
          key,
          productSourceId: id(l.plugin_id),
          ...optional('variationSourceId', id(l.pricing_id) || undefined),
          customerSourceId: id(l.user_id),
          ...optional('subscriptionSourceId', subscription),
          ...optional('parentSourceId', id(l.parent_license_id) || undefined),
          // Freemius cancels a license it will not serve again; an expired one is read from its date.
          status: truthy(l.is_cancelled) ? 'disabled' : 'active',
          expiresAt,
          // Freemius's quota: the sites one license may activate; none is unlimited.
          activationLimit: quota === '' ? 0 : Number(quota),
          ...optional('createdAt', mysqlUtc(l.created)),
        };
      }
    }
  }

  /** An install with a license and still active is a site on its seat. */
  private *activations(): Generator<ImportActivation | ImportProblem> {
    for (const i of this.list('installs')) {
      const sourceId = id(i.id);
      if (!id(i.license_id) || truthy(i.is_uninstalled) || text(i.is_active) === '0') continue;
      const url = text(i.url);
      if (!sourceId) yield problem('activations', '?', 'missing_id');
      else if (!url || url.length > 2048) yield problem('activations', sourceId, 'invalid_url', url);
      else {
        yield {
          sourceId,
          licenseSourceId: id(i.license_id),
          url,
          // Freemius does not count a localhost install against the quota.
          staging: LOCAL.test(url),
          ...optional('activatedAt', mysqlUtc(i.created)),
        };
      }
    }
  }

  async totals(): Promise<ImportTotals> {
    const revenue: Record<string, number> = {};
    let orders = 0;
    for (const p of this.list('payments')) {
      if (text(p.type) === 'refund') continue;
      orders++;
      const currency = text(p.currency).toUpperCase() || 'USD';
      const gross = minorUnits(p.gross, currency);
      if (gross !== null && !this.refunded.has(id(p.id)))
        revenue[currency] = (revenue[currency] ?? 0) + gross;
    }
    return {
      customers: this.list('users').length,
      licenses: this.list('licenses').length,
      activations: this.list('installs').filter(
        (i) => id(i.license_id) && !truthy(i.is_uninstalled) && text(i.is_active) !== '0',
      ).length,
      orders,
      subscriptions: this.list('subscriptions').length,
      revenue,
    };
  }

  async close(): Promise<void> {}
}

/** A pricing of a plan as a variation: its sites and the price of its period (yearly first). */
function variationOf(pricing: Row, plan: Row): ImportVariation | string {
  const sourceId = id(pricing.id);
  const currency = text(pricing.currency).toUpperCase() || 'USD';
  const sites = text(pricing.licenses);
  const [period, amount] = text(pricing.annual_price)
    ? (['year', pricing.annual_price] as const)
    : text(pricing.monthly_price)
      ? (['month', pricing.monthly_price] as const)
      : ([null, pricing.lifetime_price] as const);
  const price = minorUnits(amount, currency);
  if (!sourceId || price === null || price < 0 || (sites !== '' && !/^\d{1,5}$/.test(sites)))
    return sourceId || '?';
  const limit = sites === '' ? 0 : Number(sites);
  return {
    sourceId,
    name: `${text(plan.title) || text(plan.name) || 'Plan'}, ${limit === 0 ? 'unlimited sites' : `${limit} site${limit === 1 ? '' : 's'}`}`,
    price,
    activationLimit: limit,
    ...(period ? { billingPeriod: period, billingInterval: 1 } : {}),
  };
}

/** Ids and texts as Freemius gives them, numbers in JSON and text in CSV alike. */
const text = (value: unknown): string =>
  typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
const id = (value: unknown): string => (/^\d{1,20}$/.test(text(value)) ? text(value) : '');
const truthy = (value: unknown): boolean => value === true || ['1', 'true'].includes(text(value));
const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/;
/** Freemius keys (`sk_…`) hold punctuation: any printable ASCII, as validate's key field takes. */
const KEY = /^[\x21-\x7e]{8,128}$/;
const LOCAL = /^(?:https?:\/\/)?(?:localhost|127\.0\.0\.1|[^/:]+\.(?:local|localhost|test))(?:[:/]|$)/i;
