import { describe, expect, it } from 'vitest';
import {
  isNewerVersion,
  versionCompare,
  versionSatisfies,
} from '../../src/modules/releases/version-compare.js';

/**
 * Expected results are PHP's own: each row was produced by PHP 8.2's version_compare($a, $b).
 * Rows cover canonicalisation (separators, transitions, repeated and trailing dots), every special
 * form and its aliases, prefix matching of forms, numbers against forms, and uneven lengths.
 */
const PHP_TABLE: ReadonlyArray<readonly [string, string, -1 | 0 | 1]> = [
  ['1.0', '1.0.0', -1],
  ['1.0.0', '1.0', 1],
  ['1.0', '1.0', 0],
  ['1', '1.0', -1],
  ['5.2', '5.2.0', -1],
  ['1.0rc1', '1.0', -1],
  ['1.0', '1.0rc1', 1],
  ['1.0rc1', '1.0RC1', 0],
  ['1.0-rc1', '1.0rc1', 0],
  ['1.0rc1', '1.0rc2', -1],
  ['1.0-beta', '1.0', -1],
  ['1.0-beta', '1.0-alpha', 1],
  ['1.0b1', '1.0beta1', 0],
  ['1.0a1', '1.0alpha1', 0],
  ['1.0a', '1.0b', -1],
  ['1.0-dev', '1.0-alpha', -1],
  ['1.0-dev', '1.0', -1],
  ['1.0.0-dev', '1.0.0', -1],
  ['1.0pl1', '1.0', 1],
  ['1.0pl1', '1.0.1', 1],
  ['1.0p1', '1.0pl1', 0],
  ['1.0pl1', '1.0rc1', 1],
  ['1.0#1', '1.0', 1],
  ['1.0#1', '1.0.1', 1],
  ['1.0#1', '1.0pl1', -1],
  ['#', '1', 0],
  ['#', 'dev', 1],
  ['dev', 'alpha', -1],
  ['alpha', 'beta', -1],
  ['beta', 'RC', -1],
  ['RC', 'rc', 0],
  ['rc', '#', -1],
  ['#', 'pl', -1],
  ['pl', 'p', 0],
  ['foo', 'dev', -1],
  ['foo', 'bar', -1],
  ['1.0foo', '1.0', -1],
  ['1.0foo', '1.0dev', -1],
  ['1.01', '1.1', 0],
  ['1.10', '1.9', 1],
  ['1.0.10', '1.0.9', 1],
  ['01.02', '1.2', 0],
  ['1.0_1', '1.0.1', 0],
  ['1.0+1', '1.0.1', 0],
  ['1.0-1', '1.0.1', 0],
  ['1.0..1', '1.0.1', 0],
  ['1.0.', '1.0', -1],
  ['1.0', '1.0.', 1],
  ['', '1', -1],
  ['1', '', 1],
  ['', '', 0],
  ['1.2.3', '1.2.3', 0],
  ['2', '10', -1],
  ['1.0.0', '1.0.0.0', -1],
  ['1.0alpha', '1.0a', 0],
  ['1.0RC', '1.0rc', 0],
  ['1.0devel', '1.0dev', 0],
  ['1.0d', '1.0', -1],
  ['1.0d', '1.0dev', -1],
  ['1.0.0-beta.2', '1.0.0-beta.11', -1],
  ['1.0.0-alpha', '1.0.0-alpha.1', -1],
  ['1.0.0-rc.1', '1.0.0', -1],
  ['1.0.0+build', '1.0.0', -1],
  ['2.0.0-rc1', '1.9.9', 1],
  ['10.0', '9.9.9', 1],
  ['1.2.3-p1', '1.2.3', 1],
  ['1.2.3-patch1', '1.2.3', 1],
  ['1.2.3-beta', '1.2.3-b', 0],
  ['3.0.0~beta1', '3.0.0', -1],
  ['1.0 beta', '1.0-beta', -1],
  ['v1.0', '1.0', -1],
  ['v1.0', 'v1.1', -1],
  ['1.0a1', '1.0a', 1],
  ['1.0-RC1', '1.0-rc2', -1],
  ['0.9', '0.10', -1],
  ['1.a', '1.0', -1],
  ['1a', '1.0', -1],
  ['1.0.0', '1.0.0-pl', -1],
  ['99999999999999999999', '99999999999999999998', 0],
  ['1.0.0.0.1', '1.0.0', 1],
  ['1.0-alpha', '1.0-alpha1', -1],
  ['1.0-dev1', '1.0-dev', 1],
  ['5.3.0-dev', '5.3.0', -1],
  ['5.3.0RC1', '5.3.0', -1],
  ['1#', '1', 0],
  ['1#', '1.0', 0],
];

