import { describe, expect, it } from 'vitest';
import { PhpUnserializeError, phpUnserialize, tryPhpUnserialize } from '../../src/modules/imports/php.js';

describe('phpUnserialize', () => {
  it('reads arrays, strings (lengths in bytes), integers, floats, booleans and null', () => {
    expect(
      phpUnserialize(
        'a:2:{i:1;a:2:{s:4:"name";s:10:"Agency ∞";s:6:"amount";d:19.5;}s:1:"x";a:3:{i:0;b:1;i:1;N;i:2;i:-7;}}',
      ),
    ).toEqual({
      '1': { name: 'Agency ∞', amount: 19.5 },
      x: { '0': true, '1': null, '2': -7 },
    });
  });

  it('refuses objects, wrong lengths, trailing bytes and deep nesting', () => {
    for (const bad of [
      'O:8:"stdClass":0:{}',
      'C:11:"ArrayObject":0:{}',
      's:5:"abc";',
      's:3:"abc";x',
      'a:1:{i:0;s:1:"a";',
      `${'a:1:{i:0;'.repeat(40)}N;${'}'.repeat(40)}`,
      '',
    ]) {
      expect(() => phpUnserialize(bad), bad).toThrow(PhpUnserializeError);
      expect(tryPhpUnserialize(bad)).toBeNull();
    }
  });
});
