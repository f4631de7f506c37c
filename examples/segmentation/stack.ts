import type { StackProps } from 'aws-cdk-lib';
import { Duration, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import {
  InputMode, LoggedStateMachine, RecordLabels, ShardedDataset, TrainingChannel, TrainingCode, TrainingContainer, TrainingInstance,
  TrainingJob,
} from 'cdk-training-io';
import type { Construct } from 'constructs';

/**
 * In your app: `cp node_modules/cdk-training-io/examples/segmentation/{*.ts,*.py} .` and
 * `npm install --save-dev @types/node` (for `__dirname`), as examples/README.md says.
 *
 * This folder's train.py with the library's readers beside it (`shardio/` in the same tarball), on
 * the stock PyTorch image. prepare.py, which runs before the upload, is left out.
 */
export function segmentationCode(): TrainingCode {
  return TrainingCode.fromAsset(__dirname, {
    program: 'train.py',
    includeReaders: true,
    savesCheckpoints: true,
    exclude: ['prepare.py'],
  });
}

/**
 * Pedestrian detection and segmentation on the Penn-Fudan dataset: samples of three parts (an
 * image, its instance mask, its boxes as JSON), which prepare.py writes from the dataset's layout
 * and you upload to `s3://example-raw-images/penn-fudan/prepared/`. `ShardedDataset` packs each
 * sample's parts into one TFRecord record on AWS; train.py reads them back as one sample and trains
 * a small box and mask model on one ml.g5.xlarge.
 */
export class SegmentationStack extends Stack {
  public readonly dataset: ShardedDataset;
  public readonly job: TrainingJob;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const raw = s3.Bucket.fromBucketName(this, 'Raw', 'example-raw-images');
    const instance = TrainingInstance.G5_XLARGE;

    this.dataset = new ShardedDataset(this, 'PennFudan', {
      sourceBucket: raw,
      sourcePrefix: 'penn-fudan/prepared/',
      // <key>.png, <key>.mask.png and <key>.json: one record per sample, a sample without one of them a listed failure.
      parts: ['png', 'mask.png', 'json'],
      // The samples have boxes and masks, not a class folder.
      labels: RecordLabels.NONE,
      cluster: { instance },
    });

    this.job = new TrainingJob(this, 'Train', {
      instance,
      container: TrainingContainer.pytorch(),
      code: segmentationCode(),
      channels: [
        TrainingChannel.fromShards('train', this.dataset, { inputMode: InputMode.FILE }),
        TrainingChannel.fromShardIndex('index', this.dataset),
      ],
      hyperparameters: { epochs: '20', batch_size: '8', image_size: '256' },
      maxRuntime: Duration.hours(2),
    });

    // Traced, its events logged for a year, cdk-nag's finding on X-Ray's unscoped actions acknowledged.
    new LoggedStateMachine(this, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(this.job) });
  }
}
