import * as path from 'path';
import { Duration, Lazy, Size, Stack, Token } from 'aws-cdk-lib';
import { Annotations, Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type {
  TrainingJobProps} from '../../lib';
import {
  ChannelCompression,
  FileSystemAccessMode,
  InputMode,
  RecordWrapper,
  S3DataDistribution,
  TrainingChannel,
  TrainingCode,
  TrainingContainer,
  TrainingInstance,
  TrainingJob
} from '../../lib';
import { ApiModel } from '../support/api-model';
import { TEST_IMAGE_URI, testContainer, trainingTestStack, vpcWithPublicSubnets } from '../support/stacks';

const CODE_DIRECTORY = path.join(__dirname, '..', 'fixtures', 'training-code');
const FILE_SYSTEM_ID = 'fs-0123456789abcdef0';
const GB = 1e9;

type JobOptions = Partial<TrainingJobProps>;

/** A job on ml.g5.2xlarge with the test image, plus whatever the test sets. */
function newJob(stack: Stack, options: JobOptions = {}, id = 'Job'): TrainingJob {
  return new TrainingJob(stack, id, { instance: TrainingInstance.G5_2XLARGE, container: testContainer(), ...options });
}

/** The CreateTrainingJob request the task sends, resolved. */
function requestOf(job: TrainingJob): any {
  return Stack.of(job).resolve(job.renderRequest());
}

/** Where the request breaks the official SageMaker API model. */
function apiViolations(job: TrainingJob) {
  return ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', requestOf(job));
}

function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as any);
}

/** The statements of the policy attached to the role whose logical id starts with `rolePrefix`. */
function policyStatements(stack: Stack, rolePrefix: string): any[] {
  const statements = new Capture();
  Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
    Roles: [{ Ref: Match.stringLikeRegexp(`^${rolePrefix}`) }],
    PolicyDocument: { Statement: statements },
  });
  return statements.asArray();
}

function stateMachineFor(stack: Stack, job: TrainingJob): sfn.StateMachine {
  return new sfn.StateMachine(stack, 'StateMachine', { definitionBody: sfn.DefinitionBody.fromChainable(job) });
}

