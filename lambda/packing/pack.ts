import * as os from 'node:os';
import { newVersionId, VersionLayout } from './dataset-layout';
import { finalizeDataset } from './finalize';
import { shardFormat } from './formats';
import type { ShardFormat, ShardFormatName } from './formats/shard-format';
import { storeDidNotAnswer } from '../io/s3-no-answer';
import type { PackingSink, PackingSource } from '../io/storage';
import { DELETES_AT_ONCE, mapLimited } from './limited';
import { ListingCollector } from './listing/listing-collector';
import type { ListingPlan } from './listing/plan-listing';
import { planListing } from './listing/plan-listing';
import type { Manifest, ManifestShard } from './manifest';
import { PLAN_LIMITS } from './planning/grouped-plan';
import type { IncrementalPlan } from './planning/incremental-plan';
import { planVersion } from './plan-version';
import type { LabelMode, PlannedShard, PlanOptions } from './planning/plan-types';
import type { ImagePreprocessing } from './preprocess/image-preprocessing';
import { ImagePreprocessor } from './preprocess/image-preprocessor';
import type { RecordContent } from './image-check/record-content';
import { checksImages } from './image-check/record-content';
import type { PruneResult } from './prune';
import { tidyBeforePlan } from './prune';
import { normalizePackingSettings } from '../../lib/contract/packing-settings';
import type { ListedFile } from '../io/storage';
import type { SampleGrouping } from './samples/sample-grouping';
import { checkSampleSettings, groupSamples, hasNeighbouringParts } from './samples/sample-grouping';
import { AfterClaimError, ConcurrentPublishError, currentVersion, throwIfClaimedByAnother } from './publish';
import type { ShardResult } from './shard-writer';
import { writeShardWithMembers } from './shard-writer';

/**
 * Writes one planned shard, its index and its member list under `prefix` (the new version's
 * folder; see writeShardWithMembers) and reports each input file handled (its bytes, and how many
 * files the report covers). The default writes in this process; the CLI passes a worker-thread pool.
 */
export type ShardWriteFunction = (shard: PlannedShard, prefix: string, onFiles: (bytes: number, files: number) => void) => Promise<ShardResult>;

/** A packing run. */
export interface PackOptions {
  readonly source: PackingSource;
  readonly sink: PackingSink;
  readonly format: ShardFormatName;
  readonly seed: number;
  /** Target shard size in bytes (1–128 MiB, default 64 MiB). */
  readonly targetShardBytes?: number;
  /** Exact shard count instead of a target size. */
  readonly shardCount?: number;
  /** Instances × GPU processes × loader workers: shard count rounded up to a multiple. */
  readonly consumers?: number;
  readonly labels?: LabelMode;
  /** Files read ahead per shard (default: PACKING_DEFAULTS.readConcurrency, lib/contract/packing-settings.ts). */
  readonly readConcurrency?: number;
  /** Shards written at once (default 2). */
  readonly parallelShards?: number;
  /** How shards are written (default: in this process, from `source` to `sink`). */
  readonly writeShard?: ShardWriteFunction;
  readonly onProgress?: (progress: PackProgress) => void;
  /**
   * Where a listing too large to hold (over 131,072 files) is sorted and grouped, in a folder
   * removed at the end (about 60 bytes a file, twice). Default: the system's temporary folder.
   */
  readonly scratchDirectory?: string;
  /**
   * Called once if the listing is too large to hold and goes to `scratchDirectory`: the CLI then
   * has V8 favour memory over speed for the rest of the run (see bin/cli/pack.ts).
   */
  readonly onLargeListing?: () => void;
  /** Pack every file again instead of reusing the unchanged shards of the current version. */
  readonly fullRepack?: boolean;
  /**
   * Publish the new version even when some files are listed failures. Default: a run with failures
   * publishes nothing (MissingFilesError, naming them) and the current version stays current.
   */
  readonly allowMissing?: boolean;
  /** Versions that stopped being current longer ago than this are pruned after publishing (default: PACKING_DEFAULTS.retentionDays). */
  readonly retentionDays?: number;
  /** The packer's clock, written into the claim for people (default: the system's); retention uses the store's clock. */
  readonly clock?: () => Date;
  /**
   * Resize and re-encode every image as JPEG as it is packed (needs sharp). A `writeShard` of
   * your own must apply the same settings. Default: the files' bytes, unchanged.
   */
  readonly preprocessing?: ImagePreprocessing;
  /**
   * `images`: every file is checked as an image the training readers decode (the whole file
   * parsed, lambda/packing/image-check/), and those that are not are listed failures; `any`: any
   * bytes become records. Default `any`; the CLI and the construct choose `images` for folder
   * labels (defaultRecordContent). Preprocessing checks every file whatever this says. A
   * `writeShard` of your own must check as this says.
   */
  readonly content?: RecordContent;
  /**
   * The parts every multi-part sample must have (`jpg`, `json`, `mask.png`; lib/contract/sample-parts.ts).
   * Default: every part seen. Files that share a key up to the first dot of their names are one sample
   * either way (lambda/packing/samples/).
   */
  readonly parts?: readonly string[];
}

