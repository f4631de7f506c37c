import * as iam from 'aws-cdk-lib/aws-iam';
import type { IShardedDataset } from '../sharded-dataset';

/** What aws-cdk-lib's `Bucket.grantRead` allows, on the bucket and the keys given. */
const READ_ACTIONS = ['s3:GetObject*', 's3:GetBucket*', 's3:List*'];

/**
 * Read access to a packed dataset, as a training job or a reader needs it: its shards, its index
 * files and its manifest, nothing else of the bucket's objects (not the plan's working files);
 * and decryption with the bucket's key when it has one.
 */
export function grantDatasetRead(dataset: IShardedDataset, grantee: iam.IGrantable): iam.Grant {
  const bucket = dataset.destinationBucket;
  bucket.encryptionKey?.grantDecrypt(grantee);
  return iam.Grant.addToPrincipalOrResource({
    grantee,
    actions: READ_ACTIONS,
    resourceArns: [
      bucket.bucketArn,
      bucket.arnForObjects(`${dataset.shardsPrefix}*`),
      bucket.arnForObjects(`${dataset.indexPrefix}*`),
      bucket.arnForObjects(dataset.manifestKey),
    ],
    resource: bucket,
  });
}
