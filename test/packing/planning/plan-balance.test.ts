import { planShards } from '../../../lambda/packing/planning/plan-shards';
import type { ShardPlan, SourceFile } from '../../../lambda/packing/planning/plan-types';
import { KIB, MIB, TestSequence, uniformFiles } from './synthetic-files';

function byteRatio(plan: ShardPlan): number {
  const bytes = plan.shards.map((shard) => shard.bytes);
  return Math.max(...bytes) / Math.min(...bytes);
}

function countSpread(plan: ShardPlan): number {
  const counts = plan.shards.map((shard) => shard.records.length);
  return Math.max(...counts) - Math.min(...counts);
}

describe('planShards balance', () => {
  test('100,000 files of 2–8 KB in 8 shards: bytes within 1.1 and record counts within one', () => {
    // GIVEN
    const listed = uniformFiles(100_000, 2000, 8000);

    // WHEN
    const plan = planShards(listed, { seed: 2024 });

    // THEN
    expect(plan.shards).toHaveLength(8);
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.1);
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.001);
    expect(countSpread(plan)).toBeLessThanOrEqual(1);
  });

  test('20,000 files of about 150 KB: bytes within 1.1 and record counts within one', () => {
    // GIVEN
    const listed = uniformFiles(20_000, 100 * KIB, 200 * KIB);

    // WHEN
    const plan = planShards(listed, { seed: 2024 });

    // THEN
    expect(plan.shards.length).toBeGreaterThanOrEqual(40);
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.1);
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.01);
    expect(countSpread(plan)).toBeLessThanOrEqual(1);
  });

  test('a heavy-tailed size mix stays within 1.1 in bytes and 1.1 in record counts', () => {
    // GIVEN lognormal sizes around 110 KB (like ImageNet JPEGs), some over 2 MiB
    const sequence = new TestSequence(5);
    const listed: SourceFile[] = [];
    for (let i = 0; i < 100_000; i++) {
      const normal = Math.sqrt(-2 * Math.log(1 - sequence.next())) * Math.cos(2 * Math.PI * sequence.next());
      listed.push({ key: `c${i % 50}/${i}.jpg`, size: Math.round(110_000 * Math.exp(0.8 * normal - 0.32)) });
    }

    // WHEN
    const plan = planShards(listed, { seed: 9, consumers: 16 });

    // THEN
    const counts = plan.shards.map((shard) => shard.records.length);
    expect(plan.shards.length % 16).toBe(0);
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.1);
    expect(Math.max(...counts) / Math.min(...counts)).toBeLessThanOrEqual(1.1);
  });

  test('a few files of tens of MiB among small ones do not unbalance the bytes', () => {
    // GIVEN
    const sequence = new TestSequence(3);
    const listed: SourceFile[] = uniformFiles(50_000, 1 * KIB, 20 * KIB);
    for (let i = 0; i < 40; i++) listed.push({ key: `big/${i}.bin`, size: sequence.integer(1, 40 * MIB) });

    // WHEN
    const plan = planShards(listed, { seed: 1 });

    // THEN
    expect(byteRatio(plan)).toBeLessThanOrEqual(1.05);
  });

  test('which files share a shard follows the shuffle, not size or class: every shard holds every class about equally', () => {
    // GIVEN 10 classes whose file sizes differ by class (class 9 files are ten times class 0 files)
    const listed: SourceFile[] = [];
    for (let i = 0; i < 20_000; i++) listed.push({ key: `class-${i % 10}/${i}.jpg`, size: 1000 * (1 + (i % 10)) });

    // WHEN
    const plan = planShards(listed, { seed: 77, shardCount: 8 });

    // THEN each shard holds 2,500 files, about 250 per class
    for (const shard of plan.shards) {
      const perClass = new Array(10).fill(0);
      for (const record of shard.records) perClass[record.label]++;
      expect(Math.min(...perClass)).toBeGreaterThan(180);
      expect(Math.max(...perClass)).toBeLessThan(320);
    }
  });
});
