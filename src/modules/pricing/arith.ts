import Big from 'big.js';

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
