import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { listAll } from '../../lambda/io/storage';
import { claimKey, VersionLayout } from '../../lambda/packing/dataset-layout';
import { MissingFilesError } from '../../lambda/packing/finalize';
import { LEFTOVER_MIN_AGE_MS } from '../../lambda/packing/leftovers';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_FORMAT_VERSION, serializeManifest, sourceFingerprint } from '../../lambda/packing/manifest';
import { checkOptions, PlanError } from '../../lambda/packing/planning/plan-shards';
import { AfterClaimError, ConcurrentPublishError } from '../../lambda/packing/publish';
import type { RunRequest, VersionSummary } from '../../lambda/packing/run';
import { beginRun, completeRun, failRun, versionSummary } from '../../lambda/packing/run';
import { groupSamples } from '../../lambda/packing/samples/sample-grouping';
import { MIB } from '../../lib/contract/units';
import { MemorySource, MemoryStore } from '../support/memory-store';

// The decisions of a run's lifecycle (lambda/packing/run.ts), which the CLI's pack and the Lambdas
// share, on manifests and listings held in memory: nothing is packed here.

const VERSION_1 = 'v00000001-1a2b3c4d';
const MINUTE = 60_000;

function sourceOf(count: number): MemorySource {
  const source = new MemorySource();
  for (let i = 0; i < count; i++) source.files.set(`f${i}.bin`, { data: Buffer.alloc(10 + i, i), modified: Date.UTC(2026, 0, 1) });
  return source;
}

function requestFor(source: MemorySource, extra: Partial<RunRequest> = {}): RunRequest {
  return { sourceUri: source.uri, format: 'tfrecord', seed: 7, targetShardBytes: MIB, labels: 'none', ...extra };
}

/** A dataset whose version 1 was published from `source` with `requestFor`'s settings: its claim, its manifest and one shard's objects. */
async function publishedFrom(source: MemorySource): Promise<{ store: MemoryStore; manifest: Manifest }> {
  const store = new MemoryStore();
  const layout = new VersionLayout(VERSION_1);
  const files = await listAll(source);
  const shard = {
    key: `${layout.prefix}shards/part-00000-of-00001.tfrecord`, indexKey: `${layout.prefix}index/part-00000-of-00001.idx`,
    membersKey: layout.membersKey('part-00000-of-00001'), records: files.length, bytes: 1, crc32c: 'AAAAAA==', firstRecordId: 0, lastRecordId: files.length - 1,
  };
  const manifest: Manifest = {
    version: MANIFEST_FORMAT_VERSION, datasetVersion: VERSION_1, sequence: 1, previousVersion: null, format: 'tfrecord', seed: 7,
    source: { uri: source.uri, objects: files.length, bytes: files.reduce((sum, file) => sum + file.size, 0), fingerprint: sourceFingerprint(files) },
    labels: {}, classes: 0, records: files.length,
    sizing: { targetShardBytes: MIB, shardCount: null, consumers: 1, multipleOfConsumers: true, reusedShards: 0 },
    shards: [shard], failures: [],
  };
  const at = store.now;
  const put = (key: string, data: Buffer) => store.objects.set(key, { data, modified: at });
  put(claimKey(1), Buffer.from(JSON.stringify({ datasetVersion: VERSION_1, publishedAt: new Date(at).toISOString() })));
  put(layout.manifestKey, serializeManifest(manifest));
  put('manifest.json', serializeManifest(manifest));
  for (const key of [shard.key, shard.indexKey, shard.membersKey]) put(key, Buffer.from('x'));
  return { store, manifest };
}

const listingOf = (source: MemorySource) => async () => {
  const files = await listAll(source);
  return { files, fingerprint: () => sourceFingerprint(files) };
};

