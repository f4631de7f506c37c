import * as crypto from 'crypto';
import { Aws, CfnMapping, Stack, Token } from 'aws-cdk-lib';
import type * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecr_assets from 'aws-cdk-lib/aws-ecr-assets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import type { Construct } from 'constructs';
import { containerDirectory } from '../private/assets';
import type { ErrorCode } from '../private/error-codes';
import { ValidationError } from '../private/errors';
import { isResolved } from '../private/validation';
import type { DlcRegistry} from './private/dlc-registry';
import { DLC_REGISTRY_ACCOUNTS, PYTORCH_TRAINING_REPOSITORY, dlcRegistryFor } from './private/dlc-registry';

/**
 * What a training job needs to know about its container, resolved in the job's stack.
 *
 * @internal
 */
export interface TrainingContainerConfig {
  /** `AlgorithmSpecification.TrainingImage`. */
  readonly imageUri: string;
  /** `AlgorithmSpecification.ContainerEntrypoint`. */
  readonly entrypoint?: string[];
  /** `AlgorithmSpecification.ContainerArguments`. */
  readonly arguments?: string[];
  /** Whether the sagemaker-training toolkit runs the job (`sagemaker_program`, `SM_*` apply). */
  readonly usesTrainingToolkit: boolean;
  /** Whether the image has PyTorch and torchvision, which the reference training code needs. */
  readonly providesPyTorch: boolean;
  /** Whether the image has NVIDIA DALI, whose CPU threads the job then sizes (`dali_threads`). */
  readonly providesDali: boolean;
  /**
   * The image's name, when it is built for NVIDIA GPUs only (CUDA): the job refuses it on an
   * instance without GPUs, such as Trainium, which needs the Neuron SDK. Undefined for images we
   * know nothing of.
   */
  readonly nvidiaOnlyImage?: string;
}

/**
 * Options for the AWS PyTorch training Deep Learning Container.
 */
export interface PyTorchContainerOptions {
  /**
   * PyTorch version, `major.minor.patch` or `major.minor` (the image tag's framework part).
   *
   * @default '2.8.0'
   */
  readonly frameworkVersion?: string;

  /**
   * Python version of the image, e.g. `py312`.
   *
   * @default 'py312'
   */
  readonly pythonVersion?: string;
}

/**
 * Options for the PyTorch Deep Learning Container extended with NVIDIA DALI.
 */
export interface DaliContainerOptions extends PyTorchContainerOptions {
  /**
   * Version of the `nvidia-dali-cuda<cudaMajor>` package installed on top of the base image.
   *
   * @default '1.53.0'
   * @see https://docs.nvidia.com/deeplearning/dali/user-guide/docs/installation.html
   */
  readonly daliVersion?: string;

  /**
   * CUDA major version of the DALI build, as in the package name: `120` (CUDA 12, driver
   * 525.60 or later) or `130` (CUDA 13, driver 580 or later).
   *
   * @default '120'
   */
  readonly cudaMajor?: string;

  /**
   * Region whose Deep Learning Container registry provides the base image when the stack's
   * region is only known at deploy time.
   *
   * Docker build arguments must be literal at synth time, so the base image cannot follow an
   * environment-agnostic stack's `AWS::Region`. When the stack has a concrete region, that
   * region is used and this option is ignored.
   *
   * @default 'us-east-1'
   */
  readonly baseImageRegion?: string;
}

/**
 * Options for a container image that the user provides.
 */
export interface CustomContainerOptions {
  /**
   * Command run instead of the image's ENTRYPOINT (`ContainerEntrypoint`), 1 to 100 items of
   * at most 256 characters.
   *
   * A custom entrypoint bypasses the sagemaker-training toolkit, so `sagemaker_program` and the
   * `SM_*` environment variables do not apply: read `/opt/ml/input/config/*.json` instead.
   *
   * @default - the image's ENTRYPOINT, started by SageMaker as `<entrypoint> train`
   */
  readonly entrypoint?: string[];

  /**
   * Arguments passed to the entrypoint (`ContainerArguments`), 1 to 100 items of at most 256
   * characters.
   *
   * @default - no arguments
   */
  readonly arguments?: string[];

  /**
   * Whether the image runs the job through the sagemaker-training toolkit, so that
   * `sagemaker_program`, `sagemaker_submit_directory` and the `SM_*` variables apply.
   *
   * @default - true when no `entrypoint` is given, false otherwise
   */
  readonly usesTrainingToolkit?: boolean;
}

/**
 * The container image a SageMaker training job runs.
 *
 * @see https://docs.aws.amazon.com/sagemaker/latest/dg/your-algorithms-training-algo-dockerfile.html
 */
