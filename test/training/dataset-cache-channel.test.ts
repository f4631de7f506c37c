import { Lazy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as fsx from 'aws-cdk-lib/aws-fsx';
import type { LustreDatasetCache, TrainingJobProps} from '../../lib';
import {
  CacheSource, ShardedDataset, TrainingChannel, TrainingInstance, TrainingJob
} from '../../lib';
import { ApiModel } from '../support/api-model';
import { testContainer } from '../support/stacks';
import type { CacheTestStack} from '../storage/support';
import { cacheTestStack, newCache } from '../storage/support';

/** A job reading these channels, on ml.g5.2xlarge with the test image, plus whatever the test sets. */
function newJob(stack: Stack, channels: TrainingChannel[], options: Partial<TrainingJobProps> = {}, id = 'Job'): TrainingJob {
  return new TrainingJob(stack, id, { instance: TrainingInstance.G5_2XLARGE, container: testContainer(), channels, ...options });
}

function requestOf(job: TrainingJob): any {
  return Stack.of(job).resolve(job.renderRequest());
}

/** A cache of a packed dataset: `/dataset` is linked to its prefix. */
function shardsCache(context: CacheTestStack): LustreDatasetCache {
  return newCache(context, {
    source: CacheSource.fromShards(ShardedDataset.fromAttributes(context.stack, 'Packed', { destinationBucket: context.bucket })),
  });
}

describe('TrainingChannel.fromDatasetCache', () => {
  test('renders an FSx for Lustre source at /<MountName>/<path>, read-only, in File mode', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')]);

    // THEN
    const fileSystem = context.stack.getLogicalId(cache.fileSystem.node.defaultChild as fsx.CfnFileSystem);
    expect(requestOf(job).InputDataConfig).toEqual([{
      ChannelName: 'train',
      DataSource: {
        FileSystemDataSource: {
          FileSystemId: { Ref: fileSystem },
          FileSystemType: 'FSxLustre',
          FileSystemAccessMode: 'ro',
          DirectoryPath: { 'Fn::Join': ['', ['/', { 'Fn::GetAtt': [fileSystem, 'LustreMountName'] }, '/shards']] },
        },
      },
      InputMode: 'File',
    }]);
    expect(requestOf(job).AlgorithmSpecification.TrainingInputMode).toEqual('File');
  });

  test.each([['shards/'], ['/shards'], ['/shards/']])('reads the path %s as shards', (path) => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, path)]);

    // THEN
    expect(JSON.stringify(requestOf(job).InputDataConfig[0].DataSource.FileSystemDataSource.DirectoryPath)).toMatch(/"\/shards"\]\]/);
  });

  test('mounts the whole cache for an empty path', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, '')]);

    // THEN
    const fileSystem = context.stack.getLogicalId(cache.fileSystem.node.defaultChild as fsx.CfnFileSystem);
    expect(requestOf(job).InputDataConfig[0].DataSource.FileSystemDataSource.DirectoryPath)
      .toEqual({ 'Fn::Join': ['', ['/', { 'Fn::GetAtt': [fileSystem, 'LustreMountName'] }]] });
  });

  test('renders the content type when given', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards', { contentType: 'application/x-recordio' })]);

    // THEN
    expect(requestOf(job).InputDataConfig[0].ContentType).toEqual('application/x-recordio');
  });

  test.each(['dataset', 'dataset/versions', ''])('accepts the linked path \'%s\' of a packed dataset', (path) => {
    // GIVEN
    const cache = shardsCache(cacheTestStack());

    // WHEN / THEN
    expect(() => TrainingChannel.fromDatasetCache('train', cache, path)).not.toThrow();
  });

  test.each(['manifest', 'shards', 'datasetx', 'packed/shards'])('rejects the path \'%s\', which no association links', (path) => {
    // GIVEN
    const cache = shardsCache(cacheTestStack());

    // WHEN / THEN
    expect(() => TrainingChannel.fromDatasetCache('train', cache, path))
      .toThrow(/CachePathNotLinked.*outside the directories the cache links to S3 \(\/dataset\)/);
  });

  test.each(['../etc', 'shards/../index', './shards', 'shards//train'])('rejects the path %s', (path) => {
    // GIVEN
    const cache = newCache(cacheTestStack());

    // WHEN / THEN
    expect(() => TrainingChannel.fromDatasetCache('train', cache, path)).toThrow(/InvalidCachePath/);
  });

  test('skips the path checks for a token', () => {
    // GIVEN
    const cache = shardsCache(cacheTestStack());

    // WHEN / THEN
    expect(() => TrainingChannel.fromDatasetCache('train', cache, Lazy.string({ produce: () => '../x' }))).not.toThrow();
  });

  test('checks the channel name', () => {
    // GIVEN
    const cache = newCache(cacheTestStack());

    // WHEN / THEN
    expect(() => TrainingChannel.fromDatasetCache('a b', cache, 'shards')).toThrow(/InvalidChannelName/);
  });
});

