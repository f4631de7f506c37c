import type { PlanLimits } from '../../../lambda/packing/planning/grouped-plan';
import { GroupedPlan, PLAN_LIMITS } from '../../../lambda/packing/planning/grouped-plan';
import { labelByFolder } from '../../../lambda/packing/planning/label-map';
import { planShards } from '../../../lambda/packing/planning/plan-shards';
import { MAX_SHARD_BYTES } from '../../../lib/contract/shard-limits';
import type { ShardPlan, SourceFile } from '../../../lambda/packing/planning/plan-types';
import { KIB, MIB, reordered, uniformFiles } from './synthetic-files';

/** Small groups, so that grouped planning shows on listings a test can afford. */
const SMALL: PlanLimits = { groupFiles: 1000, maxAverageShardRecords: 1000 };

function byteRatio(plan: ShardPlan): number {
  const bytes = plan.shards.map((shard) => shard.bytes);
  return Math.max(...bytes) / Math.min(...bytes);
}

function expectEveryFileOnce(plan: ShardPlan, listed: readonly SourceFile[]): void {
  const keys = plan.shards.flatMap((shard) => shard.records.map((record) => record.key));
  expect(keys).toHaveLength(listed.length);
  expect(new Set(keys)).toEqual(new Set(listed.map((file) => file.key)));
}

