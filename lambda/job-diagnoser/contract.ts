import type { Verdict } from './diagnose-job';

/** The diagnoser's event: the job the state machine's train step ran. */
export interface JobDiagnoserEvent {
  readonly trainingJobName: string;
}

/** Fields of {@link JobDiagnoserEvent}: the state machine passes exactly these. */
export const JOB_DIAGNOSER_EVENT_FIELDS = ['trainingJobName'] as const satisfies ReadonlyArray<keyof JobDiagnoserEvent>;

/** What the diagnoser returns; the state machine keeps it at `$.diagnosis`. */
export interface JobDiagnoserResult {
  readonly trainingJobName: string;
  readonly verdict: Verdict;
  readonly summary: string;
  /** `s3://…/<job>/diagnosis/report.json` */
  readonly reportUri: string;
  /** `s3://…/<job>/diagnosis/report.md` */
  readonly markdownUri: string;
  /** `s3://…/<job>/diagnosis/metrics.json`: the metric set, for `training-io diagnose --metrics`. */
  readonly metricsUri: string;
}

/** The EventBridge event each diagnosis emits. */
export const DIAGNOSIS_EVENT = {
  source: 'cdk-training-io',
  detailType: 'Training Job Diagnosed',
} as const;

/** The event's `detail`: the result, plus the job's instances. */
export interface DiagnosisEventDetail extends JobDiagnoserResult {
  readonly instanceType: string;
  readonly instanceCount: number;
}

/** Environment variables the diagnoser reads. */
export const DIAGNOSER_ENV = {
  /** GPUs of one training instance (GPUUtilization is summed over them). */
  gpusPerInstance: 'GPUS_PER_INSTANCE',
  /** vCPUs of one training instance (CPUUtilization is summed over them). */
  vcpusPerInstance: 'VCPUS_PER_INSTANCE',
  /** Metric-definition name of the loader's samples per second. */
  samplesPerSecondMetric: 'LOADER_SAMPLES_METRIC',
  /** Metric-definition name of the loader's data-wait fraction. */
  dataWaitMetric: 'LOADER_DATA_WAIT_METRIC',
  /** The FSx for Lustre cache the jobs read (optional). */
  cacheFileSystemId: 'CACHE_FILE_SYSTEM_ID',
  /** Its baseline throughput in MB/s (with the file system ID). */
  cacheBaselineMBps: 'CACHE_BASELINE_MBPS',
  /** The event bus of the diagnosis events. */
  eventBusName: 'EVENT_BUS_NAME',
} as const;

/** Environment variables the diagnoser reads, as a list. */
export const JOB_DIAGNOSER_ENVIRONMENT = Object.values(DIAGNOSER_ENV);

/** The training instance metrics SageMaker publishes per host, and the namespace and dimension they live in. */
export const SAGEMAKER_INSTANCE_METRICS = {
  namespace: '/aws/sagemaker/TrainingJobs',
  /** `<training job name>/algo-<n>` */
  hostDimension: 'Host',
  /** Metrics from the job's MetricDefinitions carry this dimension instead (sagemaker-python-sdk TrainingJobAnalytics). */
  jobDimension: 'TrainingJobName',
  names: ['GPUUtilization', 'GPUMemoryUtilization', 'CPUUtilization', 'MemoryUtilization', 'DiskUtilization'],
} as const;

/** The FSx for Lustre metric of bytes read by clients (namespace `AWS/FSx`, dimension `FileSystemId`, Sum per period). */
export const FSX_READ_METRIC = { namespace: 'AWS/FSx', dimension: 'FileSystemId', name: 'DataReadBytes' } as const;

/** Default names of the loader metrics: what `TrainingCode.reference()` declares for container/train.py. */
export const DEFAULT_LOADER_METRICS = {
  samplesPerSecond: 'train:samples_per_second',
  dataWaitFraction: 'train:data_wait_fraction',
} as const;
