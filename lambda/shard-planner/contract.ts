import type { ShardFormatName } from '../packing/formats/shard-format';
import type { Manifest } from '../packing/manifest';
import { ENV } from './dataset-settings';

export { ShardTask } from './plan-layout';

/** The planner's event: the execution's input. */
export interface ShardPlannerEvent {
  /** Repack even when the last manifest matches the source and options. Default false. */
  readonly force?: boolean;
}

/** What the planner returns; the state machine keeps it at `$.plan`. */
export interface ShardPlannerResult {
  /** The dataset's manifest matches the source and options: nothing to pack. */
  readonly upToDate: boolean;
  /** Bucket of the Map's item list (the destination bucket). */
  readonly tasksBucket: string;
  /** Object key of the Map's item list, `<destination prefix>_plan/tasks.json`. */
  readonly tasksKey: string;
  readonly shardCount: number;
  readonly source: Manifest['source'];
  /** Number of classes in the label map (0 without labels); the map itself is in `_plan/plan.json`. */
  readonly classes: number;
  readonly seed: number;
  readonly format: ShardFormatName;
}

/** Fields of {@link ShardPlannerResult}: the paths the state machine reads from `$.plan` are among them. */
export const SHARD_PLANNER_RESULT_FIELDS = [
  'upToDate', 'tasksBucket', 'tasksKey', 'shardCount', 'source', 'classes', 'seed', 'format',
] as const satisfies ReadonlyArray<keyof ShardPlannerResult>;

/** Fields of a Map item ({@link ShardTask}), as the planner writes them to the tasks list. */
export const SHARD_TASK_FIELDS = ['shardIndex', 'shardName', 'membersKey'] as const;

/** Environment variables the planner reads. */
export const SHARD_PLANNER_ENVIRONMENT = [
  ENV.sourceBucket, ENV.sourcePrefix, ENV.destinationBucket, ENV.destinationPrefix,
  ENV.format, ENV.seed, ENV.labels, ENV.targetShardBytes, ENV.shardCount, ENV.consumers,
  ENV.inventoryBucket, ENV.inventoryKey,
] as const;
