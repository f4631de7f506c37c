import type { ListedFile, PackingSink } from '../io/storage';
import type { ShardFormatName } from './formats/shard-format';
import type { Manifest, ManifestShard, PlannedSizing } from './manifest';
import { readMembers } from './members';
import type { IncrementalPlan } from './planning/incremental-plan';
import { planIncremental } from './planning/incremental-plan';
import type { PlanOptions } from './planning/plan-types';
import type { PlanSettings } from './planning/plan-shards';
import { checkOptions } from './planning/plan-shards';
import { sizingOf } from '../../lib/contract/packing-settings';
import type { ManifestPreprocessing } from './preprocess/image-preprocessing';
import { describePreprocessing, samePreprocessing } from './preprocess/preprocessing-settings';
import type { CurrentVersion } from './publish';
import type { SampleDescription } from '../../lib/contract/sample-parts';

/** What a run is asked to make: the CLI's pack options and the planner Lambda's settings alike. */
export interface VersionRequest extends PlanOptions {
  readonly sourceUri: string;
  readonly format: ShardFormatName;
  /** The image preprocessing as the manifest records it (what the packers will do); undefined for none. */
  readonly preprocessing?: ManifestPreprocessing;
  /** Pack every file again, even when the current version is up to date. */
  readonly fullRepack?: boolean;
  /** The multi-part samples the listing forms (groupSamples); undefined when each file is its own record. */
  readonly sample?: SampleDescription;
}

/** The source's listing, as the runner holds it. */
export interface VersionListing {
  /** Every listed file, when the runner holds them in memory; undefined for a listing too large to hold (no incremental plan then). */
  readonly files?: readonly ListedFile[];
  /** The listing's fingerprint (sourceFingerprint): asked for only when there is a current version to compare with. */
  fingerprint(): string;
}

/** The current version already matches the source and the settings: nothing to write. */
export interface UpToDate {
  readonly kind: 'up-to-date';
  readonly current: CurrentVersion;
}

/** A new version, every file packed again: the runner plans the whole listing its way. */
export interface FullVersion {
  readonly kind: 'full';
  /** Why every file is packed again although a version exists; empty for the first version. */
  readonly reason: string;
  readonly sizing: PlannedSizing;
  readonly reused: ManifestShard[];
}

/** A new version that keeps the current one's unchanged shards and writes new ones for the rest. */
export interface IncrementalVersion {
  readonly kind: 'incremental';
  readonly reason: '';
  readonly sizing: PlannedSizing;
  /** Shards of earlier versions kept by reference, before the new ones. */
  readonly reused: ManifestShard[];
  /** The new shards, their labels and the totals of the whole listing. */
  readonly plan: IncrementalPlan;
}

export type VersionPlan = UpToDate | FullVersion | IncrementalVersion;

/**
 * Decides what a packing run makes, for the CLI's pack (packDataset) and the planner Lambda
 * alike: nothing when the current version was packed from this very listing (its fingerprint) with
 * these settings; else a new version, incremental on the current one when the settings are its
 * own (planIncremental reuses its unchanged shards), else packed in full with the reason. A shard
 * count asked for exactly, and a listing not held in memory (the incremental plan compares every
 * listed file with the current version's member lists), are packed in full too.
 */
export async function planVersion(
  sink: Pick<PackingSink, 'get'>, current: CurrentVersion | undefined, listing: VersionListing, request: VersionRequest,
): Promise<VersionPlan> {
  // The one check and normalisation of the settings (lib/contract/packing-settings.ts); the sizing the version records follows.
  const settings = checkOptions(request);
  const sizing = sizingOf(settings);
  const full = (reason: string): FullVersion => ({ kind: 'full', reason, sizing: { ...sizing, reusedShards: 0 }, reused: [] });
  if (!current) return full('');
  if (request.fullRepack) return full('a full repack was asked for');
  const manifest = current.manifest;
  const changed = changedSetting(manifest, request, settings, sizing);
  if (!changed && manifest.source.uri === request.sourceUri && manifest.source.fingerprint === listing.fingerprint()) {
    return { kind: 'up-to-date', current };
  }
  if (changed) return full(changed);
  if (request.sample) return full('multi-part samples are packed in full (an incremental repack compares files with member lists, not samples)');
  if (sizing.shardCount !== null) return full('an exact shard count was asked for');
  if (!listing.files) return full('the listing is too large to hold in memory, which an incremental repack needs');

  const plan = planIncremental(listing.files, { manifest, members: await readMembers(sink, manifest.shards) }, request);
  if (plan.kind === 'full') return full(plan.reason);
  return { kind: 'incremental', reason: '', sizing: { ...sizing, reusedShards: plan.reused.length }, reused: plan.reused, plan };
}

/** The first setting the version was packed with that the request changes, said for people; undefined when none does. */
function changedSetting(manifest: Manifest, request: VersionRequest, settings: PlanSettings, sizing: ReturnType<typeof sizingOf>): string | undefined {
  if (manifest.format !== request.format) return `the format changed (${manifest.format} → ${request.format})`;
  if (!samePreprocessing(manifest.preprocessing, request.preprocessing)) {
    return `the image preprocessing changed from ${describePreprocessing(manifest.preprocessing)} to ${describePreprocessing(request.preprocessing)}`;
  }
  if (manifest.seed !== settings.seed) return `the seed changed (${manifest.seed} → ${settings.seed})`;
  if (manifest.sizing.shardCount !== sizing.shardCount) {
    return sizing.shardCount === null ? 'the previous version was packed to an exact shard count' : 'an exact shard count was asked for';
  }
  if (manifest.sizing.consumers !== sizing.consumers) return `the consumers changed (${manifest.sizing.consumers} → ${sizing.consumers})`;
  if (manifest.sizing.targetShardBytes !== sizing.targetShardBytes) return 'the target shard size changed';
  if ((Object.keys(manifest.labels).length > 0) !== (settings.labels === 'folder')) return 'the labelling changed';
  const [before, after] = [manifest.sample?.required, request.sample?.required].map((parts) => (parts ? parts.join(', ') : 'one file per record'));
  if (before !== after) return `the sample parts changed (${before} → ${after})`;
  return undefined;
}
