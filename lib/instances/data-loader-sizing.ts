import type { Size } from 'aws-cdk-lib';

/**
 * Inputs to the data-loader sizing rule.
 */
export interface DataLoaderSizingOptions {
  /**
   * Training processes per instance (one per GPU, or per NeuronCore on Trainium, with torchrun / DDP).
   *
   * @default - `defaultProcessesPerInstance`: one per GPU or NeuronCore, or 1 when the instance has none
   */
  readonly processesPerInstance?: number;

  /**
   * Memory each data-loader worker may use. Every PyTorch DataLoader worker is a separate
   * process with its own copy of the dataset object and its prefetched batches.
   *
   * @default Size.gibibytes(2)
   */
  readonly memoryPerWorker?: Size;
}

/**
 * How many data-loader workers and DALI threads each training process should run.
 */
export interface DataLoaderSizing {
  /** Training processes per instance the sizing assumes. */
  readonly processesPerInstance: number;
  /** vCPUs available to each training process (rounded down). */
  readonly vcpusPerProcess: number;
  /** PyTorch `DataLoader(num_workers=...)` for each training process. */
  readonly loaderWorkers: number;
  /** NVIDIA DALI `pipeline(num_threads=...)` for each training process. */
  readonly daliThreads: number;
  /** True when memory, not vCPUs, set the worker count. */
  readonly limitedByMemory: boolean;
}
