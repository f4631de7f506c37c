import type { StackProps} from 'aws-cdk-lib';
import { Size, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import {
  InputMode, LoggedStateMachine, S3DataDistribution, ShardedDataset, ShardFormat, TrainingChannel, TrainingContainer, TrainingInstance, TrainingJob,
} from 'cdk-training-io';
import type { Construct } from 'constructs';

/**
 * Small files → shards → Pipe mode on 4 × ml.g4dn.12xlarge.
 *
 * Millions of small JPEGs (one folder per class) are packed on AWS into 64 MiB TFRecord shards,
 * then streamed in Pipe mode: ShardedByS3Key gives each instance a quarter of the shards and
 * ShuffleConfig reorders them every epoch. Run `dataset.stateMachine` when the raw data changes,
 * then the training state machine as often as needed.
 */
export class ShardsToPipeStack extends Stack {
  public readonly dataset: ShardedDataset;
  public readonly job: TrainingJob;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const raw = s3.Bucket.fromBucketName(this, 'Raw', 'example-raw-images');

    const instanceCount = 4;
    const instance = TrainingInstance.G4DN_12XLARGE;     // 48 vCPUs, 4 × T4, 900 GB NVMe
    this.dataset = new ShardedDataset(this, 'ImageNet', {
      sourceBucket: raw,
      sourcePrefix: 'imagenet/train/',
      format: ShardFormat.TFRECORD,
      targetShardSize: Size.mebibytes(64),
      // Every reader (instances × GPU processes × sized loader workers) gets the same number of shards.
      cluster: { instance, instanceCount },
      seed: 42,
    });

    this.job = new TrainingJob(this, 'Train', {
      instance,
      instanceCount,
      container: TrainingContainer.pytorch(),           // runs the library's reference train.py
      channels: [
        TrainingChannel.fromShards('train', this.dataset, {
          inputMode: InputMode.PIPE,
          distribution: S3DataDistribution.SHARDED_BY_S3_KEY,
          shuffleSeed: 42,
        }),
        // The index files, on every instance: records are split evenly whatever the shard count.
        TrainingChannel.fromBucket('index', this.dataset.destinationBucket, this.dataset.indexPrefix, { inputMode: InputMode.FILE }),
      ],
      hyperparameters: { epochs: '10' },
    });

    // Traced, its events logged for a year, cdk-nag's finding on X-Ray's unscoped actions acknowledged.
    new LoggedStateMachine(this, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(this.job) });
  }
}
