/**
 * Everything the diagnosis reads about one training job, in one JSON document: what the handler
 * collects from SageMaker and CloudWatch, what `training-io diagnose --save-metrics` writes and
 * what `training-io diagnose --metrics FILE.json` reads back. Values are as CloudWatch returns
 * them (GPUUtilization summed over the GPUs, CPUUtilization over the vCPUs); the diagnosis
 * normalises them with the instance's GPU and vCPU counts.
 */

/** Version of the document format. */
export const METRIC_SET_FORMAT = 'cdk-training-io/job-metrics@1';

/** One CloudWatch time series: parallel lists, oldest first, timestamps in ISO 8601. */
export interface MetricSeries {
  readonly timestamps: string[];
  readonly values: number[];
}

/** A secondary status the job passed through (DescribeTrainingJob `SecondaryStatusTransitions`). */
export interface JobPhase {
  /** `Starting`, `Downloading`, `Training`, `Uploading`, `Completed`, ... */
  readonly status: string;
  readonly start: string;
  /** Absent while the job is still in this status. */
  readonly end?: string;
}

/** What DescribeTrainingJob says about the job, plus the hardware of its instance type. */
export interface JobFacts {
  readonly name: string;
  /** `InProgress`, `Completed`, `Failed`, `Stopping`, `Stopped`. */
  readonly status: string;
  readonly failureReason?: string;
  readonly instanceType: string;
  readonly instanceCount: number;
  /** GPUs of one instance: GPUUtilization is the sum over them. */
  readonly gpusPerInstance: number;
  /** vCPUs of one instance: CPUUtilization is the sum over them. */
  readonly vcpusPerInstance: number;
  /** The `num_workers` hyperparameter, when the job has one. */
  readonly dataLoaderWorkers?: number;
  /** The `S3OutputPath` of the job: the report goes to `<S3OutputPath><job name>/`. */
  readonly outputPath?: string;
  readonly phases: JobPhase[];
}

/** The instance metrics of one host, `<job name>/algo-<n>` (namespace `/aws/sagemaker/TrainingJobs`). */
export interface HostMetrics {
  readonly host: string;
  /** 0–100 × GPUs. */
  readonly gpuUtilization?: MetricSeries;
  /** 0–100 × GPUs. */
  readonly gpuMemoryUtilization?: MetricSeries;
  /** 0–100 × vCPUs. */
  readonly cpuUtilization?: MetricSeries;
  /** 0–100: memory of the algorithm container. */
  readonly memoryUtilization?: MetricSeries;
  /** 0–100: disk *space* used by the algorithm container (not throughput). */
  readonly diskUtilization?: MetricSeries;
}

/** The training loop's own metrics, from the job's metric definitions (dimension `TrainingJobName`). */
export interface LoaderMetrics {
  /** Samples per second, as the training code logs them. */
  readonly samplesPerSecond?: MetricSeries;
  /** Share of each interval the loop waited for its next batch, 0–1. */
  readonly dataWaitFraction?: MetricSeries;
}

/** The FSx for Lustre cache the job read (namespace `AWS/FSx`, dimension `FileSystemId`). */
export interface CacheMetrics {
  readonly fileSystemId: string;
  /** Baseline throughput of the file system in MB/s (capacity × throughput per TiB). */
  readonly baselineMBps: number;
  /** `DataReadBytes` with the Sum statistic: bytes read in each period. */
  readonly dataReadBytes?: MetricSeries;
}

/** The whole document. */
export interface JobMetricSet {
  readonly format: typeof METRIC_SET_FORMAT;
  /** Seconds each data point covers (the GetMetricData period). */
  readonly periodSeconds: number;
  readonly job: JobFacts;
  readonly hosts: HostMetrics[];
  readonly loader?: LoaderMetrics;
  readonly cache?: CacheMetrics;
}

/** A metric set that cannot be read: names the document and the field. */
export class MetricSetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetricSetError';
  }
}

type Json = Record<string, unknown>;

/**
 * Checks a parsed JSON document against the format and returns it typed.
 *
 * @param origin names the document in errors, e.g. the file name
 */
