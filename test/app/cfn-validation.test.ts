import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { App } from 'aws-cdk-lib';
import { CfnResource, Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as fsx from 'aws-cdk-lib/aws-fsx';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { DISABLE_ASSET_STAGING_CONTEXT } from 'aws-cdk-lib/cx-api';
import {
  CacheSource, FileSystemType, InputMode, LoggedStateMachine, LustreDatasetCache, RecordLabels, S3DataDistribution,
  ShardedDataset, ShardFormat, TrainingChannel, TrainingInstance, TrainingJob, TrainingJobDiagnosis,
  TrainingNetwork, TrainingPipeline,
} from '../../lib';
import { ReferenceTrainingStack, SCENARIOS } from '../../bin/reference-stack';
import { cfnValidationFindings } from '../support/cloud-assembly';
import { CDK_VALIDATION_VARIABLE } from '../support/cfn-validation';
import { testApp, testContainer } from '../support/stacks';

/**
 * The one suite with aws-cdk-lib's built-in CloudFormation validation on: every template the
 * repository ships or documents is checked against the resource schemas and aws-cdk-lib's default
 * rules, and any finding, at any severity, fails here. The global setup turns the validation off for
 * every other suite (test/support/cfn-validation.ts says why); jest gives each suite a copy of the
 * environment, so turning it on here reaches this suite's syntheses alone.
 */
const inherited = process.env[CDK_VALIDATION_VARIABLE];
delete process.env[CDK_VALIDATION_VARIABLE];

const EXAMPLES_DIRECTORY = path.join(__dirname, '..', '..', 'examples');
/** Every example with a CDK app, found rather than listed: a new one is validated without anyone adding it here. */
const EXAMPLES = fs.readdirSync(EXAMPLES_DIRECTORY).filter((name) => fs.existsSync(path.join(EXAMPLES_DIRECTORY, name, 'app.ts'))).sort();

/** Cloud assembly folders to remove after the suite. */
const outdirs: string[] = [];
afterAll(() => outdirs.forEach((outdir) => fs.rmSync(outdir, { recursive: true, force: true })));

/** The validation's findings for the app's cloud assembly. */
function findingsOf(app: App): string[] {
  const assembly = app.synth();
  outdirs.push(assembly.directory);
  return cfnValidationFindings(assembly.directory);
}

/** A stack in us-east-1 of a fresh test app. */
function newStack(): Stack {
  return new Stack(testApp(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
}

/** A VPC of isolated subnets in 2 AZs, as the caches and the jobs in a VPC are tested. */
function isolatedVpc(stack: Stack): ec2.Vpc {
  return new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0, subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
}

/** One job reading `channels` in a logged state machine: the resources a job brings are the role, its policies and the log group. */
function jobStack(channels: (stack: Stack) => TrainingChannel[], vpc = false): Stack {
  const stack = newStack();
  const job = new TrainingJob(stack, 'Job', {
    instance: TrainingInstance.G5_2XLARGE, container: testContainer(), channels: channels(stack), ...(vpc ? { vpc: isolatedVpc(stack) } : {}),
  });
  new LoggedStateMachine(stack, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(job) });
  return stack;
}

/** An FSx for Lustre cache of packed/ of a bucket, of the given deployment type and options. */
function cacheStack(props: { deploymentType: fsx.LustreDeploymentType; kmsKey?: boolean; fileSystemTypeVersion?: fsx.FileSystemTypeVersion }): Stack {
  const stack = newStack();
  new LustreDatasetCache(stack, 'Cache', {
    vpc: isolatedVpc(stack),
    source: CacheSource.fromBucket(new s3.Bucket(stack, 'Data'), 'packed/'),
    deploymentType: props.deploymentType,
    fileSystemTypeVersion: props.fileSystemTypeVersion,
    kmsKey: props.kmsKey ? new kms.Key(stack, 'Key', { enableKeyRotation: true }) : undefined,
    datasetSize: Size.gibibytes(150),
    importedFileChunkSize: Size.mebibytes(256),
  });
  return stack;
}

/**
 * The constructs' configurations that the reference scenarios and the examples leave out, each
 * rendering different resources or properties: every deployment type of the cache, every input mode
 * and file system of a job's channels, a dataset of each format in a VPC with a customer key, the
 * pipeline without a cache, the diagnosis alone.
 */
const CONFIGURATIONS: Array<[string, () => Stack]> = [
  ['LustreDatasetCache SCRATCH_2', () => cacheStack({ deploymentType: fsx.LustreDeploymentType.SCRATCH_2 })],
  ['LustreDatasetCache PERSISTENT_1 with a customer key', () => cacheStack({ deploymentType: fsx.LustreDeploymentType.PERSISTENT_1, kmsKey: true })],
  ['LustreDatasetCache PERSISTENT_2 on Lustre 2.12 with a customer key', () => cacheStack({
    deploymentType: fsx.LustreDeploymentType.PERSISTENT_2, fileSystemTypeVersion: fsx.FileSystemTypeVersion.V_2_12, kmsKey: true,
  })],
  ['TrainingJob in File, FastFile and Pipe mode from a bucket', () => jobStack((stack) => {
    const bucket = new s3.Bucket(stack, 'Data');
    return [
      TrainingChannel.fromBucket('file', bucket, 'a/', { inputMode: InputMode.FILE }),
      TrainingChannel.fromBucket('fastfile', bucket, 'b/', { inputMode: InputMode.FAST_FILE }),
      TrainingChannel.fromBucket('pipe', bucket, 'c/', { inputMode: InputMode.PIPE, distribution: S3DataDistribution.SHARDED_BY_S3_KEY, shuffleSeed: 1 }),
    ];
  })],
  ['TrainingJob reading FSx for Lustre and EFS file systems in a VPC', () => jobStack(() => [
    TrainingChannel.fromFileSystem('lustre', { fileSystemId: 'fs-0123456789abcdef0', directoryPath: '/abcdefgh/data' }),
    TrainingChannel.fromFileSystem('efs', { fileSystemId: 'fs-0123456789abcdef1', directoryPath: '/data', fileSystemType: FileSystemType.EFS }),
  ], true)],
  ['ShardedDataset RecordIO without labels, in a VPC with a customer key', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    new ShardedDataset(stack, 'Packing', {
      sourceBucket: new s3.Bucket(stack, 'Raw'), sourcePrefix: 'raw/', format: ShardFormat.RECORDIO, labels: RecordLabels.NONE,
      encryptionKey: key, vpc: isolatedVpc(stack),
    });
    return stack;
  }],
  ['ShardedDataset TFRecord with a label file', () => {
    const stack = newStack();
    new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw'), sourcePrefix: 'raw/', labelFile: { key: 'raw/labels.csv' } });
    return stack;
  }],
  ['TrainingPipeline without a cache', () => {
    const stack = newStack();
    const raw = new s3.Bucket(stack, 'Raw');
    new TrainingPipeline(stack, 'Pipeline', {
      dataset: new ShardedDataset(stack, 'Dataset', { sourceBucket: raw, sourcePrefix: 'raw/', destinationBucket: raw, destinationPrefix: 'packed/' }),
      training: { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 },
    });
    return stack;
  }],
  ['TrainingJobDiagnosis of a job, with the library\'s training network', () => {
    const stack = newStack();
    const job = new TrainingJob(stack, 'Job', { instance: TrainingInstance.G5_2XLARGE, container: testContainer(), network: TrainingNetwork.of(stack) });
    new TrainingJobDiagnosis(stack, 'Diagnosis', { job });
    new LoggedStateMachine(stack, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(job) });
    return stack;
  }],
];

