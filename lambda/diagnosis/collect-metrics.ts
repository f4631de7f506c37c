import type { CloudWatchClient, MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import type { DescribeTrainingJobCommandOutput, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { DescribeTrainingJobCommand } from '@aws-sdk/client-sagemaker';
import { FSX_READ_METRIC, LOADER_METRICS, SAGEMAKER_INSTANCE_METRIC_NAMES, SAGEMAKER_TRAINING_METRICS } from '../../lib/contract/metric-names';
import type { CacheMetrics, HostMetrics, JobMetricSet, LoaderMetrics, MetricSeries } from './metric-set';
import { METRIC_SET_FORMAT } from './metric-set';

/** GPUs and vCPUs of one training instance: the divisors of GPUUtilization and CPUUtilization. */
export interface InstanceHardware {
  readonly gpusPerInstance: number;
  readonly vcpusPerInstance: number;
}

/** What to collect for one job, and with which clients. */
export interface CollectOptions {
  readonly sagemaker: SageMakerClient;
  readonly cloudwatch: CloudWatchClient;
  readonly jobName: string;
  /** The hardware of an instance type; undefined when unknown (the collection then fails, naming the type). */
  readonly hardwareOf: (instanceType: string) => InstanceHardware | undefined;
  /** Metric-definition names of the loader's metrics. @default LOADER_METRICS */
  readonly loaderMetrics?: { readonly samplesPerSecond: string; readonly dataWaitFraction: string };
  /** The FSx for Lustre cache the job read. */
  readonly cache?: { readonly fileSystemId: string; readonly baselineMBps: number };
  /** The end of a job still running. @default the current time */
  readonly now?: () => Date;
}

/** A job that cannot be diagnosed: names the job and why. */
export class JobCollectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobCollectionError';
  }
}

/** One time series per point at most this many: long jobs get a longer period. */
const MAX_POINTS_PER_SERIES = 1440;
/** GetMetricData takes at most 500 queries per request (CloudWatch API reference). */
const MAX_QUERIES_PER_REQUEST = 500;
const MINUTE = 60;

/**
 * Reads the job (DescribeTrainingJob) and its metrics (GetMetricData, one-minute averages for jobs
 * up to a day): each host's instance metrics, the loader's metrics when the job defines them, and
 * the cache's bytes read.
 */
export async function collectJobMetrics(options: CollectOptions): Promise<JobMetricSet> {
  const job = await options.sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: options.jobName }));
  const name = job.TrainingJobName ?? options.jobName;
  const instanceType = job.ResourceConfig?.InstanceType;
  const instanceCount = job.ResourceConfig?.InstanceCount;
  if (!instanceType || !instanceCount) {
    throw new JobCollectionError(`training job ${name} has no single InstanceType and InstanceCount (heterogeneous clusters with `
      + 'InstanceGroups cannot be diagnosed yet)');
  }
  const hardware = options.hardwareOf(instanceType);
  if (!hardware) {
    throw new JobCollectionError(`training job ${name} runs on ${instanceType}, whose GPU and vCPU counts are unknown: `
      + 'give them (GPUS_PER_INSTANCE and VCPUS_PER_INSTANCE, or --gpus and --vcpus)');
  }

  const start = job.CreationTime ?? job.TrainingStartTime;
  if (!start) throw new JobCollectionError(`training job ${name} has no CreationTime`);
  const end = job.TrainingEndTime ?? (options.now ?? (() => new Date()))();
  const periodSeconds = periodFor((end.getTime() - start.getTime()) / 1000);
  const window = { start: floorToMinute(start), end: new Date(ceilToMinute(end).getTime() + MINUTE * 1000) };

  const queries = new Map<string, MetricDataQuery>();
  const hostIds: Array<{ host: string; ids: Record<string, string> }> = [];
  for (let i = 1; i <= instanceCount; i++) {
    const host = `${name}/algo-${i}`;
    const ids: Record<string, string> = {};
    SAGEMAKER_INSTANCE_METRIC_NAMES.forEach((metric, m) => {
      const id = `h${i}_m${m}`;
      ids[metric] = id;
      queries.set(id, metricQuery(id, SAGEMAKER_TRAINING_METRICS.namespace, metric, SAGEMAKER_TRAINING_METRICS.hostDimension, host,
        periodSeconds, 'Average'));
    });
    hostIds.push({ host, ids });
  }
  const defined = new Set((job.AlgorithmSpecification?.MetricDefinitions ?? []).map((d) => d.Name));
  const loaderNames = options.loaderMetrics ?? LOADER_METRICS;
  for (const [id, metric] of [['loader_samples', loaderNames.samplesPerSecond], ['loader_wait', loaderNames.dataWaitFraction]]) {
    if (defined.has(metric)) {
      queries.set(id, metricQuery(id, SAGEMAKER_TRAINING_METRICS.namespace, metric, SAGEMAKER_TRAINING_METRICS.jobDimension, name,
        periodSeconds, 'Average'));
    }
  }
  if (options.cache) {
    queries.set('cache_read', metricQuery('cache_read', FSX_READ_METRIC.namespace, FSX_READ_METRIC.name, FSX_READ_METRIC.dimension,
      options.cache.fileSystemId, periodSeconds, 'Sum'));
  }

  const series = await getMetricData(options.cloudwatch, [...queries.values()], window);
  const hosts: HostMetrics[] = hostIds.map(({ host, ids }) => definedOnly({
    host,
    gpuUtilization: series.get(ids.GPUUtilization),
    gpuMemoryUtilization: series.get(ids.GPUMemoryUtilization),
    cpuUtilization: series.get(ids.CPUUtilization),
    memoryUtilization: series.get(ids.MemoryUtilization),
    diskUtilization: series.get(ids.DiskUtilization),
  }));
  const loader: LoaderMetrics = definedOnly({ samplesPerSecond: series.get('loader_samples'), dataWaitFraction: series.get('loader_wait') });
  const cache: CacheMetrics | undefined = options.cache && definedOnly({ ...options.cache, dataReadBytes: series.get('cache_read') });
  const workers = wholeNumber(job.HyperParameters?.num_workers);

  return {
    format: METRIC_SET_FORMAT,
    periodSeconds,
    job: {
      name,
      status: job.TrainingJobStatus ?? 'Unknown',
      ...(job.FailureReason ? { failureReason: job.FailureReason } : {}),
      instanceType,
      instanceCount,
      ...hardware,
      ...(workers !== undefined ? { dataLoaderWorkers: workers } : {}),
      ...(job.OutputDataConfig?.S3OutputPath ? { outputPath: job.OutputDataConfig.S3OutputPath } : {}),
      phases: phasesOf(job),
    },
    hosts,
    ...(Object.keys(loader).length ? { loader } : {}),
    ...(cache ? { cache } : {}),
  };
}

