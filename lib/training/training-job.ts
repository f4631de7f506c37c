import type { CreateTrainingJobRequest, TrainingInstanceType } from '@aws-sdk/client-sagemaker';
import { Annotations, Aws, Duration, Size, SizeRoundingBehavior, Stack, Token } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { MetricDefinition } from './metric-definition';
import { placeNearChannels } from './private/channel-placement';
import { checkpointUri, defaultJobNamePrefix, renderJobName } from './private/job-naming';
import { validateContainerForInstance, validateHyperparameters, validateJobProps } from './private/job-rules';
import { missingEndpointWarnings } from './private/endpoint-rules';
import type { JobNetwork } from './private/training-network';
import { createTrainingNetwork } from './private/training-network';
import { createExecutionRole, orchestrationPolicies } from './private/training-permissions';
import type { ChannelConfig, S3ChannelFacts, TrainingChannel } from './training-channel';
import { InputMode } from '../vocabulary/input-mode';
import { S3DataDistribution } from '../vocabulary/s3-data-distribution';
import type { TrainingCodeConfig } from './training-code';
import { TrainingCode } from './training-code';
import type { TrainingContainerConfig } from './training-container';
import { TrainingContainer } from './training-container';
import { TrainingNetwork } from './training-network';
import type { DataLoaderSizing } from '../instances/data-loader-sizing';
import type { TrainingInstance } from '../instances/training-instance';
import { loaderWorkersWarning } from '../instances/private/loader-rules';
import type { TrainingCluster } from '../instances/training-cluster';
import { clusterOfJob, givenLoaderWorkers } from './private/job-cluster';
import { describeFileModeFit, fileModeFootprintBytes, fitsFileMode } from '../instances/private/storage-rules';
import { ValidationError } from '../private/errors';
import { acknowledge, acknowledgePrefixGrant } from '../private/nag';
import { createSecureBucket } from '../private/secure-bucket';

/**
 * How each run of a `TrainingJob` task names its job.
 */
export enum TrainingJobNaming {
  /** `<prefix>-<uuid>`: a new name every time the task runs, also when it is retried. */
  UNIQUE_ID = 'uniqueId',
  /**
   * `<prefix>-<execution name>`: one job per execution, and each finds the other by name. Execution
   * names must then be job-name suffixes (letters, digits, hyphens; at most 62 characters minus the
   * prefix): the UUIDs Step Functions gives unnamed executions are. The task must not be retried.
   */
  EXECUTION_NAME = 'executionName',
}

/**
 * How the SageMaker training toolkit starts the training program on each instance.
 */
export enum TrainingLauncher {
  /** Once per instance, as `python <program>`: the program starts its own processes, if any. */
  SCRIPT = 'script',
  /**
   * With `torchrun`, one process per GPU or NeuronCore on every instance, rendezvous set up
   * (PyTorch 1.13.1 and later; the `sagemaker_torch_distributed_enabled` hyperparameter, as the
   * SageMaker Python SDK's `distribution={"torch_distributed": {"enabled": True}}` sets it).
   */
  TORCHRUN = 'torchrun',
}

/**
 * What a training job runs and how: everything of a `TrainingJob` but its input channels and its
 * place in a state machine. `TrainingPipeline` takes these and adds the channel of its dataset.
 */
export interface TrainingJobOptions {
  /** The instance type, e.g. `TrainingInstance.G5_2XLARGE`. */
  readonly instance: TrainingInstance;

  /**
   * Instances in the job.
   *
   * @default 1
   */
  readonly instanceCount?: number;

  /**
   * The training image.
   *
   * @default TrainingContainer.pytorch()
   */
  readonly container?: TrainingContainer;

  /**
   * The training script directory, run by the SageMaker training toolkit in the container.
   *
   * @default - `TrainingCode.reference()` on `TrainingContainer.pytorch()` and `TrainingContainer.dali()`
   * (ResNet training over packed shards, reporting throughput and data wait); none on other images,
   * which run their own code
   */
  readonly code?: TrainingCode;

  /**
   * Hyperparameters passed to the training code. They win over the ones the job sets
   * (`num_workers`, `sagemaker_program`, ...).
   *
   * @default - only the ones the job sets
   */
  readonly hyperparameters?: { [name: string]: string };

  /**
   * How the toolkit starts `code` on each instance.
   *
   * @default TrainingLauncher.SCRIPT
   */
  readonly launcher?: TrainingLauncher;

  /**
   * ARN of a SageMaker training plan: the job runs on its reserved capacity (`ResourceConfig.TrainingPlanArn`).
   *
   * @see https://docs.aws.amazon.com/sagemaker/latest/dg/reserve-capacity-with-training-plans.html
   * @default - on-demand (or spot) capacity
   */
  readonly trainingPlanArn?: string;

  /**
   * Training processes per instance, for data-loader sizing.
   *
   * @default - one per GPU, or per NeuronCore on Trainium (`TrainingInstance.defaultProcessesPerInstance`)
   */
  readonly processesPerInstance?: number;

  /**
   * Memory each data-loader worker may use, for data-loader sizing.
   *
   * @default Size.gibibytes(2)
   */
  readonly memoryPerLoaderWorker?: Size;

  /**
   * Data-loader workers per training process, passed as the `num_workers` hyperparameter: the
   * `loaderWorkers` of `TrainingCluster` and of the I/O plan.
   *
   * @default - sized from the instance: vCPUs per process − 1, capped by memory
   */
  readonly loaderWorkers?: number;

