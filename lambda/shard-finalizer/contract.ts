import { ENV } from '../shard-planner/dataset-settings';

/** The finalizer's event: taken from the planner's result. */
export interface ShardFinalizerEvent {
  /** Shards the Map packed. */
  readonly shardCount: number;
  /** The source fingerprint the planner planned from: proves `_plan/` is this run's plan. */
  readonly fingerprint: string;
}

/** Fields of {@link ShardFinalizerEvent}: the state machine passes exactly these. */
export const SHARD_FINALIZER_EVENT_FIELDS = ['shardCount', 'fingerprint'] as const satisfies ReadonlyArray<keyof ShardFinalizerEvent>;

/** What the finalizer returns. */
export interface ShardFinalizerResult {
  /** Key of `manifest.json`, relative to the dataset prefix. */
  readonly manifestKey: string;
  readonly shards: number;
  readonly records: number;
  readonly failures: number;
  /** Bytes of all shards. */
  readonly bytes: number;
}

/** Environment variables the finalizer reads. */
export const SHARD_FINALIZER_ENVIRONMENT = [ENV.destinationBucket, ENV.destinationPrefix] as const;
