import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Lazy, Stack } from 'aws-cdk-lib';
import { Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Construct } from 'constructs';
import { DLC_REGISTRY_ACCOUNTS } from '../../lib/training/private/dlc-registry';
import type { TrainingContainerConfig } from '../../lib/training/training-container';
import { TrainingContainer } from '../../lib/training/training-container';

const PULL_ACTIONS = ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'];

/** The nine regions the aws-cdk-lib 2.276.0 fact lacks, with the sagemaker-python-sdk accounts. */
const REGIONS_MISSING_FROM_FACT: Array<[string, string]> = [
  ['af-south-1', '626614931356'],
  ['ap-northeast-3', '364406365360'],
  ['ap-southeast-5', '550225433462'],
  ['ap-southeast-7', '590183813437'],
  ['ca-west-1', '204538143572'],
  ['il-central-1', '780543022126'],
  ['mx-central-1', '637423239942'],
  ['us-gov-east-1', '446045086412'],
  ['us-gov-west-1', '442386744353'],
];

interface TestStack {
  readonly app: App;
  readonly stack: Stack;
  readonly role: iam.Role;
}

function makeStack(region?: string): TestStack {
  const app = new App({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'training-container-')) });
  const stack = new Stack(app, 'Stack', region ? { env: { account: '111111111111', region } } : {});
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });
  return { app, stack, role };
}

function bind(container: TrainingContainer, { stack, role }: TestStack, jobId = 'Job'): TrainingContainerConfig {
  return container._bind(new Construct(stack, jobId), role);
}

interface DockerImageSource {
  readonly directory: string;
  readonly dockerBuildArgs: Record<string, string>;
  readonly platform?: string;
}

function dockerImageSources(app: App): DockerImageSource[] {
  const assembly = app.synth();
  const sources: DockerImageSource[] = [];
  for (const file of fs.readdirSync(assembly.directory).filter((name) => name.endsWith('.assets.json'))) {
    const manifest = JSON.parse(fs.readFileSync(path.join(assembly.directory, file), 'utf8'));
    for (const image of Object.values(manifest.dockerImages ?? {}) as Array<{ source: DockerImageSource }>) {
      sources.push(image.source);
    }
  }
  return sources;
}

