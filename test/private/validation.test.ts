import { Lazy, Size } from 'aws-cdk-lib';
import { validateKeyPrefix, validateMebibytes, validateWholeNumber } from '../../lib/private/validation';

describe('shared validators', () => {
  test.each<[number, boolean]>([[0, false], [1, true], [10, true], [11, false], [1.5, false], [Number.NaN, false]])(
    'validateWholeNumber from 1 to 10: %s passes: %s', (value, passes) => {
      const check = () => validateWholeNumber(undefined, 'InvalidShardCount', 'shardCount', value, 1, 10);
      if (passes) expect(check).not.toThrow();
      else expect(check).toThrow(`[InvalidShardCount] shardCount must be a whole number between 1 and 10, got ${value}`);
    });

  test.each<[string, boolean]>([
    ['', true], ['raw/', true], ['raw/train/', true],
    ['raw', false], ['/raw/', false], ['raw//train/', false], [`${'a'.repeat(1024)}/`, false],
  ])('validateKeyPrefix %j passes: %s', (prefix, passes) => {
    const check = () => validateKeyPrefix(undefined, 'InvalidPrefix', 'sourcePrefix', prefix, 'the packer lists it');
    if (passes) expect(check).not.toThrow();
    else expect(check).toThrow(/^\[InvalidPrefix\] sourcePrefix must be empty or a key prefix ending in '\/'.*; the packer lists it$/);
  });

  test.each<[Size, boolean]>([
    [Size.mebibytes(127), false], [Size.mebibytes(128), true], [Size.mebibytes(10240), true], [Size.mebibytes(10241), false],
    [Size.kibibytes(128 * 1024 + 1), false],
  ])('validateMebibytes from 128 to 10240 MiB: %s passes: %s', (size, passes) => {
    const check = () => validateMebibytes(undefined, 'InvalidMemorySize', 'packerMemorySize', size, 128, 10240);
    if (passes) expect(check).not.toThrow();
    else expect(check).toThrow(/^\[InvalidMemorySize\] packerMemorySize must be a whole number of MiB between 128 MiB and 10240 MiB, got/);
  });

  test('skip values known only at deploy time, and absent ones', () => {
    const token = Lazy.number({ produce: () => 0 });
    expect(() => validateWholeNumber(undefined, 'InvalidShardCount', 'shardCount', token, 1, 10)).not.toThrow();
    expect(() => validateWholeNumber(undefined, 'InvalidShardCount', 'shardCount', undefined, 1, 10)).not.toThrow();
    expect(() => validateKeyPrefix(undefined, 'InvalidPrefix', 'sourcePrefix', Lazy.string({ produce: () => '/' }))).not.toThrow();
    expect(() => validateMebibytes(undefined, 'InvalidMemorySize', 'packerMemorySize', Size.mebibytes(token), 128, 10240)).not.toThrow();
  });
});
