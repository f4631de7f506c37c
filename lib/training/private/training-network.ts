import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';
import { ValidationError } from '../../private/errors';
import type { LogGroupOptions } from '../../private/log-group';
import { createLogGroup } from '../../private/log-group';

/** What the network of a job is made of. */
export interface JobNetworkProps {
  readonly vpc?: ec2.IVpc;
  readonly vpcSubnets?: ec2.SubnetSelection;
  readonly subnet?: ec2.ISubnet;
  readonly securityGroups?: ec2.ISecurityGroup[];
  /** Retention and key of the flow logs of a VPC created here. */
  readonly logs?: LogGroupOptions;
}

/** The network a job runs in. */
export interface JobNetwork {
  readonly vpc: ec2.IVpc;
  readonly subnetIds: string[];
  readonly connections: ec2.Connections;
}

/**
 * The VPC, subnets and security groups of a training job: private subnets only, and a group
 * that lets the job's instances reach each other (distributed training, and UDP 500/ESP for
 * inter-container encryption) and nothing else but HTTPS out (S3 through the gateway endpoint).
 */
export function createTrainingNetwork(scope: Construct, props: JobNetworkProps): JobNetwork {
  const vpc = props.vpc ?? createTrainingVpc(scope, props.logs);
  const subnets = props.subnet ? [props.subnet] : vpc.selectSubnets(props.vpcSubnets ?? {}).subnets;
  const publicIds = new Set(vpc.publicSubnets.map((s) => s.subnetId));
  const publicSubnet = subnets.find((s) => publicIds.has(s.subnetId));
  if (publicSubnet) {
    throw new ValidationError('PublicSubnet',
      `training must run in private subnets, but ${props.subnet ? 'subnet' : 'vpcSubnets'} selects public subnet ` +
      `${publicSubnet.node.path}; select private or isolated subnets`, scope);
  }
  if (subnets.length === 0 || subnets.length > 16) {
    throw new ValidationError('InvalidSubnetCount',
      `a training job needs 1–16 subnets, the selection gives ${subnets.length}; change vpcSubnets`, scope);
  }
  return {
    vpc,
    subnetIds: subnets.map((s) => s.subnetId),
    connections: new ec2.Connections({ securityGroups: props.securityGroups ?? [createSecurityGroup(scope, vpc)] }),
  };
}

/** The default VPC of training: isolated subnets in 2 AZs, an S3 gateway endpoint, flow logs of rejected traffic. */
export function createTrainingVpc(scope: Construct, logs: LogGroupOptions = {}): ec2.Vpc {
  return new ec2.Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'training', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }],
    gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
    flowLogs: {
      rejected: {
        destination: ec2.FlowLogDestination.toCloudWatchLogs(createLogGroup(scope, 'FlowLogs', logs)),
        trafficType: ec2.FlowLogTrafficType.REJECT,
      },
    },
  });
}

export function createSecurityGroup(scope: Construct, vpc: ec2.IVpc): ec2.SecurityGroup {
  const group = new ec2.SecurityGroup(scope, 'SecurityGroup', {
    vpc,
    description: 'SageMaker training instances: traffic between the instances of the job, HTTPS out',
    allowAllOutbound: false,
  });
  group.addIngressRule(group, ec2.Port.allTraffic(), 'between the instances of a distributed training job');
  group.addEgressRule(group, ec2.Port.allTraffic(), 'between the instances of a distributed training job');
  group.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS to S3 and AWS APIs through VPC endpoints');
  return group;
}