describe('aws-cdk-lib\'s CloudFormation validation', () => {
  test('is off in every other suite: the global setup set CDK_VALIDATION=false for the workers', () => {
    expect(inherited).toBe('false');
  });

  test('is on here: a property the resource schema does not have is a finding', () => {
    // GIVEN
    const stack = newStack();
    new CfnResource(stack, 'Bad', { type: 'AWS::S3::Bucket', properties: { NoSuchProperty: 'x' } });
    // WHEN
    const findings = findingsOf(stack.node.root as App);
    // THEN
    expect(findings).toEqual([expect.stringMatching(/at Stack\.template\.json\/Bad.*NoSuchProperty/)]);
  });

  test.each(SCENARIOS)('finds nothing in the reference app\'s scenario %s', (scenario) => {
    const app = testApp();
    new ReferenceTrainingStack(app, 'TrainingIoReference', { scenario });
    expect(findingsOf(app)).toEqual([]);
  });

  test.each(EXAMPLES)('finds nothing in example %s, synthesized by its app as `cdk synth` runs it', (name) => {
    // The example's own App reads this context: the same templates, without copying the handlers' bundles into each assembly.
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), `validated-${name}-`));
    outdirs.push(outdir);
    const previous = { CDK_OUTDIR: process.env.CDK_OUTDIR, CDK_CONTEXT_JSON: process.env.CDK_CONTEXT_JSON };
    process.env.CDK_OUTDIR = outdir;
    process.env.CDK_CONTEXT_JSON = JSON.stringify({ [DISABLE_ASSET_STAGING_CONTEXT]: true });
    try {
      // Each app once, in this suite's module registry: aws-cdk-lib and its validation engine are loaded once for all.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the app synthesizes as it loads
      require(path.join(EXAMPLES_DIRECTORY, name, 'app'));
    } finally {
      for (const [variable, value] of Object.entries(previous)) {
        if (value === undefined) delete process.env[variable];
        else process.env[variable] = value;
      }
    }
    expect(cfnValidationFindings(outdir)).toEqual([]);
  });

  test.each(CONFIGURATIONS)('finds nothing in %s', (_name, build) => {
    expect(findingsOf(build().node.root as App)).toEqual([]);
  });
});
