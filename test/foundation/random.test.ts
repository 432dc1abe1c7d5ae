import { describe, expect, it } from 'vitest';
import { randomHex } from '../../src/random.js';

describe('randomHex (secrets drawn from a pool of random bytes)', () => {
  it('answers the length asked for, in lowercase hex, never the same twice across refills', () => {
    // 32-byte tokens: 128 fill one pool, so 1,000 cross several refills.
    const tokens = Array.from({ length: 1000 }, () => randomHex(32));
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
    // Odd sizes leave a remainder that the next draw does not use.
    const mixed = Array.from({ length: 200 }, (_, i) => randomHex(1 + (i % 40)));
    for (const [i, s] of mixed.entries()) expect(s).toHaveLength(2 * (1 + (i % 40)));
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });

  it('spreads its bytes evenly (no zeroed or repeated part of the pool handed out)', () => {
    const hex = Array.from({ length: 2000 }, () => randomHex(24)).join('');
    const counts = new Map<string, number>();
    for (const c of hex) counts.set(c, (counts.get(c) ?? 0) + 1);
    // 96,000 hex digits: each of the 16 expected 6,000 times; a zeroed draw would skew '0'.
    for (const c of '0123456789abcdef') expect(Math.abs((counts.get(c) ?? 0) - 6000)).toBeLessThan(600);
  });
});
