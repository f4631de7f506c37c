import * as fs from 'node:fs';
import { readRecordIo, recordioFormat, unpackImageRecord } from '../../lambda/packing/formats';
import { LocalDirectorySink } from '../../lambda/io/local-directory';
import type { ListedFile, PackingSource } from '../../lambda/io/storage';
import { listAll } from '../../lambda/io/storage';
import { packDataset } from '../../lambda/packing/pack';
import { PLAN_LIMITS } from '../../lambda/packing/planning/grouped-plan';
import { planShards } from '../../lambda/packing/planning/plan-shards';
import { verifyDataset } from '../../lambda/packing/verify';
import { temporaryFolders } from '../support/local-files';

const folder = temporaryFolders();

/**
 * A source of `count` small files made from their keys, listed in batches in no particular order:
 * a listing above the group size without writing 140,000 files to disk (the local folder walk has
 * its own tests). Not a stand-in for S3: the engine's PackingSource contract, implemented in memory.
 */
function syntheticSource(count: number): PackingSource & { readonly reads: Map<string, number> } {
  const keys = Array.from({ length: count }, (_, i) => `class-${String(i % 37).padStart(2, '0')}/file-${(i * 7919) % count}.bin`);
  const bytesOf = (key: string) => Buffer.from(`${key}|`.repeat(1 + (key.length % 3)));
  const reads = new Map<string, number>();
  return {
    uri: 'memory://synthetic/',
    reads,
    async* list() {
      for (let start = 0; start < count; start += 1000) {
        yield keys.slice(start, start + 1000).map((key): ListedFile => ({ key, size: bytesOf(key).length, modified: 1_700_000_000_000 }));
      }
    },
    async read(key) {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return bytesOf(key);
    },
  };
}

describe('packing a listing larger than a plan group', () => {
  test('140,000 files: planned from disk a group at a time, packed once each, the plan planShards makes, scratch removed', async () => {
    // GIVEN
    const count = 140_000;
    expect(count).toBeGreaterThan(PLAN_LIMITS.groupFiles);
    const source = syntheticSource(count);
    const outDir = folder('large-out');
    const scratch = folder('large-scratch');
    let largeListings = 0;

    // WHEN
    const { manifest } = await packDataset({
      source, sink: new LocalDirectorySink(outDir), format: 'recordio', seed: 5, scratchDirectory: scratch, parallelShards: 3,
      onLargeListing: () => largeListings++,
    });

    // THEN: told once that the listing went to disk; every file read once and packed once
    expect(largeListings).toBe(1);
    expect(manifest.records).toBe(count);
    expect(manifest.failures).toEqual([]);
    expect(source.reads.size).toBe(count);
    expect([...source.reads.values()].every((reads) => reads === 1)).toBe(true);
    // the same shards as the whole listing planned in memory (records of ~30 B: the record floor sets the count)
    const expected = planShards(await listAll(source), { seed: 5, recordBytes: (key, size) => recordioFormat.recordBytes(key, size) });
    expect(expected.shards.length).toBeGreaterThanOrEqual(Math.ceil(count / PLAN_LIMITS.maxAverageShardRecords));
    expect(manifest.shards.map((shard) => [shard.records, shard.firstRecordId, shard.lastRecordId])).toEqual(
      expected.shards.map((shard) => [shard.records.length, shard.records[0].recordId, shard.records[shard.records.length - 1].recordId]),
    );
    const firstShard = [...readRecordIo(fs.readFileSync(`${outDir}/${manifest.shards[0].key}`))];
    expect(firstShard.map((record) => unpackImageRecord(record.payload).data.toString().split('|')[0])).toEqual(expected.shards[0].records.map((r) => r.key));
    // a valid dataset, global index included; the listing's scratch folder is gone
    const report = await verifyDataset(new LocalDirectorySink(outDir));
    expect(report.problems).toEqual([]);
    expect(fs.readdirSync(scratch)).toEqual([]);
  }, 120_000);
});
