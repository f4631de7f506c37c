import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { Construct } from 'constructs';
import { createSecurityGroup, createTrainingVpc } from './private/training-network';
import { ValidationError } from '../private/errors';
import { acknowledge } from '../private/nag';
import { createSecureBucket } from '../private/secure-bucket';

/**
 * An AWS API that training code may call from the isolated subnets of a `TrainingNetwork`, through
 * an interface VPC endpoint (about 7 USD a month per AZ each, plus traffic).
 */
export enum TrainingEndpoint {
  /** SageMaker API (`boto3.client('sagemaker')`): describing jobs, experiments, the model registry. */
  SAGEMAKER_API = 'sagemaker',
  /** AWS STS (`boto3.client('sts')`): assuming roles, `get_caller_identity`. */
  STS = 'sts',
  /** CloudWatch Logs (`boto3.client('logs')`), for code that writes its own log streams. */
  CLOUDWATCH_LOGS = 'logs',
  /** CloudWatch metrics (`boto3.client('cloudwatch')`), for code that puts its own metrics. */
  CLOUDWATCH_METRICS = 'cloudwatch',
  /** Amazon ECR API and registry (`ecr.api`, `ecr.dkr`), for code that pulls images itself. */
  ECR = 'ecr',
  /** AWS KMS (`boto3.client('kms')`), for code that encrypts or decrypts data keys itself. */
  KMS = 'kms',
}

/** The interface endpoint services of each `TrainingEndpoint`. */
const ENDPOINT_SERVICES: Record<TrainingEndpoint, ec2.InterfaceVpcEndpointAwsService[]> = {
  [TrainingEndpoint.SAGEMAKER_API]: [ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_API],
  [TrainingEndpoint.STS]: [ec2.InterfaceVpcEndpointAwsService.STS],
  [TrainingEndpoint.CLOUDWATCH_LOGS]: [ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS],
  [TrainingEndpoint.CLOUDWATCH_METRICS]: [ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING],
  [TrainingEndpoint.ECR]: [ec2.InterfaceVpcEndpointAwsService.ECR, ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER],
  [TrainingEndpoint.KMS]: [ec2.InterfaceVpcEndpointAwsService.KMS],
};

/**
 * Properties of a {@link TrainingNetwork}.
 */
export interface TrainingNetworkProps {
  /**
   * Interface endpoints for the AWS APIs the training code calls. The subnets are isolated: a call
   * to an API without an endpoint (or to PyPI) hangs until it times out.
   *
   * @default - none: S3 only, through the gateway endpoint
   */
  readonly interfaceEndpoints?: TrainingEndpoint[];

  /**
   * KMS key of the output bucket and of the flow-log group.
   *
   * @default - S3-managed encryption; CloudWatch Logs' own encryption
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Where the output bucket writes its S3 server access logs.
   *
   * @default - no server access logs
   */
  readonly accessLogsBucket?: s3.IBucket;

  /**
   * How long the flow logs are kept.
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;
}

/** The choices the stack's shared network was made with, to tell a job that asks for others. */
interface SharedNetworkChoices {
  readonly encryptionKey?: kms.IKey;
  readonly accessLogsBucket?: s3.IBucket;
  readonly logRetention?: logs.RetentionDays;
}

const SHARED_ID = 'TrainingNetwork';

/**
 * The network and output bucket that training jobs without a `vpc` share: one VPC with isolated
 * subnets in 2 AZs, an S3 gateway endpoint and flow logs of rejected traffic, one security group
 * (the instances of the jobs reach each other, HTTPS out), one output bucket (each job writes under
 * its own job names), and the interface endpoints asked for. A stack gets one (`TrainingNetwork.of`)
 * when its first job without a `vpc` is created; create one yourself to choose its props.
 */
export class TrainingNetwork extends Construct implements ec2.IConnectable {
  /**
   * The stack's shared network: the one created with id `TrainingNetwork` at the stack's root, or a
   * new one there with these props.
   *
   * @param scope any construct of the stack
   * @param props used only when the network is created
   */
  public static of(scope: IConstruct, props: TrainingNetworkProps = {}): TrainingNetwork {
    const stack = Stack.of(scope);
    const existing = stack.node.tryFindChild(SHARED_ID);
    if (existing instanceof TrainingNetwork) return existing;
    return new TrainingNetwork(stack, SHARED_ID, props);
  }

