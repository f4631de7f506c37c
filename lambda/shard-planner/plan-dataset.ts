import { newVersionId, VersionLayout } from '../packing/dataset-layout';
import { shardFormat } from '../packing/formats';
import type { PackingSink, PackingSource } from '../io/storage';
import { listAll } from '../io/storage';
import { sourceFingerprint } from '../packing/manifest';
import { serializeMembers } from '../packing/members';
import { mapLimited } from '../packing/limited';
import { planVersion } from '../packing/plan-version';
import { planShards } from '../packing/planning/plan-shards';
import type { ShardPlan } from '../packing/planning/plan-types';
import { BUNDLED_SHARP } from '../packing/preprocess/bundled-sharp';
import { manifestPreprocessing } from '../packing/preprocess/preprocessing-settings';
import { currentVersion } from '../packing/publish';
import { tidyBeforePlan } from '../packing/prune';
import type { ShardPlannerResult } from './contract';
import type { BucketLocation, PlanSettings } from '../handler-kit/dataset-settings';
import type { PlanSummary, ShardTask } from '../handler-kit/plan-layout';
import { RunFiles } from '../handler-kit/plan-layout';
import { checkSampleSettings, groupSamples } from '../packing/samples/sample-grouping';

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
  const recordBytes = (key: string, size: number) => format.recordBytes(key, size);
  // The root's copies repaired and failed runs' objects removed before anything else, as the CLI's pack does.
  await tidyBeforePlan(sink);
  const current = await currentVersion(sink);
  const listed = await listAll(source);
  const fingerprint = sourceFingerprint(listed);
  const grouping = groupSamples(listed, settings.parts);
  if (grouping) checkSampleSettings(grouping, settings);
  const files = grouping?.samples ?? listed;
  // What the packers will do, with the sharp they ship: the manifest's record, compared with the current version's.
  const preprocessing = settings.preprocessing && manifestPreprocessing(settings.preprocessing, BUNDLED_SHARP);
  const planOptions = {
    seed: settings.seed, targetShardBytes: settings.targetShardBytes, shardCount: settings.shardCount,
    consumers: settings.consumers, labels: settings.labels, recordBytes,
  };
  const version = await planVersion(sink, current, { files, fingerprint: () => fingerprint }, {
    ...planOptions, sourceUri: source.uri, format: settings.format, preprocessing, fullRepack: options.force, sample: grouping?.description,
  });
  if (version.kind === 'up-to-date') {
    const manifest = version.current.manifest;
    return {
      upToDate: true, datasetVersion: manifest.datasetVersion, fullRepackReason: '', tasksBucket: destination.bucket,
      tasksKey: `${destination.prefix}${new RunFiles(new VersionLayout(manifest.datasetVersion)).tasksKey}`,
      shardCount: 0, reusedShards: manifest.shards.length, source: manifest.source, classes: manifest.classes, seed: manifest.seed, format: manifest.format,
    };
  }

  const plan: ShardPlan = version.kind === 'incremental' ? version.plan : planShards(files, planOptions);
  const layout = new VersionLayout(newVersionId((current?.sequence ?? 0) + 1));
  const run = new RunFiles(layout);
  const summary: PlanSummary = {
    version: 2,
    datasetVersion: layout.id,
    previousVersion: current?.datasetVersion ?? null,
    format: settings.format,
    seed: plan.seed,
    // The source's objects are its files, samples or not (the sample description counts the samples).
    source: { uri: source.uri, objects: listed.length, bytes: grouping ? totalBytes(listed) : plan.totalBytes, fingerprint },
    labels: plan.labelMap,
    sizing: version.sizing,
    reused: version.reused,
    shardCount: plan.shards.length,
    // What the packers do to each image: the finalizer records it in the manifest, the next run's up-to-date check compares it.
    ...(preprocessing ? { preprocessing } : {}),
    ...(grouping ? { sample: grouping.description, failures: grouping.failures } : {}),
  };
  // Member lists go in the new version's folder: the version keeps them for the next repack.
  const tasks: ShardTask[] = plan.shards.map((shard) => ({ shardIndex: shard.index, shardName: shard.name, membersKey: layout.membersKey(shard.name) }));
  await mapLimited(plan.shards, options.writeConcurrency ?? 8, (shard) => sink.put(layout.membersKey(shard.name), serializeMembers(shard.records)));
  await sink.put(run.planKey, Buffer.from(`${JSON.stringify(summary)}\n`));
  await sink.put(run.tasksKey, Buffer.from(JSON.stringify(tasks)));
  return {
    upToDate: false,
    datasetVersion: layout.id,
    fullRepackReason: version.reason,
    tasksBucket: destination.bucket,
    tasksKey: `${destination.prefix}${run.tasksKey}`,
    shardCount: summary.shardCount,
    reusedShards: version.reused.length,
    source: summary.source,
    classes: Object.keys(summary.labels).length,
    seed: summary.seed,
    format: summary.format,
  };
}

function totalBytes(files: readonly { readonly size: number }[]): number {
  let bytes = 0;
  for (const file of files) bytes += file.size;
  return bytes;
}
