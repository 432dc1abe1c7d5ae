import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type {
  ImportActivation,
  ImportCustomer,
  ImportKind,
  ImportLicense,
  ImportLicenseStatus,
  ImportProblem,
  ImportProduct,
  ImportRecord,
  ImportSource,
  ImportTotals,
  ImportVariation,
} from '../records.js';
import { problem, readKind } from '../records.js';
import { csvRecords } from './parse.js';

/**
 * The generic CSV source (docs/migrating.md, 'The generic CSV format'): a folder with
 * `customers.csv`, `products.csv`, `variations.csv` (optional), `licenses.csv` and `activations.csv`
 * (optional), each with a header row. Amounts are decimal text in the store's base currency; times
 * RFC 3339. A row that cannot be read is a problem with its file and line, never a record.
 */
export class CsvSource implements ImportSource {
  readonly name = 'csv';

  constructor(private readonly dir: string) {
    for (const file of ['customers.csv', 'products.csv', 'licenses.csv']) {
      if (!existsSync(join(dir, file))) throw new Error(`${join(dir, file)} is missing`);
    }
  }

  private async *rows(file: string) {
    const path = join(this.dir, file);
    if (!existsSync(path)) return;
    yield* csvRecords(createReadStream(path, { encoding: 'utf8' }));
  }

  read<K extends ImportKind>(kind: K): AsyncIterable<ImportRecord<K> | ImportProblem> {
    return readKind(
      {
        customers: () => this.customers(),
        products: () => this.products(),
        licenses: () => this.licenses(),
        activations: () => this.activations(),
      },
      kind,
    );
  }

  private async *customers(): AsyncGenerator<ImportCustomer | ImportProblem> {
    for await (const { line, values: v } of this.rows('customers.csv')) {
      const sourceId = v.id?.trim() ?? '';
      const email = v.email?.trim() ?? '';
      if (!sourceId) yield problem('customers', `line ${line}`, 'missing_id');
      else if (!EMAIL.test(email) || email.length > 254)
        yield problem('customers', sourceId, 'invalid_email', email);
      else {
        yield {
          sourceId,
          email,
          ...(v.first_name ? { firstName: v.first_name.trim().slice(0, 100) } : {}),
          ...(v.last_name ? { lastName: v.last_name.trim().slice(0, 100) } : {}),
          ...(v.password_hash ? { passwordHash: v.password_hash.trim() } : {}),
          ...(v.stripe_customer_id ? { stripeCustomerId: v.stripe_customer_id.trim() } : {}),
        };
      }
    }
  }

  private async *products(): AsyncGenerator<ImportProduct | ImportProblem> {
    const variations = new Map<string, ImportVariation[]>();
    const bad = new Set<string>();
    for await (const { line, values: v } of this.rows('variations.csv')) {
      const product = v.product_id?.trim() ?? '';
      const price = minor(v.price);
      const limit = optionalLimit(v.activation_limit);
      if (!v.id?.trim() || !product || !v.name?.trim() || price === null || limit === undefined) {
        bad.add(product);
        continue;
      }
      const list = variations.get(product) ?? [];
      list.push({ sourceId: v.id.trim(), name: v.name.trim(), price, activationLimit: limit });
      variations.set(product, list);
      void line;
    }
    for await (const { line, values: v } of this.rows('products.csv')) {
      const sourceId = v.id?.trim() ?? '';
      const price = minor(v.price || '0');
      const limit = optionalLimit(v.activation_limit);
      const slug = v.slug?.trim() ?? '';
      if (!sourceId) yield problem('products', `line ${line}`, 'missing_id');
      else if (!v.name?.trim()) yield problem('products', sourceId, 'missing_name');
      else if (!SLUG.test(slug)) yield problem('products', sourceId, 'invalid_slug', slug);
      else if (price === null) yield problem('products', sourceId, 'invalid_price', v.price);
      else if (limit === undefined)
        yield problem('products', sourceId, 'invalid_activation_limit', v.activation_limit);
      else if (bad.has(sourceId)) yield problem('products', sourceId, 'invalid_variation');
      else {
        yield {
          sourceId,
          name: v.name.trim(),
          slug,
          price,
          activationLimit: limit,
          variations: variations.get(sourceId) ?? [],
        };
      }
    }
  }

