import { jobEndFinding } from './job-end';
import type { JobFacts, JobMetricSet, MetricSeries } from './metric-set';
import { duration, mbps, pct, round } from './report-format';
import { THRESHOLD_SOURCES, THRESHOLDS } from '../../lib/contract/diagnosis-thresholds';

/** What held the job's GPUs back, or that nothing did. */
export type Verdict =
  /** Input data downloaded for long before training started (File mode). */
  | 'long-download'
  /** GPUs underused while the CPUs were saturated: decoding and augmentation. */
  | 'preprocessing-bound'
  /** GPUs underused, CPUs with room, the loop waiting for data: I/O or too few loader workers. */
  | 'input-bound'
  /** GPUs, CPUs and GPU memory all underused, the loop not waiting for data: batches too small. */
  | 'gpu-memory-headroom'
  /** GPUs underused, the loop not waiting for data, GPU memory or CPU busy: the training step itself. */
  | 'step-bound'
  /** GPUs busy: the data path keeps up. */
  | 'healthy'
  /** Too few GPU samples in the training phase to judge. */
  | 'insufficient-data'
  /** The job failed: its FailureReason, and what the metrics showed before it ended. */
  | 'job-failed'
  /** The job was stopped (by a user, its MaxRuntime or a spot interruption) before it completed. */
  | 'job-stopped';

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
  readonly phases: Array<{ readonly status: string; readonly seconds: number }>;
  readonly utilization?: UtilizationSummary;
  readonly hosts: HostSummary[];
  readonly loader?: { readonly samplesPerSecondMean?: number; readonly dataWaitMean?: number };
  readonly cache?: {
    readonly fileSystemId: string;
    readonly baselineMBps: number;
    readonly readMBpsMean: number;
    readonly readMBpsP95: number;
    /** Mean read throughput ÷ baseline. */
    readonly busyShare: number;
  };
  readonly thresholds: Array<{ readonly name: string; readonly value: number; readonly source: string }>;
}

export const DIAGNOSIS_FORMAT = 'cdk-training-io/job-diagnosis@1';

/** A training-phase sample of one host, normalised per GPU and per vCPU. */
interface Sample {
  readonly gpu: number;
  readonly cpu?: number;
  readonly gpuMemory?: number;
  readonly memory?: number;
  readonly disk?: number;
}

/** The training phase, in epoch milliseconds (infinite ends when the job never reached or left it). */
export interface Window {
  readonly start: number;
  readonly end: number;
}

/**
 * Classifies a job from its metric set with the rules of `thresholds.ts`:
 *
 * 1. Downloading for `longDownloadSeconds`, or for `downloadShare` of download + training → long-download.
 * 2. In the training phase (after `warmupSeconds`), the GPUs' p95 below `gpuLowPercent`, then:
 *    - GPU low and CPU ≥ `cpuHighPercent` in more than `bottleneckShare` of the samples → preprocessing-bound;
 *    - the loop waiting for data less than `dataWaitShare` → gpu-memory-headroom when GPU memory and CPU are
 *      below their BatchSize thresholds, else step-bound;
 *    - otherwise (waiting for data, or no loader metric) → input-bound, with gpu-memory-headroom as a note when
 *      the BatchSize conditions hold too.
 * 3. No finding → healthy; fewer than `minimumSamples` GPU samples → insufficient-data.
 *
 * The verdict is the finding that left the most GPU-seconds idle.
 */
