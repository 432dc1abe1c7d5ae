import type { Destination } from './tax.pricing.js';
import type { TaxRate } from './tax.service.js';

/**
 * The standard VAT / GST rate each country charges on electronically supplied services sold to
 * consumers (software, downloads, licenses), as a percent with four places.
 *
 * Source: European Commission, "VAT rates applied in the Member States of the European Union"
 * and the Taxes in Europe Database (EU 27); HMRC (GB); Skatteetaten (NO); the Swiss Federal Tax
 * Administration (CH); the Australian Taxation Office (AU). Checked 2025-08-01: includes Finland's
 * 25.5 % (since 2024-09-01), Slovakia's 23 % (since 2025-01-01), Estonia's 24 % (since
 * 2025-07-01) and Romania's 21 % (since 2025-08-01). Rates change: a store overrides a country by
 * entering a tax rate row for it (docs/taxes.md, 'Rates').
 */
export const DIGITAL_RATES: Readonly<Record<string, string>> = {
  // The European Union (27)
  AT: '20.0000',
  BE: '21.0000',
  BG: '20.0000',
  CY: '19.0000',
  CZ: '21.0000',
  DE: '19.0000',
  DK: '25.0000',
  EE: '24.0000',
  ES: '21.0000',
  FI: '25.5000',
  FR: '20.0000',
  GR: '24.0000',
  HR: '25.0000',
  HU: '27.0000',
  IE: '23.0000',
  IT: '22.0000',
  LT: '21.0000',
  LU: '17.0000',
  LV: '21.0000',
  MT: '18.0000',
  NL: '21.0000',
  PL: '23.0000',
  PT: '23.0000',
  RO: '21.0000',
  SE: '25.0000',
  SI: '22.0000',
  SK: '23.0000',
  // Outside the Union
  AU: '10.0000',
  CH: '8.1000',
  GB: '20.0000',
  NO: '25.0000',
};

/** The member states of the European Union: where a business buyer's VAT number is checked with VIES. */
export const EU_COUNTRIES: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
]);

/** The store's tax regime (the setting `tax_regime`, docs/taxes.md). */
export type TaxRegime = 'none' | 'manual' | 'digital_services';

/** The id of the rate taken from DIGITAL_RATES (stored rates have positive ids). */
export const DIGITAL_RATE_ID = 0;

/**
 * The rates the pricing engine applies under a regime. `none`: no tax. `manual`: the stored
 * rates as they are. `digital_services`: the buyer's country's rates entered by the store when
 * there are any (an override), else its rate in DIGITAL_RATES, else none; a reverse-charge sale
 * carries no VAT.
 */
export function regimeRates(
  regime: TaxRegime,
  stored: readonly TaxRate[],
  where: Destination | null,
  reverseCharge = false,
): TaxRate[] {
  if (regime === 'none') return [];
  if (regime === 'manual') return [...stored];
  if (reverseCharge || !where) return [];
  const country = where.country.toUpperCase();
  const overrides = stored.filter((r) => r.country === country);
  if (overrides.length > 0) return overrides;
  const rate = DIGITAL_RATES[country];
  if (!rate) return [];
  return [
    {
      id: DIGITAL_RATE_ID,
      country,
      state: '',
      postcode: '',
      rate,
      name: `${country === 'AU' ? 'GST' : 'VAT'} ${country}`,
      shipping: true,
      compound: false,
      priority: 1,
    },
  ];
}
