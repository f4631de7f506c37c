import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import type { CacheSummary } from '../diagnosis';
import type { JobMetricSet } from '../metric-set';
import { mbps, pct } from '../report-format';
import type { VerdictRule } from '../verdict-rule';
import { cpuBound, gpuEvidence, idleSeconds, rarelyWaitsForData, underusedGpus } from './gpu-conditions';
import { RESIZE_AT_PACK_TIME } from './resize-advice';

/** GPUs underused, CPUs with room, the loop waiting for data (or not reporting it): I/O or too few loader workers. */
export const inputBound: VerdictRule = {
  verdicts: ['input-bound'],
  check(context) {
    const u = underusedGpus(context);
    if (!u || cpuBound(u) || rarelyWaitsForData(context)) return undefined;
    return {
      verdict: 'input-bound',
      summary: `The GPUs waited for data while the CPUs had room (CPU p95 ${pct(u.cpuP95)}): the input pipeline, I/O or too few `
        + 'data-loader workers, is the limit.',
      evidence: gpuEvidence(context, u, true),
      advice: inputAdvice(context.set, context.cache),
      idleGpuSeconds: idleSeconds(context),
    };
  },
};

function inputAdvice(set: JobMetricSet, cache: CacheSummary | undefined): string[] {
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
  advice.push(`${RESIZE_AT_PACK_TIME}: images of the size the model trains on are a fraction of the bytes to read and decode each epoch.`);
  if (!cache) {
    advice.push('Read from an FSx for Lustre cache (LustreDatasetCache), or locally from NVMe in File mode when the data fits, '
      + 'instead of streaming each epoch from S3.');
  } else if (cache.busyShare < THRESHOLDS.cacheBusyShare) {
    advice.push(`The cache had room (${pct(cache.busyShare * 100)} of its baseline): the limit is in the loader, not in FSx.`);
  }
  return advice;
}
