import { gpuMemoryHeadroom } from './verdicts/gpu-memory-headroom';
import { healthy } from './verdicts/healthy';
import { inputBound } from './verdicts/input-bound';
import { insufficientData } from './verdicts/insufficient-data';
import { jobEnded } from './verdicts/job-ended';
import { longDownload } from './verdicts/long-download';
import { preprocessingBound } from './verdicts/preprocessing-bound';
import { stepBound } from './verdicts/step-bound';
import type { VerdictRule } from './verdict-rule';

/**
 * The rules of the diagnosis, one file of `verdicts/` each, in the order their findings are listed
 * when they idled the GPUs equally long. Every verdict has exactly one rule (a test checks it).
 */
export const VERDICT_RULES: readonly VerdictRule[] = [
  jobEnded,
  longDownload,
  insufficientData,
  healthy,
  preprocessingBound,
  stepBound,
  inputBound,
  gpuMemoryHeadroom,
];
