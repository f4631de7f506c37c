import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { LustreDatasetCacheProps } from '../../lib';
import { CacheSource, LustreDatasetCache } from '../../lib';
import { testApp } from '../support/stacks';

/** What a cache test builds on: a stack in us-east-1, a VPC with isolated subnets in 2 AZs and a data bucket. */
export interface CacheTestStack {
  readonly stack: Stack;
  readonly vpc: ec2.Vpc;
  readonly bucket: s3.Bucket;
}

export function cacheTestStack(): CacheTestStack {
  const app = testApp();
  const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
  const vpc = new ec2.Vpc(stack, 'Vpc', {
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
  });
  return { stack, vpc, bucket: new s3.Bucket(stack, 'Data') };
}

/** A cache of `s3://<bucket>/packed/` in the test VPC, plus whatever the test sets. */
export function newCache(context: CacheTestStack, props: Partial<LustreDatasetCacheProps> = {}, id = 'Cache'): LustreDatasetCache {
  return new LustreDatasetCache(context.stack, id, {
    vpc: context.vpc,
    source: CacheSource.fromBucket(context.bucket, 'packed/'),
    ...props,
  });
}

/** The properties of the one resource of this type in the stack. */
export function onlyResourceProperties(stack: Stack, type: string): any {
  const resources = Object.values(Template.fromStack(stack).findResources(type));
  if (resources.length !== 1) {
    throw new Error(`expected one ${type}, found ${resources.length}`);
  }
  return stack.resolve((resources[0] as any).Properties);
}
