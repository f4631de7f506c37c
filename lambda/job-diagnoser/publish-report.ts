import type { EventBridgeClient} from '@aws-sdk/client-eventbridge';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Uri } from '../io/s3-uri';
import type { S3RetryOptions } from '../io/s3-retry';
import { S3Sink } from '../io/s3-sink';
import type { DiagnosisEventDetail, JobDiagnoserResult } from './contract';
import { DIAGNOSIS_EVENT } from './contract';
import type { Diagnosis } from '../diagnosis/diagnosis';
import type { JobMetricSet } from '../diagnosis/metric-set';
import { renderMarkdown } from '../diagnosis/render-report';

/** Folder of the report beside the job's output: `<S3OutputPath><job name>/diagnosis/`. */
export const REPORT_FOLDER = 'diagnosis/';

/** A report that cannot be written or announced. */
export class ReportPublishError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportPublishError';
  }
}

/** `s3://bucket/out/` and job `j` → bucket and `out/j/diagnosis/`, where SageMaker put `out/j/output/model.tar.gz`. */
export function reportLocation(outputPath: string, jobName: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(outputPath);
  if (!match) {
    throw new ReportPublishError(`training job ${jobName} has S3OutputPath '${outputPath}', not an s3:// URI: cannot place its report`);
  }
  const prefix = match[2] === '' || match[2].endsWith('/') ? match[2] : `${match[2]}/`;
  return { bucket: match[1], prefix: `${prefix}${jobName}/${REPORT_FOLDER}` };
}

/** Writes metrics.json, report.json and report.md beside the job's output; the Markdown last, as the one people open. */
export async function writeReport(client: S3Client, set: JobMetricSet, diagnosis: Diagnosis, retry?: S3RetryOptions): Promise<JobDiagnoserResult> {
  if (!set.job.outputPath) throw new ReportPublishError(`training job ${set.job.name} has no S3OutputPath: cannot place its report`);
  const { bucket, prefix } = reportLocation(set.job.outputPath, set.job.name);
  const sink = new S3Sink({ client, bucket, prefix, retry });
  await sink.put('metrics.json', Buffer.from(`${JSON.stringify(set, null, 1)}\n`));
  await sink.put('report.json', Buffer.from(`${JSON.stringify(diagnosis, null, 2)}\n`));
  await sink.put('report.md', Buffer.from(renderMarkdown(diagnosis)));
  return {
    trainingJobName: set.job.name,
    verdict: diagnosis.verdict,
    summary: diagnosis.summary,
    reportUri: s3Uri(bucket, `${prefix}report.json`),
    markdownUri: s3Uri(bucket, `${prefix}report.md`),
    metricsUri: s3Uri(bucket, `${prefix}metrics.json`),
  };
}

/** Emits the `Training Job Diagnosed` event; fails when EventBridge did not take it. */
export async function announce(client: EventBridgeClient, eventBusName: string, detail: DiagnosisEventDetail): Promise<void> {
  const answer = await client.send(new PutEventsCommand({
    Entries: [{
      EventBusName: eventBusName,
      Source: DIAGNOSIS_EVENT.source,
      DetailType: DIAGNOSIS_EVENT.detailType,
      Detail: JSON.stringify(detail),
    }],
  }));
  const failed = answer.Entries?.find((entry) => entry.ErrorCode);
  if ((answer.FailedEntryCount ?? 0) > 0 || failed) {
    throw new ReportPublishError(`EventBridge did not take the diagnosis event of ${detail.trainingJobName}: `
      + `${failed?.ErrorCode ?? 'unknown error'} ${failed?.ErrorMessage ?? ''}`.trim());
  }
}
