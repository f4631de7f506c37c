import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/** What a user may choose about a bucket the library creates. */
export interface SecureBucketOptions {
  /** SSE-KMS with this key; S3-managed encryption without one. */
  readonly encryptionKey?: kms.IKey;
  /** Server access logs go here, under the bucket's construct path; none without one. */
  readonly accessLogsBucket?: s3.IBucket;
}

/**
 * The library's default bucket: encrypted (KMS when a key is given), SSL only, public access
 * blocked, versioned (old versions expire after 30 days), events sent to EventBridge, incomplete
 * multipart uploads aborted, server access logs when a logs bucket is given, kept when the stack is
 * deleted (it holds data). Versioning and EventBridge are what Control Tower's ct-s3-pr-11 and
 * ct-s3-pr-4 require, and need no choice from the user.
 */
export function createSecureBucket(scope: Construct, id: string, options: SecureBucketOptions = {}): s3.Bucket {
  const { encryptionKey, accessLogsBucket } = options;
  const bucket = new s3.Bucket(scope, id, {
    encryption: encryptionKey ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
    encryptionKey,
    bucketKeyEnabled: encryptionKey !== undefined,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: true,
    serverAccessLogsBucket: accessLogsBucket,
    serverAccessLogsPrefix: accessLogsBucket ? `${scope.node.path}/${id}/` : undefined,
    lifecycleRules: [{
      abortIncompleteMultipartUploadAfter: Duration.days(1),
      // Repacked shards and rewritten checkpoints leave old versions behind: keep them a month, not forever.
      noncurrentVersionExpiration: Duration.days(30),
    }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // Set on the template, not with `eventBridgeEnabled`: that one adds a custom-resource Lambda outside
  // any VPC (which ct-lambda-pr-3 refuses) to do what CloudFormation does natively.
  (bucket.node.defaultChild as s3.CfnBucket).notificationConfiguration = {
    eventBridgeConfiguration: { eventBridgeEnabled: true },
  };
  return bucket;
}
