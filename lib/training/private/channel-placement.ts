import { Annotations } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';
import type { JobNetworkProps } from './training-network';
import { ValidationError } from '../../private/errors';
import type { ChannelPlacement } from '../training-channel';

/**
 * The network of a job whose channels read file systems: their VPC (a file system is reachable
 * only there), pinned to the subnet of the first one (FSx for Lustre is single-AZ: reads from
 * another AZ add latency and cross-AZ charges) unless the user chose the subnets.
 */
export function placeNearChannels(scope: Construct, props: JobNetworkProps, placements: ChannelPlacement[]): JobNetworkProps {
  const [first, ...others] = placements;
  if (!first) return props;
  const vpc = props.vpc ?? first.vpc;
  const elsewhere = placements.find((placement) => !sameVpc(placement.vpc, vpc));
  if (elsewhere) {
    throw new ValidationError('CacheInAnotherVpc',
      `a channel reads a file system in VPC ${elsewhere.vpc.node.path}, but the job runs in VPC ${vpc.node.path}: ` +
      'a file system is reachable only from its own VPC; run the job in that VPC (leave vpc unset to use it)', scope);
  }
  if (others.some((placement) => placement.subnet.subnetId !== first.subnet.subnetId)) {
    Annotations.of(scope).addWarningV2('cdk-training-io:cachesInSeveralSubnets',
      `the channels read file systems in different subnets; the job is pinned to ${first.subnet.node.path} and reads the ` +
      'others across subnets (and AZs, with latency and cross-AZ charges); put the caches in one subnet');
  }
  if (props.subnet || props.vpcSubnets) {
    if (props.subnet?.subnetId !== first.subnet.subnetId) {
      const choice = props.subnet ? 'subnet places the job outside' : 'vpcSubnets lets SageMaker place the job outside';
      Annotations.of(scope).addWarningV2('cdk-training-io:jobOutsideCacheSubnet',
        `${choice} ${first.subnet.node.path}, the subnet of the file system it reads: reads from another AZ add latency ` +
        'and cross-AZ charges; remove subnet and vpcSubnets to pin the job there');
    }
    return props;
  }
  return { ...props, vpc, subnet: first.subnet };
}

function sameVpc(a: ec2.IVpc, b: ec2.IVpc): boolean {
  return a === b || a.vpcId === b.vpcId;
}
