import type { PackingSink } from '../io/storage';
import { storeDidNotAnswer } from '../io/s3-no-answer';
import { newVersionId, VersionLayout } from './dataset-layout';
import type { FinalizeInput, FinalizeResult } from './finalize';
import { finalizeDataset } from './finalize';
import { shardFormat } from './formats';
import { removeLeftovers, unlistedIn } from './leftovers';
import { DELETES_AT_ONCE, mapLimited } from './limited';
import type { ManifestFailure, ManifestShard } from './manifest';
import { labelSourceOf } from './labels/label-table';
import { unlabelledSamples } from './labels/labelled-source';
import type { FullVersion, IncrementalVersion, VersionListing, VersionRequest } from './plan-version';
import { planVersion } from './plan-version';
import type { PlanSettings } from './planning/plan-shards';
import { checkOptions } from './planning/plan-shards';
import type { ShardPlan } from './planning/plan-types';
import type { PruneResult } from './prune';
import { pruneVersions, tidyBeforePlan } from './prune';
import type { CurrentVersion } from './publish';
import { AfterClaimError, ConcurrentPublishError, currentVersion, syncRootCopiesToNewest, throwIfClaimedByAnother } from './publish';

/*
 * One run's lifecycle, for the CLI's pack (pack.ts, in one process) and the Lambdas (the planner
 * begins, the packers write, the finalizer completes) alike (ARCHITECTURE.md "Publishing protocol"):
 * beginRun tidies, lists and decides what the run makes, and names the new version; versionSummary
 * is what its finalize is given; completeRun claims, cleans up after a failure and prunes.
 */

/** What a run is asked to make; records are framed as its format frames them. */
export type RunRequest = Omit<VersionRequest, 'recordBytes'>;

/** The current version already matches the source and the settings: nothing to write. */
export interface UpToDateRun {
  readonly kind: 'up-to-date';
  readonly current: CurrentVersion;
  /** Root copies found behind the newest claim and rewritten (a run that stopped after its claim). */
  readonly repairedRootCopies: string[];
  /** Objects in the current version's folder that its manifest does not list, old enough to go (leftovers.ts). */
  readonly removedLeftovers: string[];
}

/** A new version to write, named. */
export interface NewVersionRun {
  readonly kind: 'new';
  readonly layout: VersionLayout;
  /** The version it is planned from, whose shards it may reuse; null for the dataset's first. */
  readonly previousVersion: string | null;
  readonly version: FullVersion | IncrementalVersion;
  /** The plan's settings, checked once: the planners take them as they are. */
  readonly settings: PlanSettings;
  readonly request: RunRequest;
  readonly repairedRootCopies: string[];
}

export type BegunRun = UpToDateRun | NewVersionRun;

/**
 * Begins a run: the settings checked (before the store is touched), failed runs tidied away
 * (tidyBeforePlan), the current version read, the source listed by `list` (given the checked
 * settings), and the decision of planVersion. Up to date, the current version's old leftovers go;
 * else the new version gets its id, the one place a version id is made: the number after the
 * current one's, which the claim then takes or loses.
 */
export async function beginRun(
  sink: PackingSink, request: RunRequest, list: (settings: PlanSettings) => Promise<VersionListing>,
): Promise<BegunRun> {
  const format = shardFormat(request.format);
  const settings = checkOptions({ ...request, recordBytes: format.recordBytes.bind(format) });
  const { repairedRootCopies, versionKeys } = await tidyBeforePlan(sink);
  const current = await currentVersion(sink);
  const listing = await list(settings);
  // Multi-part samples are known once the files are listed: the request describes them from then on.
  const described = listing.sample ? { ...request, sample: listing.sample } : request;
  const version = await planVersion(sink, current, listing, { ...described, recordBytes: settings.recordBytes }, settings);
  if (version.kind === 'up-to-date') {
    return { kind: 'up-to-date', current: version.current, repairedRootCopies, removedLeftovers: await removeCurrentLeftovers(sink, version.current, versionKeys) };
  }
  return {
    kind: 'new',
    layout: new VersionLayout(newVersionId((current?.sequence ?? 0) + 1)),
    previousVersion: current?.datasetVersion ?? null,
    version, settings, request: described, repairedRootCopies,
  };
}

