import { DEFAULT_SHARD_BYTES } from '../../lib/contract/shard-limits';
import { listAll } from '../../lambda/io/storage';
import { sourceFingerprint } from '../../lambda/packing/manifest';
import { packDataset } from '../../lambda/packing/pack';
import type { VersionListing, VersionRequest } from '../../lambda/packing/plan-version';
import { planVersion } from '../../lambda/packing/plan-version';
import { currentVersion } from '../../lambda/packing/publish';
import { seededBytes } from '../support/local-files';
import { MemorySource, MemoryStore } from '../support/memory-store';

// The one decision of a packing run, taken by the CLI's pack and the planner Lambda alike: up to
// date, incremental on the current version, or full with the reason. The decision reads listings and
// manifests only: source and dataset are held in memory (the engine's real pack writes the version it
// decides on), as the local and S3 stores have suites of their own.

const MIB = 1024 * 1024;

/** `count` files of 2–6 KB named from `first` on, in two classes, added to the source. */
function addFiles(source: MemorySource, first: number, count: number): MemorySource {
  for (let i = first; i < first + count; i++) {
    source.files.set(`${i % 2 ? 'cat' : 'dog'}/${String(i).padStart(5, '0')}.jpg`, { data: seededBytes(`${i}`, 2000 + ((i * 7919) % 4000)), modified: Date.UTC(2026, 0, 1) });
  }
  return source;
}

/** A source of 600 files packed once to a 1 MiB target for 2 consumers: the source, the dataset and its current version. */
async function packedOnce() {
  const source = addFiles(new MemorySource(), 0, 600);
  const sink = new MemoryStore().sink();
  await packDataset({ source, sink, format: 'tfrecord', seed: 3, targetShardBytes: MIB, consumers: 2 });
  const request: VersionRequest = { sourceUri: source.uri, format: 'tfrecord', seed: 3, targetShardBytes: MIB, consumers: 2 };
  return { source, sink, request, current: (await currentVersion(sink))! };
}

/** The source's listing held in memory, its fingerprint counted each time it is asked for. */
async function heldListing(source: MemorySource) {
  const listed = await listAll(source);
  const asked = { count: 0 };
  const listing: VersionListing = { files: listed, fingerprint: () => (asked.count++, sourceFingerprint(listed)) };
  return { listing, asked };
}

