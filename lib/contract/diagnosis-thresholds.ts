/**
 * The thresholds of the bottleneck rules. Where SageMaker Debugger's built-in profiler rules have a
 * default for the same question, we take it (awslabs/sagemaker-debugger-rulesconfig,
 * `smdebug_rulesconfig/profiler_rules/rules.py`): Debugger's profiler did this diagnosis until its
 * framework profiling was deprecated for PyTorch 2.0 and TensorFlow 2.11. The rest are our own
 * choices, marked so, with the reason.
 *
 * Debugger judged 500 ms samples of each GPU; we judge CloudWatch's one-minute averages of each
 * instance (`/aws/sagemaker/TrainingJobs`, dimension `Host`), normalised to one GPU and one vCPU.
 */
export const THRESHOLDS = {
  /**
   * A GPU whose 95th percentile of utilization stays below this is underutilized.
   * Source: Debugger `LowGPUUtilization(threshold_p95=70)`.
   */
  gpuLowPercent: 70,

  /**
   * CPU utilization (of all vCPUs) at or above this is saturated.
   * Source: Debugger `CPUBottleneck(cpu_threshold=90)`.
   */
  cpuHighPercent: 90,

  /**
   * A bottleneck condition must hold in more than this share of the samples.
   * Source: Debugger `CPUBottleneck(threshold=50)` and `IOBottleneck(threshold=50)` ("a bottleneck more than 50 % of the time").
   */
  bottleneckShare: 0.5,

  /**
   * GPU memory below this at the 95th percentile (with GPU and CPU below `batchSizeCpuPercent`) leaves room for bigger batches.
   * Source: Debugger `BatchSize(gpu_memory_threshold_p95=70)`.
   */
  gpuMemoryHeadroomPercent: 70,

  /**
   * CPU below this at the 95th percentile is idle enough for the batch-size rule.
   * Source: Debugger `BatchSize(cpu_threshold_p95=70)`.
   */
  batchSizeCpuPercent: 70,

  /**
   * Downloading input data for longer than this before training is a long start.
   * Source: Debugger `MaxInitializationTime(threshold=20)` (minutes until the first step).
   */
  longDownloadSeconds: 20 * 60,

  /**
   * Downloading for this share of the download-plus-training time is a long start, also for short jobs.
   * Our choice: a fifth of the paid GPU time spent idle before the first step is worth a shard or cache change.
   */
  downloadShare: 0.2,

  /**
   * The training loop waiting for its next batch this share of the time or more means the input
   * pipeline holds the GPUs back (the loader's `data_wait` metric, container/shardio/epoch/metrics.py).
   * Our choice: Debugger measured no such metric; a tenth of every step idle is a tenth of the GPU bill.
   */
  dataWaitShare: 0.1,

  /**
   * An FSx for Lustre cache reading at this share of its baseline throughput or more is the limit.
   * Our choice: FSx's burst credits and the one-minute averages hide peaks above the baseline.
   */
  cacheBusyShare: 0.8,

  /**
   * Samples skipped at the start of training, while the GPUs load the model and warm up.
   * Source: Debugger's `patience=1000` data points at its default 500 ms interval (ProfilerConfig
   * `ProfilingIntervalInMilliseconds`, SageMaker API) = 500 s.
   */
  warmupSeconds: 1000 * 0.5,

  /**
   * Fewer one-minute samples than this in the training phase cannot be judged.
   * Our choice: a 95th percentile of fewer than five points is one of the points.
   */
  minimumSamples: 5,

  /**
   * Container memory at or above this in a job's last minutes before it failed points at the
   * kernel's out-of-memory killer (a loader worker or the trainer killed).
   * Our choice: MemoryUtilization is a one-minute average, so a peak that killed a process shows lower.
   */
  memoryLimitPercent: 95,

  /**
   * How far back from a failed or stopped job's end the report looks for memory at its limit.
   * Our choice: an out-of-memory failure builds up over the last few minutes (a growing prefetch queue, a leak).
   */
  endWindowSeconds: 5 * 60,
} as const;

/** Where each threshold comes from, for the report. */
export const THRESHOLD_SOURCES: { readonly [name in keyof typeof THRESHOLDS]: string } = {
  gpuLowPercent: 'SageMaker Debugger LowGPUUtilization threshold_p95',
  cpuHighPercent: 'SageMaker Debugger CPUBottleneck cpu_threshold',
  bottleneckShare: 'SageMaker Debugger CPUBottleneck / IOBottleneck threshold',
  gpuMemoryHeadroomPercent: 'SageMaker Debugger BatchSize gpu_memory_threshold_p95',
  batchSizeCpuPercent: 'SageMaker Debugger BatchSize cpu_threshold_p95',
  longDownloadSeconds: 'SageMaker Debugger MaxInitializationTime threshold (20 minutes)',
  downloadShare: 'cdk-training-io choice',
  dataWaitShare: 'cdk-training-io choice',
  cacheBusyShare: 'cdk-training-io choice',
  warmupSeconds: 'SageMaker Debugger patience (1000 samples at 500 ms)',
  minimumSamples: 'cdk-training-io choice',
  memoryLimitPercent: 'cdk-training-io choice',
  endWindowSeconds: 'cdk-training-io choice',
};
