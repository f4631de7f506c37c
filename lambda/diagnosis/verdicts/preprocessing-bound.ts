import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import { pct } from '../report-format';
import type { VerdictRule } from '../verdict-rule';
import { cpuBound, gpuEvidence, idleSeconds, underusedGpus } from './gpu-conditions';
import { RESIZE_AT_PACK_TIME } from './resize-advice';

/** GPUs underused with the CPUs saturated in more than `bottleneckShare` of the minutes: decoding and augmentation. */
export const preprocessingBound: VerdictRule = {
  verdicts: ['preprocessing-bound'],
  check(context) {
    const u = underusedGpus(context);
    if (!u || !cpuBound(u)) return undefined;
    const { job } = context.set;
    return {
      verdict: 'preprocessing-bound',
      summary: `The CPUs were saturated while the GPUs waited: in ${pct(u.cpuBoundShare * 100)} of the minutes the GPU ran below `
        + `${THRESHOLDS.gpuLowPercent} % with the CPU at ${THRESHOLDS.cpuHighPercent} % or more. Decoding and augmentation are the limit.`,
      evidence: gpuEvidence(context, u, true),
      advice: [
        'Decode and augment on the GPU with NVIDIA DALI (`TrainingContainer.dali()`, `fn.decoders.image(device="mixed")`): JPEG decoding leaves the CPUs.',
        `${RESIZE_AT_PACK_TIME}, e.g. to a shorter side of 256 pixels for 224-pixel crops: each step decodes fewer pixels; `
          + 'one core decoded 1.7× more ImageNet JPEGs per second resized than as they came (727 → 1,260).',
        `Choose a bigger CPU/GPU ratio: ${job.vcpusPerInstance} vCPUs for ${job.gpusPerInstance} GPU(s) is `
          + `${Math.floor(job.vcpusPerInstance / Math.max(job.gpusPerInstance, 1))} per GPU; an instance type with more vCPUs per GPU, `
          + 'or fewer training processes per instance, gives each GPU more decoders.',
      ],
      idleGpuSeconds: idleSeconds(context),
    };
  },
};
