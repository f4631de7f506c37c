import { compareCodePointOrder } from '../../../lambda/io/key-order';
import { planShards, PlanError } from '../../../lambda/packing/planning/plan-shards';
import { MAX_SHARD_BYTES } from '../../../lib/contract/shard-limits';
import type { PlanOptions, ShardPlan, SourceFile } from '../../../lambda/packing/planning/plan-types';
import { SeededRandom } from '../../../lambda/packing/planning/seeded-random';
import { KIB, MIB, reordered, uniformFiles } from './synthetic-files';

function keysInWriteOrder(plan: ShardPlan): string[] {
  return plan.shards.flatMap((shard) => shard.records.map((record) => record.key));
}

function recordCounts(plan: ShardPlan): number[] {
  return plan.shards.map((shard) => shard.records.length);
}

function files(...entries: Array<[string, number]>): SourceFile[] {
  return entries.map(([key, size]) => ({ key, size }));
}

/** `count` files of `size` bytes each, in one class folder. */
function sameSize(count: number, size: number): SourceFile[] {
  return Array.from({ length: count }, (_, i) => ({ key: `c/${String(i).padStart(6, '0')}.jpg`, size }));
}

describe('planShards', () => {
  describe('determinism', () => {
    test('the same files in any order with the same seed give a deep-equal plan', () => {
      // GIVEN
      const listed = uniformFiles(5000, 1 * KIB, 900 * KIB);
      const options: PlanOptions = { seed: 7, targetShardBytes: 16 * MIB };

      // WHEN
      const plans = [listed, listed.slice().reverse(), reordered(listed, 1), reordered(listed, 2)].map((order) => planShards(order, options));

      // THEN
      expect(plans[0].shards.length).toBeGreaterThan(100);
      for (const plan of plans.slice(1)) {
        expect(plan).toEqual(plans[0]);
      }
    });

    test('a different seed gives a different write order and different shard members', () => {
      // GIVEN
      const listed = uniformFiles(2000, 1 * KIB, 100 * KIB);

      // WHEN
      const first = planShards(listed, { seed: 1, shardCount: 8 });
      const second = planShards(listed, { seed: 2, shardCount: 8 });

      // THEN
      expect(keysInWriteOrder(second)).not.toEqual(keysInWriteOrder(first));
      expect(second.shards[0].records.map((r) => r.key).sort()).not.toEqual(first.shards[0].records.map((r) => r.key).sort());
    });

    test('seeds above 2^32 are distinct seeds, not taken modulo 2^32', () => {
      // GIVEN
      const listed = uniformFiles(500, 1 * KIB, 100 * KIB);

      // WHEN
      const low = planShards(listed, { seed: 5, shardCount: 4 });
      const high = planShards(listed, { seed: 2 ** 32 + 5, shardCount: 4 });

      // THEN
      expect(keysInWriteOrder(high)).not.toEqual(keysInWriteOrder(low));
      expect(high.seed).toBe(2 ** 32 + 5);
    });

    test('records are written in the seeded shuffle order of the key-sorted files', () => {
      // GIVEN
      const listed = uniformFiles(3000, 1 * KIB, 50 * KIB);
      const seed = 99;
      const sortedKeys = listed.map((file) => file.key).sort(compareCodePointOrder);
      const shuffled = Uint32Array.from(sortedKeys, (_, i) => i);
      new SeededRandom(seed).shuffle(shuffled);
      const shuffledPosition = new Map<string, number>();
      shuffled.forEach((sortedIndex, position) => shuffledPosition.set(sortedKeys[sortedIndex], position));

      // WHEN
      const plan = planShards(listed, { seed, shardCount: 6 });

      // THEN
      for (const shard of plan.shards) {
        const positions = shard.records.map((record) => shuffledPosition.get(record.key)!);
        expect(positions).toEqual([...positions].sort((a, b) => a - b));
      }
    });
  });

  describe('records', () => {
    test('every input file is a record exactly once, with its size, and totals equal the input', () => {
      // GIVEN
      const listed = uniformFiles(4321, 0, 300 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 3, targetShardBytes: 8 * MIB });

      // THEN
      const records = plan.shards.flatMap((shard) => shard.records);
      expect(records.map((r) => r.key).sort()).toEqual(listed.map((f) => f.key).sort());
      const sizeOf = new Map(listed.map((file) => [file.key, file.size]));
      for (const record of records) expect(record.size).toBe(sizeOf.get(record.key));
      expect(plan.totalFiles).toBe(4321);
      expect(plan.totalBytes).toBe(listed.reduce((sum, file) => sum + file.size, 0));
      for (const shard of plan.shards) {
        expect(shard.bytes).toBe(shard.records.reduce((sum, record) => sum + record.size, 0));
      }
    });

    test('record ids run 0..n-1 consecutively across shards in shard order', () => {
      // GIVEN
      const listed = uniformFiles(1000, 1 * KIB, 64 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 11, shardCount: 7 });

      // THEN
      const ids = plan.shards.flatMap((shard) => shard.records.map((record) => record.recordId));
      expect(ids).toEqual(Array.from({ length: 1000 }, (_, i) => i));
      let next = 0;
      for (const shard of plan.shards) {
        expect(shard.records[0].recordId).toBe(next);
        next += shard.records.length;
      }
    });

    test('shards are numbered and named part-%05d-of-%05d', () => {
      // GIVEN
      const listed = uniformFiles(100, 1 * KIB, 2 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, shardCount: 12 });

      // THEN
      expect(plan.shards.map((shard) => shard.index)).toEqual(Array.from({ length: 12 }, (_, i) => i));
      expect(plan.shards[0].name).toBe('part-00000-of-00012');
      expect(plan.shards[11].name).toBe('part-00011-of-00012');
    });

    test('one file makes one shard of one record', () => {
      // WHEN
      const plan = planShards(files(['cat/only.jpg', 12345]), { seed: 0 });

      // THEN
      expect(plan.shards).toEqual([
        { index: 0, name: 'part-00000-of-00001', bytes: 12345, records: [{ key: 'cat/only.jpg', size: 12345, label: 0, recordId: 0 }] },
      ]);
      expect(plan.labelMap).toEqual({ cat: 0 });
    });

    test('zero-byte files are records too, spread evenly by count', () => {
      // GIVEN
      const listed = sameSize(10, 0);

      // WHEN
      const byTarget = planShards(listed, { seed: 1 });
      const byCount = planShards(listed, { seed: 1, shardCount: 4 });

      // THEN
      expect(recordCounts(byTarget)).toEqual([10]);
      expect(byCount.totalBytes).toBe(0);
      expect(recordCounts(byCount).sort()).toEqual([2, 2, 3, 3]);
      expect(byCount.shards.every((shard) => shard.bytes === 0)).toBe(true);
    });

    test('zero-byte files mixed with others all become records', () => {
      // GIVEN
      const listed = [...sameSize(50, 0), ...uniformFiles(50, 1 * KIB, 4 * KIB, { classes: 1 })];

      // WHEN
      const plan = planShards(listed, { seed: 4, shardCount: 5 });

      // THEN
      expect(plan.totalFiles).toBe(100);
      expect(recordCounts(plan)).toEqual([20, 20, 20, 20, 20]);
    });

    test('keys with unicode and spaces are kept byte for byte', () => {
      // GIVEN
      const listed = files(
        ['chat noir/photo 1.jpg', 10], ['été/ça va.jpg', 20], ['猫/写真.jpg', 30], ['emoji/😀 smile.png', 40], ['chat noir/photo  2.jpg', 50],
      );

      // WHEN
      const plan = planShards(listed, { seed: 5, shardCount: 2 });

      // THEN
      expect(keysInWriteOrder(plan).sort()).toEqual(listed.map((f) => f.key).sort());
      expect(plan.labelMap).toEqual({ 'chat noir': 0, 'emoji': 1, 'été': 2, '猫': 3 });
    });
  });

  describe('shard count', () => {
    test.each([
      ['1 MiB target, 10 MiB of files', 1 * MIB, 10, 10],
      ['64 MiB (default) target, 10 MiB of files', undefined, 10, 1],
      ['4 MiB target, 10 MiB of files (rounded up)', 4 * MIB, 10, 3],
      ['128 MiB target, 1000 MiB of files', 128 * MIB, 1000, 8],
    ])('%s → ceil(total / target) shards', (_name, targetShardBytes, totalMiB, expected) => {
      // GIVEN
      const listed = sameSize(totalMiB * 4, 256 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, targetShardBytes });

      // THEN
      expect(plan.shards).toHaveLength(expected);
    });

    test.each([
      [7, undefined, 7],
      [7, 4, 8],
      [8, 4, 8],
      [1, 3, 3],
    ])('shardCount %p with consumers %p → %p shards', (shardCount, consumers, expected) => {
      // GIVEN
      const listed = uniformFiles(100, 1 * KIB, 2 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, shardCount, consumers });

      // THEN
      expect(plan.shards).toHaveLength(expected);
    });

    test('a target-derived count is rounded up to a multiple of consumers', () => {
      // GIVEN 10 MiB at 4 MiB per shard: 3 shards before rounding
      const listed = sameSize(40, 256 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, targetShardBytes: 4 * MIB, consumers: 8 });

      // THEN
      expect(plan.shards).toHaveLength(8);
      expect(recordCounts(plan)).toEqual([5, 5, 5, 5, 5, 5, 5, 5]);
    });

    test('never more shards than files: a size-derived count stops at one file per shard', () => {
      // WHEN
      const derived = planShards(sameSize(3, 10 * MIB), { seed: 1, targetShardBytes: 1 * MIB });

      // THEN
      expect(recordCounts(derived)).toEqual([1, 1, 1]);
    });

    test.each([8, 50, 1_000_000_000])('an exact count above the files (%p for 7) is refused, naming the value and the range, not lowered', (shardCount) => {
      // GIVEN
      const listed = uniformFiles(7, 1 * KIB, 2 * KIB);

      // THEN
      expect(() => planShards(listed, { seed: 1, shardCount })).toThrow(new PlanError(
        `shardCount (--shards) must be between 1 and 7, the number of files in the source (every shard holds at least one), got ${shardCount}`));
      expect(recordCounts(planShards(listed, { seed: 1, shardCount: 7 }))).toEqual([1, 1, 1, 1, 1, 1, 1]);
    });

    test('when rounding up to consumers would exceed the files, the count rounds down to a multiple instead', () => {
      // GIVEN 7 files, 7 shards asked, 2 consumers: 8 would leave a shard empty
      const listed = uniformFiles(7, 1 * KIB, 2 * KIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, shardCount: 7, consumers: 2 });

      // THEN
      expect(plan.shards).toHaveLength(6);
      expect(plan.totalFiles).toBe(7);
    });

    test('more consumers than files is an error: some consumers would get empty shards', () => {
      // GIVEN
      const listed = uniformFiles(5, 1 * KIB, 2 * KIB);

      // WHEN / THEN
      expect(() => planShards(listed, { seed: 1, consumers: 8 })).toThrow(PlanError);
      expect(() => planShards(listed, { seed: 1, consumers: 8 })).toThrow(/consumers is 8 but the source has only 5 files.*empty shards/);
    });
  });

  describe('128 MiB ceiling', () => {
    test('shards of more than one file stay within 128 MiB: the count grows past the target-derived one', () => {
      // GIVEN 40 × 50 MiB at a 128 MiB target: 16 shards would hold 2 or 3 files (150 MiB)
      const listed = sameSize(40, 50 * MIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, targetShardBytes: 128 * MIB });

      // THEN the fewest shards that fit: two files (100 MiB) each
      expect(plan.shards).toHaveLength(20);
      expect(recordCounts(plan)).toEqual(Array(20).fill(2));
      expect(Math.max(...plan.shards.map((shard) => shard.bytes))).toBeLessThanOrEqual(MAX_SHARD_BYTES);
    });

    test('the grown count stays a multiple of consumers', () => {
      // GIVEN
      const listed = sameSize(40, 50 * MIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, targetShardBytes: 128 * MIB, consumers: 3 });

      // THEN
      expect(plan.shards).toHaveLength(21);
      expect(plan.shards.every((shard) => shard.bytes <= MAX_SHARD_BYTES)).toBe(true);
    });

    test('an explicit shardCount also grows when its shards would exceed the ceiling', () => {
      // GIVEN
      const listed = sameSize(6, 100 * MIB);

      // WHEN
      const plan = planShards(listed, { seed: 1, shardCount: 1 });

      // THEN
      expect(recordCounts(plan)).toEqual([1, 1, 1, 1, 1, 1]);
    });

    test('a 300 MiB file is a shard of its own, and the small files share the others', () => {
      // GIVEN
      const listed = [{ key: 'c/huge.bin', size: 300 * MIB }, ...uniformFiles(1000, 50 * KIB, 150 * KIB)];

      // WHEN
      const plan = planShards(listed, { seed: 2, labels: 'none' });

      // THEN
      const huge = plan.shards.find((shard) => shard.records.some((record) => record.key === 'c/huge.bin'))!;
      expect(huge.records).toHaveLength(1);
      expect(huge.bytes).toBe(300 * MIB);
      const others = plan.shards.filter((shard) => shard !== huge);
      expect(others.length).toBeGreaterThan(0);
      expect(others.reduce((sum, shard) => sum + shard.records.length, 0)).toBe(1000);
      expect(others.every((shard) => shard.bytes <= MAX_SHARD_BYTES)).toBe(true);
    });

    test('files larger than the target but under the ceiling share shards as the balance decides', () => {
      // GIVEN 3 × 20 MiB files among small ones, 8 MiB target
      const listed = [...sameSize(3, 20 * MIB).map((f, i) => ({ ...f, key: `big/${i}` })), ...uniformFiles(400, 100 * KIB, 200 * KIB)];

      // WHEN
      const plan = planShards(listed, { seed: 3, targetShardBytes: 8 * MIB });

      // THEN
      expect(plan.totalFiles).toBe(403);
      expect(plan.shards.every((shard) => shard.records.length === 1 || shard.bytes <= MAX_SHARD_BYTES)).toBe(true);
    });

    test('when consumers leave too few shards to keep within the ceiling, the error says so', () => {
      // GIVEN 3 × 100 MiB and 2 consumers: at most 2 shards, one of them 200 MiB
      const listed = sameSize(3, 100 * MIB);

      // WHEN / THEN
      expect(() => planShards(listed, { seed: 1, consumers: 2 })).toThrow(/cannot keep every shard of more than one file within 128 MiB.*consumers 2/);
    });
  });

  describe('labels', () => {
    test('folder labels number the class names in sorted (code-point) order', () => {
      // GIVEN U+FF5E sorts before U+1F600 by code point, after it by UTF-16 code unit
      const listed = files(['zebra/1.jpg', 1], ['Ant/1.jpg', 1], ['ant/2.jpg', 1], ['😀/1.jpg', 1], ['～/1.jpg', 1], ['ant/1.jpg', 1], ['zebra/deep/2.jpg', 1]);

      // WHEN
      const plan = planShards(listed, { seed: 1, shardCount: 2 });

      // THEN
      expect(Object.entries(plan.labelMap)).toEqual([['Ant', 0], ['ant', 1], ['zebra', 2], ['～', 3], ['😀', 4]]);
      const labelOf = new Map(plan.shards.flatMap((shard) => shard.records.map((record) => [record.key, record.label])));
      expect(labelOf.get('ant/2.jpg')).toBe(1);
      expect(labelOf.get('zebra/deep/2.jpg')).toBe(2);
      expect(labelOf.get('😀/1.jpg')).toBe(4);
    });

    test('labels default to folder', () => {
      // WHEN
      const plan = planShards(files(['b/1', 1], ['a/1', 1]), { seed: 1 });

      // THEN
      expect(plan.labelMap).toEqual({ a: 0, b: 1 });
    });

    test('a class folder named __proto__ is an ordinary class', () => {
      // WHEN
      const plan = planShards(files(['__proto__/1.jpg', 1], ['cat/1.jpg', 1]), { seed: 1 });

      // THEN
      expect(Object.keys(plan.labelMap)).toEqual(['__proto__', 'cat']);
      expect(plan.labelMap['__proto__']).toBe(0);
      expect(JSON.parse(JSON.stringify(plan.labelMap))).toEqual(JSON.parse('{"__proto__":0,"cat":1}'));
    });

    test("a file at the root fails with folder labels, naming the key and suggesting labels 'none'", () => {
      // GIVEN
      const listed = files(['cat/1.jpg', 1], ['readme.txt', 2]);

      // WHEN / THEN
      expect(() => planShards(listed, { seed: 1 })).toThrow(PlanError);
      expect(() => planShards(listed, { seed: 1 })).toThrow(/'readme\.txt' is at the root.*labels 'none'/);
    });

    test("labels 'none' gives every record -1 and an empty label map, and allows root files", () => {
      // GIVEN
      const listed = files(['cat/1.jpg', 1], ['readme.txt', 2]);

      // WHEN
      const plan = planShards(listed, { seed: 1, labels: 'none' });

      // THEN
      expect(plan.labelMap).toEqual({});
      expect(plan.shards.flatMap((shard) => shard.records.map((record) => record.label))).toEqual([-1, -1]);
    });
  });

  describe('bad input', () => {
    test('no files: nothing to pack', () => {
      expect(() => planShards([], { seed: 1 })).toThrow(/nothing to pack/);
    });

    test('a duplicate key is named', () => {
      // GIVEN
      const listed = files(['a/1.jpg', 1], ['b/2.jpg', 2], ['a/1.jpg', 3]);

      // WHEN / THEN
      expect(() => planShards(listed, { seed: 1 })).toThrow(/key 'a\/1\.jpg' is listed more than once/);
    });

    test.each([
      [-1],
      [1.5],
      [Number.NaN],
      [Number.POSITIVE_INFINITY],
      [2 ** 53],
    ])('size %p is rejected, naming the key', (size) => {
      // GIVEN
      const listed = files(['a/ok.jpg', 10], ['a/bad.jpg', size]);

      // WHEN / THEN
      expect(() => planShards(listed, { seed: 1 })).toThrow(new RegExp(`file 'a/bad\\.jpg' has size ${String(size)}`));
    });

    test('a file without a key is rejected', () => {
      // GIVEN
      const listed = [{ key: 'a/1', size: 1 }, { key: '', size: 1 }];

      // WHEN / THEN
      expect(() => planShards(listed, { seed: 1 })).toThrow(/file 1 of the listing has no key/);
    });
  });

  describe('options', () => {
    test.each([
      [1 * MIB],
      [128 * MIB],
      [64 * MIB],
    ])('targetShardBytes %p is accepted', (targetShardBytes) => {
      expect(() => planShards(uniformFiles(10, 1, 2), { seed: 1, targetShardBytes })).not.toThrow();
    });

    test.each([
      [1 * MIB - 1, '0.99999905 MiB \\(1048575 bytes\\)'],
      [128 * MIB + 1, '128.00000095 MiB \\(134217729 bytes\\)'],
      [0, '0 MiB \\(0 bytes\\)'],
      [256 * MIB, '256 MiB \\(268435456 bytes\\)'],
      [2.5 * MIB + 0.5, '2.50000048 MiB'],
      [Number.NaN, 'NaN'],
    ])('targetShardBytes %p is rejected, naming the value in MiB and the range', (targetShardBytes, shown) => {
      expect(() => planShards(uniformFiles(10, 1, 2), { seed: 1, targetShardBytes }))
        .toThrow(new RegExp(`targetShardBytes must be a whole number of bytes between 1 MiB \\(1048576\\) and 128 MiB \\(134217728\\), got ${shown}`));
    });

    test.each([
      [0],
      [Number.MAX_SAFE_INTEGER],
    ])('seed %p is accepted', (seed) => {
      expect(planShards(uniformFiles(10, 1, 2), { seed }).seed).toBe(seed);
    });

    test.each([
      [-1],
      [0.5],
      [Number.MAX_SAFE_INTEGER + 1],
      [Number.NaN],
      ['7' as unknown as number],
    ])('seed %p is rejected', (seed) => {
      expect(() => planShards(uniformFiles(10, 1, 2), { seed })).toThrow(/seed must be a whole number (≥ 0|between 0 and 9007199254740991), got /);
    });

    test.each([
      ['shardCount', 0],
      ['shardCount', 2.5],
      ['shardCount', -3],
      ['consumers', 0],
      ['consumers', 1.5],
    ])('%s %p is rejected, naming the option and the value', (option, value) => {
      expect(() => planShards(uniformFiles(10, 1, 2), { seed: 1, [option]: value }))
        .toThrow(new RegExp(`^${option} .*must be a whole number ≥ 1, got ${value}$`));
    });

    test('an unknown label mode is rejected', () => {
      const options = { seed: 1, labels: 'class' } as unknown as PlanOptions;
      expect(() => planShards(uniformFiles(10, 1, 2), options)).toThrow(/labels must be 'folder' or 'none' or 'file', got "class"/);
    });
  });
});
