import { App, Lazy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { packingSettingsOfFlags } from '../../bin/cli/pack';
import { readPlanSettings } from '../../lambda/handler-kit/dataset-settings';
import { SHARD_PLANNER_ENVIRONMENT } from '../../lambda/shard-planner/contract';
import { fromEnvironment } from '../../lib/contract/packing-settings';
import type { ShardedDatasetProps } from '../../lib';
import { RecordLabels, ShardedDataset } from '../../lib';

/** The stack, its template and each handler's environment variables, of a ShardedDataset over `raw/` of a source bucket named `raw-bucket`. */
function synth(extra: Partial<ShardedDatasetProps>) {
  const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const source = s3.Bucket.fromBucketName(stack, 'Raw', 'raw-bucket');
  new ShardedDataset(stack, 'Packing', { sourceBucket: source, sourcePrefix: 'raw/', ...extra });
  const template = Template.fromStack(stack);
  const variables = (service: string): Record<string, string> => (Object.values(template.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: service } } },
  })) as any[])[0].Properties.Environment.Variables;
  return { planner: variables('shard-planner'), packer: variables('shard-packer') };
}

describe('ShardedDataset labelFile', () => {
  test('renders LABEL_FILE on the planner; the handlers decode it to what the CLI decodes from --label-file', () => {
    // WHEN
    const { planner, packer } = synth({ labelFile: { key: 'raw/meta/labels.csv' }, seed: 3 });

    // THEN: labels 'file' follows from the label file; the packers check images, as with folder labels
    expect(SHARD_PLANNER_ENVIRONMENT).toContain('LABEL_FILE');
    expect(planner).toMatchObject({ RECORD_LABELS: 'file', LABEL_FILE: 's3://raw-bucket/raw/meta/labels.csv' });
    expect(packer).toMatchObject({ RECORD_CONTENT: 'images' });
    expect(packer.LABEL_FILE).toBeUndefined();
    const fromConstruct = fromEnvironment({ ...planner, ...packer });
    expect(fromConstruct).toEqual(packingSettingsOfFlags({ 'label-file': 's3://raw-bucket/raw/meta/labels.csv', 'seed': '3' }, true));
    expect(readPlanSettings(planner)).toMatchObject({ labels: 'file', labelFile: 's3://raw-bucket/raw/meta/labels.csv' });
  });

  test('grants the planner s3:GetObject on the label file alone, in the bucket given, and decryption with that bucket\'s key', () => {
    // GIVEN
    const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
    const labelKey = new kms.Key(stack, 'LabelKey');
    const labels = new s3.Bucket(stack, 'Labels', { encryption: s3.BucketEncryption.KMS, encryptionKey: labelKey });

    // WHEN
    new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), labelFile: { bucket: labels, key: 'train.jsonl' } });

    // THEN
    const template = Template.fromStack(stack);
    const statements = (Object.values(template.findResources('AWS::IAM::Policy')) as any[]).flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    const reads = statements.filter((statement) => JSON.stringify(statement.Resource).includes(stack.getLogicalId(labels.node.defaultChild as s3.CfnBucket)));
    expect(reads).toEqual([{ Effect: 'Allow', Action: 's3:GetObject', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^Labels/), 'Arn'] }, '/train.jsonl']] } }]);
    const decrypts = statements.filter((statement) => JSON.stringify(statement.Resource).includes(stack.getLogicalId(labelKey.node.defaultChild as kms.CfnKey)));
    expect(decrypts).toEqual([expect.objectContaining({ Action: 'kms:Decrypt' })]);
  });

  test.each<[string, Partial<ShardedDatasetProps>, RegExp]>([
    ['a key of another format', { labelFile: { key: 'raw/labels.txt' } }, /InvalidLabelFile.*labelFile "raw\/labels.txt" must end in '.csv' or '.jsonl'/],
    ['labels FILE without a file', { labels: RecordLabels.FILE }, /LabelFileMissing.*labels 'file' takes the labels from a label file: give labelFile/],
    ['a file with folder labels', { labels: RecordLabels.FOLDER, labelFile: { key: 'labels.csv' } }, /LabelFileWithOtherLabels.*labelFile is read with labels 'file' only/],
  ])('%s fails at synth time naming the prop, the value and what is allowed', (_, props, message) => {
    expect(() => synth(props)).toThrow(message);
  });

  test('a key that is a token is not checked at synth time, and reaches the planner', () => {
    // WHEN
    const { planner } = synth({ labelFile: { key: Lazy.string({ produce: () => 'labels.csv' }) } });

    // THEN
    expect(planner.LABEL_FILE).toBe('s3://raw-bucket/labels.csv');
  });
});
