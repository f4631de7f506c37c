import { compareCodePointOrder, sortByKeyInCodePointOrder } from '../../lambda/io/key-order';
import { reordered } from '../packing/planning/synthetic-files';

/** Reference order: the UTF-8 bytes of the keys, compared as bytes (what S3 lists by). */
function byUtf8Bytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function keyed(keys: readonly string[]): Array<{ key: string }> {
  return keys.map((key) => ({ key }));
}

describe('compareCodePointOrder', () => {
  test.each([
    ['a', 'b'],
    ['a', 'ab'],
    ['Z', 'a'],
    ['a/b', 'a-b'],
    ['é', '～'],
    ['～', '😀'],
    ['\ue000', '\u{10000}'],
    ['x😀', 'x\uffff'],
  ])('orders %p and %p as their UTF-8 bytes do', (a, b) => {
    expect(Math.sign(compareCodePointOrder(a, b))).toBe(byUtf8Bytes(a, b));
    expect(Math.sign(compareCodePointOrder(b, a))).toBe(byUtf8Bytes(b, a));
  });

  test('is 0 only for equal strings', () => {
    expect(compareCodePointOrder('cat/1 2.jpg', 'cat/1 2.jpg')).toBe(0);
    expect(compareCodePointOrder('cat/1', 'cat/1 ')).not.toBe(0);
  });
});

describe('sortByKeyInCodePointOrder', () => {
  const asciiKeys = Array.from({ length: 20_000 }, (_, i) => `class-${i % 37}/img ${String((i * 7919) % 20_000).padStart(5, '0')}.jpg`);
  const unicodeKeys = asciiKeys.map((key, i) => (i % 3 === 0 ? `😀${key}` : i % 3 === 1 ? `～${key}` : `é${key}`));

  test.each([
    ['ascii keys, shuffled (samplesort)', reordered(asciiKeys, 1)],
    ['keys with surrogate pairs, shuffled (samplesort)', reordered(unicodeKeys, 2)],
    ['already sorted', [...asciiKeys].sort(byUtf8Bytes)],
    ['two sorted runs (merged by the engine sort)', [...asciiKeys.slice(0, 9000).sort(byUtf8Bytes), ...asciiKeys.slice(9000).sort(byUtf8Bytes)]],
    ['reversed', [...asciiKeys].sort(byUtf8Bytes).reverse()],
    ['a short list', reordered(unicodeKeys.slice(0, 50), 3)],
  ])('%s: sorts as UTF-8 bytes do, without changing the input', (_name, keys) => {
    // GIVEN
    const items = keyed(keys);
    const before = items.slice();

    // WHEN
    const sorted = sortByKeyInCodePointOrder(items);

    // THEN
    expect(sorted.map((item) => item.key)).toEqual([...keys].sort(byUtf8Bytes));
    expect(items).toEqual(before);
    expect(new Set(sorted)).toEqual(new Set(items));
  });

  test('equal keys end up next to each other, also through the samplesort', () => {
    // GIVEN
    const keys = reordered([...asciiKeys, asciiKeys[123], asciiKeys[123], asciiKeys[9999]], 4);

    // WHEN
    const sorted = sortByKeyInCodePointOrder(keyed(keys)).map((item) => item.key);

    // THEN
    expect(sorted).toEqual([...keys].sort(byUtf8Bytes));
    const at = sorted.indexOf(asciiKeys[123]);
    expect(sorted.slice(at, at + 3)).toEqual([asciiKeys[123], asciiKeys[123], asciiKeys[123]]);
  });
});