/** What a packing run did. */
export interface PackResult {
  /** The current version's manifest: the new one, or the one already current when up to date. */
  readonly manifest: Manifest;
  /**
   * The version current when the run ended: `manifest`'s, or a newer one another run published
   * while this one finished publishing (this run's version was then superseded).
   */
  readonly currentVersion: string;
  /** True when the current version already matched the source and settings: nothing was written. */
  readonly upToDate: boolean;
  /** Why every file was packed again, when there was a version to build on. */
  readonly fullRepackReason?: string;
  /** Root copies this run found behind the newest claim and rewrote before anything else (a run that stopped after its claim). */
  readonly repairedRootCopies: string[];
  /** Bytes of the shards this run wrote (reused shards are not written). */
  readonly shardBytesWritten: number;
  readonly prune?: PruneResult;
}

/** How far a run is. */
export interface PackProgress {
  readonly filesDone: number;
  readonly bytesDone: number;
  readonly totalFiles: number;
  readonly totalBytes: number;
  readonly shardsDone: number;
  readonly totalShards: number;
}

/**
 * Packs a source into a new version of the dataset and publishes it (ARCHITECTURE.md "Dataset
 * layout"): list → plan (planVersion: up to date, incremental on the current version, or full) → write the
 * new shards, a few at once, each with bounded read-ahead, into the version's folder → finalize
 * (indexes, manifest, checks, the atomic publish) → prune old versions. First of all, root copies
 * left behind the newest claim by a run that stopped after its claim are repaired, and what failed
 * runs left below the newest claim is removed (tidyBeforePlan). Nothing of a
 * published version is changed. Inputs that cannot be read are listed in the manifest's failures,
 * never dropped, and a run with any publishes nothing unless `allowMissing`; any other error before the claim fails the run, publishes nothing and removes the
 * run's folder; at the claim or after it, the run deletes nothing (ARCHITECTURE.md "Publishing protocol"). Listings of more than 131,072
 * files are sorted and planned through files in `scratchDirectory`, a group at a time (those are
 * packed in full: an incremental plan holds the listing in memory).
 */
