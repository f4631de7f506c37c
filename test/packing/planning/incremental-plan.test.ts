import fc from 'fast-check';
import type { ListedFile } from '../../../lambda/io/storage';
import type { Manifest, ManifestShard } from '../../../lambda/packing/manifest';
import type { PreviousVersion } from '../../../lambda/packing/planning/incremental-plan';
import { planIncremental } from '../../../lambda/packing/planning/incremental-plan';
import { planShards } from '../../../lambda/packing/planning/plan-shards';
import type { PlannedRecord, PlannedShard } from '../../../lambda/packing/planning/plan-types';
import { KIB, MIB } from './synthetic-files';

// Appends, planned one after the other as packDataset would (each plan's shards become the next
// plan's previous version), never fragment a dataset: a shard under half the target lives only
// until the next append repacks it (test/packing/versions.test.ts does the same through real packs).

const SEED = 7;

/** Version `sequence`: the reused shards as they were, the written ones as planned. */
function versionOf(sequence: number, reused: readonly ManifestShard[], previous: PreviousVersion | undefined,
  written: readonly PlannedShard[], sizing: { targetShardBytes: number; consumers: number }): PreviousVersion {
  const folder = `versions/v${String(sequence).padStart(8, '0')}-00000000`;
  const shards = [...reused, ...written.map((shard): ManifestShard => ({
    key: `${folder}/shards/${shard.name}.tfrecord`, indexKey: `${folder}/index/${shard.name}.idx`, membersKey: `${folder}/members/${shard.name}.jsonl`,
    records: shard.records.length, bytes: shard.bytes, crc32c: '',
    firstRecordId: Math.min(...shard.records.map((r) => r.recordId)), lastRecordId: Math.max(...shard.records.map((r) => r.recordId)),
  }))];
  const membersByKey = new Map<string, readonly PlannedRecord[]>();
  previous?.manifest.shards.forEach((shard, i) => membersByKey.set(shard.key, previous.members[i]));
  written.forEach((shard, i) => membersByKey.set(shards[reused.length + i].key, shard.records));
  const manifest = {
    format: 'tfrecord', seed: SEED, labels: {}, failures: [], shards,
    sizing: { ...sizing, shardCount: null, multipleOfConsumers: shards.length % sizing.consumers === 0, reusedShards: reused.length },
  } as unknown as Manifest;
  return { manifest, members: shards.map((shard) => membersByKey.get(shard.key)!) };
}

const appendRuns = fc.record({
  consumers: fc.integer({ min: 1, max: 4 }),
  targetShardBytes: fc.constantFrom(MIB, 4 * MIB),
  /** Sizes of the first version's files, then of each append's. */
  batches: fc.array(fc.array(fc.integer({ min: KIB, max: 24 * KIB }), { minLength: 1, maxLength: 400 }), { minLength: 2, maxLength: 12 }),
});

test('after any number of appends, the only shards under half the target are the last pack\'s, and every file is a record exactly once', () => {
  fc.assert(fc.property(appendRuns, ({ consumers, targetShardBytes, batches }) => {
    const files: ListedFile[] = [];
    const add = (sizes: readonly number[]) => sizes.forEach((size) => files.push({ key: `f${String(files.length).padStart(6, '0')}`, size, modified: files.length }));
    add(batches[0]);
    if (files.length < consumers) return;
    const sizing = { targetShardBytes, consumers };
    const first = planShards(files, { seed: SEED, targetShardBytes, consumers, labels: 'none' });
    let version = versionOf(1, [], undefined, first.shards, sizing);

    batches.slice(1).forEach((sizes, append) => {
      add(sizes);
      const plan = planIncremental(files, version, { seed: SEED, targetShardBytes, consumers, labels: 'none' });
      if (plan.kind !== 'incremental') throw new Error(`append ${append}: ${plan.reason}`);
      const next = versionOf(append + 2, plan.reused, version, plan.shards, sizing);
      const written = new Set(next.manifest.shards.slice(plan.reused.length).map((shard) => shard.key));

      // Appends change no file: every shard of at least half the target is reused, the others repacked.
      expect(plan.reused).toEqual(version.manifest.shards.filter((shard) => shard.bytes >= targetShardBytes / 2));
      const small = next.manifest.shards.filter((shard) => shard.bytes < targetShardBytes / 2);
      expect(small.filter((shard) => !written.has(shard.key))).toEqual([]);
      expect(next.members.flat().map((record) => record.key).sort()).toEqual(files.map((file) => file.key));
      const bytes = next.manifest.shards.reduce((sum, shard) => sum + shard.bytes, 0);
      expect(next.manifest.shards.length).toBeLessThanOrEqual(Math.ceil(bytes / (targetShardBytes / 2)) + consumers);
      version = next;
    });
  }), { numRuns: 60, seed: 25 });
});