  /**
   * Data-loader workers per training process.
   *
   * @deprecated use `loaderWorkers`, the name `TrainingCluster` and the I/O plan use
   * @default - sized from the instance: vCPUs per process − 1, capped by memory
   */
  readonly dataLoaderWorkers?: number;

  /**
   * Environment variables of the training container.
   *
   * @default - none
   */
  readonly environment?: { [name: string]: string };

  /**
   * Metrics SageMaker extracts from the log and publishes to CloudWatch.
   *
   * @default - the metrics the code declares (`TrainingCode.reference()`: samples per second, the
   * fraction of time waiting for data, loss); none otherwise
   */
  readonly metricDefinitions?: MetricDefinition[];

  /**
   * The VPC the job runs in. Training always runs in a VPC, in private subnets.
   *
   * @default - the VPC of the dataset cache a channel reads; else `network`'s
   */
  readonly vpc?: ec2.IVpc;

  /**
   * The shared network of the job: its VPC, security group and (without `outputBucket`) output
   * bucket. Cannot be combined with `vpc`.
   *
   * @default - with neither `vpc` nor a dataset-cache channel, the stack's `TrainingNetwork.of(...)`,
   * created by its first such job with that job's `encryptionKey`, `accessLogsBucket` and `logRetention`
   */
  readonly network?: TrainingNetwork;

  /**
   * The subnets the job may use. Public subnets are refused.
   *
   * @default - the VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Pin the job to this one subnet, e.g. the subnet of an FSx for Lustre file system
   * (single-AZ: reading it from another AZ adds latency and cross-AZ charges).
   *
   * @default - the subnet of the dataset cache a channel reads (unless `vpcSubnets` is set); else not pinned
   */
  readonly subnet?: ec2.ISubnet;

  /**
   * Security groups of the training instances.
   *
   * @default - the group of the job's `TrainingNetwork`, else a new group; either allows traffic
   * between the instances and HTTPS out
   */
  readonly securityGroups?: ec2.ISecurityGroup[];

  /**
   * The execution role SageMaker assumes.
   *
   * @default - a new role with read on the channels' prefixes and write on the output prefix
   */
  readonly role?: iam.IRole;

  /**
   * Bucket for model artifacts and checkpoints.
   *
   * @default - the bucket of the job's `TrainingNetwork`, else a new one; either is encrypted (with
   * `encryptionKey` when given), SSL only, public access blocked, versioned (old versions kept 30
   * days), sends its events to EventBridge, logs access to `accessLogsBucket` when given, and is
   * retained on stack deletion
   */
  readonly outputBucket?: s3.IBucket;

  /**
   * Where the output bucket created when `outputBucket` is not given writes its S3 server access
   * logs (under the bucket's construct path). S3 delivers them only to an SSE-S3 bucket in the same
   * account and Region.
   *
   * @default - no server access logs
   */
  readonly accessLogsBucket?: s3.IBucket;

  /**
   * How long the log groups created for the job keep their events (the flow logs of the VPC created
   * when `vpc` is not given; in a `TrainingPipeline`, also its state machine's and diagnoser's).
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * Key prefix of the model artifacts in the output bucket.
   *
   * @default 'training-output/'
   */
  readonly outputPrefix?: string;

  /**
   * KMS key for model artifacts, checkpoints, on EBS-backed instances the storage volume, and the
   * log groups created for the job (the key policy of a key from this app is given the CloudWatch
   * Logs statement; an imported key's policy must allow `logs.<region>.amazonaws.com`).
   *
   * @default - S3-managed encryption; the instance's own storage encryption; CloudWatch Logs' own encryption
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * KMS key of the EBS storage volume. Only EBS-backed instances (ml.p3.2/8/16xlarge) have one:
   * SageMaker rejects a volume key on instances with local NVMe, which is hardware-encrypted.
   *
   * @default - `encryptionKey` on EBS-backed instances, none on NVMe instances
   */
  readonly volumeEncryptionKey?: kms.IKey;

  /**
   * Size of the EBS storage volume. SageMaker ignores it on instances with local NVMe.
   *
   * @default - File-mode data per instance + 10 % + 50 GiB, at least 100 GiB (EBS-backed instances only)
   */
  readonly volumeSize?: Size;

  /**
   * Longest time the job may run, at most 28 days.
   *
   * @default Duration.days(1)
   */
  readonly maxRuntime?: Duration;

  /**
   * Use managed spot capacity (up to 90 % cheaper, can be interrupted).
   *
   * @default false
   */
  readonly useSpotInstances?: boolean;

  /**
   * Longest time to wait for spot capacity plus run time; at least `maxRuntime`.
   *
   * @default - twice `maxRuntime` when spot is used
   */
  readonly maxWaitTime?: Duration;

  /**
   * Sync `/opt/ml/checkpoints` to S3 (`s3://<output bucket>/checkpoints/<execution name>/`), so a
   * spot interruption or a retry resumes instead of starting over.
   *
   * @default - true with spot instances or with code that saves checkpoints (`TrainingCode.reference()`), false otherwise
   */
  readonly enableCheckpoints?: boolean;

  /**
   * Encrypt traffic between the instances of a distributed job.
   *
   * @default - true when instanceCount > 1
   */
  readonly interContainerTrafficEncryption?: boolean;

