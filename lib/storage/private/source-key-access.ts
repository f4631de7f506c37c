import { Annotations, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';

/**
 * FSx reads a linked bucket as the service-linked role `AWSServiceRoleForFSxS3Access_<fs-id>`;
 * objects under SSE-KMS need that role in the key policy (FSx for Lustre guide, "Working with
 * server-side encrypted Amazon S3 buckets"). The role is matched by `aws:PrincipalArn` rather
 * than named as the principal because KMS rejects a policy whose principal does not exist yet,
 * and FSx creates the role only with the file system.
 *
 * @param fileSystemId the file system, or undefined when the key also encrypts the file system
 * (naming it in the key policy would make the key and the file system depend on each other):
 * then every FSx role of the account may decrypt, still only through S3
 * @returns whether the statement could be added (not to an imported key)
 */
export function allowFsxToDecrypt(scope: Construct, key: kms.IKey, fileSystemId: string | undefined): boolean {
  const { partition, account, region, urlSuffix } = Stack.of(scope);
  const role = `arn:${partition}:iam::${account}:role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/` +
    `AWSServiceRoleForFSxS3Access_${fileSystemId ?? 'fs-*'}`;
  const { statementAdded } = key.addToResourcePolicy(new iam.PolicyStatement({
    sid: `FSxReads${sidSuffix(scope)}`,
    principals: [new iam.AnyPrincipal()],
    actions: ['kms:Decrypt', 'kms:DescribeKey'],
    resources: ['*'],
    conditions: {
      ArnLike: { 'aws:PrincipalArn': role },
      // No encryption-context condition on the bucket ARN: the bucket refers to the key, so the key
      // policy cannot refer to the bucket. The role is the file system's own and reads only its links.
      StringEquals: { 'kms:CallerAccount': account, 'kms:ViaService': `s3.${region}.${urlSuffix}` },
    },
  }));
  if (!statementAdded) {
    Annotations.of(scope).addWarningV2('cdk-training-io:sourceKeyNotGranted',
      'the source bucket\'s KMS key is not managed by this stack, so its policy cannot let FSx decrypt the objects: add a ' +
      'statement that allows kms:Decrypt to the role aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/' +
      'AWSServiceRoleForFSxS3Access_<file system id> through S3 (kms:ViaService s3.<region>.amazonaws.com), or imports fail');
  }
  return statementAdded;
}

/** A statement id unique to the cache, so two caches of one bucket add two statements. */
function sidSuffix(scope: Construct): string {
  return scope.node.addr.slice(0, 12);
}