export function diagnoseJob(set: JobMetricSet): Diagnosis {
  const { job } = set;
  const phases = phaseDurations(set);
  const downloading = secondsIn(phases, 'Downloading');
  const training = secondsIn(phases, 'Training');
  const window = trainingWindow(set);
  const { samples, hosts } = trainingSamples(set, window);
  const loader = loaderSummary(set, window);
  const cache = cacheSummary(set, window);
  const gpus = job.gpusPerInstance;

  const findings: Finding[] = [];
  const download = longDownload(set, downloading, training);
  if (download) findings.push(download);

  let utilization: UtilizationSummary | undefined;
  if (gpus === 0) {
    findings.push(insufficientData(`${job.instanceType} has no GPUs: there is no GPU utilization to judge`));
  } else if (samples.length < THRESHOLDS.minimumSamples) {
    findings.push(insufficientData(`${samples.length} one-minute GPU sample(s) in the training phase, fewer than ${THRESHOLDS.minimumSamples}: `
      + 'the job was too short, or CloudWatch has not published its metrics yet'));
  } else {
    utilization = summarize(samples);
    findings.push(...gpuFindings(set, samples, utilization, loader?.dataWaitMean, cache));
  }
  findings.sort((a, b) => b.idleGpuSeconds - a.idleGpuSeconds);
  // A job that did not complete is explained first: how it ended matters more than how it ran.
  const ending = jobEndFinding(set, window, loader?.dataWaitMean);
  if (ending) findings.unshift(ending);
  const primary = findings[0];

  return {
    format: DIAGNOSIS_FORMAT,
    job: {
      name: job.name,
      status: job.status,
      ...(job.failureReason ? { failureReason: job.failureReason } : {}),
      instanceType: job.instanceType,
      instanceCount: job.instanceCount,
      gpusPerInstance: job.gpusPerInstance,
      vcpusPerInstance: job.vcpusPerInstance,
      ...(job.dataLoaderWorkers !== undefined ? { dataLoaderWorkers: job.dataLoaderWorkers } : {}),
    },
    verdict: primary.verdict,
    summary: primary.summary,
    findings,
    phases,
    ...(utilization ? { utilization } : {}),
    hosts,
    ...(loader ? { loader } : {}),
    ...(cache ? { cache } : {}),
    thresholds: Object.entries(THRESHOLDS).map(([name, value]) => ({
      name, value, source: THRESHOLD_SOURCES[name as keyof typeof THRESHOLDS],
    })),
  };
}

