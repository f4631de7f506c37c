import { PLAN_ROOT, versionOfKey, VERSIONS_PREFIX, VersionLayout, versionSequence } from './dataset-layout';
import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import { DELETES_AT_ONCE, mapLimited } from './limited';
import { removeLeftovers } from './leftovers';
import type { Manifest } from './manifest';
import { referencedKeys } from './manifest';
import type { ClaimedVersion, PublishedVersion } from './publish';
import { DatasetObjectError, publishedClaims, publishedVersions, readVersionManifest, syncRootCopies } from './publish';

/** What a prune removed. */
export interface PruneResult {
  /** Versions whose folders were emptied of what no kept version references, abandoned ones included. */
  readonly prunedVersions: string[];
  readonly deletedObjects: number;
  /** Versions kept: the current one and those current within the retention period whose manifest is still there. */
  readonly keptVersions: string[];
  /** Objects removed from kept versions' folders that their manifests do not list (leftovers.ts); counted in `deletedObjects` too. */
  readonly removedLeftovers: string[];
}

/**
 * Deletes the objects of versions that stopped being current more than `retentionMs` ago, except
 * those a kept version still references (an incremental repack reuses shards by reference). The
 * rules (ARCHITECTURE.md "Publishing protocol"), as Delta Lake's VACUUM has them:
 *
 * - what is kept is computed from the claims and the manifests in the store, never from what a
 *   run believes it wrote or kept: the newest claim's version, and every version that stopped
 *   being current less than `retentionMs` ago;
 * - ages are measured on the store's clock (the claims' `modifiedAt`), so packers whose clocks
 *   disagree agree on them; `now` is the newest claim's time unless given;
 * - a version whose manifest is gone was pruned by an earlier run (a shorter retention): it stays
 *   pruned, even when a longer retention would keep it now;
 * - a pruned version's manifest goes first, so a version is either whole or gone for a reader;
 *   its other objects follow, and any later prune finishes what a stopped one left.
 *
 * Folders of versions never published are deleted too once their sequence number is taken (the
 * run that wrote them crashed, or lost the race to publish: it can never publish that number),
 * and so are the working files under `_plan/` of every number taken, published or not. A run in progress plans the next number, which no claim
 * has yet: its folder is left alone. A version claimed after this prune listed the claims
 * references only its own folder (a newer number: left alone) and what its base version
 * references, and the base is at least the newest claim seen here, which is kept.
 *
 * The folders of kept versions lose their leftovers: objects their manifests do not list, once
 * older than the longest a packer attempt can write (LEFTOVER_MIN_AGE_MS, leftovers.ts).
 */
export async function pruneVersions(sink: PackingSink, retentionMs: number, now?: Date): Promise<PruneResult> {
  const published = await publishedVersions(sink);
  if (published.length === 0) return { prunedVersions: [], deletedObjects: 0, keptVersions: [], removedLeftovers: [] };
  const clock = now?.getTime() ?? Math.max(...published.map((version) => version.claimedAt));
  const retained = retainedVersions(published, retentionMs, clock);
  const kept: Manifest[] = [];
  const referenced = new Set<string>();
  for (const version of retained) {
    const manifest = await readVersionManifest(sink, version.datasetVersion).catch((error: unknown) => {
      if (!isObjectNotFound(error) || version === published[published.length - 1]) throw error;
      return undefined;
    });
    if (!manifest) continue;
    kept.push(manifest);
    for (const key of referencedKeys(manifest)) referenced.add(key);
  }
  const keptIds = kept.map((manifest) => manifest.datasetVersion);
  if (!keptIds.includes(published[published.length - 1].datasetVersion)) {
    throw new DatasetObjectError(`${sink.uri}: the newest version ${published[published.length - 1].datasetVersion} cannot be read; nothing pruned`);
  }
  const folders = await sink.list(VERSIONS_PREFIX);
  const prunable = new Set([...published.map((version) => version.datasetVersion).filter((id) => !keptIds.includes(id)),
    ...abandonedVersions(folders, published)]);
  const stale = folders.filter((key) => {
    const version = versionOfKey(key);
    return version !== undefined && prunable.has(version) && !referenced.has(key);
  });
  const workingFiles = await takenWorkingFiles(sink, published);
  // The version's own manifest first: from then on no reader opens the version, whatever is left of it.
  const manifests = new Set([...prunable].map((id) => new VersionLayout(id).manifestKey));
  await deleteAll(sink, stale.filter((key) => manifests.has(key)));
  await deleteAll(sink, stale.filter((key) => !manifests.has(key)));
  await deleteAll(sink, workingFiles);
  // Kept versions' folders are not among those deleted above: the listing still holds their objects.
  const leftovers = await removeLeftovers(sink, kept, clock, folders);
  return {
    prunedVersions: [...prunable].filter((id) => stale.some((key) => versionOfKey(key) === id)),
    deletedObjects: stale.length + workingFiles.length + leftovers.removed.length,
    keptVersions: keptIds,
    removedLeftovers: leftovers.removed,
  };
}

