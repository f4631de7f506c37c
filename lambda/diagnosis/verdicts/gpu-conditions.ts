import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import type { CacheSummary, UtilizationSummary } from '../diagnosis';
import { idleGpuSeconds } from '../job-summary';
import { mbps, pct } from '../report-format';
import type { DiagnosisContext } from '../verdict-rule';

// The conditions and evidence the GPU rules share: each rule states its whole condition with them.

/** The utilization when the GPUs could be judged and ran below `gpuLowPercent` at the 95th percentile. */
export function underusedGpus(context: DiagnosisContext): UtilizationSummary | undefined {
  const u = context.utilization;
  return u && u.gpuP95 < THRESHOLDS.gpuLowPercent ? u : undefined;
}

/** GPU low with the CPU saturated in more than `bottleneckShare` of the minutes (Debugger's CPUBottleneck). */
export function cpuBound(u: UtilizationSummary): boolean {
  return u.cpuBoundShare > THRESHOLDS.bottleneckShare;
}

/** GPU memory and CPU below Debugger's BatchSize thresholds. */
export function batchHeadroom(u: UtilizationSummary): boolean {
  return u.gpuMemoryP95 !== undefined && u.gpuMemoryP95 < THRESHOLDS.gpuMemoryHeadroomPercent
    && u.cpuP95 !== undefined && u.cpuP95 < THRESHOLDS.batchSizeCpuPercent;
}

/** The loop reports its data wait, and waited less than `dataWaitShare`. */
export function rarelyWaitsForData(context: DiagnosisContext): boolean {
  const dataWait = context.loader?.dataWaitMean;
  return dataWait !== undefined && dataWait < THRESHOLDS.dataWaitShare;
}

/** GPU-seconds the training phase left idle. */
export function idleSeconds(context: DiagnosisContext): number {
  return idleGpuSeconds(context.samples, context.set.periodSeconds, context.set.job.gpusPerInstance);
}

/** The GPU, CPU, loader and cache lines of a GPU finding; `below` adds the threshold the GPUs stayed under. */
export function gpuEvidence(context: DiagnosisContext, u: UtilizationSummary, below: boolean): string[] {
  const { job } = context.set;
  const gpuLine = `GPU utilization per GPU: p95 ${pct(u.gpuP95)}, median ${pct(u.gpuP50)} over ${u.samples} host-minutes of training `
    + `(${job.instanceCount} × ${job.instanceType}, ${job.gpusPerInstance} GPU(s) each)`;
  return [
    below ? `${gpuLine}, below ${THRESHOLDS.gpuLowPercent} %` : gpuLine,
    ...cpuLines(u),
    ...waitLines(context.loader?.dataWaitMean),
    ...cacheLines(context.cache),
  ];
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

function cacheLines(cache: CacheSummary | undefined): string[] {
  return cache ? [`FSx ${cache.fileSystemId} read ${mbps(cache.readMBpsMean)} on average (p95 ${mbps(cache.readMBpsP95)}) `
    + `of a ${mbps(cache.baselineMBps)} baseline`] : [];
}