describe('TrainingJob reading a LustreDatasetCache', () => {
  test('runs in the cache\'s VPC, pinned to its subnet, and creates no VPC of its own', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context, { subnet: context.vpc.isolatedSubnets[1] });

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')]);

    // THEN
    expect(job.vpc).toBe(context.vpc);
    expect(requestOf(job).VpcConfig.Subnets).toEqual([context.stack.resolve(context.vpc.isolatedSubnets[1].subnetId)]);
    Template.fromStack(context.stack).resourceCountIs('AWS::EC2::VPC', 1);
  });

  test('may reach the cache on TCP 988 and 1018-1023, and the cache lets it in', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')]);

    // THEN
    const template = Template.fromStack(context.stack);
    const cacheGroup = context.stack.resolve(cache.securityGroup.securityGroupId);
    const jobGroup = context.stack.resolve(job.connections.securityGroups[0].securityGroupId);
    for (const [fromPort, toPort] of [[988, 988], [1018, 1023]]) {
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp', FromPort: fromPort, ToPort: toPort, GroupId: cacheGroup, SourceSecurityGroupId: jobGroup,
      });
      template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', {
        IpProtocol: 'tcp', FromPort: fromPort, ToPort: toPort, GroupId: jobGroup, DestinationSecurityGroupId: cacheGroup,
      });
    }
    template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { GroupId: cacheGroup, SourceSecurityGroupId: jobGroup }, 2);
  });

  test('gets the network permissions SageMaker needs to attach it to the VPC, and no S3 access to the cached data', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')]);

    // THEN
    const policies = JSON.stringify(Template.fromStack(context.stack).findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^JobExecutionRole') }] },
    }));
    expect(policies).toContain('ec2:CreateNetworkInterface');
    expect(policies).not.toContain(context.stack.getLogicalId(context.bucket.node.defaultChild as any));
  });

  test('several jobs share one cache, each pinned to its subnet and let in', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const jobs = ['First', 'Second'].map((id) => newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')], {}, id));

    // THEN
    const template = Template.fromStack(context.stack);
    const cacheGroup = context.stack.resolve(cache.securityGroup.securityGroupId);
    for (const job of jobs) {
      expect(requestOf(job).VpcConfig.Subnets).toEqual([context.stack.resolve(cache.subnet.subnetId)]);
      template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', {
        GroupId: cacheGroup, SourceSecurityGroupId: context.stack.resolve(job.connections.securityGroups[0].securityGroupId),
      }, 2);
    }
    template.resourceCountIs('AWS::FSx::FileSystem', 1);
  });

  test('a 2 × ml.p3dn.24xlarge job reading the cache renders a request the SageMaker API model accepts', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')], {
      instance: TrainingInstance.P3DN_24XLARGE, instanceCount: 2,
    });

    // THEN
    expect(ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', requestOf(job))).toEqual([]);
  });

  test('keeps a subnet the user pins elsewhere, with a warning', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')], {
      vpc: context.vpc, subnet: context.vpc.isolatedSubnets[1],
    });

    // THEN
    expect(requestOf(job).VpcConfig.Subnets).toEqual([context.stack.resolve(context.vpc.isolatedSubnets[1].subnetId)]);
    Annotations.fromStack(context.stack).hasWarning('*', Match.stringLikeRegexp('subnet places the job outside.*jobOutsideCacheSubnet'));
  });

  test('does not warn when the user pins the cache\'s own subnet', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')], { vpc: context.vpc, subnet: cache.subnet });

    // THEN
    Annotations.fromStack(context.stack).hasNoWarning('*', Match.stringLikeRegexp('jobOutsideCacheSubnet'));
  });

  test('keeps the user\'s vpcSubnets, with a warning that the job is not pinned', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')], {
      vpc: context.vpc, vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
    });

    // THEN
    expect(requestOf(job).VpcConfig.Subnets).toHaveLength(2);
    Annotations.fromStack(context.stack).hasWarning('*', Match.stringLikeRegexp('vpcSubnets lets SageMaker place the job outside'));
  });

  test('rejects a job in another VPC than the cache', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = newCache(context);
    const otherVpc = new ec2.Vpc(context.stack, 'OtherVpc', { natGateways: 0, subnetConfiguration: [{ name: 'i', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });

    // WHEN / THEN
    expect(() => newJob(context.stack, [TrainingChannel.fromDatasetCache('train', cache, 'shards')], { vpc: otherVpc }))
      .toThrow(/CacheInAnotherVpc.*Stack\/Vpc.*Stack\/OtherVpc/);
  });

  test('rejects channels of caches in two VPCs', () => {
    // GIVEN
    const context = cacheTestStack();
    const otherVpc = new ec2.Vpc(context.stack, 'OtherVpc', { natGateways: 0, subnetConfiguration: [{ name: 'i', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
    const channels = [
      TrainingChannel.fromDatasetCache('train', newCache(context), 'shards'),
      TrainingChannel.fromDatasetCache('val', newCache(context, { vpc: otherVpc }, 'OtherCache'), 'shards'),
    ];

    // WHEN / THEN
    expect(() => newJob(context.stack, channels)).toThrow(/CacheInAnotherVpc/);
  });

  test('pins to the first of two caches in different subnets, with a warning', () => {
    // GIVEN
    const context = cacheTestStack();
    const first = newCache(context, { subnet: context.vpc.isolatedSubnets[0] });
    const second = newCache(context, { subnet: context.vpc.isolatedSubnets[1] }, 'Second');

    // WHEN
    const job = newJob(context.stack, [
      TrainingChannel.fromDatasetCache('train', first, 'shards'),
      TrainingChannel.fromDatasetCache('val', second, 'shards'),
    ]);

    // THEN
    expect(requestOf(job).VpcConfig.Subnets).toEqual([context.stack.resolve(first.subnet.subnetId)]);
    Annotations.fromStack(context.stack).hasWarning('*', Match.stringLikeRegexp('cachesInSeveralSubnets'));
  });

  test('two channels of one cache do not warn about subnets', () => {
    // GIVEN
    const context = cacheTestStack();
    const cache = shardsCache(context);

    // WHEN
    newJob(context.stack, [
      TrainingChannel.fromDatasetCache('train', cache, 'dataset'),
      TrainingChannel.fromDatasetCache('index', cache, 'dataset'),
    ]);

    // THEN
    Annotations.fromStack(context.stack).hasNoWarning('*', Match.stringLikeRegexp('cachesInSeveralSubnets|jobOutsideCacheSubnet'));
  });

  test('a job with only S3 channels still gets its own VPC', () => {
    // GIVEN
    const context = cacheTestStack();

    // WHEN
    const job = newJob(context.stack, [TrainingChannel.fromBucket('train', context.bucket, 'packed/shards/')]);

    // THEN
    expect(job.vpc).not.toBe(context.vpc);
  });
});
