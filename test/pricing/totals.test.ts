import { describe, expect, it } from 'vitest';
import type { CouponRejection, PricingCoupon } from '../../src/modules/catalogue/coupons.pricing.js';
import { type CurrencyContext, resolveCurrency } from '../../src/modules/catalogue/currency.js';
import type { ShippingZone } from '../../src/modules/catalogue/shipping.service.js';
import type { Destination } from '../../src/modules/catalogue/tax.pricing.js';
import type { TaxRate } from '../../src/modules/catalogue/tax.service.js';
import {
  type CartTotals,
  calculateTotals,
  type PricingLine,
  type TotalsInput,
} from '../../src/modules/pricing/totals.js';
import { DEFAULT_SETTINGS, type Settings } from '../../src/modules/settings/settings.schemas.js';

/**
 * The pricing engine against worked examples. Every expected number below was computed by hand
 * (the arithmetic is in the comment of each case); amounts are minor units of the cart currency.
 */

const NOW = new Date('2026-06-01T12:00:00.000Z');
const SETTINGS: Settings = {
  ...DEFAULT_SETTINGS,
  base_currency: 'USD',
  currencies: [
    { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: '2026-06-01T00:00:00Z' },
    { code: 'JPY', symbol: '¥', decimals: 0, rate: '150', rate_updated_at: '2026-06-01T00:00:00Z' },
    { code: 'KWD', symbol: 'KD', decimals: 3, rate: '0.307', rate_updated_at: '2026-06-01T00:00:00Z' },
  ],
};
const cur = (code: string): CurrencyContext => resolveCurrency(SETTINGS, code)!;
const USD = cur('USD');
const EUR = cur('EUR');
const JPY = cur('JPY');
const KWD = cur('KWD');

/** A line: unit price in USD cents (the base currency), product id, quantity. */
const line = (
  price: number,
  product_id: number,
  quantity = 1,
  over: Partial<PricingLine> = {},
): PricingLine => ({
  key: `line-${product_id}-${price}`,
  product_id,
  variation_id: 0,
  quantity,
  name: `Product ${product_id}`,
  attributes: {},
  unit_price_base: price,
  needs_shipping: false,
  subscription: false,
  ...over,
});
const shipped = (price: number, product_id: number, quantity = 1) =>
  line(price, product_id, quantity, { needs_shipping: true });

let couponSeq = 0;
const coupon = (
  discount_type: PricingCoupon['discount_type'],
  amount: string,
  over: Partial<PricingCoupon> = {},
): PricingCoupon => {
  couponSeq += 1;
  return {
    id: couponSeq,
    code: `c${couponSeq}`,
    discount_type,
    amount,
    expires_at: null,
    usage_limit: null,
    usage_limit_per_user: null,
    usage_count: 0,
    minimum_amount: null,
    maximum_amount: null,
    individual_use: false,
    product_ids: [],
    excluded_product_ids: [],
    currency: null,
    free_shipping: false,
    created_at: '2026-01-01T00:00:00.000Z',
    customer_uses: null,
    ...over,
  };
};

const rate = (id: number, country: string, pct: string, over: Partial<TaxRate> = {}): TaxRate => ({
  id,
  country,
  state: '',
  postcode: '',
  rate: pct,
  name: `Rate ${id}`,
  shipping: true,
  compound: false,
  priority: 1,
  ...over,
});

const zone = (id: number, country: string, methods: ShippingZone['methods'], state = ''): ShippingZone => ({
  id,
  name: `Zone ${id}`,
  regions: [{ country, state }],
  methods,
});
const flat = (instance_id: number, cost: string | null) => ({
  instance_id,
  method_id: 'flat_rate' as const,
  title: 'Flat',
  cost,
  min_amount: null,
});
const free = (instance_id: number, min_amount: string | null) => ({
  instance_id,
  method_id: 'free_shipping' as const,
  title: 'Free',
  cost: null,
  min_amount,
});

const at = (country: string, state = '', postcode = ''): Destination => ({ country, state, postcode });
const GB = at('GB');
const VAT20 = rate(1, 'GB', '20.0000');

const input = (over: Partial<TotalsInput>): TotalsInput => ({
  currency: USD,
  prices_include_tax: false,
  coupons_enabled: true,
  lines: [],
  coupons: [],
  tax_rates: [],
  destination: null,
  shipping_zones: [],
  shipping_method: null,
  fees: [],
  now: NOW,
  ...over,
});

type Amounts = Pick<
  CartTotals,
  | 'subtotal'
  | 'subtotal_tax'
  | 'discount_total'
  | 'discount_tax'
  | 'shipping_total'
  | 'shipping_tax'
  | 'cart_contents_tax'
  | 'fee_total'
  | 'fee_tax'
  | 'total'
  | 'total_tax'
>;
const AMOUNT_KEYS: (keyof Amounts)[] = [
  'subtotal',
  'subtotal_tax',
  'discount_total',
  'discount_tax',
  'shipping_total',
  'shipping_tax',
  'cart_contents_tax',
  'fee_total',
  'fee_tax',
  'total',
  'total_tax',
];

