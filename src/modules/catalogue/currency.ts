import Big from 'big.js';
import { sha256 } from '../../random.js';
import type { Settings } from '../settings/settings.schemas.js';
import { currencyDecimals, minorOf, roundHalfUp, toBig, toMinor } from './money.js';

/**
 * The currency a cart is priced in. Catalogue prices are stored in the base currency; another
 * configured currency converts them at its stored rate (units of the currency per base unit).
 */
export interface CurrencyContext {
  code: string;
  symbol: string;
  decimals: number;
  /** Units of this currency per base unit, a decimal string; "1" for the base currency. */
  rate: string;
  /** When the rate was set (from the settings); null for the base currency. */
  rate_updated_at: string | null;
  /** Names the exact rate used, so an order can lock it: see rateId. */
  rate_id: string;
  base_currency: string;
  base_decimals: number;
}

/** The symbol a shopper expects ("$", "€", "¥"), from ICU. */
export function currencySymbol(code: string): string {
  const known = symbols.get(code);
  if (known !== undefined) return known;
  let symbol: string;
  try {
    const parts = new Intl.NumberFormat('en', {
      style: 'currency',
      currency: code,
      currencyDisplay: 'narrowSymbol',
    }).formatToParts(0);
    symbol = parts.find((p) => p.type === 'currency')?.value ?? code;
  } catch {
    return code;
  }
  symbols.set(code, symbol);
  return symbol;
}

/**
 * Symbols asked of ICU once per code: an Intl.NumberFormat a call cost 2.2% of a loaded submit's
 * main thread (docs/performance.md, 'The checkout submit'). Codes ICU refuses are not kept, so the
 * map holds at most the ISO codes.
 */
const symbols = new Map<string, string>();

/**
 * The first 16 hex digits of SHA-256 over base currency, currency, rate and the rate's timestamp:
 * any change of the rate (or of when it was set) gives a new id.
 */
export function rateId(base: string, code: string, rate: string, updatedAt: string | null): string {
  return sha256(`${base}>${code}|${rate}|${updatedAt ?? ''}`).slice(0, 16);
}

function positiveDecimal(value: unknown): string | null {
  try {
    const b = new Big(String(value));
    return b.gt(0) ? b.toString() : null;
  } catch {
    return null;
  }
}

/** Every currency a shopper can choose: the base currency first, then the configured ones. */
export function availableCurrencies(settings: Settings): CurrencyContext[] {
  const base = settings.base_currency;
  const baseDecimals = currencyDecimals(base, settings);
  const configuredBase = settings.currencies.find((c) => c.code === base);
  const out: CurrencyContext[] = [
    {
      code: base,
      symbol: configuredBase?.symbol ?? currencySymbol(base),
      decimals: baseDecimals,
      rate: '1',
      rate_updated_at: null,
      rate_id: rateId(base, base, '1', null),
      base_currency: base,
      base_decimals: baseDecimals,
    },
  ];
  for (const c of settings.currencies) {
    if (c.code === base) continue;
    const rate = positiveDecimal(c.rate);
    if (rate === null) continue; // an unusable rate makes the currency unavailable, never free
    out.push({
      code: c.code,
      symbol: c.symbol,
      decimals: c.decimals,
      rate,
      rate_updated_at: c.rate_updated_at,
      rate_id: rateId(base, c.code, rate, c.rate_updated_at),
      base_currency: base,
      base_decimals: baseDecimals,
    });
  }
  return out;
}

/** The configured currency of that code (any case); the base currency when `code` is empty; else null. */
export function resolveCurrency(settings: Settings, code?: string | null): CurrencyContext | null {
  const all = availableCurrencies(settings);
  if (!code) return all[0]!;
  return all.find((c) => c.code === code.toUpperCase()) ?? null;
}

/** Seconds since the rate was set; 0 for the base currency. Checkout refuses a rate older than allowed. */
export function rateAgeSeconds(ctx: CurrencyContext, now: Date): number {
  if (ctx.rate_updated_at === null) return 0;
  return Math.max(0, (now.getTime() - Date.parse(ctx.rate_updated_at)) / 1000);
}

/** A base-currency amount in minor units, converted to `ctx` minor units (half-up). */
export function fromBase(baseMinor: number, ctx: CurrencyContext): number {
  if (ctx.code === ctx.base_currency) return baseMinor;
  return minorOf(toBig(baseMinor, ctx.base_decimals).times(ctx.rate), ctx.decimals);
}

/**
 * A decimal-string amount of currency `currency` (null = the base currency) in `ctx` minor units:
 * base amounts convert at the rate; an amount already in the active currency is taken as is.
 */
export function amountIn(value: string, currency: string | null, ctx: CurrencyContext): number {
  const code = currency ?? ctx.base_currency;
  if (code === ctx.code) {
    return toMinor(value, ctx.decimals) ?? roundHalfUp(new Big(value).times(new Big(10).pow(ctx.decimals)));
  }
  const base =
    toMinor(value, ctx.base_decimals) ??
    roundHalfUp(new Big(value).times(new Big(10).pow(ctx.base_decimals)));
  return fromBase(base, ctx);
}
