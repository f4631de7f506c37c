import type { DataLoaderSizing } from '../data-loader-sizing';
import type { PlanWarning } from '../../planning/io-plan';

/**
 * JPEG samples one loader worker (one CPU core) decodes and augments per second: the middle of the
 * 50–200 images/s a core decodes depending on resolution (systemoverflow.com, "Production data pipeline
 * design and throughput"). It agrees with NVIDIA's case for DALI: a V100 trains ResNet-50 at ~1,350
 * images/s (NVIDIA, "DGX-2 ... set image recognition records"), more than the 6–10 vCPUs per GPU of a
 * DGX-2 or DGX-1 decode at this rate (NVIDIA, "Case study: ResNet50 with DALI"). An estimate, not a
 * measurement: `train:data_wait_fraction` tells the truth for a given job.
 */
export const CPU_DECODE_SAMPLES_PER_SECOND_PER_WORKER = 100;

/** Samples per second the loader of one process decodes on the CPU (a process without workers decodes itself). */
export function cpuDecodeSamplesPerSecond(loaderWorkers: number): number {
  return Math.max(1, loaderWorkers) * CPU_DECODE_SAMPLES_PER_SECOND_PER_WORKER;
}

/**
 * A worker count that leaves the GPUs waiting: none (the training process decodes between steps), or
 * more than the vCPUs of a process (workers then share cores and each slows down; PyTorch warns on
 * "excessive worker creation", pytorch#46867).
 */
export function loaderWorkersWarning(sizing: DataLoaderSizing, loaderWorkers: number): PlanWarning | undefined {
  if (loaderWorkers === 0) {
    return {
      code: 'noLoaderWorkers',
      message: 'loaderWorkers is 0: each training process reads and decodes its own batches between steps, so the GPU ' +
        `waits for every batch; use ${sizing.loaderWorkers} (vCPUs per process − 1, capped by memory)`,
    };
  }
  if (loaderWorkers > sizing.vcpusPerProcess) {
    return {
      code: 'loaderWorkersAboveCpus',
      message: `loaderWorkers is ${loaderWorkers} per process, more than the ${sizing.vcpusPerProcess} vCPUs each of the ` +
        `${sizing.processesPerInstance} processes has: the workers share cores and every one slows down; use ${sizing.loaderWorkers}`,
    };
  }
  return undefined;
}
