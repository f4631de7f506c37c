import type { ShardFormatName } from '../packing/formats/shard-format';
import type { Manifest } from '../packing/manifest';
import { ENV } from '../handler-kit/dataset-settings';

export { ShardTask } from '../handler-kit/plan-layout';

/** The planner's event: the execution's input. */
export interface ShardPlannerEvent {
  /** Repack even when the last manifest matches the source and options. Default false. */
  readonly force?: boolean;
}

/** What the planner returns; the state machine keeps it at `$.plan`. */
export interface ShardPlannerResult {
  /** The current version matches the source and options: nothing to pack. */
  readonly upToDate: boolean;
  /** The version this run makes (the current one when up to date). */
  readonly datasetVersion: string;
  /** Why every file is packed again although a version existed; empty when incremental or the first version. */
  readonly fullRepackReason: string;
  /** Bucket of the Map's item list (the destination bucket). */
  readonly tasksBucket: string;
  /** Object key of the Map's item list, `<destination prefix>_plan/<version>/tasks.json`. */
  readonly tasksKey: string;
  /** New shards the Map packs (0 when every shard is reused or up to date). */
  readonly shardCount: number;
  /** Shards of earlier versions the new version keeps by reference. */
  readonly reusedShards: number;
  readonly source: Manifest['source'];
  /** Number of classes in the label map (0 without labels); the map itself is in `_plan/<version>/plan.json`. */
  readonly classes: number;
  /** Rows of the label file (labels `file`) that name no listed file: a warning, counted (0 without a label file). */
  readonly unmatchedLabelRows: number;
  readonly seed: number;
  readonly format: ShardFormatName;
}

/** Fields of {@link ShardPlannerResult}: the paths the state machine reads from `$.plan` are among them. */
export const SHARD_PLANNER_RESULT_FIELDS = [
  'upToDate', 'datasetVersion', 'fullRepackReason', 'tasksBucket', 'tasksKey', 'shardCount', 'reusedShards', 'source', 'classes', 'unmatchedLabelRows', 'seed', 'format',
] as const satisfies ReadonlyArray<keyof ShardPlannerResult>;

/** Fields of a Map item ({@link ShardTask}), as the planner writes them to the tasks list. */
export const SHARD_TASK_FIELDS = ['shardIndex', 'shardName', 'membersKey'] as const;

/** Environment variables the planner reads. */
export const SHARD_PLANNER_ENVIRONMENT = [
  ENV.sourceBucket, ENV.sourcePrefix, ENV.destinationBucket, ENV.destinationPrefix,
  ENV.format, ENV.seed, ENV.labels, ENV.labelFile, ENV.targetShardBytes, ENV.shardCount, ENV.consumers,
  ENV.inventoryBucket, ENV.inventoryKey, ENV.filePatterns, ENV.imagePreprocessing,
] as const;
