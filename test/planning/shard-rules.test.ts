import { DEFAULT_SHARD_BYTES, MAX_SHARD_BYTES, MIN_SHARD_BYTES, shardLayout } from '../../lib/planning/private/shard-rules';
import { DEFAULT_TARGET_SHARD_BYTES, MAX_TARGET_SHARD_BYTES, MIN_TARGET_SHARD_BYTES } from '../../lambda/packing/planning/plan-shards';

const MIB = 2 ** 20;

describe('shard rules', () => {
  test('the planner plans with the packer\'s limits and default (lib/ cannot import lambda/)', () => {
    expect([MIN_SHARD_BYTES, DEFAULT_SHARD_BYTES, MAX_SHARD_BYTES]).toEqual([MIN_TARGET_SHARD_BYTES, DEFAULT_TARGET_SHARD_BYTES, MAX_TARGET_SHARD_BYTES]);
  });

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
