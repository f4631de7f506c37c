import * as fs from 'node:fs';
import * as path from 'node:path';
import { finalizeDataset } from '../../lambda/packing/finalize';
import { LocalDirectorySink } from '../../lambda/io/local-directory';
import type { ManifestFailure, ManifestShard } from '../../lambda/packing/manifest';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import { listFiles, temporaryFolders } from '../support/local-files';

const folder = temporaryFolders();
const VERSION = new VersionLayout('v00000001-0123abcd');

/** Shard i of n with `records` records at offsets 0, 100, 200…, and its MXNet index written (unless `withoutIndex`). */
async function shardWithIndex(sink: LocalDirectorySink, i: number, n: number, records: number, firstId: number, withoutIndex = false): Promise<ManifestShard> {
  const name = `part-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}`;
  const key = VERSION.rebase(`shards/${name}.rec`);
  const indexKey = VERSION.rebase(`index/${name}.idx`);
  const membersKey = VERSION.membersKey(name);
  if (!withoutIndex) {
    await sink.put(indexKey, Buffer.from(Array.from({ length: records }, (_, r) => `${firstId + r}\t${r * 100}\n`).join('')));
  }
  // The finalizer checks that every listed object is there before it publishes.
  await sink.put(key, Buffer.alloc(records * 100));
  await sink.put(membersKey, Buffer.from(''));
  return { key, indexKey, membersKey, records, bytes: records * 100, crc32c: 'AAAAAA==', firstRecordId: firstId, lastRecordId: firstId + records - 1 };
}

/** Finalizes the shards (and listed failures, then published all the same) for `consumers` consumers. */
function finalize(sink: LocalDirectorySink, shards: ManifestShard[], consumers = 1, failures: ManifestFailure[] = []) {
  const objects = shards.reduce((sum, shard) => sum + shard.records, 0) + failures.length;
  return finalizeDataset({
    sink, datasetVersion: VERSION.id, previousVersion: null, format: 'recordio', seed: 1,
    source: { uri: 'file:///src/', objects, bytes: objects * 100, fingerprint: 'f' }, labels: {},
    sizing: { targetShardBytes: null, shardCount: shards.length, consumers, reusedShards: 0 }, shards, failures, allowMissing: failures.length > 0,
    retentionMs: 7 * 86_400_000,
  });
}

describe('finalizeDataset, RecordIO', () => {
  test('the global index over 40 shards, written a shard at a time: offsets shifted by the shards before', async () => {
    // GIVEN: more shards than are read ahead at once
    const dir = folder('finalize');
    const sink = new LocalDirectorySink(dir);
    const shards = await Promise.all(Array.from({ length: 40 }, (_, i) => shardWithIndex(sink, i, 40, 3, 3 * i)));

    // WHEN
    await finalize(sink, shards);

    // THEN
    const lines = fs.readFileSync(path.join(dir, VERSION.globalIndexKey), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(120);
    expect(lines.slice(0, 4)).toEqual(['0\t0', '1\t100', '2\t200', '3\t300']);
    expect(lines[119]).toBe(`119\t${39 * 300 + 200}`);
  });

  test('a shard index that cannot be read fails the run, naming it: no global index, no manifest, no partial file', async () => {
    // GIVEN: shard 25 of 40 has no index
    const dir = folder('finalize-missing');
    const sink = new LocalDirectorySink(dir);
    const shards = await Promise.all(Array.from({ length: 40 }, (_, i) => shardWithIndex(sink, i, 40, 3, 3 * i, i === 25)));

    // WHEN / THEN
    await expect(finalize(sink, shards)).rejects.toThrow(/part-00025-of-00040\.idx/);
    const left = listFiles(dir);
    expect(left).not.toContain(VERSION.globalIndexKey);
    expect(left).not.toContain(VERSION.manifestKey);
    expect(left).not.toContain(MANIFEST_KEY);
    expect(left.filter((key) => key.startsWith('published/'))).toEqual([]);
    expect(left.filter((key) => key.endsWith('.partial'))).toEqual([]);
  });

  test('a listed object that is missing stops the publish, naming it', async () => {
    // GIVEN: shard 3's member list was never written
    const dir = folder('finalize-absent');
    const sink = new LocalDirectorySink(dir);
    const shards = await Promise.all(Array.from({ length: 5 }, (_, i) => shardWithIndex(sink, i, 5, 2, 2 * i)));
    fs.rmSync(path.join(dir, shards[3].membersKey));

    // WHEN / THEN
    await expect(finalize(sink, shards)).rejects.toThrow(/not publishing v00000001-0123abcd: 1 listed object\(s\) missing, e\.g\. file:.*members\/part-00003-of-00005\.jsonl/);
    expect(listFiles(dir).filter((key) => key.startsWith('published/') || key === MANIFEST_KEY)).toEqual([]);
  });
});

describe('finalizeDataset, the sizing', () => {
  test.each([
    { shards: 4, failed: [], kept: 4, multipleOfConsumers: true },
    { shards: 4, failed: [3], kept: 3, multipleOfConsumers: false },
    { shards: 5, failed: [4], kept: 4, multipleOfConsumers: true },
  ])('multipleOfConsumers is counted on the shards the version keeps, 2 consumers: $shards shards, those of failures only ($failed) left out', async (run) => {
    // GIVEN: shards of 2 records, but those whose only input was a listed failure
    const sink = new LocalDirectorySink(folder('finalize-sizing'));
    const shards = await Promise.all(Array.from({ length: run.shards }, (_, i) => shardWithIndex(sink, i, run.shards, run.failed.includes(i) ? 0 : 2, 2 * i)));
    const failures = run.failed.map((i) => ({ key: `c/unreadable-${i}.jpg`, reason: 'truncated' }));

    // WHEN
    const { manifest } = await finalize(sink, shards, 2, failures);

    // THEN
    expect(manifest.shards).toHaveLength(run.kept);
    expect(manifest.sizing).toEqual({ targetShardBytes: null, shardCount: run.shards, consumers: 2, multipleOfConsumers: run.multipleOfConsumers, reusedShards: 0 });
  });
});
