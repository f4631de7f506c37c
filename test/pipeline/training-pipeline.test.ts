import { Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { JobDiagnoserResult} from '../../lambda/job-diagnoser/contract';
import { JOB_DIAGNOSER_ENVIRONMENT, JOB_DIAGNOSER_EVENT_FIELDS } from '../../lambda/job-diagnoser/contract';
import { FSX_READ_METRIC, SAGEMAKER_INSTANCE_METRIC_NAMES, SAGEMAKER_TRAINING_METRICS } from '../../lib/contract/metric-names';
import { SHARD_PACKER_METRICS } from '../../lambda/shard-packer/contract';
import type { PipelineDiagnosis, PipelineExecutionOutput,
  TrainingPipelineProps} from '../../lib';
import {
  InputMode, IoPlanner, ShardedDataset, TrainingCode, TrainingInstance, TrainingJob, TrainingPipeline
} from '../../lib';
import { ApiModel } from '../support/api-model';
import { testApp, testContainer } from '../support/stacks';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const aslValidator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errors: unknown[] };

interface Built {
  readonly stack: Stack;
  readonly pipeline: TrainingPipeline;
  readonly template: Template;
}

/** A pipeline over raw/ of a bucket, 2 × ml.p3dn.24xlarge with the reference code (PyTorch container). */
function build(extra: Partial<TrainingPipelineProps> = {}, training: Partial<TrainingPipelineProps['training']> = {}): Built {
  const app = testApp();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const raw = new s3.Bucket(stack, 'Raw');
  const dataset = new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/', destinationBucket: raw, destinationPrefix: 'packed/' });
  const pipeline = new TrainingPipeline(stack, 'Pipeline', {
    dataset,
    training: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, hyperparameters: { epochs: '3' }, ...training },
    ...extra,
  });
  return { stack, pipeline, template: Template.fromStack(stack) };
}

function withCache(extra: Partial<TrainingPipelineProps> = {}): Built {
  return build({ datasetCache: { datasetSize: Size.gibibytes(150), storageCapacityGiB: 2400, perUnitStorageThroughput: 250 }, ...extra });
}

/** The pipeline's state machine definition as Step Functions sees it, with references as placeholders of the right kind. */
function definitionOf(built: Built): any {
  const machines = built.template.findResources('AWS::StepFunctions::StateMachine');
  const id = built.stack.getLogicalId(built.pipeline.stateMachine.node.defaultChild as any);
  const join = machines[id].Properties.DefinitionString['Fn::Join'];
  const text = (join[1] as unknown[]).map((part) => (typeof part === 'string' ? part : placeholder(part))).join('');
  return JSON.parse(text);
}

/** A plausible value for a reference: an ARN for a function, an ID for a file system, a name for the rest. */
function placeholder(reference: any): string {
  const target = JSON.stringify(reference);
  if (/Diagnoser|Planner|Packer|Finalizer/.test(target) && /Arn/.test(target)) return 'arn:aws:lambda:us-east-1:111111111111:function:f';
  if (/FileSystem/.test(target) && /Ref/.test(target)) return 'fs-0123456789abcdef0';
  if (/Partition/.test(target)) return 'aws';
  return 'ref';
}

function taskStates(definition: any): Array<[string, any]> {
  return Object.entries(definition.States).filter(([, state]: [string, any]) => state.Type === 'Task' || state.Type === 'Map');
}

function functionNamed(template: Template, handler: string): any {
  const found = Object.values(template.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: { POWERTOOLS_SERVICE_NAME: handler } } },
  }));
  expect(found).toHaveLength(1);
  return found[0];
}

function policyStatementsOf(template: Template, rolePattern: RegExp): any[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy: any) => policy.Properties.Roles.some((role: any) => rolePattern.test(role.Ref)))
    .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement);
}