/**
 * What the finalize of a new version is given besides the shards its packers wrote: the CLI hands
 * it on, the planner writes it to `_plan/<version>/plan.json` for the finalizer.
 */
export interface VersionSummary extends Pick<FinalizeInput, 'datasetVersion' | 'previousVersion' | 'format' | 'seed' | 'source' | 'labels' | 'labelSource' | 'sample' | 'sizing' | 'preprocessing'> {
  /** Shards of earlier versions kept by reference, before the new ones. */
  readonly reused: ManifestShard[];
  /** Listed files kept out of the plan, with why (no row of the label file labels them, a sample lacks a part): failures beside the packers'. */
  readonly failures?: ManifestFailure[];
}

/** A listing grouped into multi-part samples (groupSamples): the plan's records are samples, the source's objects still its files. */
export interface PlannedSamples {
  /** Samples that lack a required part, left out of the plan as failures. */
  readonly failures: readonly ManifestFailure[];
  /** The listed files (the plan's samples' parts and the failed samples' files) and their bytes. */
  readonly files: number;
  readonly bytes: number;
}

/**
 * The summary of a begun run, once its plan's totals and the listing's fingerprint are known.
 * `unplanned`: listed files the plan left out as failures (LabelledSource), counted among the source's objects.
 * `samples`: the multi-part samples the plan's records are, if any (the request's `sample` describes them):
 * then the files left out are failures of their samples, each sample once and counted among the samples.
 */
export function versionSummary(
  run: NewVersionRun, plan: Pick<ShardPlan, 'seed' | 'labelMap' | 'totalFiles' | 'totalBytes'>, fingerprint: string, unplanned: readonly ManifestFailure[] = [],
  samples?: PlannedSamples,
): VersionSummary {
  const { layout, previousVersion, version, request } = run;
  // The samples were grouped from the files left in: those left out are samples besides (records + failures = samples).
  const unplannedFailures = samples ? unlabelledSamples(unplanned) : unplanned;
  const failures = [...unplannedFailures, ...(samples?.failures ?? [])];
  return {
    datasetVersion: layout.id,
    previousVersion,
    format: request.format,
    seed: plan.seed,
    source: { uri: request.sourceUri, objects: (samples?.files ?? plan.totalFiles) + unplanned.length, bytes: samples?.bytes ?? plan.totalBytes, fingerprint },
    labels: plan.labelMap,
    ...(request.labelTable ? { labelSource: labelSourceOf(request.labelTable) } : {}),
    ...(request.sample ? { sample: { ...request.sample, samples: request.sample.samples + (samples ? unplannedFailures.length : 0) } } : {}),
    ...(failures.length > 0 ? { failures } : {}),
    sizing: version.sizing,
    reused: version.reused,
    // What the packers do to each image: the manifest records it, the next run's up-to-date check compares it.
    ...(request.preprocessing ? { preprocessing: request.preprocessing } : {}),
  };
}

/** How a run ends. */
export interface CompleteOptions {
  /** Publish even when some inputs are listed failures (default: such a run publishes nothing). */
  readonly allowMissing?: boolean;
  /** Versions that stopped being current longer ago than this are pruned after the publish. */
  readonly retentionDays: number;
  /** The packer's clock, written into the claim for people (default: now); retention uses the store's. */
  readonly now?: Date;
  /** A retry takes the run up again from what it wrote (the Lambda finalizer): see {@link failRun}. */
  readonly resumable?: boolean;
}

/**
 * Completes a run with the shards its packers wrote (in shard order, after the summary's reused
 * ones) and the inputs they could not pack: finalize, the claim and the prune (finalizeDataset);
 * a failure ends as {@link failRun} says.
 */
