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

// ---- arithmetic in minor units (the pricing engine's) ----

/**
 * The two operations the pricing engine needs beyond integer addition: rounding an exact decimal
 * to whole minor units, and splitting an integer amount in proportion to integer weights so that
 * the parts add up to it exactly.
 */

/** Half-up (half away from zero for the non-negative amounts we handle) to whole minor units. */
export function roundHalfUp(value: Big): number {
  return Number(value.round(0, Big.roundHalfUp).toFixed(0));
}

/**
 * Splits `total` over `weights` (non-negative integers) by the largest-remainder method: each part
 * is the floor of its exact share, and the units left over go to the largest fractional remainders
 * (ties to the earlier index). The parts sum to `total`; a zero weight gets nothing. With all
 * weights zero everything is zero (callers never split a non-zero total over nothing).
 */
export function allocate(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + BigInt(b), 0n);
  if (sum === 0n || total === 0) return weights.map(() => 0);
  const t = BigInt(total);
  const parts = weights.map((w) => (t * BigInt(w)) / sum);
  const rests = weights.map((w, i) => ({ i, rest: (t * BigInt(w)) % sum }));
  let left = t - parts.reduce((a, b) => a + b, 0n);
  rests.sort((a, b) => (a.rest === b.rest ? a.i - b.i : a.rest > b.rest ? -1 : 1));
  for (const { i, rest } of rests) {
    if (left === 0n || rest === 0n) break;
    parts[i]! += 1n;
    left -= 1n;
  }
  return parts.map(Number);
}

/** `minor` units of a currency with `decimals` places, as an exact decimal. */
export const toBig = (minor: number, decimals: number): Big => new Big(minor).div(new Big(10).pow(decimals));

/** An exact decimal amount in whole minor units of a currency with `decimals` places, half-up. */
export const minorOf = (value: Big, decimals: number): number =>
  roundHalfUp(value.times(new Big(10).pow(decimals)));
