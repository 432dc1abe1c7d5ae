import Big from 'big.js';
import type { Settings } from '../settings/settings.schemas.js';

/**
 * Money enters as decimal strings ("49.00") and is stored as integer minor units; conversions go
 * through big.js so no float ever touches an amount.
 */

/** Largest amount in minor units we store: exact in a JS number and in a bigint column. */
const MAX_MINOR = new Big(Number.MAX_SAFE_INTEGER);

/** Every ISO 4217 code the runtime's ICU knows (Node ships full ICU). */
const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export const isKnownCurrency = (code: string): boolean => KNOWN_CURRENCIES.has(code);

/**
 * Fraction digits of a currency: a store-configured currency's own `decimals` wins, otherwise the
 * ISO 4217 minor unit as ICU reports it (JPY 0, USD 2, KWD 3).
 */
export function currencyDecimals(code: string, settings: Settings): number {
  const configured = settings.currencies.find((c) => c.code === code);
  if (configured) return configured.decimals;
  let digits = isoDecimals.get(code);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions()
      .maximumFractionDigits as number;
    isoDecimals.set(code, digits);
  }
  return digits;
}

/**
 * ICU's minor unit per currency code, asked once: building an Intl.NumberFormat costs tens of
 * microseconds, and pricing asks several times a request (3.8% of a loaded submit's main thread,
 * docs/performance.md, 'The checkout submit'). Only codes ICU accepted get here (it throws on
 * others), so the map holds at most the few hundred ISO codes.
 */
const isoDecimals = new Map<string, number>();

/**
 * "49.5" -> 4950 with 2 decimals. Null when the value has more significant fraction digits than
 * the currency allows ("1.005" USD) or is too large; trailing zeros ("49.000") are accepted.
 */
export function toMinor(value: string, decimals: number): number | null {
  let scaled: Big;
  try {
    scaled = new Big(value).times(new Big(10).pow(decimals));
  } catch {
    return null;
  }
  if (!scaled.eq(scaled.round(0, Big.roundDown)) || scaled.lt(0) || scaled.gt(MAX_MINOR)) return null;
  return Number(scaled.toFixed(0));
}

/** 4950 -> "49.50" with 2 decimals, "4950" with 0. */
export function fromMinor(minor: number, decimals: number): string {
  return new Big(minor).div(new Big(10).pow(decimals)).toFixed(decimals);
}

/** A decimal string canonicalised to exactly `decimals` places, or null if it needs more. */
export function canonicalDecimal(value: string, decimals: number): string | null {
  const minor = toMinor(value, decimals);
  return minor === null ? null : fromMinor(minor, decimals);
}

/** Whether a decimal string lies in [min, max]. */
export function decimalWithin(value: string, min: string, max: string): boolean {
  const v = new Big(value);
  return v.gte(min) && v.lte(max);
}