export async function completeRun(
  sink: PackingSink, summary: VersionSummary, written: Pick<FinalizeInput, 'shards' | 'failures'>, options: CompleteOptions,
): Promise<FinalizeResult> {
  const { reused, failures: unplanned = [], ...described } = summary;
  return finalizeDataset({
    sink, ...described, shards: [...reused, ...written.shards], failures: [...unplanned, ...written.failures],
    allowMissing: options.allowMissing, retentionMs: retentionMs(options.retentionDays), now: options.now,
  }).catch((error: unknown) => failRun(sink, summary, error, options.resumable));
}

/**
 * Finishes a run whose claim is made, when a call before stopped after it (a retried finalizer):
 * the root's copies brought to the newest claim, whose version it returns, and the prune (which
 * takes the run's working files too).
 */
export async function finishClaimedRun(sink: PackingSink, datasetVersion: string, retentionDays: number): Promise<{ currentVersion: string; prune: PruneResult }> {
  const { current } = await syncRootCopiesToNewest(sink).catch((error: unknown) => {
    throw new AfterClaimError(datasetVersion, true, 'copying it to the root', error);
  });
  const prune = await pruneVersions(sink, retentionMs(retentionDays)).catch((error: unknown) => {
    throw new AfterClaimError(datasetVersion, true, 'pruning old versions', error);
  });
  return { currentVersion: current?.datasetVersion ?? datasetVersion, prune };
}

/**
 * Ends a run that failed with `error`, which it throws, or a ConcurrentPublishError when another
 * run took the version's number (the error to report, whatever failed first: the winner may have
 * pruned this run's objects). At the claim or after it, the version may be published: nothing of
 * it is deleted (the next publish prunes a loser's folder), and neither after a store that stopped
 * answering (the clean-up would only wait out its timeouts too). Otherwise nothing of the run was
 * published, and its version's folder and working files go, so that nothing is left a reader could
 * mistake; a `resumable` run keeps them for its retry unless it lost the race.
 */
export async function failRun(sink: PackingSink, run: Pick<VersionSummary, 'datasetVersion' | 'previousVersion'>, error: unknown, resumable = false): Promise<never> {
  if (error instanceof AfterClaimError || storeDidNotAnswer(error)) throw error;
  if (resumable && !(error instanceof ConcurrentPublishError)) throw error;
  await removeUnpublished(sink, new VersionLayout(run.datasetVersion));
  if (error instanceof ConcurrentPublishError) throw error;
  // Best effort: a store that does not answer must not hide the error that failed the run.
  await throwIfClaimedByAnother(sink, run.datasetVersion, run.previousVersion).catch((check: unknown) => {
    if (check instanceof ConcurrentPublishError) throw check;
  });
  throw error;
}

/** The retention in the unit the prune counts in. */
function retentionMs(retentionDays: number): number {
  return retentionDays * 86_400_000;
}

/** Best effort: the run's own error is what the caller needs, and an unpublished folder is never read. */
async function removeUnpublished(sink: PackingSink, layout: VersionLayout): Promise<void> {
  try {
    const keys = await Promise.all([layout.prefix, layout.planPrefix].map((prefix) => sink.list(prefix)));
    await mapLimited(keys.flat(), DELETES_AT_ONCE, (key) => sink.delete(key));
  } catch {
    // left to the prune of the publish that takes this version's number
  }
}

/**
 * An up-to-date run publishes nothing, so no prune removes the current version's leftovers
 * (leftovers.ts): it removes those old enough itself. `versionKeys`: the listing of `versions/`
 * the tidy made. Ages are on the store's clock, read from an object written for the purpose under
 * the version's working files (which the next tidy removes, should its deletion fail).
 */
async function removeCurrentLeftovers(sink: PackingSink, current: CurrentVersion, versionKeys: readonly string[]): Promise<string[]> {
  if (unlistedIn([current.manifest], versionKeys).length === 0) return [];
  const clockKey = `${new VersionLayout(current.datasetVersion).planPrefix}clock`;
  await sink.put(clockKey, Buffer.alloc(0));
  const now = await sink.modifiedAt(clockKey);
  await sink.delete(clockKey);
  return (await removeLeftovers(sink, [current.manifest], now, versionKeys)).removed;
}