function gpuFindings(set: JobMetricSet, samples: Sample[], u: UtilizationSummary, dataWait: number | undefined,
  cache: Diagnosis['cache']): Finding[] {
  const { job } = set;
  const idle = idleGpuSeconds(samples, set.periodSeconds, job.gpusPerInstance);
  const gpuLine = `GPU utilization per GPU: p95 ${pct(u.gpuP95)}, median ${pct(u.gpuP50)} over ${u.samples} host-minutes of training `
    + `(${job.instanceCount} × ${job.instanceType}, ${job.gpusPerInstance} GPU(s) each)`;
  if (u.gpuP95 >= THRESHOLDS.gpuLowPercent) {
    return [{
      verdict: 'healthy',
      summary: `The GPUs were busy (p95 ${pct(u.gpuP95)} per GPU): the data path kept up.`,
      evidence: [gpuLine, ...cpuLines(u), ...waitLines(dataWait), ...cacheLines(cache)],
      advice: ['Nothing to change in the data path. To go faster, scale out (more instances) or up (faster GPUs).'],
      idleGpuSeconds: 0,
    }];
  }
  const evidence = [`${gpuLine}, below ${THRESHOLDS.gpuLowPercent} %`, ...cpuLines(u), ...waitLines(dataWait), ...cacheLines(cache)];
  const headroom = u.gpuMemoryP95 !== undefined && u.gpuMemoryP95 < THRESHOLDS.gpuMemoryHeadroomPercent
    && u.cpuP95 !== undefined && u.cpuP95 < THRESHOLDS.batchSizeCpuPercent;

  if (u.cpuBoundShare > THRESHOLDS.bottleneckShare) {
    return [{
      verdict: 'preprocessing-bound',
      summary: `The CPUs were saturated while the GPUs waited: in ${pct(u.cpuBoundShare * 100)} of the minutes the GPU ran below `
        + `${THRESHOLDS.gpuLowPercent} % with the CPU at ${THRESHOLDS.cpuHighPercent} % or more. Decoding and augmentation are the limit.`,
      evidence,
      advice: [
        'Decode and augment on the GPU with NVIDIA DALI (`TrainingContainer.dali()`, `fn.decoders.image(device="mixed")`): JPEG decoding leaves the CPUs.',
        'Preprocess offline: resize and crop the images once, before or while packing, so each step decodes and transforms less.',
        `Choose a bigger CPU/GPU ratio: ${job.vcpusPerInstance} vCPUs for ${job.gpusPerInstance} GPU(s) is `
          + `${Math.floor(job.vcpusPerInstance / Math.max(job.gpusPerInstance, 1))} per GPU; an instance type with more vCPUs per GPU, `
          + 'or fewer training processes per instance, gives each GPU more decoders.',
      ],
      idleGpuSeconds: idle,
    }];
  }
  if (dataWait !== undefined && dataWait < THRESHOLDS.dataWaitShare) {
    if (headroom) return [headroomFinding(u, evidence, idle)];
    return [{
      verdict: 'step-bound',
      summary: `The GPUs ran below ${THRESHOLDS.gpuLowPercent} % although the training loop rarely waited for data (${pct(dataWait * 100)} of the time): `
        + 'the training step itself is the limit, not the input pipeline.',
      evidence,
      advice: [
        'Profile a few steps (torch.profiler): look for host-device synchronisation such as `.item()`, `.cpu()` or logging on every step.',
        'Use mixed precision (`torch.autocast`) and `torch.compile` to cut the GPU time per sample and the kernel-launch overhead.',
      ],
      idleGpuSeconds: idle,
    }];
  }
  const findings: Finding[] = [{
    verdict: 'input-bound',
    summary: `The GPUs waited for data while the CPUs had room (CPU p95 ${pct(u.cpuP95)}): the input pipeline, I/O or too few `
      + 'data-loader workers, is the limit.',
    evidence,
    advice: inputAdvice(set, cache),
    idleGpuSeconds: idle,
  }];
  if (headroom) {
    // A note, not the verdict: bigger batches need the input pipeline to keep up first.
    const note = headroomFinding(u, [], 0);
    findings.push({ ...note, summary: `${note.summary} Fix the input first.` });
  }
  return findings;
}

function headroomFinding(u: UtilizationSummary, evidence: string[], idle: number): Finding {
  return {
    verdict: 'gpu-memory-headroom',
    summary: `GPU memory stayed below ${THRESHOLDS.gpuMemoryHeadroomPercent} % (p95 ${pct(u.gpuMemoryP95)}) with GPU and CPU underused: `
      + 'the batches are too small to keep the GPUs busy.',
    evidence,
    advice: [
      'Raise the batch size (scaling the learning rate with it) until GPU memory is well used; the data loader then feeds bigger, fewer batches.',
      'Or train on an instance type with fewer or smaller GPUs for the same throughput at a lower price.',
    ],
    idleGpuSeconds: idle,
  };
}

