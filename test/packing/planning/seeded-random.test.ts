import { SeededRandom } from '../../../lambda/packing/planning/seeded-random';

describe('SeededRandom', () => {
  // Outputs of the reference C code (prng.di.unimi.it xoshiro128starstar.c seeded with two
  // outputs of splitmix64.c: s[0..1] = low/high words of the first, s[2..3] of the second).
  test.each([
    [0, [3737715805, 2584255861, 2876756834, 3286328325, 1553311962]],
    [1, [1695105466, 1423115009, 634581793, 1068227753, 716759206]],
    [42, [1776835114, 4165204688, 17111135, 2317295270, 2792088233]],
    [2 ** 32 - 1, [331202089, 2303545133, 2732085799, 1755962312, 20464611]],
    [2 ** 32, [3857403066, 3761880522, 2833589495, 1190737128, 4014693229]],
    [Number.MAX_SAFE_INTEGER, [1233166643, 1287031142, 661813442, 2960669951, 2601079046]],
  ])('seed %p draws the reference C outputs', (seed, expected) => {
    // WHEN
    const random = new SeededRandom(seed);

    // THEN
    expect(expected.map(() => random.nextUint32())).toEqual(expected);
  });

  test('nextBelow stays in range and is close to uniform', () => {
    // GIVEN
    const random = new SeededRandom(5);
    const counts = new Array(6).fill(0);

    // WHEN
    for (let i = 0; i < 60_000; i++) counts[random.nextBelow(6)]++;

    // THEN each face about 10,000 (5 standard deviations ≈ 456)
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(456);
  });

  test('nextBelow accepts the full range of bounds', () => {
    const random = new SeededRandom(1);
    expect(random.nextBelow(1)).toBe(0);
    const big = random.nextBelow(2 ** 32);
    expect(Number.isInteger(big) && big >= 0 && big < 2 ** 32).toBe(true);
  });

  test('shuffle permutes: every value once, and each value lands everywhere about equally often', () => {
    // GIVEN
    const random = new SeededRandom(123);
    const landed = Array.from({ length: 4 }, () => new Array(4).fill(0));

    // WHEN
    for (let trial = 0; trial < 24_000; trial++) {
      const values = Uint32Array.of(0, 1, 2, 3);
      random.shuffle(values);
      expect([...values].sort()).toEqual([0, 1, 2, 3]);
      values.forEach((value, position) => landed[value][position]++);
    }

    // THEN each (value, position) about 6,000 (5 standard deviations ≈ 335)
    for (const row of landed) for (const count of row) expect(Math.abs(count - 6000)).toBeLessThan(335);
  });

  test('the same seed gives the same shuffle; another seed another one', () => {
    const shuffled = (seed: number) => {
      const values = Uint32Array.from({ length: 100 }, (_, i) => i);
      new SeededRandom(seed).shuffle(values);
      return [...values];
    };
    expect(shuffled(8)).toEqual(shuffled(8));
    expect(shuffled(8)).not.toEqual(shuffled(9));
  });
});
