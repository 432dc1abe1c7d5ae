import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService, ChangeRecorder } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { CatalogueRepository } from './catalogue.repository.js';
import type { PageQuery } from './catalogue.schemas.js';
import type { CouponRow, CouponsRepository } from './coupons.repository.js';
import type { CouponCreateBody, CouponPatchBody } from './coupons.schemas.js';
import { canonicalDecimal, currencyDecimals, decimalWithin, isKnownCurrency } from './money.js';

export type DiscountType = 'percent' | 'fixed_cart' | 'fixed_product';

export interface Coupon {
  id: number;
  /** Always lower case; look codes up with `getByCode`, which lower-cases too. */
  code: string;
  discount_type: DiscountType;
  /** Percent (0 to 100, up to 4 places) or an amount in the coupon's currency, as a decimal string. */
  amount: string;
  expires_at: string | null;
  usage_limit: number | null;
  usage_limit_per_user: number | null;
  usage_count: number;
  minimum_amount: string | null;
  maximum_amount: string | null;
  individual_use: boolean;
  product_ids: number[];
  excluded_product_ids: number[];
  /** null = the store's base currency. */
  currency: string | null;
  free_shipping: boolean;
  created_at: string;
}

const PERCENT_DECIMALS = 4;

/** The fields an administrator sets (the audit trail's before and after). */
function editableOf(coupon: Coupon): Record<string, unknown> {
  const { id: _, usage_count: __, created_at: ___, ...editable } = coupon;
  return editable;
}

export class CouponsService {
  /** Records an administrator's change in its transaction (docs/admin.md, 'Audit trail'). */
  private readonly recordIn: ChangeRecorder;

  constructor(
    private readonly repo: CouponsRepository,
    private readonly products: CatalogueRepository,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly database: Pick<Database, 'db'>,
    audit: AuditService,
  ) {
    this.recordIn = audit.recorderOf('coupon');
  }

  async get(id: number): Promise<Coupon> {
    const row = await this.repo.find(id);
    if (!row) throw new ApiError('coupon_not_found');
    return toCoupon(row);
  }

  /** For the cart: the coupon a shopper typed, whatever its case; null when there is none. */
  async getByCode(code: string): Promise<Coupon | null> {
    const row = await this.repo.findByCode(code.trim().toLowerCase());
    return row ? toCoupon(row) : null;
  }

