import * as fs from 'node:fs';
import * as path from 'node:path';
import { readTfRecords, decodeExample } from '../../lambda/packing/formats';
import { claimKey, MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import type { Manifest } from '../../lambda/packing/manifest';
import type { PackOptions } from '../../lambda/packing/pack';
import { packDataset } from '../../lambda/packing/pack';
import { pruneVersions } from '../../lambda/packing/prune';
import { verifyDataset } from '../../lambda/packing/verify';
import { listFiles, seededBytes, temporaryFolders, writeFiles } from '../support/local-files';

// Versioned datasets (ARCHITECTURE.md "Dataset layout"): each pack publishes a new version
// atomically, reuses the unchanged shards of the current one by reference, and never changes an
// object of a published version.

const folder = temporaryFolders();
const CLASSES = ['ant', 'bee', 'cat', 'dog'];

/** `count` files of 2–6 KB named from `first` on, spread over the classes. */
function files(first: number, count: number, salt = ''): Record<string, Buffer> {
  const made: Record<string, Buffer> = {};
  for (let i = first; i < first + count; i++) made[`${CLASSES[i % CLASSES.length]}/${String(i).padStart(6, '0')}.jpg`] = seededBytes(`${salt}${i}`, 2000 + ((i * 7919) % 4000));
  return made;
}

/** Packs with a 1 MiB target (small shards, so a few percent more files leave most of them unchanged). */
function pack(sourceDir: string, outDir: string, extra: Partial<PackOptions> = {}) {
  return packDataset({
    source: new LocalDirectorySource(sourceDir), sink: new LocalDirectorySink(outDir), format: 'tfrecord', seed: 3,
    targetShardBytes: 1024 * 1024, consumers: 2, ...extra,
  });
}

/** Every object of the dataset folder that belongs to a version, with its bytes. */
function versionObjects(outDir: string, version: string): Map<string, Buffer> {
  return new Map(listFiles(outDir).filter((key) => key.startsWith(`versions/${version}/`)).map((key) => [key, fs.readFileSync(path.join(outDir, key))]));
}

/** The source file names the records of a manifest carry, each as often as it occurs, sorted. */
function recordFilenames(outDir: string, manifest: Manifest): string[] {
  return manifest.shards.flatMap((shard) => [...readTfRecords(fs.readFileSync(path.join(outDir, shard.key)))]
    .map((record) => {
      const filename = decodeExample(record.payload)['image/filename'];
      return 'bytesList' in filename ? filename.bytesList[0].toString('utf8') : '';
    })).sort();
}

describe('incremental repacks', () => {
  test('appending 5 % of files writes about their bytes only; the first version stays byte-identical and both verify', async () => {
    // GIVEN a packed version of 2,000 files
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 2000));
    const outDir = folder('out');
    const first = await pack(sourceDir, outDir);
    const firstObjects = versionObjects(outDir, first.manifest.datasetVersion);

    // WHEN 100 files are added and the source is packed again
    const added = files(2000, 100);
    writeFiles(sourceDir, added);
    const second = await pack(sourceDir, outDir);

    // THEN the new version reuses every old shard by reference and writes the new files' shards only
    const addedBytes = Object.values(added).reduce((sum, data) => sum + data.length, 0);
    expect(second.fullRepackReason).toBeUndefined();
    expect(second.manifest).toMatchObject({ sequence: 2, previousVersion: first.manifest.datasetVersion, records: 2100 });
    expect(second.manifest.sizing.reusedShards).toBe(first.manifest.shards.length);
    expect(second.manifest.shards.slice(0, first.manifest.shards.length)).toEqual(first.manifest.shards);
    expect(second.shardBytesWritten).toBeGreaterThanOrEqual(addedBytes);
    expect(second.shardBytesWritten).toBeLessThan(addedBytes * 1.05);
    // 100 files of ~4 KB make one new shard: two (a multiple of the 2 consumers) would each be under 1 MiB, so the manifest says so.
    expect(second.manifest.shards.length).toBe(first.manifest.shards.length + 1);
    expect(second.manifest.sizing.multipleOfConsumers).toBe(false);
    for (const [key, bytes] of firstObjects) expect({ key, same: fs.readFileSync(path.join(outDir, key)).equals(bytes) }).toEqual({ key, same: true });
    expect(recordFilenames(outDir, second.manifest)).toEqual(Object.keys({ ...files(0, 2000), ...added }).sort());
    const sink = new LocalDirectorySink(outDir);
    expect((await verifyDataset(sink)).problems).toEqual([]);
    expect((await verifyDataset(sink, { version: first.manifest.datasetVersion })).problems).toEqual([]);
  });

  test('a changed and a removed file rewrite only the shards that held them; every current file is a record exactly once', async () => {
    // GIVEN
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 1200));
    const outDir = folder('out');
    const first = await pack(sourceDir, outDir);
    const shardOf = (key: string) => first.manifest.shards.findIndex((shard) => fs.readFileSync(path.join(outDir, shard.membersKey), 'utf8').includes(`"${key}"`));
    const changedKey = 'cat/000002.jpg';
    const removedKey = 'dog/000007.jpg';

    // WHEN one file changes (new bytes, a later mtime) and one is removed
    fs.writeFileSync(path.join(sourceDir, changedKey), seededBytes('changed', 3000));
    fs.utimesSync(path.join(sourceDir, changedKey), new Date(), new Date(Date.now() + 60_000));
    fs.rmSync(path.join(sourceDir, removedKey));
    const second = await pack(sourceDir, outDir);

    // THEN
    const touched = new Set([shardOf(changedKey), shardOf(removedKey)]);
    expect(second.manifest.sizing.reusedShards).toBe(first.manifest.shards.length - touched.size);
    const kept = first.manifest.shards.filter((_, i) => !touched.has(i)).map((shard) => shard.key);
    expect(second.manifest.shards.map((shard) => shard.key)).toEqual(expect.arrayContaining(kept));
    const current = Object.keys(files(0, 1200)).filter((key) => key !== removedKey).sort();
    expect(recordFilenames(outDir, second.manifest)).toEqual(current);
    expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
  });

  test('many small appends never fragment the dataset: after each, only shards this pack wrote may be under half the target, at most one per consumer', async () => {
    // GIVEN a packed version of 1,200 files (about 4.8 MB, 1 MiB target, 2 consumers)
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 1200));
    const outDir = folder('out');
    await pack(sourceDir, outDir);
    const halfTarget = 1024 * 1024 / 2;

    for (let append = 0; append < 8; append++) {
      // WHEN 120 files (about 0.48 MB: alone, a shard under half the target) are added and packed
      writeFiles(sourceDir, files(1200 + append * 120, 120));
      const { manifest, fullRepackReason } = await pack(sourceDir, outDir);

      // THEN the small shards are this pack's own, and every file is a record exactly once
      const small = manifest.shards.filter((shard) => shard.bytes < halfTarget);
      expect({ append, fullRepackReason }).toEqual({ append, fullRepackReason: undefined });
      expect({ append, small: small.length <= 2 }).toEqual({ append, small: true });
      for (const shard of small) expect({ append, key: shard.key }).toEqual({ append, key: expect.stringMatching(`^versions/${manifest.datasetVersion}/`) });
      expect(manifest.sizing.multipleOfConsumers).toBe(manifest.shards.length % 2 === 0);
      expect(recordFilenames(outDir, manifest)).toEqual(Object.keys(files(0, 1200 + (append + 1) * 120)).sort());
    }
    expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
  });

  test('an unchanged source is up to date: nothing is written, not even a claim', async () => {
    // GIVEN
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 300));
    const outDir = folder('out');
    const first = await pack(sourceDir, outDir);
    const before = listFiles(outDir).map((key) => [key, fs.statSync(path.join(outDir, key)).mtimeMs]);

    // WHEN
    const again = await pack(sourceDir, outDir);

    // THEN
    expect(again).toMatchObject({ upToDate: true, shardBytesWritten: 0 });
    expect(again.manifest.datasetVersion).toBe(first.manifest.datasetVersion);
    expect(listFiles(outDir).map((key) => [key, fs.statSync(path.join(outDir, key)).mtimeMs])).toEqual(before);
  });

  test('other shard options, or --full, pack everything again and say why', async () => {
    // GIVEN
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 300));
    const outDir = folder('out');
    await pack(sourceDir, outDir);

    // WHEN / THEN
    expect((await pack(sourceDir, outDir, { consumers: 4 })).fullRepackReason).toBe('the consumers changed (2 → 4)');
    expect((await pack(sourceDir, outDir, { consumers: 4, fullRepack: true })).fullRepackReason).toBe('a full repack was asked for');
    writeFiles(sourceDir, { 'eel/000999.jpg': seededBytes('eel', 100) });
    expect((await pack(sourceDir, outDir, { consumers: 4 })).fullRepackReason).toBe('the set of classes changed');
  });
});

