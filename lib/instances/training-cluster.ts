import type { Size } from 'aws-cdk-lib';
import type { TrainingInstance } from './training-instance';

/**
 * The instances that train on a dataset, as the I/O planner and `ShardedDataset` size the readers.
 */
export interface TrainingCluster {
  /** The instance type, e.g. `TrainingInstance.P3DN_24XLARGE`. */
  readonly instance: TrainingInstance;

  /**
   * Instances in the job.
   *
   * @default 1
   */
  readonly instanceCount?: number;

  /**
   * Training processes per instance (one per GPU, or per NeuronCore on Trainium, with torchrun / DDP).
   *
   * @default - one per GPU or NeuronCore, or 1 when the instance has none
   */
  readonly processesPerInstance?: number;

  /**
   * Data-loader workers per training process.
   *
   * @default - sized from the instance: vCPUs per process − 1, capped by memory
   */
  readonly loaderWorkers?: number;

  /**
   * Memory each data-loader worker may use.
   *
   * @default Size.gibibytes(2)
   */
  readonly memoryPerLoaderWorker?: Size;
}
