import { Annotations, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { consumersOf } from '../../instances/private/cluster-rules';
import type { TrainingCluster } from '../../instances/training-cluster';
import type { ShardedDataset } from '../../sharding/sharded-dataset';

/**
 * The dataset's shard count is a multiple of its consumers; the job's readers (instances ×
 * processes × loader workers) get equal shares only when they divide that count. Warns when the
 * cluster the dataset was packed for and the job's cluster disagree so.
 */
export function checkDatasetConsumers(scope: Construct, dataset: ShardedDataset, job: TrainingCluster): void {
  const { instanceCount = 1, processesPerInstance, loaderWorkers } = job;
  const known = [dataset.consumers, instanceCount, processesPerInstance, loaderWorkers];
  if (known.some((value) => value === undefined || Token.isUnresolved(value))) return;
  const readers = consumersOf(instanceCount, processesPerInstance!, loaderWorkers!);
  if (dataset.consumers % readers === 0) return;
  Annotations.of(scope).addWarningV2('cdk-training-io:datasetConsumersMismatch',
    `the dataset's shard count is a multiple of its ${dataset.consumers} consumers, but the job reads with ${readers} `
    + `(${instanceCount} instances × ${processesPerInstance} processes × ${loaderWorkers} loader workers): the shards split unevenly `
    + 'and some readers idle; give the ShardedDataset the job\'s cluster (cluster: { instance, instanceCount, processesPerInstance, loaderWorkers })');
}
