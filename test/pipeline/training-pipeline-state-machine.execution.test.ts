import { App, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { ShardedDataset, TrainingInstance, TrainingPipeline } from '../../lib';
import type { AwsJsonServer} from '../support/aws-json-server';
import { AwsServiceError, useAwsJsonServer } from '../support/aws-json-server';
import { describeTrainingJobResponse, metricDataAnswerer, syntheticMetricSet } from '../support/metric-sets';
import { sizedJpeg } from '../support/jpeg-dataset';
import type { S3TestServer} from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from '../support/s3-server';
import { testContainer } from '../support/stacks';
import type { Execution, RunOptions} from '../support/state-machine-runner';
import { StateMachineRunner } from '../support/state-machine-runner';

/*
 * The pipeline's state machine, executed: the definition TrainingPipeline synthesizes (with an FSx
 * cache, so the import branch is in it), run by an ASL interpreter with the bundled planner,
 * packers, finalizer and diagnoser against a local S3 server, and its FSx, SageMaker, CloudWatch
 * and EventBridge calls answered by a local server that checks each request and answer against
 * the services' API models. The Distributed Map's items are read from `_plan/tasks.json` in S3 as
 * the S3 JSON ItemReader does; `.sync` polls DescribeTrainingJob without waiting; the Wait between
 * import checks and the Retry intervals are 0 (see test/support/state-machine-runner.ts).
 */

const SOURCE_OBJECTS = 24;
const SHARDS = 2;
const TASK_ID = 'task-0123456789abcdef0';
const CREATED = Date.parse('2026-11-02T09:00:00Z') / 1000;

let aws: AwsJsonServer;
useAwsJsonServer(['sagemaker', 'fsx', 'cloudwatch', 'events'], (started) => {
  aws = started;
});

let server: S3TestServer;
let client: S3Client;
let sourceBucket: string;
let datasetBucket: string;
let outputBucket: string;

beforeAll(async () => {
  server = await startS3Server();
  client = s3TestClient(server);
  sourceBucket = await createTestBucket(client, 'pipeline-source');
  datasetBucket = await createTestBucket(client, 'pipeline-dataset');
  outputBucket = await createTestBucket(client, 'pipeline-output');
  const objects: Record<string, Buffer> = {};
  // Real JPEGs: the dataset checks every image by default.
  for (let i = 0; i < SOURCE_OBJECTS; i++) objects[`raw/${i % 2 ? 'cat' : 'dog'}/${i}.jpg`] = sizedJpeg(`image ${i}`, 400);
  await putTestObjects(client, sourceBucket, objects);
}, 90_000);

afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

/** The pipeline of a dataset packed under `prefix`, 2 × ml.p3dn.24xlarge reading the shards through an FSx cache (or from S3). */
function pipeline(prefix: string, options: { cache?: boolean } = {}): StateMachineRunner {
  const app = new App();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const raw = new s3.Bucket(stack, 'Raw');
  const packed = new s3.Bucket(stack, 'Packed');
  const dataset = new ShardedDataset(stack, 'Dataset', {
    sourceBucket: raw, sourcePrefix: 'raw/', destinationBucket: packed, destinationPrefix: prefix, shardCount: SHARDS,
  });
  const built = new TrainingPipeline(stack, 'Pipeline', {
    dataset,
    ...(options.cache === false ? {} : { datasetCache: { datasetSize: Size.gibibytes(150), storageCapacityGiB: 2400, perUnitStorageThroughput: 250 } }),
    training: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, container: testContainer(), hyperparameters: { epochs: '3', lr: '0.1' } },
  });
  const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as s3.CfnBucket);
  return StateMachineRunner.fromTemplate(Template.fromStack(stack), { s3: server, aws }, {
    logicalId: logicalId(built.stateMachine),
    references: { [logicalId(raw)]: sourceBucket, [logicalId(packed)]: datasetBucket, [logicalId(built.trainingJob.outputBucket)]: outputBucket },
  });
}

