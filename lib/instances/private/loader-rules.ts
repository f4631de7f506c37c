import { CPU_DECODE_AUGMENT_PER_WORKER, DECODE_FIXED_SECONDS_PER_SAMPLE, DECODE_RATE_SAMPLE_BYTES } from '../../contract/decoding-rates';
import type { DataLoaderSizing } from '../data-loader-sizing';
import type { PlanWarning } from '../../planning/io-plan';

/** The JPEG size the decoding-rate table was measured at (lib/contract/decoding-rates.ts). */
export const MEASURED_SAMPLE_BYTES = DECODE_RATE_SAMPLE_BYTES;

/**
 * Samples/s one loader worker decodes and augments on the CPU, by mean sample size: the decoding-rate
 * table's figure (lib/contract/decoding-rates.ts), its decoding time scaled by the JPEG's bytes
 * (pixels), the rest not. An estimate: `train:data_wait_fraction` tells the truth for a job.
 */
export function cpuDecodeSamplesPerSecondPerWorker(meanSampleBytes: number | undefined): number {
  const scale = (meanSampleBytes ?? MEASURED_SAMPLE_BYTES) / MEASURED_SAMPLE_BYTES;
  return 1 / (DECODE_FIXED_SECONDS_PER_SAMPLE + (1 / CPU_DECODE_AUGMENT_PER_WORKER - DECODE_FIXED_SECONDS_PER_SAMPLE) * scale);
}

/** Samples per second the loader of one process decodes and augments on the CPU (a process without workers decodes itself). */
export function cpuDecodeSamplesPerSecond(loaderWorkers: number, meanSampleBytes?: number): number {
  return Math.max(1, loaderWorkers) * cpuDecodeSamplesPerSecondPerWorker(meanSampleBytes);
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
