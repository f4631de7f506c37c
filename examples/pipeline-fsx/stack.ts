import type { StackProps } from 'aws-cdk-lib';
import { CfnOutput, Size, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  ReadRate, ShardedDataset, TrainingContainer, TrainingInstance, TrainingPipeline,
} from 'cdk-training-io';
import type { Construct } from 'constructs';

/**
 * The whole flow over an S3 prefix, in one state machine: pack the small files into shards, import
 * them into an FSx for Lustre cache, train on 2 × ml.p3dn.24xlarge in File mode from the cache, and
 * diagnose whether the GPUs were fed. Start it with `npx training-io launch --state-machine <arn>`.
 */
export class PipelineStack extends Stack {
  public readonly pipeline: TrainingPipeline;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const data = s3.Bucket.fromBucketName(this, 'Data', 'example-datasets');

    const cluster = { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 };
    const dataset = new ShardedDataset(this, 'ImageNet', {
      sourceBucket: data,
      sourcePrefix: 'imagenet/raw/',
      destinationBucket: data,
      destinationPrefix: 'imagenet/packed/',
      cluster,                                           // shard count: a multiple of 2 × 8 GPUs × 11 loader workers
    });

    this.pipeline = new TrainingPipeline(this, 'Pipeline', {
      dataset,
      training: {
        ...cluster,
        container: TrainingContainer.pytorch(),          // runs the library's reference train.py
        hyperparameters: { epochs: '90' },
      },
      datasetCache: {
        datasetSize: Size.gibibytes(150),
        // 2 × 8 V100 at about 1000 images/s each, JPEGs of about 110 KiB: 1.8 GB/s.
        readRate: ReadRate.forTraining({ ...cluster, samplesPerSecondPerDevice: 1000, sampleSize: Size.kibibytes(110) }),
      },
    });

    new CfnOutput(this, 'StateMachineArn', { value: this.pipeline.stateMachine.stateMachineArn });
  }
}
