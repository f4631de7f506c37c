import { shardLayout } from '../../lib/planning/private/shard-rules';

const MIB = 2 ** 20;

describe('shard rules', () => {
  test.each<[string, number, number, number, number]>([
    ['one shard at least', 1000, 10, 1, 1],
    ['ceil(bytes / target)', 10 * 64 * MIB + 1, 1000, 1, 11],
    ['rounded up to a multiple of the consumers', 10 * 64 * MIB, 1000, 4, 12],
    ['rounded down to a multiple when up would pass the objects', 10 * 64 * MIB, 14, 4, 12],
    ['at most the objects when there are fewer than consumers', 10 * 64 * MIB, 3, 4, 3],
  ])('%s', (_what, bytes, objects, consumers, count) => {
    // WHEN
    const layout = shardLayout(bytes, objects, consumers, 64 * MIB);

    // THEN
    expect(layout.count).toBe(count);
    expect(layout.meanBytes).toBeCloseTo(bytes / count);
    expect(layout.enoughObjects).toBe(objects >= consumers);
  });
});
