import { Duration, Size } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DIAGNOSER_ENV } from '../contract/handler-environment';
import { LOADER_METRICS } from '../contract/metric-names';
import { createHandlerFunction } from '../private/handler-function';
import { acknowledge, acknowledgePrefixGrant, wildcardResourceFinding } from '../private/nag';
import type { LustreDatasetCache } from '../storage/lustre-dataset-cache';
import { trainingJobArnPattern } from '../training/private/training-permissions';
import type { TrainingJob } from '../training/training-job';

/**
 * The metric definitions of the training code's loader metrics.
 */
export interface LoaderMetricNames {
  /** Samples per second, e.g. `train:samples_per_second`. */
  readonly samplesPerSecond: string;
  /** Share of each interval the training loop waited for its next batch, 0–1, e.g. `train:data_wait_fraction`. */
  readonly dataWaitFraction: string;
}

/**
 * Properties of a {@link TrainingJobDiagnosis}.
 */
export interface TrainingJobDiagnosisProps {
  /** The job whose runs are diagnosed: every SageMaker training job named `<job.jobNamePrefix>-...`. */
  readonly job: TrainingJob;

  /**
   * Metric-definition names of the training code's samples per second and data-wait share.
   *
   * @default - `train:samples_per_second` and `train:data_wait_fraction` when the job's code declares
   * them (`TrainingCode.reference()` does); none otherwise
   */
  readonly loaderMetrics?: LoaderMetricNames;

  /**
   * The FSx for Lustre cache the job reads, whose read throughput the diagnosis compares with its baseline.
   *
   * @default - none
   */
  readonly cache?: LustreDatasetCache;

  /**
   * The event bus of the `Training Job Diagnosed` events (source `cdk-training-io`).
   *
   * @default - the account's default event bus
   */
  readonly eventBus?: events.IEventBus;

  /**
   * Whether jobs that completed are diagnosed too, not only those that failed or were stopped.
   * `TrainingPipeline` sets false: its own `Diagnose` step diagnoses a completed job and returns the result.
   *
   * @default true
   */
  readonly diagnoseCompletedJobs?: boolean;

  /**
   * How long the diagnoser's log group keeps its events.
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * KMS key of the diagnoser's log group (the key policy of a key from this app is given the
   * CloudWatch Logs statement; an imported key's policy must allow `logs.<region>.amazonaws.com`).
   *
   * @default - CloudWatch Logs' own encryption
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * The VPC of the diagnoser. It calls SageMaker (`api.sagemaker`), CloudWatch (`monitoring`),
   * EventBridge (`events`) and S3: a VPC with NAT, or with those endpoints.
   *
   * @default - the diagnoser runs outside any VPC
   */
  readonly vpc?: ec2.IVpc;

  /**
   * The subnets of the diagnoser in `vpc`.
   *
   * @default - the VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
}

/** What SageMaker sends to EventBridge when a training job changes state. */
const JOB_STATE_CHANGE = { source: 'aws.sagemaker', detailType: 'SageMaker Training Job State Change' } as const;

/**
 * Diagnoses every run of a training job when it ends (completed, failed or stopped): a rule on
 * SageMaker's `Training Job State Change` events runs the `job-diagnoser` Lambda, which reads the
 * job's metrics, writes `report.json`, `report.md` and `metrics.json` under
 * `<output>/<job name>/diagnosis/` and emits a `Training Job Diagnosed` event. A failed job's report
 * leads with its `FailureReason` and what the metrics showed before it ended.
 *
 * @see https://docs.aws.amazon.com/sagemaker/latest/dg/automating-sagemaker-with-eventbridge.html
 */
export class TrainingJobDiagnosis extends Construct {
  /** The diagnoser: job-diagnoser. */
  public readonly diagnoserFunction: lambda.Function;
  /** The rule that runs it on each job end. */
  public readonly rule: events.Rule;
  /** The bus of the diagnosis events. */
  public readonly eventBus: events.IEventBus;
  /** The loader metrics the diagnosis reads, when the job's code has them. */
  public readonly loaderMetrics?: LoaderMetricNames;

