import { PLAN_ROOT, versionOfKey, VERSIONS_PREFIX, VersionLayout, versionSequence } from './dataset-layout';
import type { PackingSink } from './io/storage';
import { DELETES_AT_ONCE, mapLimited } from './limited';
import type { Manifest } from './manifest';
import { publishedVersions, readVersionManifest } from './publish';

/** Seven days: longer than most training jobs, so a job finishes on the version it started with. */
export const DEFAULT_RETENTION_DAYS = 7;

/** What a prune removed. */
export interface PruneResult {
  /** Versions whose folders were emptied of what no kept version references, abandoned ones included. */
  readonly prunedVersions: string[];
  readonly deletedObjects: number;
  /** Versions kept: the current one and those current within the retention period. */
  readonly keptVersions: string[];
}

/**
 * Deletes the objects of versions that stopped being current more than `retentionMs` ago, except
 * those a kept version still references (an incremental repack reuses shards by reference). The
 * current version and every version current within the period are kept, so a running job finishes
 * on the version it started with.
 *
 * Folders of versions never published are deleted too once their sequence number is taken (the
 * run that wrote them crashed, or lost the race to publish: it can never publish that number),
 * with their working files under `_plan/`. A run in progress plans the next number, which no claim
 * has yet: its folder is left alone.
 */
export async function pruneVersions(sink: PackingSink, retentionMs: number, now: Date = new Date()): Promise<PruneResult> {
  const published = await publishedVersions(sink);
  if (published.length === 0) return { prunedVersions: [], deletedObjects: 0, keptVersions: [] };
  const kept = published.filter((_version, i) => {
    const next = published[i + 1];
    return !next || now.getTime() - Date.parse(next.publishedAt) < retentionMs;
  }).map((version) => version.datasetVersion);
  const referenced = new Set<string>();
  for (const id of kept) {
    for (const key of referencedKeys(await readVersionManifest(sink, id))) referenced.add(key);
  }
  const publishedIds = new Set(published.map((version) => version.datasetVersion));
  const newest = published[published.length - 1].sequence;
  const folders = await sink.list(VERSIONS_PREFIX);
  const abandoned = new Set(folders.map(versionOfKey).filter((id): id is string =>
    id !== undefined && !publishedIds.has(id) && versionSequence(id)! <= newest));
  const prunable = new Set([...publishedIds].filter((id) => !kept.includes(id)));
  for (const id of abandoned) prunable.add(id);
  const stale = folders.filter((key) => {
    const version = versionOfKey(key);
    return version !== undefined && prunable.has(version) && !referenced.has(key);
  });
  const workingFiles = (await sink.list(PLAN_ROOT)).filter((key) => abandoned.has(key.slice(PLAN_ROOT.length).split('/', 1)[0]));
  await deleteAll(sink, workingFiles);
  // The version's own manifest last: a half-pruned version still says what it was.
  const manifests = new Set([...prunable].map((id) => new VersionLayout(id).manifestKey));
  await deleteAll(sink, stale.filter((key) => !manifests.has(key)));
  await deleteAll(sink, stale.filter((key) => manifests.has(key)));
  return {
    prunedVersions: [...prunable].filter((id) => stale.some((key) => versionOfKey(key) === id)),
    deletedObjects: stale.length + workingFiles.length,
    keptVersions: kept,
  };
}

/** Every object a version's readers open. */
function referencedKeys(manifest: Manifest): string[] {
  const layout = new VersionLayout(manifest.datasetVersion);
  return [
    layout.manifestKey, layout.shardsChannelKey, layout.indexChannelKey,
    ...(manifest.globalIndexKey ? [manifest.globalIndexKey] : []),
    ...manifest.shards.flatMap((shard) => [shard.key, shard.indexKey, shard.membersKey]),
  ];
}

async function deleteAll(sink: PackingSink, keys: readonly string[]): Promise<void> {
  await mapLimited(keys, DELETES_AT_ONCE, (key) => sink.delete(key));
}
