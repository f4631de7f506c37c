import * as fs from 'node:fs';
import * as path from 'node:path';
import { Annotations, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { createReferenceApp, DEFAULT_SCENARIO, ReferenceTrainingStack, Scenario, SCENARIOS } from '../../bin/reference-stack';
import { ApiModel } from '../support/api-model';
import { testApp } from '../support/stacks';

function synthScenario(scenario: Scenario): ReferenceTrainingStack {
  const app = testApp();
  return new ReferenceTrainingStack(app, 'Reference', { scenario });
}

/** The Parameters of the state machine's training task, as Step Functions will see them. */
function renderedRequest(stack: ReferenceTrainingStack): Record<string, unknown> {
  return stack.resolve(stack.job.renderRequest());
}

describe('reference app', () => {
  test.each(SCENARIOS)('scenario %s renders a CreateTrainingJob request the SageMaker API model accepts', (scenario) => {
    // GIVEN
    const stack = synthScenario(scenario);
    // WHEN
    const violations = ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', renderedRequest(stack));
    // THEN
    expect(violations).toEqual([]);
  });

  test.each(SCENARIOS)('scenario %s passes cdk-nag AwsSolutions with every accepted finding acknowledged', (scenario) => {
    // GIVEN
    const stack = synthScenario(scenario);
    // WHEN
    const report = new AwsSolutionsChecks(stack).validateScope(Stack.of(stack).node.root);
    // THEN
    const findings = report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(findings).toEqual([]);
  });

  test('pipe: 4 × ml.g4dn.12xlarge, Pipe + ShardedByS3Key + ShuffleConfig, 11 loader workers per GPU process', () => {
    const request = renderedRequest(synthScenario(Scenario.PIPE)) as any;
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.g4dn.12xlarge', InstanceCount: 4 });
    expect(request.InputDataConfig[0]).toMatchObject({
      ChannelName: 'train',
      InputMode: 'Pipe',
      ShuffleConfig: { Seed: 42 },
      // The current version of the dataset packed beforehand, through its ManifestFile.
      DataSource: { S3DataSource: { S3DataDistributionType: 'ShardedByS3Key', S3DataType: 'ManifestFile' } },
    });
    expect(request.HyperParameters.num_workers).toBe('11');
    expect(request.EnableInterContainerTrafficEncryption).toBe(true);
  });

  test('nvme: 1 × ml.g5.2xlarge in File mode with no EBS volume settings', () => {
    const request = renderedRequest(synthScenario(Scenario.NVME)) as any;
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.g5.2xlarge', InstanceCount: 1 });
    expect(request.InputDataConfig[0].InputMode).toBe('File');
    expect(request.HyperParameters.num_workers).toBe('7');
  });

  test('fastfile: 2 × ml.p4d.24xlarge, FastFile over the dataset\'s root, FullyReplicated (the loaders split the shards by rank)', () => {
    const request = renderedRequest(synthScenario(Scenario.FASTFILE)) as any;
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2 });
    expect(request.InputDataConfig[0]).toMatchObject({
      InputMode: 'FastFile',
      DataSource: { S3DataSource: { S3DataType: 'S3Prefix', S3DataDistributionType: 'FullyReplicated' } },
    });
  });

  test('packed: the pipe job reads the shards the ShardedDataset writes', () => {
    const stack = synthScenario(Scenario.PACKED);
    const request = renderedRequest(stack) as any;
    expect(stack.dataset?.destinationPrefix).toBe('packed/');
    // 4 instances × 4 GPU processes × 11 loader workers, from the job's cluster
    expect(stack.dataset?.consumers).toBe(176);
    expect(request.InputDataConfig[0].DataSource.S3DataSource).toMatchObject({ S3DataType: 'ManifestFile' });
    expect(JSON.stringify(request.InputDataConfig[0].DataSource.S3DataSource.S3Uri)).toContain('/packed/shards.manifest');
    expect(request.InputDataConfig[0]).toMatchObject({ InputMode: 'Pipe', ShuffleConfig: { Seed: 42 } });
    Template.fromStack(stack).resourceCountIs('AWS::Lambda::Function', 3);
  });

  test('fsx: 2 × ml.p3dn.24xlarge read the shards in File mode from a PERSISTENT_2 cache, pinned to its subnet', () => {
    const stack = synthScenario(Scenario.FSX);
    const request = renderedRequest(stack) as any;
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.p3dn.24xlarge', InstanceCount: 2 });
    expect(request.InputDataConfig[0]).toMatchObject({
      ChannelName: 'train',
      InputMode: 'File',
      DataSource: { FileSystemDataSource: { FileSystemType: 'FSxLustre', FileSystemAccessMode: 'ro' } },
    });
    // The cache's root: the dataset's root, whose manifest the reader follows.
    expect(JSON.stringify(request.InputDataConfig[0].DataSource.FileSystemDataSource.DirectoryPath)).toMatch(/LustreMountName"\]\}\]\]\}$/);
    expect(request.VpcConfig.Subnets).toEqual([stack.resolve(stack.cache!.subnet.subnetId)]);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::FSx::FileSystem', {
      FileSystemTypeVersion: '2.15',
      StorageCapacity: 2400,
      LustreConfiguration: Match.objectLike({ DeploymentType: 'PERSISTENT_2', PerUnitStorageThroughput: 1000 }),
    });
    template.hasResourceProperties('AWS::FSx::DataRepositoryAssociation', {
      FileSystemPath: '/',
      DataRepositoryPath: { 'Fn::Join': ['', ['s3://', Match.anyValue(), '/packed/']] },
      BatchImportMetaDataOnCreate: true,
    });
    template.resourceCountIs('AWS::EC2::VPC', 1);
  });

  test('nvme, with nothing standing but its buckets, is the default scenario, in bin/app.ts and in cdk.json', () => {
    expect(DEFAULT_SCENARIO).toBe(Scenario.NVME);
    expect(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context.scenario).toBe(DEFAULT_SCENARIO);
  });

  test('records no stack trace with an annotation, so `cdk synth` prints no location line of the library above it', () => {
    // GIVEN
    const app = createReferenceApp();
    const stack = new Stack(app, 'Annotated');
    // WHEN
    Annotations.of(stack).addInfo('sized');
    // THEN
    const messages = app.synth().getStackArtifact('Annotated').messages;
    expect(messages.map((message) => message.entry.data)).toEqual(['sized']);
    expect(messages.map((message) => message.entry.trace)).toEqual([undefined]);
  });

  test('pipeline: packs raw/ into shards, imports them into a PERSISTENT_2 cache, trains 2 × ml.p3dn.24xlarge on it, diagnoses', () => {
    const stack = synthScenario(Scenario.PIPELINE);
    const request = renderedRequest(stack) as any;
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.p3dn.24xlarge', InstanceCount: 2 });
    expect(request.InputDataConfig[0]).toMatchObject({
      ChannelName: 'train', InputMode: 'File', DataSource: { FileSystemDataSource: { FileSystemType: 'FSxLustre' } },
    });
    expect(request['TrainingJobName.$']).toBe("States.Format('pipeline-{}', $$.Execution.Name)");
    expect(stack.pipeline!.cache).toBe(stack.cache);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::FSx::DataRepositoryAssociation', 1);
    template.hasResourceProperties('AWS::FSx::DataRepositoryAssociation', { FileSystemPath: '/dataset' });
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasOutput('PipelineStateMachineArn', {});
    template.resourceCountIs('AWS::EC2::VPC', 1);
  });

  test.each(SCENARIOS)('scenario %s runs the job from a state machine with tracing and full logging', (scenario) => {
    const template = Template.fromStack(synthScenario(scenario));
    // The packing scenarios add the dataset's packing state machine to the training one.
    const packing = [Scenario.PACKED, Scenario.PIPELINE, Scenario.REGULATED].includes(scenario);
    template.resourceCountIs('AWS::StepFunctions::StateMachine', packing ? 2 : 1);
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL' },
    });
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.resourceCountIs('AWS::EC2::InternetGateway', 0);
  });
});
