import { HANDLER_TIMEOUT_SECONDS } from '../../lib/contract/handler-timeout';
import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import { INDEX_FOLDER, MEMBERS_FOLDER, SHARDS_FOLDER, VersionLayout } from './dataset-layout';
import { DELETES_AT_ONCE, mapLimited } from './limited';
import type { Manifest } from './manifest';
import { referencedKeys } from './manifest';

/**
 * How far the store's clock and a packer's own may disagree about when an attempt began and
 * ended, and how long a request sent just before Lambda stopped the attempt may take to land.
 */
const CLOCK_SKEW_MARGIN_MS = 15 * 60_000;

/**
 * How old, by the store's clock, an object in a published version's folder must be before it is
 * removed as a leftover: the longest a packer attempt can run, plus the margin above (30 minutes).
 *
 * Why this is safe against a slow attempt. Only the run of version v writes into v's folder: the
 * CLI before its claim, and Lambda packer attempts that v's execution invoked, all before v's
 * Finalize began (a Map item's retries end before it; an attempt whose answer was lost runs on,
 * unseen). Lambda stops every invocation HANDLER_TIMEOUT_SECONDS after it began at the latest. An
 * object's `LastModified` is no earlier than the moment its writer sent it, so an object older
 * than the longest run plus the margin was written by an attempt that has ended: no writer of v
 * is left that could still put it back, read it, or report it in a result, and its removal is
 * final. A younger one is left for a later run (verify reports it meanwhile): removing it could
 * not change what readers see either (the manifest, written and claimed before, does not list
 * it), but its attempt may still be running and write again.
 */
export const LEFTOVER_MIN_AGE_MS = HANDLER_TIMEOUT_SECONDS * 1000 + CLOCK_SKEW_MARGIN_MS;

/**
 * The objects in a version's `shards/`, `index/` and `members/` that its manifest does not list:
 * before its claim, those of empty shards and of packer attempts not adopted; after it, leftovers
 * (an attempt stopped with its write in flight, which landed after the finalizer looked).
 */
export async function unlistedObjects(sink: Pick<PackingSink, 'list'>, manifest: Manifest): Promise<string[]> {
  const listed = new Set(referencedKeys(manifest));
  const present = await Promise.all(dataFolders(manifest).map((folder) => sink.list(folder)));
  return present.flat().filter((key) => !listed.has(key));
}

/** A version's `shards/`, `index/` and `members/` folders. */
function dataFolders(manifest: Manifest): string[] {
  const layout = new VersionLayout(manifest.datasetVersion);
  return [SHARDS_FOLDER, INDEX_FOLDER, MEMBERS_FOLDER].map((folder) => layout.rebase(folder));
}

/** The keys of `present` in the versions' `shards/`, `index/` and `members/` that none of their manifests lists. */
export function unlistedIn(manifests: readonly Manifest[], present: readonly string[]): string[] {
  // A key one of them lists is no leftover, whichever version's folder it is in.
  const listed = new Set(manifests.flatMap(referencedKeys));
  return manifests.flatMap(dataFolders).flatMap((folder) => present.filter((key) => key.startsWith(folder) && !listed.has(key)));
}

/** What a removal of leftovers did. */
export interface LeftoverRemoval {
  /** The leftovers removed: older than LEFTOVER_MIN_AGE_MS. */
  readonly removed: string[];
  /** The leftovers left for a later run: a packer attempt that wrote them may still be running. */
  readonly tooYoung: string[];
}

/**
 * Removes the leftovers of published versions (their manifests given) that are at least
 * LEFTOVER_MIN_AGE_MS old at `now`, a time on the store's clock (the newest claim's, for a run
 * that just published). `present`: the keys under `versions/`, as the caller already listed them.
 */
export async function removeLeftovers(sink: PackingSink, manifests: readonly Manifest[], now: number, present: readonly string[]): Promise<LeftoverRemoval> {
  const unlisted = unlistedIn(manifests, present);
  const ages = await mapLimited(unlisted, DELETES_AT_ONCE, (key) => sink.modifiedAt(key).then((modified) => now - modified, (error: unknown) => {
    // Gone since it was listed (its own attempt removed it): nothing to do.
    if (isObjectNotFound(error)) return undefined;
    throw error;
  }));
  const removed = unlisted.filter((_key, i) => ages[i] !== undefined && ages[i] >= LEFTOVER_MIN_AGE_MS);
  await mapLimited(removed, DELETES_AT_ONCE, (key) => sink.delete(key));
  return { removed, tooYoung: unlisted.filter((_key, i) => ages[i] !== undefined && ages[i] < LEFTOVER_MIN_AGE_MS) };
}
