import type { StackProps } from 'aws-cdk-lib';
import { Duration, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import {
  InputMode, LoggedStateMachine, ShardedDataset, TrainingChannel, TrainingCode, TrainingContainer, TrainingInstance, TrainingJob,
} from 'cdk-training-io';
import type { Construct } from 'constructs';

/**
 * In your app: `cp node_modules/cdk-training-io/examples/custom-model/{*.ts,train.py} .` and
 * `npm install --save-dev @types/node` (for `__dirname`), as examples/README.md says.
 *
 * This folder's train.py with the library's readers beside it (`shardio/` in the same tarball):
 * the job runs it on the stock PyTorch image, no image of your own. The metric lines the readers
 * print (samples/s, data_wait, loss) are published by default, and the checkpoints are resumed.
 */
export function customModelCode(): TrainingCode {
  return TrainingCode.fromAsset(__dirname, {
    program: 'train.py',
    includeReaders: true,
    savesCheckpoints: true,
    // The CDK app beside the script (node_modules, cdk.out, *.ts, cdk.json, package.json ...) is left out by default.
  });
}

/**
 * A model of your own (a Vision Transformer, see train.py) on shards packed beforehand
 * (`npx training-io pack ... --format tfrecord`, uploaded to `s3://example-datasets/imagenet/packed/`),
 * on one ml.g5.2xlarge with spot capacity: FastFile mode streams the shards from S3 as they are
 * read, and a spot interruption resumes at the record it reached.
 */
export class CustomModelStack extends Stack {
  public readonly job: TrainingJob;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const datasets = s3.Bucket.fromBucketName(this, 'Datasets', 'example-datasets');
    const packed = ShardedDataset.fromAttributes(this, 'Packed', { destinationBucket: datasets, destinationPrefix: 'imagenet/packed/' });

    this.job = new TrainingJob(this, 'Train', {
      instance: TrainingInstance.G5_2XLARGE,
      container: TrainingContainer.pytorch(),
      code: customModelCode(),
      channels: [
        TrainingChannel.fromShards('train', packed, { inputMode: InputMode.FAST_FILE }),
        TrainingChannel.fromShardIndex('index', packed),
      ],
      hyperparameters: { epochs: '30', batch_size: '256', image_size: '64' },
      useSpotInstances: true,
      maxRuntime: Duration.hours(24),
    });

    // Traced, its events logged for a year, cdk-nag's finding on X-Ray's unscoped actions acknowledged.
    new LoggedStateMachine(this, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(this.job) });
  }
}