export abstract class TrainingContainer {
  /**
   * The AWS PyTorch training Deep Learning Container of the stack's region, tag
   * `<frameworkVersion>-gpu-<pythonVersion>`.
   *
   * In an environment-agnostic stack the registry account is looked up at deploy time from a
   * mapping of every region with a known registry.
   *
   * @see https://github.com/aws/deep-learning-containers/blob/master/available_images.md
   */
  public static pytorch(options: PyTorchContainerOptions = {}): TrainingContainer {
    return new DlcPyTorchContainer(dlcImageTag(options));
  }

  /**
   * The PyTorch Deep Learning Container with NVIDIA DALI installed, built as a Docker image
   * asset from the library's `container/dali/Dockerfile`.
   *
   * Nothing is built at synth time: the asset records the build, which `cdk deploy` (or
   * `cdk-assets`) runs. That build pulls the base image, so it must first `docker login` to
   * the Deep Learning Container registry account (see `container/dali/README.md`). Jobs in one
   * stack with the same options share one image.
   */
  public static dali(options: DaliContainerOptions = {}): TrainingContainer {
    const cudaMajor = options.cudaMajor ?? DEFAULT_CUDA_MAJOR;
    const daliVersion = options.daliVersion ?? DEFAULT_DALI_VERSION;
    const baseImageRegion = options.baseImageRegion ?? DEFAULT_BASE_IMAGE_REGION;
    const tag = dlcImageTag(options);
    validateBuildArgsAreLiteral({ frameworkVersion: options.frameworkVersion, pythonVersion: options.pythonVersion, daliVersion, cudaMajor, baseImageRegion });
    validateDaliVersion(daliVersion);
    validateCudaMajor(cudaMajor);
    requireRegistry(baseImageRegion, 'baseImageRegion');
    return new DaliContainer(tag, daliVersion, cudaMajor, baseImageRegion);
  }

  /**
   * Any image by URI, e.g. one you build and push yourself.
   *
   * When the URI names a private ECR repository, the job's role is granted pull on it.
   */
  public static fromImageUri(imageUri: string, options: CustomContainerOptions = {}): TrainingContainer {
    validateImageUri(imageUri);
    validateCustomOptions(options);
    return new ImageUriContainer(imageUri, options);
  }

  /**
   * An image in an ECR repository; the job's role is granted pull on the repository.
   *
   * @param tag the image tag, default `latest`
   */
  public static fromEcrRepository(repository: ecr.IRepository, tag?: string, options: CustomContainerOptions = {}): TrainingContainer {
    validateImageTag(tag);
    validateCustomOptions(options);
    return new EcrRepositoryContainer(repository, tag ?? 'latest', options);
  }

  /**
   * Resolves the image in the scope's stack and grants the grantee what it needs to pull it.
   *
   * @internal
   */
  public abstract _bind(scope: Construct, grantee: iam.IGrantable): TrainingContainerConfig;
}

const DEFAULT_FRAMEWORK_VERSION = '2.8.0';
const DEFAULT_PYTHON_VERSION = 'py312';
const DEFAULT_DALI_VERSION = '1.53.0';
const DEFAULT_CUDA_MAJOR = '120';
const DEFAULT_BASE_IMAGE_REGION = 'us-east-1';

/** Fixed id of the per-stack mapping, so that every container in the stack reuses it. */
const DLC_ACCOUNT_MAPPING_ID = 'TrainingIoDlcRegistryAccounts';
const DLC_ACCOUNT_MAPPING_KEY = 'account';

const ECR_PULL_ACTIONS = ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'];
const MAX_IMAGE_URI_LENGTH = 255;
const MAX_CONTAINER_COMMAND_ITEMS = 100;
const MAX_CONTAINER_COMMAND_ITEM_LENGTH = 256;
const PRIVATE_ECR_IMAGE = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/([^:@]+)/;

class DlcPyTorchContainer extends TrainingContainer {
  constructor(private readonly tag: string) {
    super();
  }

  public _bind(scope: Construct, grantee: iam.IGrantable): TrainingContainerConfig {
    const registry = stackDlcRegistry(scope);
    grantEcrPull(grantee, `arn:${registry.partition}:ecr:${registry.region}:${registry.account}:repository/${PYTORCH_TRAINING_REPOSITORY}`);
    return {
      imageUri: dlcImageUri(registry, this.tag), usesTrainingToolkit: true, providesPyTorch: true, providesDali: false,
      nvidiaOnlyImage: `TrainingContainer.pytorch() (${PYTORCH_TRAINING_REPOSITORY}:${this.tag})`,
    };
  }
}