  /**
   * Block all network access of the training container (SageMaker still moves the data).
   * The toolkit downloads `code` from S3 inside the container, so isolation needs the code in the image.
   *
   * @default false
   */
  readonly enableNetworkIsolation?: boolean;

  /**
   * Keep the instances warm this long after the job, so the next job starts in seconds.
   *
   * @default - no warm pool
   */
  readonly keepAlivePeriod?: Duration;

  /**
   * Times SageMaker retries the job after an internal error (1–30).
   *
   * @default - no retries
   */
  readonly retryAttempts?: number;

  /**
   * Prefix of the training job names; each run is `<prefix>-<uuid>`. At most 26 characters.
   *
   * @default - derived from the construct id
   */
  readonly jobNamePrefix?: string;

  /**
   * Tags of the training job.
   *
   * @default - none
   */
  readonly tags?: { [key: string]: string };

  /**
   * Allow an instance type without GPUs or Trainium devices.
   *
   * @default false
   */
  readonly allowInstanceWithoutAccelerator?: boolean;
}

/**
 * Properties of a `TrainingJob`.
 */
export interface TrainingJobProps extends sfn.TaskStateJsonPathBaseProps, TrainingJobOptions {
  /**
   * The input channels, at most 20.
   *
   * @default - no input channels
   */
  readonly channels?: TrainingChannel[];

  /**
   * How each run names its job.
   *
   * @default TrainingJobNaming.UNIQUE_ID
   */
  readonly jobNaming?: TrainingJobNaming;

  /**
   * The job's hyperparameters as the state machine computes them at run time: a JSONPath or an
   * intrinsic function (`JsonPath.objectAt(...)`, `JsonPath.jsonMerge(...)`) giving an object of
   * strings. It replaces the fixed ones in the request: place `TrainingJob.hyperparameters` in the
   * state first (TrainingPipeline merges the execution's over them).
   *
   * @default - the fixed hyperparameters
   */
  readonly hyperparametersAtRunTime?: string;
}

const DEFAULT_MAX_RUNTIME = Duration.days(1);
const DEFAULT_OUTPUT_PREFIX = 'training-output/';
const CHECKPOINT_PREFIX = 'checkpoints/';
const MIN_EBS_VOLUME = Size.gibibytes(100);

/**
 * A SageMaker training job as a Step Functions task (`createTrainingJob.sync`).
 *
 * Renders the whole `CreateTrainingJob` request — including what aws-cdk-lib's
 * `SageMakerCreateTrainingJob` cannot express: ShuffleConfig, file-system channels, managed
 * spot with checkpoints, a pinned subnet, NVMe-aware storage settings, container entrypoints —
 * and creates the execution role; without a `vpc`, the job runs in the stack's shared `TrainingNetwork`
 * (VPC, security group and output bucket). Fields it does not model go through `addRequestOverride`.
 *
 * @see https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateTrainingJob.html
 */
export class TrainingJob extends sfn.TaskStateBase implements iam.IGrantable, ec2.IConnectable {
  /** The execution role SageMaker assumes. */
  public readonly role: iam.IRole;
  /** The VPC the job runs in. */
  public readonly vpc: ec2.IVpc;
  /** The security groups and their rules. */
  public readonly connections: ec2.Connections;
  /** Bucket of the model artifacts and checkpoints. */
  public readonly outputBucket: s3.IBucket;
  /** Prefix of the training job names. */
  public readonly jobNamePrefix: string;
  /** The data-loader sizing for this instance type. */
  public readonly dataLoaderSizing: DataLoaderSizing;
  /** The instance type. */
  public readonly instance: TrainingInstance;
  /** Instances in the job. */
  public readonly instanceCount: number;
  /** The instances × processes × loader workers the job trains with, sized where not given. */
  public readonly cluster: TrainingCluster;
  /** Key prefix of the model artifacts in the output bucket: each job writes under `<outputPrefix><job name>/`. */
  public readonly outputPrefix: string;
  /** The hyperparameters the job sets: `num_workers`, the code's `sagemaker_*`, then `hyperparameters`. */
  public readonly hyperparameters: { [name: string]: string };
  /** The metrics SageMaker extracts from the job's log. */
  public readonly metricDefinitions: MetricDefinition[];

  protected readonly taskMetrics?: sfn.TaskMetricsConfig;
  protected readonly taskPolicies?: iam.PolicyStatement[];

  private readonly request: CreateTrainingJobRequest;
  private readonly volumeSize?: Size;
  private readonly integration: sfn.IntegrationPattern;
  private readonly jobNaming: TrainingJobNaming;
  private readonly hyperparametersAtRunTime?: string;
  private readonly requestOverrides: Array<{ readonly path: string[]; readonly value: unknown; readonly remove: boolean }> = [];

