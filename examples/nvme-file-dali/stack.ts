import type { StackProps} from 'aws-cdk-lib';
import { Size, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import {
  InputMode, LoggedStateMachine, S3DataDistribution, ShardedDataset, TrainingChannel, TrainingContainer, TrainingInstance, TrainingJob,
} from 'cdk-training-io';
import type { Construct } from 'constructs';

/**
 * File mode onto local NVMe, with JPEG decoding on the GPU (NVIDIA DALI), on 2 × ml.p4d.24xlarge.
 *
 * The shards were packed beforehand (`npx training-io pack ... --format tfrecord`, uploaded to
 * `s3://example-datasets/imagenet/packed/`). Each instance downloads its half of them to its
 * 8 TB of NVMe before training starts, then DALI decodes on the GPUs, which keeps 96 vCPUs from
 * being the bottleneck of 8 A100s.
 */
export class NvmeDaliStack extends Stack {
  public readonly job: TrainingJob;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const datasets = s3.Bucket.fromBucketName(this, 'Datasets', 'example-datasets');
    // The dataset `training-io pack` published there: its current version, read through its manifests.
    const packed = ShardedDataset.fromAttributes(this, 'Packed', { destinationBucket: datasets, destinationPrefix: 'imagenet/packed/' });

    this.job = new TrainingJob(this, 'Train', {
      instance: TrainingInstance.P4D_24XLARGE,
      instanceCount: 2,
      container: TrainingContainer.dali(),              // the PyTorch DLC + DALI, built by `cdk deploy`
      channels: [
        TrainingChannel.fromShards('train', packed, {
          inputMode: InputMode.FILE,
          distribution: S3DataDistribution.SHARDED_BY_S3_KEY,
          datasetSize: Size.gibibytes(150),             // checked against the NVMe at synth
        }),
        // DALI's TFRecord reader needs every shard's index (and the version's manifest, which lists them).
        TrainingChannel.fromShardIndex('index', packed),
      ],
      hyperparameters: { epochs: '90', loader: 'dali' },
    });

    // Traced, its events logged for a year, cdk-nag's finding on X-Ray's unscoped actions acknowledged.
    new LoggedStateMachine(this, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(this.job) });
  }
}