/** Answers the FSx import: the task goes through `lifecycles`, one per DescribeDataRepositoryTasks call, the last one staying. */
function serveImport(lifecycles: string[]): void {
  aws.on('fsx', 'CreateDataRepositoryTask', (input) => ({
    DataRepositoryTask: { TaskId: TASK_ID, Lifecycle: 'PENDING', Type: input.Type, CreationTime: CREATED, FileSystemId: input.FileSystemId, Paths: input.Paths },
  }));
  let polls = 0;
  aws.on('fsx', 'DescribeDataRepositoryTasks', (input) => ({
    DataRepositoryTasks: input.TaskIds.map((TaskId: string) => ({
      TaskId, Lifecycle: lifecycles[Math.min(polls++, lifecycles.length - 1)], Type: 'IMPORT_METADATA_FROM_REPOSITORY', CreationTime: CREATED,
    })),
  }));
}

/**
 * Answers SageMaker for the jobs the pipeline creates: InProgress on the first DescribeTrainingJob,
 * then `status`; and CloudWatch and EventBridge for the diagnoser, from a synthetic job whose GPUs
 * were busy. Returns the CreateTrainingJob requests.
 */
function serveTraining(status: 'Completed' | 'Failed' | 'Stopped'): any[] {
  const created: any[] = [];
  const metricSet = (name: string) => syntheticMetricSet({
    name, instanceType: 'ml.p3dn.24xlarge', instanceCount: 2, gpus: 8, vcpus: 96, gpu: { mean: 92, spread: 3 }, cpu: { mean: 35, spread: 5 },
    cache: { baselineMBps: 600, readMBps: { mean: 300 } },
  });
  aws.on('sagemaker', 'CreateTrainingJob', (input) => {
    created.push(input);
    return { TrainingJobArn: `arn:aws:sagemaker:us-east-1:111111111111:training-job/${input.TrainingJobName}` };
  });
  let describes = 0;
  aws.on('sagemaker', 'DescribeTrainingJob', (input) => {
    const request = created.find((c) => c.TrainingJobName === input.TrainingJobName);
    if (!request) throw new AwsServiceError('ValidationException', `Requested resource not found: ${input.TrainingJobName}`);
    const described = describeTrainingJobResponse(metricSet(request.TrainingJobName), request.OutputDataConfig.S3OutputPath);
    if (describes++ === 0) return { ...described, TrainingJobStatus: 'InProgress', SecondaryStatus: 'Training' };
    return {
      ...described,
      TrainingJobStatus: status,
      ...(status === 'Failed' ? { SecondaryStatus: 'Failed', FailureReason: 'AlgorithmError: CUDA out of memory' } : {}),
      ...(status === 'Stopped' ? { SecondaryStatus: 'Stopped' } : {}),
    };
  });
  aws.on('cloudwatch', 'GetMetricData', (input) => metricDataAnswerer(metricSet(created[0].TrainingJobName))(input));
  aws.on('events', 'PutEvents', () => ({ FailedEntryCount: 0, Entries: [{ EventId: '11710aed-b79e-4468-a20b-bb3c0c3b4860' }] }));
  return created;
}

