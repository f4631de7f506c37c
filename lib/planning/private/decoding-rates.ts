import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import { resnet50SamplesPerSecond } from '../../instances/private/gpu-throughput';
import { cpuDecodeSamplesPerSecond, cpuDecodeSamplesPerSecondPerWorker, MEASURED_SAMPLE_BYTES } from '../../instances/private/loader-rules';
import type { ImagePreprocessingOptions } from '../../sharding/image-preprocessing-options';
import type { ResolvedDataset } from './plan-inputs';
import { formatBytes, formatCount, formatCountOf } from './units';

/**
 * Mean bytes of a JPEG resized at pack time to a shorter side of 256 pixels: 32 KB, measured on
 * bench/container-gpu's ~90 KB JPEGs (docs/gpu-loaders.md, "JPEGs resized to 256").
 */
export const RESIZED_SAMPLE_BYTES = 32_000;
/** The shorter side those JPEGs were resized to, and the one the planner advises for 224-pixel crops. */
export const RESIZED_SHORTER_SIDE = 256;

/** What one GPU consumes, and how the reasons name it. */
export interface GpuDemand {
  readonly samplesPerSecond: number;
  /** `the 1,000 each GPU consumes`, or the table's figure with its source. */
  readonly description: string;
  /** The same, short, for a row after the one that gave the figure's source. */
  readonly brief: string;
}

/**
 * What every row about decoding reads from (the GPU decoding and resizing rows): one sample size, one
 * per-worker rate at that size, one figure for the GPU, so that the rows cannot disagree.
 */
export interface DecodingRates {
  /** Mean bytes of a sample as the loaders decode it (resized, where the images are resized at pack time). */
  readonly sampleBytes: number;
  /** Whether that size is the dataset's (false: a shard dataset without recordCount, 90 KB assumed). */
  readonly sizeKnown: boolean;
  /** Loader workers of a process (a process without workers decodes itself: 1). */
  readonly workers: number;
  /** Samples/s one worker decodes and augments at `sampleBytes`. */
  readonly perWorker: number;
  /** Samples/s the workers of a process decode and augment. */
  readonly perProcess: number;
  /** What each GPU consumes: given, or the table's figure for the instance's GPU; undefined when neither. */
  readonly demand?: GpuDemand;
}

/**
 * Mean bytes of a JPEG once resized at pack time: the measured 256-pixel size scaled by the pixels kept
 * (bytes follow the pixels at one quality), never more than the original (images are never enlarged).
 */
export function resizedSampleBytes(sampleBytes: number, preprocessing: ImagePreprocessingOptions = { shorterSidePixels: RESIZED_SHORTER_SIDE }): number {
  // A longer side of L pixels bounds the shorter one at about 3/4 L (ImageNet's typical 4:3).
  const shorterSide = Math.min(preprocessing.shorterSidePixels ?? Infinity, (preprocessing.longerSidePixels ?? Infinity) * 3 / 4);
  if (shorterSide === Infinity) return sampleBytes;
  return Math.min(sampleBytes, RESIZED_SAMPLE_BYTES * (shorterSide / RESIZED_SHORTER_SIDE) ** 2);
}

export function decodingRates(dataset: ResolvedDataset, cluster: ResolvedCluster, samplesPerSecond: number | undefined,
  preprocessing: ImagePreprocessingOptions | undefined): DecodingRates {
  const datasetSampleBytes = dataset.recordCount === undefined ? undefined : dataset.totalBytes / dataset.recordCount;
  const stored = datasetSampleBytes ?? MEASURED_SAMPLE_BYTES;
  const sampleBytes = preprocessing ? resizedSampleBytes(stored, preprocessing) : stored;
  return {
    sampleBytes,
    sizeKnown: datasetSampleBytes !== undefined,
    workers: Math.max(1, cluster.loaderWorkers),
    perWorker: cpuDecodeSamplesPerSecondPerWorker(sampleBytes),
    perProcess: cpuDecodeSamplesPerSecond(cluster.loaderWorkers, sampleBytes),
    demand: gpuDemand(cluster, samplesPerSecond),
  };
}

function gpuDemand(cluster: ResolvedCluster, samplesPerSecond: number | undefined): GpuDemand | undefined {
  if (samplesPerSecond !== undefined) {
    const given = `the ${formatCount(samplesPerSecond)} each GPU consumes`;
    return { samplesPerSecond, description: given, brief: given };
  }
  const { instance } = cluster;
  const table = instance.gpus > 0 ? resnet50SamplesPerSecond(instance.gpuModel) : undefined;
  if (table === undefined) return undefined;
  return {
    samplesPerSecond: table.samplesPerSecond,
    description: `the ~${formatCount(table.samplesPerSecond)} ${/^[AEHIO]/.test(table.model) ? 'an' : 'a'} ${table.model} trains ResNet-50 at ` +
      `with ${table.step === 'compiled' ? 'a compiled step (train.py --compile auto)' : 'an eager step'} ` +
      `(${table.fallback ? `${table.fallback}; ` : ''}${table.source}; give samplesPerSecondPerDevice for another model)`,
    brief: `the ~${formatCount(table.samplesPerSecond)} each ${table.model} trains ResNet-50 at (the GPU decoding row)`,
  };
}

/** `7 loader workers`, `1 loader worker`. */
export function describeWorkers(rates: DecodingRates): string {
  return formatCountOf(rates.workers, 'loader worker');
}

/**
 * What the workers decode, as the GPU decoding row says it in full: `7 loader workers decode and
 * augment about 204 JPEGs/s per process (1.2 MB each; ~29/s per worker: the decoding-rate table's 330
 * at 90.0 KB, scaled by size)`.
 */
export function describeCpuDecoding(rates: DecodingRates): string {
  const size = rates.sizeKnown
    ? `${formatBytes(rates.sampleBytes)} each`
    : `~${formatBytes(rates.sampleBytes)} each assumed: give dataset.recordCount for a shard dataset's sample size`;
  const measured = cpuDecodeSamplesPerSecondPerWorker(MEASURED_SAMPLE_BYTES);
  const perWorker = rates.sampleBytes === MEASURED_SAMPLE_BYTES
    ? `~${formatCount(measured)}/s per worker, the decoding-rate table's figure at that size`
    : `~${formatCount(rates.perWorker)}/s per worker: the decoding-rate table's ${formatCount(measured)} at ${formatBytes(MEASURED_SAMPLE_BYTES)}, scaled by size`;
  return `${describeWorkers(rates)} decode and augment about ${formatCount(rates.perProcess)} JPEGs/s per process (${size}; ${perWorker})`;
}

/** The same, short, for the rows after the GPU decoding row: `7 loader workers decode about 204 JPEGs/s per process (1.2 MB each)`. */
export function describeCpuDecodingBriefly(rates: DecodingRates, resized: boolean = false): string {
  return `${describeWorkers(rates)} decode about ${formatCount(rates.perProcess)} JPEGs/s per process ` +
    `(${rates.sizeKnown ? '' : '~'}${formatBytes(rates.sampleBytes)} each${resized ? ', resized' : ''}; the GPU decoding row)`;
}
