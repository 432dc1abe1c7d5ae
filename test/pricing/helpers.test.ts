import Big from 'big.js';
import { describe, expect, it } from 'vitest';
import {
  amountIn,
  availableCurrencies,
  fromBase,
  rateAgeSeconds,
  rateId,
  resolveCurrency,
} from '../../src/modules/catalogue/currency.js';
import { allocate, roundHalfUp } from '../../src/modules/catalogue/money.js';
import {
  exclusiveTaxes,
  inclusiveTaxes,
  matchTaxRates,
  postcodeMatches,
} from '../../src/modules/catalogue/tax.pricing.js';
import type { TaxRate } from '../../src/modules/catalogue/tax.service.js';
import { DEFAULT_SETTINGS, type Settings } from '../../src/modules/settings/settings.schemas.js';

describe('rounding and allocation', () => {
  it('rounds half up', () => {
    expect(roundHalfUp(new Big('2.5'))).toBe(3);
    expect(roundHalfUp(new Big('2.4999999'))).toBe(2);
    expect(roundHalfUp(new Big('249.875'))).toBe(250);
    expect(roundHalfUp(new Big('0'))).toBe(0);
  });

  it('allocates exactly by largest remainder, ties to the earlier part', () => {
    expect(allocate(1000, [3000, 1000])).toEqual([750, 250]);
    expect(allocate(1000, [1, 1, 1])).toEqual([334, 333, 333]);
    expect(allocate(2, [1, 1, 1])).toEqual([1, 1, 0]);
    expect(allocate(10, [0, 5, 0])).toEqual([0, 10, 0]);
    expect(allocate(0, [1, 2])).toEqual([0, 0]);
    expect(allocate(7, [0, 0])).toEqual([0, 0]);
    // 100 over 1:2:3:4 → 10, 20, 30, 40 exactly
    expect(allocate(100, [1, 2, 3, 4])).toEqual([10, 20, 30, 40]);
    // 10 over 1:1:1:1:1:1 → 1.666… each: four get 2 (remainders equal → first ones), two get 1
    expect(allocate(10, [1, 1, 1, 1, 1, 1])).toEqual([2, 2, 2, 2, 1, 1]);
    // Huge amounts stay exact (BigInt inside).
    expect(allocate(9_007_199_254_740_991, [1, 1])).toEqual([4_503_599_627_370_496, 4_503_599_627_370_495]);
  });
});

describe('currencies', () => {
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    currencies: [
      { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: '2026-06-01T00:00:00Z' },
      { code: 'JPY', symbol: '¥', decimals: 0, rate: '150', rate_updated_at: '2026-06-01T00:00:00Z' },
      { code: 'BAD', symbol: 'B', decimals: 2, rate: '0', rate_updated_at: '2026-06-01T00:00:00Z' },
    ],
  };

  it('offers the base currency first, then configured ones with a usable rate', () => {
    expect(availableCurrencies(settings).map((c) => c.code)).toEqual(['USD', 'EUR', 'JPY']);
    expect(resolveCurrency(settings, null)).toMatchObject({
      code: 'USD',
      symbol: '$',
      decimals: 2,
      rate: '1',
    });
    expect(resolveCurrency(settings, 'eur')).toMatchObject({ code: 'EUR', symbol: '€', rate: '0.9' });
    expect(resolveCurrency(settings, 'BAD')).toBeNull();
    expect(resolveCurrency(settings, 'GBP')).toBeNull();
  });

  it('rate_id is 16 hex digits that change with the rate and its timestamp only', () => {
    const id = rateId('USD', 'EUR', '0.9', '2026-06-01T00:00:00Z');
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(rateId('USD', 'EUR', '0.9', '2026-06-01T00:00:00Z')).toBe(id);
    expect(rateId('USD', 'EUR', '0.91', '2026-06-01T00:00:00Z')).not.toBe(id);
    expect(rateId('USD', 'EUR', '0.9', '2026-06-02T00:00:00Z')).not.toBe(id);
    expect(rateId('GBP', 'EUR', '0.9', '2026-06-01T00:00:00Z')).not.toBe(id);
    expect(resolveCurrency(settings, 'EUR')!.rate_id).toBe(id);
  });

  it('converts base minor units at the rate, half-up, into the target decimals', () => {
    const eur = resolveCurrency(settings, 'EUR')!;
    const jpy = resolveCurrency(settings, 'JPY')!;
    expect(fromBase(1999, eur)).toBe(1799); // 17.991 → 17.99
    expect(fromBase(1995, eur)).toBe(1796); // 17.955 → 17.96
    expect(fromBase(1999, jpy)).toBe(2999); // 2998.5 → 2999
    expect(fromBase(1999, resolveCurrency(settings, 'USD')!)).toBe(1999);
    expect(amountIn('10.00', null, eur)).toBe(900);
    expect(amountIn('10.00', 'EUR', eur)).toBe(1000);
    expect(amountIn('10', null, jpy)).toBe(1500);
  });

  it('knows how old a rate is', () => {
    const eur = resolveCurrency(settings, 'EUR')!;
    expect(rateAgeSeconds(eur, new Date('2026-06-01T01:00:00Z'))).toBe(3600);
    expect(rateAgeSeconds(resolveCurrency(settings, null)!, new Date())).toBe(0);
  });
});

