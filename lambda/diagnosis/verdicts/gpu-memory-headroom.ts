import { THRESHOLDS } from '../../../lib/contract/diagnosis-thresholds';
import { pct } from '../report-format';
import type { VerdictRule } from '../verdict-rule';
import { batchHeadroom, cpuBound, gpuEvidence, idleSeconds, rarelyWaitsForData, underusedGpus } from './gpu-conditions';

/**
 * GPUs, CPUs and GPU memory all underused: the batches are too small. The verdict when the loop
 * rarely waits for data; a note beside input-bound otherwise, since bigger batches need the input
 * pipeline to keep up first.
 */
export const gpuMemoryHeadroom: VerdictRule = {
  verdicts: ['gpu-memory-headroom'],
  check(context) {
    const u = underusedGpus(context);
    if (!u || cpuBound(u) || !batchHeadroom(u)) return undefined;
    const summary = `GPU memory stayed below ${THRESHOLDS.gpuMemoryHeadroomPercent} % (p95 ${pct(u.gpuMemoryP95)}) with GPU and CPU underused: `
      + 'the batches are too small to keep the GPUs busy.';
    const verdict = rarelyWaitsForData(context);
    return {
      verdict: 'gpu-memory-headroom',
      summary: verdict ? summary : `${summary} Fix the input first.`,
      evidence: verdict ? gpuEvidence(context, u, true) : [],
      advice: [
        'Raise the batch size (scaling the learning rate with it) until GPU memory is well used; the data loader then feeds bigger, fewer batches.',
        'Or train on an instance type with fewer or smaller GPUs for the same throughput at a lower price.',
      ],
      idleGpuSeconds: verdict ? idleSeconds(context) : 0,
    };
  },
};
