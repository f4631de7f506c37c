import type { StackProps } from 'aws-cdk-lib';
import { App, CfnOutput, Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as fsx from 'aws-cdk-lib/aws-fsx';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import {
  CacheSource, InputMode, LoggedStateMachine, LustreDatasetCache, ReadRate, S3DataDistribution, ShardedDataset, ShardFormat,
  TrainingChannel, TrainingContainer, TrainingInstance, TrainingJob, TrainingNetwork, TrainingPipeline,
} from '../lib';
import { acknowledge } from '../lib/private/nag';
import { createSecureBucket } from '../lib/private/secure-bucket';

/** The reference configurations `npx cdk synth -c scenario=<name>` builds. */
export enum Scenario {
  /**
   * The whole flow in one state machine: raw/ packed into TFRecord shards, an FSx for Lustre cache
   * linked to them (imported after each packing run), ml.p3dn.24xlarge × 2 in File mode, the diagnosis.
   */
  PIPELINE = 'pipeline',
  /** ml.g4dn.12xlarge × 4: Pipe mode + ShardedByS3Key + ShuffleConfig over a shard prefix. */
  PIPE = 'pipe',
  /** ml.g5.2xlarge × 1: File mode onto the instance's local NVMe. */
  NVME = 'nvme',
  /** ml.p4d.24xlarge × 2: FastFile over the root of a dataset packed beforehand, FullyReplicated. */
  FASTFILE = 'fastfile',
  /** The pipe job reading shards packed by a ShardedDataset (raw/ → packed/ in the same bucket). */
  PACKED = 'packed',
  /** ml.p3dn.24xlarge × 2: File mode from a PERSISTENT_2 FSx for Lustre cache linked to the shard prefix. */
  FSX = 'fsx',
  /**
   * The pipeline for an AWS Control Tower governed account: passes every proactive control. A
   * customer KMS key for buckets, log groups, the file system and the job; the Lambdas in the VPC's
   * isolated subnets with the interface endpoints the diagnoser calls; versioned buckets with object
   * lock, EventBridge events and server access logs to the bucket `-c accessLogsBucket=<name>` names.
   */
  REGULATED = 'regulated',
}

export const SCENARIOS = Object.values(Scenario);

/**
 * What `npx cdk synth` builds without `-c scenario=...` (cdk.json names it too): the cheapest to
 * leave deployed and to try, nothing standing but two buckets (README, "What each scenario costs").
 * The pipeline scenario's FSx for Lustre cache stands at about $1,440 a month, whether jobs run or not.
 */
export const DEFAULT_SCENARIO = Scenario.NVME;

/** Where the dataset is packed: by the stack's ShardedDataset, or beforehand for the scenarios without one (`training-io pack ... s3://<bucket>/packed/`). */
const PACKED_PREFIX = 'packed/';

/**
 * The server access logs bucket of the regulated scenario unless `-c accessLogsBucket=<name>` names
 * yours. It lives outside the stack: S3 delivers access logs only to an SSE-S3 bucket in the same
 * account and Region, which ct-s3-pr-10 (SSE-KMS) would refuse inside it.
 */
export const DEFAULT_ACCESS_LOGS_BUCKET = 'training-io-s3-access-logs';

/**
 * The reference app, without stack traces in the construct metadata: the CLI prints each annotation
 * under the first frame of "your" code, which in this repository is the library's own line
 * (`lib/storage/lustre-dataset-cache.ts:304:28`), not the app's. An app that installs the package
 * keeps the traces and sees its own line, as the library's code lies under node_modules.
 */
export function createReferenceApp(): App {
  return new App({ stackTraces: false });
}

export interface ReferenceTrainingStackProps extends StackProps {
  readonly scenario: Scenario;
  /** Name of the server access logs bucket (scenario `regulated`). @default DEFAULT_ACCESS_LOGS_BUCKET */
  readonly accessLogsBucketName?: string;
}

/**
 * The example training stack: a dataset bucket, an isolated VPC with an S3 endpoint, and a
 * state machine that runs one training job configured for the scenario.
 */
export class ReferenceTrainingStack extends Stack {
  public readonly job: TrainingJob;
  public readonly stateMachine: sfn.StateMachine;
  /** The packing state machine's construct (scenario `packed` only). */
  public readonly dataset?: ShardedDataset;
  /** The FSx for Lustre cache of the shards (scenarios `fsx` and `pipeline`). */
  public readonly cache?: LustreDatasetCache;
  /** The training pipeline (scenario `pipeline` only). */
  public readonly pipeline?: TrainingPipeline;

  constructor(scope: Construct, id: string, props: ReferenceTrainingStackProps) {
    super(scope, id, props);
    const regulated = props.scenario === Scenario.REGULATED;
    const governance = regulated ? this.governance(props.accessLogsBucketName ?? DEFAULT_ACCESS_LOGS_BUCKET) : undefined;
    const datasets = governance ? governance.bucket('Datasets') : createSecureBucket(this, 'Datasets');
    if (!governance) {
      acknowledge(datasets, 'AwsSolutions-S1', 'example dataset bucket: a real deployment audits reads with CloudTrail ' +
        'S3 data events or passes its own bucket with server access logging');
    }
    // The library's training network: isolated subnets, the S3 gateway endpoint, flow logs, the instances' security group.
    const network = TrainingNetwork.of(this, { encryptionKey: governance?.key });
    // What the diagnoser calls from the isolated subnets; the packers need S3 only (the gateway endpoint).
    const endpoints = governance ? Object.entries({
      SageMakerApi: ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_API,
      CloudWatch: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
      EventBridge: ec2.InterfaceVpcEndpointAwsService.EVENTBRIDGE,
    }).map(([id, service]) => network.vpc.addInterfaceEndpoint(id, { service, privateDnsEnabled: true, open: false })) : [];
    const parts: ScenarioParts = { datasets, network, governance };

    if (props.scenario === Scenario.PIPELINE || governance) {
      const { dataset, pipeline } = this.createPipeline(parts);
      this.dataset = dataset;
      this.pipeline = pipeline;
      this.job = pipeline.trainingJob;
      endpoints.forEach((endpoint) => endpoint.connections.allowDefaultPortFrom(pipeline.diagnoserFunction, 'the diagnoser'));
      this.cache = pipeline.cache;
      this.stateMachine = pipeline.stateMachine;
      new CfnOutput(this, 'PipelineStateMachineArn', {
        value: this.stateMachine.stateMachineArn,
        description: 'training-io launch --state-machine <this ARN>',
      });
      new CfnOutput(this, 'PipelineDashboard', { value: pipeline.dashboard.dashboardName });
      return;
    }

    const built = this.createScenarioJob(props.scenario, parts);
    this.job = built.job;
    this.dataset = built.dataset;
    this.cache = built.cache;
    this.stateMachine = new LoggedStateMachine(this, 'Training', { definitionBody: sfn.DefinitionBody.fromChainable(this.job) });
  }

  /** The pipeline and the regulated scenarios: raw/ packed by a ShardedDataset and trained on by a TrainingPipeline. */
  private createPipeline({ datasets, network, governance }: ScenarioParts): { dataset: ShardedDataset; pipeline: TrainingPipeline } {
    const vpc = network.vpc;
    const pipelineCluster = { instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2 };
    const dataset = new ShardedDataset(this, 'Packing', {
      ...packing(datasets),
      // The shard count is a multiple of the readers: 2 instances × 8 GPU processes × 11 loader workers.
      cluster: pipelineCluster,
      ...(governance ? { encryptionKey: governance.key, vpc } : {}),
    });
    const pipeline = new TrainingPipeline(this, 'Pipeline', {
      dataset,
      training: {
        ...common(network),
        ...pipelineCluster,
        hyperparameters: { epochs: '3' },
        ...(governance ? { encryptionKey: governance.key, outputBucket: governance.bucket('TrainingOutput') } : {}),
      },
      ...(governance ? { lambdaVpc: vpc } : {}),
      datasetCache: {
        ...(governance ? { kmsKey: governance.key } : {}),
        deploymentType: fsx.LustreDeploymentType.PERSISTENT_2,
        datasetSize: Size.gibibytes(150),
        readRate: ReadRate.forTraining({
          instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, samplesPerSecondPerDevice: 1000, sampleSize: Size.kibibytes(110),
        }),
      },
    });
    return { dataset, pipeline };
  }

  /** The scenarios of one training job in a LoggedStateMachine: the job, and what it reads from. */
  private createScenarioJob(scenario: Scenario, { datasets, network }: ScenarioParts): { job: TrainingJob; dataset?: ShardedDataset; cache?: LustreDatasetCache } {
    const packedByCli = () => ShardedDataset.fromAttributes(this, 'PackedByCli', { destinationBucket: datasets, destinationPrefix: PACKED_PREFIX });
    switch (scenario) {
      case Scenario.PIPE:
        return {
          job: new TrainingJob(this, 'Train', {
            ...common(network),
            instance: TrainingInstance.G4DN_12XLARGE,
            instanceCount: 4,
            channels: [TrainingChannel.fromShards('train', packedByCli(), PIPE_SHARES)],
            hyperparameters: { epochs: '3' },
          }),
        };
      case Scenario.NVME:
        return {
          job: new TrainingJob(this, 'Train', {
            ...common(network),
            instance: TrainingInstance.G5_2XLARGE,
            channels: [TrainingChannel.fromShards('train', packedByCli(), {
              inputMode: InputMode.FILE,
              datasetSize: Size.gibibytes(200),
            })],
          }),
        };
      case Scenario.FASTFILE:
        return {
          job: new TrainingJob(this, 'Train', {
            ...common(network),
            instance: TrainingInstance.P4D_24XLARGE,
            instanceCount: 2,
            // FastFile mounts the dataset's root (S3Prefix only): FullyReplicated, the loaders split the shards by rank.
            channels: [TrainingChannel.fromShards('train', packedByCli(), { inputMode: InputMode.FAST_FILE })],
          }),
        };
      case Scenario.PACKED:
        return this.createPackedJob(datasets, network);
      case Scenario.FSX:
        return this.createCachedJob(datasets, network);
      default:
        throw new Error(`unknown scenario '${scenario}': use one of ${SCENARIOS.join(', ')}`);
    }
  }

  /** The pipe job reading shards packed by a ShardedDataset in the same stack. */
  private createPackedJob(datasets: s3.IBucket, network: TrainingNetwork): { job: TrainingJob; dataset: ShardedDataset } {
    // 4 × 4 GPU processes × 11 sized loader workers: the shard count is a multiple of these 176 readers.
    const cluster = { instance: TrainingInstance.G4DN_12XLARGE, instanceCount: 4 };
    const dataset = new ShardedDataset(this, 'Packing', {
      ...packing(datasets),
      cluster,
      // Four T4s per instance outrun what 11 loader workers decode from full-size JPEGs: resize once, at pack time.
      imagePreprocessing: { shorterSidePixels: 256, longerSidePixels: 512 },
    });
    const job = new TrainingJob(this, 'Train', {
      ...common(network),
      ...cluster,
      channels: [TrainingChannel.fromShards('train', dataset, PIPE_SHARES)],
      hyperparameters: { epochs: '3' },
    });
    return { job, dataset };
  }

  /** The job reading from an FSx for Lustre cache of the shards. */
  private createCachedJob(datasets: s3.IBucket, network: TrainingNetwork): { job: TrainingJob; cache: LustreDatasetCache } {
    // The dataset is loaded from S3 once and read by every job at the cache's throughput.
    const cache = new LustreDatasetCache(this, 'Cache', {
      vpc: network.vpc,
      source: CacheSource.fromBucket(datasets, PACKED_PREFIX),
      deploymentType: fsx.LustreDeploymentType.PERSISTENT_2,
      datasetSize: Size.gibibytes(150),
      // 2 × 8 V100 at about 1000 images/s each, ImageNet JPEGs of about 110 KiB: 1.8 GB/s.
      readRate: ReadRate.forTraining({
        instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2, samplesPerSecondPerDevice: 1000, sampleSize: Size.kibibytes(110),
      }),
    });
    const job = new TrainingJob(this, 'Train', {
      ...common(network),
      instance: TrainingInstance.P3DN_24XLARGE,
      instanceCount: 2,
      // The cache's root is the dataset's: the reader follows its manifest to the current version.
      channels: [TrainingChannel.fromDatasetCache('train', cache, '')],
      hyperparameters: { epochs: '3' },
    });
    return { job, cache };
  }

  /**
   * The choices a governed account asks of the user: one customer key (rotated) for everything,
   * and buckets with that key, object lock (no default retention: nothing is locked until someone
   * sets a retention) and server access logs to the named bucket.
   */
  private governance(accessLogsBucketName: string): Governance {
    const key = new kms.Key(this, 'Key', { enableKeyRotation: true, description: 'cdk-training-io reference: data, logs, file system' });
    // ct-kms-pr-3: grants only for AWS services acting on the key's resources (EBS volumes, FSx, S3), never for principals directly.
    key.addToResourcePolicy(new iam.PolicyStatement({
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['kms:CreateGrant'],
      resources: ['*'],
      conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
    }));
    const accessLogs = s3.Bucket.fromBucketName(this, 'AccessLogs', accessLogsBucketName);
    return {
      key,
      bucket: (id: string) => {
        const bucket = createSecureBucket(this, id, { encryptionKey: key, accessLogsBucket: accessLogs });
        (bucket.node.defaultChild as s3.CfnBucket).objectLockEnabled = true;
        return bucket;
      },
    };
  }
}

/** What every scenario builds first: the dataset bucket, the training network and, when regulated, the governance. */
interface ScenarioParts {
  readonly datasets: s3.IBucket;
  readonly network: TrainingNetwork;
  readonly governance?: Governance;
}

/** What every job runs in: the library's network, and the PyTorch container running the reference code (TrainingCode.reference()). */
function common(network: TrainingNetwork) {
  return { network, container: TrainingContainer.pytorch() };
}

/** raw/ packed into 64 MiB TFRecord shards under packed/ (the pipeline and the packed scenarios). */
function packing(datasets: s3.IBucket) {
  return {
    sourceBucket: datasets, sourcePrefix: 'raw/', destinationBucket: datasets, destinationPrefix: PACKED_PREFIX,
    format: ShardFormat.TFRECORD, targetShardSize: Size.mebibytes(64), seed: 42,
  };
}

/** Pipe mode over the shards, each instance a share of them, reshuffled every epoch (the pipe and packed scenarios). */
const PIPE_SHARES = { inputMode: InputMode.PIPE, distribution: S3DataDistribution.SHARDED_BY_S3_KEY, shuffleSeed: 42 };

/** The key and bucket factory of the regulated scenario. */
interface Governance {
  readonly key: kms.IKey;
  bucket(id: string): s3.Bucket;
}
