import type { DataLoaderSizing } from '../data-loader-sizing';
import type { PlanWarning } from '../../planning/io-plan';

/**
 * The JPEG size the rates below were measured at: ~90 KB, 250–480 × 300–640 pixels (bench/container-gpu's
 * synthetic JPEGs; ImageNet's training JPEGs average ~110 KB).
 */
export const MEASURED_SAMPLE_BYTES = 90_000;

/**
 * Samples/s one loader worker (one core) decodes AND augments (random resized crop to 224, flip) at
 * that size: 314–350 measured with one worker on the H100 machine's CPUs (bench/container-gpu "small
 * files, 1 worker", 2026-11); bench/loader-cpu measures the same per worker on any machine.
 */
const DECODE_AUGMENT_PER_WORKER_MEASURED = 330;

/** Samples/s one core decodes alone at that size (bench/loader-cpu's decode floor on the same machine). */
const DECODE_ONLY_PER_WORKER_MEASURED = 1284;

/**
 * Seconds of a sample's time that do not grow with its bytes: reading, the crop's resize to 224,
 * collation. An estimate: with JPEGs resized beforehand to 32 KB, 7 workers fed 3,207 samples/s
 * (GPU-bound, so ≥ 458 per worker), which this model (714 per worker) does not contradict.
 */
const FIXED_SECONDS_PER_SAMPLE = 0.0005;

/**
 * Samples/s one loader worker decodes on the CPU, by mean sample size: decoding time grows with the
 * JPEG's bytes (pixels), the rest does not. `augment` false: decoding alone (the hybrid path, where
 * the GPU crops, resizes and flips). An estimate: `train:data_wait_fraction` tells the truth for a job.
 */
export function cpuDecodeSamplesPerSecondPerWorker(meanSampleBytes: number | undefined, augment: boolean = true): number {
  const measured = augment ? DECODE_AUGMENT_PER_WORKER_MEASURED : DECODE_ONLY_PER_WORKER_MEASURED;
  const fixed = augment ? FIXED_SECONDS_PER_SAMPLE : 0;
  const scale = (meanSampleBytes ?? MEASURED_SAMPLE_BYTES) / MEASURED_SAMPLE_BYTES;
  return 1 / (fixed + (1 / measured - fixed) * scale);
}

/** Samples per second the loader of one process decodes on the CPU (a process without workers decodes itself). */
export function cpuDecodeSamplesPerSecond(loaderWorkers: number, meanSampleBytes?: number, augment: boolean = true): number {
  return Math.max(1, loaderWorkers) * cpuDecodeSamplesPerSecondPerWorker(meanSampleBytes, augment);
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