class DaliContainer extends TrainingContainer {
  constructor(
    private readonly tag: string,
    private readonly daliVersion: string,
    private readonly cudaMajor: string,
    private readonly baseImageRegion: string,
  ) {
    super();
  }

  public _bind(scope: Construct, grantee: iam.IGrantable): TrainingContainerConfig {
    const stack = Stack.of(scope);
    const region = Token.isUnresolved(stack.region) ? this.baseImageRegion : stack.region;
    const buildArgs = {
      BASE_IMAGE: dlcImageUri({ ...requireRegistry(region, 'the stack region', scope), region }, this.tag),
      DALI_VERSION: this.daliVersion,
      CUDA_MAJOR: this.cudaMajor,
    };
    const id = `TrainingIoDaliImage${crypto.createHash('sha256').update(JSON.stringify(buildArgs)).digest('hex').slice(0, 16)}`;
    const asset = (stack.node.tryFindChild(id) as ecr_assets.DockerImageAsset | undefined) ?? new ecr_assets.DockerImageAsset(stack, id, {
      directory: containerDirectory('dali'),
      buildArgs,
      platform: ecr_assets.Platform.LINUX_AMD64,
    });
    asset.repository.grantPull(grantee);
    return {
      imageUri: asset.imageUri, usesTrainingToolkit: true, providesPyTorch: true, providesDali: true,
      nvidiaOnlyImage: `TrainingContainer.dali() (NVIDIA DALI ${this.daliVersion} for CUDA ${this.cudaMajor})`,
    };
  }
}

class ImageUriContainer extends TrainingContainer {
  constructor(private readonly imageUri: string, private readonly options: CustomContainerOptions) {
    super();
  }

  public _bind(scope: Construct, grantee: iam.IGrantable): TrainingContainerConfig {
    const ecrImage = Token.isUnresolved(this.imageUri) ? null : PRIVATE_ECR_IMAGE.exec(this.imageUri);
    if (ecrImage) {
      const [, account, region, repositoryName] = ecrImage;
      const partition = RegionInfo.get(region).partition ?? Stack.of(scope).partition;
      grantEcrPull(grantee, `arn:${partition}:ecr:${region}:${account}:repository/${repositoryName}`);
    }
    return customConfig(this.imageUri, this.options);
  }
}

class EcrRepositoryContainer extends TrainingContainer {
  constructor(
    private readonly repository: ecr.IRepository,
    private readonly tag: string,
    private readonly options: CustomContainerOptions,
  ) {
    super();
  }

  public _bind(_scope: Construct, grantee: iam.IGrantable): TrainingContainerConfig {
    this.repository.grantPull(grantee);
    return customConfig(this.repository.repositoryUriForTag(this.tag), this.options);
  }
}

/** A DLC registry located for a stack: literal in a concrete region, deploy-time otherwise. */
interface LocatedDlcRegistry extends DlcRegistry {
  readonly region: string;
}

function stackDlcRegistry(scope: Construct): LocatedDlcRegistry {
  const stack = Stack.of(scope);
  if (!Token.isUnresolved(stack.region)) {
    return { ...requireRegistry(stack.region, 'the stack region', scope), region: stack.region };
  }
  return {
    account: dlcAccountMapping(stack).findInMap(Aws.REGION, DLC_ACCOUNT_MAPPING_KEY),
    partition: Aws.PARTITION,
    urlSuffix: Aws.URL_SUFFIX,
    region: Aws.REGION,
  };
}

function dlcAccountMapping(stack: Stack): CfnMapping {
  const existing = stack.node.tryFindChild(DLC_ACCOUNT_MAPPING_ID) as CfnMapping | undefined;
  if (existing) {
    return existing;
  }
  const mapping: Record<string, Record<string, string>> = {};
  for (const [region, account] of Object.entries(DLC_REGISTRY_ACCOUNTS)) {
    mapping[region] = { [DLC_ACCOUNT_MAPPING_KEY]: account };
  }
  return new CfnMapping(stack, DLC_ACCOUNT_MAPPING_ID, { mapping, lazy: true });
}

function requireRegistry(region: string, what: string, scope?: Construct): DlcRegistry {
  const registry = dlcRegistryFor(region);
  if (!registry) {
    throw new ValidationError(
      'UnknownDlcRegion',
      `${what} is ${region}, which has no known AWS Deep Learning Container registry; allowed regions: ${Object.keys(DLC_REGISTRY_ACCOUNTS).join(', ')}. Use TrainingContainer.fromImageUri() with an image available in ${region}`,
      scope,
    );
  }
  return registry;
}

function dlcImageUri(registry: LocatedDlcRegistry, tag: string): string {
  return `${registry.account}.dkr.ecr.${registry.region}.${registry.urlSuffix}/${PYTORCH_TRAINING_REPOSITORY}:${tag}`;
}