describe('publishing', () => {
  test('two packs into one folder at once: exactly one publishes, the other fails naming the winner, and the dataset verifies', async () => {
    // GIVEN
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 400));
    const outDir = folder('out');

    // WHEN both plan from the same (empty) dataset and race to publish version 1
    const results = await Promise.allSettled([pack(sourceDir, outDir), pack(sourceDir, outDir, { seed: 4 })]);

    // THEN
    const published = results.filter((result) => result.status === 'fulfilled');
    const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect({ published: published.length, failed: failed.length }).toEqual({ published: 1, failed: 1 });
    expect(String(failed[0].reason)).toMatch(/ConcurrentPublishError: .*another run published version v00000001-[0-9a-f]{8} as number 1 .* nothing of this run was published/);
    const manifest = JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')) as Manifest;
    expect(listFiles(outDir).filter((key) => key.startsWith('published/'))).toEqual([claimKey(1)]);
    // The loser's objects went with its failure: only the winner's version folder is left.
    expect(new Set(listFiles(outDir).filter((key) => key.startsWith('versions/')).map((key) => key.split('/')[1]))).toEqual(new Set([manifest.datasetVersion]));
    expect((await verifyDataset(new LocalDirectorySink(outDir))).problems).toEqual([]);
  });

  test('a job that holds version 1 keeps reading it, byte for byte, while version 2 is packed and published', async () => {
    // GIVEN a job pinned to version 1 (it read the version's manifest when it started)
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 600));
    const outDir = folder('out');
    const first = await pack(sourceDir, outDir);
    const held = versionObjects(outDir, first.manifest.datasetVersion);

    // WHEN the source is replaced and packed again (every shard rewritten)
    fs.rmSync(sourceDir, { recursive: true });
    writeFiles(sourceDir, files(0, 600, 'new-'));
    const second = await pack(sourceDir, outDir);

    // THEN the root names version 2; version 1 is whole and verifies, as the job reads it
    expect(second.manifest.sizing.reusedShards).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST_KEY), 'utf8')).datasetVersion).toBe(second.manifest.datasetVersion);
    // Buffers compared with equals(): jest's deep equality walks them byte by byte.
    const now = versionObjects(outDir, first.manifest.datasetVersion);
    expect([...now.keys()]).toEqual([...held.keys()]);
    for (const [key, bytes] of held) expect({ key, same: now.get(key)!.equals(bytes) }).toEqual({ key, same: true });
    expect((await verifyDataset(new LocalDirectorySink(outDir), { version: first.manifest.datasetVersion })).problems).toEqual([]);
  });

  test('pruning deletes versions past their retention except the shards a kept version reuses', async () => {
    // GIVEN version 1, then version 2 reusing all of it but one shard (a file changed), then version 3 replacing everything
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 800));
    const outDir = folder('out');
    const sink = new LocalDirectorySink(outDir);
    const first = await pack(sourceDir, outDir);
    fs.writeFileSync(path.join(sourceDir, 'ant/000000.jpg'), seededBytes('changed', 2500));
    fs.utimesSync(path.join(sourceDir, 'ant/000000.jpg'), new Date(), new Date(Date.now() + 60_000));
    const second = await pack(sourceDir, outDir);

    // WHEN pruned with a retention of one day, a day and a minute after version 2 was published
    const later = new Date(Date.now() + 86_460_000);
    const pruned = await pruneVersions(sink, 86_400_000, later);

    // THEN version 1 lost what version 2 does not reuse; version 2 is whole
    expect(pruned).toMatchObject({ prunedVersions: [first.manifest.datasetVersion], keptVersions: [second.manifest.datasetVersion] });
    const reused = new Set(second.manifest.shards.map((shard) => shard.key));
    const left = listFiles(outDir).filter((key) => key.startsWith(`versions/${first.manifest.datasetVersion}/`));
    expect(left.filter((key) => key.includes('/shards/'))).toEqual([...reused].filter((key) => key.includes(first.manifest.datasetVersion)).sort());
    expect(left).not.toContain(`versions/${first.manifest.datasetVersion}/manifest.json`);
    expect((await verifyDataset(sink)).problems).toEqual([]);
  });

  test('a crashed run\'s folders go at the next prune once its number is taken; a run in progress on the next number is left alone', async () => {
    // GIVEN version 1 published, the leftovers of a run that also made a version 1 and crashed, and a run making version 2
    const sourceDir = folder('src');
    writeFiles(sourceDir, files(0, 200));
    const outDir = folder('out');
    const sink = new LocalDirectorySink(outDir);
    const first = await pack(sourceDir, outDir);
    const crashed = { 'versions/v00000001-0badf00d/shards/part-00000-of-00001.tfrecord': 'partial run', '_plan/v00000001-0badf00d/tasks.json': '[]' };
    const inProgress = { 'versions/v00000002-0123abcd/shards/part-00000-of-00001.tfrecord': 'being written', '_plan/v00000002-0123abcd/tasks.json': '[]' };
    writeFiles(outDir, { ...crashed, ...inProgress });

    // WHEN
    const pruned = await pruneVersions(sink, 86_400_000);

    // THEN
    expect(pruned.prunedVersions).toEqual(['v00000001-0badf00d']);
    const left = listFiles(outDir);
    for (const key of Object.keys(crashed)) expect(left).not.toContain(key);
    for (const key of Object.keys(inProgress)) expect(left).toContain(key);
    expect((await verifyDataset(sink, { version: first.manifest.datasetVersion })).problems).toEqual([]);
  });
});
