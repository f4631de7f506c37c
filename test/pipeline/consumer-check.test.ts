import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { TrainingCluster } from '../../lib';
import { ShardedDataset, TrainingInstance, TrainingPipeline } from '../../lib';

/** A pipeline on ml.g4dn.12xlarge (4 GPUs, 48 vCPUs: 11 loader workers per process when sized). */
function pipeline(datasetCluster: TrainingCluster | undefined, training: { instanceCount?: number; loaderWorkers?: number }): Stack {
  const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const raw = new s3.Bucket(stack, 'Raw');
  const dataset = new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/', cluster: datasetCluster });
  new TrainingPipeline(stack, 'Pipeline', { dataset, training: { instance: TrainingInstance.G4DN_12XLARGE, ...training } });
  return stack;
}

describe('TrainingPipeline: the dataset\'s consumers and the job\'s readers', () => {
  test('a dataset packed for the job\'s cluster gives no warning', () => {
    // GIVEN / WHEN
    const stack = pipeline({ instance: TrainingInstance.G4DN_12XLARGE, instanceCount: 2 }, { instanceCount: 2 });
    // THEN
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('datasetConsumersMismatch'));
  });

  test('a dataset packed for a multiple of the job\'s readers gives no warning', () => {
    // GIVEN: 2 × 4 × 11 = 88 consumers; the job reads with 1 × 4 × 11 = 44
    const stack = pipeline({ instance: TrainingInstance.G4DN_12XLARGE, instanceCount: 2 }, { instanceCount: 1 });
    // THEN
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('datasetConsumersMismatch'));
  });

  test.each<[string, TrainingCluster | undefined, { instanceCount?: number; loaderWorkers?: number }, number, number]>([
    ['a dataset packed without a cluster', undefined, { instanceCount: 2 }, 1, 88],
    ['more instances than the dataset was packed for', { instance: TrainingInstance.G4DN_12XLARGE }, { instanceCount: 2 }, 44, 88],
    ['other loader workers', { instance: TrainingInstance.G4DN_12XLARGE }, { loaderWorkers: 4 }, 44, 16],
  ])('%s gives a warning naming both counts', (_what, datasetCluster, training, consumers, readers) => {
    // GIVEN / WHEN
    const stack = pipeline(datasetCluster, training);
    // THEN
    Annotations.fromStack(stack).hasWarning('/Stack/Pipeline', Match.stringLikeRegexp(
      `multiple of its ${consumers} consumers, but the job reads with ${readers} .*give the ShardedDataset the job's cluster.*cdk-training-io:datasetConsumersMismatch`));
  });
});
