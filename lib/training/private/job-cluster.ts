import type { TrainingCluster } from '../../instances/training-cluster';
import type { TrainingJobOptions } from '../training-job';

/** The job's loader workers per process as given: `loaderWorkers`, or the deprecated `dataLoaderWorkers`. */
export function givenLoaderWorkers(options: TrainingJobOptions): number | undefined {
  return options.loaderWorkers ?? options.dataLoaderWorkers;
}

/** The cluster a job's options describe: what the I/O planner and the dataset's consumers are sized for. */
export function clusterOfJob(options: TrainingJobOptions): TrainingCluster {
  return {
    instance: options.instance,
    instanceCount: options.instanceCount,
    processesPerInstance: options.processesPerInstance,
    loaderWorkers: givenLoaderWorkers(options),
    memoryPerLoaderWorker: options.memoryPerLoaderWorker,
  };
}