interface Case {
  name: string;
  input: TotalsInput;
  /** Amounts not listed are 0. cart_contents_tax defaults to subtotal_tax − discount_tax. */
  expect: Partial<Amounts>;
  lines?: {
    subtotal?: number;
    subtotal_tax?: number;
    total?: number;
    total_tax?: number;
    unit_price?: number;
  }[];
  coupons?: { discount_total: number; discount_tax: number }[];
  rejected?: CouponRejection[];
  needs_payment?: boolean;
  needs_shipping?: boolean;
  shipping?: string | null;
}

const cases: Case[] = [
  // ---- A. plain carts, base currency, no tax
  {
    name: 'A1 one line: 49.00',
    input: input({ lines: [line(4900, 1)] }),
    expect: { subtotal: 4900, total: 4900 },
  },
  {
    // 49.00×2 = 98.00; 19.99×3 = 59.97; 157.97
    name: 'A2 two lines with quantities',
    input: input({ lines: [line(4900, 1, 2), line(1999, 2, 3)] }),
    expect: { subtotal: 15797, total: 15797 },
    lines: [
      { subtotal: 9800, total: 9800 },
      { subtotal: 5997, total: 5997 },
    ],
  },
  {
    name: 'A3 empty cart is all zero and needs no payment',
    input: input({}),
    expect: {},
    needs_payment: false,
  },
  {
    name: 'A4 a free product needs no payment',
    input: input({ lines: [line(0, 1)] }),
    expect: {},
    needs_payment: false,
  },
  {
    // 100% off the first payment: nothing to pay now, but the renewals need a payment method.
    name: 'A5 a subscription made free by a coupon still needs payment',
    input: input({
      lines: [line(1000, 1, 1, { subscription: true })],
      coupons: [coupon('percent', '100.0000')],
    }),
    expect: { subtotal: 1000, discount_total: 1000 },
    needs_payment: true,
  },

  // ---- B. coupons without tax
  {
    // 9800 × 10% = 980
    name: 'B1 percent 10 on 49.00×2',
    input: input({ lines: [line(4900, 1, 2)], coupons: [coupon('percent', '10.0000')] }),
    expect: { subtotal: 9800, discount_total: 980, total: 8820 },
    coupons: [{ discount_total: 980, discount_tax: 0 }],
  },
  {
    // 1999 × 12.5% = 249.875 → 250 (half-up)
    name: 'B2 percent rounds half-up per line',
    input: input({ lines: [line(1999, 1)], coupons: [coupon('percent', '12.5000')] }),
    expect: { subtotal: 1999, discount_total: 250, total: 1749 },
  },
  {
    // 1000 × 33.3333% = 333.333 → 333 on each of three lines = 999
    name: 'B3 percent on three lines rounds each line',
    input: input({
      lines: [line(1000, 1), line(1000, 2), line(1000, 3)],
      coupons: [coupon('percent', '33.3333')],
    }),
    expect: { subtotal: 3000, discount_total: 999, total: 2001 },
    lines: [{ total: 667 }, { total: 667 }, { total: 667 }],
  },
  {
    // 1000 split 3000:1000 → 750 / 250
    name: 'B4 fixed_cart splits in proportion to the lines',
    input: input({ lines: [line(3000, 1), line(1000, 2)], coupons: [coupon('fixed_cart', '10.00')] }),
    expect: { subtotal: 4000, discount_total: 1000, total: 3000 },
    lines: [{ total: 2250 }, { total: 750 }],
  },
  {
    // 1000 over three equal lines: 333 each + 1 left → the first line: 334, 333, 333
    name: 'B5 fixed_cart remainder goes to the first of equal lines',
    input: input({
      lines: [line(1000, 1), line(1000, 2), line(1000, 3)],
      coupons: [coupon('fixed_cart', '10.00')],
    }),
    expect: { subtotal: 3000, discount_total: 1000, total: 2000 },
    lines: [{ total: 666 }, { total: 667 }, { total: 667 }],
  },
  {
    name: 'B6 fixed_cart larger than the cart stops at zero',
    input: input({ lines: [line(2000, 1)], coupons: [coupon('fixed_cart', '50.00')] }),
    expect: { subtotal: 2000, discount_total: 2000, total: 0 },
    needs_payment: false,
  },
  {
    // 5.00 × 3 units = 15.00 off 60.00
    name: 'B7 fixed_product takes the amount off every unit',
    input: input({ lines: [line(2000, 1, 3)], coupons: [coupon('fixed_product', '5.00')] }),
    expect: { subtotal: 6000, discount_total: 1500, total: 4500 },
  },
  {
    // 5.00 × 2 = 10.00 wanted, the line is only 6.00
    name: 'B8 fixed_product never takes a line below zero',
    input: input({ lines: [line(300, 1, 2)], coupons: [coupon('fixed_product', '5.00')] }),
    expect: { subtotal: 600, discount_total: 600, total: 0 },
  },
  {
    // 50% of product 1's 4000 only
    name: 'B9 product_ids limit the discount to those products',
    input: input({
      lines: [line(4000, 1), line(2000, 2)],
      coupons: [coupon('percent', '50.0000', { product_ids: [1] })],
    }),
    expect: { subtotal: 6000, discount_total: 2000, total: 4000 },
    lines: [{ total: 2000 }, { total: 2000 }],
  },
  {
    // product 2 excluded: the whole 1000 goes on product 1
    name: 'B10 excluded products get no share of a fixed_cart coupon',
    input: input({
      lines: [line(3000, 1), line(1000, 2)],
      coupons: [coupon('fixed_cart', '10.00', { excluded_product_ids: [2] })],
    }),
    expect: { subtotal: 4000, discount_total: 1000, total: 3000 },
    lines: [{ total: 2000 }, { total: 1000 }],
  },
  {
    // fixed_product 200 → 4800 left; percent 10% of the undiscounted 5000 = 500 → 4300;
    // fixed_cart 500 → 3800. Listed in reverse to show the type order decides.
    name: 'B11 three coupon types apply fixed_product, percent, fixed_cart',
    input: input({
      lines: [line(5000, 1)],
      coupons: [coupon('fixed_cart', '5.00'), coupon('percent', '10.0000'), coupon('fixed_product', '2.00')],
    }),
    expect: { subtotal: 5000, discount_total: 1200, total: 3800 },
    coupons: [
      { discount_total: 500, discount_tax: 0 },
      { discount_total: 500, discount_tax: 0 },
      { discount_total: 200, discount_tax: 0 },
    ],
  },
  {
    // 60% = 600 → 400 left; the second 60% (600) is capped at 400
    name: 'B12 two percent coupons cannot exceed the line',
    input: input({
      lines: [line(1000, 1)],
      coupons: [coupon('percent', '60.0000'), coupon('percent', '60.0000')],
    }),
    expect: { subtotal: 1000, discount_total: 1000, total: 0 },
    coupons: [
      { discount_total: 600, discount_tax: 0 },
      { discount_total: 400, discount_tax: 0 },
    ],
  },
  {
    name: 'B13 an individual-use coupon after another is refused',
    input: input({
      lines: [line(10000, 1)],
      coupons: [coupon('percent', '10.0000'), coupon('fixed_cart', '5.00', { individual_use: true })],
    }),
    expect: { subtotal: 10000, discount_total: 1000, total: 9000 },
    rejected: ['individual_use'],
  },
  {
    name: 'B14 nothing joins an individual-use coupon',
    input: input({
      lines: [line(10000, 1)],
      coupons: [coupon('fixed_cart', '5.00', { individual_use: true }), coupon('percent', '10.0000')],
    }),
    expect: { subtotal: 10000, discount_total: 500, total: 9500 },
    rejected: ['individual_use'],
  },
  {
    name: 'B15 an expired coupon does not apply',
    input: input({
      lines: [line(1000, 1)],
      coupons: [coupon('percent', '10.0000', { expires_at: '2026-06-01T12:00:00.000Z' })],
    }),
    expect: { subtotal: 1000, total: 1000 },
    rejected: ['expired'],
  },
  {
    name: 'B16 a coupon expiring a second from now applies',
    input: input({
      lines: [line(1000, 1)],
      coupons: [coupon('percent', '10.0000', { expires_at: '2026-06-01T12:00:01.000Z' })],
    }),
    expect: { subtotal: 1000, discount_total: 100, total: 900 },
  },
  {
    name: 'B17 a used-up coupon does not apply',
    input: input({
      lines: [line(1000, 1)],
      coupons: [coupon('percent', '10.0000', { usage_limit: 5, usage_count: 5 })],
    }),
    expect: { subtotal: 1000, total: 1000 },
    rejected: ['usage_limit_reached'],
  },
  {
    name: "B18 a customer's own usage limit counts their uses; a guest is checked at checkout",
    input: input({
      lines: [line(1000, 1)],
      coupons: [
        coupon('percent', '10.0000', { usage_limit_per_user: 1, customer_uses: 1 }),
        coupon('fixed_cart', '1.00', { usage_limit_per_user: 1, customer_uses: null }),
      ],
    }),
    expect: { subtotal: 1000, discount_total: 100, total: 900 },
    rejected: ['usage_limit_per_user_reached'],
  },
  {
    name: 'B19 below the minimum spend',
    input: input({
      lines: [line(4999, 1)],
      coupons: [coupon('percent', '10.0000', { minimum_amount: '50.00' })],
    }),
    expect: { subtotal: 4999, total: 4999 },
    rejected: ['minimum_amount'],
  },
  {
    // exactly 50.00 meets a 50.00 minimum: 10% = 500
    name: 'B20 exactly the minimum spend',
    input: input({
      lines: [line(5000, 1)],
      coupons: [coupon('percent', '10.0000', { minimum_amount: '50.00' })],
    }),
    expect: { subtotal: 5000, discount_total: 500, total: 4500 },
  },
  {
    name: 'B21 above the maximum spend',
    input: input({
      lines: [line(10001, 1)],
      coupons: [coupon('percent', '10.0000', { maximum_amount: '100.00' })],
    }),
    expect: { subtotal: 10001, total: 10001 },
    rejected: ['maximum_amount'],
  },
  {
    name: 'B22 a coupon for products not in the cart',
    input: input({ lines: [line(1000, 1)], coupons: [coupon('percent', '10.0000', { product_ids: [99] })] }),
    expect: { subtotal: 1000, total: 1000 },
    rejected: ['not_applicable'],
  },
  {
    name: 'B23 coupons disabled',
    input: input({ coupons_enabled: false, lines: [line(1000, 1)], coupons: [coupon('percent', '10.0000')] }),
    expect: { subtotal: 1000, total: 1000 },
    rejected: ['coupons_disabled'],
  },
  {
    name: 'B24 a coupon restricted to another currency',
    input: input({ lines: [line(1000, 1)], coupons: [coupon('fixed_cart', '1.00', { currency: 'EUR' })] }),
    expect: { subtotal: 1000, total: 1000 },
    rejected: ['currency_mismatch'],
  },

  // ---- C. prices without tax, taxes added
  {
    // 4900 × 20% = 980
    name: 'C1 VAT 20% on 49.00',
    input: input({ lines: [line(4900, 1)], tax_rates: [VAT20], destination: GB }),
    expect: { subtotal: 4900, subtotal_tax: 980, total: 5880, total_tax: 980 },
  },
  {
    // 5997 × 20% = 1199.4 → 1199
    name: 'C2 VAT on 19.99×3 rounds the line',
    input: input({ lines: [line(1999, 1, 3)], tax_rates: [VAT20], destination: GB }),
    expect: { subtotal: 5997, subtotal_tax: 1199, total: 7196, total_tax: 1199 },
  },
  {
    // each 13 × 20% = 2.6 → 3; three lines 9 (rounding the sum 39 × 20% = 7.8 would give 8)
    name: 'C3 tax is rounded per line',
    input: input({ lines: [line(13, 1), line(13, 2), line(13, 3)], tax_rates: [VAT20], destination: GB }),
    expect: { subtotal: 39, subtotal_tax: 9, total: 48, total_tax: 9 },
  },
  {
    // state 7.25% (priority 1) + postcode range 1% (priority 2): 725 + 100
    name: 'C4 state and postcode rates of different priorities add up',
    input: input({
      lines: [line(10000, 1)],
      tax_rates: [
        rate(3, 'US', '7.2500', { state: 'CA' }),
        rate(4, 'US', '1.0000', { state: 'CA', postcode: '90001...90099', priority: 2 }),
        rate(8, 'US', '5.0000'),
      ],
      destination: at('US', 'CA', '90012'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 825, total: 10825, total_tax: 825 },
  },
  {
    // outside the postcode range: only the state rate, which beats the country rate of its priority
    name: 'C5 the most specific rate of a priority wins',
    input: input({
      lines: [line(10000, 1)],
      tax_rates: [
        rate(8, 'US', '5.0000'),
        rate(3, 'US', '7.2500', { state: 'ca' }),
        rate(4, 'US', '1.0000', { state: 'CA', postcode: '90001...90099', priority: 2 }),
      ],
      destination: at('US', 'CA', '94103'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 725, total: 10725, total_tax: 725 },
  },
  {
    name: 'C6 another state gets the country rate',
    input: input({
      lines: [line(10000, 1)],
      tax_rates: [rate(3, 'US', '7.2500', { state: 'CA' }), rate(8, 'US', '5.0000')],
      destination: at('US', 'NY', '10001'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 500, total: 10500, total_tax: 500 },
  },
  {
    // GST 5% of 10000 = 500; QST 9.975% of (10000 + 500) = 1047.375 → 1047
    name: 'C7 a compound rate applies on top of the other taxes',
    input: input({
      lines: [line(10000, 1)],
      tax_rates: [
        rate(5, 'CA', '5.0000'),
        rate(6, 'CA', '9.9750', { state: 'QC', compound: true, priority: 2 }),
      ],
      destination: at('CA', 'QC', 'H2X 1Y4'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 1547, total: 11547, total_tax: 1547 },
  },
  {
    name: 'C8 without a destination there is no tax',
    input: input({ lines: [line(4900, 1)], tax_rates: [VAT20], destination: null }),
    expect: { subtotal: 4900, total: 4900 },
  },
  {
    // tax before 2000, after 9000 × 20% = 1800: the coupon takes 1000 and its tax 200
    name: 'C9 percent coupon with tax added',
    input: input({
      lines: [line(10000, 1)],
      coupons: [coupon('percent', '10.0000')],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: {
      subtotal: 10000,
      subtotal_tax: 2000,
      discount_total: 1000,
      discount_tax: 200,
      total: 10800,
      total_tax: 1800,
    },
    coupons: [{ discount_total: 1000, discount_tax: 200 }],
  },
  {
    // 750/250 off 3000/1000; taxes 600→450 and 200→150
    name: 'C10 fixed_cart coupon with tax added',
    input: input({
      lines: [line(3000, 1), line(1000, 2)],
      coupons: [coupon('fixed_cart', '10.00')],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: {
      subtotal: 4000,
      subtotal_tax: 800,
      discount_total: 1000,
      discount_tax: 200,
      total: 3600,
      total_tax: 600,
    },
    lines: [
      { subtotal: 3000, subtotal_tax: 600, total: 2250, total_tax: 450 },
      { subtotal: 1000, subtotal_tax: 200, total: 750, total_tax: 150 },
    ],
  },
  {
    // items 1000 + 200 tax; flat 500 + 100 tax
    name: 'C11 shipping is taxed by rates that apply to shipping',
    input: input({
      lines: [shipped(1000, 1)],
      tax_rates: [VAT20],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00')])],
    }),
    expect: {
      subtotal: 1000,
      subtotal_tax: 200,
      shipping_total: 500,
      shipping_tax: 100,
      total: 1800,
      total_tax: 300,
    },
    needs_shipping: true,
    shipping: 'flat_rate:1',
  },
  {
    name: 'C12 a rate that excludes shipping leaves shipping untaxed',
    input: input({
      lines: [shipped(1000, 1)],
      tax_rates: [rate(7, 'FR', '20.0000', { shipping: false })],
      destination: at('FR'),
      shipping_zones: [zone(1, 'FR', [flat(1, '5.00')])],
    }),
    expect: { subtotal: 1000, subtotal_tax: 200, shipping_total: 500, total: 1700, total_tax: 200 },
  },
  {
    // items: GST 100, QST (2000 + 100) × 9.975% = 209.475 → 209; shipping 1000: GST 50,
    // QST 1050 × 9.975% = 104.7375 → 105
    name: 'C13 compound tax on items and shipping',
    input: input({
      lines: [shipped(2000, 1)],
      tax_rates: [
        rate(5, 'CA', '5.0000'),
        rate(6, 'CA', '9.9750', { state: 'QC', compound: true, priority: 2 }),
      ],
      destination: at('CA', 'QC'),
      shipping_zones: [zone(1, 'CA', [flat(1, '10.00')])],
    }),
    expect: {
      subtotal: 2000,
      subtotal_tax: 309,
      shipping_total: 1000,
      shipping_tax: 155,
      total: 3464,
      total_tax: 464,
    },
  },
  {
    // fee 250 taxed 20% = 50
    name: 'C14 a taxable fee',
    input: input({
      lines: [line(1000, 1)],
      tax_rates: [VAT20],
      destination: GB,
      fees: [{ id: 'f', name: 'Handling', amount: 250, taxable: true }],
    }),
    expect: { subtotal: 1000, subtotal_tax: 200, fee_total: 250, fee_tax: 50, total: 1500, total_tax: 250 },
  },
  {
    name: 'C15 a fee without tax',
    input: input({
      lines: [line(1000, 1)],
      tax_rates: [VAT20],
      destination: GB,
      fees: [{ id: 'f', name: 'Handling', amount: 100, taxable: false }],
    }),
    expect: { subtotal: 1000, subtotal_tax: 200, fee_total: 100, total: 1300, total_tax: 200 },
  },
  {
    // a postcode wildcard rate of the same priority beats the country rate: 5% of 10000
    name: 'C16 postcode wildcard rate',
    input: input({
      lines: [line(10000, 1)],
      tax_rates: [VAT20, rate(2, 'GB', '5.0000', { postcode: 'SW1*' })],
      destination: at('GB', '', 'sw1a 1aa'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 500, total: 10500, total_tax: 500 },
  },
  {
    name: 'C17 a postcode outside the wildcard gets the country rate',
    input: input({
      lines: [line(10000, 1)],
      tax_rates: [VAT20, rate(2, 'GB', '5.0000', { postcode: 'SW1*' })],
      destination: at('GB', '', 'M1 1AE'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 2000, total: 12000, total_tax: 2000 },
  },

  // ---- D. prices entered with tax
  {
    // 12000 × 0.2 / 1.2 = 2000 inside
    name: 'D1 inclusive 120.00 at 20% holds 20.00 tax',
    input: input({ prices_include_tax: true, lines: [line(12000, 1)], tax_rates: [VAT20], destination: GB }),
    expect: { subtotal: 10000, subtotal_tax: 2000, total: 12000, total_tax: 2000 },
    lines: [{ subtotal: 10000, subtotal_tax: 2000, total: 10000, total_tax: 2000, unit_price: 12000 }],
  },
  {
    // 4999 / 6 = 833.17 → 833; net 4166
    name: 'D2 inclusive 49.99 at 20%',
    input: input({ prices_include_tax: true, lines: [line(4999, 1)], tax_rates: [VAT20], destination: GB }),
    expect: { subtotal: 4166, subtotal_tax: 833, total: 4999, total_tax: 833 },
  },
  {
    // 10% of 12000 = 1200 off the gross; 10800 holds 1800 tax: discount 1000 + 200 tax
    name: 'D3 inclusive price with a percent coupon',
    input: input({
      prices_include_tax: true,
      lines: [line(12000, 1)],
      coupons: [coupon('percent', '10.0000')],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: {
      subtotal: 10000,
      subtotal_tax: 2000,
      discount_total: 1000,
      discount_tax: 200,
      total: 10800,
      total_tax: 1800,
    },
    coupons: [{ discount_total: 1000, discount_tax: 200 }],
  },
  {
    // 1000 off the gross: 11000 holds 11000/6 = 1833.33 → 1833; net 9167; discount 833 + 167
    name: 'D4 inclusive price with a fixed_cart coupon',
    input: input({
      prices_include_tax: true,
      lines: [line(12000, 1)],
      coupons: [coupon('fixed_cart', '10.00')],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: {
      subtotal: 10000,
      subtotal_tax: 2000,
      discount_total: 833,
      discount_tax: 167,
      total: 11000,
      total_tax: 1833,
    },
    coupons: [{ discount_total: 833, discount_tax: 167 }],
  },
  {
    name: 'D5 inclusive prices without a destination are charged as entered',
    input: input({ prices_include_tax: true, lines: [line(12000, 1)], tax_rates: [VAT20] }),
    expect: { subtotal: 12000, total: 12000 },
  },
  {
    // compound 10% comes off first: 12100 − 12100/1.1 = 1100; then 10% of 11000 inside: 1000
    name: 'D6 inclusive price with a compound rate',
    input: input({
      prices_include_tax: true,
      lines: [line(12100, 1)],
      tax_rates: [rate(10, 'AU', '10.0000'), rate(11, 'AU', '10.0000', { compound: true, priority: 2 })],
      destination: at('AU'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 2100, total: 12100, total_tax: 2100 },
  },
  {
    // 11500 × 0.10/1.15 = 1000 and 11500 × 0.05/1.15 = 500
    name: 'D7 inclusive price with two simple rates',
    input: input({
      prices_include_tax: true,
      lines: [line(11500, 1)],
      tax_rates: [rate(10, 'AU', '10.0000'), rate(12, 'AU', '5.0000', { priority: 2 })],
      destination: at('AU'),
    }),
    expect: { subtotal: 10000, subtotal_tax: 1500, total: 11500, total_tax: 1500 },
  },
  {
    // shipping is always entered without tax: 500 + 100
    name: 'D8 inclusive items, shipping taxed on top',
    input: input({
      prices_include_tax: true,
      lines: [shipped(12000, 1)],
      tax_rates: [VAT20],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00')])],
    }),
    expect: {
      subtotal: 10000,
      subtotal_tax: 2000,
      shipping_total: 500,
      shipping_tax: 100,
      total: 12600,
      total_tax: 2100,
    },
  },
  {
    // 3 × 12.00 = 3600 gross holds 600; 3 × 1.00 off → 3300 holds 550: discount 250 + 50
    name: 'D9 inclusive price with a fixed_product coupon',
    input: input({
      prices_include_tax: true,
      lines: [line(1200, 1, 3)],
      coupons: [coupon('fixed_product', '1.00')],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: {
      subtotal: 3000,
      subtotal_tax: 600,
      discount_total: 250,
      discount_tax: 50,
      total: 3300,
      total_tax: 550,
    },
  },

  // ---- E. other currencies (USD base; EUR 0.9 with 2 decimals, JPY 150 with 0, KWD 0.307 with 3)
  {
    // 4900 × 0.9 = 4410
    name: 'E1 EUR converts the unit price',
    input: input({ currency: EUR, lines: [line(4900, 1)] }),
    expect: { subtotal: 4410, total: 4410 },
    lines: [{ unit_price: 4410 }],
  },
  {
    // 1999 × 0.9 = 1799.1 → 1799 a unit, × 3 = 5397 (not 5997 × 0.9 = 5397.3)
    name: 'E2 EUR converts and rounds the unit, then multiplies',
    input: input({ currency: EUR, lines: [line(1999, 1, 3)] }),
    expect: { subtotal: 5397, total: 5397 },
  },
  {
    // 49 × 150 = 7350; 19.99 × 150 = 2998.5 → 2999, × 2 = 5998
    name: 'E3 JPY has no decimals',
    input: input({ currency: JPY, lines: [line(4900, 1), line(1999, 2, 2)] }),
    expect: { subtotal: 13348, total: 13348 },
  },
  {
    // 49 × 0.307 = 15.043; 19.99 × 0.307 = 6.13693 → 6.137
    name: 'E4 KWD has three decimals',
    input: input({ currency: KWD, lines: [line(4900, 1), line(1999, 2)] }),
    expect: { subtotal: 21180, total: 21180 },
    lines: [{ unit_price: 15043 }, { unit_price: 6137 }],
  },
  {
    // 7350 × 10% = 735
    name: 'E5 JPY percent coupon',
    input: input({ currency: JPY, lines: [line(4900, 1)], coupons: [coupon('percent', '10.0000')] }),
    expect: { subtotal: 7350, discount_total: 735, total: 6615 },
  },
  {
    // 2999 × 20% = 599.8 → 600
    name: 'E6 JPY with tax added',
    input: input({ currency: JPY, lines: [line(1999, 1)], tax_rates: [VAT20], destination: GB }),
    expect: { subtotal: 2999, subtotal_tax: 600, total: 3599, total_tax: 600 },
  },
  {
    // 15043 fils hold 15043/6 = 2507.17 → 2507
    name: 'E7 KWD with tax included',
    input: input({
      currency: KWD,
      prices_include_tax: true,
      lines: [line(4900, 1)],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: { subtotal: 12536, subtotal_tax: 2507, total: 15043, total_tax: 2507 },
  },
  {
    // 10.00 USD = 9.00 EUR off 44.10
    name: 'E8 a base-currency fixed coupon converts',
    input: input({ currency: EUR, lines: [line(4900, 1)], coupons: [coupon('fixed_cart', '10.00')] }),
    expect: { subtotal: 4410, discount_total: 900, total: 3510 },
  },
  {
    name: 'E9 a coupon restricted to EUR counts in EUR',
    input: input({
      currency: EUR,
      lines: [line(4900, 1)],
      coupons: [coupon('fixed_cart', '10.00', { currency: 'EUR' })],
    }),
    expect: { subtotal: 4410, discount_total: 1000, total: 3410 },
  },
  {
    // 1.00 USD = 150 yen a unit, × 2
    name: 'E10 JPY fixed_product coupon from the base currency',
    input: input({ currency: JPY, lines: [line(1999, 1, 2)], coupons: [coupon('fixed_product', '1.00')] }),
    expect: { subtotal: 5998, discount_total: 300, total: 5698 },
  },
  {
    // minimum 50.00 USD = 15.350 KWD; the cart is 15.043
    name: 'E11 a base-currency minimum converts',
    input: input({
      currency: KWD,
      lines: [line(4900, 1)],
      coupons: [coupon('percent', '10.0000', { minimum_amount: '50.00' })],
    }),
    expect: { subtotal: 15043, total: 15043 },
    rejected: ['minimum_amount'],
  },
  {
    // items 10.00 = 1500 yen + 300 tax; shipping 5.00 = 750 yen + 150 tax
    name: 'E12 JPY shipping converts and is taxed',
    input: input({
      currency: JPY,
      lines: [shipped(1000, 1)],
      tax_rates: [VAT20],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00')])],
    }),
    expect: {
      subtotal: 1500,
      subtotal_tax: 300,
      shipping_total: 750,
      shipping_tax: 150,
      total: 2700,
      total_tax: 450,
    },
  },
  {
    // three lines of 0.307; 0.500 KWD splits 166.67 each: 166 ×3 + 2 left → 167, 167, 166
    name: 'E13 KWD fixed_cart split with remainders',
    input: input({
      currency: KWD,
      lines: [line(100, 1), line(100, 2), line(100, 3)],
      coupons: [coupon('fixed_cart', '0.500', { currency: 'KWD' })],
    }),
    expect: { subtotal: 921, discount_total: 500, total: 421 },
    lines: [{ total: 140 }, { total: 140 }, { total: 141 }],
  },
  {
    // 307 × 5% = 15.35 → 15
    name: 'E14 KWD tax rounds to fils',
    input: input({
      currency: KWD,
      lines: [line(100, 1)],
      tax_rates: [rate(20, 'KW', '5.0000')],
      destination: at('KW'),
    }),
    expect: { subtotal: 307, subtotal_tax: 15, total: 322, total_tax: 15 },
  },
  {
    // 49.00 × 150 = 7350 yen; 10% coupon 735; VAT on 6615 = 1323
    name: 'E15 JPY coupon and tax together',
    input: input({
      currency: JPY,
      lines: [line(4900, 1)],
      coupons: [coupon('percent', '10.0000')],
      tax_rates: [VAT20],
      destination: GB,
    }),
    expect: {
      subtotal: 7350,
      subtotal_tax: 1470,
      discount_total: 735,
      discount_tax: 147,
      total: 7938,
      total_tax: 1323,
    },
  },

  // ---- F. shipping
  {
    name: 'F1 a virtual cart needs no shipping',
    input: input({
      lines: [line(1000, 1)],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00')])],
    }),
    expect: { subtotal: 1000, total: 1000 },
    needs_shipping: false,
    shipping: null,
  },
  {
    name: 'F2 free shipping above its minimum, when chosen',
    input: input({
      lines: [shipped(6000, 1)],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00'), free(2, '50.00')])],
      shipping_method: 'free_shipping:2',
    }),
    expect: { subtotal: 6000, total: 6000 },
    shipping: 'free_shipping:2',
  },
  {
    // 20% off 60.00 leaves 48.00 < 50.00: free shipping is not offered, the flat rate is used
    name: 'F3 the free-shipping minimum counts after discounts',
    input: input({
      lines: [shipped(6000, 1)],
      coupons: [coupon('percent', '20.0000')],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00'), free(2, '50.00')])],
      shipping_method: 'free_shipping:2',
    }),
    expect: { subtotal: 6000, discount_total: 1200, shipping_total: 500, total: 5300 },
    shipping: 'flat_rate:1',
  },
  {
    name: 'F4 a free-shipping coupon unlocks free shipping',
    input: input({
      lines: [shipped(6000, 1)],
      coupons: [coupon('percent', '20.0000', { free_shipping: true })],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00'), free(2, '50.00')])],
      shipping_method: 'free_shipping:2',
    }),
    expect: { subtotal: 6000, discount_total: 1200, total: 4800 },
    shipping: 'free_shipping:2',
  },
  {
    name: 'F5 a destination outside every zone has no shipping',
    input: input({
      lines: [shipped(1000, 1)],
      destination: at('US', 'NY'),
      shipping_zones: [zone(1, 'US', [flat(1, '5.00')], 'CA')],
    }),
    expect: { subtotal: 1000, total: 1000 },
    needs_shipping: true,
    shipping: null,
  },
  {
    name: 'F6 a zone by state; local pickup without cost is free',
    input: input({
      lines: [shipped(1000, 1)],
      destination: at('US', 'ca'),
      shipping_zones: [
        zone(
          1,
          'US',
          [{ instance_id: 1, method_id: 'local_pickup', title: 'Pickup', cost: null, min_amount: null }],
          'CA',
        ),
      ],
    }),
    expect: { subtotal: 1000, total: 1000 },
    shipping: 'local_pickup:1',
  },
  // ---- G. the worked example of docs/pricing.md
  {
    // shares 750/250; taxes 600→450 and 200→150; shipping 500 + 100; 3000 + 500 + 700
    name: 'G1 the worked example of docs/pricing.md',
    input: input({
      lines: [shipped(3000, 1), line(1000, 2)],
      coupons: [coupon('fixed_cart', '10.00')],
      tax_rates: [VAT20],
      destination: GB,
      shipping_zones: [zone(1, 'GB', [flat(1, '5.00')])],
    }),
    expect: {
      subtotal: 4000,
      subtotal_tax: 800,
      discount_total: 1000,
      discount_tax: 200,
      shipping_total: 500,
      shipping_tax: 100,
      total: 4200,
      total_tax: 700,
    },
  },
];

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('pricing engine: worked cases', () => {
  it('has at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of cases) {
    it(c.name, () => {
      const t = calculateTotals(c.input);
      const expected: Amounts = Object.fromEntries(AMOUNT_KEYS.map((k) => [k, c.expect[k] ?? 0])) as Amounts;
      if (c.expect.cart_contents_tax === undefined) {
        expected.cart_contents_tax = expected.subtotal_tax - expected.discount_tax;
      }
      const actual = Object.fromEntries(AMOUNT_KEYS.map((k) => [k, t[k]]));
      expect(actual).toEqual(expected);
      if (c.lines) expect(t.lines.map((l, i) => pick(l, c.lines![i]!))).toEqual(c.lines);
      if (c.coupons)
        expect(
          t.coupons.map((x) => ({ discount_total: x.discount_total, discount_tax: x.discount_tax })),
        ).toEqual(c.coupons);
      expect(t.rejected_coupons.map((r) => r.reason)).toEqual(c.rejected ?? []);
      if (c.needs_payment !== undefined) expect(t.needs_payment).toBe(c.needs_payment);
      if (c.needs_shipping !== undefined) expect(t.needs_shipping).toBe(c.needs_shipping);
      if (c.shipping !== undefined) expect(t.shipping.chosen?.id ?? null).toBe(c.shipping);
      assertConsistent(t);
    });
  }
});

function pick<T extends object>(obj: T, like: object): Partial<T> {
  return Object.fromEntries(Object.keys(like).map((k) => [k, obj[k as keyof T]])) as Partial<T>;
}

/** The identities every cart satisfies to the minor unit. */
function assertConsistent(t: CartTotals) {
  expect(t.total).toBe(t.subtotal - t.discount_total + t.shipping_total + t.fee_total + t.total_tax);
  expect(t.total_tax).toBe(t.cart_contents_tax + t.shipping_tax + t.fee_tax);
  expect(t.cart_contents_tax).toBe(t.subtotal_tax - t.discount_tax);
  expect(t.cart_contents_total).toBe(t.subtotal - t.discount_total);
  expect(sum(t.lines.map((l) => l.subtotal))).toBe(t.subtotal);
  expect(sum(t.lines.map((l) => l.total))).toBe(t.cart_contents_total);
  expect(sum(t.lines.map((l) => l.total_tax))).toBe(t.cart_contents_tax);
  expect(sum(t.coupons.map((c) => c.discount_total))).toBe(t.discount_total);
  expect(sum(t.coupons.map((c) => c.discount_tax))).toBe(t.discount_tax);
  expect(sum(t.taxes.map((x) => x.amount))).toBe(t.total_tax);
  for (const l of t.lines) {
    expect(sum(l.taxes.map((x) => x.amount))).toBe(l.total_tax);
    expect(l.total).toBeGreaterThanOrEqual(0);
    expect(l.total).toBeLessThanOrEqual(l.subtotal);
  }
  for (const k of AMOUNT_KEYS) expect(Number.isInteger(t[k]) && t[k] >= 0).toBe(true);
}