  private async *licenses(): AsyncGenerator<ImportLicense | ImportProblem> {
    for await (const { line, values: v } of this.rows('licenses.csv')) {
      const sourceId = v.id?.trim() ?? '';
      const key = v.key?.trim() ?? '';
      const status = (v.status?.trim() || 'active') as ImportLicenseStatus;
      const expires = v.expires_at?.trim() || null;
      const limit = optionalLimit(v.activation_limit);
      if (!sourceId) yield problem('licenses', `line ${line}`, 'missing_id');
      else if (!KEY.test(key)) yield problem('licenses', sourceId, 'invalid_key');
      else if (!v.product_id?.trim()) yield problem('licenses', sourceId, 'missing_product');
      else if (!v.customer_id?.trim()) yield problem('licenses', sourceId, 'missing_customer');
      else if (!STATUSES.has(status)) yield problem('licenses', sourceId, 'invalid_status', status);
      else if (expires !== null && Number.isNaN(Date.parse(expires))) {
        yield problem('licenses', sourceId, 'invalid_expiry', expires);
      } else if (limit === undefined) {
        yield problem('licenses', sourceId, 'invalid_activation_limit', v.activation_limit);
      } else {
        yield {
          sourceId,
          key,
          productSourceId: v.product_id.trim(),
          ...(v.variation_id?.trim() ? { variationSourceId: v.variation_id.trim() } : {}),
          customerSourceId: v.customer_id.trim(),
          status,
          expiresAt: expires === null ? null : new Date(expires).toISOString(),
          activationLimit: limit,
        };
      }
    }
  }

  private async *activations(): AsyncGenerator<ImportActivation | ImportProblem> {
    for await (const { line, values: v } of this.rows('activations.csv')) {
      const sourceId = v.id?.trim() ?? '';
      if (!sourceId) yield problem('activations', `line ${line}`, 'missing_id');
      else if (!v.license_id?.trim()) yield problem('activations', sourceId, 'missing_license');
      else if (!v.url?.trim() || v.url.length > 2048)
        yield problem('activations', sourceId, 'invalid_url', v.url);
      else {
        yield {
          sourceId,
          licenseSourceId: v.license_id.trim(),
          url: v.url.trim(),
          staging: ['1', 'true', 'yes'].includes((v.staging ?? '').trim().toLowerCase()),
        };
      }
    }
  }

  /** What the files hold: their data rows, counted the way the import counts them. */
  async totals(): Promise<ImportTotals> {
    const count = async (file: string) => {
      let n = 0;
      for await (const _ of this.rows(file)) n++;
      return n;
    };
    return {
      customers: await count('customers.csv'),
      licenses: await count('licenses.csv'),
      activations: await count('activations.csv'),
      orders: 0,
      subscriptions: 0,
      revenue: {},
    };
  }

  async close(): Promise<void> {}
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/;
/** A license key as the old store printed it: letters, digits and the usual separators. */
const KEY = /^[A-Za-z0-9._-]{8,128}$/;
const STATUSES = new Set<ImportLicenseStatus>(['active', 'inactive', 'expired', 'disabled', 'revoked']);

/** "49.00" → 4900; null when it is no amount (two decimals at most). */
function minor(text: string | undefined): number | null {
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec((text ?? '').trim());
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** '' → null (the product's or store's); a whole number 0 (unlimited) to 10,000; undefined when neither. */
function optionalLimit(text: string | undefined): number | null | undefined {
  const t = (text ?? '').trim();
  if (t === '') return null;
  if (!/^\d{1,5}$/.test(t) || Number(t) > 10_000) return undefined;
  return Number(t);
}
