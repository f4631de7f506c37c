import { THRESHOLD_SOURCES, THRESHOLDS } from '../../lib/contract/diagnosis-thresholds';
import type { Diagnosis, Finding } from './diagnosis';
import { DIAGNOSIS_FORMAT } from './diagnosis';
import { cacheSummary, loaderSummary, phaseDurations, summarize, trainingSamples, trainingWindow } from './job-summary';
import type { JobMetricSet } from './metric-set';
import type { DiagnosisContext } from './verdict-rule';
import { VERDICT_RULES } from './verdict-table';

/**
 * Classifies a job from its metric set with the rules of `verdict-table.ts` and the thresholds of
 * lib/contract/diagnosis-thresholds.ts:
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
 * The verdict is the finding that left the most GPU-seconds idle, except that a failed or stopped
 * job's ending leads.
 */
export function diagnoseJob(set: JobMetricSet): Diagnosis {
  const { job } = set;
  const window = trainingWindow(set);
  const { samples, hosts } = trainingSamples(set, window);
  const judged = job.gpusPerInstance > 0 && samples.length >= THRESHOLDS.minimumSamples;
  const context: DiagnosisContext = {
    set,
    window,
    phases: phaseDurations(set),
    samples,
    utilization: judged ? summarize(samples) : undefined,
    loader: loaderSummary(set, window),
    cache: cacheSummary(set, window),
  };

  const leading: Finding[] = [];
  const findings: Finding[] = [];
  for (const rule of VERDICT_RULES) {
    const finding = rule.check(context);
    if (finding) (rule.leads ? leading : findings).push(finding);
  }
  findings.sort((a, b) => b.idleGpuSeconds - a.idleGpuSeconds);
  findings.unshift(...leading);
  const primary = findings[0];
  const { utilization, loader, cache } = context;

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
    phases: context.phases,
    ...(utilization ? { utilization } : {}),
    hosts,
    ...(loader ? { loader } : {}),
    ...(cache ? { cache } : {}),
    thresholds: Object.entries(THRESHOLDS).map(([name, value]) => ({
      name, value, source: THRESHOLD_SOURCES[name as keyof typeof THRESHOLDS],
    })),
  };
}
