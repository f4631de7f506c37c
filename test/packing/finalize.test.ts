import * as fs from 'node:fs';
import * as path from 'node:path';
import { finalizeDataset } from '../../lambda/packing/finalize';
import { LocalDirectorySink } from '../../lambda/io/local-directory';
import type { ManifestShard } from '../../lambda/packing/manifest';
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

function finalize(sink: LocalDirectorySink, shards: ManifestShard[]) {
  const objects = shards.reduce((sum, shard) => sum + shard.records, 0);
  return finalizeDataset({
    sink, datasetVersion: VERSION.id, previousVersion: null, format: 'recordio', seed: 1,
    source: { uri: 'file:///src/', objects, bytes: objects * 100, fingerprint: 'f' }, labels: {},
    sizing: { targetShardBytes: null, shardCount: shards.length, consumers: 1, multipleOfConsumers: true, reusedShards: 0 }, shards, failures: [],
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