function phasesOf(job: DescribeTrainingJobCommandOutput): JobMetricSet['job']['phases'] {
  return (job.SecondaryStatusTransitions ?? []).filter((t) => t.Status && t.StartTime).map((t) => ({
    status: t.Status!,
    start: t.StartTime!.toISOString(),
    ...(t.EndTime ? { end: t.EndTime.toISOString() } : {}),
  }));
}

function metricQuery(id: string, namespace: string, metric: string, dimension: string, value: string, period: number,
  stat: string): MetricDataQuery {
  return {
    Id: id,
    MetricStat: {
      Metric: { Namespace: namespace, MetricName: metric, Dimensions: [{ Name: dimension, Value: value }] },
      Period: period,
      Stat: stat,
    },
    ReturnData: true,
  };
}

/** Runs the queries in requests of at most 500, following NextToken; series by query id, oldest first. */
async function getMetricData(client: CloudWatchClient, queries: MetricDataQuery[], window: { start: Date; end: Date }):
  Promise<Map<string, MetricSeries>> {
  const points = new Map<string, Array<[Date, number]>>();
  for (let i = 0; i < queries.length; i += MAX_QUERIES_PER_REQUEST) {
    let nextToken: string | undefined;
    do {
      const page = await client.send(new GetMetricDataCommand({
        MetricDataQueries: queries.slice(i, i + MAX_QUERIES_PER_REQUEST),
        StartTime: window.start,
        EndTime: window.end,
        ScanBy: 'TimestampAscending',
        NextToken: nextToken,
      }));
      for (const result of page.MetricDataResults ?? []) {
        if (!result.Id) continue;
        const list = points.get(result.Id) ?? [];
        (result.Timestamps ?? []).forEach((t, k) => list.push([t, result.Values![k]]));
        points.set(result.Id, list);
      }
      nextToken = page.NextToken;
    } while (nextToken);
  }
  const series = new Map<string, MetricSeries>();
  for (const [id, list] of points) {
    if (list.length === 0) continue;
    list.sort((a, b) => a[0].getTime() - b[0].getTime());
    series.set(id, { timestamps: list.map(([t]) => t.toISOString()), values: list.map(([, v]) => v) });
  }
  return series;
}

/** One minute, or longer for long jobs so that each series stays within MAX_POINTS_PER_SERIES points. */
export function periodFor(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / MAX_POINTS_PER_SERIES / MINUTE)) * MINUTE;
}

/** A hyperparameter holding a whole number (the toolkit JSON-decodes values: `"4"` and `4` alike). */
function wholeNumber(value: string | undefined): number | undefined {
  return value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

function floorToMinute(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 60_000) * 60_000);
}

function ceilToMinute(date: Date): Date {
  return new Date(Math.ceil(date.getTime() / 60_000) * 60_000);
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
