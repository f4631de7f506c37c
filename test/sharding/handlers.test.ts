import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { S3StorageError } from '../../lambda/io/s3-retry';
import { isObjectNotFound } from '../../lambda/io/storage';
import { sourceFingerprint } from '../../lambda/packing/manifest';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import { parseMembers } from '../../lambda/packing/members';
import { finalizeShards, parseFinalizerEvent } from '../../lambda/shard-finalizer/finalize-shards';
import { packShard, parsePackerEvent } from '../../lambda/shard-packer/pack-shard';
import { readInventory, readLocation, readPlanSettings } from '../../lambda/handler-kit/dataset-settings';
import { planDataset } from '../../lambda/shard-planner/plan-dataset';
import type { ShardTask } from '../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../lambda/handler-kit/plan-layout';
import type { ShardPlannerResult } from '../../lambda/shard-planner/contract';

const MEMBERS = 'versions/v00000001-0123abcd/members/part-00000-of-00002.jsonl';

/** The Map's task list the planner wrote, read from the dataset folder. */
function tasksOf(outDir: string, plan: ShardPlannerResult): ShardTask[] {
  return JSON.parse(fs.readFileSync(path.join(outDir, new RunFiles(new VersionLayout(plan.datasetVersion)).tasksKey), 'utf8')) as ShardTask[];
}

/** The finalizer's event, as the state machine builds it from the planner's result. */
function finalizerEvent(plan: ShardPlannerResult) {
  return { datasetVersion: plan.datasetVersion, shardCount: plan.shardCount, fingerprint: plan.source.fingerprint };
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'shard-handlers-'));
}

function writeFiles(root: string, files: Record<string, number>): void {
  for (const [key, size] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, key)), { recursive: true });
    fs.writeFileSync(path.join(root, key), Buffer.alloc(size, key.length));
  }
}

const SETTINGS = { format: 'tfrecord' as const, seed: 3, labels: 'folder' as const, shardCount: 2, consumers: 1 };
const DESTINATION = { bucket: 'packed-bucket', prefix: 'packed/' };