  /** The VPC: isolated subnets only. */
  public readonly vpc: ec2.Vpc;
  /** The security group of the training instances. */
  public readonly securityGroup: ec2.SecurityGroup;
  /** The security groups and their rules. */
  public readonly connections: ec2.Connections;
  private readonly endpoints = new Set<TrainingEndpoint>();
  private readonly choices: SharedNetworkChoices;
  private bucket?: s3.Bucket;

  constructor(scope: Construct, id: string, props: TrainingNetworkProps = {}) {
    super(scope, id);
    this.choices = { encryptionKey: props.encryptionKey, accessLogsBucket: props.accessLogsBucket, logRetention: props.logRetention };
    this.vpc = createTrainingVpc(this, { retention: props.logRetention, encryptionKey: props.encryptionKey });
    this.securityGroup = createSecurityGroup(this, this.vpc);
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup] });
    (props.interfaceEndpoints ?? []).forEach((endpoint) => this.addInterfaceEndpoint(endpoint));
  }

  /**
   * Model artifacts and checkpoints of the jobs that use this network without an `outputBucket`
   * (each under its own job names): created when first asked for, so that a network whose jobs all
   * bring a bucket has none.
   */
  public get outputBucket(): s3.Bucket {
    if (!this.bucket) {
      const { encryptionKey, accessLogsBucket } = this.choices;
      this.bucket = createSecureBucket(this, 'OutputBucket', { encryptionKey, accessLogsBucket });
      if (!accessLogsBucket) {
        acknowledge(this.bucket, 'AwsSolutions-S1', 'the output bucket is written only by the jobs\' execution roles; audit '
          + 'reads with CloudTrail S3 data events, or set accessLogsBucket');
      }
    }
    return this.bucket;
  }

  /** The interface endpoints of the network. */
  public get interfaceEndpoints(): TrainingEndpoint[] {
    return [...this.endpoints];
  }

  /**
   * Adds an interface endpoint (private DNS on), reachable from the training instances over HTTPS.
   * Adding one twice changes nothing.
   */
  public addInterfaceEndpoint(endpoint: TrainingEndpoint): void {
    if (this.endpoints.has(endpoint)) return;
    this.endpoints.add(endpoint);
    for (const service of ENDPOINT_SERVICES[endpoint]) {
      const id = `${service.shortName.split('.').map((p) => p[0].toUpperCase() + p.slice(1)).join('')}Endpoint`;
      const created = this.vpc.addInterfaceEndpoint(id, { service, privateDnsEnabled: true, open: false });
      created.connections.allowDefaultPortFrom(this.securityGroup, 'training instances');
    }
  }

  /**
   * Checks that a job's choices are the ones this network was made with.
   *
   * @internal
   */
  public _checkShared(job: Construct, choices: SharedNetworkChoices): void {
    const differs = (Object.keys(choices) as Array<keyof SharedNetworkChoices>)
      .find((name) => choices[name] !== undefined && choices[name] !== this.choices[name]);
    if (differs) {
      throw new ValidationError('SharedNetworkConflict',
        `jobs without a vpc share the stack's TrainingNetwork (${this.node.path}), made with ${differs} ` +
        `${describe(this.choices[differs])}, but this job asks for ${describe(choices[differs])}; give the first job the same ` +
        `${differs}, or create a TrainingNetwork with the ${differs} you want and pass it as network`, job);
    }
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'none';
  return value instanceof Construct ? value.node.path : String(value);
}
