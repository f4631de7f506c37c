import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import type { VerdictRule } from '../verdict-rule';

/** No GPUs, or fewer than `minimumSamples` GPU samples in the training phase: nothing to judge. */
export const insufficientData: VerdictRule = {
  verdicts: ['insufficient-data'],
  check(context) {
    const { job } = context.set;
    let reason: string;
    if (job.gpusPerInstance === 0) {
      reason = `${job.instanceType} has no GPUs: there is no GPU utilization to judge`;
    } else if (context.samples.length < THRESHOLDS.minimumSamples) {
      reason = `${context.samples.length} one-minute GPU sample(s) in the training phase, fewer than ${THRESHOLDS.minimumSamples}: `
        + 'the job was too short, or CloudWatch has not published its metrics yet';
    } else {
      return undefined;
    }
    return {
      verdict: 'insufficient-data',
      summary: `The GPUs could not be judged: ${reason}.`,
      evidence: [],
      advice: ['Diagnose again once the job has run for longer than the warm-up plus a few minutes, or check that its instances report to CloudWatch.'],
      idleGpuSeconds: 0,
    };
  },
};