function inputAdvice(set: JobMetricSet, cache: Diagnosis['cache']): string[] {
  const { job } = set;
  const advice: string[] = [];
  if (cache && cache.busyShare >= THRESHOLDS.cacheBusyShare) {
    advice.push(`The FSx for Lustre cache ${cache.fileSystemId} read ${mbps(cache.readMBpsMean)} on average, ${pct(cache.busyShare * 100)} of its `
      + `${mbps(cache.baselineMBps)} baseline: raise its throughput (perUnitStorageThroughput) or its storage capacity.`);
  }
  const perProcess = Math.floor(job.vcpusPerInstance / Math.max(job.gpusPerInstance, 1));
  const sized = Math.max(perProcess - 1, 1);
  if (job.dataLoaderWorkers !== undefined && job.dataLoaderWorkers < sized) {
    advice.push(`Raise the data-loader workers (\`num_workers\` hyperparameter) from ${job.dataLoaderWorkers} to ${sized}: `
      + `${job.vcpusPerInstance} vCPUs for ${job.gpusPerInstance} process(es) leave ${perProcess} per process, one for the training loop.`);
  } else {
    advice.push(`Give the loader more parallel reads: data-loader workers up to vCPUs per process − 1 (${sized} here`
      + `${job.dataLoaderWorkers !== undefined ? `, now ${job.dataLoaderWorkers}` : ''}), and a prefetch depth of 2 or more batches per worker.`);
  }
  advice.push('Pack into more, equal shards (a multiple of instances × GPUs × workers) of 64–128 MB, so every worker streams its own shard.');
  if (!cache) {
    advice.push('Read from an FSx for Lustre cache (LustreDatasetCache), or locally from NVMe in File mode when the data fits, '
      + 'instead of streaming each epoch from S3.');
  } else if (cache.busyShare < THRESHOLDS.cacheBusyShare) {
    advice.push(`The cache had room (${pct(cache.busyShare * 100)} of its baseline): the limit is in the loader, not in FSx.`);
  }
  return advice;
}

function longDownload(set: JobMetricSet, downloading: number, training: number): Finding | undefined {
  if (downloading <= 0) return undefined;
  const share = downloading / (downloading + training);
  if (downloading < THRESHOLDS.longDownloadSeconds && share < THRESHOLDS.downloadShare) return undefined;
  const { job } = set;
  return {
    verdict: 'long-download',
    summary: `The job spent ${duration(downloading)} downloading its input before training (${pct(share * 100)} of download plus training).`,
    evidence: [
      `Downloading: ${duration(downloading)}; Training: ${duration(training)}`,
      `Limits: ${duration(THRESHOLDS.longDownloadSeconds)}, or ${pct(THRESHOLDS.downloadShare * 100)} of download plus training`,
    ],
    advice: [
      'Pack the small files into 64–128 MB shards (ShardedDataset): many small objects download slowest.',
      'Read from an FSx for Lustre cache (LustreDatasetCache): loaded from S3 once, shared by every job, no per-job download.',
      'Stream instead of downloading: FastFile (`InputMode.FAST_FILE`) or Pipe mode (`InputMode.PIPE`).',
    ],
    idleGpuSeconds: downloading * job.instanceCount * job.gpusPerInstance,
  };
}

function insufficientData(reason: string): Finding {
  return {
    verdict: 'insufficient-data',
    summary: `The GPUs could not be judged: ${reason}.`,
    evidence: [],
    advice: ['Diagnose again once the job has run for longer than the warm-up plus a few minutes, or check that its instances report to CloudWatch.'],
    idleGpuSeconds: 0,
  };
}

function cpuLines(u: UtilizationSummary): string[] {
  return [
    ...(u.cpuP95 !== undefined ? [`CPU utilization of all vCPUs: p95 ${pct(u.cpuP95)}, median ${pct(u.cpuP50)}; `
      + `GPU low with CPU ≥ ${THRESHOLDS.cpuHighPercent} % in ${pct(u.cpuBoundShare * 100)} of the samples`] : []),
    ...(u.gpuMemoryP95 !== undefined ? [`GPU memory per GPU: p95 ${pct(u.gpuMemoryP95)}`] : []),
    ...(u.memoryP95 !== undefined ? [`Host memory: p95 ${pct(u.memoryP95)}`] : []),
    ...(u.diskP95 !== undefined ? [`Disk space used: p95 ${pct(u.diskP95)} (DiskUtilization measures space, not I/O)`] : []),
  ];
}

function waitLines(dataWait: number | undefined): string[] {
  return dataWait === undefined ? ['The training code reports no data-wait metric'] : [`The loop waited for data ${pct(dataWait * 100)} of the time`];
}