  constructor(scope: Construct, id: string, props: TrainingJobProps) {
    super(scope, id, { ...props, queryLanguage: sfn.QueryLanguage.JSON_PATH });
    validateJobProps(this, props);
    this.integration = this.checkIntegrationPattern(props.integrationPattern ?? sfn.IntegrationPattern.RUN_JOB);
    this.instance = props.instance;
    this.instanceCount = props.instanceCount ?? 1;
    this.volumeSize = props.volumeSize;
    this.jobNamePrefix = props.jobNamePrefix ?? defaultJobNamePrefix(this);
    this.jobNaming = props.jobNaming ?? TrainingJobNaming.UNIQUE_ID;
    this.hyperparametersAtRunTime = this.checkHyperparametersAtRunTime(props.hyperparametersAtRunTime);
    this.dataLoaderSizing = props.instance.sizeDataLoaders({
      processesPerInstance: props.processesPerInstance,
      memoryPerWorker: props.memoryPerLoaderWorker,
    });

    const { network, shared } = this.createNetwork(props);
    this.vpc = network.vpc;
    this.connections = network.connections;
    this.outputBucket = props.outputBucket ?? shared?.outputBucket ?? createSecureBucket(this, 'OutputBucket', {
      encryptionKey: props.encryptionKey, accessLogsBucket: props.accessLogsBucket,
    });
    this.role = props.role ?? createExecutionRole(this);
    const channels = this.bindChannels(props.channels ?? []);

    const spot = props.useSpotInstances ?? false;
    const container = (props.container ?? TrainingContainer.pytorch())._bind(this, this.role);
    validateContainerForInstance(this, props.instance, container);
    const codeSource = props.code ?? (container.providesPyTorch ? TrainingCode.reference() : undefined);
    const checkpoints = this.checkpointsEnabled(props, spot, codeSource);
    this.outputPrefix = props.outputPrefix ?? DEFAULT_OUTPUT_PREFIX;
    this.grantOutput(props, checkpoints);
    const volumeKey = this.volumeKey(props);
    volumeKey?.grant(this.role, 'kms:CreateGrant');
    if (shared) this.warnMissingEndpoints(shared, codeSource);
    const code = this.bindCode(codeSource, container);

    const workers = this.loaderWorkers(props);
    this.cluster = {
      ...clusterOfJob(props),
      instanceCount: this.instanceCount,
      processesPerInstance: this.dataLoaderSizing.processesPerInstance,
      loaderWorkers: workers,
    };
    this.hyperparameters = this.renderHyperparameters(props, workers, container, code);
    this.metricDefinitions = props.metricDefinitions ?? codeSource?.metricDefinitions ?? [];

    this.request = {
      TrainingJobName: '', // rendered per execution, see renderJobName
      RoleArn: this.role.roleArn,
      AlgorithmSpecification: this.renderAlgorithmSpecification(container, channels),
      HyperParameters: this.hyperparameters,
      ...(channels.length ? { InputDataConfig: channels.map((c) => c.channel) } : {}),
      OutputDataConfig: this.renderOutputDataConfig(props.encryptionKey),
      ResourceConfig: this.renderResourceConfig(props, channels, volumeKey),
      VpcConfig: this.renderVpcConfig(network.subnetIds),
      StoppingCondition: this.renderStoppingCondition(props, spot),
      ...(spot ? { EnableManagedSpotTraining: true } : {}),
      ...(checkpoints ? {
        CheckpointConfig: { S3Uri: '', LocalPath: '/opt/ml/checkpoints' }, // S3Uri rendered per execution
      } : {}),
      EnableInterContainerTrafficEncryption: props.interContainerTrafficEncryption ?? this.instanceCount > 1,
      EnableNetworkIsolation: props.enableNetworkIsolation ?? false,
      ...(props.environment && Object.keys(props.environment).length ? { Environment: props.environment } : {}),
      ...(props.retryAttempts ? { RetryStrategy: { MaximumRetryAttempts: props.retryAttempts } } : {}),
      ...(props.tags && Object.keys(props.tags).length ? {
        Tags: Object.entries(props.tags).map(([Key, Value]) => ({ Key, Value })),
      } : {}),
    };

    this.taskPolicies = orchestrationPolicies(this, {
      role: this.role,
      jobNamePrefix: this.jobNamePrefix,
      tagged: this.request.Tags !== undefined,
      sync: this.integration === sfn.IntegrationPattern.RUN_JOB,
    });
  }

  private checkIntegrationPattern(integration: sfn.IntegrationPattern): sfn.IntegrationPattern {
    if (integration !== sfn.IntegrationPattern.RUN_JOB && integration !== sfn.IntegrationPattern.REQUEST_RESPONSE) {
      throw new ValidationError('UnsupportedIntegrationPattern',
        `integrationPattern must be RUN_JOB (.sync) or REQUEST_RESPONSE, got ${integration}`, this);
    }
    return integration;
  }

  private checkHyperparametersAtRunTime(path: string | undefined): string | undefined {
    if (path !== undefined && !sfn.JsonPath.isEncodedJsonPath(path)) {
      throw new ValidationError('HyperparametersAtRunTimeNotAPath',
        `hyperparametersAtRunTime must be a JSONPath or intrinsic function (JsonPath.objectAt(...), JsonPath.jsonMerge(...)), got '${path}'`, this);
    }
    return path;
  }

  /** The job's VPC, subnets and security groups: placed near its dataset-cache channels, in the shared network unless given. */
  private createNetwork(props: TrainingJobProps): { readonly network: JobNetwork; readonly shared?: TrainingNetwork } {
    const placements = (props.channels ?? []).flatMap((channel) => (channel._placement ? [channel._placement] : []));
    const shared = this.sharedNetwork(props, placements.length > 0);
    const network = createTrainingNetwork(this, {
      ...placeNearChannels(this, { ...props, vpc: props.vpc ?? shared?.vpc }, placements),
      securityGroups: props.securityGroups ?? (shared ? [shared.securityGroup] : undefined),
      logs: { retention: props.logRetention, encryptionKey: props.encryptionKey },
    });
    return { network, shared };
  }

