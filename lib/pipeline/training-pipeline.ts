import { Duration, Size, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { createPipelineDashboard } from './private/pipeline-dashboard';
import { ValidationError } from '../private/errors';
import { createHandlerFunction } from '../private/handler-function';
import { createLogGroup, LogGroupOptions } from '../private/log-group';
import { acknowledge, acknowledgePrefixGrant, wildcardResourceFinding } from '../private/nag';
import { ShardedDataset } from '../sharding/sharded-dataset';
import { CacheSource } from '../storage/cache-source';
import { LustreDatasetCache, LustreDatasetCacheOptions } from '../storage/lustre-dataset-cache';
import { defaultJobNamePrefix } from '../training/private/job-naming';
import { trainingJobArnPattern } from '../training/private/training-permissions';
import { S3ChannelOptions, S3DataDistribution, TrainingChannel } from '../training/training-channel';
import { TrainingJob, TrainingJobNaming, TrainingJobOptions } from '../training/training-job';
import { TrainingNetwork } from '../training/training-network';

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
   * Read the shards through an FSx for Lustre file system linked to them: loaded from S3 once,
   * read by every job in File mode at the file system's throughput. After each packing run the
   * pipeline imports the new shards' metadata and waits until the import is done, so that the job
   * sees them all.
   *
   * @default - no cache: the job reads the shards from S3 as `shardsChannel` says
   */
  readonly datasetCache?: LustreDatasetCacheOptions;

  /**
   * How the job reads the shards from S3 when there is no `datasetCache`.
   *
   * @default - ShardedByS3Key over more than one instance; the input mode TrainingJob derives
   * (File when the shards fit on the instance, else FastFile). Planner seam: `IoPlanner` is to
   * supply these defaults from a dataset profile and the cluster.
   */
  readonly shardsChannel?: S3ChannelOptions;

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

/**
 * The metric definitions of the training code's loader metrics.
 */
export interface LoaderMetricNames {
  /** Samples per second, e.g. `train:samples_per_second`. */
  readonly samplesPerSecond: string;
  /** Share of each interval the training loop waited for its next batch, 0–1, e.g. `train:data_wait_fraction`. */
  readonly dataWaitFraction: string;
}

/** The diagnoser's log group and network. */
interface DiagnoserPlacement {
  readonly logs: LogGroupOptions;
  readonly vpc?: ec2.IVpc;
  readonly vpcSubnets?: ec2.SubnetSelection;
}

/** Routes a state's errors to the failure notification, naming the step. */
type CatchFailure = (state: { addCatch(handler: sfn.IChainable, props?: sfn.CatchProps): unknown }, step: string) => void;

const DEFAULT_LOADER_METRICS: LoaderMetricNames = {
  samplesPerSecond: 'train:samples_per_second',
  dataWaitFraction: 'train:data_wait_fraction',
};
/** How often the pipeline checks on an FSx import task. */
const IMPORT_POLL = Duration.seconds(30);

/**
 * The training pipeline a platform team deploys: one Step Functions state machine that packs a
 * dataset into shards, makes them visible on an FSx for Lustre cache (optional), trains on them
 * and says whether the GPUs were fed, and why not.
 *
 * `ApplyDefaults` → `CheckInput` → `Plan` → (`AlreadyPacked` | `PackShards` → `Finalize` → [`ImportShards` →
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

    // The pipeline's log groups follow the job's choices: its retention, its key.
    const logs: LogGroupOptions = { retention: training.logRetention, encryptionKey: training.encryptionKey };
    // The cache and the job share the stack's network unless the job has a vpc or network of its own.
    const network = training.network ?? (props.datasetCache && !training.vpc ? TrainingNetwork.of(this, {
      encryptionKey: training.encryptionKey, accessLogsBucket: training.accessLogsBucket, logRetention: training.logRetention,
    }) : undefined);
    const vpc = training.vpc ?? network?.vpc;
    if (props.datasetCache) {
      this.cache = new LustreDatasetCache(this, 'Cache', { ...props.datasetCache, source: CacheSource.fromShards(dataset), vpc: vpc! });
    }
    const channel = this.cache
      ? TrainingChannel.fromDatasetCache(channelName, this.cache, 'shards')
      : TrainingChannel.fromShards(channelName, dataset, defaultShardsChannel(training, props.shardsChannel));

    this.trainingJob = new TrainingJob(this, 'Train', {
      ...training,
      jobNamePrefix: training.jobNamePrefix ?? defaultJobNamePrefix(this),
      vpc: training.vpc,
      network,
      channels: [channel],
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

    this.notificationTopic = props.notificationTopic ?? new sns.Topic(this, 'Notifications', {
      displayName: 'cdk-training-io pipeline failures',
      // The AWS managed key: the state machine's role, in this account, publishes through SNS.
      masterKey: kms.Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    this.eventBus = props.eventBus ?? events.EventBus.fromEventBusName(this, 'DefaultBus', 'default');

    const loaderMetrics = props.loaderMetrics ?? declaredLoaderMetrics(this.trainingJob);
    this.diagnoserFunction = this.createDiagnoser(loaderMetrics, {
      logs, vpc: props.lambdaVpc, vpcSubnets: props.lambdaSubnets,
    });

    const definition = this.createDefinition(dataset);
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      tracingEnabled: true,
      logs: {
        destination: createLogGroup(this, 'StateMachineLogs', logs),
        level: sfn.LogLevel.ALL,
        includeExecutionData: false,
      },
    });
    dataset.grantPacking(this.stateMachine);
    acknowledge(this.stateMachine, wildcardResourceFinding(this.stateMachine, `${this.diagnoserFunction.functionArn}:*`),
      'lambda:InvokeFunction on the versions and aliases of the pipeline\'s own diagnoser');
    acknowledge(this.stateMachine, 'AwsSolutions-IAM5[Resource::*]',
      'X-Ray tracing and CloudWatch Logs delivery APIs (xray:PutTraceSegments, logs:CreateLogDelivery, ...) and '
      + 'fsx:DescribeDataRepositoryTasks have no resource-level permissions');

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

  private createDiagnoser(loaderMetrics: LoaderMetricNames | undefined, placement: DiagnoserPlacement): lambda.Function {
    const job = this.trainingJob;
    const cacheBaseline = this.cache?.baselineThroughputMBps;
    const fn = createHandlerFunction(this, 'Diagnoser', 'job-diagnoser', {
      ...placement,
      memorySize: Size.mebibytes(512),
      timeout: Duration.minutes(5),
      description: 'reads a training job\'s metrics, says what held its GPUs back, writes the report beside its output',
      environment: {
        GPUS_PER_INSTANCE: String(job.instance.gpus),
        VCPUS_PER_INSTANCE: String(job.instance.vcpus),
        ...(loaderMetrics ? { LOADER_SAMPLES_METRIC: loaderMetrics.samplesPerSecond, LOADER_DATA_WAIT_METRIC: loaderMetrics.dataWaitFraction } : {}),
        ...(this.cache && cacheBaseline !== undefined
          ? { CACHE_FILE_SYSTEM_ID: this.cache.fileSystemId, CACHE_BASELINE_MBPS: String(cacheBaseline) } : {}),
        EVENT_BUS_NAME: this.eventBus.eventBusName,
      },
    });
    const jobs = trainingJobArnPattern(this, job.jobNamePrefix);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sagemaker:DescribeTrainingJob'], resources: [jobs] }));
    acknowledge(fn, wildcardResourceFinding(fn, jobs), `reads the pipeline's own training jobs, named ${job.jobNamePrefix}-<execution name>`);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }));
    acknowledge(fn, 'AwsSolutions-IAM5[Resource::*]',
      'cloudwatch:GetMetricData has no resource-level permissions; X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) neither');
    const reports = `${job.outputPrefix}${job.jobNamePrefix}-*/diagnosis/`;
    job.outputBucket.grantPut(fn, `${reports}*`);
    acknowledgePrefixGrant(fn, job.outputBucket, reports, 'writes each job\'s report beside its output');
    this.eventBus.grantPutEventsTo(fn);
    return fn;
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

    // A malformed input would fail the merge in the Train state with States.Runtime, which no Catch
    // sees: check it up front, so that it is notified like any other failure.
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
      sfn.Condition.isString(path), sfn.Condition.isNumeric(path), sfn.Condition.isBoolean(path), sfn.Condition.isNull(path));
    const checkInput = new sfn.Choice(this, 'CheckInput')
      .when(sfn.Condition.or(sfn.Condition.not(sfn.Condition.isBoolean('$.force')), notObject('$.hyperparameters')), invalidInput);

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
    checkInput.otherwise(packing.plan);
    return applyDefaults.next(mergeInput).next(checkInput);
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
        Paths: [`s3://${bucket}/${dataset.shardsPrefix}`, `s3://${bucket}/${dataset.indexPrefix}`],
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

/**
 * How the job reads the shards from S3: ShardedByS3Key when several instances read them (each gets
 * its share of the equal shards), unless the user said otherwise.
 */
function defaultShardsChannel(training: TrainingJobOptions, options: S3ChannelOptions | undefined): S3ChannelOptions {
  // Planner seam (issue 6): given a DatasetProfile, IoPlanner.plan({ dataset, cluster }).inputMode is to
  // choose the input mode, the distribution and the shuffle here (and .fsx the cache's sizing); until
  // the pipeline takes a profile, these defaults.
  const instanceCount = training.instanceCount ?? 1;
  return { ...(instanceCount > 1 ? { distribution: S3DataDistribution.SHARDED_BY_S3_KEY } : {}), ...options };
}

/** The loader metrics the job's code declares (the reference code does), else none. */
function declaredLoaderMetrics(job: TrainingJob): LoaderMetricNames | undefined {
  const names = new Set(job.metricDefinitions.map((d) => d.name));
  return names.has(DEFAULT_LOADER_METRICS.samplesPerSecond) && names.has(DEFAULT_LOADER_METRICS.dataWaitFraction)
    ? DEFAULT_LOADER_METRICS : undefined;
}

function validateProps(scope: Construct, props: TrainingPipelineProps): void {
  if (props.datasetCache && props.shardsChannel) {
    throw new ValidationError('ShardsChannelWithCache',
      'shardsChannel says how to read the shards from S3, but datasetCache makes the job read them from FSx for Lustre '
      + '(File mode): remove one of the two', scope);
  }
}
