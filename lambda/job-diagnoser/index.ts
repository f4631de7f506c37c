import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { engineS3Client } from '../io/s3-client';
import type { JobDiagnoserEvent, JobDiagnoserResult } from './contract';
import { readDiagnoserSettings } from './diagnoser-settings';
import { diagnoseTrainingJob } from './diagnose-training-job';

const logger = new Logger();
const metrics = new Metrics();
const clients = {
  sagemaker: new SageMakerClient({}),
  cloudwatch: new CloudWatchClient({}),
  // The report is written through the engine's S3Sink, which retries itself.
  s3: engineS3Client(),
  events: new EventBridgeClient({}),
};
const settings = readDiagnoserSettings(process.env);

/** Diagnoses one training job: its metrics → a verdict, a report beside its output, an EventBridge event. */
export async function handler(event: JobDiagnoserEvent): Promise<JobDiagnoserResult> {
  try {
    const { result, diagnosis } = await diagnoseTrainingJob(event, clients, settings);
    metrics.addMetric('JobsDiagnosed', MetricUnit.Count, 1);
    if (diagnosis.utilization) metrics.addMetric('GpuUtilizationP95', MetricUnit.Percent, diagnosis.utilization.gpuP95);
    logger.info('diagnosed', { ...result, findings: diagnosis.findings.map((f) => f.verdict) });
    return result;
  } finally {
    metrics.publishStoredMetrics();
  }
}
