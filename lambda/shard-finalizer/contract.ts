import { ENV } from '../handler-kit/dataset-settings';

/** The finalizer's event: taken from the planner's result. */
export interface ShardFinalizerEvent {
  /** The version the planner planned. */
  readonly datasetVersion: string;
  /** Shards the Map packed. */
  readonly shardCount: number;
  /** The source fingerprint the planner planned from: proves `_plan/<version>/` is this run's plan. */
  readonly fingerprint: string;
}

/** Fields of {@link ShardFinalizerEvent}: the state machine passes exactly these. */
export const SHARD_FINALIZER_EVENT_FIELDS = ['datasetVersion', 'shardCount', 'fingerprint'] as const satisfies ReadonlyArray<keyof ShardFinalizerEvent>;

/** What the finalizer returns. */
export interface ShardFinalizerResult {
  /** The version published. */
  readonly datasetVersion: string;
  /**
   * The version current when the finalizer ended: `datasetVersion`, or a newer one another run
   * published meanwhile (this one was then superseded; a short retention may have pruned it).
   */
  readonly currentVersion: string;
  /** Its own manifest, never changed: what a job pinned to this version reads. */
  readonly versionManifestKey: string;
  /** Key of the root's `manifest.json` (the current version's), relative to the dataset prefix. */
  readonly manifestKey: string;
  /** Old versions whose objects were deleted (past the retention period). */
  readonly prunedVersions: number;
  readonly shards: number;
  readonly records: number;
  readonly failures: number;
  /** Bytes of all shards. */
  readonly bytes: number;
}

/** Environment variables the finalizer reads. */
export const SHARD_FINALIZER_ENVIRONMENT = [ENV.destinationBucket, ENV.destinationPrefix, ENV.retentionDays, ENV.allowMissing] as const;
