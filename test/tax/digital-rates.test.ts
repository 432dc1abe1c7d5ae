import Big from 'big.js';
import { describe, expect, it } from 'vitest';
import type { PricingCoupon } from '../../src/modules/catalogue/coupons.pricing.js';
import { type CurrencyContext, resolveCurrency } from '../../src/modules/catalogue/currency.js';
import {
  DIGITAL_RATE_ID,
  DIGITAL_RATES,
  EU_COUNTRIES,
  regimeRates,
  type TaxRegime,
} from '../../src/modules/catalogue/digital-rates.js';
import type { TaxRate } from '../../src/modules/catalogue/tax.service.js';
import { calculateTotals, type PricingLine } from '../../src/modules/pricing/totals.js';
import { DEFAULT_SETTINGS, type Settings } from '../../src/modules/settings/settings.schemas.js';

/**
 * The digital-services regime on the pricing engine: every EU rate with prices entered without
 * and with tax, rounding per line in minor units of currencies with 0, 2 and 3 decimals, and
 * coupons taken off before tax.
 */

const NOW = new Date('2026-11-01T12:00:00.000Z');
const SETTINGS: Settings = {
  ...DEFAULT_SETTINGS,
  base_currency: 'EUR',
  currencies: [
    { code: 'JPY', symbol: '¥', decimals: 0, rate: '160', rate_updated_at: '2026-11-01T00:00:00Z' },
    { code: 'KWD', symbol: 'KD', decimals: 3, rate: '0.331', rate_updated_at: '2026-11-01T00:00:00Z' },
  ],
};
const cur = (code: string): CurrencyContext => resolveCurrency(SETTINGS, code)!;

const line = (price: number, product_id: number, quantity = 1): PricingLine => ({
  key: `l-${product_id}`,
  product_id,
  variation_id: 0,
  quantity,
  name: `P${product_id}`,
  attributes: {},
  unit_price_base: price,
  needs_shipping: false,
  subscription: false,
});

const coupon = (discount_type: PricingCoupon['discount_type'], amount: string): PricingCoupon => ({
  id: 1,
  code: 'save',
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
});

const stored = (country: string, rate: string, id = 7): TaxRate => ({
  id,
  country,
  state: '',
  postcode: '',
  rate,
  name: `Override ${country}`,
  shipping: true,
  compound: false,
  priority: 1,
});

function price(opts: {
  country: string;
  lines: PricingLine[];
  inclusive?: boolean;
  currency?: string;
  regime?: TaxRegime;
  rates?: TaxRate[];
  coupons?: PricingCoupon[];
  reverseCharge?: boolean;
}) {
  const destination = { country: opts.country, state: '', postcode: '' };
  return calculateTotals({
    currency: cur(opts.currency ?? 'EUR'),
    prices_include_tax: opts.inclusive ?? false,
    coupons_enabled: true,
    lines: opts.lines,
    coupons: opts.coupons ?? [],
    tax_rates: regimeRates(
      opts.regime ?? 'digital_services',
      opts.rates ?? [],
      destination,
      opts.reverseCharge,
    ),
    destination,
    shipping_zones: [],
    shipping_method: null,
    fees: [],
    now: NOW,
  });
}

/** Half-up rounding of an exact Big to an integer (minor units). */
const round = (b: Big) => Number(b.round(0, Big.roundHalfUp).toFixed(0));