describe('TrainingContainer.pytorch', () => {
  test('renders the literal DLC image of a concrete region with the SDK short tag', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    const config = bind(TrainingContainer.pytorch(), env);

    // THEN
    expect(config).toEqual({
      imageUri: '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312',
      nvidiaOnlyImage: 'TrainingContainer.pytorch() (pytorch-training:2.8.0-gpu-py312)',
      usesTrainingToolkit: true,
      providesPyTorch: true,
      providesDali: false,
    });
  });

  test('uses the China registry account and domain in cn-north-1', () => {
    // GIVEN
    const env = makeStack('cn-north-1');

    // WHEN
    const config = bind(TrainingContainer.pytorch(), env);

    // THEN
    expect(config.imageUri).toBe('727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/pytorch-training:2.8.0-gpu-py312');
  });

  test.each(REGIONS_MISSING_FROM_FACT)('knows %s, which the CDK region fact lacks (account %s)', (region, account) => {
    // GIVEN
    const env = makeStack(region);

    // WHEN
    const config = bind(TrainingContainer.pytorch(), env);

    // THEN
    expect(config.imageUri).toBe(`${account}.dkr.ecr.${region}.amazonaws.com/pytorch-training:2.8.0-gpu-py312`);
  });

  test('the registry table agrees with every region the CDK fact knows', () => {
    // GIVEN
    const fromFact = RegionInfo.regions.filter((r) => r.dlcRepositoryAccount !== undefined);

    // THEN
    for (const region of fromFact) {
      expect([region.name, DLC_REGISTRY_ACCOUNTS[region.name]]).toEqual([region.name, region.dlcRepositoryAccount]);
    }
    const expectedRegions = new Set([...fromFact.map((r) => r.name), ...REGIONS_MISSING_FROM_FACT.map(([name]) => name)]);
    expect(Object.keys(DLC_REGISTRY_ACCOUNTS).sort()).toEqual([...expectedRegions].sort());
  });

  test('takes the framework and Python versions into the tag', () => {
    // GIVEN
    const env = makeStack('eu-west-1');

    // WHEN
    const config = bind(TrainingContainer.pytorch({ frameworkVersion: '2.7', pythonVersion: 'py311' }), env);

    // THEN
    expect(config.imageUri).toBe('763104351884.dkr.ecr.eu-west-1.amazonaws.com/pytorch-training:2.7-gpu-py311');
  });

  test('grants pull on the DLC repository and an ECR authorization token', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    bind(TrainingContainer.pytorch(), env);

    // THEN
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          { Effect: 'Allow', Action: PULL_ACTIONS, Resource: 'arn:aws:ecr:us-east-1:763104351884:repository/pytorch-training' },
          { Effect: 'Allow', Action: 'ecr:GetAuthorizationToken', Resource: '*' },
        ],
      },
      Roles: [{ Ref: Match.stringLikeRegexp('^Role') }],
    });
  });

  test('grants in the GovCloud partition for a GovCloud region', () => {
    // GIVEN
    const env = makeStack('us-gov-west-1');

    // WHEN
    bind(TrainingContainer.pytorch(), env);

    // THEN
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Resource: 'arn:aws-us-gov:ecr:us-gov-west-1:442386744353:repository/pytorch-training' }),
        ]),
      },
    });
  });

  test('looks the account up at deploy time in an environment-agnostic stack', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    const config = bind(TrainingContainer.pytorch(), env);

    // THEN
    const findAccount = { 'Fn::FindInMap': ['TrainingIoDlcRegistryAccounts', { Ref: 'AWS::Region' }, 'account'] };
    expect(env.stack.resolve(config.imageUri)).toEqual({
      'Fn::Join': ['', [findAccount, '.dkr.ecr.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/pytorch-training:2.8.0-gpu-py312']],
    });
    const mapping = Template.fromStack(env.stack).toJSON().Mappings.TrainingIoDlcRegistryAccounts;
    expect(mapping['us-east-1']).toEqual({ account: '763104351884' });
    expect(mapping['cn-northwest-1']).toEqual({ account: '727897471807' });
    expect(mapping['af-south-1']).toEqual({ account: '626614931356' });
    expect(mapping['us-gov-east-1']).toEqual({ account: '446045086412' });
  });

  test('grants on a deploy-time repository ARN in an environment-agnostic stack', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    bind(TrainingContainer.pytorch(), env);

    // THEN
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: PULL_ACTIONS,
            Resource: {
              'Fn::Join': ['', [
                'arn:', { Ref: 'AWS::Partition' }, ':ecr:', { Ref: 'AWS::Region' }, ':',
                { 'Fn::FindInMap': ['TrainingIoDlcRegistryAccounts', { Ref: 'AWS::Region' }, 'account'] },
                ':repository/pytorch-training',
              ]],
            },
          }),
        ]),
      },
    });
  });

  test('creates one mapping per stack however many containers bind', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    bind(TrainingContainer.pytorch(), env, 'JobA');
    bind(TrainingContainer.pytorch({ frameworkVersion: '2.7.0' }), env, 'JobB');

    // THEN
    expect(Object.keys(Template.fromStack(env.stack).toJSON().Mappings)).toEqual(['TrainingIoDlcRegistryAccounts']);
  });

  test.each(['xx-fake-1', 'us-iso-east-1'])('rejects %s, a concrete region without a known registry', (region) => {
    // GIVEN
    const env = makeStack(region);

    // THEN
    expect(() => bind(TrainingContainer.pytorch(), env)).toThrow(/UnknownDlcRegion.*TrainingContainer\.fromImageUri/);
  });

  test.each(['2.8.0', '2.8', '1.13.1', '10.0.12'])('accepts frameworkVersion %s', (frameworkVersion) => {
    expect(() => TrainingContainer.pytorch({ frameworkVersion })).not.toThrow();
  });

  test.each(['2', 'v2.8.0', '2.8.0.1', '2.8-gpu', '', 'latest'])('rejects frameworkVersion %p', (frameworkVersion) => {
    expect(() => TrainingContainer.pytorch({ frameworkVersion })).toThrow(/InvalidFrameworkVersion/);
  });

  test.each(['py39', 'py310', 'py312'])('accepts pythonVersion %s', (pythonVersion) => {
    expect(() => TrainingContainer.pytorch({ pythonVersion })).not.toThrow();
  });

  test.each(['py3', 'py2', 'py3120', '3.12', 'python3.12', ''])('rejects pythonVersion %p', (pythonVersion) => {
    expect(() => TrainingContainer.pytorch({ pythonVersion })).toThrow(/InvalidPythonVersion/);
  });

  test('skips version checks for tokens', () => {
    // GIVEN
    const frameworkVersion = Lazy.string({ produce: () => '2.8.0' });
    const pythonVersion = Lazy.string({ produce: () => 'py312' });

    // THEN
    expect(() => TrainingContainer.pytorch({ frameworkVersion, pythonVersion })).not.toThrow();
  });
});

