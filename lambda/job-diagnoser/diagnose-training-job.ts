import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import type { S3RetryOptions } from '../io/s3-retry';
import { collectJobMetrics } from '../diagnosis/collect-metrics';
import type { JobDiagnoserResult } from './contract';
import type { Diagnosis } from '../diagnosis/diagnosis';
import { diagnoseJob } from '../diagnosis/diagnose-job';
import type { DiagnoserSettings} from './diagnoser-settings';
import { parseDiagnoserEvent } from './diagnoser-settings';
import { announce, writeReport } from './publish-report';

/** The AWS clients the diagnosis talks to. */
export interface DiagnoserClients {
  readonly sagemaker: SageMakerClient;
  readonly cloudwatch: CloudWatchClient;
  readonly s3: S3Client;
  readonly events: EventBridgeClient;
}

/**
 * The handler's work: read the job and its metrics, classify, write metrics.json, report.json and
 * report.md beside the job's output, emit the `Training Job Diagnosed` event.
 */
export async function diagnoseTrainingJob(event: unknown, clients: DiagnoserClients, settings: DiagnoserSettings,
  options: { readonly retry?: S3RetryOptions; readonly now?: () => Date } = {}): Promise<{ result: JobDiagnoserResult; diagnosis: Diagnosis }> {
  const { trainingJobName } = parseDiagnoserEvent(event);
  const set = await collectJobMetrics({
    sagemaker: clients.sagemaker,
    cloudwatch: clients.cloudwatch,
    jobName: trainingJobName,
    hardwareOf: () => settings.hardware,
    loaderMetrics: settings.loaderMetrics,
    cache: settings.cache,
    now: options.now,
  });
  const diagnosis = diagnoseJob(set);
  const result = await writeReport(clients.s3, set, diagnosis, options.retry);
  await announce(clients.events, settings.eventBusName, { ...result, instanceType: set.job.instanceType, instanceCount: set.job.instanceCount });
  return { result, diagnosis };
}
