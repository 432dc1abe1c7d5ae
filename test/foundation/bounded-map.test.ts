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
});
