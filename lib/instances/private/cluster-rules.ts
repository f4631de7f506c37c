import { SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { DataLoaderSizing } from '../data-loader-sizing';
import { DEFAULT_MEMORY_PER_WORKER } from './loader-memory';
import type { TrainingInstance } from '../training-instance';
import { requireKnown, validateWholeNumber } from '../../private/validation';
import type { TrainingCluster } from '../training-cluster';

/** SageMaker's ceiling for `InstanceCount` as the job checks it, and the job's ceiling for `num_workers`. */
const MAX_INSTANCE_COUNT = 10000;
const MAX_LOADER_WORKERS = 1024;

/** A cluster with its defaults applied and checked. */
export interface ResolvedCluster {
  readonly instance: TrainingInstance;
  readonly instanceCount: number;
  readonly sizing: DataLoaderSizing;
  /** Workers per process: the user's, else the sized ones. */
  readonly loaderWorkers: number;
  /** Memory the loader workers of one instance may use, in bytes. */
  readonly loaderMemoryBytes: number;
  /**
   * Readers that split the data: instances × processes × loader workers (a process without workers
   * reads for itself). ShardedByS3Key splits the shards between the instances, and every (rank,
   * worker) pair of the container's loader reads its own part, so a shard count that is a multiple of
   * it gives every reader the same number of equal shards.
   */
  readonly consumers: number;
}

/**
 * The cluster's defaults and checks. Every value must be known at synth time: the plan depends on it.
 * `field` prefixes the names in messages (`cluster.instanceCount`).
 */
export function resolveCluster(cluster: TrainingCluster, field: string, scope?: Construct): ResolvedCluster {
  const instanceCount = cluster.instanceCount ?? 1;
  requireKnown(`${field}.instanceCount`, Token.isUnresolved(instanceCount), scope);
  requireKnown(`${field}.processesPerInstance`, Token.isUnresolved(cluster.processesPerInstance), scope);
  requireKnown(`${field}.loaderWorkers`, Token.isUnresolved(cluster.loaderWorkers), scope);
  requireKnown(`${field}.memoryPerLoaderWorker`, cluster.memoryPerLoaderWorker?.isUnresolved() ?? false, scope);
  validateWholeNumber(scope, 'InvalidInstanceCount', `${field}.instanceCount`, instanceCount, 1, MAX_INSTANCE_COUNT);
  if (cluster.loaderWorkers !== undefined) {
    validateWholeNumber(scope, 'InvalidDataLoaderWorkers', `${field}.loaderWorkers`, cluster.loaderWorkers, 0, MAX_LOADER_WORKERS);
  }
  const sizing = cluster.instance.sizeDataLoaders({
    processesPerInstance: cluster.processesPerInstance,
    memoryPerWorker: cluster.memoryPerLoaderWorker,
  });
  const loaderWorkers = cluster.loaderWorkers ?? sizing.loaderWorkers;
  const memoryPerWorker = cluster.memoryPerLoaderWorker ?? DEFAULT_MEMORY_PER_WORKER;
  return {
    instance: cluster.instance,
    instanceCount,
    sizing,
    loaderWorkers,
    loaderMemoryBytes: sizing.processesPerInstance * loaderWorkers * memoryPerWorker.toBytes({ rounding: SizeRoundingBehavior.NONE }),
    consumers: consumersOf(instanceCount, sizing.processesPerInstance, loaderWorkers),
  };
}

/** Readers that split the data: instances × processes × loader workers (a process without workers reads for itself). */
export function consumersOf(instanceCount: number, processesPerInstance: number, loaderWorkers: number): number {
  return instanceCount * processesPerInstance * Math.max(1, loaderWorkers);
}