describe('beginRun', () => {
  test('checks the settings once, before the store is touched', async () => {
    // GIVEN
    const store = new MemoryStore();
    const source = sourceOf(3);

    // WHEN / THEN: settings out of range fail with no call to the store
    await expect(beginRun(store.sink(), requestFor(source, { consumers: 0 }), listingOf(source))).rejects.toThrow(PlanError);
    expect(store.calls).toEqual([]);

    // WHEN: good settings
    const run = await beginRun(store.sink(), requestFor(source), listingOf(source));

    // THEN: the checked settings are what the planners take, and checking them again hands them back as they are
    if (run.kind !== 'new') throw new Error(`expected a new version, got ${run.kind}`);
    expect(checkOptions(run.settings)).toBe(run.settings);
    expect(run.settings).toMatchObject({ seed: 7, targetShardBytes: MIB, consumers: 1, labels: 'none' });
  });

  test('names the first version, and the one after the current version, which it plans from', async () => {
    // GIVEN
    const source = sourceOf(3);
    const { store } = await publishedFrom(source);

    // WHEN
    const first = await beginRun(new MemoryStore().sink(), requestFor(source), listingOf(source));
    const next = await beginRun(store.sink(), requestFor(source, { fullRepack: true }), listingOf(source));

    // THEN
    expect(first).toMatchObject({ kind: 'new', previousVersion: null, layout: { id: expect.stringMatching(/^v00000001-[0-9a-f]{8}$/) } });
    expect(next).toMatchObject({ kind: 'new', previousVersion: VERSION_1, layout: { id: expect.stringMatching(/^v00000002-[0-9a-f]{8}$/) } });
    expect(next).toMatchObject({ version: { kind: 'full', reason: 'a full repack was asked for' } });
  });

  test('up to date: removes the current version\'s leftovers past the age rule by the store\'s clock, keeps younger ones, and leaves no clock object', async () => {
    // GIVEN: version 1, and two objects its manifest does not list, landed 31 and 29 minutes ago by the store's clock
    const source = sourceOf(3);
    const { store } = await publishedFrom(source);
    const layout = new VersionLayout(VERSION_1);
    const old = `${layout.prefix}shards/part-00000-of-00001.0ld0ld00.tfrecord`;
    const young = `${layout.prefix}index/part-00000-of-00001.y0un9000.idx`;
    store.objects.set(old, { data: Buffer.from('late'), modified: store.now - LEFTOVER_MIN_AGE_MS - MINUTE });
    store.objects.set(young, { data: Buffer.from('late'), modified: store.now - LEFTOVER_MIN_AGE_MS + MINUTE });

    // WHEN
    const run = await beginRun(store.sink(), requestFor(source), listingOf(source));

    // THEN
    expect(run).toMatchObject({ kind: 'up-to-date', removedLeftovers: [old], current: { datasetVersion: VERSION_1 } });
    expect(store.objects.has(old)).toBe(false);
    expect(store.objects.has(young)).toBe(true);
    expect([...store.objects.keys()].filter((key) => key.startsWith('_plan/'))).toEqual([]);
  });

  test('up to date without leftovers: writes nothing', async () => {
    // GIVEN
    const source = sourceOf(3);
    const { store } = await publishedFrom(source);

    // WHEN
    const run = await beginRun(store.sink(), requestFor(source), listingOf(source));

    // THEN
    expect(run).toMatchObject({ kind: 'up-to-date', removedLeftovers: [] });
    expect(store.calls.filter((call) => !/^(get|list|modifiedAt) /.test(call))).toEqual([]);
  });
});

describe('versionSummary', () => {
  test('is the finalize input of the run: its id, its base, the source\'s totals and fingerprint, the plan\'s labels, the decision\'s sizing and reused shards', async () => {
    // GIVEN
    const source = sourceOf(3);
    const { store } = await publishedFrom(source);
    const preprocessing = { shorterSide: 256, longerSide: null, jpegQuality: 90, keepGrayscale: false, sharp: '0.34.0', libvips: '8.17.0' };
    const run = await beginRun(store.sink(), requestFor(source, { fullRepack: true, preprocessing }), listingOf(source));
    if (run.kind !== 'new') throw new Error(`expected a new version, got ${run.kind}`);

    // WHEN
    const summary = versionSummary(run, { seed: 7, labelMap: { a: 0 }, totalFiles: 3, totalBytes: 33 }, 'f1ng3rpr1nt');

    // THEN
    expect(summary).toEqual({
      datasetVersion: run.layout.id, previousVersion: VERSION_1, format: 'tfrecord', seed: 7,
      source: { uri: source.uri, objects: 3, bytes: 33, fingerprint: 'f1ng3rpr1nt' }, labels: { a: 0 },
      sizing: { targetShardBytes: MIB, shardCount: null, consumers: 1, reusedShards: 0 }, reused: [], preprocessing,
    });
  });
});