describe('grouped planning', () => {
  test('a listing above the group size: every file once, shards and record ids numbered consecutively', () => {
    // GIVEN
    const listed = uniformFiles(20_000, 2 * KIB, 8 * KIB);

    // WHEN
    const plan = planShards(listed, { seed: 3, targetShardBytes: 1 * MIB }, SMALL);

    // THEN
    expectEveryFileOnce(plan, listed);
    expect(plan.shards.map((shard) => shard.index)).toEqual(plan.shards.map((_, i) => i));
    expect(plan.shards[0].name).toBe(`part-00000-of-${String(plan.shards.length).padStart(5, '0')}`);
    const ids = plan.shards.flatMap((shard) => shard.records.map((record) => record.recordId));
    expect(ids).toEqual(ids.map((_, i) => i));
    expect(plan.totalFiles).toBe(20_000);
  });

  test('groups are planned, not whole: the plan differs from the whole-listing plan of the same seed', () => {
    // GIVEN
    const listed = uniformFiles(5000, 2 * KIB, 8 * KIB);

    // WHEN
    const grouped = planShards(listed, { seed: 3, shardCount: 10 }, SMALL);
    const whole = planShards(listed, { seed: 3, shardCount: 10 });

    // THEN
    expect(grouped.shards).toHaveLength(10);
    expect(grouped.shards[0].records.map((r) => r.key)).not.toEqual(whole.shards[0].records.map((r) => r.key));
  });

  test('deterministic: the same files in any order give a deep-equal plan; another seed another one', () => {
    // GIVEN
    const listed = uniformFiles(8000, 1 * KIB, 64 * KIB);
    const options = { seed: 11, targetShardBytes: 4 * MIB, consumers: 3 };

    // WHEN
    const plans = [listed, listed.slice().reverse(), reordered(listed, 5)].map((order) => planShards(order, options, SMALL));
    const otherSeed = planShards(listed, { ...options, seed: 12 }, SMALL);

    // THEN
    expect(plans[1]).toEqual(plans[0]);
    expect(plans[2]).toEqual(plans[0]);
    expect(otherSeed.shards[0].records.map((r) => r.key)).not.toEqual(plans[0].shards[0].records.map((r) => r.key));
  });

  test('balanced across groups of 20,000 files: bytes within 1.1 of each other, shard count a multiple of consumers', () => {
    // GIVEN: a group's share of the bytes varies by ~1/√(its files): ~0.8 % here, 3 % with groups of 1,000
    const listed = uniformFiles(100_000, 2 * KIB, 8 * KIB);

    // WHEN
    const plan = planShards(listed, { seed: 2024, targetShardBytes: 2 * MIB, consumers: 4 }, { groupFiles: 20_000, maxAverageShardRecords: 20_000 });

    // THEN
    expect(plan.shards).toHaveLength(248); // 488 MiB / 2 MiB, a multiple of 4: 8 groups of 31
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.1);
  });

  test('shards are random samples of the whole listing, not runs of neighbouring keys', () => {
    // GIVEN: 20 classes, keys sorted class by class
    const listed = uniformFiles(20_000, 2 * KIB, 8 * KIB, { classes: 20 });

    // WHEN
    const plan = planShards(listed, { seed: 1, targetShardBytes: 2 * MIB }, SMALL);

    // THEN: every shard holds files of every class
    for (const shard of plan.shards) {
      expect(new Set(shard.records.map((record) => record.label)).size).toBe(20);
    }
  });

  test('labels are the whole listing\'s classes, numbered as for a whole plan', () => {
    // GIVEN
    const listed = uniformFiles(6000, 1 * KIB, 4 * KIB, { classes: 7 });
    const expected = labelByFolder(listed.slice().sort((a, b) => (a.key < b.key ? -1 : 1))).labelMap;

    // WHEN
    const plan = planShards(listed, { seed: 9, targetShardBytes: 1 * MIB }, SMALL);

    // THEN
    expect(plan.labelMap).toEqual(expected);
    for (const record of plan.shards.flatMap((shard) => shard.records)) {
      expect(record.label).toBe(expected[record.key.split('/')[0]]);
    }
  });

  test('many tiny files: the shard count grows so that shards average at most the record limit', () => {
    // GIVEN: 5,000 files of 100 bytes, 0.5 MB in all: one shard by size
    const listed = uniformFiles(5000, 100, 100);

    // WHEN
    const plan = planShards(listed, { seed: 1 }, SMALL);

    // THEN
    expect(plan.shards).toHaveLength(5);
    expectEveryFileOnce(plan, listed);
    expect(Math.max(...plan.shards.map((shard) => shard.records.length))).toBeLessThanOrEqual(1100);
  });

  test('a group that needs more shards to stay within 128 MiB gives every group that many', () => {
    // GIVEN: 4,000 files of 40–60 KB plus 40 files of 100 MiB, asked for 16 shards of 1 GiB each on average
    const listed = [...uniformFiles(4000, 40 * KIB, 60 * KIB), ...Array.from({ length: 40 }, (_, i) => ({ key: `big/${i}.bin`, size: 100 * MIB }))];

    // WHEN
    const plan = planShards(listed, { seed: 4, shardCount: 16, consumers: 2 }, SMALL);

    // THEN
    expectEveryFileOnce(plan, listed);
    expect(plan.shards.length).toBeGreaterThan(16);
    expect(plan.shards.length % 2).toBe(0);
    for (const shard of plan.shards) {
      if (shard.records.length > 1) expect(shard.bytes).toBeLessThanOrEqual(MAX_SHARD_BYTES);
    }
  });

  test('few files per shard: the listing is planned whole, as without the group limit', () => {
    // GIVEN: 3,000 files for 1,000 shards
    const listed = uniformFiles(3000, 1 * KIB, 2 * KIB);

    // WHEN
    const plan = planShards(listed, { seed: 5, shardCount: 1000 }, SMALL);

    // THEN
    expect(plan).toEqual(planShards(listed, { seed: 5, shardCount: 1000 }));
  });

  test('the layout: the fewest groups within the limit, up to twice as many to keep the shard count, else more shards', () => {
    // GIVEN / WHEN: 10,000 files in groups of at most 1,000 need at least 10 groups
    const layouts = [
      GroupedPlan.of(10_000, 1, 40, 1, SMALL), // 10 groups of 4 shards
      GroupedPlan.of(10_000, 1, 12, 1, SMALL), // 12 of 1
      GroupedPlan.of(10_000, 1, 13, 1, SMALL), // 13 of 1
      GroupedPlan.of(10_000, 1, 41, 1, SMALL), // prime beyond 20: 10 groups of 5, 50 shards
      GroupedPlan.of(10_000, 1, 44, 4, SMALL), // 11 of 4
      GroupedPlan.of(10_000, 1, 92, 4, SMALL), // no divisor in 10..20: 10 groups of 10 (a multiple of 4 / gcd(10, 4))
      GroupedPlan.of(1000, 1, 13, 1, SMALL), // within the limit: whole
    ];

    // THEN
    expect(layouts.map((layout) => layout && [layout.groupCount, layout.shardCount])).toEqual([
      [10, 40], [12, 12], [13, 13], [10, 50], [11, 44], [10, 100], undefined,
    ]);
  });

  test('keys spread evenly over groups, whatever their shape', () => {
    // GIVEN
    const layout = GroupedPlan.of(100_000, 77, 100, 1, SMALL)!;
    const keys = Array.from({ length: 100_000 }, (_, i) => `n${String(i).padStart(6, '0')}/x.jpg`);

    // WHEN
    const counts = new Array<number>(layout.groupCount).fill(0);
    for (const key of keys) counts[layout.groupOf(key)]++;

    // THEN: 1,000 expected per group, standard deviation ~32
    expect(layout.groupCount).toBe(100);
    expect(Math.min(...counts)).toBeGreaterThan(850);
    expect(Math.max(...counts)).toBeLessThan(1150);
  });

  test('the default limits: 131,072 files are planned whole, one more in groups', () => {
    expect(PLAN_LIMITS.groupFiles).toBe(131_072);
    expect(GroupedPlan.of(131_072, 1, 8, 1, PLAN_LIMITS)).toBeUndefined();
    expect(GroupedPlan.of(131_073, 1, 8, 1, PLAN_LIMITS)?.groupCount).toBe(2);
  });
});
