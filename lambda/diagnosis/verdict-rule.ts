import type { CacheSummary, Finding, LoaderSummary, PhaseDuration, UtilizationSummary, Verdict } from './diagnosis';
import type { Sample } from './job-summary';
import type { JobMetricSet } from './metric-set';
import type { Window } from './series';

/** What every rule judges by: the metric set and the summaries of its training phase. */
export interface DiagnosisContext {
  readonly set: JobMetricSet;
  /** The Training phase. */
  readonly window: Window;
  readonly phases: PhaseDuration[];
  /** Every host's training-phase samples after the warm-up. */
  readonly samples: Sample[];
  /** Undefined when the GPUs cannot be judged (no GPUs, too few samples). */
  readonly utilization?: UtilizationSummary;
  readonly loader?: LoaderSummary;
  readonly cache?: CacheSummary;
}

/** One rule of the diagnosis (a file of `verdicts/`, listed in `verdict-table.ts`). */
export interface VerdictRule {
  /** The verdicts the rule gives. */
  readonly verdicts: readonly Verdict[];
  /** The rule's finding leads the report whatever its idle GPU time: how a job ended matters more than how it ran. */
  readonly leads?: boolean;
  /** The finding, or undefined when the rule does not apply. */
  check(context: DiagnosisContext): Finding | undefined;
}
