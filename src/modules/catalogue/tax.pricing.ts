import Big from 'big.js';
import { roundHalfUp } from './money.js';
import type { TaxRate } from './tax.service.js';

/** Where taxes (and shipping) are charged. */
export interface Destination {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  /** "" = unknown. */
  state: string;
  /** "" = unknown. */
  postcode: string;
}

/** Upper case without spaces or hyphens, so "sw1a 1aa" and "SW1A1AA" compare equal. */
const normalisePostcode = (p: string): string => p.toUpperCase().replace(/[\s-]/g, '');

/**
 * A tax rate's postcode list: `;` separates entries, `a...b` is an inclusive numeric range,
 * `*` matches any run of characters; an empty list matches every postcode.
 */
export function postcodeMatches(pattern: string, postcode: string): boolean {
  const entries = pattern
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) return true;
  const code = normalisePostcode(postcode);
  if (code === '') return false;
  return entries.some((entry) => {
    const range = entry.split('...');
    if (range.length === 2) {
      const [lo, hi] = range.map((r) => normalisePostcode(r)) as [string, string];
      if (!/^\d+$/.test(lo) || !/^\d+$/.test(hi) || !/^\d+$/.test(code)) return false;
      const n = BigInt(code);
      return n >= BigInt(lo) && n <= BigInt(hi);
    }
    const parts = normalisePostcode(entry).split('*');
    const re = parts.map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    return new RegExp(`^${re}$`).test(code);
  });
}

const specificity = (r: TaxRate): number => (r.postcode !== '' ? 3 : r.state !== '' ? 2 : 1);

/**
 * The rates that apply at a destination: country equal, state empty or equal (ignoring case),
 * postcode list empty or matching. At most one rate per priority applies, the most specific
 * (postcode, then state, then the whole country; ties to the rate created first). The result is in
 * priority order. No destination, no taxes.
 */
export function matchTaxRates(rates: readonly TaxRate[], where: Destination | null): TaxRate[] {
  if (!where) return [];
  const byPriority = new Map<number, TaxRate>();
  const candidates = rates
    .filter(
      (r) =>
        r.country === where.country.toUpperCase() &&
        (r.state === '' || r.state.toUpperCase() === where.state.toUpperCase()) &&
        postcodeMatches(r.postcode, where.postcode),
    )
    .sort((a, b) => a.priority - b.priority || specificity(b) - specificity(a) || a.id - b.id);
  for (const r of candidates) if (!byPriority.has(r.priority)) byPriority.set(r.priority, r);
  return [...byPriority.values()];
}

const fraction = (r: TaxRate): Big => new Big(r.rate).div(100);

/**
 * Tax on an amount entered without tax, one amount per rate (aligned with `rates`), each rounded
 * half-up to minor units. Simple rates apply to the amount; compound rates, in priority order,
 * to the amount plus every tax before them (exact, unrounded).
 */
export function exclusiveTaxes(amount: number, rates: readonly TaxRate[]): number[] {
  const exact = new Array<Big>(rates.length);
  let taxed = new Big(0);
  rates.forEach((r, i) => {
    if (r.compound) return;
    exact[i] = new Big(amount).times(fraction(r));
    taxed = taxed.plus(exact[i]!);
  });
  rates.forEach((r, i) => {
    if (!r.compound) return;
    exact[i] = new Big(amount).plus(taxed).times(fraction(r));
    taxed = taxed.plus(exact[i]!);
  });
  return exact.map((t) => roundHalfUp(t));
}

/**
 * Tax contained in an amount entered with tax, one amount per rate, each rounded half-up. Compound
 * rates come off first, the last one first (p − p / (1 + r)); the simple rates then share what
 * remains in proportion to their rates (p × r / (1 + Σr)).
 */
export function inclusiveTaxes(amount: number, rates: readonly TaxRate[]): number[] {
  const exact = new Array<Big>(rates.length);
  let price = new Big(amount);
  for (let i = rates.length - 1; i >= 0; i--) {
    const r = rates[i]!;
    if (!r.compound) continue;
    const tax = price.minus(price.div(fraction(r).plus(1)));
    exact[i] = tax;
    price = price.minus(tax);
  }
  const simple = rates.filter((r) => !r.compound).reduce((sum, r) => sum.plus(fraction(r)), new Big(0));
  rates.forEach((r, i) => {
    if (r.compound) return;
    exact[i] = price.times(fraction(r)).div(simple.plus(1));
  });
  return exact.map((t) => roundHalfUp(t));
}