function dashboardBody(built: Built): any {
  const dashboard = Object.values(built.template.findResources('AWS::CloudWatch::Dashboard'))[0] as any;
  const body = dashboard.Properties.DashboardBody;
  const text = typeof body === 'string' ? body : (body['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : 'ref')).join('');
  return JSON.parse(text);
}

describe('TrainingPipeline: the state machine', () => {
  test.each([['with an FSx cache', withCache], ['reading S3', () => build()]])('%s passes the Amazon States Language validator', (_, make) => {
    const result = aslValidator(definitionOf(make()));
    expect(result.errors).toEqual([]);
    expect(result.isValid).toBe(true);
  });

  test('applies the input defaults, plans, skips packing when up to date, imports into the cache after packing, trains, diagnoses', () => {
    // GIVEN / WHEN
    const definition = definitionOf(withCache());
    const next = (state: string) => definition.States[state].Next;
    // THEN
    expect(definition.StartAt).toBe('ApplyDefaults');
    expect(definition.States.ApplyDefaults.Parameters).toEqual({ 'defaults': { force: false, hyperparameters: {} }, 'input.$': '$' });
    expect(definition.States.MergeInput).toMatchObject({ Parameters: { 'args.$': 'States.JsonMerge($.defaults, $.input, false)' }, OutputPath: '$.args' });
    expect([next('ApplyDefaults'), definition.States.CheckInput.Default, next('MergeInput'), next('Plan')])
      .toEqual(['CheckInput', 'MergeInput', 'Plan', 'UpToDate']);
    expect(definition.States.UpToDate.Choices[0]).toMatchObject({ Variable: '$.plan.upToDate', BooleanEquals: true, Next: 'AlreadyPacked' });
    expect(definition.States.UpToDate.Default).toBe('PackShards');
    expect(next('AlreadyPacked')).toBe('JobHyperparameters');
    expect([next('PackShards'), next('Finalize'), next('ImportShards'), next('WaitForImport'), next('CheckImport')])
      .toEqual(['Finalize', 'ImportShards', 'WaitForImport', 'CheckImport', 'ImportDone']);
    expect(definition.States.ImportDone.Choices[0]).toMatchObject({ StringEquals: 'SUCCEEDED', Next: 'JobHyperparameters' });
    expect(definition.States.ImportDone.Choices[1].Next).toBe('ImportFailed');
    expect(definition.States.ImportDone.Default).toBe('WaitForImport');
    expect([next('JobHyperparameters'), next('Train'), next('Diagnose')]).toEqual(['Train', 'Diagnose', 'Done']);
    expect(definition.States.Done).toMatchObject({
      Type: 'Pass', End: true, Parameters: { 'trainingJobName.$': '$.training.TrainingJobName', 'diagnosis.$': '$.diagnosis' },
    });
  });

  test('without a cache the job trains right after packing, reading the shards from S3 with ShardedByS3Key', () => {
    const built = build();
    const definition = definitionOf(built);
    expect(definition.States.Finalize.Next).toBe('JobHyperparameters');
    expect(definition.States.ImportShards).toBeUndefined();
    const channel = built.stack.resolve(built.pipeline.trainingJob.renderRequest()).InputDataConfig[0];
    expect(channel).toMatchObject({ ChannelName: 'train', DataSource: { S3DataSource: { S3DataDistributionType: 'ShardedByS3Key' } } });
    expect(channel.DataSource.S3DataSource.S3DataType).toBe('ManifestFile');
    // Pinned to the version the execution planned: its own ManifestFile, which a later publish does not change.
    expect(channel.DataSource.S3DataSource.S3Uri).toBeUndefined();
    expect(JSON.stringify(channel.DataSource.S3DataSource['S3Uri.$'])).toMatch(/States\.Format\('s3:\/\/.*\/packed\/versions\/\{\}\/shards\.manifest', \$\.plan\.datasetVersion\)/);
  });

  test('the job reads the index files too, FullyReplicated in File mode, so that DALI can read the shards', () => {
    // GIVEN / WHEN
    const built = build();

    // THEN
    const [, index] = built.stack.resolve(built.pipeline.trainingJob.renderRequest()).InputDataConfig;
    expect(index).toMatchObject({ ChannelName: 'index', InputMode: 'File', DataSource: { S3DataSource: { S3DataDistributionType: 'FullyReplicated' } } });
    expect(index.DataSource.S3DataSource.S3DataType).toBe('ManifestFile');
    expect(JSON.stringify(index.DataSource.S3DataSource['S3Uri.$'])).toMatch(/\/packed\/versions\/\{\}\/index\.manifest', \$\.plan\.datasetVersion\)/);
    expect(ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', built.stack.resolve(built.pipeline.trainingJob.renderRequest()))).toEqual([]);
  });

  test('a validation dataset is its own channel, FullyReplicated from S3 also beside a cache', () => {
    // GIVEN
    const app = testApp();
    const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
    const raw = new s3.Bucket(stack, 'Raw');
    const validationDataset = new ShardedDataset(stack, 'Validation', { sourceBucket: raw, sourcePrefix: 'val/', destinationBucket: raw, destinationPrefix: 'packed-val/' });

    // WHEN
    const pipeline = new TrainingPipeline(stack, 'Pipeline', {
      dataset: new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/', destinationBucket: raw, destinationPrefix: 'packed/' }),
      training: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 },
      datasetCache: { datasetSize: Size.gibibytes(150), storageCapacityGiB: 2400, perUnitStorageThroughput: 250 },
      validationDataset,
    });

    // THEN
    const channels = stack.resolve(pipeline.trainingJob.renderRequest()).InputDataConfig;
    expect(channels.map((c: any) => c.ChannelName)).toEqual(['train', 'index', 'validation']);
    expect(channels[2]).toMatchObject({ DataSource: { S3DataSource: { S3DataDistributionType: 'FullyReplicated' } } });
    expect(JSON.stringify(channels[2].DataSource.S3DataSource.S3Uri)).toContain('/packed-val/shards.manifest');
  });

  test('with a cache both channels mount the dataset\'s folder of the file system, where the reader follows the manifest', () => {
    // GIVEN / WHEN
    const built = withCache({ channelName: 'images', indexChannelName: 'offsets' });

    // THEN
    const channels = built.stack.resolve(built.pipeline.trainingJob.renderRequest()).InputDataConfig;
    expect(channels.map((c: any) => [c.ChannelName, c.InputMode, c.DataSource.FileSystemDataSource.DirectoryPath['Fn::Join'][1].slice(-1)[0]]))
      .toEqual([['images', 'File', '/dataset'], ['offsets', 'File', '/dataset']]);
  });

  test('jobs that fail or are stopped are diagnosed by a rule on their end; the Diagnose step does those that complete', () => {
    // GIVEN / WHEN
    const built = build({}, { jobNamePrefix: 'resnet' });

    // THEN
    const rules = Object.values(built.template.findResources('AWS::Events::Rule')) as any[];
    expect(rules.map((r) => r.Properties.EventPattern.detail)).toEqual([
      { TrainingJobName: [{ prefix: 'resnet-' }], TrainingJobStatus: ['Failed', 'Stopped'] },
    ]);
    const diagnoser = built.stack.getLogicalId(built.pipeline.diagnoserFunction.node.defaultChild as any);
    expect(rules[0].Properties.Targets[0].Arn).toEqual({ 'Fn::GetAtt': [diagnoser, 'Arn'] });
    expect(definitionOf(built).States.Diagnose.Resource).toBeDefined();
    functionNamed(built.template, 'job-diagnoser');
  });

  test('every task notifies the topic on any error, naming the step, then fails the execution with the error', () => {
    // GIVEN / WHEN
    const definition = definitionOf(withCache());
    // THEN
    const tasks = taskStates(definition).filter(([name]) => name !== 'NotifyFailure');
    expect(tasks.map(([name]) => name).sort()).toEqual(['CheckImport', 'Diagnose', 'Finalize', 'ImportShards', 'PackShards', 'Plan', 'Train']);
    for (const [name, state] of tasks) {
      expect(state.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'NotifyFailure', Assign: { failedStep: name } }]);
    }
    expect(definition.States.ImportFailed).toMatchObject({ ResultPath: '$.failure', Assign: { failedStep: 'ImportShards' }, Next: 'NotifyFailure' });
    // An input the intrinsic functions would choke on (States.Runtime, which no Catch sees) is refused first, and notified.
    // It is checked as given, before MergeInput merges it, and a type test only runs on a field that is there.
    expect(JSON.stringify(definition.States.CheckInput.Choices[0])).toMatch(new RegExp([
      '"Variable":"\\$\\.input","IsString":true', '"Variable":"\\$\\.input\\[0\\]","IsPresent":true',
      '"And":\\[\\{"Variable":"\\$\\.input\\.force","IsPresent":true\\},\\{"Not":\\{"Variable":"\\$\\.input\\.force","IsBoolean":true\\}',
      '"And":\\[\\{"Variable":"\\$\\.input\\.hyperparameters","IsPresent":true\\}',
    ].join('.*')));
    expect(definition.States.CheckInput.Choices[0].Next).toBe('InvalidInput');
    expect(definition.States.InvalidInput).toMatchObject({ ResultPath: '$.failure', Assign: { failedStep: 'CheckInput' }, Next: 'NotifyFailure' });
    expect(definition.States.NotifyFailure).toMatchObject({
      Resource: 'arn:aws:states:::sns:publish',
      Parameters: {
        'Message': { 'execution.$': '$$.Execution.Id', 'step.$': '$failedStep', 'error.$': '$.failure.Error', 'cause.$': '$.failure.Cause' },
      },
      ResultPath: null,
      Next: 'Failed',
    });
    expect(definition.States.Failed).toEqual({ Type: 'Fail', ErrorPath: '$.failure.Error', CausePath: '$.failure.Cause' });
  });

  test('names each job after its execution and merges the execution\'s hyperparameters over the construct\'s', () => {
    // GIVEN
    const built = withCache();
    // WHEN
    const definition = definitionOf(built);
    // THEN
    const train = definition.States.Train;
    expect(train.Resource).toBe('arn:aws:states:::sagemaker:createTrainingJob.sync');
    expect(train.Parameters['TrainingJobName.$']).toBe("States.Format('pipeline-{}', $$.Execution.Name)");
    expect(train.Parameters['HyperParameters.$']).toBe('States.JsonMerge($.jobHyperparameters.defaults, $.jobHyperparameters.overrides, false)');
    expect(train.Parameters.HyperParameters).toBeUndefined();
    expect(definition.States.JobHyperparameters).toMatchObject({
      Parameters: { 'defaults': { num_workers: '11', epochs: '3', sagemaker_program: 'train.py' }, 'overrides.$': '$.hyperparameters' },
      ResultPath: '$.jobHyperparameters',
    });
    expect(train.ResultSelector).toEqual({
      'TrainingJobName.$': '$.TrainingJobName', 'TrainingJobArn.$': '$.TrainingJobArn', 'ModelArtifacts.$': '$.ModelArtifacts',
    });
  });

  test('the training request and the FSx import request fit the SageMaker and FSx API models', () => {
    const built = withCache();
    const request = built.stack.resolve(built.pipeline.trainingJob.renderRequest());
    expect(ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', request)).toEqual([]);
    const importShards = built.pipeline.node.findChild('ImportShards') as sfn.State;
    const parameters = built.stack.resolve(importShards.toStateJson()).Parameters;
    expect(ApiModel.load('fsx').validate('CreateDataRepositoryTaskRequest', parameters)).toEqual([]);
    expect(parameters).toMatchObject({ Type: 'IMPORT_METADATA_FROM_REPOSITORY', Report: { Enabled: false } });
    // The dataset's root: what the new version added is what is not imported yet.
    expect(JSON.stringify(parameters.Paths)).toMatch(/^\[\{"Fn::Join":\["",\["s3:\/\/",\{"Ref":"\w+"\},"\/packed\/"\]\]\}\]$/);
  });

  test('the diagnoser gets exactly the event fields and environment of its contract; its result is what the execution returns', () => {
    // GIVEN
    const built = withCache();
    // WHEN
    const definition = definitionOf(built);
    const variables = functionNamed(built.template, 'job-diagnoser').Properties.Environment.Variables;
    // THEN
    expect(Object.keys(definition.States.Diagnose.Parameters).map((k) => k.replace(/\.\$$/, ''))).toEqual([...JOB_DIAGNOSER_EVENT_FIELDS]);
    expect(Object.keys(variables).filter((name) => !name.startsWith('POWERTOOLS_')).sort()).toEqual([...JOB_DIAGNOSER_ENVIRONMENT].sort());
    expect(variables).toMatchObject({
      GPUS_PER_INSTANCE: '8', VCPUS_PER_INSTANCE: '96', CACHE_BASELINE_MBPS: String(2.4 * 250), EVENT_BUS_NAME: 'default',
      LOADER_SAMPLES_METRIC: 'train:samples_per_second', LOADER_DATA_WAIT_METRIC: 'train:data_wait_fraction',
    });
    // The types line up: what the diagnoser returns is what the execution's output promises.
    const result: JobDiagnoserResult = { trainingJobName: 'j', verdict: 'healthy', summary: 's', reportUri: 'r', markdownUri: 'm', metricsUri: 'x' };
    const output: PipelineExecutionOutput = { trainingJobName: result.trainingJobName, diagnosis: result satisfies PipelineDiagnosis };
    expect(output.diagnosis.verdict).toBe('healthy');
  });

  test('reuses the dataset\'s packing steps: the dataset keeps its own packing state machine beside the pipeline\'s', () => {
    const built = build();
    built.template.resourceCountIs('AWS::StepFunctions::StateMachine', 2);
    const definition = definitionOf(built);
    expect(definition.States.PackShards).toMatchObject({ Type: 'Map', ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED' } } });
    built.template.resourceCountIs('AWS::Lambda::Function', 4);
  });
});

describe('TrainingPipeline: security', () => {
  test('failures go to a topic encrypted with the AWS managed SNS key that refuses requests without SSL', () => {
    const { template } = build();
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('alias/aws/sns')])] },
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  test('the diagnoser reads only the pipeline\'s jobs, writes only their report folders, and puts events on the bus', () => {
    // GIVEN
    const { template } = build({ eventBus: undefined });
    // WHEN
    const statements = policyStatementsOf(template, /Diagnoser/);
    const text = JSON.stringify(statements);
    // THEN
    expect(statements).toContainEqual(expect.objectContaining({
      Action: 'sagemaker:DescribeTrainingJob',
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:111111111111:training-job/pipeline-*']] },
    }));
    expect(statements).toContainEqual(expect.objectContaining({ Action: 'cloudwatch:GetMetricData', Resource: '*' }));
    expect(statements).toContainEqual(expect.objectContaining({ Action: 'events:PutEvents' }));
    expect(text).toContain('/training-output/pipeline-*/diagnosis/*');
    expect(text).not.toMatch(/"s3:GetObject/);
  });

  test('the state machine starts FSx imports on its own file system and describes them', () => {
    const { template } = withCache();
    const statements = policyStatementsOf(template, /PipelineStateMachineRole/);
    const create = statements.find((s) => s.Action === 'fsx:CreateDataRepositoryTask');
    expect(JSON.stringify(create.Resource)).toMatch(/file-system\/.*task\/\*/);
    expect(statements).toContainEqual(expect.objectContaining({ Action: 'fsx:DescribeDataRepositoryTasks', Resource: '*' }));
    expect(statements).toContainEqual(expect.objectContaining({ Action: 'sns:Publish' }));
  });

  test('the diagnoser runs in lambdaVpc; the pipeline\'s log groups follow the job\'s logRetention and encryptionKey', () => {
    // GIVEN
    const app = testApp();
    const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
    const raw = new s3.Bucket(stack, 'Raw');
    const key = new kms.Key(stack, 'Key');
    const vpc = new ec2.Vpc(stack, 'Vpc', { natGateways: 0, subnetConfiguration: [{ name: 'f', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
    const dataset = new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/', destinationBucket: raw });
    // WHEN
    new TrainingPipeline(stack, 'Pipeline', {
      dataset,
      training: { instance: TrainingInstance.P3DN_24XLARGE, encryptionKey: key, logRetention: logs.RetentionDays.TWO_YEARS },
      lambdaVpc: vpc,
      datasetCache: { datasetSize: Size.gibibytes(150), storageCapacityGiB: 2400, perUnitStorageThroughput: 250 },
    });
    // THEN
    const template = Template.fromStack(stack);
    const diagnoser = functionNamed(template, 'job-diagnoser');
    expect(diagnoser.Properties.VpcConfig.SubnetIds).toEqual(vpc.isolatedSubnets.map((s) => stack.resolve(s.subnetId)));
    const pipelineGroups = Object.entries(template.findResources('AWS::Logs::LogGroup')).filter(([id]) => /^(Pipeline|TrainingNetwork)/.test(id));
    // the state machine's, the diagnoser's and the flow logs of the network the cache and the job share
    expect(pipelineGroups.map(([, group]) => group.Properties)).toEqual(Array(3).fill({
      RetentionInDays: 731, KmsKeyId: { 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] },
    }));
  });

  test.each([['with an FSx cache', withCache], ['reading S3', () => build()]])('%s passes cdk-nag AwsSolutions with every finding acknowledged', (_, make) => {
    const { stack } = make();
    const report = new AwsSolutionsChecks(stack).validateScope(stack.node.root);
    // The test's own source bucket (Stack/Raw) is the user's: only the constructs' findings count.
    const findings = report.violations.flatMap((v) => v.violatingResources
      .filter((r) => !r.constructPath?.startsWith('Stack/Raw'))
      .map((r) => `${v.ruleName} at ${r.constructPath}`));
    expect(findings).toEqual([]);
  });
});

describe('TrainingPipeline: the planner decides the data path', () => {
  const KB110 = Size.kibibytes(110);

  function dataPathOutput(built: Built): string {
    const outputs = built.template.findOutputs('*', { Description: 'cdk-training-io: what the pipeline chose for its data path, and why' });
    expect(Object.keys(outputs)).toHaveLength(1);
    return Object.values(outputs)[0].Value;
  }

  test('data that does not fit the instances is streamed with FastFile from its shards: the cheapest that feeds 8 V100s, where Pipe\'s fan-out does not', () => {
    // GIVEN 20 million files of 110 KiB (2.3 TB): more than a p3dn's 1.8 TB of NVMe
    const built = build({ datasetProfile: { objectCount: 20_000_000, meanObjectSize: KB110 } });

    // THEN FastFile reads the dataset's root: FullyReplicated, the loaders split the shards by rank
    const [train] = built.stack.resolve(built.pipeline.trainingJob.renderRequest()).InputDataConfig;
    expect(train).toMatchObject({ InputMode: 'FastFile', DataSource: { S3DataSource: { S3DataDistributionType: 'FullyReplicated' } } });
    expect(train.ShuffleConfig).toBeUndefined();
    expect(dataPathOutput(built)).toMatch(/^inputMode: IoPlanner: FastFile, ShardedByS3Key, packed: the cheapest that keeps the GPUs fed/);
  });

  test('data that fits the instances\' NVMe is still streamed when its download costs more, and the reason is in the cloud assembly', () => {
    // GIVEN 1 million files of 110 KiB (113 GB): File mode would first download them onto each p3dn
    const built = build({ datasetProfile: { objectCount: 1_000_000, meanObjectSize: KB110 } });

    // THEN
    const [train] = built.stack.resolve(built.pipeline.trainingJob.renderRequest()).InputDataConfig;
    expect(train.InputMode).toBe('FastFile');
    const metadata = built.stack.node.root.node.findAll().flatMap((c) => c.node.metadata).filter((m) => m.type === 'cdk-training-io:plan');
    expect(metadata).toHaveLength(1);
    expect(metadata[0].data.inputMode).toMatch(/^IoPlanner: FastFile, ShardedByS3Key, packed: the cheapest that keeps the GPUs fed, \$[\d.]+ per job/);
  });

  test('prices reach the planner: the recorded choice is priced with them, as IoPlanner prices it', () => {
    // GIVEN the 20 million files of 110 KiB, once at list prices and once with the instances' hours free
    const profile = { objectCount: 20_000_000, meanObjectSize: KB110 };
    const dollars = (built: Built) => Number(/the cheapest that keeps the GPUs fed, \$([\d,.]+) per job/.exec(dataPathOutput(built))![1].replace(/,/g, ''));

    // WHEN
    const listed = dollars(build({ datasetProfile: profile }));
    const free = dollars(build({ datasetProfile: profile, prices: { instances: [{ instanceType: 'ml.p3dn.24xlarge', dollarsPerHour: 0 }] } }));

    // THEN what is left is the packing and the requests
    expect(listed).toBeGreaterThan(50);
    expect(free).toBeLessThan(20);
    expect(free).toBeCloseTo(IoPlanner.plan({
      dataset: profile, cluster: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 }, epochs: 3, alwaysPacked: true,
      prices: { instances: [{ instanceType: 'ml.p3dn.24xlarge', dollarsPerHour: 0 }] },
    }).choice.dollarsPerJob, 2);
  });

  test('what the user set wins over the planner, and is recorded as given', () => {
    // GIVEN
    const built = build({ datasetProfile: { objectCount: 20_000_000, meanObjectSize: KB110 }, shardsChannel: { inputMode: InputMode.FAST_FILE } });

    // THEN FastFile, as given; the planner's ShardedByS3Key gives way: FastFile reads the dataset's root
    const [train] = built.stack.resolve(built.pipeline.trainingJob.renderRequest()).InputDataConfig;
    expect(train.InputMode).toBe('FastFile');
    expect(train.DataSource.S3DataSource).toMatchObject({ S3DataType: 'S3Prefix', S3DataDistributionType: 'FullyReplicated' });
    expect(dataPathOutput(built)).toContain('shardsChannel.inputMode: as given');
    expect(dataPathOutput(built)).toContain('distribution: FullyReplicated: FastFile reads the dataset through its root');
  });

  test('a cache without a read rate is warned about: it would get the lowest tier whatever the GPUs read', () => {
    // GIVEN / WHEN
    const built = build({ datasetCache: { datasetSize: Size.gibibytes(150) } });

    // THEN
    Annotations.fromStack(built.stack).hasWarning('/Stack/Pipeline', Match.stringLikeRegexp('the cache has no readRate.*the 16 GPUs read.*cacheWithoutReadRate'));
    expect(built.pipeline.cache!.baselineThroughputMBps).toBe(150);
  });

  test('a cache gets its size from the profile and a read rate that feeds every GPU from samplesPerSecondPerDevice', () => {
    // GIVEN 2 × 8 V100s at 1000 samples/s of 110 KiB: 1.8 GB/s
    const built = build({
      datasetProfile: { objectCount: 1_300_000, meanObjectSize: KB110 }, samplesPerSecondPerDevice: 1000, datasetCache: {},
    });

    // THEN
    expect(built.pipeline.cache!.baselineThroughputMBps).toBeGreaterThanOrEqual(2 * 8 * 1000 * 110 * 1024 / 1e6);
    Annotations.fromStack(built.stack).hasNoWarning('/Stack/Pipeline', Match.stringLikeRegexp('cacheWithoutReadRate'));
    expect(dataPathOutput(built)).toMatch(/cacheSize: datasetSize from the dataset profile: 136.4 GiB \| cacheReadRate: IoPlanner: 8 processes per instance × 1,000 samples\/s/);
  });
});

describe('TrainingPipeline: dashboard', () => {
  test('charts the metric names SageMaker, FSx, the packer and the training code publish', () => {
    // GIVEN
    const built = withCache();
    // WHEN
    const text = JSON.stringify(dashboardBody(built));
    // THEN
    for (const metric of SAGEMAKER_INSTANCE_METRIC_NAMES) {
      expect(text).toContain(`SEARCH('{${SAGEMAKER_TRAINING_METRICS.namespace},${SAGEMAKER_TRAINING_METRICS.hostDimension}} MetricName=\\"${metric}\\" Host=pipeline'`);
    }
    // The loader's metrics; the loss and validation metrics say how the model learns, not how the I/O does.
    for (const definition of TrainingCode.reference().metricDefinitions.filter((d) => d.name.startsWith('train:') && d.name !== 'train:loss')) {
      expect(text).toContain(`{${SAGEMAKER_TRAINING_METRICS.namespace},${SAGEMAKER_TRAINING_METRICS.jobDimension}} MetricName=\\"${definition.name}\\"`);
    }
    expect(text).toContain(`"${FSX_READ_METRIC.namespace}","${FSX_READ_METRIC.name}","${FSX_READ_METRIC.dimension}"`);
    expect(text).toContain(`"cdk-training-io","${SHARD_PACKER_METRICS.records}","service","shard-packer"`);
    expect(text).toContain(`"cdk-training-io","${SHARD_PACKER_METRICS.inputMegabytesPerSecond}","service","shard-packer"`);
    expect(text).toContain('"AWS/States","ExecutionsFailed"');
  });

  test('draws the diagnosis thresholds, scaled to the instance\'s GPUs and vCPUs, and the cache\'s baseline', () => {
    // GIVEN: 8 GPUs and 96 vCPUs per instance, a 600 MB/s cache
    const body = dashboardBody(withCache());
    // WHEN
    const annotations = body.widgets.flatMap((w: any) => w.properties.annotations?.horizontal ?? []).map((a: any) => a.value);
    // THEN
    expect(annotations).toEqual(expect.arrayContaining([0.7 * 800, 0.9 * 9600, 0.1, 600]));
  });

  test('code that declares no loader metrics gets no loader graphs and no loader metrics in the diagnosis', () => {
    const built = build({}, { container: testContainer() });
    expect(JSON.stringify(dashboardBody(built))).not.toContain('train:samples_per_second');
    const variables = functionNamed(built.template, 'job-diagnoser').Properties.Environment.Variables;
    expect(variables.LOADER_SAMPLES_METRIC).toBeUndefined();
  });
});

describe('TrainingPipeline: options', () => {
  test('names the jobs with the given prefix and sends the diagnosis events to the given bus', () => {
    const app = testApp();
    const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
    const raw = new s3.Bucket(stack, 'Raw');
    const pipeline = new TrainingPipeline(stack, 'Pipeline', {
      dataset: new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/' }),
      training: { instance: TrainingInstance.G5_2XLARGE, jobNamePrefix: 'resnet' },
      eventBus: new events.EventBus(stack, 'Bus'),
      shardsChannel: { inputMode: InputMode.FAST_FILE },
    });
    const request = stack.resolve(pipeline.trainingJob.renderRequest());
    expect(request['TrainingJobName.$']).toBe("States.Format('resnet-{}', $$.Execution.Name)");
    expect(request.InputDataConfig[0]).toMatchObject({ InputMode: 'FastFile', DataSource: { S3DataSource: { S3DataDistributionType: 'FullyReplicated' } } });
    const variables = functionNamed(Template.fromStack(stack), 'job-diagnoser').Properties.Environment.Variables;
    expect(variables.EVENT_BUS_NAME).toEqual({ Ref: stack.getLogicalId(pipeline.eventBus.node.defaultChild as any) });
  });

  test('refuses shardsChannel together with datasetCache', () => {
    expect(() => withCache({ shardsChannel: { inputMode: InputMode.PIPE } })).toThrow(/ShardsChannelWithCache/);
  });

  test('a TrainingJob refuses run-time hyperparameters that are not a path', () => {
    const { stack } = build();
    expect(() => new TrainingJob(stack, 'Other', { instance: TrainingInstance.G5_2XLARGE, hyperparametersAtRunTime: '$.hyperparameters' }))
      .toThrow(/HyperparametersAtRunTimeNotAPath/);
  });
});
