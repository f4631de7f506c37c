import { stableSortByKey } from '../../../lambda/packing/planning/stable-sort-by-key';
import { TestSequence } from './synthetic-files';

/** The reference: Array.prototype.sort is stable. */
function referenceOrder(indices: readonly number[], keys: Float64Array): number[] {
  return [...indices].sort((a, b) => keys[a] - keys[b]);
}

describe('stableSortByKey', () => {
  test.each([
    ['short (merge sort), few distinct keys', 300, 0, 5],
    ['long (radix sort), few distinct keys', 5000, 0, 5],
    ['long, keys spanning 2^40 (several radix passes)', 5000, 0, 2 ** 40],
    ['long, keys spanning more than 2^32 near 2^53', 5000, 2 ** 52, 2 ** 52 + 2 ** 35],
    ['long, negative keys (descending sizes)', 5000, -(2 ** 30), 0],
    ['long, all keys equal', 2000, 7, 7],
  ])('%s: sorts by key, equal keys in input order', (_name, length, min, max) => {
    // GIVEN keys indexed by the values being sorted, passed in a scrambled order
    const sequence = new TestSequence(length);
    const keys = Float64Array.from({ length }, () => min + Math.floor(sequence.next() * (max - min + 1)));
    const input = Array.from({ length }, (_, i) => (i * 7919) % length);
    const indices = Uint32Array.from(input);

    // WHEN
    stableSortByKey(indices, length, keys, new Uint32Array(length));

    // THEN
    expect([...indices]).toEqual(referenceOrder(input, keys));
  });

  test('sorts only the first length entries', () => {
    // GIVEN
    const keys = Float64Array.of(3, 2, 1, 0);
    const indices = Uint32Array.of(0, 1, 2, 3);

    // WHEN
    stableSortByKey(indices, 3, keys, new Uint32Array(3));

    // THEN
    expect([...indices]).toEqual([2, 1, 0, 3]);
  });
});
