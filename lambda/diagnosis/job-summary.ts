import { THRESHOLDS } from '../../lib/contract/diagnosis-thresholds';
import type { CacheSummary, HostSummary, LoaderSummary, PhaseDuration, UtilizationSummary } from './diagnosis';
import type { JobMetricSet, MetricSeries } from './metric-set';
import { round } from './report-format';
import type { Window } from './series';
import { afterWarmup, byTime, definedOnly, percentileOf, pointsIn, quantile } from './series';

/** A training-phase sample of one host, normalised per GPU and per vCPU. */
export interface Sample {
  readonly gpu: number;
  readonly cpu?: number;
  readonly gpuMemory?: number;
  readonly memory?: number;
  readonly disk?: number;
}

/** Durations of the secondary statuses; an open status ends where the next one starts. */
export function phaseDurations(set: JobMetricSet): PhaseDuration[] {
  const phases = set.job.phases;
  return phases.map((phase, i) => {
    const end = phase.end ?? phases[i + 1]?.start;
    const seconds = end === undefined ? 0 : Math.max(0, (Date.parse(end) - Date.parse(phase.start)) / 1000);
    return { status: phase.status, seconds: Math.round(seconds) };
  });
}

/** Seconds spent in one secondary status. */
export function secondsIn(phases: PhaseDuration[], status: string): number {
  return phases.filter((p) => p.status === status).reduce((sum, p) => sum + p.seconds, 0);
}

/** The Training phase; all time when the job has none (a metric set without phases). */
export function trainingWindow(set: JobMetricSet): Window {
  const phases = set.job.phases;
  const index = phases.findIndex((p) => p.status === 'Training');
  if (index < 0) return { start: Number.NEGATIVE_INFINITY, end: Number.POSITIVE_INFINITY };
  const phase = phases[index];
  const end = phase.end ?? phases[index + 1]?.start;
  return { start: Date.parse(phase.start), end: end === undefined ? Number.POSITIVE_INFINITY : Date.parse(end) };
}

/** Each host's samples within the training window, after the warm-up unless that leaves too few. */
export function trainingSamples(set: JobMetricSet, window: Window): { samples: Sample[]; hosts: HostSummary[] } {
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
      ...definedOnly({ gpuP95: percentileOf(samples, (s) => s.gpu, 0.95) }),
      ...hostMeasuresP95(samples),
    });
  }
  return { samples: all, hosts };
}

/** Percentiles over all hosts' samples, and the share of CPU-bound minutes. */
export function summarize(samples: Sample[]): UtilizationSummary {
  const cpuBound = samples.filter((s) => s.gpu < THRESHOLDS.gpuLowPercent && s.cpu !== undefined && s.cpu >= THRESHOLDS.cpuHighPercent).length;
  return {
    samples: samples.length,
    gpuP50: percentileOf(samples, (s) => s.gpu, 0.5)!,
    gpuP95: percentileOf(samples, (s) => s.gpu, 0.95)!,
    ...definedOnly({ cpuP50: percentileOf(samples, (s) => s.cpu, 0.5) }),
    ...hostMeasuresP95(samples),
    cpuBoundShare: round(cpuBound / samples.length, 3),
  };
}

/** GPU-seconds the samples left idle. */
export function idleGpuSeconds(samples: Sample[], periodSeconds: number, gpus: number): number {
  return Math.round(samples.reduce((sum, s) => sum + (1 - Math.min(s.gpu, 100) / 100) * periodSeconds * gpus, 0));
}

/** The loader's means after the warm-up, when the code reports any. */
export function loaderSummary(set: JobMetricSet, window: Window): LoaderSummary | undefined {
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

/** The cache's read throughput against its baseline, when there is a cache with reads. */
export function cacheSummary(set: JobMetricSet, window: Window): CacheSummary | undefined {
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

/** The 95th percentiles of CPU, GPU memory, host memory and disk, those the samples have. */
function hostMeasuresP95(samples: Sample[]): { cpuP95?: number; gpuMemoryP95?: number; memoryP95?: number; diskP95?: number } {
  return definedOnly({
    cpuP95: percentileOf(samples, (s) => s.cpu, 0.95),
    gpuMemoryP95: percentileOf(samples, (s) => s.gpuMemory, 0.95),
    memoryP95: percentileOf(samples, (s) => s.memory, 0.95),
    diskP95: percentileOf(samples, (s) => s.disk, 0.95),
  });
}

function scaled(value: number | undefined, divisor: number): number | undefined {
  return value === undefined ? undefined : value / divisor;
}
