import { ApiError } from '../../http/errors.js';
import { isSubscriptionType, isVariableType, type ProductRow } from './catalogue.model.js';
import type { ProductUpdate, VariationInsert } from './catalogue.repository.js';
import type { ProductPatchBody, VariationInput } from './catalogue.schemas.js';
import { toMinor } from './money.js';
import { normalisePolicy } from './policy.js';

/** Turns validated product bodies into columns, and checks the rules that span several fields. */

/** Variations belong to variable types only; subscription data to subscription types only. */
export function checkShape(type: string, variationCount: number, subscription: object | null): void {
  if (isVariableType(type) && variationCount === 0) throw new ApiError('variations_required');
  if (!isVariableType(type) && variationCount > 0) throw new ApiError('variations_not_allowed');
  if (isSubscriptionType(type) && !subscription) throw new ApiError('subscription_required');
  if (!isSubscriptionType(type) && subscription) throw new ApiError('subscription_not_allowed');
}

export function checkVariationIds(incoming: { id?: number }[], existing: number[]): void {
  const seen = new Set<number>();
  for (const { id } of incoming) {
    if (id === undefined) continue;
    if (!existing.includes(id)) throw new ApiError('variation_not_found', { data: { variation_id: id } });
    if (seen.has(id))
      throw new ApiError('invalid_parameters', { data: { params: { variations: 'duplicate id' } } });
    seen.add(id);
  }
}

export const storedSubscription = (row: ProductRow) =>
  row.subscription_period ? { period: row.subscription_period, interval: row.subscription_interval } : null;

function money(value: string, decimals: number, field: string): number {
  const minor = toMinor(value, decimals);
  if (minor === null) throw new ApiError('invalid_amount', { data: { params: { [field]: value } } });
  return minor;
}

const policyText = (p: VariationInput['entitlement_policy'], field: string) =>
  p ? JSON.stringify(normalisePolicy(p, field)) : null;

/** Columns for the fields present in the input (absent fields stay untouched on update). */
export function productColumns(input: ProductPatchBody, decimals: number): ProductUpdate {
  const c: ProductUpdate = {};
  if (input.name !== undefined) c.name = input.name;
  if (input.status !== undefined) c.status = input.status;
  if (input.type !== undefined) c.type = input.type;
  if (input.price !== undefined) c.price_minor = money(input.price, decimals, 'price');
  if (input.virtual !== undefined) c.virtual = input.virtual ? 1 : 0;
  if (input.stock_quantity !== undefined) c.stock_quantity = input.stock_quantity;
  if (input.licensing_enabled !== undefined) c.licensing_enabled = input.licensing_enabled;
  if (input.activation_limit !== undefined) c.activation_limit = input.activation_limit;
  if (input.activation_mode !== undefined) c.activation_mode = input.activation_mode;
  if (input.subscription !== undefined) {
    c.subscription_period = input.subscription?.period ?? null;
    c.subscription_interval = input.subscription?.interval ?? null;
  }
  if (input.entitlement_policy !== undefined) {
    c.entitlement_policy = policyText(input.entitlement_policy, 'entitlement_policy');
  }
  if (input.short_description !== undefined) c.short_description = input.short_description;
  if (input.description !== undefined) c.description = input.description;
  return c;
}

export function variationColumns(
  v: VariationInput,
  decimals: number,
  field: string,
): Omit<VariationInsert, 'product_id' | 'position' | 'created_at' | 'updated_at'> {
  return {
    name: v.name,
    price_minor: money(v.price, decimals, `${field}.price`),
    attributes: JSON.stringify(v.attributes ?? {}),
    // "" and null both inherit the parent's limit (docs/catalogue.md, 'Products', variations).
    activation_limit: v.activation_limit === '' ? null : (v.activation_limit ?? null),
    stock_quantity: v.stock_quantity ?? null,
    entitlement_policy: policyText(v.entitlement_policy, `${field}.entitlement_policy`),
  };
}
