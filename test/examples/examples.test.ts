import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tar from 'tar';
import { PACKING_ENV } from '../../lib/contract/handler-environment';
import type { SynthesizedStack} from '../support/cloud-assembly';
import {
  annotations, apiModelProblems, assetProblems, synthesizedStacks, trainingJobRequests, validationViolations,
} from '../support/cloud-assembly';

const EXAMPLES = ['shards-pipe-g4dn', 'fsx-cache-p3dn', 'nvme-file-dali', 'pipeline-fsx', 'custom-model', 'segmentation'];

/** Cloud assembly directories by example, each synthesized once for this file. */
const synthesized = new Map<string, string>();

/**
 * Runs `examples/<name>/app.ts` as `cdk synth` does (the app writes its cloud assembly to
 * CDK_OUTDIR), with `cdk-training-io` resolved to this repository's lib/ (jest.config.js).
 */
function synthExample(name: string): string {
  const done = synthesized.get(name);
  if (done) return done;
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), `example-${name}-`));
  const previous = process.env.CDK_OUTDIR;
  process.env.CDK_OUTDIR = outdir;
  try {
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- isolateModules takes a synchronous function: the app runs fresh
      require(`../../examples/${name}/app`);
    });
  } finally {
    if (previous === undefined) delete process.env.CDK_OUTDIR;
    else process.env.CDK_OUTDIR = previous;
  }
  synthesized.set(name, outdir);
  return outdir;
}

/** The one stack of an example and the CreateTrainingJob request of its training state machine. */
function onlyTrainingRequest(stack: SynthesizedStack): any {
  const requests = Object.values(stack.template.Resources)
    .filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine')
    .flatMap((machine) => trainingJobRequests(machine.Properties!.DefinitionString).map(([, request]) => request));
  expect(requests).toHaveLength(1);
  return requests[0];
}

function resourcesOfType(stack: SynthesizedStack, type: string): any[] {
  return Object.values(stack.template.Resources).filter((resource) => resource.Type === type);
}

afterAll(() => synthesized.forEach((outdir) => fs.rmSync(outdir, { recursive: true, force: true })));

describe.each(EXAMPLES)('example %s', (name) => {
  let outdir: string;
  let stack: SynthesizedStack;

  beforeAll(() => {
    outdir = synthExample(name);
    const stacks = synthesizedStacks(outdir);
    expect(stacks).toHaveLength(1);
    stack = stacks[0];
  });

  test('synthesizes with cdk-nag AwsSolutions run as a validation plugin and no finding left', () => {
    expect(validationViolations(outdir)).toEqual([]);
  });

  test('leaves no warning: nothing in it wastes GPU hours', () => {
    expect(annotations(outdir)).toEqual([]);
  });

  test('stages every asset it names in the cloud assembly', () => {
    expect(assetProblems(outdir)).toEqual([]);
  });

  test('sends CreateTrainingJob requests and FSx resources the official API models accept, from valid state machines', () => {
    expect(apiModelProblems(stack)).toEqual([]);
  });
});

