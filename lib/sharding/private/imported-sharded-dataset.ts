import type * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { grantDatasetRead } from './dataset-read-grant';
import type { IShardedDataset } from '../sharded-dataset';

/** Where the objects of a dataset packed elsewhere are: what an IShardedDataset says of itself. */
export type ImportedDatasetKeys = Omit<IShardedDataset, 'grantRead'>;

/**
 * A dataset packed outside this app (the `training-io pack` CLI, another stack), for
 * `ShardedDataset.fromAttributes`: a construct at `id` (ids stay unique, as for any import) holding
 * the keys as given, which IShardedDataset alone describes, and the read grant on them.
 */
export function importShardedDataset(scope: Construct, id: string, keys: ImportedDatasetKeys): IShardedDataset {
  const dataset: IShardedDataset = Object.assign(new Construct(scope, id), keys, {
    grantRead: (grantee: iam.IGrantable): iam.Grant => grantDatasetRead(dataset, grantee),
  });
  return dataset;
}
