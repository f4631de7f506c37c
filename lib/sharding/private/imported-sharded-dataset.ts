import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { grantDatasetRead } from './dataset-read-grant';
import type { IShardedDataset } from '../sharded-dataset';

/** Where the objects of a dataset packed elsewhere are: what an IShardedDataset says of itself. */
export type ImportedDatasetKeys = Omit<IShardedDataset, 'grantRead'>;

/** A dataset packed outside this app (the `training-io pack` CLI, another stack): `ShardedDataset.fromAttributes`. */
export class ImportedShardedDataset extends Construct implements IShardedDataset {
  public readonly destinationBucket: s3.IBucket;
  public readonly destinationPrefix: string;
  public readonly shardsPrefix: string;
  public readonly indexPrefix: string;
  public readonly manifestKey: string;
  public readonly shardsManifestKey: string;
  public readonly indexManifestKey: string;

  constructor(scope: Construct, id: string, keys: ImportedDatasetKeys) {
    super(scope, id);
    this.destinationBucket = keys.destinationBucket;
    this.destinationPrefix = keys.destinationPrefix;
    this.shardsPrefix = keys.shardsPrefix;
    this.indexPrefix = keys.indexPrefix;
    this.manifestKey = keys.manifestKey;
    this.shardsManifestKey = keys.shardsManifestKey;
    this.indexManifestKey = keys.indexManifestKey;
  }

  public grantRead(grantee: iam.IGrantable): iam.Grant {
    return grantDatasetRead(this, grantee);
  }
}
