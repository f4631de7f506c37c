import type { HostMetrics, JobMetricSet, MetricSeries } from '../../lambda/diagnosis/metric-set';
import { METRIC_SET_FORMAT } from '../../lambda/diagnosis/metric-set';
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

/** Epoch seconds, as the JSON protocol carries timestamps. */
function epochSeconds(iso: string): number {
  return Date.parse(iso) / 1000;
}

/** A DescribeTrainingJob response (JSON protocol) for the job of a metric set, as SageMaker would answer it. */
export function describeTrainingJobResponse(set: JobMetricSet, outputPath: string, metricNames: string[] = []): Record<string, unknown> {
  const { job } = set;
  const phases = job.phases;
  const first = phases[0];
  const last = phases[phases.length - 1];
  const training = phases.find((p) => p.status === 'Training');
  return {
    TrainingJobName: job.name,
    TrainingJobArn: `arn:aws:sagemaker:us-east-1:111111111111:training-job/${job.name}`,
    ModelArtifacts: { S3ModelArtifacts: `${outputPath}${job.name}/output/model.tar.gz` },
    TrainingJobStatus: job.status,
    SecondaryStatus: last.status,
    HyperParameters: {
      ...(job.dataLoaderWorkers !== undefined ? { num_workers: String(job.dataLoaderWorkers) } : {}),
      sagemaker_program: 'train.py',
    },
    AlgorithmSpecification: {
      TrainingImage: '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312',
      TrainingInputMode: 'File',
      ...(metricNames.length ? { MetricDefinitions: metricNames.map((Name) => ({ Name, Regex: `${Name}=([0-9.]+)` })) } : {}),
    },
    RoleArn: 'arn:aws:iam::111111111111:role/TrainingRole',
    OutputDataConfig: { S3OutputPath: outputPath },
    ResourceConfig: { InstanceType: job.instanceType, InstanceCount: job.instanceCount },
    StoppingCondition: { MaxRuntimeInSeconds: 86400 },
    CreationTime: epochSeconds(first.start),
    ...(training ? { TrainingStartTime: epochSeconds(training.start) } : {}),
    ...(last.end ? { TrainingEndTime: epochSeconds(last.end) } : {}),
    LastModifiedTime: epochSeconds(last.end ?? last.start),
    SecondaryStatusTransitions: phases.map((p) => ({
      Status: p.status,
      StartTime: epochSeconds(p.start),
      ...(p.end ? { EndTime: epochSeconds(p.end) } : {}),
      StatusMessage: `${p.status} the training job`,
    })),
    TrainingTimeInSeconds: 3000,
    BillableTimeInSeconds: 3000,
  };
}

/** The series a GetMetricData query asks for, from the metric set; undefined when the set has none. */
function seriesFor(set: JobMetricSet, query: any, loaderNames: { samples: string; wait: string }): MetricSeries | undefined {
  const metric = query.MetricStat.Metric;
  const dimension = metric.Dimensions[0];
  if (metric.Namespace === 'AWS/FSx') return set.cache?.fileSystemId === dimension.Value ? set.cache?.dataReadBytes : undefined;
  if (dimension.Name === 'TrainingJobName') {
    if (metric.MetricName === loaderNames.samples) return set.loader?.samplesPerSecond;
    if (metric.MetricName === loaderNames.wait) return set.loader?.dataWaitFraction;
    return undefined;
  }
  const host = set.hosts.find((h) => h.host === dimension.Value);
  const fields: Record<string, Exclude<keyof HostMetrics, 'host'>> = {
    GPUUtilization: 'gpuUtilization', GPUMemoryUtilization: 'gpuMemoryUtilization', CPUUtilization: 'cpuUtilization',
    MemoryUtilization: 'memoryUtilization', DiskUtilization: 'diskUtilization',
  };
  const field = fields[metric.MetricName];
  return host && field ? host[field] : undefined;
}

/**
 * Answers GetMetricData (JSON protocol) from a metric set: each query's series within the window,
 * split over pages of `pageSize` points per query to exercise NextToken.
 */
export function metricDataAnswerer(set: JobMetricSet, options: { pageSize?: number; loaderNames?: { samples: string; wait: string } } = {}) {
  const pageSize = options.pageSize ?? 10_000;
  const loaderNames = options.loaderNames ?? { samples: 'train:samples_per_second', wait: 'train:data_wait_fraction' };
  return (input: any) => {
    const page = input.NextToken ? Number(input.NextToken) : 0;
    let more = false;
    const results = input.MetricDataQueries.map((query: any) => {
      const series = seriesFor(set, query, loaderNames);
      const points = (series?.timestamps ?? []).map((t, i) => [epochSeconds(t), series!.values[i]] as const)
        .filter(([t]) => t >= input.StartTime && t < input.EndTime);
      const slice = points.slice(page * pageSize, (page + 1) * pageSize);
      if (points.length > (page + 1) * pageSize) more = true;
      return {
        Id: query.Id,
        Label: query.MetricStat.Metric.MetricName,
        Timestamps: slice.map(([t]) => t),
        Values: slice.map(([, v]) => v),
        StatusCode: points.length > (page + 1) * pageSize ? 'PartialData' : 'Complete',
      };
    });
    return { MetricDataResults: results, ...(more ? { NextToken: String(page + 1) } : {}), Messages: [] };
  };
}