describe('planVersion', () => {
  test('without a current version: full, no reason, the default target applied, the fingerprint not computed', async () => {
    // GIVEN
    const source = addFiles(new MemorySource(), 0, 10);
    const { listing, asked } = await heldListing(source);

    // WHEN
    const plan = await planVersion(new MemoryStore().sink(), undefined, listing, { sourceUri: source.uri, format: 'tfrecord', seed: 1 });

    // THEN
    expect(plan).toEqual({ kind: 'full', reason: '', sizing: { targetShardBytes: DEFAULT_SHARD_BYTES, shardCount: null, consumers: 1, reusedShards: 0 }, reused: [] });
    expect(asked.count).toBe(0);
  });

  test('the same listing and settings: up to date, with the current version; a full repack asked for packs in full without comparing', async () => {
    // GIVEN
    const { source, sink, request, current } = await packedOnce();
    const { listing, asked } = await heldListing(source);

    // WHEN
    const same = await planVersion(sink, current, listing, request);
    const forced = await planVersion(sink, current, listing, { ...request, fullRepack: true });

    // THEN
    expect(same).toEqual({ kind: 'up-to-date', current });
    expect(forced).toMatchObject({ kind: 'full', reason: 'a full repack was asked for', reused: [] });
    expect(asked.count).toBe(1);
  });

  test('files added: incremental, reusing the current shards, the reuse counted in the sizing', async () => {
    // GIVEN
    const { source, sink, request, current } = await packedOnce();
    addFiles(source, 600, 30);
    const { listing } = await heldListing(source);

    // WHEN
    const plan = await planVersion(sink, current, listing, request);

    // THEN
    if (plan.kind !== 'incremental') throw new Error(`expected an incremental plan, got ${JSON.stringify(plan)}`);
    expect(plan.reason).toBe('');
    expect(plan.reused.length).toBeGreaterThan(0);
    expect(plan.reused).toEqual(current.manifest.shards.filter((shard) => plan.reused.some((kept) => kept.key === shard.key)));
    expect(plan.sizing).toEqual({ targetShardBytes: MIB, shardCount: null, consumers: 2, reusedShards: plan.reused.length });
    expect(plan.plan.totalFiles).toBe(630);
    expect(plan.plan.shards.flatMap((shard) => shard.records).length + plan.reused.reduce((sum, shard) => sum + shard.records, 0)).toBe(630);
  });

  test('a changed setting, or a shard count asked for exactly: full, saying which, without reading the member lists', async () => {
    // GIVEN: a member list lost, which only an incremental plan reads
    const { source, sink, request, current } = await packedOnce();
    const { listing } = await heldListing(source);
    await sink.delete(current.manifest.shards[0].membersKey);
    const changes: Array<[Partial<VersionRequest>, string]> = [
      [{ seed: 4 }, 'the seed changed (3 → 4)'],
      [{ format: 'recordio' }, 'the format changed (tfrecord → recordio)'],
      // A count replaces the target: the settings codec refuses both.
      [{ shardCount: 4, targetShardBytes: undefined }, 'an exact shard count was asked for'],
      [{ consumers: 4 }, 'the consumers changed (2 → 4)'],
      [{ targetShardBytes: 2 * MIB }, 'the target shard size changed'],
      [{ labels: 'none' }, 'the labelling changed (folder → none)'],
    ];

    // WHEN
    const plans = await Promise.all(changes.map(([change]) => planVersion(sink, current, listing, { ...request, ...change })));

    // THEN
    expect(plans.map((plan) => plan.kind === 'up-to-date' ? plan.kind : plan.reason)).toEqual(changes.map(([, reason]) => reason));
    for (const plan of plans) expect(plan).toMatchObject({ kind: 'full', sizing: { reusedShards: 0 }, reused: [] });
  });

  test('packed to an exact shard count: up to date while nothing changes, then full, however few files were added', async () => {
    // GIVEN
    const { source, sink, request } = await packedOnce();
    const exact = { ...request, shardCount: 4, targetShardBytes: undefined };
    await packDataset({ source, sink, format: 'tfrecord', seed: 3, shardCount: 4, consumers: 2 });
    const current = (await currentVersion(sink))!;

    // WHEN
    const same = await planVersion(sink, current, (await heldListing(source)).listing, exact);
    addFiles(source, 600, 2);
    const grown = await planVersion(sink, current, (await heldListing(source)).listing, exact);
    const target = await planVersion(sink, current, (await heldListing(source)).listing, request);

    // THEN
    expect(same).toEqual({ kind: 'up-to-date', current });
    expect(grown).toMatchObject({ kind: 'full', reason: 'an exact shard count was asked for', sizing: { targetShardBytes: null, shardCount: 4 } });
    expect(target).toMatchObject({ kind: 'full', reason: 'the previous version was packed to an exact shard count', sizing: { targetShardBytes: MIB, shardCount: null } });
  });

  test('a listing not held in memory: up to date when its fingerprint matches, else full, as no incremental plan can be made', async () => {
    // GIVEN: the runner's fingerprint of a listing it could not hold (the CLI's, from the pass that plans it from disk)
    const { source, sink, request, current } = await packedOnce();
    const unchanged = sourceFingerprint(await listAll(source));
    addFiles(source, 600, 30);
    const changed = sourceFingerprint(await listAll(source));

    // WHEN
    const same = await planVersion(sink, current, { fingerprint: () => unchanged }, request);
    const grown = await planVersion(sink, current, { fingerprint: () => changed }, request);

    // THEN
    expect(same).toEqual({ kind: 'up-to-date', current });
    expect(grown).toMatchObject({ kind: 'full', reason: 'the listing is too large to hold in memory, which an incremental repack needs', reused: [] });
  });
});
