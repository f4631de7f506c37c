import * as os from 'node:os';
import type { VersionLayout } from './dataset-layout';
import { shardFormat } from './formats';
import type { ShardFormat, ShardFormatName } from './formats/shard-format';
import type { ListedFile, PackingSink, PackingSource } from '../io/storage';
import { ListingCollector } from './listing/listing-collector';
import type { ListingPlan } from './listing/plan-listing';
import { planListing } from './listing/plan-listing';
import type { Manifest, ManifestShard } from './manifest';
import { PLAN_LIMITS } from './planning/grouped-plan';
import type { IncrementalPlan } from './planning/incremental-plan';
import type { PlanSettings } from './planning/plan-shards';
import type { LabelMode, PlannedShard } from './planning/plan-types';
import type { ImagePreprocessing } from './preprocess/image-preprocessing';
import { ImagePreprocessor } from './preprocess/image-preprocessor';
import type { RecordContent } from './image-check/record-content';
import { checksImages } from './image-check/record-content';
import type { PruneResult } from './prune';
import { normalizePackingSettings } from '../../lib/contract/packing-settings';
import type { SampleGrouping } from './samples/sample-grouping';
import { checkSampleSettings, groupSamples, formsMultiPartSamples } from './samples/sample-grouping';
import { beginRun, completeRun, failRun, versionSummary } from './run';
import type { LabelTable } from './labels/label-table';
import { LabelledSource } from './labels/labelled-source';
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
  /**
   * The label file read (labels `file`; given alone, it makes them so): a listed file whose sample it
   * does not label is a listed failure, neither planned nor read.
   */
  readonly labelTable?: LabelTable;
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
  /** Up to date: the current version's leftovers this run removed (a publishing run's are in `prune`). */
  readonly removedLeftovers: string[];
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
  // Before the listing: settings out of range or sharp missing fail the run at once.
  const preprocessing = options.preprocessing ? new ImagePreprocessor(options.preprocessing).record : undefined;
  const checkImages = checksImages(options.content ?? 'any', options.preprocessing !== undefined);
  const collector = new ListingCollector(PLAN_LIMITS.groupFiles, options.scratchDirectory ?? os.tmpdir(), options.onLargeListing, format.recordBytes.bind(format));
  try {
    let held: ListedFile[] | undefined;
    let grouping: SampleGrouping | undefined;
    const labelled = options.labelTable && new LabelledSource(options.source, options.labelTable);
    // A listing too large to hold is fingerprinted by the pass that plans it from disk: planned (once) when its fingerprint is asked for.
    let fullPlan: ListingPlan | undefined;
    const planInFull = (settings: PlanSettings) => fullPlan ??= planListing(collector, settings, PLAN_LIMITS, undefined, held);
    const run = await beginRun(options.sink, {
      sourceUri: options.source.uri, format: options.format, seed: options.seed, targetShardBytes: options.targetShardBytes,
      shardCount: options.shardCount, consumers: options.consumers, labels: options.labels, labelTable: options.labelTable, preprocessing,
      fullRepack: options.fullRepack,
    }, async (settings) => {
      for await (const batch of (labelled ?? options.source).list()) collector.add(batch);
      const listed = listedSamples(collector, normalizePackingSettings(options).parts);
      grouping = listed.grouping;
      if (grouping) checkSampleSettings(grouping, options);
      held = grouping?.samples ?? listed.held;
      // Of the files, not the samples: the fingerprint says whether the source changed.
      const files = listed.held;
      return { files: held, fingerprint: () => (files ? collector.fingerprintOf(files) : planInFull(settings).fingerprint()), sample: grouping?.description };
    });
    if (run.kind === 'up-to-date') {
      const { current, repairedRootCopies, removedLeftovers } = run;
      return { manifest: current.manifest, currentVersion: current.datasetVersion, upToDate: true, shardBytesWritten: 0, repairedRootCopies, removedLeftovers };
    }
    const { version, layout } = run;
    const plan = version.kind === 'incremental' ? incrementalListingPlan(version.plan, () => collector.fingerprintOf(held!)) : planInFull(run.settings);
    const results = await writeShards(plan, options, format, layout, checkImages).catch((error: unknown) => failRun(options.sink, { datasetVersion: layout.id, previousVersion: run.previousVersion }, error));
    const written = results.shards.map((result) => rebase(result.shard, layout));
    const { manifest, prune, currentVersion: newest } = await completeRun(options.sink, versionSummary(
      run, plan, results.fingerprint, labelled?.unlabelled,
      // Samples are records; the source's objects are its files (the sample description counts the samples).
      grouping && { failures: grouping.failures, files: collector.count, bytes: collector.totalBytes },
    ), {
      shards: written, failures: results.shards.flatMap((r) => r.failures),
    }, { allowMissing: options.allowMissing, retentionDays: normalizePackingSettings(options).retentionDays, now: options.clock?.() });
    return {
      manifest, currentVersion: newest, upToDate: false, fullRepackReason: version.reason || undefined,
      shardBytesWritten: written.reduce((sum, shard) => sum + shard.bytes, 0), prune, repairedRootCopies: run.repairedRootCopies, removedLeftovers: [],
    };
  } finally {
    collector.dispose();
  }
}

/**
 * The listing as it is planned: undefined `held` when it went to disk (see ListingCollector), and the
 * multi-part samples it forms, if any (groupSamples). A listing on disk is read back into memory only when
 * its files form multi-part samples (counted over neighbours in key order) or parts are required:
 * samples are grouped and planned in memory, one entry per sample.
 */
function listedSamples(collector: ListingCollector, parts: readonly string[] | undefined): { held?: ListedFile[]; grouping?: SampleGrouping } {
  let held = collector.takeInMemory();
  if (!held && (parts !== undefined || formsMultiPartSamples(collector.sorted()))) held = [...collector.sorted()];
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