export async function packDataset(options: PackOptions): Promise<PackResult> {
  const format = shardFormat(options.format);
  const recordBytes = format.recordBytes.bind(format);
  // Before the listing: settings out of range or sharp missing fail the run at once.
  const preprocessing = options.preprocessing ? new ImagePreprocessor(options.preprocessing).record : undefined;
  const checkImages = checksImages(options.content ?? 'any', options.preprocessing !== undefined);
  const repairedRootCopies = await tidyBeforePlan(options.sink);
  const current = await currentVersion(options.sink);
  const collector = new ListingCollector(PLAN_LIMITS.groupFiles, options.scratchDirectory ?? os.tmpdir(), options.onLargeListing, recordBytes);
  try {
    for await (const batch of options.source.list()) collector.add(batch);
    const listed = listedSamples(collector, normalizePackingSettings(options).parts);
    if (listed.grouping) checkSampleSettings(listed.grouping, options);
    const held = listed.grouping?.samples ?? listed.held;
    const planOptions: PlanOptions = {
      seed: options.seed, targetShardBytes: options.targetShardBytes, shardCount: options.shardCount,
      consumers: options.consumers, labels: options.labels, recordBytes,
    };
    // A listing too large to hold is fingerprinted by the pass that plans it from disk: planned (once) when its fingerprint is asked for.
    let fullPlan: ListingPlan | undefined;
    const planInFull = () => fullPlan ??= planListing(collector, planOptions, PLAN_LIMITS, undefined, held);
    const listing = { files: held, fingerprint: () => (listed.held ? collector.fingerprintOf(listed.held) : planInFull().fingerprint()) };
    const sample = listed.grouping?.description;
    const version = await planVersion(options.sink, current, listing, {
      ...planOptions, sourceUri: options.source.uri, format: options.format, preprocessing, fullRepack: options.fullRepack, sample,
    });
    if (version.kind === 'up-to-date') {
      return { manifest: version.current.manifest, currentVersion: version.current.datasetVersion, upToDate: true, shardBytesWritten: 0, repairedRootCopies };
    }
    const plan = version.kind === 'incremental' ? incrementalListingPlan(version.plan, () => collector.fingerprintOf(held!)) : planInFull();
    const layout = new VersionLayout(newVersionId((current?.sequence ?? 0) + 1));
    try {
      const results = await writeShards(plan, options, format, layout, checkImages);
      const written = results.shards.map((result) => rebase(result.shard, layout));
      const { manifest, prune, currentVersion: newest } = await finalizeDataset({
        sink: options.sink,
        datasetVersion: layout.id,
        previousVersion: current?.datasetVersion ?? null,
        format: options.format,
        seed: plan.seed,
        // Samples are records; the source's objects are its files (the sample description counts the samples).
        source: { uri: options.source.uri, objects: collector.count, bytes: collector.totalBytes, fingerprint: results.fingerprint },
        labels: plan.labelMap,
        sizing: version.sizing,
        shards: [...version.reused, ...written],
        failures: [...(listed.grouping?.failures ?? []), ...results.shards.flatMap((r) => r.failures)],
        ...(sample ? { sample } : {}),
        allowMissing: options.allowMissing,
        retentionMs: normalizePackingSettings(options).retentionDays * 86_400_000,
        now: options.clock?.(),
        preprocessing,
      });
      return {
        manifest, currentVersion: newest, upToDate: false, fullRepackReason: version.reason || undefined,
        shardBytesWritten: written.reduce((sum, shard) => sum + shard.bytes, 0), prune, repairedRootCopies,
      };
    } catch (error) {
      // At the claim or after it, the version may be published: nothing of it is deleted (the next publish prunes a loser's folder).
      // A store that stopped answering would only make the clean-up wait out its timeouts too: its folder is left to that prune as well.
      if (error instanceof AfterClaimError || storeDidNotAnswer(error)) throw error;
      await removeUnpublished(options.sink, layout);
      if (error instanceof ConcurrentPublishError) throw error;
      // Lost the race to publish: that is the error to report, whatever failed first (the winner prunes the loser's objects).
      // The check is best effort: a store that does not answer must not hide the error that failed the run.
      await throwIfClaimedByAnother(options.sink, layout.id, current?.datasetVersion ?? null).catch((check: unknown) => {
        if (check instanceof ConcurrentPublishError) throw check;
      });
      throw error;
    }
  } finally {
    collector.dispose();
  }
}

/**
 * The listing as it is planned: undefined `held` when it went to disk (see ListingCollector), and the
 * multi-part samples it forms, if any (groupSamples). A listing on disk is read back into memory only when
 * its files form multi-part samples (their parts are neighbours in key order) or parts are required:
 * samples are grouped and planned in memory, one entry per sample.
 */