function dlcImageTag(options: PyTorchContainerOptions): string {
  const frameworkVersion = options.frameworkVersion ?? DEFAULT_FRAMEWORK_VERSION;
  const pythonVersion = options.pythonVersion ?? DEFAULT_PYTHON_VERSION;
  validateFrameworkVersion(frameworkVersion);
  validatePythonVersion(pythonVersion);
  return `${frameworkVersion}-gpu-${pythonVersion}`;
}

function grantEcrPull(grantee: iam.IGrantable, repositoryArn: string): void {
  iam.Grant.addToPrincipal({ grantee, actions: ECR_PULL_ACTIONS, resourceArns: [repositoryArn] });
  iam.Grant.addToPrincipal({ grantee, actions: ['ecr:GetAuthorizationToken'], resourceArns: ['*'] });
}

function customConfig(imageUri: string, options: CustomContainerOptions): TrainingContainerConfig {
  return {
    imageUri,
    entrypoint: options.entrypoint,
    arguments: options.arguments,
    usesTrainingToolkit: options.usesTrainingToolkit ?? options.entrypoint === undefined,
    // What a custom image holds is unknown: it gets no default code.
    providesPyTorch: false,
    providesDali: false,
  };
}

function validateFrameworkVersion(frameworkVersion: string): void {
  if (isResolved(frameworkVersion) && !/^\d+\.\d+(\.\d+)?$/.test(frameworkVersion)) {
    throw new ValidationError('InvalidFrameworkVersion', `frameworkVersion must look like 2.8.0 or 2.8, got '${frameworkVersion}'`);
  }
}

function validatePythonVersion(pythonVersion: string): void {
  if (isResolved(pythonVersion) && !/^py3\d{1,2}$/.test(pythonVersion)) {
    throw new ValidationError('InvalidPythonVersion', `pythonVersion must look like py312, got '${pythonVersion}'`);
  }
}

function validateDaliVersion(daliVersion: string): void {
  if (!/^\d+\.\d+\.\d+$/.test(daliVersion)) {
    throw new ValidationError('InvalidDaliVersion', `daliVersion must be a release version like 1.53.0, got '${daliVersion}'`);
  }
}

function validateCudaMajor(cudaMajor: string): void {
  if (!/^\d{2}0$/.test(cudaMajor)) {
    throw new ValidationError('InvalidCudaMajor', `cudaMajor must be the CUDA major version as in the DALI package name, like 120 or 130, got '${cudaMajor}'`);
  }
}

function validateBuildArgsAreLiteral(values: Record<string, string | undefined>): void {
  for (const [prop, value] of Object.entries(values)) {
    if (value !== undefined && Token.isUnresolved(value)) {
      throw new ValidationError('DaliBuildArgNotLiteral', `${prop} becomes a Docker build argument and must be known at synth time, got the unresolved token ${value}`);
    }
  }
}

function validateImageUri(imageUri: string): void {
  if (!isResolved(imageUri)) {
    return;
  }
  if (imageUri.length === 0 || imageUri.length > MAX_IMAGE_URI_LENGTH || /\s/.test(imageUri)) {
    throw new ValidationError(
      'InvalidTrainingImage',
      `imageUri must be 1 to ${MAX_IMAGE_URI_LENGTH} characters without whitespace, got ${imageUri.length} characters: '${imageUri}'`,
    );
  }
}

function validateImageTag(tag: string | undefined): void {
  if (isResolved(tag) && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
    throw new ValidationError('InvalidImageTag', `tag must be 1 to 128 letters, digits, '_', '.' or '-' not starting with '.' or '-', got '${tag}'`);
  }
}

function validateCustomOptions(options: CustomContainerOptions): void {
  validateContainerCommand('entrypoint', 'InvalidContainerEntrypoint', options.entrypoint);
  validateContainerCommand('arguments', 'InvalidContainerArguments', options.arguments);
}

function validateContainerCommand(prop: string, code: ErrorCode, items: string[] | undefined): void {
  if (!isResolved(items)) {
    return;
  }
  if (items.length < 1 || items.length > MAX_CONTAINER_COMMAND_ITEMS) {
    throw new ValidationError(code, `${prop} must have 1 to ${MAX_CONTAINER_COMMAND_ITEMS} items, got ${items.length}`);
  }
  items.forEach((item, index) => {
    if (isResolved(item) && item.length > MAX_CONTAINER_COMMAND_ITEM_LENGTH) {
      throw new ValidationError(code, `${prop}[${index}] must be at most ${MAX_CONTAINER_COMMAND_ITEM_LENGTH} characters, got ${item.length}`);
    }
  });
}
