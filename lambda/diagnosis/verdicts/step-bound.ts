import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import { pct } from '../report-format';
import type { VerdictRule } from '../verdict-rule';
import { batchHeadroom, cpuBound, gpuEvidence, idleSeconds, rarelyWaitsForData, underusedGpus } from './gpu-conditions';

/** GPUs underused, the loop rarely waiting for data, GPU memory or CPU busy: the training step itself is the limit. */
export const stepBound: VerdictRule = {
  verdicts: ['step-bound'],
  check(context) {
    const u = underusedGpus(context);
    if (!u || cpuBound(u) || !rarelyWaitsForData(context) || batchHeadroom(u)) return undefined;
    return {
      verdict: 'step-bound',
      summary: `The GPUs ran below ${THRESHOLDS.gpuLowPercent} % although the training loop rarely waited for data `
        + `(${pct(context.loader!.dataWaitMean! * 100)} of the time): the training step itself is the limit, not the input pipeline.`,
      evidence: gpuEvidence(context, u, true),
      advice: [
        'Profile a few steps (torch.profiler): look for host-device synchronisation such as `.item()`, `.cpu()` or logging on every step.',
        'Use mixed precision (`torch.autocast`) and `torch.compile` to cut the GPU time per sample and the kernel-launch overhead.',
      ],
      idleGpuSeconds: idleSeconds(context),
    };
  },
};
