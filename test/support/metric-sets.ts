import { JobMetricSet, METRIC_SET_FORMAT, MetricSeries } from '../../lambda/job-diagnoser/metric-set';
import { SeededRandom } from '../../lambda/packing/planning/seeded-random';

/** A level held through the training phase, per GPU / per vCPU (0–100), with uniform noise of ± `spread`. */
export interface Level {
  readonly mean: number;
  readonly spread?: number;
  /** The value of every odd training minute instead of `mean` (exact shares of samples). */
  readonly alternate?: number;
}

/** What a synthetic job looked like: its shape and the utilization levels of its training phase. */
export interface SyntheticJob {
  readonly name?: string;
  readonly instanceType?: string;
  readonly instanceCount?: number;
  readonly gpus?: number;
  readonly vcpus?: number;
  readonly workers?: number;
  readonly downloadMinutes?: number;
  readonly trainingMinutes?: number;
  readonly gpu: Level;
  readonly cpu?: Level;
  readonly gpuMemory?: Level;
  readonly memory?: Level;
  readonly disk?: Level;
  /** Loader data-wait fraction (0–1); absent when the code reports none. */
  readonly dataWait?: Level;
  readonly samplesPerSecond?: Level;
  /** An FSx cache: its baseline and the MB/s the job read. */
  readonly cache?: { readonly baselineMBps: number; readonly readMBps: Level };
  /** The first minutes of training: GPUs and CPUs at these levels while the model loads. */
  readonly warmup?: { readonly minutes: number; readonly gpu: number; readonly cpu: number };
  readonly seed?: number;
}

const START = Date.parse('2026-11-02T09:00:00Z');
const MINUTE = 60_000;

/**
 * A metric set shaped as the handler collects it: one-minute points per host over the whole job,
 * values as CloudWatch reports them (GPU metrics summed over the GPUs, CPU over the vCPUs), with
 * the GPUs idle until training starts.
 */
export function syntheticMetricSet(job: SyntheticJob): JobMetricSet {
  const name = job.name ?? 'resnet50-0c7e0f7a-2b4d-4d61-9a55-0c0ffee00001';
  const gpus = job.gpus ?? 8;
  const vcpus = job.vcpus ?? 96;
  const count = job.instanceCount ?? 2;
  const download = job.downloadMinutes ?? 2;
  const training = job.trainingMinutes ?? 40;
  const starting = START;
  const downloading = starting + 3 * MINUTE;
  const trainingStart = downloading + download * MINUTE;
  const uploading = trainingStart + training * MINUTE;
  const completed = uploading + MINUTE;
  const random = new SeededRandom(job.seed ?? 1);
  const noise = (level: Level | undefined, scale: number, max: number, warm?: number) => {
    if (!level) return undefined;
    const spread = level.spread ?? 0;
    return (t: number) => {
      if (t < trainingStart) return 0;
      const minute = Math.round((t - trainingStart) / MINUTE);
      if (job.warmup && warm !== undefined && minute < job.warmup.minutes) return warm * scale;
      const mean = level.alternate !== undefined && minute % 2 === 1 ? level.alternate : level.mean;
      return Math.min(max, Math.max(0, mean + (random.nextUint32() / 2 ** 32 * 2 - 1) * spread)) * scale;
    };
  };
  const minutes: number[] = [];
  for (let t = starting; t <= uploading; t += MINUTE) minutes.push(t);
  const seriesOf = (value: ((t: number) => number) | undefined): MetricSeries | undefined => (value ? {
    timestamps: minutes.map((t) => new Date(t).toISOString()),
    values: minutes.map((t) => round(value(t))),
  } : undefined);

  const hosts = Array.from({ length: count }, (_, i) => definedOnly({
    host: `${name}/algo-${i + 1}`,
    gpuUtilization: seriesOf(noise(job.gpu, gpus, 100, job.warmup?.gpu)),
    gpuMemoryUtilization: seriesOf(noise(job.gpuMemory, gpus, 100)),
    cpuUtilization: seriesOf(noise(job.cpu, vcpus, 100, job.warmup?.cpu)),
    memoryUtilization: seriesOf(noise(job.memory, 1, 100)),
    diskUtilization: seriesOf(noise(job.disk, 1, 100)),
  }));
  const loader = job.dataWait || job.samplesPerSecond ? definedOnly({
    dataWaitFraction: seriesOf(noise(job.dataWait, 1, 1)),
    samplesPerSecond: seriesOf(noise(job.samplesPerSecond, 1, Number.MAX_VALUE)),
  }) : undefined;
  const iso = (t: number) => new Date(t).toISOString();
  return {
    format: METRIC_SET_FORMAT,
    periodSeconds: 60,
    job: {
      name,
      status: 'Completed',
      instanceType: job.instanceType ?? 'ml.p3dn.24xlarge',
      instanceCount: count,
      gpusPerInstance: gpus,
      vcpusPerInstance: vcpus,
      ...(job.workers !== undefined ? { dataLoaderWorkers: job.workers } : {}),
      outputPath: 's3://training-output/training-output/',
      phases: [
        { status: 'Starting', start: iso(starting), end: iso(downloading) },
        ...(download > 0 ? [{ status: 'Downloading', start: iso(downloading), end: iso(trainingStart) }] : []),
        { status: 'Training', start: iso(trainingStart), end: iso(uploading) },
        { status: 'Uploading', start: iso(uploading), end: iso(completed) },
        { status: 'Completed', start: iso(completed), end: iso(completed) },
      ],
    },
    hosts,
    ...(loader ? { loader } : {}),
    ...(job.cache ? {
      cache: {
        fileSystemId: 'fs-0123456789abcdef0',
        baselineMBps: job.cache.baselineMBps,
        dataReadBytes: seriesOf(noise(job.cache.readMBps, 60 * 1e6, Number.MAX_VALUE)),
      },
    } : {}),
  };
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
