import { ENV } from '../handler-kit/dataset-settings';
import type { ShardTask } from '../handler-kit/plan-layout';
import type { Manifest } from '../packing/manifest';

/** The packer's event: one item of the Map, as the planner wrote it. */
export type ShardPackerEvent = ShardTask;

/** Fields of {@link ShardPackerEvent}: the Map's ItemSelector passes exactly these. */
export const SHARD_PACKER_EVENT_FIELDS = ['shardIndex', 'shardName', 'membersKey'] as const satisfies ReadonlyArray<keyof ShardPackerEvent>;

/**
 * What the packer returns. The shard's full result (with every failure) is in S3 at
 * `resultKey`: a list of failures can outgrow the 256 KB a state may carry.
 */
export interface ShardPackerResult {
  readonly shard: Manifest['shards'][number];
  readonly failureCount: number;
  /** Key of `_plan/results/<shard>.json`, relative to the dataset prefix. */
  readonly resultKey: string;
}

/** Environment variables the packer reads. */
export const SHARD_PACKER_ENVIRONMENT = [
  ENV.sourceBucket, ENV.sourcePrefix, ENV.destinationBucket, ENV.destinationPrefix, ENV.format, ENV.readConcurrency, ENV.recordContent,
  // With preprocessing only; UV_THREADPOOL_SIZE is read by Node.js itself, not by the handler.
  ENV.imagePreprocessing, ENV.threadPoolSize,
] as const;

/** The metrics each packer publishes: one definition, in the contract (the dashboard reads them too). */
export { PACKER_METRICS as SHARD_PACKER_METRICS } from '../../lib/contract/metric-names';
