import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import { pct } from '../report-format';
import type { VerdictRule } from '../verdict-rule';
import { gpuEvidence } from './gpu-conditions';

/** The GPUs' p95 at or above `gpuLowPercent`: the data path kept up. */
export const healthy: VerdictRule = {
  verdicts: ['healthy'],
  check(context) {
    const u = context.utilization;
    if (!u || u.gpuP95 < THRESHOLDS.gpuLowPercent) return undefined;
    return {
      verdict: 'healthy',
      summary: `The GPUs were busy (p95 ${pct(u.gpuP95)} per GPU): the data path kept up.`,
      evidence: gpuEvidence(context, u, false),
      advice: ['Nothing to change in the data path. To go faster, scale out (more instances) or up (faster GPUs).'],
      idleGpuSeconds: 0,
    };
  },
};