  constructor(scope: Construct, id: string, props: TrainingJobDiagnosisProps) {
    super(scope, id);
    const { job, cache } = props;
    this.eventBus = props.eventBus ?? events.EventBus.fromEventBusName(this, 'DefaultBus', 'default');
    this.loaderMetrics = props.loaderMetrics ?? declaredLoaderMetrics(job);
    const cacheBaseline = cache?.baselineThroughputMBps;
    const loaderMetrics = this.loaderMetrics;

    const fn = createHandlerFunction(this, 'Diagnoser', 'job-diagnoser', {
      logs: { retention: props.logRetention, encryptionKey: props.encryptionKey },
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      memorySize: Size.mebibytes(512),
      timeout: Duration.minutes(5),
      description: 'reads a training job\'s metrics, says what held its GPUs back, writes the report beside its output',
      environment: {
        [DIAGNOSER_ENV.gpusPerInstance]: String(job.instance.gpus),
        [DIAGNOSER_ENV.vcpusPerInstance]: String(job.instance.vcpus),
        ...(loaderMetrics ? {
          [DIAGNOSER_ENV.samplesPerSecondMetric]: loaderMetrics.samplesPerSecond,
          [DIAGNOSER_ENV.dataWaitMetric]: loaderMetrics.dataWaitFraction,
        } : {}),
        ...(cache && cacheBaseline !== undefined ? {
          [DIAGNOSER_ENV.cacheFileSystemId]: cache.fileSystemId,
          [DIAGNOSER_ENV.cacheBaselineMBps]: String(cacheBaseline),
        } : {}),
        [DIAGNOSER_ENV.eventBusName]: this.eventBus.eventBusName,
      },
    });
    const jobs = trainingJobArnPattern(this, job.jobNamePrefix);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sagemaker:DescribeTrainingJob'], resources: [jobs] }));
    acknowledge(fn, wildcardResourceFinding(fn, jobs), `reads the runs of its own training job, named ${job.jobNamePrefix}-<suffix>`);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }));
    acknowledge(fn, 'AwsSolutions-IAM5[Resource::*]',
      'cloudwatch:GetMetricData has no resource-level permissions; X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) neither');
    const reports = `${job.outputPrefix}${job.jobNamePrefix}-*/diagnosis/`;
    job.outputBucket.grantPut(fn, `${reports}*`);
    acknowledgePrefixGrant(fn, job.outputBucket, reports, 'writes each job\'s report beside its output');
    this.eventBus.grantPutEventsTo(fn);
    this.diagnoserFunction = fn;

    const statuses = props.diagnoseCompletedJobs === false ? ['Failed', 'Stopped'] : ['Completed', 'Failed', 'Stopped'];
    this.rule = new events.Rule(this, 'JobEnded', {
      description: `cdk-training-io: diagnoses each ${job.jobNamePrefix}-* training job that ends ${statuses.join(', ').toLowerCase()}`,
      eventPattern: {
        source: [JOB_STATE_CHANGE.source],
        detailType: [JOB_STATE_CHANGE.detailType],
        detail: {
          TrainingJobName: events.Match.prefix(`${job.jobNamePrefix}-`),
          TrainingJobStatus: statuses,
        },
      },
      targets: [new targets.LambdaFunction(fn, {
        // The diagnoser's own event: the state machine's Diagnose step sends the same.
        event: events.RuleTargetInput.fromObject({ trainingJobName: events.EventField.fromPath('$.detail.TrainingJobName') }),
        retryAttempts: 4,
        maxEventAge: Duration.hours(2),
      })],
    });
  }
}

/** The loader metrics the job's code declares (the reference code does), else none. */
function declaredLoaderMetrics(job: TrainingJob): LoaderMetricNames | undefined {
  const names = new Set(job.metricDefinitions.map((d) => d.name));
  return names.has(LOADER_METRICS.samplesPerSecond) && names.has(LOADER_METRICS.dataWaitFraction)
    ? { ...LOADER_METRICS } : undefined;
}