  async list(q: PageQuery): Promise<{ items: Coupon[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.repo.list(q.per_page, (q.page - 1) * q.per_page),
      this.repo.count(),
    ]);
    return { items: rows.map(toCoupon), total };
  }

  async create(input: CouponCreateBody, actor?: Actor): Promise<Coupon> {
    const values = await this.normalise(input);
    return withTransaction(this.database, async (tx) => {
      const coupon = await this.insertIn(values, tx);
      await this.recordIn(actor, coupon.id, 'create', diff({}, editableOf(coupon)), tx);
      return coupon;
    });
  }

  private async insertIn(values: Awaited<ReturnType<CouponsService['normalise']>>, tx: Tx): Promise<Coupon> {
    const row = await this.repo.insert(
      {
        code: values.code,
        discount_type: values.discount_type,
        amount: values.amount,
        expires_at: values.expires_at,
        usage_limit: values.usage_limit,
        usage_limit_per_user: values.usage_limit_per_user,
        minimum_amount: values.minimum_amount,
        maximum_amount: values.maximum_amount,
        individual_use: values.individual_use ? 1 : 0,
        product_ids: JSON.stringify(values.product_ids),
        excluded_product_ids: JSON.stringify(values.excluded_product_ids),
        currency: values.currency,
        free_shipping: values.free_shipping ? 1 : 0,
        created_at: iso(this.clock.now()),
      },
      tx,
    );
    if (!row) throw new ApiError('coupon_exists');
    return toCoupon(row);
  }

  /** The patch is merged onto the stored coupon and the result checked as a whole. */
  async update(id: number, patch: CouponPatchBody, actor?: Actor): Promise<Coupon> {
    const current = await this.get(id);
    const { id: _, usage_count: __, created_at: ___, ...editable } = current;
    const values = await this.normalise({ ...editable, ...patch });
    await withTransaction(this.database, async (tx) => {
      const ok = await this.repo.update(
        id,
        {
          ...values,
          individual_use: values.individual_use ? 1 : 0,
          product_ids: JSON.stringify(values.product_ids),
          excluded_product_ids: JSON.stringify(values.excluded_product_ids),
          free_shipping: values.free_shipping ? 1 : 0,
        },
        tx,
      );
      if (!ok) throw new ApiError('coupon_exists');
      const after = await this.repo.find(id, tx);
      if (after) await this.recordIn(actor, id, 'update', diff(editable, editableOf(toCoupon(after))), tx);
    });
    return this.get(id);
  }

  async delete(id: number, actor?: Actor): Promise<void> {
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.find(id, tx);
      if (!row || !(await this.repo.delete(id, tx))) throw new ApiError('coupon_not_found');
      await this.recordIn(actor, id, 'delete', diff(editableOf(toCoupon(row)), {}, ['code']), tx);
    });
  }

  private async normalise(input: CouponCreateBody) {
    const settings = await this.settings.get();
    const currency = input.currency ?? null;
    if (currency !== null && !isKnownCurrency(currency)) {
      throw new ApiError('invalid_currency', { data: { params: { currency } } });
    }
    const decimals = currencyDecimals(currency ?? settings.base_currency, settings);
    const amount =
      input.discount_type === 'percent' ? percent(input.amount) : amountIn(input.amount, decimals, 'amount');
    const minimum =
      input.minimum_amount == null ? null : amountIn(input.minimum_amount, decimals, 'minimum_amount');
    const maximum =
      input.maximum_amount == null ? null : amountIn(input.maximum_amount, decimals, 'maximum_amount');
    if (minimum !== null && maximum !== null && !decimalWithin(minimum, '0', maximum)) {
      throw new ApiError('invalid_amount', { data: { params: { minimum_amount: 'above maximum_amount' } } });
    }
    const productIds = input.product_ids ?? [];
    const excluded = input.excluded_product_ids ?? [];
    await this.requireProducts([...productIds, ...excluded]);
    return {
      code: input.code.toLowerCase(),
      discount_type: input.discount_type,
      amount,
      expires_at: input.expires_at == null ? null : iso(new Date(input.expires_at)),
      usage_limit: input.usage_limit ?? null,
      usage_limit_per_user: input.usage_limit_per_user ?? null,
      minimum_amount: minimum,
      maximum_amount: maximum,
      individual_use: input.individual_use ?? false,
      product_ids: productIds,
      excluded_product_ids: excluded,
      currency,
      free_shipping: input.free_shipping ?? false,
    };
  }

  private async requireProducts(ids: number[]): Promise<void> {
    const unique = [...new Set(ids)];
    const found = new Set(await this.products.existingProductIds(unique));
    const missing = unique.filter((id) => !found.has(id));
    if (missing.length > 0) throw new ApiError('invalid_product_ids', { data: { product_ids: missing } });
  }
}

function percent(value: string): string {
  const canonical = canonicalDecimal(value, PERCENT_DECIMALS);
  if (canonical === null || !decimalWithin(canonical, '0', '100')) {
    throw new ApiError('invalid_amount', { data: { params: { amount: 'percent from 0 to 100, 4 places' } } });
  }
  return canonical;
}

function amountIn(value: string, decimals: number, field: string): string {
  const canonical = canonicalDecimal(value, decimals);
  if (canonical === null) throw new ApiError('invalid_amount', { data: { params: { [field]: value } } });
  return canonical;
}

function toCoupon(row: CouponRow): Coupon {
  return {
    id: row.id,
    code: row.code,
    discount_type: row.discount_type as DiscountType,
    amount: row.amount,
    expires_at: row.expires_at,
    usage_limit: row.usage_limit,
    usage_limit_per_user: row.usage_limit_per_user,
    usage_count: row.usage_count,
    minimum_amount: row.minimum_amount,
    maximum_amount: row.maximum_amount,
    individual_use: row.individual_use === 1,
    product_ids: JSON.parse(row.product_ids) as number[],
    excluded_product_ids: JSON.parse(row.excluded_product_ids) as number[],
    currency: row.currency,
    free_shipping: row.free_shipping === 1,
    created_at: row.created_at,
  };
}