describe('versionSummary of multi-part samples', () => {
  test('the files left out (no label file row) are failures of their samples, each sample once, counted among the samples; the objects are the files', async () => {
    // GIVEN: samples a/1 and a/2 grouped and planned; both files of sample a/3 left out of the listing, unlabelled
    const store = new MemoryStore();
    const source = sourceOf(0);
    const grouping = groupSamples(['a/1.jpg', 'a/1.json', 'a/2.jpg', 'a/2.json'].map((key) => ({ key, size: 5, modified: 1 })))!;
    const run = await beginRun(store.sink(), requestFor(source), async () => ({ files: grouping.samples, fingerprint: () => 'f', sample: grouping.description }));
    if (run.kind !== 'new') throw new Error(`expected a new version, got ${run.kind}`);
    const reason = "no row of the label file file:///labels.csv labels its sample 'a/3'";
    const unlabelled = ['a/3.jpg', 'a/3.json'].map((key) => ({ key, reason }));

    // WHEN
    const summary = versionSummary(run, { seed: 7, labelMap: {}, totalFiles: 2, totalBytes: 20 }, 'f', unlabelled, { failures: grouping.failures, files: 4, bytes: 20 });

    // THEN: 2 records + 1 failure = 3 samples, of 6 files
    expect(summary.failures).toEqual([{ key: 'a/3', reason }]);
    expect(summary.source.objects).toBe(6);
    expect(summary.sample).toMatchObject({ required: ['jpg', 'json'], samples: 3 });
  });
});

describe('completeRun and failRun', () => {
  const RUN = 'v00000002-0badc0de';
  /** A run of number 2 that wrote a shard and its working files, with nothing to publish but a listed failure. */
  function runWithObjects(store: MemoryStore): { summary: VersionSummary; keys: string[] } {
    const layout = new VersionLayout(RUN);
    const keys = [`${layout.prefix}shards/part-00000-of-00001.tfrecord`, `${layout.planPrefix}plan.json`];
    for (const key of keys) store.objects.set(key, { data: Buffer.from('x'), modified: store.now });
    const summary: VersionSummary = {
      datasetVersion: RUN, previousVersion: VERSION_1, format: 'tfrecord', seed: 7, source: { uri: 'memory:///source/', objects: 1, bytes: 1, fingerprint: 'f' },
      labels: {}, sizing: { targetShardBytes: MIB, shardCount: null, consumers: 1, reusedShards: 0 }, reused: [],
    };
    return { summary, keys };
  }
  const failures = [{ key: 'f0.bin', reason: 'unreadable' }];

  test.each([
    ['the CLI\'s run: its version\'s folder and working files go', false, false],
    ['a resumable run (the finalizer): they stay for its retry', true, true],
  ])('a run that is refused before its claim: %s', async (_case, resumable, kept) => {
    // GIVEN
    const store = new MemoryStore();
    const { summary, keys } = runWithObjects(store);

    // WHEN
    const error = await completeRun(store.sink(), summary, { shards: [], failures }, { retentionDays: 7, resumable }).catch((e: unknown) => e);

    // THEN
    expect(error).toBeInstanceOf(MissingFilesError);
    for (const key of keys) expect(store.objects.has(key)).toBe(kept);
  });

  test.each([false, true])('a run whose number another run took (resumable %s): ConcurrentPublishError, and its objects go', async (resumable) => {
    // GIVEN: claim 2 names another version
    const store = new MemoryStore();
    const { summary, keys } = runWithObjects(store);
    store.objects.set(claimKey(2), { data: Buffer.from(JSON.stringify({ datasetVersion: 'v00000002-aaaaaaaa', publishedAt: 'then' })), modified: store.now });

    // WHEN
    const error = await completeRun(store.sink(), summary, { shards: [], failures }, { retentionDays: 7, allowMissing: true, resumable }).catch((e: unknown) => e);

    // THEN
    expect(error).toBeInstanceOf(ConcurrentPublishError);
    for (const key of keys) expect(store.objects.has(key)).toBe(false);
  });

  test('an error at or after the claim deletes nothing, resumable or not', async () => {
    // GIVEN
    const store = new MemoryStore();
    const { summary, keys } = runWithObjects(store);
    const afterClaim = new AfterClaimError(RUN, true, 'copying it to the root', new Error('SlowDown'));

    // WHEN
    const error = await failRun(store.sink(), summary, afterClaim).catch((e: unknown) => e);

    // THEN
    expect(error).toBe(afterClaim);
    for (const key of keys) expect(store.objects.has(key)).toBe(true);
  });
});

describe('one lifecycle', () => {
  test('a version id is made in one place: run.ts', () => {
    // GIVEN: the runtime code
    const root = path.join(__dirname, '..', '..');
    const sources = ['lambda', 'bin'].flatMap((folder) => readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.includes('dist')).map((file) => path.join(folder, file)));

    // WHEN
    const callers = sources.filter((file) => /\bnewVersionId\(/.test(readFileSync(path.join(root, file), 'utf8'))
      && !file.endsWith(path.join('packing', 'dataset-layout.ts')));

    // THEN
    expect(callers).toEqual([path.join('lambda', 'packing', 'run.ts')]);
  });
});
