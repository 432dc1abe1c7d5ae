import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalDecimal, currencyDecimals, fromMinor, toMinor } from '../../src/modules/catalogue/money.js';
import { DEFAULT_SETTINGS } from '../../src/modules/settings/settings.schemas.js';
import { createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';

describe('money conversion', () => {
  it('converts decimal strings to minor units exactly', () => {
    expect(toMinor('49.00', 2)).toBe(4900);
    expect(toMinor('0.1', 2)).toBe(10);
    expect(toMinor('0.29', 2)).toBe(29); // 0.29 * 100 is 28.999… in floating point
    expect(toMinor('1.10', 0)).toBeNull();
    expect(toMinor('1.000', 0)).toBe(1);
    expect(toMinor('1.005', 2)).toBeNull();
    expect(toMinor('1.234', 3)).toBe(1234);
    expect(toMinor('999999999.99', 2)).toBe(99999999999);
    expect(toMinor('not a number', 2)).toBeNull();
    expect(fromMinor(4900, 2)).toBe('49.00');
    expect(fromMinor(5, 3)).toBe('0.005');
    expect(fromMinor(1500, 0)).toBe('1500');
    expect(canonicalDecimal('7.25', 4)).toBe('7.2500');
  });

  it('takes decimals from the store currencies, else ISO 4217', () => {
    expect(currencyDecimals('USD', DEFAULT_SETTINGS)).toBe(2);
    expect(currencyDecimals('JPY', DEFAULT_SETTINGS)).toBe(0);
    expect(currencyDecimals('KWD', DEFAULT_SETTINGS)).toBe(3);
    const settings = {
      ...DEFAULT_SETTINGS,
      currencies: [
        { code: 'JPY', symbol: '¥', decimals: 2, rate: '150', rate_updated_at: '2026-01-01T00:00:00Z' },
      ],
    };
    expect(currencyDecimals('JPY', settings)).toBe(2);
  });
});

describe('prices follow the base currency', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('a JPY store takes whole yen and refuses fractions', async () => {
    await setSettings(t, { base_currency: 'JPY' });
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      headers: t.adminAuth,
      payload: { name: 'Yen', price: '1500' },
    });
    expect(ok.json().price).toBe('1500');
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      headers: t.adminAuth,
      payload: { name: 'Yen', price: '1500.5' },
    });
    expectError(bad, 400, 'invalid_amount');
  });
});