  /** Binds the channels in order: a channel's default input mode counts the File-mode data of the ones before it. */
  private bindChannels(given: TrainingChannel[]): ChannelConfig[] {
    const channels: ChannelConfig[] = [];
    for (const channel of given) {
      channels.push(channel._bind({
        scope: this,
        grantee: this.role,
        connections: this,
        inputModeFor: (facts) => this.defaultInputMode(facts, this.fileModeBytes(channels) ?? 0),
      }));
    }
    this.checkChannels(channels);
    return channels;
  }

  /** Checkpoints: as asked, else with spot capacity or code that saves them; spot without them is warned about. */
  private checkpointsEnabled(props: TrainingJobProps, spot: boolean, codeSource: TrainingCode | undefined): boolean {
    const checkpoints = props.enableCheckpoints ?? (spot || (codeSource?.savesCheckpoints ?? false));
    if (spot && !checkpoints) {
      Annotations.of(this).addWarningV2('cdk-training-io:spotWithoutCheckpoints',
        'useSpotInstances without checkpoints: every spot interruption restarts training from the beginning. ' +
        'Set enableCheckpoints: true and save/restore /opt/ml/checkpoints in the training code.');
    }
    return checkpoints;
  }

  /** Lets the role write the model artifacts (and checkpoints) under its prefixes of the output bucket, and use the key. */
  private grantOutput(props: TrainingJobProps, checkpoints: boolean): void {
    this.outputBucket.grantPut(this.role, `${this.outputPrefix}*`);
    acknowledgePrefixGrant(this, this.outputBucket, this.outputPrefix, 'the job writes its model artifacts');
    if (checkpoints) {
      this.outputBucket.grantReadWrite(this.role, `${this.checkpointPrefix()}*`);
      acknowledgePrefixGrant(this, this.outputBucket, this.checkpointPrefix(), 'the job saves and restores checkpoints');
    }
    if (!props.outputBucket && !props.accessLogsBucket) {
      acknowledge(this, 'AwsSolutions-S1', 'the output bucket is written only by this job\'s execution role; audit reads ' +
        'with CloudTrail S3 data events, or set accessLogsBucket');
    }
    props.encryptionKey?.grantEncryptDecrypt(this.role);
  }

  /** Warns of AWS APIs the code calls that the shared network has no interface endpoint for (its subnets are isolated). */
  private warnMissingEndpoints(shared: TrainingNetwork, codeSource: TrainingCode | undefined): void {
    const codeFiles = codeSource?._sourceFiles();
    if (!codeFiles) return;
    for (const warning of missingEndpointWarnings(codeFiles, shared.interfaceEndpoints)) {
      Annotations.of(this).addWarningV2(`cdk-training-io:${warning.code}`, warning.message);
    }
  }

  private bindCode(codeSource: TrainingCode | undefined, container: TrainingContainerConfig): TrainingCodeConfig | undefined {
    const code = codeSource?._bind(this, this.role);
    if (code && !container.usesTrainingToolkit) {
      throw new ValidationError('CodeIgnoredByEntrypoint',
        'code is run by the SageMaker training toolkit, which a custom container entrypoint bypasses; ' +
        'bake the code into the image, or drop the entrypoint', this);
    }
    return code;
  }

  /** The loader workers per GPU process: given, or sized; a given count outside the sizing, or a `num_workers` hyperparameter, is warned about. */
  private loaderWorkers(props: TrainingJobProps): number {
    const givenWorkers = givenLoaderWorkers(props);
    const workers = givenWorkers ?? this.dataLoaderSizing.loaderWorkers;
    const workersWarning = givenWorkers === undefined || Token.isUnresolved(workers)
      ? undefined : loaderWorkersWarning(this.dataLoaderSizing, workers);
    if (workersWarning) Annotations.of(this).addWarningV2(`cdk-training-io:${workersWarning.code}`, workersWarning.message);
    if (props.hyperparameters?.num_workers !== undefined) {
      Annotations.of(this).addWarningV2('cdk-training-io:numWorkersOverridden',
        `hyperparameters.num_workers (${props.hyperparameters.num_workers}) replaces the ${workers} loader workers the job `
        + 'sizes or is given, which the dataset\'s consumers and the I/O plan count on; set loaderWorkers instead');
    }
    return workers;
  }

  /** `num_workers`, the launcher's and the code's `sagemaker_*`, DALI's threads, then the user's. */
  private renderHyperparameters(props: TrainingJobProps, workers: number, container: TrainingContainerConfig,
    code: TrainingCodeConfig | undefined): { [name: string]: string } {
    const launcher = props.launcher ?? TrainingLauncher.SCRIPT;
    if (launcher !== TrainingLauncher.SCRIPT && !code) {
      throw new ValidationError('LauncherWithoutCode',
        `launcher ${launcher} is run by the SageMaker training toolkit, which needs code; set code, or leave launcher unset ` +
        'and start the processes from the image', this);
    }
    const hyperparameters: { [name: string]: string } = {
      num_workers: String(workers),
      ...(launcher === TrainingLauncher.TORCHRUN ? {
        sagemaker_torch_distributed_enabled: 'true',
        sagemaker_instance_type: props.instance.instanceType,
      } : {}),
      ...(container.providesDali ? { dali_threads: String(this.dataLoaderSizing.daliThreads) } : {}),
      ...(code ? {
        sagemaker_program: code.program,
        sagemaker_submit_directory: code.s3Uri,
        sagemaker_region: Stack.of(this).region,
      } : {}),
      ...props.hyperparameters,
    };
    validateHyperparameters(this, hyperparameters);
    return hyperparameters;
  }