describe('the rate table', () => {
  it('has a rate for every EU member state, the UK, Norway, Switzerland and Australia', () => {
    expect(EU_COUNTRIES.size).toBe(27);
    for (const c of [...EU_COUNTRIES, 'GB', 'NO', 'CH', 'AU']) {
      expect(DIGITAL_RATES[c], c).toMatch(/^\d{1,2}\.\d{4}$/);
    }
    expect(DIGITAL_RATES.DE).toBe('19.0000');
    expect(DIGITAL_RATES.FI).toBe('25.5000');
    expect(DIGITAL_RATES.HU).toBe('27.0000');
    expect(DIGITAL_RATES.LU).toBe('17.0000');
  });

  it.each([...EU_COUNTRIES].sort())(
    '%s: exclusive prices add the rate, inclusive ones keep the total',
    (c) => {
      const rate = new Big(DIGITAL_RATES[c]!).div(100);
      // 49.99 × 3: the line is 149.97, its tax rounded once, half up, on the line.
      const ex = price({ country: c, lines: [line(4999, 1, 3)] });
      const exTax = round(new Big(14997).times(rate));
      expect(ex.taxes).toEqual([
        {
          rate_id: DIGITAL_RATE_ID,
          name: `VAT ${c}`,
          rate: DIGITAL_RATES[c],
          compound: false,
          amount: exTax,
        },
      ]);
      expect(ex.lines[0]).toMatchObject({ total: 14997, total_tax: exTax });
      expect(ex.total).toBe(14997 + exTax);

      const inc = price({ country: c, lines: [line(4999, 1, 3)], inclusive: true });
      const incTax = round(new Big(14997).times(rate).div(rate.plus(1)));
      // The buyer's total stays at the entered price; the net moves with the rate.
      expect(inc.total).toBe(14997);
      expect(inc.total_tax).toBe(incTax);
      expect(inc.lines[0]).toMatchObject({ total: 14997 - incTax, total_tax: incTax });
    },
  );

  it('charges nothing outside the table, under `none`, or with reverse charge; `manual` keeps the stored rates', () => {
    expect(price({ country: 'US', lines: [line(1000, 1)] }).total_tax).toBe(0);
    expect(
      price({ country: 'DE', lines: [line(1000, 1)], regime: 'none', rates: [stored('DE', '5.0000')] })
        .total_tax,
    ).toBe(0);
    expect(price({ country: 'FR', lines: [line(1000, 1)], reverseCharge: true }).total_tax).toBe(0);
    // manual: the stored FR rate only, the table ignored.
    expect(price({ country: 'DE', lines: [line(1000, 1)], regime: 'manual' }).total_tax).toBe(0);
    expect(
      price({ country: 'DE', lines: [line(1000, 1)], regime: 'manual', rates: [stored('DE', '5.0000')] })
        .total_tax,
    ).toBe(50);
  });

  it("a stored rate for the buyer's country overrides the table", () => {
    const t = price({
      country: 'DE',
      lines: [line(1000, 1)],
      rates: [stored('DE', '7.0000'), stored('FR', '1.0000', 8)],
    });
    expect(t.taxes).toEqual([
      { rate_id: 7, name: 'Override DE', rate: '7.0000', compound: false, amount: 70 },
    ]);
    // Another country's override does not touch France's neighbour.
    expect(price({ country: 'AT', lines: [line(1000, 1)], rates: [stored('DE', '7.0000')] }).total_tax).toBe(
      200,
    );
  });
});

describe('rounding in minor units', () => {
  it('rounds each line, half up, in the currency of the order (0, 2 and 3 decimals)', () => {
    // 9.99 EUR → 1598.4 JPY → 1598 a unit; ×2 = 3196 JPY; 19 % = 607.24 → 607.
    const jpy = price({ country: 'DE', currency: 'JPY', lines: [line(999, 1, 2)] });
    expect(jpy.lines[0]).toMatchObject({ unit_price: 1598, total: 3196, total_tax: 607 });
    // Two lines each rounded on their own: 0.05 at 21 % is 1.05 cents → 1; 0.07 → 1.47 → 1.
    const eur = price({ country: 'NL', lines: [line(5, 1), line(7, 2)] });
    expect(eur.lines.map((l) => l.total_tax)).toEqual([1, 1]);
    expect(eur.total_tax).toBe(2);
    // 12.34 EUR → 4.08454 KWD → 4.085 (3 decimals); 25.5 % = 1.041675 → 1.042.
    const kwd = price({ country: 'FI', currency: 'KWD', lines: [line(1234, 1)] });
    expect(kwd.lines[0]).toMatchObject({ total: 4085, total_tax: 1042 });
    // Inclusive, 0 decimals: 1598 JPY containing 27 %: 1598 × 0.27 / 1.27 = 339.73 → 340.
    const huf = price({ country: 'HU', currency: 'JPY', inclusive: true, lines: [line(999, 1)] });
    expect(huf.lines[0]).toMatchObject({ total: 1258, total_tax: 340 });
  });
});

describe('coupons come off before tax', () => {
  it('a percent coupon: the tax is on the discounted line', () => {
    // 100.00 − 25 % = 75.00; 20 % VAT on 75.00 = 15.00.
    const t = price({ country: 'FR', lines: [line(10000, 1)], coupons: [coupon('percent', '25')] });
    expect(t.coupons).toHaveLength(1);
    expect(t).toMatchObject({ subtotal: 10000, discount_total: 2500, total_tax: 1500, total: 9000 });
  });

  it('a fixed cart coupon with tax-inclusive prices: the total paid contains the rate', () => {
    // 119.00 incl. 19 % − 19.00 = 100.00 paid, containing 15.97 VAT (100 × 0.19 / 1.19 = 15.966).
    const t = price({
      country: 'DE',
      inclusive: true,
      lines: [line(11900, 1)],
      coupons: [coupon('fixed_cart', '19.00')],
    });
    expect(t).toMatchObject({ total: 10000, total_tax: 1597, cart_contents_total: 8403 });
  });
});