describe('version_compare has PHP semantics', () => {
  it(`the table has at least 60 pairs (${PHP_TABLE.length})`, () => {
    expect(PHP_TABLE.length).toBeGreaterThanOrEqual(60);
  });

  it.each(PHP_TABLE)('version_compare(%j, %j) is %i as in PHP', (a, b, expected) => {
    expect(versionCompare(a, b)).toBe(expected);
    // Antisymmetry holds for every row PHP gives; the trailing-dot rows are PHP's own exception.
    if (!a.endsWith('.') && !b.endsWith('.')) expect(versionCompare(b, a)).toBe(-expected || 0);
  });

  it('operators follow the comparison', () => {
    expect(versionSatisfies('1.0rc1', '1.0', '>=')).toBe(false);
    expect(versionSatisfies('1.0rc1', '1.0', 'lt')).toBe(true);
    expect(versionSatisfies('1.0', '1.0.0', '<')).toBe(true);
    expect(versionSatisfies('1.01', '1.1', 'eq')).toBe(true);
    expect(versionSatisfies('1.01', '1.1', '!=')).toBe(false);
    expect(versionSatisfies('1.0pl1', '1.0', 'gt')).toBe(true);
    expect(versionSatisfies('2.0', '2.0', 'le')).toBe(true);
    expect(versionSatisfies('2.0', '2.0', 'ge')).toBe(true);
    expect(versionSatisfies('2.0', '2.1', '<>')).toBe(true);
  });

  it('newer-than is strict', () => {
    expect(isNewerVersion('1.0.1', '1.0')).toBe(true);
    expect(isNewerVersion('1.0', '1.0')).toBe(false);
    expect(isNewerVersion('1.0rc1', '1.0')).toBe(false);
  });

  it('newer-than answers the same when asked again, and past its memory of 1,000 pairs', () => {
    const versions = ['1.0', '1.0rc1', '1.0-dev', '1.0pl1', '1.0.1', '1.0-beta', '1.0a1', '0.9', '1.0.0'];
    for (let round = 0; round < 3; round++) {
      for (const a of versions) {
        for (const b of versions) expect(isNewerVersion(a, b)).toBe(versionCompare(a, b) === 1);
      }
      // More distinct pairs than it remembers, with a separator character inside a version.
      for (let i = 0; i < 1200; i++) {
        expect(isNewerVersion(`2.${i + 1}`, `2.${i + round}`)).toBe(round === 0);
        expect(isNewerVersion('1.0', `\u00001.${i}`)).toBe(versionCompare('1.0', `\u00001.${i}`) === 1);
      }
    }
  });

  it('sorting a release list gives PHP order', () => {
    const versions = ['1.0', '1.0rc1', '1.0-dev', '1.0pl1', '1.0.1', '1.0-beta', '1.0a1', '0.9'];
    expect([...versions].sort(versionCompare)).toEqual([
      '0.9',
      '1.0-dev',
      '1.0a1',
      '1.0-beta',
      '1.0rc1',
      '1.0',
      '1.0.1',
      '1.0pl1',
    ]);
  });
});