async function objectText(bucket: string, key: string): Promise<string> {
  return (await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
}

function operations(): string[] {
  return aws.calls.map((call) => `${call.service} ${call.operation}`);
}

const START = ['ApplyDefaults', 'CheckInput', 'MergeInput'];
const PACK = ['Plan', 'UpToDate', 'PackShards', ...Array(SHARDS).fill('PackShard'), 'Finalize'];
const IMPORT_ONE_POLL = ['ImportShards', 'WaitForImport', 'CheckImport', 'ImportDone'];
const TRAIN = ['JobHyperparameters', 'Train'];

/** The pipeline over `packed/`, shared by the tests that find the dataset packed. */
let packedPipeline: StateMachineRunner | undefined;

/** The pipeline over `packed/` once its dataset is packed (by the first test, or here when it runs alone). */
async function alreadyPacked(): Promise<StateMachineRunner> {
  packedPipeline ??= pipeline('packed/');
  const packed = await client.send(new GetObjectCommand({ Bucket: datasetBucket, Key: `packed/${MANIFEST_KEY}` })).then(() => true, () => false);
  if (!packed) {
    serveImport(['SUCCEEDED']);
    serveTraining('Completed');
    expect(await packedPipeline.run({}, { executionName: 'packing' })).toMatchObject({ status: 'SUCCEEDED' });
    aws.reset();
  }
  return packedPipeline;
}

/** The notification the execution published, and what the execution failed with: the same error. */
function expectNotified(execution: Execution, step: string, error: string): void {
  expect(execution).toMatchObject({ status: 'FAILED', error });
  expect(execution.notifications).toEqual([{
    TopicArn: expect.stringMatching(/^arn:aws:sns:us-east-1:111111111111:PipelineNotifications/),
    Subject: 'cdk-training-io pipeline failed',
    Message: { execution: expect.stringMatching(/:execution:PipelineStateMachine\w+:/), step, error, cause: execution.cause },
  }]);
  expect(execution.states.slice(-2)).toEqual(['NotifyFailure', 'Failed']);
}

describe('TrainingPipeline state machine, executed against local S3, SageMaker, FSx, CloudWatch and EventBridge', () => {
  test('packs a fresh source, imports it into the cache, trains with the execution\'s hyperparameters over the job\'s, and diagnoses the job', async () => {
    // GIVEN
    packedPipeline = pipeline('packed/');
    serveImport(['EXECUTING', 'SUCCEEDED']);
    const created = serveTraining('Completed');

    // WHEN
    const execution = await packedPipeline.run({ hyperparameters: { epochs: '5' } }, { executionName: 'run-1' });

    // THEN the states, in order: the import checked twice, the second time done
    expect(execution).toMatchObject({ status: 'SUCCEEDED', notifications: [], retries: [] });
    expect(execution.states).toEqual([...START, ...PACK, ...IMPORT_ONE_POLL, 'WaitForImport', 'CheckImport', 'ImportDone', ...TRAIN, 'Diagnose', 'Done']);
    expect(operations()).toEqual([
      'fsx CreateDataRepositoryTask', 'fsx DescribeDataRepositoryTasks', 'fsx DescribeDataRepositoryTasks',
      'sagemaker CreateTrainingJob', 'sagemaker DescribeTrainingJob', 'sagemaker DescribeTrainingJob',
      'sagemaker DescribeTrainingJob', 'cloudwatch GetMetricData', 'events PutEvents',
    ]);
    // the dataset is complete, and the import covers its root, where the new version lies
    expect(JSON.parse(await objectText(datasetBucket, `packed/${MANIFEST_KEY}`))).toMatchObject({ records: SOURCE_OBJECTS });
    expect(aws.calls[0].input).toEqual({
      FileSystemId: 'fs-0123456789abcdef0', Type: 'IMPORT_METADATA_FROM_REPOSITORY',
      Paths: [`s3://${datasetBucket}/packed/`], Report: { Enabled: false },
    });
    // the job is named after the execution and reads shards and index from the cache
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      TrainingJobName: 'pipeline-run-1',
      HyperParameters: { epochs: '5', lr: '0.1' },
      InputDataConfig: [
        { ChannelName: 'train', DataSource: { FileSystemDataSource: { FileSystemId: 'fs-0123456789abcdef0', DirectoryPath: '/abcdefgh/dataset' } } },
        { ChannelName: 'index', DataSource: { FileSystemDataSource: { FileSystemId: 'fs-0123456789abcdef0', DirectoryPath: '/abcdefgh/dataset' } } },
      ],
      OutputDataConfig: { S3OutputPath: `s3://${outputBucket}/training-output/` },
    });
    // the diagnosis is the output, and its report lies beside the job's output
    const folder = 'training-output/pipeline-run-1/diagnosis/';
    expect(execution.output).toEqual({
      trainingJobName: 'pipeline-run-1',
      diagnosis: {
        trainingJobName: 'pipeline-run-1', verdict: expect.any(String), summary: expect.any(String),
        reportUri: `s3://${outputBucket}/${folder}report.json`, markdownUri: `s3://${outputBucket}/${folder}report.md`,
        metricsUri: `s3://${outputBucket}/${folder}metrics.json`,
      },
    });
    const report = JSON.parse(await objectText(outputBucket, `${folder}report.json`));
    expect(report).toMatchObject({ verdict: execution.output.diagnosis.verdict, summary: execution.output.diagnosis.summary });
  });

  test('without a cache, the job trains right after packing, on the shards and the index in S3', async () => {
    // GIVEN
    const created = serveTraining('Completed');

    // WHEN
    const execution = await pipeline('uncached/', { cache: false }).run({}, { executionName: 'uncached' });

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED', output: { trainingJobName: 'pipeline-uncached' } });
    expect(execution.states).toEqual([...START, ...PACK, ...TRAIN, 'Diagnose', 'Done']);
    expect(operations().filter((operation) => operation.startsWith('fsx'))).toEqual([]);
    // The job reads the version this execution published, through that version's own channel manifests.
    const version = (JSON.parse(await objectText(datasetBucket, `uncached/${MANIFEST_KEY}`)) as { datasetVersion: string }).datasetVersion;
    expect(JSON.parse(await objectText(datasetBucket, `uncached/versions/${version}/shards.manifest`))).toHaveLength(1 + SHARDS);
    expect(created[0].InputDataConfig).toEqual(expect.arrayContaining([
      expect.objectContaining({
        ChannelName: 'train',
        DataSource: { S3DataSource: { S3DataType: 'ManifestFile', S3Uri: `s3://${datasetBucket}/uncached/versions/${version}/shards.manifest`, S3DataDistributionType: 'ShardedByS3Key' } },
      }),
      expect.objectContaining({
        ChannelName: 'index',
        DataSource: { S3DataSource: { S3DataType: 'ManifestFile', S3Uri: `s3://${datasetBucket}/uncached/versions/${version}/index.manifest`, S3DataDistributionType: 'FullyReplicated' } },
      }),
    ]));
    expect(JSON.parse(await objectText(outputBucket, 'training-output/pipeline-uncached/diagnosis/report.json')))
      .toMatchObject({ verdict: execution.output.diagnosis.verdict });
  });

  test('a dataset already packed goes straight to training: no packers, no import', async () => {
    // GIVEN
    const runner = await alreadyPacked();
    const created = serveTraining('Completed');

    // WHEN
    const execution = await runner.run({}, { executionName: 'run-2' });

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED', output: { trainingJobName: 'pipeline-run-2' } });
    expect(execution.states).toEqual([...START, 'Plan', 'UpToDate', 'AlreadyPacked', ...TRAIN, 'Diagnose', 'Done']);
    expect(execution.lambdaCalls.map((c) => c.handler)).toEqual(['shard-planner', 'job-diagnoser']);
    expect(created[0].HyperParameters).toEqual({ epochs: '3', lr: '0.1', num_workers: '11' });
  });

  test.each(['FAILED', 'CANCELED'])('an import that ends %s is notified as ImportFailed, and no job is created', async (lifecycle) => {
    // GIVEN
    serveImport([lifecycle]);
    serveTraining('Completed');

    // WHEN
    const execution = await pipeline(`import-${lifecycle.toLowerCase()}/`).run({}, { executionName: `import-${lifecycle.toLowerCase()}` });

    // THEN
    expectNotified(execution, 'ImportShards', 'ImportFailed');
    expect(execution.cause).toBe(`FSx import task ${TASK_ID} ended ${lifecycle}`);
    expect(execution.states).toEqual([...START, ...PACK, ...IMPORT_ONE_POLL, 'ImportFailed', 'NotifyFailure', 'Failed']);
    expect(operations()).not.toContain('sagemaker CreateTrainingJob');
  });

  test.each<['Failed' | 'Stopped', string]>([
    ['Failed', 'AlgorithmError: CUDA out of memory'],
    ['Stopped', '"TrainingJobStatus":"Stopped"'],
  ])('a training job that ends %s is notified from the Train step, with SageMaker\'s description as cause, and not diagnosed here', async (status, inCause) => {
    // GIVEN
    const runner = await alreadyPacked();
    serveTraining(status);

    // WHEN
    const execution = await runner.run({}, { executionName: `job-${status.toLowerCase()}` });

    // THEN
    expectNotified(execution, 'Train', 'States.TaskFailed');
    expect(JSON.parse(execution.cause!)).toMatchObject({ TrainingJobName: `pipeline-job-${status.toLowerCase()}`, TrainingJobStatus: status });
    expect(execution.cause).toContain(inCause);
    expect(execution.states).toEqual([...START, 'Plan', 'UpToDate', 'AlreadyPacked', ...TRAIN, 'NotifyFailure', 'Failed']);
    expect(execution.lambdaCalls.map((c) => c.handler)).toEqual(['shard-planner']);
  });

  test.each<[string, string, (prefix: string) => RunOptions, string, boolean]>([
    ['Plan', 'packed/', () => ({ failLambda: (call) => (call.handler === 'shard-planner' ? new Error('injected') : undefined) }), 'Error', false],
    ['PackShards', 'pack-failed/', () => ({ failLambda: (call) => (call.handler === 'shard-packer' && call.event.shardIndex === 0 ? new Error('injected') : undefined) }),
      'States.ExceedToleratedFailureThreshold', false],
    ['Finalize', 'finalize-failed/', () => ({ failLambda: (call) => (call.handler === 'shard-finalizer' ? new Error('injected') : undefined) }), 'Error', false],
    ['ImportShards', 'import-refused/', () => {
      aws.on('fsx', 'CreateDataRepositoryTask', () => {
        throw new AwsServiceError('FileSystemNotFound', 'No Lustre file system with ID fs-0123456789abcdef0');
      });
      return {};
    }, 'Fsx.FileSystemNotFound', false],
    ['CheckImport', 'import-lost/', () => {
      serveImport(['EXECUTING']);
      aws.on('fsx', 'DescribeDataRepositoryTasks', () => {
        throw new AwsServiceError('DataRepositoryTaskNotFound', `No data repository task with ID ${TASK_ID}`);
      });
      return {};
    }, 'Fsx.DataRepositoryTaskNotFound', false],
    ['Diagnose', 'packed/', () => ({ failLambda: (call) => (call.handler === 'job-diagnoser' ? new Error('injected') : undefined) }), 'Error', true],
  ])('a failure in %s is caught, notified naming the step, and fails the execution with its error', async (step, prefix, arrange, error, trained) => {
    // GIVEN
    const runner = prefix === 'packed/' ? await alreadyPacked() : pipeline(prefix);
    serveImport(['SUCCEEDED']);
    serveTraining('Completed');
    const options = arrange(prefix);

    // WHEN
    const execution = await runner.run({}, { ...options, executionName: `caught-${step.toLowerCase()}` });

    // THEN
    expectNotified(execution, step, error);
    // (a Map's children are listed after it)
    expect(execution.states.filter((state) => state !== 'PackShard').slice(-3)).toEqual([step, 'NotifyFailure', 'Failed']);
    expect(operations().includes('sagemaker CreateTrainingJob')).toBe(trained);
  });

  test.each([
    [{ force: 'yes' }],
    [{ hyperparameters: 'epochs=5' }],
    [{ hyperparameters: null }],
    [{ force: 1, hyperparameters: {} }],
    [{ hyperparameters: ['epochs=5'] }],
    ['go'],
    [[{ force: true }]],
  ])('the invalid input %p is notified from CheckInput before anything runs', async (input) => {
    // WHEN
    const execution = await pipeline('invalid/').run(input, { executionName: 'invalid' });

    // THEN
    expectNotified(execution, 'CheckInput', 'InvalidInput');
    expect(execution.cause).toMatch(/^the execution input must be \{"force": true\|false, "hyperparameters"/);
    expect(execution.states).toEqual(['ApplyDefaults', 'CheckInput', 'InvalidInput', 'NotifyFailure', 'Failed']);
    expect(execution.lambdaCalls).toEqual([]);
    expect(aws.calls).toEqual([]);
  });
});