describe('TrainingContainer.dali', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  test('records a Docker image asset built from the DLC with DALI, and builds nothing at synth', () => {
    // GIVEN
    const env = makeStack('us-east-1');
    // The core module object itself: CDK calls docker through its properties.
    // eslint-disable-next-line @typescript-eslint/consistent-type-imports, @typescript-eslint/no-require-imports -- spied on, so not a namespace copy
    const childProcess: typeof import('child_process') = require('child_process');
    const spawnSync = jest.spyOn(childProcess, 'spawnSync');
    const spawn = jest.spyOn(childProcess, 'spawn');

    // WHEN
    const config = bind(TrainingContainer.dali(), env);
    const images = dockerImageSources(env.app);

    // THEN
    expect(images).toHaveLength(1);
    expect(images[0].dockerBuildArgs).toEqual({
      BASE_IMAGE: '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312',
      DALI_VERSION: '1.53.0',
      CUDA_MAJOR: '120',
    });
    expect(images[0].platform).toBe('linux/amd64');
    expect(config).toMatchObject({ usesTrainingToolkit: true, providesPyTorch: true, providesDali: true });
    expect(env.stack.resolve(config.imageUri)).toEqual({ 'Fn::Sub': expect.stringContaining('container-assets') });
    expect(spawnSync).not.toHaveBeenCalled();
    expect(spawn).not.toHaveBeenCalled();
  });

  test('stages the library Dockerfile that installs the requested DALI build', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    bind(TrainingContainer.dali({ cudaMajor: '130', daliVersion: '1.52.0' }), env);
    const [image] = dockerImageSources(env.app);

    // THEN
    const dockerfile = fs.readFileSync(path.join(env.app.outdir, image.directory, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM \$\{BASE_IMAGE\}$/m);
    expect(dockerfile).toContain('nvidia-dali-cuda${CUDA_MAJOR}==${DALI_VERSION}');
    expect(dockerfile).not.toMatch(/^\s*(ENTRYPOINT|CMD)\b/m);
    expect(image.dockerBuildArgs).toEqual(expect.objectContaining({ DALI_VERSION: '1.52.0', CUDA_MAJOR: '130' }));
  });

  test('shares one image between jobs with the same options and grants each job pull', () => {
    // GIVEN
    const env = makeStack('us-east-1');
    const otherRole = new iam.Role(env.stack, 'OtherRole', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });

    // WHEN
    const first = bind(TrainingContainer.dali(), env, 'JobA');
    const second = TrainingContainer.dali()._bind(new Construct(env.stack, 'JobB'), otherRole);

    // THEN
    expect(env.stack.resolve(second.imageUri)).toEqual(env.stack.resolve(first.imageUri));
    expect(dockerImageSources(env.app)).toHaveLength(1);
    const template = Template.fromStack(env.stack);
    template.resourceCountIs('AWS::IAM::Policy', 2);
    template.allResourcesProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: PULL_ACTIONS })]) },
    });
  });

  test('builds one image per distinct option set', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    bind(TrainingContainer.dali(), env, 'JobA');
    bind(TrainingContainer.dali({ cudaMajor: '130' }), env, 'JobB');

    // THEN
    expect(dockerImageSources(env.app)).toHaveLength(2);
  });

  test('takes the base image from baseImageRegion in an environment-agnostic stack', () => {
    // GIVEN
    const defaultEnv = makeStack();
    const frankfurtEnv = makeStack();

    // WHEN
    bind(TrainingContainer.dali(), defaultEnv);
    bind(TrainingContainer.dali({ baseImageRegion: 'eu-central-1' }), frankfurtEnv);

    // THEN
    expect(dockerImageSources(defaultEnv.app)[0].dockerBuildArgs.BASE_IMAGE)
      .toBe('763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312');
    expect(dockerImageSources(frankfurtEnv.app)[0].dockerBuildArgs.BASE_IMAGE)
      .toBe('763104351884.dkr.ecr.eu-central-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312');
  });

  test('takes the base image from the stack region when it is concrete', () => {
    // GIVEN
    const env = makeStack('cn-northwest-1');

    // WHEN
    bind(TrainingContainer.dali({ baseImageRegion: 'us-west-2' }), env);

    // THEN
    expect(dockerImageSources(env.app)[0].dockerBuildArgs.BASE_IMAGE)
      .toBe('727897471807.dkr.ecr.cn-northwest-1.amazonaws.com.cn/pytorch-training:2.8.0-gpu-py312');
  });

  test.each(['1.53.0', '1.52.0', '2.0.1'])('accepts daliVersion %s', (daliVersion) => {
    expect(() => TrainingContainer.dali({ daliVersion })).not.toThrow();
  });

  test.each(['1.53', 'latest', '', '1.53.0rc1'])('rejects daliVersion %p', (daliVersion) => {
    expect(() => TrainingContainer.dali({ daliVersion })).toThrow(/InvalidDaliVersion/);
  });

  test.each(['110', '120', '130'])('accepts cudaMajor %s', (cudaMajor) => {
    expect(() => TrainingContainer.dali({ cudaMajor })).not.toThrow();
  });

  test.each(['12', '12.0', '1200', 'cu120', '121'])('rejects cudaMajor %p', (cudaMajor) => {
    expect(() => TrainingContainer.dali({ cudaMajor })).toThrow(/InvalidCudaMajor/);
  });

  test('rejects a baseImageRegion without a known registry', () => {
    expect(() => TrainingContainer.dali({ baseImageRegion: 'xx-fake-1' })).toThrow(/UnknownDlcRegion.*baseImageRegion/);
  });

  test('rejects a stack region without a known registry', () => {
    // GIVEN
    const env = makeStack('us-isob-east-1');

    // THEN
    expect(() => bind(TrainingContainer.dali(), env)).toThrow(/UnknownDlcRegion/);
  });

  test('rejects tokens, which cannot become Docker build arguments', () => {
    // GIVEN
    const daliVersion = Lazy.string({ produce: () => '1.53.0' });

    // THEN
    expect(() => TrainingContainer.dali({ daliVersion })).toThrow(/DaliBuildArgNotLiteral.*daliVersion/);
  });
});

