import { VersionLayout } from '../packing/dataset-layout';
import type { ListedFile, PackingSink, PackingSource } from '../io/storage';
import { listAll } from '../io/storage';
import { sourceFingerprint } from '../packing/manifest';
import { serializeMembers } from '../packing/members';
import { mapLimited } from '../packing/limited';
import { planShards } from '../packing/planning/plan-shards';
import type { ShardPlan } from '../packing/planning/plan-types';
import { BUNDLED_SHARP } from '../packing/preprocess/bundled-sharp';
import { manifestPreprocessing } from '../packing/preprocess/preprocessing-settings';
import { beginRun, failRun, versionSummary } from '../packing/run';
import type { ShardPlannerResult } from './contract';
import type { LabelTable } from '../packing/labels/label-table';
import { LabelledSource } from '../packing/labels/labelled-source';
import type { BucketLocation, PlanSettings } from '../handler-kit/dataset-settings';
import type { PlanSummary, ShardTask } from '../handler-kit/plan-layout';
import { RunFiles } from '../handler-kit/plan-layout';

/** What the planner works on. */
export interface PlanDatasetOptions {
  readonly source: PackingSource;
  /** The dataset, rooted at the destination prefix. */
  readonly sink: PackingSink;
  readonly destination: BucketLocation;
  readonly settings: PlanSettings;
  /** The label file read, with labels `file`. */
  readonly labelTable?: LabelTable;
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
  let files: ListedFile[] = [];
  let fingerprint = '';
  const labelled = options.labelTable && new LabelledSource(source, options.labelTable);
  const run = await beginRun(sink, {
    sourceUri: source.uri, format: settings.format, seed: settings.seed, targetShardBytes: settings.targetShardBytes, shardCount: settings.shardCount,
    consumers: settings.consumers, labels: settings.labels, labelTable: options.labelTable, fullRepack: options.force,
    // What the packers will do, with the sharp they ship: the manifest's record, compared with the current version's.
    preprocessing: settings.preprocessing && manifestPreprocessing(settings.preprocessing, BUNDLED_SHARP),
  }, async () => {
    files = await listAll(labelled ?? source);
    fingerprint = sourceFingerprint(files);
    return { files, fingerprint: () => fingerprint };
  });
  const unmatchedLabelRows = options.labelTable?.unmatchedRows().count ?? 0;
  if (run.kind === 'up-to-date') {
    const manifest = run.current.manifest;
    return {
      upToDate: true, datasetVersion: manifest.datasetVersion, fullRepackReason: '', tasksBucket: destination.bucket,
      tasksKey: `${destination.prefix}${new RunFiles(new VersionLayout(manifest.datasetVersion)).tasksKey}`,
      shardCount: 0, reusedShards: manifest.shards.length, source: manifest.source, classes: manifest.classes, unmatchedLabelRows,
      seed: manifest.seed, format: manifest.format,
    };
  }
  const { version, layout } = run;
  const plan: ShardPlan = version.kind === 'incremental' ? version.plan : planShards(files, run.settings);
  const summary: PlanSummary = { version: 2, ...versionSummary(run, plan, fingerprint, labelled?.unlabelled), shardCount: plan.shards.length };
  await writePlan(sink, new RunFiles(layout), plan, summary, options.writeConcurrency ?? 8)
    .catch((error: unknown) => failRun(sink, summary, error));
  return {
    upToDate: false,
    datasetVersion: layout.id,
    fullRepackReason: version.reason,
    tasksBucket: destination.bucket,
    tasksKey: `${destination.prefix}${new RunFiles(layout).tasksKey}`,
    shardCount: summary.shardCount,
    reusedShards: version.reused.length,
    source: summary.source,
    classes: Object.keys(summary.labels).length,
    unmatchedLabelRows,
    seed: summary.seed,
    format: summary.format,
  };
}

/** The run's member lists (in the new version's folder: the version keeps them for the next repack), its plan and the Map's task list. */
async function writePlan(sink: PackingSink, run: RunFiles, plan: ShardPlan, summary: PlanSummary, writeConcurrency: number): Promise<void> {
  const layout = run.version;
  const tasks: ShardTask[] = plan.shards.map((shard) => ({ shardIndex: shard.index, shardName: shard.name, membersKey: layout.membersKey(shard.name) }));
  await mapLimited(plan.shards, writeConcurrency, (shard) => sink.put(layout.membersKey(shard.name), serializeMembers(shard.records)));
  await sink.put(run.planKey, Buffer.from(`${JSON.stringify(summary)}\n`));
  await sink.put(run.tasksKey, Buffer.from(JSON.stringify(tasks)));
}
