import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/**
 * The library's default bucket: encrypted (KMS when a key is given), SSL only, public access
 * blocked, incomplete multipart uploads aborted, kept when the stack is deleted (it holds data).
 */
export function createSecureBucket(scope: Construct, id: string, encryptionKey?: kms.IKey): s3.Bucket {
  return new s3.Bucket(scope, id, {
    encryption: encryptionKey ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
    encryptionKey,
    bucketKeyEnabled: encryptionKey !== undefined,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
}