describe('shard handlers: event and environment parsing', () => {
  test.each([
    [null, /the event must be a JSON object/],
    [{ shardName: 'part-00000-of-00002', membersKey: MEMBERS }, /'shardIndex' must be an integer of at least 0, got nothing/],
    [{ shardIndex: -1, shardName: 'part-00000-of-00002', membersKey: MEMBERS }, /'shardIndex'/],
    [{ shardIndex: 0, shardName: 'evil/../x', membersKey: MEMBERS }, /'shardName' must look like/],
    [{ shardIndex: 0, shardName: 'part-00000-of-00002', membersKey: 'shards/x' }, /'membersKey' must be the member list of shard part-00000-of-00002 in a version's folder/],
    [{ shardIndex: 0, shardName: 'part-00001-of-00002', membersKey: MEMBERS }, /'membersKey' must be the member list of shard part-00001-of-00002/],
  ])('the packer rejects %p naming the field', (event, message) => {
    expect(() => parsePackerEvent(event)).toThrow(message);
  });

  test.each([
    [{ datasetVersion: 'v00000001-0123abcd', fingerprint: 'abc' }, /'shardCount' must be an integer of at least 0/],
    [{ datasetVersion: 'v00000001-0123abcd', shardCount: 2 }, /'fingerprint' must be a non-empty string/],
    [{ datasetVersion: 'latest', shardCount: 2, fingerprint: 'abc' }, /'datasetVersion' must be a version id like 'v00000002-1a2b3c4d', got "latest"/],
  ])('the finalizer rejects %p naming the field', (event, message) => {
    expect(() => parseFinalizerEvent(event)).toThrow(message);
  });

  test('environment errors name the variable', () => {
    expect(() => readLocation({}, 'source')).toThrow(/SOURCE_BUCKET is not set/);
    expect(() => readLocation({ DESTINATION_BUCKET: 'b', DESTINATION_PREFIX: 'packed' }, 'destination')).toThrow(/DESTINATION_PREFIX/);
    expect(() => readPlanSettings({ SHARD_FORMAT: 'zip' })).toThrow(/SHARD_FORMAT must be 'tfrecord' or 'recordio', got "zip"/);
    expect(() => readPlanSettings({ SHARD_FORMAT: 'tfrecord', CONSUMERS: '0' })).toThrow(/CONSUMERS must be a whole number ≥ 1, got 0/);
    expect(() => readInventory({ INVENTORY_BUCKET: 'inv', INVENTORY_KEY: 'inventory/raw/daily' }))
      .toThrow(/INVENTORY_KEY must be an inventory report folder ending in '\/' or the key of its manifest.json, got 'inventory\/raw\/daily'/);
  });

  test('the planner lists with ListObjectsV2 unless INVENTORY_BUCKET names a report', () => {
    expect(readInventory({})).toBeUndefined();
    expect(readInventory({ INVENTORY_BUCKET: 'inv', INVENTORY_KEY: 'inventory/raw/daily/' })).toEqual({ bucket: 'inv', prefix: 'inventory/raw/daily/' });
    expect(readInventory({ INVENTORY_BUCKET: 'inv', INVENTORY_KEY: 'a/2026-11-20T00-00Z/manifest.json' }))
      .toEqual({ bucket: 'inv', prefix: 'a/2026-11-20T00-00Z/manifest.json' });
  });

  test('a malformed member list is reported with its key and line', () => {
    expect(() => parseMembers(MEMBERS, Buffer.from('["a/1.jpg",1,0,0,5]\n{"key":"b"}\n'))).toThrow(/part-00000-of-00002\.jsonl line 2/);
  });

  test('a missing object is told apart from other read errors, for the local sink as for S3 errors', async () => {
    const missing = await new LocalDirectorySink(fs.mkdtempSync(path.join(os.tmpdir(), 'missing-'))).get('_plan/results/x.json').catch((e: unknown) => e);
    expect(isObjectNotFound(missing)).toBe(true);
    expect(isObjectNotFound(Object.assign(new Error('gone'), { code: 'EACCES' }))).toBe(false);
    expect(isObjectNotFound(new S3StorageError('s3://b/k', 'SlowDown', 6, 'SlowDown (HTTP 503)', undefined))).toBe(false);
  });

  test('the source fingerprint does not depend on listing order and changes with any file', () => {
    const files = [{ key: 'b/2', size: 5, modified: 9 }, { key: 'a/1', size: 3, modified: 7 }, { key: 'a/ü', size: 1, modified: 1 }];
    expect(sourceFingerprint([...files].reverse())).toBe(sourceFingerprint(files));
    expect(sourceFingerprint([...files.slice(1), { key: 'b/2', size: 5, modified: 10 }])).not.toBe(sourceFingerprint(files));
  });
});

// The handlers' logic over the local-folder source and sink of the engine; the same run against a
// local S3 server, with faults, is in handlers-s3.test.ts.
describe('shard handlers: plan → pack → finalize over local folders', () => {
  async function run(sourceDir: string, outDir: string, force = false) {
    const source = new LocalDirectorySource(sourceDir);
    const sink = new LocalDirectorySink(outDir);
    const plan = await planDataset({ source, sink, destination: DESTINATION, settings: SETTINGS, force });
    return { plan, source, sink };
  }

  test('packs every file into a published version, and a rerun on the same source is up to date', async () => {
    // GIVEN
    const sourceDir = tempDir();
    const outDir = tempDir();
    writeFiles(sourceDir, { 'cat/1.jpg': 100, 'cat/2.jpg': 200, 'dog/1.jpg': 150, 'dog/2.jpg': 50, 'dog/3.jpg': 10 });
    // WHEN
    const { plan, source, sink } = await run(sourceDir, outDir);
    const tasks = tasksOf(outDir, plan);
    for (const task of tasks) await packShard(parsePackerEvent(task), { source, sink, format: 'tfrecord', readConcurrency: 4 });
    const result = await finalizeShards(parseFinalizerEvent(finalizerEvent(plan)), sink, 7);
    // THEN
    expect(plan).toMatchObject({
      upToDate: false, tasksBucket: 'packed-bucket', tasksKey: `packed/_plan/${plan.datasetVersion}/tasks.json`, shardCount: 2, reusedShards: 0, classes: 2,
    });
    expect(tasks.map((task) => task.shardName)).toEqual(['part-00000-of-00002', 'part-00001-of-00002']);
    expect(result).toMatchObject({ datasetVersion: plan.datasetVersion, manifestKey: MANIFEST_KEY, shards: 2, records: 5, failures: 0 });
    // Each packer attempt names itself in its keys (issue 38): part-00001-of-00002.<8 hex digits>.tfrecord.
    expect(fs.readdirSync(path.join(outDir, 'versions', plan.datasetVersion, 'shards')))
      .toEqual([expect.stringMatching(/^part-00000-of-00002\.[0-9a-f]{8}\.tfrecord$/), expect.stringMatching(/^part-00001-of-00002\.[0-9a-f]{8}\.tfrecord$/)]);
    // Published: the run's working files are gone.
    expect(await sink.list('_plan/')).toEqual([]);
    expect((await run(sourceDir, outDir)).plan).toMatchObject({ upToDate: true, datasetVersion: plan.datasetVersion });
    expect((await run(sourceDir, outDir, true)).plan).toMatchObject({ upToDate: false, fullRepackReason: 'a full repack was asked for' });
  });

  test('a changed source plans a new version on top of the current one, which stays current and untouched until it is published', async () => {
    const sourceDir = tempDir();
    const outDir = tempDir();
    writeFiles(sourceDir, { 'cat/1.jpg': 100, 'dog/1.jpg': 100 });
    const { plan, source, sink } = await run(sourceDir, outDir);
    for (const task of tasksOf(outDir, plan)) await packShard(task, { source, sink, format: 'tfrecord', readConcurrency: 2 });
    await finalizeShards(finalizerEvent(plan), sink, 7);
    const root = fs.readFileSync(path.join(outDir, MANIFEST_KEY));
    writeFiles(sourceDir, { 'dog/2.jpg': 10 });
    const rerun = await run(sourceDir, outDir);
    // SETTINGS ask for exactly 2 shards: such a dataset is packed whole each time (incremental repacks keep a target size).
    expect(rerun.plan).toMatchObject({ upToDate: false, fullRepackReason: 'an exact shard count was asked for' });
    expect(rerun.plan.datasetVersion).toMatch(/^v00000002-/);
    expect(fs.readFileSync(path.join(outDir, MANIFEST_KEY))).toEqual(root);
  });

  test('the finalizer fails, publishing nothing, when a shard has no result', async () => {
    const sourceDir = tempDir();
    const outDir = tempDir();
    writeFiles(sourceDir, { 'cat/1.jpg': 100, 'dog/1.jpg': 100 });
    const { plan, source, sink } = await run(sourceDir, outDir);
    const tasks = tasksOf(outDir, plan);
    await packShard(tasks[0], { source, sink, format: 'tfrecord', readConcurrency: 2 });
    await expect(finalizeShards(finalizerEvent(plan), sink, 7)).rejects.toThrow(/shard part-00001-of-00002 has no result/);
    expect(fs.existsSync(path.join(outDir, MANIFEST_KEY))).toBe(false);
    expect(fs.existsSync(path.join(outDir, 'published'))).toBe(false);
  });

  test('the finalizer refuses a plan from another run', async () => {
    const sourceDir = tempDir();
    const outDir = tempDir();
    writeFiles(sourceDir, { 'cat/1.jpg': 100, 'dog/1.jpg': 100 });
    const { plan, sink } = await run(sourceDir, outDir);
    await expect(finalizeShards({ ...finalizerEvent(plan), fingerprint: 'other' }, sink, 7)).rejects.toThrow(/is not the plan of this run/);
  });

  test('two executions planned from the same version: the first publishes and prunes the other\'s leftovers; the other fails as having lost the race', async () => {
    const sourceDir = tempDir();
    const outDir = tempDir();
    writeFiles(sourceDir, { 'cat/1.jpg': 100, 'dog/1.jpg': 100 });
    // Both plan before either publishes.
    const first = await run(sourceDir, outDir, true);
    const second = await run(sourceDir, outDir, true);
    expect([first.plan.datasetVersion, second.plan.datasetVersion].map((id) => id.slice(0, 9))).toEqual(['v00000001', 'v00000001']);
    for (const task of tasksOf(outDir, first.plan)) await packShard(task, { source: first.source, sink: first.sink, format: 'tfrecord', readConcurrency: 2 });
    await finalizeShards(finalizerEvent(first.plan), first.sink, 7);

    // The second's plan went with the first's prune: its finalizer says why it cannot publish, not what is missing.
    expect(await second.sink.list(`_plan/${second.plan.datasetVersion}/`)).toEqual([]);
    await expect(finalizeShards(finalizerEvent(second.plan), second.sink, 7))
      .rejects.toThrow(new RegExp(`another run published version ${first.plan.datasetVersion} as number 1 .* this run made ${second.plan.datasetVersion}`));
  });
});
