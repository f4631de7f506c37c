import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import type { Finding } from '../diagnosis';
import type { JobMetricSet } from '../metric-set';
import { duration, pct } from '../report-format';
import type { Window } from '../series';
import { pointsIn } from '../series';
import type { VerdictRule } from '../verdict-rule';

const ENDINGS = {
  Failed: 'job-failed',
  Stopped: 'job-stopped',
} as const;

/**
 * How a job that did not complete ended, and what its metrics showed before it did: memory at its
 * limit, the minute the GPUs went idle, the loop's data wait.
 */
export const jobEnded: VerdictRule = {
  verdicts: Object.values(ENDINGS),
  leads: true,
  check: (context) => jobEndFinding(context.set, context.window, context.loader?.dataWaitMean),
};

function jobEndFinding(set: JobMetricSet, window: Window, dataWaitMean: number | undefined): Finding | undefined {
  const { job } = set;
  const verdict = ENDINGS[job.status as keyof typeof ENDINGS];
  if (!verdict) return undefined;
  const reason = job.failureReason ?? (verdict === 'job-failed' ? 'SageMaker gave no FailureReason' : 'no reason given');
  const evidence: string[] = [];
  const advice: string[] = [];

  const memory = memoryAtEnd(set);
  if (memory && memory.percent >= THRESHOLDS.memoryLimitPercent) {
    evidence.push(`Host memory reached ${pct(memory.percent)} on ${memory.host} in the last ${duration(THRESHOLDS.endWindowSeconds)} before the end`);
    advice.push('The container ran out of memory: each data-loader worker is a process with its own copy of the dataset object and '
      + 'its prefetched batches. Lower `num_workers` or the prefetch depth, or choose an instance type with more memory per GPU.');
  } else if (memory) {
    evidence.push(`Host memory peaked at ${pct(memory.percent)} (${memory.host}) in the last ${duration(THRESHOLDS.endWindowSeconds)}: not at its limit`);
  }

  const idle = gpusIdleSince(set, window);
  const idleBeforeEnd = idle && (idle.sinceMinute === undefined || idle.idleSeconds >= 2 * set.periodSeconds);
  if (idle && !idleBeforeEnd) {
    evidence.push(`The GPUs were busy (${THRESHOLDS.gpuLowPercent} % or more) until the end`);
  } else if (idle) {
    evidence.push(idle.sinceMinute === undefined
      ? `The GPUs never reached ${THRESHOLDS.gpuLowPercent} % in the ${duration(idle.trainingSeconds)} of training`
      : `The GPUs ran below ${THRESHOLDS.gpuLowPercent} % from minute ${idle.sinceMinute} of training, ${duration(idle.idleSeconds)} before the end`);
    if (verdict === 'job-failed') {
      advice.push('The GPUs stopped being fed before the end: look in the job\'s logs (CloudWatch `/aws/sagemaker/TrainingJobs`, '
        + 'stream `<job>/algo-<n>`) for a data loader that died or hung (a worker killed, a shard that could not be read).');
    }
  }
  if (dataWaitMean !== undefined) evidence.push(`The loop waited for data ${pct(dataWaitMean * 100)} of the time before the end`);

  if (verdict === 'job-stopped') {
    advice.push('A job stops when someone calls StopTrainingJob, when it reaches its MaxRuntimeInSeconds, or when its spot '
      + 'capacity is reclaimed past MaxWaitTimeInSeconds: with checkpoints (CheckpointConfig) a new job resumes where it stopped.');
  } else if (advice.length === 0) {
    advice.push('Read the FailureReason and the end of the job\'s logs (CloudWatch `/aws/sagemaker/TrainingJobs`): the metrics show no '
      + 'memory or input problem before it failed.');
  }
  return {
    verdict,
    summary: `The job ${job.status === 'Failed' ? 'failed' : 'was stopped'}: ${reason}.`,
    evidence: [`${job.status}: ${reason}`, ...evidence],
    advice,
    idleGpuSeconds: 0,
  };
}

/** The highest MemoryUtilization of any host in the last minutes of its series. */
function memoryAtEnd(set: JobMetricSet): { host: string; percent: number } | undefined {
  let peak: { host: string; percent: number } | undefined;
  for (const host of set.hosts) {
    const series = host.memoryUtilization;
    if (!series || series.timestamps.length === 0) continue;
    const end = Math.max(...series.timestamps.map((t) => Date.parse(t)));
    const recent = pointsIn(series, { start: end - THRESHOLDS.endWindowSeconds * 1000, end });
    for (const [, value] of recent) {
      if (!peak || value > peak.percent) peak = { host: host.host.replace(/^.*\//, ''), percent: value };
    }
  }
  return peak;
}

/** The last training minute any GPU (per-GPU average of a host) was busy, and how long before the end that was. */
function gpusIdleSince(set: JobMetricSet, window: Window):
{ sinceMinute?: number; idleSeconds: number; trainingSeconds: number } | undefined {
  const gpus = set.job.gpusPerInstance;
  if (gpus === 0) return undefined;
  const points = set.hosts.flatMap((host) => (host.gpuUtilization ? pointsIn(host.gpuUtilization, window) : []));
  if (points.length === 0) return undefined;
  const start = Number.isFinite(window.start) ? window.start : Math.min(...points.map(([t]) => t));
  const end = Math.max(...points.map(([t]) => t));
  const busy = points.filter(([, value]) => value / gpus >= THRESHOLDS.gpuLowPercent).map(([t]) => t);
  const trainingSeconds = (end - start) / 1000;
  if (busy.length === 0) return { idleSeconds: trainingSeconds, trainingSeconds };
  const lastBusy = Math.max(...busy);
  // The first idle minute is the one after the last busy one.
  return { sinceMinute: Math.round((lastBusy - start) / 60_000) + 1, idleSeconds: (end - lastBusy) / 1000, trainingSeconds };
}
