import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** How long the library's log groups keep their events unless told otherwise: a year, as Control Tower's ct-cloudwatch-pr-2 requires. */
export const DEFAULT_LOG_RETENTION = logs.RetentionDays.ONE_YEAR;

/** What a user may choose about a log group the library creates. */
export interface LogGroupOptions {
  /** @default DEFAULT_LOG_RETENTION */
  readonly retention?: logs.RetentionDays;
  /** Encrypts the events at rest; CloudWatch Logs' own encryption without one. */
  readonly encryptionKey?: kms.IKey;
}

/**
 * A log group of the library: kept a year by default, encrypted with the key when given. A key of
 * this app gets the key-policy statement CloudWatch Logs needs to use it for this account's log
 * groups; an imported key's policy must allow `logs.<region>.amazonaws.com` already.
 */
export function createLogGroup(scope: Construct, id: string, options: LogGroupOptions = {}): logs.LogGroup {
  const { encryptionKey } = options;
  if (encryptionKey) allowLogsToUse(encryptionKey, scope);
  return new logs.LogGroup(scope, id, { retention: options.retention ?? DEFAULT_LOG_RETENTION, encryptionKey });
}

/** @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html */
function allowLogsToUse(key: kms.IKey, scope: Construct): void {
  const stack = Stack.of(scope);
  // Identical statements are merged when the key policy is rendered: one per key, however many groups use it.
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
    actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
    resources: ['*'],
    conditions: {
      ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:*` },
    },
  }));
}
