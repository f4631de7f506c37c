import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { readRecordContent } from '../../lambda/handler-kit/dataset-settings';
import type { ShardedDatasetProps } from '../../lib';
import { RecordContent, RecordLabels, ShardedDataset } from '../../lib';

function packerVariables(extra: Partial<ShardedDatasetProps>): Record<string, string> {
  const app = new App();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), sourcePrefix: 'raw/', ...extra });
  const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: 'shard-packer' } } },
  })) as Array<{ Properties: { Environment: { Variables: Record<string, string> } } }>;
  expect(functions).toHaveLength(1);
  return functions[0].Properties.Environment.Variables;
}

describe('ShardedDataset recordContent', () => {
  test.each<[string, Partial<ShardedDatasetProps>, string]>([
    ['folder labels (the default): images', {}, 'images'],
    ['no labels: any', { labels: RecordLabels.NONE }, 'any'],
    ['images asked for without labels', { labels: RecordLabels.NONE, recordContent: RecordContent.IMAGES }, 'images'],
    ['any asked for with folder labels', { recordContent: RecordContent.ANY }, 'any'],
  ])('%s: the packer gets RECORD_CONTENT as its handler reads it', (_what, props, expected) => {
    // WHEN
    const variables = packerVariables(props);
    // THEN
    expect(variables.RECORD_CONTENT).toBe(expected);
    expect(readRecordContent(variables)).toBe(expected);
  });

  test('ANY with imagePreprocessing is a coded error naming both props', () => {
    expect(() => packerVariables({ recordContent: RecordContent.ANY, imagePreprocessing: { shorterSidePixels: 256 } }))
      .toThrow(/recordContent is RecordContent.ANY \(files packed as they are\), and imagePreprocessing decodes every file as an image/);
  });
});