function cacheLines(cache: Diagnosis['cache']): string[] {
  return cache ? [`FSx ${cache.fileSystemId} read ${mbps(cache.readMBpsMean)} on average (p95 ${mbps(cache.readMBpsP95)}) `
    + `of a ${mbps(cache.baselineMBps)} baseline`] : [];
}

function idleGpuSeconds(samples: Sample[], periodSeconds: number, gpus: number): number {
  return Math.round(samples.reduce((sum, s) => sum + (1 - Math.min(s.gpu, 100) / 100) * periodSeconds * gpus, 0));
}

function summarize(samples: Sample[]): UtilizationSummary {
  const cpuBound = samples.filter((s) => s.gpu < THRESHOLDS.gpuLowPercent && s.cpu !== undefined && s.cpu >= THRESHOLDS.cpuHighPercent).length;
  return {
    samples: samples.length,
    gpuP50: percentileOf(samples, (s) => s.gpu, 0.5)!,
    gpuP95: percentileOf(samples, (s) => s.gpu, 0.95)!,
    ...definedOnly({
      cpuP50: percentileOf(samples, (s) => s.cpu, 0.5),
      cpuP95: percentileOf(samples, (s) => s.cpu, 0.95),
      gpuMemoryP95: percentileOf(samples, (s) => s.gpuMemory, 0.95),
      memoryP95: percentileOf(samples, (s) => s.memory, 0.95),
      diskP95: percentileOf(samples, (s) => s.disk, 0.95),
    }),
    cpuBoundShare: round(cpuBound / samples.length, 3),
  };
}

/** The rounded q-quantile of one measure over the samples that have it; undefined when none has. */
function percentileOf(samples: Sample[], pick: (s: Sample) => number | undefined, q: number): number | undefined {
  const values = samples.map(pick).filter((v): v is number => v !== undefined);
  return values.length ? round(quantile(values, q)) : undefined;
}

function definedOnly<T extends Record<string, number | undefined>>(values: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: number };
}

/** Each host's samples within the training window, after the warm-up unless that leaves too few. */
function trainingSamples(set: JobMetricSet, window: Window): { samples: Sample[]; hosts: HostSummary[] } {
  const { gpusPerInstance: gpus, vcpusPerInstance: vcpus } = set.job;
  const all: Sample[] = [];
  const hosts: HostSummary[] = [];
  for (const host of set.hosts) {
    if (!host.gpuUtilization || gpus === 0) {
      hosts.push({ host: host.host, samples: 0 });
      continue;
    }
    const cpu = byTime(host.cpuUtilization);
    const gpuMemory = byTime(host.gpuMemoryUtilization);
    const memory = byTime(host.memoryUtilization);
    const disk = byTime(host.diskUtilization);
    const points = afterWarmup(pointsIn(host.gpuUtilization, window), window);
    const samples: Sample[] = points.map(([t, gpu]) => ({
      gpu: gpu / gpus,
      cpu: scaled(cpu.get(t), vcpus),
      gpuMemory: scaled(gpuMemory.get(t), gpus),
      memory: memory.get(t),
      disk: disk.get(t),
    }));
    all.push(...samples);
    hosts.push({
      host: host.host,
      samples: samples.length,
      ...definedOnly({
        gpuP95: percentileOf(samples, (s) => s.gpu, 0.95),
        cpuP95: percentileOf(samples, (s) => s.cpu, 0.95),
        gpuMemoryP95: percentileOf(samples, (s) => s.gpuMemory, 0.95),
        memoryP95: percentileOf(samples, (s) => s.memory, 0.95),
        diskP95: percentileOf(samples, (s) => s.disk, 0.95),
      }),
    });
  }
  return { samples: all, hosts };
}

function scaled(value: number | undefined, divisor: number): number | undefined {
  return value === undefined ? undefined : value / divisor;
}