describe('TrainingContainer.fromImageUri', () => {
  test('renders the URI and runs the training toolkit by default', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    const config = bind(TrainingContainer.fromImageUri('public.ecr.aws/acme/trainer:1'), env);

    // THEN
    expect(config).toEqual({
      imageUri: 'public.ecr.aws/acme/trainer:1', entrypoint: undefined, arguments: undefined, usesTrainingToolkit: true,
      providesPyTorch: false, providesDali: false,
    });
    Template.fromStack(env.stack).resourceCountIs('AWS::IAM::Policy', 0);
  });

  test('a custom entrypoint bypasses the training toolkit', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    const config = bind(TrainingContainer.fromImageUri('acme/trainer:1', { entrypoint: ['python', '/opt/train.py'], arguments: ['--epochs', '3'] }), env);

    // THEN
    expect(config).toEqual({
      imageUri: 'acme/trainer:1',
      entrypoint: ['python', '/opt/train.py'],
      arguments: ['--epochs', '3'],
      usesTrainingToolkit: false,
      providesPyTorch: false,
      providesDali: false,
    });
  });

  test('usesTrainingToolkit overrides the default', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    const config = bind(TrainingContainer.fromImageUri('acme/trainer:1', { entrypoint: ['train'], usesTrainingToolkit: true }), env);

    // THEN
    expect(config.usesTrainingToolkit).toBe(true);
  });

  test('grants pull on a private ECR repository named by the URI', () => {
    // GIVEN
    const env = makeStack('us-east-1');

    // WHEN
    bind(TrainingContainer.fromImageUri('123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/trainer@sha256:abc'), env);

    // THEN
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          { Effect: 'Allow', Action: PULL_ACTIONS, Resource: 'arn:aws:ecr:eu-west-1:123456789012:repository/team/trainer' },
          { Effect: 'Allow', Action: 'ecr:GetAuthorizationToken', Resource: '*' },
        ],
      },
    });
  });

  test.each([1, 255])('accepts a URI of %d characters', (length) => {
    expect(() => TrainingContainer.fromImageUri('a'.repeat(length))).not.toThrow();
  });

  test.each([
    ['empty', ''],
    ['256 characters', 'a'.repeat(256)],
    ['whitespace', 'acme/trainer :1'],
  ])('rejects a URI that is %s', (_case, imageUri) => {
    expect(() => TrainingContainer.fromImageUri(imageUri)).toThrow(/InvalidTrainingImage/);
  });

  test('skips the URI check for a token', () => {
    // GIVEN
    const imageUri = Lazy.string({ produce: () => 'a'.repeat(300) });

    // THEN
    expect(() => TrainingContainer.fromImageUri(imageUri)).not.toThrow();
  });

  test.each([
    ['entrypoint', 'InvalidContainerEntrypoint'],
    ['arguments', 'InvalidContainerArguments'],
  ])('%s accepts 1 and 100 items of up to 256 characters', (prop) => {
    for (const items of [['x'], Array(100).fill('x'), ['y'.repeat(256)]]) {
      expect(() => TrainingContainer.fromImageUri('acme/trainer', { [prop]: items })).not.toThrow();
    }
  });

  test.each([
    ['entrypoint', 'InvalidContainerEntrypoint', []],
    ['entrypoint', 'InvalidContainerEntrypoint', Array(101).fill('x')],
    ['entrypoint', 'InvalidContainerEntrypoint', ['python', 'y'.repeat(257)]],
    ['arguments', 'InvalidContainerArguments', []],
    ['arguments', 'InvalidContainerArguments', Array(101).fill('x')],
    ['arguments', 'InvalidContainerArguments', ['y'.repeat(257)]],
  ])('%s rejects %#', (prop, code, items) => {
    expect(() => TrainingContainer.fromImageUri('acme/trainer', { [prop]: items })).toThrow(new RegExp(code as string));
  });

  test('skips the entrypoint check for a token list', () => {
    // GIVEN
    const entrypoint = Lazy.list({ produce: () => [] });

    // THEN
    expect(() => TrainingContainer.fromImageUri('acme/trainer', { entrypoint, arguments: entrypoint })).not.toThrow();
  });
});

