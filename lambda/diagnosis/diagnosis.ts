import type { JobFacts } from './metric-set';

/** What held a job's GPUs back, or that nothing did: the verdicts and what each means, one rule of `verdicts/` each. */
export const VERDICTS = {
  'long-download': 'Input data downloaded for long before training started (File mode).',
  'preprocessing-bound': 'GPUs underused while the CPUs were saturated: decoding and augmentation.',
  'input-bound': 'GPUs underused, CPUs with room, the loop waiting for data: I/O or too few loader workers.',
  'gpu-memory-headroom': 'GPUs, CPUs and GPU memory all underused, the loop not waiting for data: batches too small.',
  'step-bound': 'GPUs underused, the loop not waiting for data, GPU memory or CPU busy: the training step itself.',
  'healthy': 'GPUs busy: the data path keeps up.',
  'insufficient-data': 'Too few GPU samples in the training phase to judge.',
  'job-failed': 'The job failed: its FailureReason, and what the metrics showed before it ended.',
  'job-stopped': 'The job was stopped (by a user, its MaxRuntime or a spot interruption) before it completed.',
} as const;

/** One of {@link VERDICTS}. */
export type Verdict = keyof typeof VERDICTS;

/** One condition found, why, and what to change. */
export interface Finding {
  readonly verdict: Verdict;
  readonly summary: string;
  readonly evidence: string[];
  readonly advice: string[];
  /** GPU-seconds the condition left idle (an estimate): the findings are ordered by it. */
  readonly idleGpuSeconds: number;
}

/** Training-phase utilization, per GPU and per vCPU (0–100), over all hosts' one-minute samples. */
export interface UtilizationSummary {
  readonly samples: number;
  readonly gpuP50: number;
  readonly gpuP95: number;
  readonly cpuP50?: number;
  readonly cpuP95?: number;
  readonly gpuMemoryP95?: number;
  readonly memoryP95?: number;
  readonly diskP95?: number;
  /** Share of the samples with the GPU below `gpuLowPercent` and the CPU at or above `cpuHighPercent`. */
  readonly cpuBoundShare: number;
}

/** One host's training-phase utilization. */
export interface HostSummary {
  readonly host: string;
  readonly samples: number;
  readonly gpuP95?: number;
  readonly cpuP95?: number;
  readonly gpuMemoryP95?: number;
  readonly memoryP95?: number;
  readonly diskP95?: number;
}

/** The loader's means over the training phase. */
export interface LoaderSummary {
  readonly samplesPerSecondMean?: number;
  readonly dataWaitMean?: number;
}

/** The FSx for Lustre cache's reads over the training phase. */
export interface CacheSummary {
  readonly fileSystemId: string;
  readonly baselineMBps: number;
  readonly readMBpsMean: number;
  readonly readMBpsP95: number;
  /** Mean read throughput ÷ baseline. */
  readonly busyShare: number;
}

/** Seconds in one secondary status. */
export interface PhaseDuration {
  readonly status: string;
  readonly seconds: number;
}

export const DIAGNOSIS_FORMAT = 'cdk-training-io/job-diagnosis@1';

/** The diagnosis of one job: rendered as report.json as it is, and as Markdown. */
export interface Diagnosis {
  readonly format: typeof DIAGNOSIS_FORMAT;
  /** The job as the metric set describes it, without its output path and phases (those have their own fields). */
  readonly job: Omit<JobFacts, 'outputPath' | 'phases'>;
  /** The finding that idled the GPUs most. */
  readonly verdict: Verdict;
  readonly summary: string;
  readonly findings: Finding[];
  /** Seconds in each secondary status, in order. */
  readonly phases: PhaseDuration[];
  readonly utilization?: UtilizationSummary;
  readonly hosts: HostSummary[];
  readonly loader?: LoaderSummary;
  readonly cache?: CacheSummary;
  readonly thresholds: Array<{ readonly name: string; readonly value: number; readonly source: string }>;
}