export function parseMetricSet(document: unknown, origin: string): JobMetricSet {
  const at = (field: string) => `${origin}: ${field}`;
  const root = object(document, at('the document'));
  if (root.format !== METRIC_SET_FORMAT) {
    throw new MetricSetError(`${at('format')} must be '${METRIC_SET_FORMAT}', got ${describeValue(root.format)}`);
  }
  const periodSeconds = positiveNumber(root.periodSeconds, at('periodSeconds'));
  const job = object(root.job, at('job'));
  const facts: JobFacts = {
    name: text(job.name, at('job.name')),
    status: text(job.status, at('job.status')),
    ...(job.failureReason !== undefined ? { failureReason: text(job.failureReason, at('job.failureReason')) } : {}),
    instanceType: text(job.instanceType, at('job.instanceType')),
    instanceCount: wholeNumber(job.instanceCount, at('job.instanceCount'), 1),
    gpusPerInstance: wholeNumber(job.gpusPerInstance, at('job.gpusPerInstance'), 0),
    vcpusPerInstance: wholeNumber(job.vcpusPerInstance, at('job.vcpusPerInstance'), 1),
    ...(job.dataLoaderWorkers !== undefined ? { dataLoaderWorkers: wholeNumber(job.dataLoaderWorkers, at('job.dataLoaderWorkers'), 0) } : {}),
    ...(job.outputPath !== undefined ? { outputPath: text(job.outputPath, at('job.outputPath')) } : {}),
    phases: list(job.phases, at('job.phases')).map((phase, i) => {
      const p = object(phase, at(`job.phases[${i}]`));
      const checked: JobPhase = {
        status: text(p.status, at(`job.phases[${i}].status`)),
        start: timestamp(p.start, at(`job.phases[${i}].start`)),
        ...(p.end !== undefined ? { end: timestamp(p.end, at(`job.phases[${i}].end`)) } : {}),
      };
      // A phase that ends before it starts would count as no time, and another phase as all of it.
      if (checked.end !== undefined && Date.parse(checked.end) < Date.parse(checked.start)) {
        throw new MetricSetError(`${at(`job.phases[${i}]`)} (${checked.status}) ends at ${checked.end}, before it starts at ${checked.start}: `
          + 'a phase must end at or after its start');
      }
      return checked;
    }),
  };
  const hosts = list(root.hosts, at('hosts')).map((entry, i) => {
    const h = object(entry, at(`hosts[${i}]`));
    const host: HostMetrics = { host: text(h.host, at(`hosts[${i}].host`)) };
    return withSeries(host, h, HOST_SERIES, at(`hosts[${i}]`), hostRanges(facts));
  });
  const loader = root.loader === undefined ? undefined
    : withSeries({}, object(root.loader, at('loader')), LOADER_SERIES, at('loader'), LOADER_RANGES) as LoaderMetrics;
  let cache: CacheMetrics | undefined;
  if (root.cache !== undefined) {
    const c = object(root.cache, at('cache'));
    cache = withSeries({
      fileSystemId: text(c.fileSystemId, at('cache.fileSystemId')),
      baselineMBps: positiveNumber(c.baselineMBps, at('cache.baselineMBps')),
    }, c, ['dataReadBytes'], at('cache'), { dataReadBytes: { max: Infinity, unit: 'bytes read' } });
  }
  return {
    format: METRIC_SET_FORMAT,
    periodSeconds,
    job: facts,
    hosts,
    ...(loader ? { loader } : {}),
    ...(cache ? { cache } : {}),
  };
}

const HOST_SERIES = ['gpuUtilization', 'gpuMemoryUtilization', 'cpuUtilization', 'memoryUtilization', 'diskUtilization'] as const;
const LOADER_SERIES = ['samplesPerSecond', 'dataWaitFraction'] as const;

/** The values a series may take, from 0 up to `max`, and what they measure (named in errors). */
interface SeriesRange {
  readonly max: number;
  readonly unit: string;
}

/**
 * Utilizations are percentages, summed over the instance's GPUs or vCPUs as CloudWatch reports them:
 * a value outside 0–100 × their count is no measurement, and a diagnosis built on it would mislead.
 */
function hostRanges(job: JobFacts): Record<string, SeriesRange> {
  const gpus = Math.max(1, job.gpusPerInstance);
  const summed = (count: number, what: string) => ({ max: 100 * count, unit: count === 1 ? `percent` : `percent summed over the ${count} ${what} of an instance` });
  return {
    gpuUtilization: summed(gpus, 'GPUs'),
    gpuMemoryUtilization: summed(gpus, 'GPUs'),
    cpuUtilization: summed(job.vcpusPerInstance, 'vCPUs'),
    memoryUtilization: summed(1, ''),
    diskUtilization: summed(1, ''),
  };
}

const LOADER_RANGES: Record<string, SeriesRange> = {
  samplesPerSecond: { max: Infinity, unit: 'samples per second' },
  dataWaitFraction: { max: 1, unit: 'a share of each interval' },
};

function withSeries<T extends object>(target: T, source: Json, names: readonly string[], where: string, ranges: Record<string, SeriesRange>): T {
  const out: Record<string, unknown> = { ...(target as Record<string, unknown>) };
  for (const name of names) {
    if (source[name] !== undefined) out[name] = series(source[name], `${where}.${name}`, ranges[name]);
  }
  return out as unknown as T;
}

function series(value: unknown, where: string, range: SeriesRange): MetricSeries {
  const s = object(value, where);
  const timestamps = list(s.timestamps, `${where}.timestamps`).map((t, i) => timestamp(t, `${where}.timestamps[${i}]`));
  const values = list(s.values, `${where}.values`).map((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new MetricSetError(`${where}.values[${i}] must be a number, got ${describeValue(v)}`);
    if (v < 0 || v > range.max) {
      const allowed = range.max === Infinity ? 'at least 0' : `between 0 and ${range.max}`;
      throw new MetricSetError(`${where}.values[${i}] must be ${allowed} (${range.unit}), got ${v}`);
    }
    return v;
  });
  if (timestamps.length !== values.length) {
    throw new MetricSetError(`${where} has ${timestamps.length} timestamps but ${values.length} values: they must pair up`);
  }
  return { timestamps, values };
}

function object(value: unknown, where: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new MetricSetError(`${where} must be a JSON object, got ${describeValue(value)}`);
  }
  return value as Json;
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new MetricSetError(`${where} must be a list, got ${describeValue(value)}`);
  return value;
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '') throw new MetricSetError(`${where} must be a non-empty string, got ${describeValue(value)}`);
  return value;
}

function timestamp(value: unknown, where: string): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw new MetricSetError(`${where} must be an ISO 8601 timestamp, got ${describeValue(value)}`);
  }
  return value;
}

function wholeNumber(value: unknown, where: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new MetricSetError(`${where} must be a whole number of at least ${min}, got ${describeValue(value)}`);
  }
  return value;
}

function positiveNumber(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new MetricSetError(`${where} must be a number greater than 0, got ${describeValue(value)}`);
  }
  return value;
}

/** A JSON rendering short enough for an error message. */
function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
