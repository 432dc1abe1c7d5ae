import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../src/bounded-map.js';

describe('BoundedMap', () => {
  it('holds at most its size, forgetting the oldest entry first', () => {
    const map = new BoundedMap<string, number>(3);
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ] as const)
      map.set(k, v);
    expect([...map]).toEqual([
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ]);
  });

  it('replaces a key it holds without forgetting another; deleted and set again, a key is the newest', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 10);
    expect([...map]).toEqual([
      ['a', 10],
      ['b', 2],
    ]);
    map.delete('a');
    map.set('a', 11);
    map.set('c', 3);
    expect([...map]).toEqual([
      ['a', 11],
      ['c', 3],
    ]);
  });

  it('keeps forgetting the oldest first through many evictions, deletions, moves and a clear (against a plain list)', () => {
    const map = new BoundedMap<number, number>(50);
    let order: number[] = [];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 20_000; step++) {
      const key = random(200);
      const action = random(10);
      if (step === 10_000) {
        map.clear();
        order = [];
      } else if (action < 2) {
        map.delete(key);
        order = order.filter((k) => k !== key);
      } else if (action < 4 && map.has(key)) {
        // Deleted and set again: the newest.
        map.delete(key);
        map.set(key, step);
        order = [...order.filter((k) => k !== key), key];
      } else {
        map.set(key, step);
        if (!order.includes(key)) {
          order.push(key);
          if (order.length > 50) order.shift();
        }
      }
      expect(map.size).toBe(order.length);
    }
    expect([...map.keys()]).toEqual(order);
  });
});