describe('what each example sets up', () => {
  test('shards-pipe-g4dn: a packing state machine, then 4 × ml.g4dn.12xlarge in Pipe mode, ShardedByS3Key, reshuffled', () => {
    const stack = synthesizedStacks(synthExample('shards-pipe-g4dn'))[0];
    const request = onlyTrainingRequest(stack);
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.g4dn.12xlarge', InstanceCount: 4 });
    expect(request.InputDataConfig.map((c: any) => [c.ChannelName, c.InputMode])).toEqual([['train', 'Pipe'], ['index', 'File']]);
    expect(request.InputDataConfig[0]).toMatchObject({
      ShuffleConfig: { Seed: 42 },
      DataSource: { S3DataSource: { S3DataDistributionType: 'ShardedByS3Key' } },
    });
    expect(resourcesOfType(stack, 'AWS::Lambda::Function')).toHaveLength(3);
    expect(resourcesOfType(stack, 'AWS::StepFunctions::StateMachine')).toHaveLength(2);
  });

  test('fsx-cache-p3dn: 2 × ml.p3dn.24xlarge read the current version in File mode from an FSx for Lustre cache of the packed dataset', () => {
    const stack = synthesizedStacks(synthExample('fsx-cache-p3dn'))[0];
    const request = onlyTrainingRequest(stack);
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.p3dn.24xlarge', InstanceCount: 2 });
    for (const channel of request.InputDataConfig) {
      expect(channel).toMatchObject({ InputMode: 'File', DataSource: { FileSystemDataSource: { FileSystemType: 'FSxLustre' } } });
    }
    expect(resourcesOfType(stack, 'AWS::FSx::FileSystem')).toHaveLength(1);
    // One association: the dataset's root, every version under it (the reader follows the manifest).
    expect(resourcesOfType(stack, 'AWS::FSx::DataRepositoryAssociation').map((a) => a.Properties.FileSystemPath)).toEqual(['/dataset']);
  });

  test('pipeline-fsx: one state machine packs, imports into FSx for Lustre, trains 2 × ml.p3dn.24xlarge from it and diagnoses the job', () => {
    const stack = synthesizedStacks(synthExample('pipeline-fsx'))[0];
    const request = onlyTrainingRequest(stack);
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.p3dn.24xlarge', InstanceCount: 2 });
    expect(request.InputDataConfig[0]).toMatchObject({ InputMode: 'File', DataSource: { FileSystemDataSource: { FileSystemType: 'FSxLustre' } } });
    expect(resourcesOfType(stack, 'AWS::FSx::FileSystem')).toHaveLength(1);
    expect(resourcesOfType(stack, 'AWS::SNS::Topic')).toHaveLength(1);
    expect(resourcesOfType(stack, 'AWS::CloudWatch::Dashboard')).toHaveLength(1);
    // The planner, packer and finalizer of the dataset, and the diagnoser.
    expect(resourcesOfType(stack, 'AWS::Lambda::Function')).toHaveLength(4);
  });

  test('nvme-file-dali: 2 × ml.p4d.24xlarge download to NVMe in File mode and run the DALI image built from container/dali', () => {
    const outdir = synthExample('nvme-file-dali');
    const request = onlyTrainingRequest(synthesizedStacks(outdir)[0]);
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2 });
    expect(request.InputDataConfig.map((c: any) => c.InputMode)).toEqual(['File', 'File']);
    expect(request.HyperParameters).toMatchObject({ loader: 'dali', dali_threads: expect.any(String) });
    const images = Object.values<any>(JSON.parse(fs.readFileSync(path.join(outdir, 'NvmeDali.assets.json'), 'utf8')).dockerImages);
    expect(images).toHaveLength(1);
    expect(fs.readFileSync(path.join(outdir, images[0].source.directory, 'Dockerfile'), 'utf8')).toMatch(/nvidia-dali/);
  });

  test('custom-model: its own train.py with the readers beside it on the PyTorch image, spot with checkpoints, the readers\' metric lines', () => {
    const outdir = synthExample('custom-model');
    const request = onlyTrainingRequest(synthesizedStacks(outdir)[0]);
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.g5.2xlarge', InstanceCount: 1 });
    expect(request.InputDataConfig.map((c: any) => [c.ChannelName, c.InputMode])).toEqual([['train', 'FastFile'], ['index', 'File']]);
    expect(request).toMatchObject({ EnableManagedSpotTraining: true, CheckpointConfig: { LocalPath: '/opt/ml/checkpoints' } });
    expect(request.HyperParameters).toMatchObject({ sagemaker_program: 'train.py' });
    expect(request.AlgorithmSpecification.MetricDefinitions.map((m: any) => m.Name))
      .toEqual(['train:samples_per_second', 'train:data_wait_fraction', 'train:loss', 'val:loss', 'val:accuracy']);
    const files = Object.values<any>(JSON.parse(fs.readFileSync(path.join(outdir, 'CustomModel.assets.json'), 'utf8')).files);
    const code = files.filter((asset) => asset.source.path.endsWith('.tar.gz'));
    expect(code).toHaveLength(1);
    const entries: string[] = [];
    tar.t({ file: path.join(outdir, code[0].source.path), sync: true, onReadEntry: (entry) => entries.push(entry.path) });
    expect(entries).toEqual(expect.arrayContaining(['train.py', 'shardio/__init__.py', 'shardio/torch/dataset.py', 'shardio/torch/checkpoint.py']));
    expect(entries.filter((entry) => !entry.startsWith('shardio/'))).toEqual(['train.py']);
  });

  test('segmentation: packs the prepared samples on AWS without labels, then trains its own train.py and model.py, the readers beside them', () => {
    const outdir = synthExample('segmentation');
    const stack = synthesizedStacks(outdir)[0];
    const request = onlyTrainingRequest(stack);
    expect(request.ResourceConfig).toEqual({ InstanceType: 'ml.g5.xlarge', InstanceCount: 1 });
    expect(request.InputDataConfig.map((c: any) => [c.ChannelName, c.InputMode])).toEqual([['train', 'File'], ['index', 'File']]);
    expect(request.HyperParameters).toMatchObject({ sagemaker_program: 'train.py' });
    // The planner, packer and finalizer of the dataset; the planner groups the three parts into samples.
    const functions = resourcesOfType(stack, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(3);
    expect(functions.map((f) => f.Properties.Environment.Variables).filter((variables) => variables[PACKING_ENV.parts]))
      .toEqual([expect.objectContaining({ [PACKING_ENV.parts]: 'json,mask.png,png', [PACKING_ENV.labels]: 'none' })]);
    const files = Object.values<any>(JSON.parse(fs.readFileSync(path.join(outdir, 'Segmentation.assets.json'), 'utf8')).files);
    const code = files.filter((asset) => asset.source.path.endsWith('.tar.gz'));
    expect(code).toHaveLength(1);
    const entries: string[] = [];
    tar.t({ file: path.join(outdir, code[0].source.path), sync: true, onReadEntry: (entry) => entries.push(entry.path) });
    expect(entries).toContain('shardio/__init__.py');
    expect(entries.filter((entry) => !entry.startsWith('shardio/')).sort()).toEqual(['model.py', 'train.py']);
  });
});
