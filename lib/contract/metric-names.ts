/** The CloudWatch namespace of the handlers' own metrics (Powertools, dimension `service` = the handler). */
export const LIBRARY_METRICS_NAMESPACE = 'cdk-training-io';

/**
 * What SageMaker publishes for each training instance: namespace, dimension `Host` =
 * `<job name>/algo-<n>`, and the metric names (SageMaker developer guide, "SageMaker AI job metrics").
 * Metrics from a job's MetricDefinitions carry the dimension `TrainingJobName` instead
 * (sagemaker-python-sdk TrainingJobAnalytics).
 */
export const SAGEMAKER_TRAINING_METRICS = {
  namespace: '/aws/sagemaker/TrainingJobs',
  hostDimension: 'Host',
  jobDimension: 'TrainingJobName',
  gpu: 'GPUUtilization',
  gpuMemory: 'GPUMemoryUtilization',
  cpu: 'CPUUtilization',
  memory: 'MemoryUtilization',
  disk: 'DiskUtilization',
} as const;

/** The per-instance metrics of {@link SAGEMAKER_TRAINING_METRICS}, as a list. */
export const SAGEMAKER_INSTANCE_METRIC_NAMES = [
  SAGEMAKER_TRAINING_METRICS.gpu, SAGEMAKER_TRAINING_METRICS.gpuMemory, SAGEMAKER_TRAINING_METRICS.cpu,
  SAGEMAKER_TRAINING_METRICS.memory, SAGEMAKER_TRAINING_METRICS.disk,
] as const;

/** Bytes read by the clients of an FSx file system (namespace `AWS/FSx`, dimension `FileSystemId`, Sum per period). */
export const FSX_READ_METRIC = { namespace: 'AWS/FSx', dimension: 'FileSystemId', name: 'DataReadBytes' } as const;

/** The metrics each packer publishes (namespace {@link LIBRARY_METRICS_NAMESPACE}, dimension `service` = `shard-packer`). */
export const PACKER_METRICS = {
  service: 'shard-packer',
  records: 'Records',
  recordsPerSecond: 'RecordsPerSecond',
  inputMegabytesPerSecond: 'InputMegabytesPerSecond',
  failures: 'Failures',
  s3Retries: 'S3Retries',
} as const;

/**
 * The loader's metric-definition names: what `TrainingCode.reference()` declares for
 * container/train.py's interval lines, and what the diagnoser reads unless told others.
 */
export const LOADER_METRICS = {
  samplesPerSecond: 'train:samples_per_second',
  dataWaitFraction: 'train:data_wait_fraction',
} as const;