  private renderAlgorithmSpecification(container: TrainingContainerConfig, channels: ChannelConfig[]): CreateTrainingJobRequest['AlgorithmSpecification'] {
    return {
      TrainingImage: container.imageUri,
      TrainingInputMode: channels[0]?.inputMode ?? InputMode.FILE,
      ...(container.entrypoint ? { ContainerEntrypoint: container.entrypoint } : {}),
      ...(container.arguments ? { ContainerArguments: container.arguments } : {}),
      ...(this.metricDefinitions.length ? {
        MetricDefinitions: this.metricDefinitions.map((m) => ({ Name: m.name, Regex: m.regex })),
      } : {}),
    };
  }

  private renderOutputDataConfig(encryptionKey: kms.IKey | undefined): CreateTrainingJobRequest['OutputDataConfig'] {
    return {
      S3OutputPath: `s3://${this.outputBucket.bucketName}/${this.outputPrefix}`,
      ...(encryptionKey ? { KmsKeyId: encryptionKey.keyArn } : {}),
    };
  }

  private renderResourceConfig(props: TrainingJobProps, channels: ChannelConfig[], volumeKey: kms.IKey | undefined): CreateTrainingJobRequest['ResourceConfig'] {
    return {
      InstanceType: props.instance.instanceType as TrainingInstanceType,
      InstanceCount: this.instanceCount,
      ...this.renderVolume(props, channels, volumeKey),
      ...(props.keepAlivePeriod ? { KeepAlivePeriodInSeconds: props.keepAlivePeriod.toSeconds() } : {}),
      ...(props.trainingPlanArn ? { TrainingPlanArn: props.trainingPlanArn } : {}),
    };
  }

  private renderVpcConfig(subnetIds: string[]): CreateTrainingJobRequest['VpcConfig'] {
    return {
      SecurityGroupIds: this.connections.securityGroups.map((sg) => sg.securityGroupId),
      Subnets: subnetIds,
    };
  }

  /** The runtime limit (a day by default), and with spot capacity the wait for it (twice the runtime by default). */
  private renderStoppingCondition(props: TrainingJobProps, spot: boolean): CreateTrainingJobRequest['StoppingCondition'] {
    const maxRuntime = props.maxRuntime ?? DEFAULT_MAX_RUNTIME;
    return {
      MaxRuntimeInSeconds: maxRuntime.toSeconds(),
      ...(spot ? { MaxWaitTimeInSeconds: (props.maxWaitTime ?? Duration.seconds(maxRuntime.toSeconds() * 2)).toSeconds() } : {}),
    };
  }

  /** The network the job shares: `network`, or the stack's when the job has neither `vpc` nor a dataset-cache channel. */
  private sharedNetwork(props: TrainingJobProps, readsCache: boolean): TrainingNetwork | undefined {
    if (props.network) {
      if (props.vpc) {
        throw new ValidationError('NetworkAndVpc',
          `network and vpc cannot both be set, got network ${props.network.node.path} and vpc ${props.vpc.node.path}; ` +
          'the job runs in network.vpc: remove vpc', this);
      }
      return props.network;
    }
    if (props.vpc || readsCache) return undefined;
    const choices = { encryptionKey: props.encryptionKey, accessLogsBucket: props.accessLogsBucket, logRetention: props.logRetention };
    const network = TrainingNetwork.of(this, choices);
    network._checkShared(this, choices);
    return network;
  }

  /** `checkpoints/<job name prefix>/`: jobs that share an output bucket keep their checkpoints apart. */
  private checkpointPrefix(): string {
    return `${CHECKPOINT_PREFIX}${this.jobNamePrefix}/`;
  }

  /** The principal of the execution role. */
  public get grantPrincipal(): iam.IPrincipal {
    return this.role.grantPrincipal;
  }

  /**
   * The `CreateTrainingJob` request this task sends, as the state's `Parameters`: the job name
   * and the checkpoint location are `.$` fields that Step Functions computes for each run.
   */
  public renderRequest(): any {
    const { TrainingJobName: _name, CheckpointConfig, HyperParameters, ...rest } = this.request;
    const request: Record<string, unknown> = copyRequest({
      TrainingJobName: renderJobName(this.jobNamePrefix, this.jobNaming === TrainingJobNaming.EXECUTION_NAME),
      ...rest,
      HyperParameters: this.hyperparametersAtRunTime ?? HyperParameters,
      ...(CheckpointConfig ? {
        CheckpointConfig: { ...CheckpointConfig, S3Uri: checkpointUri(this.outputBucket, this.checkpointPrefix()) },
      } : {}),
    });
    for (const override of this.requestOverrides) applyOverride(request, override.path, override.value, override.remove);
    return sfn.FieldUtils.renderObject(request);
  }

