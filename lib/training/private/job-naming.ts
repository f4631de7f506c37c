import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';

/** SageMaker job names are at most 63 characters; `-<uuid>` takes 37 of them. */
export const MAX_JOB_NAME_PREFIX_LENGTH = 63 - 37;

/** `[a-zA-Z0-9](-*[a-zA-Z0-9])*`: what a SageMaker job name (and so its prefix) may hold. */
export const JOB_NAME_PREFIX_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/;

/** A valid job-name prefix from the construct id: `Train ResNet` → `train-resnet`. */
export function defaultJobNamePrefix(scope: Construct): string {
  const cleaned = scope.node.id.toLowerCase().replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_JOB_NAME_PREFIX_LENGTH).replace(/^-+|-+$/g, '');
  return cleaned || 'training';
}

/**
 * The job name of a task run, computed by Step Functions: `<prefix>-<uuid>`, unique per run, or
 * `<prefix>-<execution name>`, one per execution.
 */
export function renderJobName(prefix: string, fromExecutionName = false): string {
  return sfn.JsonPath.format(`${prefix}-{}`, fromExecutionName ? sfn.JsonPath.executionName : sfn.JsonPath.uuid());
}

/**
 * Checkpoints per execution: a retry of the task inside the same execution (or a spot restart)
 * resumes from them, while a new execution starts clean.
 */
export function checkpointUri(bucket: s3.IBucket, prefix: string): string {
  return sfn.JsonPath.format(`s3://${bucket.bucketName}/${prefix}{}/`, sfn.JsonPath.executionName);
}
