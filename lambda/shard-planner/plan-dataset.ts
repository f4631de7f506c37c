import { shardFormat } from '../packing/formats';
import type { PackingSink, PackingSource } from '../packing/io/storage';
import { isObjectNotFound, listAll } from '../packing/io/storage';
import type { Manifest } from '../packing/manifest';
import { MANIFEST_KEY, sourceFingerprint } from '../packing/manifest';
import { planShards } from '../packing/planning/plan-shards';
import type { ShardPlan } from '../packing/planning/plan-types';
import type { ShardPlannerResult } from './contract';
import type { BucketLocation, PlanSettings } from './dataset-settings';
import type { PlanSummary, ShardTask} from './plan-layout';
import { membersKey, parseJsonObject, PLAN_KEY, serializeMembers, TASKS_KEY } from './plan-layout';

/** What the planner works on. */
export interface PlanDatasetOptions {
  readonly source: PackingSource;
  /** The dataset, rooted at the destination prefix. */
  readonly sink: PackingSink;
  readonly destination: BucketLocation;
  readonly settings: PlanSettings;
  /** Repack even when up to date. */
  readonly force?: boolean;
  /** Member lists written at once. */
  readonly writeConcurrency?: number;
}

/**
 * Lists the source, plans the shards and writes the plan (member lists, the Map's task list,
 * `_plan/plan.json`), or reports that the last manifest already matches.
 *
 * Ten million objects in one Lambda (15 minutes, up to 10 GB of memory):
 * - Listing: ListObjectsV2 pages of 1,000 keys, about 10,000 sequential calls at 50–100 ms, 8–17
 *   minutes: near the 15-minute limit. Such buckets give the planner their S3 Inventory report
 *   instead (`ShardedDataset.sourceInventory`): a few gzipped CSV files streamed row by row.
 * - Memory: one small object per listed file (~110 B with a 40-character key), the plan's records
 *   sharing the same key strings, and typed arrays (4–8 B per file) inside the planner; the
 *   fingerprint is hashed line by line instead of joined into one string (10 million lines would
 *   exceed V8's ~512 MB string limit). About 3 GB at the peak: the construct gives the planner
 *   4 GiB by default (`plannerMemorySize`).
 * - Output: member lists are written one shard at a time as compact JSON arrays, a few in
 *   flight; the return value is a few hundred bytes whatever the size of the dataset (the Map
 *   reads its items from S3, not from the state).
 */
export async function planDataset(options: PlanDatasetOptions): Promise<ShardPlannerResult> {
  const { source, sink, destination, settings } = options;
  const format = shardFormat(settings.format);
  const files = await listAll(source);
  const fingerprint = sourceFingerprint(files);
  const plan = planShards(files, {
    seed: settings.seed,
    targetShardBytes: settings.targetShardBytes,
    shardCount: settings.shardCount,
    consumers: settings.consumers,
    labels: settings.labels,
    recordBytes: (key, size) => format.recordBytes(key, size),
  });
  const summary: PlanSummary = {
    version: 1,
    format: settings.format,
    seed: plan.seed,
    source: { uri: source.uri, objects: plan.totalFiles, bytes: plan.totalBytes, fingerprint },
    labels: plan.labelMap,
    shardCount: plan.shards.length,
  };
  const result: ShardPlannerResult = {
    upToDate: false,
    tasksBucket: destination.bucket,
    tasksKey: `${destination.prefix}${TASKS_KEY}`,
    shardCount: summary.shardCount,
    source: summary.source,
    classes: Object.keys(summary.labels).length,
    seed: summary.seed,
    format: summary.format,
  };
  if (!options.force && matchesManifest(await readManifest(sink), summary, plan)) {
    return { ...result, upToDate: true };
  }

  // An earlier manifest must not vouch for shards this run is about to rewrite.
  await sink.delete(MANIFEST_KEY);
  const tasks: ShardTask[] = plan.shards.map((shard) => ({ shardIndex: shard.index, shardName: shard.name, membersKey: membersKey(shard.name) }));
  await forEachLimited(plan.shards, options.writeConcurrency ?? 8, (shard) => sink.put(membersKey(shard.name), serializeMembers(shard)));
  await sink.put(PLAN_KEY, Buffer.from(`${JSON.stringify(summary)}\n`));
  await sink.put(TASKS_KEY, Buffer.from(JSON.stringify(tasks)));
  return result;
}


async function readManifest(sink: PackingSink): Promise<Manifest | undefined> {
  let data: Buffer;
  try {
    data = await sink.get(MANIFEST_KEY);
  } catch (error) {
    if (isObjectNotFound(error)) return undefined;
    throw error;
  }
  return parseJsonObject<Manifest>(MANIFEST_KEY, data);
}

/**
 * Up to date when the manifest was written from the same source listing with the same format and
 * seed, and this plan's shards are its shards. The shard count and the labels are what the shard
 * options (target size, count, consumers, labels) decide; with the same files and seed the plan is
 * deterministic, so equal names and labels mean equal shards.
 */
function matchesManifest(manifest: Manifest | undefined, summary: PlanSummary, plan: ShardPlan): boolean {
  if (!manifest || manifest.version !== 1) return false;
  if (manifest.format !== summary.format || manifest.seed !== summary.seed) return false;
  const source = manifest.source;
  if (!source || source.uri !== summary.source.uri || source.fingerprint !== summary.source.fingerprint
    || source.objects !== summary.source.objects || source.bytes !== summary.source.bytes) {
    return false;
  }
  if (!Array.isArray(manifest.shards) || manifest.shards.length !== plan.shards.length) return false;
  if (!manifest.shards.every((shard, i) => shard.key.startsWith(`shards/${plan.shards[i].name}.`))) return false;
  return JSON.stringify(manifest.labels) === JSON.stringify(summary.labels);
}

async function forEachLimited<T>(items: readonly T[], limit: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await action(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