describe('tax rates', () => {
  const r = (id: number, over: Partial<TaxRate>): TaxRate => ({
    id,
    country: 'US',
    state: '',
    postcode: '',
    rate: '10.0000',
    name: `r${id}`,
    shipping: true,
    compound: false,
    priority: 1,
    ...over,
  });

  it('matches postcode lists, ranges and wildcards', () => {
    expect(postcodeMatches('', '12345')).toBe(true);
    expect(postcodeMatches('90001...90099', '90012')).toBe(true);
    expect(postcodeMatches('90001...90099', '90100')).toBe(false);
    expect(postcodeMatches('90001...90099', 'ABCDE')).toBe(false);
    expect(postcodeMatches('SW1*', 'sw1a 1aa')).toBe(true);
    expect(postcodeMatches('SW1*', 'SE1 7PB')).toBe(false);
    expect(postcodeMatches('10001; 10002', '10002')).toBe(true);
    expect(postcodeMatches('10001;10002', '')).toBe(false);
    expect(postcodeMatches('A.C', 'ABC')).toBe(false); // a dot is literal, not a pattern
  });

  it('takes one rate per priority, the most specific, in priority order', () => {
    const rates = [
      r(1, { priority: 2, rate: '1.0000' }),
      r(2, {}),
      r(3, { state: 'CA' }),
      r(4, { state: 'CA', postcode: '9*' }),
      r(5, { country: 'GB' }),
    ];
    expect(matchTaxRates(rates, { country: 'US', state: 'CA', postcode: '90210' }).map((x) => x.id)).toEqual([
      4, 1,
    ]);
    expect(matchTaxRates(rates, { country: 'US', state: 'CA', postcode: '10001' }).map((x) => x.id)).toEqual([
      3, 1,
    ]);
    expect(matchTaxRates(rates, { country: 'US', state: 'TX', postcode: '' }).map((x) => x.id)).toEqual([
      2, 1,
    ]);
    expect(matchTaxRates(rates, null)).toEqual([]);
  });

  it('computes exclusive and inclusive taxes per rate', () => {
    const simple = r(1, { rate: '20.0000' });
    const compound = r(2, { rate: '10.0000', compound: true, priority: 2 });
    expect(exclusiveTaxes(10000, [simple])).toEqual([2000]);
    // 20% of 10000 = 2000; 10% of (10000 + 2000) = 1200
    expect(exclusiveTaxes(10000, [simple, compound])).toEqual([2000, 1200]);
    // 13200 inclusive: compound off first 13200 − 12000 = 1200; then 12000 × 0.2/1.2 = 2000
    expect(inclusiveTaxes(13200, [simple, compound])).toEqual([2000, 1200]);
    expect(inclusiveTaxes(0, [simple])).toEqual([0]);
    expect(exclusiveTaxes(1000, [])).toEqual([]);
  });
});
