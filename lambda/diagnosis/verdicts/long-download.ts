import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import { secondsIn } from '../job-summary';
import { duration, pct } from '../report-format';
import type { VerdictRule } from '../verdict-rule';

/** Downloading for `longDownloadSeconds`, or for `downloadShare` of download plus training (Debugger's MaxInitializationTime). */
export const longDownload: VerdictRule = {
  verdicts: ['long-download'],
  check(context) {
    const downloading = secondsIn(context.phases, 'Downloading');
    if (downloading <= 0) return undefined;
    const training = secondsIn(context.phases, 'Training');
    const share = downloading / (downloading + training);
    if (downloading < THRESHOLDS.longDownloadSeconds && share < THRESHOLDS.downloadShare) return undefined;
    const { job } = context.set;
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
  },
};
