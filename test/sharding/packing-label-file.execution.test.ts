import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { S3Sink } from '../../lambda/io/s3-sink';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { verifyDataset } from '../../lambda/packing/verify';
import { ShardedDataset } from '../../lib';
import { sizedJpeg } from '../support/jpeg-dataset';
import { recordLabels } from '../support/record-labels';
import { runCli } from '../support/run-cli';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from '../support/s3-server';
import { StateMachineRunner } from '../support/state-machine-runner';

/*
 * Labels from a label file in S3: the ShardedDataset state machine executed (its planner reads
 * LABEL_FILE), and the CLI reading `--label-file s3://…`, against one local S3 server.
 */

const SAMPLES = 12;
// An execution runs every handler bundle in turn: on a busy 2-core machine the first takes over a minute, hence 180 s per execution test.
/** Every sample but the last is labelled; one row names a sample that is not in the bucket. */
const LABEL_ROWS = [
  'key,label',
  ...Array.from({ length: SAMPLES - 1 }, (_, i) => `train/${String(i).padStart(3, '0')}.jpg,${['heron', 'egret', '"ibis, sacred"'][i % 3]}`),
  'train/999,heron',
  '',
].join('\n');
const EXPECTED_LABELS = { 'egret': 0, 'heron': 1, 'ibis, sacred': 2 };

/** A CLI run's variables: saved and restored around the suite. */
const AWS_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE'];
const savedEnvironment: Record<string, string | undefined> = {};
let server: S3TestServer;
let client: S3Client;
let sourceBucket: string;
let datasetBucket: string;

beforeAll(async () => {
  server = await startS3Server();
  client = s3TestClient(server);
  sourceBucket = await createTestBucket(client, 'labels-source');
  datasetBucket = await createTestBucket(client, 'labels-dataset');
  const objects: Record<string, Buffer> = {};
  for (let i = 0; i < SAMPLES; i++) {
    const key = `raw/train/${String(i).padStart(3, '0')}.jpg`;
    objects[key] = sizedJpeg(key, 2_000 + (i * 7919) % 4_000);
  }
  await putTestObjects(client, sourceBucket, objects);
  // Below the source prefix: the label file is read, never packed.
  await client.send(new PutObjectCommand({ Bucket: sourceBucket, Key: 'raw/labels.csv', Body: LABEL_ROWS }));
  for (const name of AWS_VARIABLES) savedEnvironment[name] = process.env[name];
  for (const name of AWS_VARIABLES) delete process.env[name];
  process.env.AWS_ACCESS_KEY_ID = server.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = server.credentials.secretAccessKey;
}, 90_000);

afterAll(async () => {
  for (const name of AWS_VARIABLES) {
    if (savedEnvironment[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnvironment[name];
  }
  client?.destroy();
  await server?.stop();
});

function dataset(prefix: string): S3Sink {
  return new S3Sink({ client, bucket: datasetBucket, prefix });
}

async function manifestOf(prefix: string): Promise<Manifest> {
  return JSON.parse((await dataset(prefix).get(MANIFEST_KEY)).toString('utf8')) as Manifest;
}

/** Each record's file name → its label, read back from the shards in S3. */
async function labelsOf(prefix: string, manifest: Manifest): Promise<Record<string, number>> {
  return recordLabels(manifest, (key) => dataset(prefix).get(key));
}

/** The labels the rows give, by file name (the last sample has none). */
function labelledByRows(): Record<string, number> {
  const classes = ['heron', 'egret', 'ibis, sacred'];
  return Object.fromEntries(Array.from({ length: SAMPLES - 1 }, (_, i) => [
    `train/${String(i).padStart(3, '0')}.jpg`, EXPECTED_LABELS[classes[i % 3] as keyof typeof EXPECTED_LABELS],
  ]));
}

/** The construct's state machine over raw/ of the source bucket, labels from raw/labels.csv, run against the local S3 server. */
function packing(prefix: string, allowMissing: boolean): StateMachineRunner {
  const stack = new Stack(new App(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const source = new s3.Bucket(stack, 'Raw');
  const destination = new s3.Bucket(stack, 'Packed');
  new ShardedDataset(stack, 'Dataset', {
    sourceBucket: source, sourcePrefix: 'raw/', destinationBucket: destination, destinationPrefix: prefix,
    labelFile: { key: 'raw/labels.csv' }, shardCount: 2, seed: 5, allowMissing,
  });
  const logicalId = (bucket: s3.Bucket) => stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
  return StateMachineRunner.fromTemplate(Template.fromStack(stack), { s3: server }, {
    references: { [logicalId(source)]: sourceBucket, [logicalId(destination)]: datasetBucket },
  });
}

describe('labels from a label file in S3', () => {
  test('the state machine labels each sample as the file says; the unlabelled one is a listed failure, the stray row counted', async () => {
    // WHEN
    const execution = await packing('packed/', true).run({});

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    expect(execution.output.plan).toMatchObject({ classes: 3, unmatchedLabelRows: 1, source: { objects: SAMPLES } });
    expect(execution.output.dataset).toMatchObject({ records: SAMPLES - 1, failures: 1 });
    const manifest = await manifestOf('packed/');
    expect(manifest.labels).toEqual(EXPECTED_LABELS);
    expect(manifest.labelSource).toMatchObject({ mode: 'file', file: `s3://${sourceBucket}/raw/labels.csv`, rows: SAMPLES, unmatchedRows: 1 });
    expect(manifest.failures).toEqual([{ key: 'train/011.jpg', reason: expect.stringContaining(`no row of the label file s3://${sourceBucket}/raw/labels.csv`) }]);
    expect(await labelsOf('packed/', manifest)).toEqual(labelledByRows());
    expect((await verifyDataset(dataset('packed/'))).problems).toEqual([]);
  }, 180_000);

  test('without allowMissing the unlabelled sample fails the Finalize state, publishing nothing', async () => {
    // WHEN
    const execution = await packing('strict/', false).run({});

    // THEN
    expect(execution).toMatchObject({ status: 'FAILED', error: 'MissingFilesError' });
    expect(JSON.parse(execution.cause!).errorMessage).toContain('train/011.jpg: no row of the label file');
    expect(await dataset('strict/').list(MANIFEST_KEY)).toEqual([]);
  }, 180_000);

  test('the CLI reads --label-file s3://… and packs the same labels as the state machine', async () => {
    // WHEN
    const packed = await runCli('pack', `s3://${sourceBucket}/raw/`, `s3://${datasetBucket}/cli/`, '--label-file', `s3://${sourceBucket}/raw/labels.csv`,
      '--shards', '2', '--seed', '5', '--allow-missing', '--endpoint-url', server.endpoint, '--region', server.region);

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toContain('warning: 1 row(s) name no listed file');
    const manifest = await manifestOf('cli/');
    expect(manifest).toMatchObject({ labels: EXPECTED_LABELS, records: SAMPLES - 1, labelSource: { file: `s3://${sourceBucket}/raw/labels.csv`, unmatchedRows: 1 } });
    expect(await labelsOf('cli/', manifest)).toEqual(labelledByRows());
  });
});