describe('TrainingContainer.fromEcrRepository', () => {
  test('renders the repository URI with the tag and grants pull on the repository', () => {
    // GIVEN
    const env = makeStack('us-east-1');
    const repository = ecr.Repository.fromRepositoryName(env.stack, 'Repo', 'trainer');

    // WHEN
    const config = bind(TrainingContainer.fromEcrRepository(repository, 'v7'), env);

    // THEN
    expect(env.stack.resolve(config.imageUri)).toEqual({
      'Fn::Join': ['', ['111111111111.dkr.ecr.us-east-1.', { Ref: 'AWS::URLSuffix' }, '/trainer:v7']],
    });
    const repositoryArn = new Capture();
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: PULL_ACTIONS, Resource: repositoryArn }),
          Match.objectLike({ Action: 'ecr:GetAuthorizationToken', Resource: '*' }),
        ]),
      },
    });
    expect(repositoryArn.asObject()).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecr:us-east-1:111111111111:repository/trainer']],
    });
  });

  test('defaults to the latest tag', () => {
    // GIVEN
    const env = makeStack();
    const repository = new ecr.Repository(env.stack, 'Repo');

    // WHEN
    const config = bind(TrainingContainer.fromEcrRepository(repository), env);

    // THEN
    expect(JSON.stringify(env.stack.resolve(config.imageUri))).toMatch(/:latest"\]\]\}$/);
    expect(config.usesTrainingToolkit).toBe(true);
  });

  test.each(['', '-leading-dash', 'has space', 'x'.repeat(129)])('rejects tag %p', (tag) => {
    // GIVEN
    const repository = ecr.Repository.fromRepositoryName(makeStack().stack, 'Repo', 'trainer');

    // THEN
    expect(() => TrainingContainer.fromEcrRepository(repository, tag)).toThrow(/InvalidImageTag/);
  });

  test('validates the entrypoint', () => {
    // GIVEN
    const repository = ecr.Repository.fromRepositoryName(makeStack().stack, 'Repo', 'trainer');

    // THEN
    expect(() => TrainingContainer.fromEcrRepository(repository, 'v1', { entrypoint: [] })).toThrow(/InvalidContainerEntrypoint/);
  });
});