/**
 * What every run does before it plans, the CLI's pack and the Lambda planner alike: bring the
 * root's copies to the newest claim (a run stopped after its claim), and remove what failed runs
 * left below the newest claim, published or not (a run that crashed, was refused or lost the race
 * to publish): the folders of versions never published whose number a claim has taken, and the
 * working files under `_plan/` of every number taken. No version references those folders (a
 * manifest lists its own folder's objects and those its claimed base lists), and a run in progress
 * works on a number no claim has yet, which is left alone.
 */
export async function tidyBeforePlan(sink: PackingSink): Promise<TidyResult> {
  const repairedRootCopies = await syncRootCopies(sink);
  const published = await publishedClaims(sink);
  if (published.length === 0) return { repairedRootCopies, versionKeys: [] };
  const folders = await sink.list(VERSIONS_PREFIX);
  const abandoned = abandonedVersions(folders, published);
  const isStale = (key: string) => {
    const version = versionOfKey(key);
    return version !== undefined && abandoned.has(version);
  };
  await deleteAll(sink, [...folders.filter(isStale), ...await takenWorkingFiles(sink, published)]);
  return { repairedRootCopies, versionKeys: folders.filter((key) => !isStale(key)) };
}

/** What tidyBeforePlan did, and what it saw. */
export interface TidyResult {
  readonly repairedRootCopies: string[];
  /** The keys under `versions/` that it left; none listed when no version is published yet. */
  readonly versionKeys: string[];
}

/** Versions with objects under `versions/` that no claim publishes, though a claim has taken their number: they can never be published. */
function abandonedVersions(folders: readonly string[], published: readonly PublishedVersion[]): Set<string> {
  const publishedIds = new Set(published.map((version) => version.datasetVersion));
  const newest = published[published.length - 1].sequence;
  return new Set(folders.map(versionOfKey).filter((id): id is string => id !== undefined && !publishedIds.has(id) && versionSequence(id)! <= newest));
}

/**
 * Working files of every run whose number a claim has taken, published or not: a run that published left
 * them behind when its clean-up failed, a run that failed never got to it, or a packer attempt that ended after it wrote one again.
 */
async function takenWorkingFiles(sink: PackingSink, published: readonly PublishedVersion[]): Promise<string[]> {
  const newest = published[published.length - 1].sequence;
  return (await sink.list(PLAN_ROOT)).filter((key) => (versionSequence(key.slice(PLAN_ROOT.length).split('/', 1)[0]) ?? Infinity) <= newest);
}

/**
 * The versions within retention, oldest first: the newest claim's, and each one whose successor was
 * claimed less than `retentionMs` before `clock`. A claim's time counts as no earlier than any
 * claim before it, so a store whose clock stepped back never makes a version look older than it is.
 */
function retainedVersions(published: readonly ClaimedVersion[], retentionMs: number, clock: number): ClaimedVersion[] {
  const stoppedAt: number[] = [];
  let latest = -Infinity;
  for (const version of published) {
    latest = Math.max(latest, version.claimedAt);
    stoppedAt.push(latest);
  }
  return published.filter((_version, i) => i === published.length - 1 || clock - stoppedAt[i + 1] < retentionMs);
}

async function deleteAll(sink: PackingSink, keys: readonly string[]): Promise<void> {
  await mapLimited(keys, DELETES_AT_ONCE, (key) => sink.delete(key));
}
