import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';

/**
 * What the packing handlers call on the objects of a prefix, no more: GetObject (and HeadObject,
 * which it covers), PutObject (whole and multipart, conditional or not) and AbortMultipartUpload
 * when they write, and DeleteObject of the current object: not `s3:DeleteObject*`, which includes
 * DeleteObjectVersion, deleting a version of a versioned bucket for good.
 */
const OBJECT_ACTIONS = {
  read: ['s3:GetObject'],
  readWrite: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:DeleteObject'],
} as const;

/**
 * Access of a packing handler to one prefix of a bucket: the objects under it, ListBucket on the
 * bucket, and the bucket's key for decryption (read) or both ways (readWrite) when it has one.
 * ListBucket carries no `s3:prefix` condition: S3 answers a GET or HEAD of a missing key 404 only to
 * a caller that may list the bucket, and the condition key is absent from those requests, so a
 * conditioned grant turns every "not found" (no manifest yet, no claim, no result) into 403
 * AccessDenied, which the engine must not read as absent.
 */
export function grantPrefixAccess(bucket: s3.IBucket, grantee: iam.IGrantable, prefix: string, access: keyof typeof OBJECT_ACTIONS): iam.Grant {
  if (access === 'read') bucket.encryptionKey?.grantDecrypt(grantee);
  else bucket.encryptionKey?.grantEncryptDecrypt(grantee);
  const objects = iam.Grant.addToPrincipal({ grantee, actions: [...OBJECT_ACTIONS[access]], resourceArns: [bucket.arnForObjects(`${prefix}*`)] });
  const listing = iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [bucket.bucketArn] });
  return objects.combine(listing);
}
