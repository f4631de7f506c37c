import { App, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { ImagePreprocessingOptions } from '../../lib';
import { ShardedDataset, TrainingInstance, TrainingPipeline } from '../../lib';
import { cpuDecodeSamplesPerSecond } from '../../lib/instances/private/loader-rules';

/** 2 × ml.p3dn.24xlarge whose GPUs consume three times what 11 loader workers decode; the dataset resized or not. */
function build(imagePreprocessing: ImagePreprocessingOptions | undefined): Stack {
  const app = new App();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const raw = new s3.Bucket(stack, 'Raw');
  const dataset = new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/', imagePreprocessing });
  new TrainingPipeline(stack, 'Pipeline', {
    dataset,
    training: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, hyperparameters: { epochs: '3' } },
    datasetProfile: { objectCount: 1_000_000, meanObjectSize: Size.kibibytes(90) },
    samplesPerSecondPerDevice: 3 * cpuDecodeSamplesPerSecond(11),
  });
  return stack;
}

function planReasons(stack: Stack): Record<string, string> {
  const [metadata] = stack.node.root.node.findAll().flatMap((c) => c.node.metadata).filter((m) => m.type === 'cdk-training-io:plan');
  return metadata.data as Record<string, string>;
}

describe('TrainingPipeline: resizing the images at pack time', () => {
  test('over a dataset packed as it is, warns that the GPUs wait on decoding and records the planner\'s advice', () => {
    // WHEN
    const stack = build(undefined);
    // THEN
    Annotations.fromStack(stack).hasWarning('/Stack/Pipeline',
      Match.stringLikeRegexp('loader workers decode fewer JPEGs than the GPUs consume.*give the dataset imagePreprocessing.*resizeImagesAtPackTime'));
    expect(planReasons(stack).imagePreprocessing).toMatch(/^IoPlanner: .*resize at pack time/);
  });

  test('over a dataset its packers resize, plans with the resized decoding rate and does not warn', () => {
    // WHEN
    const stack = build({ shorterSidePixels: 256 });
    // THEN
    Annotations.fromStack(stack).hasNoWarning('/Stack/Pipeline', Match.stringLikeRegexp('resizeImagesAtPackTime'));
    expect(planReasons(stack).imagePreprocessing).toMatch(/^IoPlanner: resized at pack time/);
  });
});
