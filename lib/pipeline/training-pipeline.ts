import type { PriceOverrides } from '../planning/price-overrides';
import { Duration, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as events from 'aws-cdk-lib/aws-events';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { checkDatasetConsumers } from './private/consumer-check';
import { planDataPath } from './private/pipeline-plan';
import { createPipelineDashboard } from './private/pipeline-dashboard';
import type { LoaderMetricNames} from './training-job-diagnosis';
import { TrainingJobDiagnosis } from './training-job-diagnosis';
import type { DatasetProfile } from '../planning/dataset-profile';
import { ValidationError } from '../private/errors';
import type { LogGroupOptions } from '../private/log-group';
import { acknowledge, wildcardResourceFinding } from '../private/nag';
import type { IShardedDataset, ShardedDataset } from '../sharding/sharded-dataset';
import { CacheSource } from '../storage/cache-source';
import { DATASET_CACHE_DIRECTORY } from '../storage/private/cache-layout';
import type { LustreDatasetCacheOptions } from '../storage/lustre-dataset-cache';
import { LustreDatasetCache } from '../storage/lustre-dataset-cache';
import { defaultJobNamePrefix } from '../training/private/job-naming';
import type { S3ChannelOptions} from '../training/training-channel';
import { S3DataDistribution } from '../vocabulary/s3-data-distribution';
import { TrainingChannel } from '../training/training-channel';
import type { TrainingJobOptions } from '../training/training-job';
import { TrainingJob, TrainingJobNaming } from '../training/training-job';
import { TrainingNetwork } from '../training/training-network';
import { LoggedStateMachine } from '../state-machines/logged-state-machine';

/**
 * Properties of a {@link TrainingPipeline}.
 */
export interface TrainingPipelineProps {
  /**
   * The dataset each execution packs first (skipped when its source and options are unchanged).
   * The pipeline runs its own copy of the dataset's packing steps; the dataset's state machine
   * remains for packing without training.
   */
  readonly dataset: ShardedDataset;

  /**
   * The training job: instance, container, code, hyperparameters, ... The pipeline adds the input
   * channel of the packed shards, names each job `<jobNamePrefix>-<execution name>` and merges the
   * execution's `hyperparameters` over these.
   */
  readonly training: TrainingJobOptions;

  /**
   * Name of the job's input channel (`/opt/ml/input/data/<name>`, `SM_CHANNEL_<NAME>`).
   *
   * @default 'train'
   */
  readonly channelName?: string;

  /**
   * Name of the job's channel of the index files (`index/` of the dataset), FullyReplicated in
   * File mode: every process needs the index of each shard it reads, and DALI's readers need
   * them all. The reference `train.py` looks for a channel named `index`.
   *
   * @default 'index'
   */
  readonly indexChannelName?: string;

  /**
   * A packed dataset to evaluate on after each epoch, as the job's `validation` channel
   * (FullyReplicated: every process evaluates its share of the records; the input mode TrainingJob
   * derives, File when it fits). The reference `train.py` logs `val:loss` and `val:accuracy` from it.
   * It is read from S3 also with a `datasetCache`, which holds the training shards only.
   *
   * @default - no validation channel
   */
  readonly validationDataset?: IShardedDataset;

  /**
   * Read the shards through an FSx for Lustre file system linked to them: loaded from S3 once,
   * read by every job in File mode at the file system's throughput. After each packing run the
   * pipeline imports the new shards' metadata and waits until the import is done, so that the job
   * sees them all.
   *
   * @default - no cache: the job reads the shards from S3 as `shardsChannel` says
   */
  readonly datasetCache?: LustreDatasetCacheOptions;

  /**
   * How the job reads the shards from S3 when there is no `datasetCache`. What you set here wins
   * over the planner's choice.
   *
   * @default - with `datasetProfile`, what `IoPlanner` chooses for it and the job's cluster (input
   * mode, distribution, ShuffleConfig with the dataset's seed); without, ShardedByS3Key over more than
   * one instance and the input mode TrainingJob derives (File when the shards fit on the instance, else FastFile)
   */
  readonly shardsChannel?: S3ChannelOptions;

  /**
   * The source files as they lie in S3 (count and size), for the I/O planner: with it, `IoPlanner`
   * chooses the shards channel's input mode, distribution and shuffle from the job's cluster and
   * `epochs` hyperparameter, and gives the cache its `datasetSize`. Every choice and its reason is
   * recorded in the cloud assembly (metadata `cdk-training-io:plan`) and the stack output `DataPath`.
   *
   * @default - no profile: the fixed defaults of `shardsChannel` and `datasetCache`
   */
  readonly datasetProfile?: DatasetProfile;

  /**
   * Samples each GPU (or Trainium device) consumes per second at full speed, e.g. 1000 for
   * ResNet-50 on a V100. With a `datasetProfile` (its mean object size), it gives the cache a
   * `readRate` when `datasetCache` has none, and the planner its read-rate and decoding checks.
   *
   * @default - unknown: a cache without `readRate` gets the lowest throughput tier, with a warning
   */
  readonly samplesPerSecondPerDevice?: number;

  /**
   * Prices the I/O planner uses instead of its table's (us-east-1 on-demand list prices), as
   * `IoPlanner.plan`'s `prices`: the same estimates choose the shards channel here.
   *
   * @default - the table's prices
   */
  readonly prices?: PriceOverrides;

  /**
   * The topic every failure is published to (the step, the error and the cause).
   *
   * @default - a new topic, encrypted with the account's AWS managed SNS key, SSL only
   */
  readonly notificationTopic?: sns.ITopic;

  /**
   * The event bus of the `Training Job Diagnosed` events (source `cdk-training-io`).
   *
   * @default - the account's default event bus
   */
  readonly eventBus?: events.IEventBus;

  /**
   * Name of the CloudWatch dashboard.
   *
   * @default - a name CloudFormation generates
   */
  readonly dashboardName?: string;

  /**
   * Metric-definition names of the training code's samples per second and data-wait share, which
   * the diagnosis and the dashboard read.
   *
   * @default - `train:samples_per_second` and `train:data_wait_fraction` when the job's code declares
   * them (`TrainingCode.reference()` does); none otherwise
   */
  readonly loaderMetrics?: LoaderMetricNames;

  /**
   * The VPC of the diagnoser function. It calls SageMaker (`api.sagemaker`), CloudWatch
   * (`monitoring`), EventBridge (`events`) and S3: a VPC with NAT, or with those endpoints.
   *
   * @default - the diagnoser runs outside any VPC
   */
  readonly lambdaVpc?: ec2.IVpc;

  /**
   * The subnets of the diagnoser in `lambdaVpc`.
   *
   * @default - the VPC's private subnets
   */
  readonly lambdaSubnets?: ec2.SubnetSelection;
}


/** Routes a state's errors to the failure notification, naming the step. */
type CatchFailure = (state: { addCatch(handler: sfn.IChainable, props?: sfn.CatchProps): unknown }, step: string) => void;

/** Where the state carries the dataset version the planner planned (or found current): the packing steps' `$.plan`. */
const PLANNED_VERSION = '$.plan.datasetVersion';
const DEFAULT_INDEX_CHANNEL = 'index';
/** The channel the reference `train.py` evaluates on. */
const VALIDATION_CHANNEL = 'validation';
/** A few bytes per record: downloaded whole to every host before training starts. */
/** How often the pipeline checks on an FSx import task. */
const IMPORT_POLL = Duration.seconds(30);

/**
 * The training pipeline a platform team deploys: one Step Functions state machine that packs a
 * dataset into shards, makes them visible on an FSx for Lustre cache (optional), trains on them
 * and says whether the GPUs were fed, and why not.
 *
 * `ApplyDefaults` → `CheckInput` → `MergeInput` → `Plan` → (`AlreadyPacked` | `PackShards` → `Finalize` → [`ImportShards` →
 * `WaitForImport` ⇄ `CheckImport`]) → `Train` (`createTrainingJob.sync`, job
 * `<prefix>-<execution name>`, hyperparameters of the execution input over the construct's) →
 * `Diagnose` (report beside the job's output, EventBridge event) → `Done`. Any failure goes to
 * `NotifyFailure` (SNS) and fails the execution; a failed packing run leaves no manifest, so the
 * next execution packs again, and a stopped execution stops its training job.
 *
 * Start an execution with `{}`, or `{"force": true, "hyperparameters": {"epochs": "5"}}`
 * (`training-io launch --state-machine <arn>` does, and follows it).
 */
export class TrainingPipeline extends Construct {
  /** The pipeline's state machine. */
  public readonly stateMachine: sfn.StateMachine;
  /** The training task. */
  public readonly trainingJob: TrainingJob;
  /** The FSx for Lustre cache of the shards, with `datasetCache`. */
  public readonly cache?: LustreDatasetCache;
  /** Diagnoses each job: job-diagnoser. */
  public readonly diagnoserFunction: lambda.Function;
  /** Diagnoses the pipeline's jobs that fail or are stopped (the `Diagnose` step does those that complete). */
  public readonly diagnosis: TrainingJobDiagnosis;
  /** Where failures are published. */
  public readonly notificationTopic: sns.ITopic;
  /** The bus of the diagnosis events. */
  public readonly eventBus: events.IEventBus;
  /** GPU, CPU, memory and disk per host, loader and FSx throughput, packing, executions. */
  public readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: TrainingPipelineProps) {
    super(scope, id);
    validateProps(this, props);
    const { dataset, training } = props;
    const channelName = props.channelName ?? 'train';

    const dataPath = planDataPath(this, {
      training, shardsChannel: props.shardsChannel, datasetCache: props.datasetCache,
      datasetProfile: props.datasetProfile, samplesPerSecondPerDevice: props.samplesPerSecondPerDevice, seed: dataset.seed,
      imagePreprocessing: dataset.imagePreprocessing, prices: props.prices,
    });
    // The pipeline's log groups follow the job's choices: its retention, its key.
    const logs: LogGroupOptions = { retention: training.logRetention, encryptionKey: training.encryptionKey };
    // The cache and the job share the stack's network unless the job has a vpc or network of its own.
    const network = training.network ?? (dataPath.datasetCache && !training.vpc ? TrainingNetwork.of(this, {
      encryptionKey: training.encryptionKey, accessLogsBucket: training.accessLogsBucket, logRetention: training.logRetention,
    }) : undefined);
    const vpc = training.vpc ?? network?.vpc;
    if (dataPath.datasetCache) {
      this.cache = new LustreDatasetCache(this, 'Cache', { ...dataPath.datasetCache, source: CacheSource.fromShards(dataset), vpc: vpc! });
    }
    const indexChannelName = props.indexChannelName ?? DEFAULT_INDEX_CHANNEL;
    const channels = this.cache
      // The cache mirrors the dataset's root: both channels see it, and the reader follows its manifest.
      ? [TrainingChannel.fromDatasetCache(channelName, this.cache, DATASET_CACHE_DIRECTORY),
        TrainingChannel.fromDatasetCache(indexChannelName, this.cache, DATASET_CACHE_DIRECTORY)]
      // Pinned to the version this execution packed (or found current): a publish meanwhile cannot switch the job's data.
      : [TrainingChannel._fromShardsOfVersion(channelName, dataset, dataPath.shardsChannel ?? {}, PLANNED_VERSION),
        TrainingChannel._fromShardIndexOfVersion(indexChannelName, dataset, PLANNED_VERSION)];

    if (props.validationDataset) {
      channels.push(TrainingChannel.fromShards(VALIDATION_CHANNEL, props.validationDataset, { distribution: S3DataDistribution.FULLY_REPLICATED }));
    }
    this.trainingJob = new TrainingJob(this, 'Train', {
      ...training,
      jobNamePrefix: training.jobNamePrefix ?? defaultJobNamePrefix(this),
      vpc: training.vpc,
      network,
      channels,
      jobNaming: TrainingJobNaming.EXECUTION_NAME,
      hyperparametersAtRunTime: sfn.JsonPath.jsonMerge(
        sfn.JsonPath.objectAt('$.jobHyperparameters.defaults'), sfn.JsonPath.objectAt('$.jobHyperparameters.overrides')),
      resultSelector: {
        TrainingJobName: sfn.JsonPath.stringAt('$.TrainingJobName'),
        TrainingJobArn: sfn.JsonPath.stringAt('$.TrainingJobArn'),
        ModelArtifacts: sfn.JsonPath.objectAt('$.ModelArtifacts'),
      },
      resultPath: '$.training',
    });
    checkDatasetConsumers(this, dataset, this.trainingJob.cluster);

    this.notificationTopic = props.notificationTopic ?? new sns.Topic(this, 'Notifications', {
      displayName: 'cdk-training-io pipeline failures',
      // The AWS managed key: the state machine's role, in this account, publishes through SNS.
      masterKey: kms.Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });

    // Failed and stopped jobs get a report too; the Diagnose step diagnoses a completed one and returns it.
    this.diagnosis = new TrainingJobDiagnosis(this, 'Diagnosis', {
      job: this.trainingJob, loaderMetrics: props.loaderMetrics, cache: this.cache, eventBus: props.eventBus, diagnoseCompletedJobs: false,
      logRetention: logs.retention, encryptionKey: logs.encryptionKey, vpc: props.lambdaVpc, vpcSubnets: props.lambdaSubnets,
    });
    this.diagnoserFunction = this.diagnosis.diagnoserFunction;
    this.eventBus = this.diagnosis.eventBus;
    const loaderMetrics = this.diagnosis.loaderMetrics;

    const definition = this.createDefinition(dataset);
    this.stateMachine = new LoggedStateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      logRetention: logs.retention,
      encryptionKey: logs.encryptionKey,
      otherUnscopedActions: ['fsx:DescribeDataRepositoryTasks'],
    });
    dataset.grantPacking(this.stateMachine);
    acknowledge(this.stateMachine, wildcardResourceFinding(this.stateMachine, `${this.diagnoserFunction.functionArn}:*`),
      'lambda:InvokeFunction on the versions and aliases of the pipeline\'s own diagnoser');

    this.dashboard = createPipelineDashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      stateMachine: this.stateMachine,
      jobNamePrefix: this.trainingJob.jobNamePrefix,
      gpusPerInstance: training.instance.gpus,
      vcpusPerInstance: training.instance.vcpus,
      samplesPerSecondMetric: loaderMetrics?.samplesPerSecond,
      dataWaitMetric: loaderMetrics?.dataWaitFraction,
      cache: this.cache && { fileSystemId: this.cache.fileSystemId, baselineMBps: this.cache.baselineThroughputMBps },
    });
  }

  private createDefinition(dataset: ShardedDataset): sfn.IChainable {
    const failed = new sfn.Fail(this, 'Failed', { errorPath: '$.failure.Error', causePath: '$.failure.Cause' });
    const notify = new tasks.SnsPublish(this, 'NotifyFailure', {
      topic: this.notificationTopic,
      subject: 'cdk-training-io pipeline failed',
      message: sfn.TaskInput.fromObject({
        execution: sfn.JsonPath.executionId,
        step: sfn.JsonPath.stringAt('$failedStep'),
        error: sfn.JsonPath.stringAt('$.failure.Error'),
        cause: sfn.JsonPath.stringAt('$.failure.Cause'),
      }),
      resultPath: sfn.JsonPath.DISCARD,
    });
    notify.next(failed);
    const onFailure: CatchFailure = (state, step) => {
      // The failed step's name goes to a variable: the error at $.failure does not say where it happened.
      state.addCatch(notify, { resultPath: '$.failure', assign: { failedStep: step } });
    };

    // Every field of the input has a default, so that `{}` starts a run.
    const applyDefaults = new sfn.Pass(this, 'ApplyDefaults', {
      parameters: { defaults: { force: false, hyperparameters: {} }, input: sfn.JsonPath.entirePayload },
    });
    const mergeInput = new sfn.Pass(this, 'MergeInput', {
      parameters: { args: sfn.JsonPath.jsonMerge(sfn.JsonPath.objectAt('$.defaults'), sfn.JsonPath.objectAt('$.input')) },
      outputPath: '$.args',
    });

    // A malformed input would fail a merge (MergeInput's, or the Train state's) with States.Runtime,
    // which no Catch sees: check the input as given, before the merge, so that it is notified like
    // any other failure. Choice rules have no array test: an array with a first element is caught
    // by `[0]`, an empty one still fails the merge.
    const invalidInput = new sfn.Pass(this, 'InvalidInput', {
      parameters: {
        Error: 'InvalidInput',
        Cause: 'the execution input must be {"force": true|false, "hyperparameters": {"name": "value", ...}}, both optional',
      },
      resultPath: '$.failure',
      assign: { failedStep: 'CheckInput' },
    });
    invalidInput.next(notify);
    const notObject = (path: string) => sfn.Condition.or(
      sfn.Condition.isString(path), sfn.Condition.isNumeric(path), sfn.Condition.isBoolean(path), sfn.Condition.isNull(path),
      sfn.Condition.isPresent(`${path}[0]`));
    // A type test on a missing field fails the Choice with States.Runtime: test only what is there.
    const ifPresent = (path: string, condition: sfn.Condition) => sfn.Condition.and(sfn.Condition.isPresent(path), condition);
    const checkInput = new sfn.Choice(this, 'CheckInput')
      .when(sfn.Condition.or(
        notObject('$.input'),
        ifPresent('$.input.force', sfn.Condition.not(sfn.Condition.isBoolean('$.input.force'))),
        ifPresent('$.input.hyperparameters', notObject('$.input.hyperparameters')),
      ), invalidInput);

    const packing = dataset.packingSteps(this, 'Packing');
    onFailure(packing.plan, 'Plan');
    onFailure(packing.packShards, 'PackShards');
    onFailure(packing.finalize, 'Finalize');

    // The job's own hyperparameters, with the execution's over them (the merge is in the Train state).
    const jobHyperparameters = new sfn.Pass(this, 'JobHyperparameters', {
      parameters: { defaults: this.trainingJob.hyperparameters, overrides: sfn.JsonPath.objectAt('$.hyperparameters') },
      resultPath: '$.jobHyperparameters',
    });
    onFailure(this.trainingJob, 'Train');

    const diagnose = new tasks.LambdaInvoke(this, 'Diagnose', {
      lambdaFunction: this.diagnoserFunction,
      payloadResponseOnly: true,
      payload: sfn.TaskInput.fromObject({ trainingJobName: sfn.JsonPath.stringAt('$.training.TrainingJobName') }),
      resultPath: '$.diagnosis',
    });
    onFailure(diagnose, 'Diagnose');
    const done = new sfn.Pass(this, 'Done', {
      parameters: {
        trainingJobName: sfn.JsonPath.stringAt('$.training.TrainingJobName'),
        diagnosis: sfn.JsonPath.objectAt('$.diagnosis'),
      },
    });
    const train = jobHyperparameters.next(this.trainingJob).next(diagnose).next(done);

    packing.alreadyPacked.next(train);
    if (this.cache) {
      packing.finalize.next(this.importShards(dataset, train, notify, onFailure));
    } else {
      packing.finalize.next(train);
    }
    mergeInput.next(packing.plan);
    checkInput.otherwise(mergeInput);
    return applyDefaults.next(checkInput);
  }

  /**
   * Imports the metadata of the new shards into the cache (an FSx data repository task) and waits
   * until it is done: the associations' auto-import would get there too, but gives no signal.
   */
  private importShards(dataset: ShardedDataset, then: sfn.IChainable, notify: sfn.IChainable, onFailure: CatchFailure): sfn.IChainable {
    const cache = this.cache!;
    const stack = Stack.of(this);
    const fileSystemArn = stack.formatArn({ service: 'fsx', resource: 'file-system', resourceName: cache.fileSystemId });
    const taskArns = stack.formatArn({ service: 'fsx', resource: 'task', resourceName: '*' });
    const bucket = dataset.destinationBucket.bucketName;
    const start = new tasks.CallAwsService(this, 'ImportShards', {
      service: 'fsx',
      action: 'createDataRepositoryTask',
      iamAction: 'fsx:CreateDataRepositoryTask',
      iamResources: [fileSystemArn, taskArns],
      parameters: {
        FileSystemId: cache.fileSystemId,
        Type: 'IMPORT_METADATA_FROM_REPOSITORY',
        // The dataset's root: the new version's objects are the ones not yet imported.
        Paths: [`s3://${bucket}/${dataset.destinationPrefix}`],
        Report: { Enabled: false },
      },
      resultSelector: { TaskId: sfn.JsonPath.stringAt('$.DataRepositoryTask.TaskId') },
      resultPath: '$.import',
    });
    acknowledge(this, wildcardResourceFinding(this, taskArns), 'each import creates a new FSx data repository task; its ID is known only then');
    onFailure(start, 'ImportShards');
    const wait = new sfn.Wait(this, 'WaitForImport', { time: sfn.WaitTime.duration(IMPORT_POLL) });
    const check = new tasks.CallAwsService(this, 'CheckImport', {
      service: 'fsx',
      action: 'describeDataRepositoryTasks',
      iamAction: 'fsx:DescribeDataRepositoryTasks',
      iamResources: ['*'],
      parameters: { TaskIds: sfn.JsonPath.array(sfn.JsonPath.stringAt('$.import.TaskId')) },
      resultSelector: {
        Lifecycle: sfn.JsonPath.stringAt('$.DataRepositoryTasks[0].Lifecycle'),
      },
      resultPath: '$.importStatus',
    });
    onFailure(check, 'CheckImport');
    const importFailed = new sfn.Pass(this, 'ImportFailed', {
      parameters: {
        Error: 'ImportFailed',
        Cause: sfn.JsonPath.format('FSx import task {} ended {}', sfn.JsonPath.stringAt('$.import.TaskId'), sfn.JsonPath.stringAt('$.importStatus.Lifecycle')),
      },
      resultPath: '$.failure',
      assign: { failedStep: 'ImportShards' },
    });
    importFailed.next(notify);
    const done = new sfn.Choice(this, 'ImportDone')
      .when(sfn.Condition.stringEquals('$.importStatus.Lifecycle', 'SUCCEEDED'), then)
      .when(sfn.Condition.or(
        sfn.Condition.stringEquals('$.importStatus.Lifecycle', 'FAILED'),
        sfn.Condition.stringEquals('$.importStatus.Lifecycle', 'CANCELED'),
        sfn.Condition.stringEquals('$.importStatus.Lifecycle', 'CANCELING'),
      ), importFailed)
      .otherwise(wait);
    return start.next(wait).next(check).next(done);
  }
}



function validateProps(scope: Construct, props: TrainingPipelineProps): void {
  if (props.datasetCache && props.shardsChannel) {
    throw new ValidationError('ShardsChannelWithCache',
      'shardsChannel says how to read the shards from S3, but datasetCache makes the job read them from FSx for Lustre '
      + '(File mode): remove one of the two', scope);
  }
}