function loaderSummary(set: JobMetricSet, window: Window): Diagnosis['loader'] {
  if (!set.loader) return undefined;
  const mean = (series: MetricSeries | undefined) => {
    const values = series ? afterWarmup(pointsIn(series, window), window).map(([, v]) => v) : [];
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
  };
  const samplesPerSecond = mean(set.loader.samplesPerSecond);
  const dataWait = mean(set.loader.dataWaitFraction);
  if (samplesPerSecond === undefined && dataWait === undefined) return undefined;
  return {
    ...(samplesPerSecond !== undefined ? { samplesPerSecondMean: round(samplesPerSecond) } : {}),
    ...(dataWait !== undefined ? { dataWaitMean: round(dataWait, 3) } : {}),
  };
}

function cacheSummary(set: JobMetricSet, window: Window): Diagnosis['cache'] {
  const cache = set.cache;
  if (!cache?.dataReadBytes) return undefined;
  const mbpsValues = pointsIn(cache.dataReadBytes, window).map(([, bytes]) => bytes / set.periodSeconds / 1e6);
  if (mbpsValues.length === 0) return undefined;
  const mean = mbpsValues.reduce((a, b) => a + b, 0) / mbpsValues.length;
  return {
    fileSystemId: cache.fileSystemId,
    baselineMBps: cache.baselineMBps,
    readMBpsMean: round(mean),
    readMBpsP95: round(quantile(mbpsValues, 0.95)),
    busyShare: round(mean / cache.baselineMBps, 3),
  };
}

/** Durations of the secondary statuses; an open status ends where the next one starts. */
function phaseDurations(set: JobMetricSet): Diagnosis['phases'] {
  const phases = set.job.phases;
  return phases.map((phase, i) => {
    const end = phase.end ?? phases[i + 1]?.start;
    const seconds = end === undefined ? 0 : Math.max(0, (Date.parse(end) - Date.parse(phase.start)) / 1000);
    return { status: phase.status, seconds: Math.round(seconds) };
  });
}

function secondsIn(phases: Diagnosis['phases'], status: string): number {
  return phases.filter((p) => p.status === status).reduce((sum, p) => sum + p.seconds, 0);
}

/** The Training phase; all time when the job has none (a metric set without phases). */
function trainingWindow(set: JobMetricSet): Window {
  const phases = set.job.phases;
  const index = phases.findIndex((p) => p.status === 'Training');
  if (index < 0) return { start: Number.NEGATIVE_INFINITY, end: Number.POSITIVE_INFINITY };
  const phase = phases[index];
  const end = phase.end ?? phases[index + 1]?.start;
  return { start: Date.parse(phase.start), end: end === undefined ? Number.POSITIVE_INFINITY : Date.parse(end) };
}

export function pointsIn(series: MetricSeries, window: Window): Array<[number, number]> {
  const points: Array<[number, number]> = [];
  series.timestamps.forEach((t, i) => {
    const time = Date.parse(t);
    if (time >= window.start && time <= window.end) points.push([time, series.values[i]]);
  });
  return points.sort((a, b) => a[0] - b[0]);
}

/** Skips the warm-up at the start of training, unless fewer than the minimum samples would be left. */
function afterWarmup(points: Array<[number, number]>, window: Window): Array<[number, number]> {
  const start = Number.isFinite(window.start) ? window.start : points[0]?.[0];
  if (start === undefined) return points;
  const warm = points.filter(([t]) => t >= start + THRESHOLDS.warmupSeconds * 1000);
  return warm.length >= THRESHOLDS.minimumSamples ? warm : points;
}

function byTime(series: MetricSeries | undefined): Map<number, number> {
  const map = new Map<number, number>();
  series?.timestamps.forEach((t, i) => map.set(Date.parse(t), series.values[i]));
  return map;
}

/** The q-quantile with linear interpolation between the closest ranks (NumPy's default, as Debugger computes it). */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}