describe('TrainingJob', () => {
  describe('request', () => {
    test('renders the image, instance, output path and a per-run job name', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { channels: [TrainingChannel.fromBucket('train', bucket, 'shards/')] }, 'Train ResNet');

      // THEN
      const request = requestOf(job);
      expect(request).toMatchObject({
        'TrainingJobName.$': "States.Format('train-resnet-{}', States.UUID())",
        'RoleArn': { 'Fn::GetAtt': [logicalId(stack, job.role), 'Arn'] },
        'AlgorithmSpecification': { TrainingImage: TEST_IMAGE_URI, TrainingInputMode: 'File' },
        'OutputDataConfig': {
          S3OutputPath: { 'Fn::Join': ['', ['s3://', { Ref: logicalId(stack, job.outputBucket) }, '/training-output/']] },
        },
        'ResourceConfig': { InstanceType: 'ml.g5.2xlarge', InstanceCount: 1 },
        'StoppingCondition': { MaxRuntimeInSeconds: 86400 },
      });
      expect(request.StoppingCondition).not.toHaveProperty('MaxWaitTimeInSeconds');
      expect(request).not.toHaveProperty('EnableManagedSpotTraining');
      expect(request).not.toHaveProperty('CheckpointConfig');
      expect(request).not.toHaveProperty('RetryStrategy');
      expect(request).not.toHaveProperty('Tags');
      expect(request).not.toHaveProperty('Environment');
      expect(apiViolations(job)).toEqual([]);
    });

    test('renders no InputDataConfig and File mode without channels', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const request = requestOf(newJob(stack));

      // THEN
      expect(request).not.toHaveProperty('InputDataConfig');
      expect(request.AlgorithmSpecification.TrainingInputMode).toEqual('File');
    });

    test('takes the training input mode from the first channel', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const request = requestOf(newJob(stack, {
        channels: [
          TrainingChannel.fromBucket('train', bucket, 'train/', { inputMode: InputMode.FAST_FILE }),
          TrainingChannel.fromBucket('validation', bucket, 'validation/', { inputMode: InputMode.FILE }),
        ],
      }));

      // THEN
      expect(request.AlgorithmSpecification.TrainingInputMode).toEqual('FastFile');
      expect(request.InputDataConfig.map((c: any) => c.InputMode)).toEqual(['FastFile', 'File']);
    });

    test('uses the PyTorch Deep Learning Container of the stack region by default', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = new TrainingJob(stack, 'Job', { instance: TrainingInstance.G5_2XLARGE });

      // THEN
      expect(requestOf(job).AlgorithmSpecification.TrainingImage)
        .toEqual('763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312');
      expect(apiViolations(job)).toEqual([]);
    });

    test('renders the entrypoint, arguments, metrics, environment, retries, warm pool and tags', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, {
        container: TrainingContainer.fromImageUri(TEST_IMAGE_URI, { entrypoint: ['python', '/opt/train.py'], arguments: ['--epochs', '90'] }),
        metricDefinitions: [{ name: 'train:loss', regex: 'loss=([0-9.]+)' }],
        environment: { NCCL_DEBUG: 'INFO' },
        retryAttempts: 2,
        keepAlivePeriod: Duration.minutes(30),
        tags: { team: 'vision' },
      });

      // THEN
      expect(requestOf(job)).toMatchObject({
        AlgorithmSpecification: {
          ContainerEntrypoint: ['python', '/opt/train.py'],
          ContainerArguments: ['--epochs', '90'],
          MetricDefinitions: [{ Name: 'train:loss', Regex: 'loss=([0-9.]+)' }],
        },
        Environment: { NCCL_DEBUG: 'INFO' },
        RetryStrategy: { MaximumRetryAttempts: 2 },
        ResourceConfig: { KeepAlivePeriodInSeconds: 1800 },
        Tags: [{ Key: 'team', Value: 'vision' }],
      });
      expect(apiViolations(job)).toEqual([]);
    });
  });

  describe('API model', () => {
    test('a multi-node Pipe job with sharded, shuffled, compressed data is valid', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const job = newJob(stack, {
        instance: TrainingInstance.P4D_24XLARGE,
        instanceCount: 4,
        channels: [
          TrainingChannel.fromBucket('train', bucket, 'shards/train/', {
            inputMode: InputMode.PIPE,
            distribution: S3DataDistribution.SHARDED_BY_S3_KEY,
            shuffleSeed: 1234,
            recordWrapper: RecordWrapper.RECORDIO,
            compression: ChannelCompression.GZIP,
            contentType: 'application/x-recordio',
          }),
          TrainingChannel.fromBucket('validation', bucket, 'shards/validation/', { inputMode: InputMode.PIPE }),
        ],
        hyperparameters: { epochs: '90', lr: '0.1' },
        maxRuntime: Duration.days(28),
        enableNetworkIsolation: true,
        keepAlivePeriod: Duration.hours(6),
      });

      // THEN
      expect(apiViolations(job)).toEqual([]);
    });

    test('a spot job with checkpoints, an FSx channel in a pinned subnet and a KMS key on EBS storage is valid', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);
      const key = new kms.Key(stack, 'Key');

      // WHEN
      const job = newJob(stack, {
        instance: TrainingInstance.P3_2XLARGE,
        vpc,
        subnet: vpc.privateSubnets[0],
        encryptionKey: key,
        useSpotInstances: true,
        maxRuntime: Duration.hours(12),
        channels: [
          TrainingChannel.fromFileSystem('train', {
            fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/imagenet', accessMode: FileSystemAccessMode.READ_ONLY,
          }),
          TrainingChannel.fromBucket('validation', bucket, 'validation/', { datasetSize: Size.gibibytes(20) }),
        ],
        metricDefinitions: [{ name: 'val:acc', regex: 'val_acc=([0-9.]+)' }],
        environment: { NCCL_DEBUG: 'INFO', PYTHONUNBUFFERED: '1' },
        tags: { project: 'resnet', 'cost-center': '1234' },
        retryAttempts: 3,
      });

      // THEN
      expect(apiViolations(job)).toEqual([]);
    });

    test('a job running code from an asset on the default container is valid', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const job = new TrainingJob(stack, 'Job', {
        instance: TrainingInstance.G4DN_12XLARGE,
        code: TrainingCode.fromAsset(CODE_DIRECTORY, { program: 'train.py' }),
        channels: [TrainingChannel.fromBucket('train', bucket, 'train/', { datasetSize: Size.bytes(2000 * GB) })],
        hyperparameters: { batch_size: '256' },
      });

      // THEN
      expect(requestOf(job).InputDataConfig[0].InputMode).toEqual('FastFile');
      expect(apiViolations(job)).toEqual([]);
    });
  });

  describe('accelerators', () => {
    const cpuInstance = TrainingInstance.of('ml.c5.xlarge', { vcpus: 4, memoryGiB: 8 });

    test('rejects an instance without GPUs or Trainium devices', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { instance: cpuInstance })).toThrow(/InstanceWithoutAccelerator/);
    });

    test('accepts an instance without accelerators when allowed', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: cpuInstance, allowInstanceWithoutAccelerator: true });

      // THEN
      expect(requestOf(job).ResourceConfig).toEqual({ InstanceType: 'ml.c5.xlarge', InstanceCount: 1, VolumeSizeInGB: 100 });
    });

    test('accepts a Trainium instance with a container of its own', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { instance: TrainingInstance.TRN1_32XLARGE })).not.toThrow();
    });

    test.each([
      ['the PyTorch GPU container', () => TrainingContainer.pytorch(), /GpuContainerOnTrainium.*ml\.trn1\.32xlarge has 16 Trainium.*TrainingContainer\.pytorch\(\) \(pytorch-training:/],
      ['the DALI container', () => TrainingContainer.dali(), /GpuContainerOnTrainium.*TrainingContainer\.dali\(\).*use a Neuron container/],
    ])('refuses %s on Trainium, naming what to use instead', (_name, container, error) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { instance: TrainingInstance.TRN1_32XLARGE, container: container() })).toThrow(error);
    });

    test('refuses the default container on Trainium: the default is the PyTorch GPU image', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => new TrainingJob(stack, 'Job', { instance: TrainingInstance.TRN2_48XLARGE })).toThrow(/GpuContainerOnTrainium/);
    });
  });

  describe('instance count', () => {
    test.each([0, 1.5, 10001])('rejects %p instances', (instanceCount) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { instanceCount })).toThrow(/InvalidInstanceCount/);
    });

    test.each([1, 10000])('accepts %p instances', (instanceCount) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instanceCount });

      // THEN
      expect(requestOf(job).ResourceConfig.InstanceCount).toEqual(instanceCount);
    });

    test('skips the check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { instanceCount: Token.asNumber(Lazy.number({ produce: () => 0 })) })).not.toThrow();
    });
  });

  describe('channels', () => {
    function s3Channels(bucket: s3.IBucket, count: number): TrainingChannel[] {
      return Array.from({ length: count }, (_, i) => TrainingChannel.fromBucket(`channel${i}`, bucket, `data/${i}/`));
    }

    test('rejects 21 channels', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { channels: s3Channels(bucket, 21) })).toThrow(/TooManyChannels/);
    });

    test('accepts 20 channels', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { channels: s3Channels(bucket, 20) });

      // THEN
      expect(requestOf(job).InputDataConfig).toHaveLength(20);
    });

    test('rejects two channels with the same name', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channels = [
        TrainingChannel.fromBucket('train', bucket, 'a/'),
        TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/b' }),
      ];

      // WHEN / THEN
      expect(() => newJob(stack, { channels })).toThrow(/DuplicateChannelName/);
    });

    test('warns about ShardedByS3Key on one instance', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      newJob(stack, { channels: [TrainingChannel.fromBucket('train', bucket, 'a/', { distribution: S3DataDistribution.SHARDED_BY_S3_KEY })] });

      // THEN
      Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('shardedByS3KeyOnOneInstance'));
    });

    test('does not warn about ShardedByS3Key on several instances', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      newJob(stack, {
        instanceCount: 2,
        channels: [TrainingChannel.fromBucket('train', bucket, 'a/', { distribution: S3DataDistribution.SHARDED_BY_S3_KEY })],
      });

      // THEN
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('shardedByS3KeyOnOneInstance'));
    });

    test.each([InputMode.FILE, InputMode.FAST_FILE])('warns about a shuffle seed in %s mode', (inputMode) => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      newJob(stack, { channels: [TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode, shuffleSeed: 7 })] });

      // THEN
      Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('shuffleOutsidePipeMode'));
    });

    test('does not warn about a shuffle seed in Pipe mode', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      newJob(stack, { channels: [TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.PIPE, shuffleSeed: 7 })] });

      // THEN
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('shuffleOutsidePipeMode'));
    });
  });

  describe('stopping condition and spot', () => {
    test.each([
      ['0 seconds', Duration.seconds(0)],
      ['28 days and 1 second', Duration.days(28).plus(Duration.seconds(1))],
    ])('rejects a maxRuntime of %s', (_what, maxRuntime) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { maxRuntime })).toThrow(/InvalidMaxRuntime/);
    });

    test.each([
      ['1 second', Duration.seconds(1), 1],
      ['28 days', Duration.days(28), 2419200],
    ])('accepts a maxRuntime of %s', (_what, maxRuntime, seconds) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { maxRuntime });

      // THEN
      expect(requestOf(job).StoppingCondition).toEqual({ MaxRuntimeInSeconds: seconds });
    });

    test('skips the maxRuntime check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const maxRuntime = Duration.seconds(Token.asNumber(Lazy.number({ produce: () => 0 })));

      // WHEN / THEN
      expect(() => newJob(stack, { maxRuntime })).not.toThrow();
    });

    test('rejects maxWaitTime without spot instances', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { maxWaitTime: Duration.days(2) })).toThrow(/MaxWaitTimeRequiresSpot/);
    });

    test('rejects a maxWaitTime shorter than maxRuntime', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { useSpotInstances: true, maxRuntime: Duration.hours(2), maxWaitTime: Duration.hours(1) }))
        .toThrow(/MaxWaitTimeBelowMaxRuntime/);
    });

    test('rejects a maxWaitTime shorter than the default maxRuntime of 1 day', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { useSpotInstances: true, maxWaitTime: Duration.hours(12) })).toThrow(/MaxWaitTimeBelowMaxRuntime/);
    });

    test('asks for maxWaitTime when spot runs with a deploy-time maxRuntime', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const maxRuntime = Duration.seconds(Token.asNumber({ Ref: 'Runtime' }));

      // WHEN / THEN
      expect(() => newJob(stack, { useSpotInstances: true, maxRuntime })).toThrow(/MaxWaitTimeNeededForTokenRuntime/);
      expect(() => newJob(stack, { useSpotInstances: true, maxRuntime, maxWaitTime: Duration.days(2) }, 'WithWait')).not.toThrow();
    });

    test('accepts a maxWaitTime equal to maxRuntime', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { useSpotInstances: true, maxRuntime: Duration.hours(2), maxWaitTime: Duration.hours(2) });

      // THEN
      expect(requestOf(job).StoppingCondition).toEqual({ MaxRuntimeInSeconds: 7200, MaxWaitTimeInSeconds: 7200 });
    });

    test('skips the maxWaitTime comparison for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const maxWaitTime = Duration.seconds(Token.asNumber(Lazy.number({ produce: () => 60 })));

      // WHEN / THEN
      expect(() => newJob(stack, { useSpotInstances: true, maxRuntime: Duration.hours(2), maxWaitTime })).not.toThrow();
    });

    test('spot defaults: twice the runtime to wait, and checkpoints per execution in the output bucket', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { useSpotInstances: true, maxRuntime: Duration.hours(3) });

      // THEN
      const request = requestOf(job);
      expect(request.EnableManagedSpotTraining).toBe(true);
      expect(request.StoppingCondition).toEqual({ MaxRuntimeInSeconds: 10800, MaxWaitTimeInSeconds: 21600 });
      expect(request.CheckpointConfig).toEqual({
        'S3Uri.$': {
          'Fn::Join': ['', ["States.Format('s3://", { Ref: logicalId(stack, job.outputBucket) }, "/checkpoints/job/{}/', $$.Execution.Name)"]],
        },
        'LocalPath': '/opt/ml/checkpoints',
      });
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('spotWithoutCheckpoints'));
    });

    test('spot grants the role read and write on the checkpoint prefix', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { useSpotInstances: true });

      // THEN
      const bucketArn = { 'Fn::GetAtt': [logicalId(stack, job.outputBucket), 'Arn'] };
      expect(policyStatements(stack, 'JobExecutionRole')).toContainEqual(expect.objectContaining({
        Action: expect.arrayContaining(['s3:GetObject*', 's3:PutObject', 's3:DeleteObject*']),
        Resource: expect.arrayContaining([{ 'Fn::Join': ['', [bucketArn, '/checkpoints/job/*']] }]),
      }));
    });

    test('warns about spot instances without checkpoints', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { useSpotInstances: true, enableCheckpoints: false });

      // THEN
      expect(requestOf(job)).not.toHaveProperty('CheckpointConfig');
      Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('spotWithoutCheckpoints'));
    });

    test('renders checkpoints without spot when asked', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { enableCheckpoints: true });

      // THEN
      const request = requestOf(job);
      expect(request.CheckpointConfig.LocalPath).toEqual('/opt/ml/checkpoints');
      expect(request).not.toHaveProperty('EnableManagedSpotTraining');
      expect(request.StoppingCondition).not.toHaveProperty('MaxWaitTimeInSeconds');
    });

    test.each([
      ['the reference code, which saves checkpoints', () => TrainingCode.reference(), true],
      ['code that declares it saves checkpoints', () => TrainingCode.fromAsset(CODE_DIRECTORY, { program: 'train.py', savesCheckpoints: true }), true],
      ['code that does not say', () => TrainingCode.fromAsset(CODE_DIRECTORY, { program: 'train.py' }), false],
    ])('checkpoints are on by default without spot for %s', (_name, code, expected) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { container: TrainingContainer.pytorch(), code: code() });

      // THEN
      const request = requestOf(job);
      if (expected) expect(request.CheckpointConfig.LocalPath).toEqual('/opt/ml/checkpoints');
      else expect(request).not.toHaveProperty('CheckpointConfig');
      expect(request).not.toHaveProperty('EnableManagedSpotTraining');
    });

    test('the reference code with enableCheckpoints: false has none', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { container: TrainingContainer.pytorch(), enableCheckpoints: false });

      // THEN
      expect(requestOf(job)).not.toHaveProperty('CheckpointConfig');
    });
  });

  describe('warm pools and retries', () => {
    test('rejects a keepAlivePeriod over 6 hours', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { keepAlivePeriod: Duration.seconds(21601) })).toThrow(/InvalidKeepAlivePeriod/);
    });

    test.each([
      ['0 seconds', Duration.seconds(0), 0],
      ['6 hours', Duration.hours(6), 21600],
    ])('accepts a keepAlivePeriod of %s', (_what, keepAlivePeriod, seconds) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { keepAlivePeriod });

      // THEN
      expect(requestOf(job).ResourceConfig.KeepAlivePeriodInSeconds).toEqual(seconds);
    });

    test('skips the keepAlivePeriod check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const keepAlivePeriod = Duration.seconds(Token.asNumber(Lazy.number({ produce: () => 99999 })));

      // WHEN / THEN
      expect(() => newJob(stack, { keepAlivePeriod, useSpotInstances: true })).not.toThrow();
    });

    test('rejects a warm pool with spot instances', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { keepAlivePeriod: Duration.minutes(10), useSpotInstances: true })).toThrow(/KeepAliveWithSpot/);
    });

    test.each([0, 31, 1.5])('rejects %p retry attempts', (retryAttempts) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { retryAttempts })).toThrow(/InvalidRetryAttempts/);
    });

    test.each([1, 30])('accepts %p retry attempts', (retryAttempts) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { retryAttempts });

      // THEN
      expect(requestOf(job).RetryStrategy).toEqual({ MaximumRetryAttempts: retryAttempts });
    });

    test('skips the retry attempts check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { retryAttempts: Token.asNumber(Lazy.number({ produce: () => 99 })) })).not.toThrow();
    });
  });

  describe('job names', () => {
    test.each([
      ['27 characters', 'a'.repeat(27)],
      ['a leading hyphen', '-a'],
      ['a trailing hyphen', 'a-'],
      ['an underscore', 'a_b'],
      ['nothing', ''],
    ])('rejects a jobNamePrefix with %s', (_what, jobNamePrefix) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { jobNamePrefix })).toThrow(/InvalidJobNamePrefix/);
    });

    test.each([
      ['26 characters', 'a'.repeat(26)],
      ['inner hyphens', 'resnet--50'],
    ])('accepts a jobNamePrefix of %s', (_what, jobNamePrefix) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { jobNamePrefix });

      // THEN
      expect(requestOf(job)['TrainingJobName.$']).toEqual(`States.Format('${jobNamePrefix}-{}', States.UUID())`);
    });

    test('skips the jobNamePrefix check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { jobNamePrefix: Lazy.string({ produce: () => 'nightly' }) })).not.toThrow();
    });

    test.each([
      ['Train ResNet-50!', 'train-resnet-50'],
      ['__Job__', 'job'],
      ['A very long construct id for the nightly job', 'a-very-long-construct-id-f'],
      ['The long id ends in a gap here', 'the-long-id-ends-in-a-gap'],
      ['!!!', 'training'],
    ])('derives the prefix from the construct id %p', (id, prefix) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, {}, id);

      // THEN
      expect(job.jobNamePrefix).toEqual(prefix);
      expect(requestOf(job)['TrainingJobName.$']).toEqual(`States.Format('${prefix}-{}', States.UUID())`);
    });
  });

  describe('output', () => {
    test.each([
      ['a leading slash', '/models/'],
      ['more than 900 characters', `${'a'.repeat(900)}/`],
    ])('rejects an outputPrefix with %s', (_what, outputPrefix) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { outputPrefix })).toThrow(/InvalidOutputPrefix/);
    });

    test('writes to the given bucket and prefix', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { outputBucket: bucket, outputPrefix: 'models/resnet/' });

      // THEN
      expect(requestOf(job).OutputDataConfig).toEqual({
        S3OutputPath: { 'Fn::Join': ['', ['s3://', { Ref: logicalId(stack, bucket) }, '/models/resnet/']] },
      });
      Template.fromStack(stack).resourceCountIs('AWS::S3::Bucket', 1);
    });

    test('skips the outputPrefix check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { outputPrefix: Lazy.string({ produce: () => '/models/' }) })).not.toThrow();
    });
  });

  describe('network', () => {
    test('rejects subnet together with vpcSubnets', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);

      // WHEN / THEN
      expect(() => newJob(stack, { vpc, subnet: vpc.privateSubnets[0], vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } }))
        .toThrow(/SubnetAndVpcSubnets/);
    });

    test.each([
      ['subnet', (vpc: ec2.Vpc): JobOptions => ({ subnet: vpc.privateSubnets[0] })],
      ['vpcSubnets', (): JobOptions => ({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } })],
    ])('rejects %s without vpc', (_what, options) => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);

      // WHEN / THEN
      expect(() => newJob(stack, options(vpc))).toThrow(/SubnetsWithoutVpc/);
    });

    test.each([0, 6])('rejects %p security groups', (count) => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);
      const securityGroups = Array.from({ length: count }, (_, i) => new ec2.SecurityGroup(stack, `Group${i}`, { vpc }));

      // WHEN / THEN
      expect(() => newJob(stack, { vpc, securityGroups })).toThrow(/InvalidSecurityGroupCount/);
    });

    test('uses the given security groups and creates none', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);
      const securityGroups = Array.from({ length: 5 }, (_, i) => new ec2.SecurityGroup(stack, `Group${i}`, { vpc }));

      // WHEN
      const job = newJob(stack, { vpc, securityGroups });

      // THEN
      expect(requestOf(job).VpcConfig.SecurityGroupIds).toEqual(securityGroups.map((g) => stack.resolve(g.securityGroupId)));
      Template.fromStack(stack).resourceCountIs('AWS::EC2::SecurityGroup', 5);
    });

    test('rejects public subnets', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);

      // WHEN / THEN
      expect(() => newJob(stack, { vpc, vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC } })).toThrow(/PublicSubnet/);
    });

    test('rejects a pinned public subnet', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);

      // WHEN / THEN
      expect(() => newJob(stack, { vpc, subnet: vpc.publicSubnets[0] })).toThrow(/PublicSubnet/);
    });

    test('uses the private subnets of a given VPC by default', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);

      // WHEN
      const job = newJob(stack, { vpc });

      // THEN
      expect(requestOf(job).VpcConfig.Subnets).toEqual(vpc.privateSubnets.map((s) => stack.resolve(s.subnetId)));
      expect(job.vpc).toBe(vpc);
      Template.fromStack(stack).resourceCountIs('AWS::EC2::VPC', 1);
    });

    test('renders exactly the pinned subnet', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const vpc = vpcWithPublicSubnets(stack);

      // WHEN
      const job = newJob(stack, { vpc, subnet: vpc.privateSubnets[1] });

      // THEN
      expect(requestOf(job).VpcConfig.Subnets).toEqual([stack.resolve(vpc.privateSubnets[1].subnetId)]);
    });
  });

  describe('environment, hyperparameters, metrics and tags', () => {
    test.each([
      ['101 variables', Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`VAR_${i}`, 'x']))],
      ['a name starting with a digit', { '1VAR': 'x' }],
      ['a name with a hyphen', { 'MY-VAR': 'x' }],
      ['a value of 513 characters', { VAR: 'x'.repeat(513) }],
    ])('rejects an environment with %s', (_what, environment) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { environment })).toThrow(/InvalidEnvironment/);
    });

    test('accepts 100 variables with values of 512 characters', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const environment = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`VAR_${i}`, 'x'.repeat(512)]));

      // WHEN
      const job = newJob(stack, { environment });

      // THEN
      expect(Object.keys(requestOf(job).Environment)).toHaveLength(100);
      expect(apiViolations(job)).toEqual([]);
    });

    test('skips the environment value check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { environment: { VAR: Lazy.string({ produce: () => 'x'.repeat(513) }) } })).not.toThrow();
    });

    test('rejects 101 hyperparameters once num_workers is added', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const hyperparameters = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`hp${i}`, '1']));

      // WHEN / THEN
      expect(() => newJob(stack, { hyperparameters })).toThrow(/InvalidHyperparameters/);
    });

    test('accepts 100 hyperparameters including num_workers', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const hyperparameters = Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`hp${i}`, '1']));

      // WHEN
      const job = newJob(stack, { hyperparameters });

      // THEN
      expect(Object.keys(requestOf(job).HyperParameters)).toHaveLength(100);
    });

    test.each([
      ['a value of 2501 characters', { config: 'x'.repeat(2501) }],
      ['a name of 257 characters', { ['k'.repeat(257)]: '1' }],
    ])('rejects a hyperparameter with %s', (_what, hyperparameters) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { hyperparameters })).toThrow(/InvalidHyperparameters/);
    });

    test('accepts a hyperparameter value of 2500 characters', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { hyperparameters: { config: 'x'.repeat(2500) } });

      // THEN
      expect(apiViolations(job)).toEqual([]);
    });

    test('skips the hyperparameter value check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { hyperparameters: { config: Lazy.string({ produce: () => 'x'.repeat(2501) }) } })).not.toThrow();
    });

    test.each([
      ['an empty name', [{ name: '', regex: 'loss=(\\S+)' }]],
      ['an empty regex', [{ name: 'loss', regex: '' }]],
      ['a regex of 501 characters', [{ name: 'loss', regex: 'x'.repeat(501) }]],
      ['41 definitions', Array.from({ length: 41 }, (_, i) => ({ name: `m${i}`, regex: 'x=(\\S+)' }))],
    ])('rejects metric definitions with %s', (_what, metricDefinitions) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { metricDefinitions })).toThrow(/InvalidMetricDefinition/);
    });

    test('accepts 40 metric definitions', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const metricDefinitions = Array.from({ length: 40 }, (_, i) => ({ name: `m${i}`, regex: 'x=(\\S+)' }));

      // WHEN
      const job = newJob(stack, { metricDefinitions });

      // THEN
      expect(apiViolations(job)).toEqual([]);
    });

    test('skips the metric regex check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { metricDefinitions: [{ name: 'loss', regex: Lazy.string({ produce: () => '' }) }] })).not.toThrow();
    });

    test.each([
      ['the aws: prefix', { 'aws:owner': 'me' }],
      ['the AWS: prefix in capitals', { 'AWS:owner': 'me' }],
      ['an empty key', { '': 'me' }],
      ['a key of 129 characters', { ['k'.repeat(129)]: 'me' }],
      ['a value of 257 characters', { owner: 'v'.repeat(257) }],
      ['51 tags', Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`tag${i}`, 'v']))],
    ])('rejects tags with %s', (_what, tags) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { tags })).toThrow(/InvalidTags/);
    });

    test('accepts 50 tags with keys of 128 and values of 256 characters', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const tags = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padStart(128, 'k'), 'v'.repeat(256)]));

      // WHEN
      const job = newJob(stack, { tags });

      // THEN
      expect(requestOf(job).Tags).toHaveLength(50);
      expect(apiViolations(job)).toEqual([]);
    });

    test('skips the tag value check for a token', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { tags: { owner: Lazy.string({ produce: () => 'v'.repeat(257) }) } })).not.toThrow();
    });
  });

  describe('storage', () => {
    test('rejects a volume key on an instance with local NVMe', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const key = new kms.Key(stack, 'Key');

      // WHEN / THEN
      expect(() => newJob(stack, { instance: TrainingInstance.G5_2XLARGE, volumeEncryptionKey: key })).toThrow(/VolumeKeyOnNvmeInstance/);
    });

    test('renders the volume key and size on an EBS-backed instance', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const key = new kms.Key(stack, 'Key');

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.P3_2XLARGE, volumeEncryptionKey: key });

      // THEN
      expect(requestOf(job).ResourceConfig).toEqual({
        InstanceType: 'ml.p3.2xlarge',
        InstanceCount: 1,
        VolumeSizeInGB: 100,
        VolumeKmsKeyId: { 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] },
      });
      expect(policyStatements(stack, 'JobExecutionRole')).toContainEqual({
        Action: 'kms:CreateGrant', Effect: 'Allow', Resource: { 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] },
      });
    });

    test('uses the encryption key for the volume of an EBS-backed instance', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const key = new kms.Key(stack, 'Key');

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.P3_2XLARGE, encryptionKey: key });

      // THEN
      expect(requestOf(job).ResourceConfig.VolumeKmsKeyId).toEqual({ 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] });
    });

    test('renders neither volume size nor volume key on an instance with local NVMe', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const key = new kms.Key(stack, 'Key');

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G5_2XLARGE, encryptionKey: key });

      // THEN
      expect(requestOf(job).ResourceConfig).toEqual({ InstanceType: 'ml.g5.2xlarge', InstanceCount: 1 });
      expect(apiViolations(job)).toEqual([]);
    });

    test('warns that volumeSize is ignored on an instance with local NVMe', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G5_2XLARGE, volumeSize: Size.gibibytes(500) });

      // THEN
      expect(requestOf(job).ResourceConfig).not.toHaveProperty('VolumeSizeInGB');
      Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('volumeSizeIgnoredOnNvme'));
    });

    test('renders the given volume size on an EBS-backed instance', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.P3_2XLARGE, volumeSize: Size.gibibytes(250) });

      // THEN
      expect(requestOf(job).ResourceConfig.VolumeSizeInGB).toEqual(250);
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('volumeSizeIgnoredOnNvme'));
    });

    test('rejects File-mode data larger than the local NVMe (500 GB on the 450 GB of ml.g5.2xlarge)', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.FILE, datasetSize: Size.bytes(500 * GB) });

      // WHEN / THEN
      expect(() => newJob(stack, { channels: [channel] })).toThrow(/FileModeDataTooLarge/);
    });

    test('rejects File-mode channels that only together exceed the local NVMe', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channels = [
        TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.FILE, datasetSize: Size.bytes(300 * GB) }),
        TrainingChannel.fromBucket('validation', bucket, 'b/', { inputMode: InputMode.FILE, datasetSize: Size.bytes(200 * GB) }),
      ];

      // WHEN / THEN
      expect(() => newJob(stack, { channels })).toThrow(/FileModeDataTooLarge/);
    });

    test.each([
      ['450 GB on one instance', 1, S3DataDistribution.FULLY_REPLICATED, 450],
      ['500 GB ShardedByS3Key over 2 instances', 2, S3DataDistribution.SHARDED_BY_S3_KEY, 500],
    ])('accepts File-mode data of %s on ml.g5.2xlarge', (_what, instanceCount, distribution, gb) => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.FILE, distribution, datasetSize: Size.bytes(gb * GB) });

      // WHEN
      const job = newJob(stack, { instanceCount, channels: [channel] });

      // THEN
      expect(requestOf(job).InputDataConfig[0].InputMode).toEqual('File');
    });

    test('does not count FastFile, Pipe or file-system channels against the local NVMe', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channels = [
        TrainingChannel.fromBucket('fast', bucket, 'a/', { inputMode: InputMode.FAST_FILE, datasetSize: Size.bytes(5000 * GB) }),
        TrainingChannel.fromBucket('pipe', bucket, 'b/', { inputMode: InputMode.PIPE, datasetSize: Size.bytes(5000 * GB) }),
        TrainingChannel.fromFileSystem('fsx', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/data' }),
      ];

      // WHEN / THEN
      expect(() => newJob(stack, { channels })).not.toThrow();
    });

    test('rejects File-mode data larger than the given EBS volume', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.FILE, datasetSize: Size.gibibytes(200) });

      // WHEN / THEN
      expect(() => newJob(stack, { instance: TrainingInstance.P3_2XLARGE, volumeSize: Size.gibibytes(100), channels: [channel] }))
        .toThrow(/FileModeDataTooLarge/);
    });

    test('chooses FastFile by default when the data does not fit on the local NVMe', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { datasetSize: Size.bytes(500 * GB) });

      // WHEN
      const request = requestOf(newJob(stack, { channels: [channel] }));

      // THEN
      expect(request.InputDataConfig[0].InputMode).toEqual('FastFile');
      expect(request.AlgorithmSpecification.TrainingInputMode).toEqual('FastFile');
      Annotations.fromStack(stack).hasInfo('*', Match.stringLikeRegexp("channel 'train' uses FastFile"));
    });

    test.each([
      ['the data fits', 1, S3DataDistribution.FULLY_REPLICATED, 350],
      ['each instance gets a shard that fits', 2, S3DataDistribution.SHARDED_BY_S3_KEY, 700],
    ])('chooses File by default when %s (with 10 %% + 50 GiB to spare)', (_what, instanceCount, distribution, gb) => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { distribution, datasetSize: Size.bytes(gb * GB) });

      // WHEN
      const request = requestOf(newJob(stack, { instanceCount, channels: [channel] }));

      // THEN
      expect(request.InputDataConfig[0].InputMode).toEqual('File');
    });

    test('chooses FastFile for a default channel that only fits with the channels before it missing (2 × 300 GB on 450 GB NVMe)', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channels = [
        TrainingChannel.fromBucket('train', bucket, 'a/', { datasetSize: Size.bytes(300 * GB) }),
        TrainingChannel.fromBucket('extra', bucket, 'b/', { datasetSize: Size.bytes(300 * GB) }),
      ];

      // WHEN
      const request = requestOf(newJob(stack, { channels }));

      // THEN
      expect(request.InputDataConfig.map((c: any) => c.InputMode)).toEqual(['File', 'FastFile']);
    });

    test('skips the per-instance size check when the instance count is only known at deploy time', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', {
        inputMode: InputMode.FILE, distribution: S3DataDistribution.SHARDED_BY_S3_KEY, datasetSize: Size.bytes(5000 * GB),
      });

      // WHEN / THEN
      expect(() => newJob(stack, { channels: [channel], instanceCount: Token.asNumber({ Ref: 'Count' }) })).not.toThrow();
    });

    test('chooses File by default when the data size is unknown', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();

      // WHEN
      const request = requestOf(newJob(stack, { channels: [TrainingChannel.fromBucket('train', bucket, 'a/')] }));

      // THEN
      expect(request.InputDataConfig[0].InputMode).toEqual('File');
    });

    test('grows the default EBS volume with the File-mode data (1 TiB on ml.p3.2xlarge)', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.FILE, datasetSize: Size.tebibytes(1) });

      // WHEN
      const request = requestOf(newJob(stack, { instance: TrainingInstance.P3_2XLARGE, channels: [channel] }));

      // THEN: 1024 GiB + 10 % + 50 GiB
      expect(request.InputDataConfig[0].InputMode).toEqual('File');
      expect(request.ResourceConfig.VolumeSizeInGB).toEqual(1177);
    });

    describe('the I/O planner\'s storage rule for the default input mode', () => {
      /** (450 GB − 50 GiB) / 1.1: the File-mode data the 450 GB NVMe of ml.g5.2xlarge holds with headroom. */
      const G5_2XLARGE_LIMIT = Math.floor((450 * GB - 50 * 2 ** 30) / 1.1);

      test.each<[string, number, string]>([
        ['at the limit', G5_2XLARGE_LIMIT, 'File'],
        ['one byte over it', G5_2XLARGE_LIMIT + 1, 'FastFile'],
      ])('local NVMe holds the data + 10 %% + 50 GiB: %s of ml.g5.2xlarge', (_what, bytes, mode) => {
        // GIVEN
        const { stack, bucket } = trainingTestStack();
        const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { datasetSize: Size.bytes(bytes) });

        // WHEN
        const request = requestOf(newJob(stack, { channels: [channel] }));

        // THEN
        expect(request.InputDataConfig[0].InputMode).toEqual(mode);
      });

      test.each<[string, number, string]>([
        ['100 GB', 100 * GB, 'File'],
        ['one byte more', 100 * GB + 1, 'FastFile'],
      ])('the default EBS volume takes File-mode data up to SageMaker\'s 100 GB: %s on ml.p3.2xlarge', (_what, bytes, mode) => {
        // GIVEN
        const { stack, bucket } = trainingTestStack();
        const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { datasetSize: Size.bytes(bytes) });

        // WHEN
        const request = requestOf(newJob(stack, { instance: TrainingInstance.P3_2XLARGE, channels: [channel] }));

        // THEN
        expect(request.InputDataConfig[0].InputMode).toEqual(mode);
        if (mode === 'FastFile') {
          Annotations.fromStack(stack).hasInfo('*', Match.stringLikeRegexp('more than the 100 GB SageMaker suggests for File mode'));
        }
      });

      test.each<[number, string]>([
        [130, 'File'],
        [140, 'FastFile'],
      ])('a sized EBS volume holds the data + 10 %% + 50 GiB: %d GiB on 200 GiB', (gib, mode) => {
        // GIVEN
        const { stack, bucket } = trainingTestStack();
        const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { datasetSize: Size.gibibytes(gib) });

        // WHEN
        const request = requestOf(newJob(stack, { instance: TrainingInstance.P3_2XLARGE, volumeSize: Size.gibibytes(200), channels: [channel] }));

        // THEN
        expect(request.InputDataConfig[0].InputMode).toEqual(mode);
      });
    });

    test.each<[string, JobOptions, number, boolean]>([
      ['400 GB on the 450 GB NVMe of ml.g5.2xlarge', {}, 400 * GB, true],
      ['350 GB on it', {}, 350 * GB, false],
      ['180 GiB on a 200 GiB EBS volume', { instance: TrainingInstance.P3_2XLARGE, volumeSize: Size.gibibytes(200) }, 180 * 2 ** 30, true],
      ['1 TiB on the default EBS volume, sized with the headroom', { instance: TrainingInstance.P3_2XLARGE }, 2 ** 40, false],
    ])('warns about File-mode data that leaves less than 10 %% + 50 GiB of the storage: %s', (_what, options, bytes, warns) => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { inputMode: InputMode.FILE, datasetSize: Size.bytes(bytes) });

      // WHEN
      newJob(stack, { ...options, channels: [channel] });

      // THEN
      const annotations = Annotations.fromStack(stack);
      if (warns) annotations.hasWarning('*', Match.stringLikeRegexp('leaves less than 10 % \\+ 50 GiB.*cdk-training-io:fileModeWithoutHeadroom'));
      else annotations.hasNoWarning('*', Match.stringLikeRegexp('fileModeWithoutHeadroom'));
    });

    test('keeps the default EBS volume at 100 GiB for small data', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const channel = TrainingChannel.fromBucket('train', bucket, 'a/', { datasetSize: Size.gibibytes(10) });

      // WHEN
      const request = requestOf(newJob(stack, { instance: TrainingInstance.P3_2XLARGE, channels: [channel] }));

      // THEN
      expect(request.ResourceConfig.VolumeSizeInGB).toEqual(100);
    });
  });

  describe('code and data loaders', () => {
    test('rejects code with a container entrypoint that bypasses the training toolkit', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, {
        container: TrainingContainer.fromImageUri(TEST_IMAGE_URI, { entrypoint: ['python', 'train.py'] }),
        code: TrainingCode.fromAsset(CODE_DIRECTORY, { program: 'train.py' }),
      })).toThrow(/CodeIgnoredByEntrypoint/);
    });

    test('passes the code to the toolkit as hyperparameters', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { code: TrainingCode.fromAsset(CODE_DIRECTORY, { program: 'train.py' }) });

      // THEN
      expect(requestOf(job).HyperParameters).toEqual({
        num_workers: '7',
        sagemaker_program: 'train.py',
        sagemaker_submit_directory: expect.stringMatching(/^s3:\/\/cdk-[a-z0-9]+-assets-111111111111-us-east-1\/[0-9a-f]{64}\.gz$/),
        sagemaker_region: 'us-east-1',
      });
    });

    test('runs the reference code on the PyTorch container by default, publishing the metrics it prints', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { container: TrainingContainer.pytorch() });

      // THEN
      const request = requestOf(job);
      expect(request.HyperParameters).toEqual({
        num_workers: '7',
        sagemaker_program: 'train.py',
        sagemaker_submit_directory: expect.stringMatching(/^s3:\/\/cdk-[a-z0-9]+-assets-111111111111-us-east-1\/[0-9a-f]{64}\.gz$/),
        sagemaker_region: 'us-east-1',
      });
      expect(request.AlgorithmSpecification.MetricDefinitions).toEqual([
        { Name: 'train:samples_per_second', Regex: 'samples/s=([0-9.]+)' },
        { Name: 'train:data_wait_fraction', Regex: 'data_wait=([0-9.]+)' },
        { Name: 'train:loss', Regex: ' loss=([0-9.]+)' },
        { Name: 'val:loss', Regex: 'val_loss=([0-9.]+)' },
        { Name: 'val:accuracy', Regex: 'val_accuracy=([0-9.]+)' },
      ]);
      expect(apiViolations(job)).toEqual([]);
    });

    test('passes dali_threads sized for the instance with the DALI container', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE, container: TrainingContainer.dali() });

      // THEN
      expect(requestOf(job).HyperParameters).toMatchObject({
        num_workers: '11',
        dali_threads: String(job.dataLoaderSizing.daliThreads),
        sagemaker_program: 'train.py',
      });
    });

    test('runs no code and publishes no metrics on a custom image unless given', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const request = requestOf(newJob(stack));

      // THEN
      expect(request.HyperParameters).toEqual({ num_workers: '7' });
      expect(request.AlgorithmSpecification).not.toHaveProperty('MetricDefinitions');
    });

    test('publishes the metrics the given code declares, and the job\'s own metric definitions win', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const code = TrainingCode.fromAsset(CODE_DIRECTORY, { program: 'train.py', metricDefinitions: [{ name: 'acc', regex: 'acc=([0-9.]+)' }] });

      // WHEN
      const declared = requestOf(newJob(stack, { code }, 'Declared'));
      const own = requestOf(newJob(stack, { code, metricDefinitions: [] }, 'Own'));
      const reference = requestOf(newJob(stack, { code: TrainingCode.reference() }, 'Reference'));

      // THEN
      expect(declared.AlgorithmSpecification.MetricDefinitions).toEqual([{ Name: 'acc', Regex: 'acc=([0-9.]+)' }]);
      expect(own.AlgorithmSpecification).not.toHaveProperty('MetricDefinitions');
      expect(reference.HyperParameters.sagemaker_program).toEqual('train.py');
      expect(reference.AlgorithmSpecification.MetricDefinitions).toHaveLength(5);
    });

    test('sizes num_workers from the instance (11 per GPU on ml.g4dn.12xlarge)', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE });

      // THEN
      expect(requestOf(job).HyperParameters).toEqual({ num_workers: '11' });
      expect(job.dataLoaderSizing.loaderWorkers).toEqual(11);
    });

    test('uses loaderWorkers for num_workers, and says so in its cluster', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE, instanceCount: 2, loaderWorkers: 4 });

      // THEN
      expect(requestOf(job).HyperParameters.num_workers).toEqual('4');
      expect(job.cluster).toEqual({ instance: TrainingInstance.G4DN_12XLARGE, instanceCount: 2, processesPerInstance: 4, loaderWorkers: 4 });
    });

    test('sizes the cluster\'s loader workers when none are given', () => {
      const { stack } = trainingTestStack();
      const job = newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE });
      expect(job.cluster).toMatchObject({ instanceCount: 1, processesPerInstance: 4, loaderWorkers: 11 });
    });

    test('still takes the deprecated dataLoaderWorkers, but not with loaderWorkers', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE, dataLoaderWorkers: 3 });

      // THEN
      expect(requestOf(job).HyperParameters.num_workers).toEqual('3');
      expect(job.cluster.loaderWorkers).toEqual(3);
      expect(() => newJob(stack, { loaderWorkers: 3, dataLoaderWorkers: 4 }, 'Both'))
        .toThrow(/LoaderWorkersTwice.*give loaderWorkers or its deprecated name dataLoaderWorkers, not both, got 3 and 4/);
    });

    test('lets the num_workers hyperparameter win, with a warning to set loaderWorkers instead', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE, loaderWorkers: 4, hyperparameters: { num_workers: '2' } });

      // THEN
      expect(requestOf(job).HyperParameters).toEqual({ num_workers: '2' });
      Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('num_workers \\(2\\) replaces the 4 loader workers.*set loaderWorkers instead.*cdk-training-io:numWorkersOverridden'));
    });

    test('gives no num_workers warning when the hyperparameters leave it alone', () => {
      const { stack } = trainingTestStack();
      newJob(stack, { hyperparameters: { epochs: '3' } });
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('numWorkersOverridden'));
    });

    test.each([-1, 1.5, 1025])('rejects %p loader workers, under either name', (loaderWorkers) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { loaderWorkers })).toThrow(/InvalidDataLoaderWorkers.*loaderWorkers must be a whole number between 0 and 1024/);
      expect(() => newJob(stack, { dataLoaderWorkers: loaderWorkers }, 'Old')).toThrow(/InvalidDataLoaderWorkers.*dataLoaderWorkers must be/);
    });

    test.each<[number | undefined, string | undefined]>([
      [0, 'noLoaderWorkers'],
      [12, undefined],
      [13, 'loaderWorkersAboveCpus'],
      [undefined, undefined],
    ])('warns about %p data-loader workers on the 12 vCPUs per process of ml.g4dn.12xlarge: %s', (loaderWorkers, code) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      newJob(stack, { instance: TrainingInstance.G4DN_12XLARGE, loaderWorkers });

      // THEN
      const annotations = Annotations.fromStack(stack);
      for (const id of ['noLoaderWorkers', 'loaderWorkersAboveCpus']) {
        if (id === code) annotations.hasWarning('*', Match.stringLikeRegexp(`use 11.*cdk-training-io:${id}`));
        else annotations.hasNoWarning('*', Match.stringLikeRegexp(id));
      }
    });

    test.each([0, 1024])('accepts %p data-loader workers', (loaderWorkers) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { loaderWorkers });

      // THEN
      expect(requestOf(job).HyperParameters.num_workers).toEqual(String(loaderWorkers));
    });
  });

  describe('integration pattern', () => {
    test('rejects WAIT_FOR_TASK_TOKEN', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN / THEN
      expect(() => newJob(stack, { integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN })).toThrow(/UnsupportedIntegrationPattern/);
    });

    test('runs the job with createTrainingJob.sync by default', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const state = stack.resolve(newJob(stack).toStateJson());

      // THEN
      expect(state).toMatchObject({
        Type: 'Task',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':states:::sagemaker:createTrainingJob.sync']] },
        Parameters: { 'TrainingJobName.$': "States.Format('job-{}', States.UUID())" },
      });
    });

    test('starts the job with createTrainingJob for REQUEST_RESPONSE', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const state = stack.resolve(newJob(stack, { integrationPattern: sfn.IntegrationPattern.REQUEST_RESPONSE }).toStateJson());

      // THEN
      expect(state.Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':states:::sagemaker:createTrainingJob']] });
    });

    test('sends the rendered request as the state parameters', () => {
      // GIVEN
      const { stack, bucket } = trainingTestStack();
      const job = newJob(stack, { useSpotInstances: true, channels: [TrainingChannel.fromBucket('train', bucket, 'a/')] });

      // WHEN
      const state = stack.resolve(job.toStateJson());

      // THEN
      expect(state.Parameters).toEqual(requestOf(job));
    });
  });

  describe('secure defaults', () => {
    test('creates a VPC with isolated subnets only, an S3 gateway endpoint and flow logs', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      newJob(stack);

      // THEN
      const template = Template.fromStack(stack);
      template.resourceCountIs('AWS::EC2::VPC', 1);
      template.resourceCountIs('AWS::EC2::NatGateway', 0);
      template.resourceCountIs('AWS::EC2::InternetGateway', 0);
      template.resourceCountIs('AWS::EC2::EIP', 0);
      template.resourceCountIs('AWS::EC2::Route', 0);
      template.resourceCountIs('AWS::EC2::Subnet', 2);
      template.allResourcesProperties('AWS::EC2::Subnet', {
        MapPublicIpOnLaunch: false,
        Tags: Match.arrayWith([{ Key: 'aws-cdk:subnet-type', Value: 'Isolated' }]),
      });
      template.resourceCountIs('AWS::EC2::VPCEndpoint', 1);
      template.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Gateway' });
      const endpoints = template.findResources('AWS::EC2::VPCEndpoint');
      expect(Object.values(endpoints).map((e) => JSON.stringify(e.Properties.ServiceName))).toEqual([expect.stringMatching(/\.s3"/)]);
      template.hasResourceProperties('AWS::EC2::FlowLog', { ResourceType: 'VPC', TrafficType: 'REJECT', LogDestinationType: 'cloud-watch-logs' });
      // A year, and no key unless one is given: Control Tower's ct-cloudwatch-pr-2.
      template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365, KmsKeyId: Match.absent() });
    });

    test('creates a security group that lets the instances talk to each other and only HTTPS out', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack);

      // THEN
      const template = Template.fromStack(stack);
      const groupId = stack.resolve(job.connections.securityGroups[0].securityGroupId);
      template.resourceCountIs('AWS::EC2::SecurityGroup', 1);
      template.hasResourceProperties('AWS::EC2::SecurityGroup', {
        SecurityGroupIngress: Match.absent(),
        SecurityGroupEgress: [{ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443, Description: Match.anyValue() }],
      });
      template.resourceCountIs('AWS::EC2::SecurityGroupIngress', 1);
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { IpProtocol: '-1', GroupId: groupId, SourceSecurityGroupId: groupId });
      template.resourceCountIs('AWS::EC2::SecurityGroupEgress', 1);
      template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { IpProtocol: '-1', GroupId: groupId, DestinationSecurityGroupId: groupId });
      expect(JSON.stringify(template.findResources('AWS::EC2::SecurityGroupIngress'))).not.toContain('0.0.0.0/0');
    });

    test('renders the job security group and subnets in VpcConfig', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack);

      // THEN
      expect(requestOf(job).VpcConfig).toEqual({
        SecurityGroupIds: [stack.resolve(job.connections.securityGroups[0].securityGroupId)],
        Subnets: job.vpc.isolatedSubnets.map((s) => stack.resolve(s.subnetId)),
      });
    });

    test('creates an encrypted, SSL-only, private output bucket that is retained', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack);

      // THEN
      const template = Template.fromStack(stack);
      const bucketId = logicalId(stack, job.outputBucket);
      template.hasResource('AWS::S3::Bucket', {
        Properties: Match.objectLike({
          BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true,
          },
          OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
          // Control Tower's ct-s3-pr-11 and ct-s3-pr-4, with no custom-resource Lambda for the latter
          VersioningConfiguration: { Status: 'Enabled' },
          NotificationConfiguration: { EventBridgeConfiguration: { EventBridgeEnabled: true } },
          LoggingConfiguration: Match.absent(),
        }),
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
      expect(Object.keys(template.findResources('AWS::S3::Bucket', { DeletionPolicy: 'Retain' }))).toContain(bucketId);
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          })]),
        },
      });
      expect(requestOf(job).OutputDataConfig).not.toHaveProperty('KmsKeyId');
    });

    test('encrypts the output with the given KMS key', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const key = new kms.Key(stack, 'Key');

      // WHEN
      const job = newJob(stack, { encryptionKey: key });

      // THEN
      const keyArn = { 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] };
      expect(requestOf(job).OutputDataConfig.KmsKeyId).toEqual(keyArn);
      Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn }, BucketKeyEnabled: true }],
        },
      });
      expect(policyStatements(stack, 'JobExecutionRole')).toContainEqual(expect.objectContaining({
        Action: expect.arrayContaining(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*']),
        Resource: keyArn,
      }));
    });

    test.each([
      [1, false],
      [2, true],
    ])('encrypts inter-container traffic for %p instances: %p', (instanceCount, encrypted) => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instanceCount });

      // THEN
      expect(requestOf(job).EnableInterContainerTrafficEncryption).toBe(encrypted);
    });

    test('lets the user turn inter-container encryption off', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack, { instanceCount: 2, interContainerTrafficEncryption: false });

      // THEN
      expect(requestOf(job).EnableInterContainerTrafficEncryption).toBe(false);
    });

    test('does not isolate the network by default, and does when asked', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const open = newJob(stack, {}, 'Open');
      const isolated = newJob(stack, { enableNetworkIsolation: true }, 'Isolated');

      // THEN
      expect(requestOf(open).EnableNetworkIsolation).toBe(false);
      expect(requestOf(isolated).EnableNetworkIsolation).toBe(true);
    });

    test('creates an execution role that only SageMaker can assume, without managed policies', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack);

      // THEN
      const roles = Template.fromStack(stack).findResources('AWS::IAM::Role');
      const role = roles[logicalId(stack, job.role)];
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'sagemaker.amazonaws.com' } },
      ]);
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    });

    test('grants the execution role write on the output prefix and pull on the image', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      const job = newJob(stack);

      // THEN
      const statements = policyStatements(stack, 'JobExecutionRole');
      expect(statements).toContainEqual(expect.objectContaining({
        Action: expect.arrayContaining(['s3:PutObject']),
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(stack, job.outputBucket), 'Arn'] }, '/training-output/*']] },
      }));
      expect(statements).toContainEqual(expect.objectContaining({
        Action: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
        Resource: 'arn:aws:ecr:us-east-1:123456789012:repository/train',
      }));
      expect(JSON.stringify(statements)).not.toMatch(/checkpoints/);
    });

    test('uses a given execution role and creates none', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const role = new iam.Role(stack, 'MyRole', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });

      // WHEN
      const job = newJob(stack, { role });

      // THEN
      expect(job.role).toBe(role);
      expect(requestOf(job).RoleArn).toEqual({ 'Fn::GetAtt': [logicalId(stack, role), 'Arn'] });
      Template.fromStack(stack).resourceCountIs('AWS::IAM::Role', 2); // MyRole and the flow-log role
    });
  });

  describe('governed accounts', () => {
    test('writes the output bucket\'s server access logs to accessLogsBucket, under the bucket\'s path', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const accessLogs = s3.Bucket.fromBucketName(stack, 'AccessLogs', 'my-access-logs');

      // WHEN
      const job = newJob(stack, { accessLogsBucket: accessLogs });

      // THEN
      Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
        LoggingConfiguration: { DestinationBucketName: 'my-access-logs', LogFilePrefix: 'Stack/TrainingNetwork/OutputBucket/' },
      });
      // a job without a vpc writes to the stack's shared bucket
      expect(job.outputBucket.node.path).toBe('Stack/TrainingNetwork/OutputBucket');
    });

    test('keeps the flow logs of the VPC it creates as long as logRetention says, encrypted with encryptionKey', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const key = new kms.Key(stack, 'Key');

      // WHEN
      newJob(stack, { logRetention: logs.RetentionDays.TWO_YEARS, encryptionKey: key });

      // THEN
      const template = Template.fromStack(stack);
      template.hasResourceProperties('AWS::Logs::LogGroup', {
        RetentionInDays: 731,
        KmsKeyId: { 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] },
      });
      // CloudWatch Logs may use the key for this account's log groups, and only those
      template.hasResourceProperties('AWS::KMS::Key', {
        KeyPolicy: {
          Statement: Match.arrayWith([Match.objectLike({
            Principal: { Service: 'logs.us-east-1.amazonaws.com' },
            Condition: { ArnLike: {
              'kms:EncryptionContext:aws:logs:arn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':logs:us-east-1:111111111111:log-group:*']] },
            } },
          })]),
        },
      });
    });
  });

  describe('state machine permissions', () => {
    test('scope the SageMaker calls to the lower-cased job name prefix and pass only the execution role', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const job = newJob(stack, { jobNamePrefix: 'ResNet50' });

      // WHEN
      stateMachineFor(stack, job);

      // THEN
      const jobs = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:111111111111:training-job/resnet50-*']] };
      const statements = policyStatements(stack, 'StateMachineRole');
      expect(statements).toContainEqual(expect.objectContaining({
        Action: expect.arrayContaining(['sagemaker:CreateTrainingJob', 'sagemaker:DescribeTrainingJob', 'sagemaker:StopTrainingJob']),
        Effect: 'Allow',
        Resource: jobs,
      }));
      expect(statements).toContainEqual({
        Action: 'iam:PassRole',
        Condition: { StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' } },
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [logicalId(stack, job.role), 'Arn'] },
      });
      const sagemakerResources = statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('sagemaker:'))).map((s) => s.Resource);
      expect(sagemakerResources.every((r) => JSON.stringify(r) === JSON.stringify(jobs))).toBe(true);
      expect(JSON.stringify(statements)).not.toContain('sagemaker:AddTags');
    });

    test('allow the events rule that .sync needs', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      stateMachineFor(stack, newJob(stack));

      // THEN
      expect(policyStatements(stack, 'StateMachineRole')).toContainEqual({
        Action: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
        Effect: 'Allow',
        Resource: {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':events:us-east-1:111111111111:rule/StepFunctionsGetEventsForSageMakerTrainingJobsRule']],
        },
      });
    });

    test('do not allow the events rule for REQUEST_RESPONSE', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      stateMachineFor(stack, newJob(stack, { integrationPattern: sfn.IntegrationPattern.REQUEST_RESPONSE }));

      // THEN
      expect(JSON.stringify(policyStatements(stack, 'StateMachineRole'))).not.toContain('events:');
    });

    test('allow sagemaker:AddTags on the job names when the job has tags', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      stateMachineFor(stack, newJob(stack, { jobNamePrefix: 'nightly', tags: { team: 'vision' } }));

      // THEN
      expect(policyStatements(stack, 'StateMachineRole')).toContainEqual({
        Action: 'sagemaker:AddTags',
        Effect: 'Allow',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:111111111111:training-job/nightly-*']] },
      });
    });

    test('keep a token job name prefix intact in the job ARN', () => {
      // GIVEN
      const { stack } = trainingTestStack();
      const job = newJob(stack, { jobNamePrefix: Lazy.string({ produce: () => 'nightly' }) });

      // WHEN
      stateMachineFor(stack, job);

      // THEN
      const statements = JSON.stringify(policyStatements(stack, 'StateMachineRole'));
      expect(statements).toContain('training-job/nightly-*');
      expect(statements).not.toMatch(/token\[/i);
    });

    test('render the task into the state machine definition', () => {
      // GIVEN
      const { stack } = trainingTestStack();

      // WHEN
      stateMachineFor(stack, newJob(stack));

      // THEN
      const definition = JSON.stringify(Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine'));
      expect(definition).toContain('createTrainingJob.sync');
      expect(definition).toContain('\\"TrainingJobName.$\\":\\"States.Format(\'job-{}\', States.UUID())\\"');
    });
  });
});