  /**
   * Adds or replaces a field of the `CreateTrainingJob` request, for what the construct does not
   * model (`ProfilerConfig`, `TensorBoardOutputConfig`, `ResourceConfig.InstanceGroups`, ...), like
   * `CfnResource.addPropertyOverride`. The path is the field's API name, dot-separated, with list
   * indexes as numbers (`InputDataConfig.0.ShuffleConfig`); missing objects on the way are created.
   * A JSONPath value (`JsonPath.stringAt(...)`) is read from the state at run time. Overrides apply in
   * the order they are added, after everything the construct renders; the request is not checked
   * against the API model, and the execution role gets no permission for what an override needs.
   *
   * @param path e.g. `ProfilerConfig.S3OutputPath`
   * @param value the field's value: a string, number, boolean, object or list
   * @see https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateTrainingJob.html
   */
  public addRequestOverride(path: string, value: any): void {
    if (value === undefined) {
      throw new ValidationError('UndefinedRequestOverride',
        `addRequestOverride('${path}') got undefined; use addRequestDeletionOverride('${path}') to remove the field`, this);
    }
    this.requestOverrides.push({ path: parseRequestPath(this, path), value, remove: false });
  }

  /**
   * Removes a field of the `CreateTrainingJob` request (e.g. `EnableInterContainerTrafficEncryption`).
   *
   * @param path e.g. `ResourceConfig.VolumeSizeInGB`
   */
  public addRequestDeletionOverride(path: string): void {
    this.requestOverrides.push({ path: parseRequestPath(this, path), value: undefined, remove: true });
  }

  /** @internal */
  protected _renderTask(): any {
    const suffix = this.integration === sfn.IntegrationPattern.RUN_JOB ? '.sync' : '';
    return {
      Resource: `arn:${Aws.PARTITION}:states:::sagemaker:createTrainingJob${suffix}`,
      Parameters: this.renderRequest(),
    };
  }

  /**
   * The I/O planner's storage rule: File when the File-mode data of this channel and the ones before
   * it fit the instance (local NVMe, or the EBS volume the user sized, with 10 % + 50 GiB to spare; the
   * default EBS volume up to 100 GB), FastFile when `datasetSize` says they do not.
   */
  private defaultInputMode(facts: S3ChannelFacts, bytesOfEarlierChannels: number): InputMode {
    const perInstance = this.fileModeBytesPerInstance(facts.datasetSize, facts.distribution);
    if (perInstance === undefined) return InputMode.FILE;
    const total = bytesOfEarlierChannels + perInstance;
    const volumeBytes = this.userSizedVolumeBytes();
    const fits = volumeBytes === undefined ? fitsFileMode(this.instance, total) : fileModeFootprintBytes(total) <= volumeBytes;
    if (fits) return InputMode.FILE;
    const earlier = bytesOfEarlierChannels > 0 ? ` (with the ${formatGB(bytesOfEarlierChannels)} of the channels before it)` : '';
    const why = volumeBytes === undefined
      ? describeFileModeFit(this.instance, formatGB(total), false)
      : `${formatGB(total)} (+10 % + 50 GiB for checkpoints and outputs) does not fit the ${formatGB(volumeBytes)} EBS volume`;
    Annotations.of(this).addInfo(
      `channel '${facts.channelName}' uses FastFile: its ${formatGB(perInstance)} per instance${earlier} do not fit File mode: ${why}`);
    return InputMode.FAST_FILE;
  }

  /** The EBS volume the user sized on an EBS-backed instance, in bytes. */
  private userSizedVolumeBytes(): number | undefined {
    if (this.instance.hasLocalNvme || !this.volumeSize) return undefined;
    return this.volumeSize.toBytes({ rounding: SizeRoundingBehavior.NONE });
  }

  private fileModeBytesPerInstance(size: Size | undefined, distribution: S3DataDistribution | undefined): number | undefined {
    if (!size) return undefined;
    const bytes = size.toBytes({ rounding: SizeRoundingBehavior.NONE });
    if (distribution !== S3DataDistribution.SHARDED_BY_S3_KEY) return bytes;
    // A deploy-time instance count leaves the share of each instance unknown.
    return Token.isUnresolved(this.instanceCount) ? undefined : Math.ceil(bytes / this.instanceCount);
  }

  /** File-mode bytes each instance stores for these channels; undefined when a size is unknown. */
  private fileModeBytes(channels: ChannelConfig[]): number | undefined {
    return channels
      .filter((c) => c.inputMode === InputMode.FILE && !c.fileSystem)
      .map((c) => this.fileModeBytesPerInstance(c.datasetSize, c.distribution))
      .reduce<number | undefined>((sum, bytes) => (sum === undefined || bytes === undefined ? undefined : sum + bytes), 0);
  }

  private checkChannels(channels: ChannelConfig[]): void {
    const names = new Set<string>();
    for (const channel of channels) {
      const name = channel.channel.ChannelName!;
      if (names.has(name)) {
        throw new ValidationError('DuplicateChannelName', `channels must have distinct names, got '${name}' twice`, this);
      }
      names.add(name);
      if (channel.distribution === S3DataDistribution.SHARDED_BY_S3_KEY && this.instanceCount === 1) {
        Annotations.of(this).addWarningV2('cdk-training-io:shardedByS3KeyOnOneInstance',
          `channel '${name}' uses ShardedByS3Key on a single instance, where it changes nothing; ` +
          'use FullyReplicated, or more instances');
      }
      if (channel.shuffled && channel.inputMode !== InputMode.PIPE) {
        Annotations.of(this).addWarningV2('cdk-training-io:shuffleOutsidePipeMode',
          `channel '${name}' sets shuffleSeed in ${channel.inputMode} mode, where ShuffleConfig only orders the download once; ` +
          'shuffle in the data loader, or use Pipe mode to reshuffle every epoch');
      }
    }
  }

