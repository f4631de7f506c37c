import * as iam from 'aws-cdk-lib/aws-iam';
import { DATASET_LAYOUT } from '../../contract/dataset-layout';
import type { IShardedDataset } from '../sharded-dataset';

/** What aws-cdk-lib's `Bucket.grantRead` allows, on the bucket and the keys given. */
const READ_ACTIONS = ['s3:GetObject*', 's3:GetBucket*', 's3:List*'];

/**
 * Read access to a packed dataset, as a training job or a reader needs it: its versions (shards,
 * index files, member lists and manifests), their claims, and the current version's manifest and
 * channel manifests; nothing else of the bucket's objects (not the plan's working files); and
 * decryption with the bucket's key when it has one.
 */
export function grantDatasetRead(dataset: IShardedDataset, grantee: iam.IGrantable): iam.Grant {
  const bucket = dataset.destinationBucket;
  bucket.encryptionKey?.grantDecrypt(grantee);
  return iam.Grant.addToPrincipalOrResource({
    grantee,
    actions: READ_ACTIONS,
    resourceArns: [
      bucket.bucketArn,
      bucket.arnForObjects(`${dataset.destinationPrefix}${DATASET_LAYOUT.versions}*`),
      bucket.arnForObjects(`${dataset.destinationPrefix}${DATASET_LAYOUT.published}*`),
      bucket.arnForObjects(dataset.manifestKey),
      bucket.arnForObjects(dataset.shardsManifestKey),
      bucket.arnForObjects(dataset.indexManifestKey),
    ],
    resource: bucket,
  });
}