function listedSamples(collector: ListingCollector, parts: readonly string[] | undefined): { held?: ListedFile[]; grouping?: SampleGrouping } {
  let held = collector.takeInMemory();
  if (!held && (parts !== undefined || hasNeighbouringParts(collector.sorted()))) held = [...collector.sorted()];
  const grouping = held && groupSamples(held, parts);
  if (grouping) {
    // Of the files, not the samples: the fingerprint says whether the source changed (and is hashed once, now).
    collector.fingerprintOf(held!);
  }
  return { held, grouping };
}

function incrementalListingPlan(plan: IncrementalPlan, fingerprint: () => string): ListingPlan {
  return {
    seed: plan.seed, labelMap: plan.labelMap, totalFiles: plan.totalFiles, totalBytes: plan.totalBytes,
    shardCount: plan.shards.length, groups: [plan.shards], fingerprint,
  };
}

/** A shard as its writer reported it (keys in the version's folder), with keys of the dataset. */
function rebase(shard: ManifestShard, layout: VersionLayout): ManifestShard {
  return { ...shard, key: layout.rebase(shard.key), indexKey: layout.rebase(shard.indexKey), membersKey: layout.rebase(shard.membersKey) };
}

/** Best effort: the objects of a version that was not published go, so a failed run leaves nothing a reader could mistake. */
async function removeUnpublished(sink: PackingSink, layout: VersionLayout): Promise<void> {
  try {
    await mapLimited(await sink.list(layout.prefix), DELETES_AT_ONCE, (key) => sink.delete(key));
  } catch {
    // The run's own error is what the caller needs; an unpublished folder is never read.
  }
}

/** Writes every shard of the plan, a few at once, taking the plan's groups as they are needed. */
async function writeShards(plan: ListingPlan, options: PackOptions, format: ShardFormat, layout: VersionLayout, checkImages: boolean) {
  const progress = { filesDone: 0, bytesDone: 0, totalFiles: plan.totalFiles, totalBytes: plan.totalBytes, shardsDone: 0, totalShards: plan.shardCount };
  const report = () => options.onProgress?.({ ...progress });
  report();

  const versionSink = options.sink.scoped(layout.prefix);
  const write: ShardWriteFunction = options.writeShard ?? ((shard, _prefix, onFiles) => writeShardWithMembers(shard, {
    source: options.source,
    sink: versionSink,
    format,
    readConcurrency: normalizePackingSettings(options).readConcurrency,
    preprocessing: options.preprocessing,
    checkImages,
    onFile: (bytes) => onFiles(bytes, 1),
  }));
  const results = new Array<ShardResult>(plan.shardCount);
  // An incremental plan's new shards are numbered after the reused ones.
  let firstIndex = -1;
  const groups = plan.groups[Symbol.iterator]();
  let group: Array<PlannedShard | undefined> = [];
  let taken = 0;
  const nextShard = (): PlannedShard | undefined => {
    while (taken === group.length) {
      const next = groups.next();
      if (next.done) return undefined;
      group = next.value;
      taken = 0;
    }
    const shard = group[taken];
    if (shard && firstIndex < 0) firstIndex = shard.index;
    // Once dispatched, a shard's records are let go: the live heap keeps the shards in flight only.
    group[taken++] = undefined;
    return shard;
  };
  // After a failure no shard starts, and the run rejects only once the shards in flight are done:
  // nothing keeps writing after the caller has been told the run failed.
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (!failure) {
      try {
        const shard = nextShard();
        if (!shard) return;
        results[shard.index - firstIndex] = await write(shard, layout.prefix, (bytes, files) => {
          progress.filesDone += files;
          progress.bytesDone += bytes;
          report();
        });
      } catch (error) {
        failure ??= { error };
        return;
      }
      progress.shardsDone++;
      report();
    }
  };
  const writing = Promise.all(Array.from({ length: Math.max(1, options.parallelShards ?? 2) }, worker));
  // A listing held in memory is fingerprinted (a sort and a hash over the whole listing) while the
  // first shards are written, once their writes have been handed over: with worker threads or S3
  // doing the writing, this thread would otherwise only wait.
  await new Promise((resolve) => setImmediate(resolve));
  const fingerprint = plan.fingerprint();
  await writing;
  if (failure) throw failure.error;
  return { shards: results, fingerprint };
}