  private volumeKey(props: TrainingJobProps): kms.IKey | undefined {
    if (this.instance.hasLocalNvme) {
      if (props.volumeEncryptionKey) {
        throw new ValidationError('VolumeKeyOnNvmeInstance',
          `volumeEncryptionKey is rejected by SageMaker on ${this.instance.instanceType}, which has local NVMe storage ` +
          '(hardware-encrypted); remove volumeEncryptionKey, or use an EBS-backed type (ml.p3.2xlarge, ml.p3.8xlarge, ml.p3.16xlarge)', this);
      }
      return undefined;
    }
    return props.volumeEncryptionKey ?? props.encryptionKey;
  }

  private renderVolume(props: TrainingJobProps, channels: ChannelConfig[], volumeKey: kms.IKey | undefined) {
    const fileModeBytes = this.fileModeBytes(channels);
    if (this.instance.hasLocalNvme) {
      if (props.volumeSize) {
        Annotations.of(this).addWarningV2('cdk-training-io:volumeSizeIgnoredOnNvme',
          `volumeSize is ignored on ${this.instance.instanceType}: SageMaker uses its ` +
          `${this.instance.localNvmeGB} GB of local NVMe and provisions no EBS volume; remove volumeSize`);
      }
      const nvme = `the ${this.instance.localNvmeGB} GB of local NVMe`;
      this.checkFileModeFits(fileModeBytes, this.instance.localNvmeBytes, nvme);
      this.checkFileModeHeadroom(fileModeBytes, this.instance.localNvmeBytes, nvme);
      return {};
    }
    const sizeGiB = props.volumeSize
      ? Math.ceil(props.volumeSize.toGibibytes({ rounding: SizeRoundingBehavior.NONE }))
      : Math.max(MIN_EBS_VOLUME.toGibibytes(), Math.ceil(fileModeFootprintBytes(fileModeBytes ?? 0) / 2 ** 30));
    this.checkFileModeFits(fileModeBytes, sizeGiB * 2 ** 30, `the ${sizeGiB} GiB EBS volume`);
    this.checkFileModeHeadroom(fileModeBytes, sizeGiB * 2 ** 30, `the ${sizeGiB} GiB EBS volume`);
    return {
      VolumeSizeInGB: sizeGiB,
      ...(volumeKey ? { VolumeKmsKeyId: volumeKey.keyArn } : {}),
    };
  }

  /** File-mode data that fits the instance's storage but leaves too little room for what SageMaker writes next to it. */
  private checkFileModeHeadroom(bytes: number | undefined, capacity: number, what: string): void {
    if (bytes === undefined || bytes > capacity || fileModeFootprintBytes(bytes) <= capacity) return;
    Annotations.of(this).addWarningV2('cdk-training-io:fileModeWithoutHeadroom',
      `File-mode channels put ${formatGB(bytes)} on each instance: it fits ${what} of ${this.instance.instanceType}, but ` +
      'leaves less than 10 % + 50 GiB for checkpoints, the model and outputs, which SageMaker writes there too, and a full ' +
      'disk stops the job; use FastFile or Pipe for the largest channel, ShardedByS3Key over more instances, or more storage');
  }

  private checkFileModeFits(bytes: number | undefined, capacity: number, what: string): void {
    if (bytes === undefined || bytes <= capacity) return;
    throw new ValidationError('FileModeDataTooLarge',
      `File-mode channels put ${formatGB(bytes)} on each instance, more than ${what} of ${this.instance.instanceType}; ` +
      'use FastFile or Pipe mode, ShardedByS3Key over more instances, an FSx for Lustre channel, or a larger instance', this);
  }
}

/** A request field's path: API names (a letter, then letters and digits) and list indexes. */
const REQUEST_PATH = /^[A-Za-z][A-Za-z0-9]*(\.([A-Za-z][A-Za-z0-9]*|\d+))*$/;

function parseRequestPath(scope: Construct, path: string): string[] {
  if (!REQUEST_PATH.test(path)) {
    throw new ValidationError('InvalidRequestPath',
      `request path must be dot-separated CreateTrainingJob field names and list indexes (e.g. 'ProfilerConfig.S3OutputPath', ` +
      `'InputDataConfig.0.ShuffleConfig'), got '${path}'`, scope);
  }
  return path.split('.');
}

/** Sets (or removes) the value at `path`, creating the objects on the way; a number segment indexes a list. */
function applyOverride(target: Record<string, unknown>, path: string[], value: unknown, remove: boolean): void {
  let node: any = target;
  for (const segment of path.slice(0, -1)) {
    if (node[segment] === undefined || node[segment] === null || typeof node[segment] !== 'object') {
      if (remove) return;
      node[segment] = {};
    }
    node = node[segment];
  }
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1); else delete node[last];
  } else {
    node[last] = value;
  }
}

/** A copy of the request's plain objects and lists that overrides may change; tokens and constructs are kept as they are. */
function copyRequest<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyRequest) as unknown as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyRequest(v)])) as T;
  }
  return value;
}

function formatGB(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
