import type { Verdict } from '../diagnosis/diagnosis';
import { DIAGNOSER_ENV } from '../../lib/contract/handler-environment';

/** The diagnoser's event: the job the state machine's train step ran. */
export interface JobDiagnoserEvent {
  readonly trainingJobName: string;
}

/** Fields of {@link JobDiagnoserEvent}: the state machine passes exactly these. */
export const JOB_DIAGNOSER_EVENT_FIELDS = ['trainingJobName'] as const satisfies ReadonlyArray<keyof JobDiagnoserEvent>;

/** What the diagnoser returns; the state machine keeps it at `$.diagnosis`. */
export interface JobDiagnoserResult {
  readonly trainingJobName: string;
  readonly verdict: Verdict;
  readonly summary: string;
  /** `s3://…/<job>/diagnosis/report.json` */
  readonly reportUri: string;
  /** `s3://…/<job>/diagnosis/report.md` */
  readonly markdownUri: string;
  /** `s3://…/<job>/diagnosis/metrics.json`: the metric set, for `training-io diagnose --metrics`. */
  readonly metricsUri: string;
}

/** The EventBridge event each diagnosis emits. */
export const DIAGNOSIS_EVENT = {
  source: 'cdk-training-io',
  detailType: 'Training Job Diagnosed',
} as const;

/** The event's `detail`: the result, plus the job's instances. */
export interface DiagnosisEventDetail extends JobDiagnoserResult {
  readonly instanceType: string;
  readonly instanceCount: number;
}

/** Environment variables the diagnoser reads, as a list. */
export const JOB_DIAGNOSER_ENVIRONMENT = Object.values(DIAGNOSER_ENV);
