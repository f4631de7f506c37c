import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { InputMode, LustreDatasetCache, ShardedDataset, TrainingChannel, TrainingInstance, TrainingJob } from '../../lib';
import { testApp, testContainer } from '../support/stacks';

function testStack(): Stack {
  return new Stack(testApp(), 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
}

function role(stack: Stack, id = 'Reader'): iam.Role {
  return new iam.Role(stack, id, { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });
}

/** The resources of the role's policy statement that allows `action`. */
function resourcesAllowed(stack: Stack, reader: iam.Role, action: string): unknown[] {
  const policies = Template.fromStack(stack).findResources('AWS::IAM::Policy', {
    Properties: { Roles: [{ Ref: stack.getLogicalId(reader.node.defaultChild as iam.CfnRole) }] },
  });
  const statements = Object.values(policies).flatMap((policy: any) => policy.Properties.PolicyDocument.Statement);
  return statements.filter((s: any) => [s.Action].flat().includes(action)).flatMap((s: any) => [s.Resource].flat());
}

/** `arn:…:<bucket>/<key>` as the template writes it. */
function objectArn(stack: Stack, bucket: s3.IBucket, key: string): unknown {
  return stack.resolve(bucket.arnForObjects(key));
}

describe('IShardedDataset.grantRead', () => {
  test.each([
    ['a ShardedDataset', (stack: Stack) => new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw') })],
    ['a dataset packed elsewhere', (stack: Stack) => ShardedDataset.fromAttributes(stack, 'Packed', { destinationBucket: new s3.Bucket(stack, 'Out') })],
  ])('on %s lets the grantee read its versions, their claims and the current manifests, not the plan', (_what, make) => {
    // GIVEN
    const stack = testStack();
    const dataset = make(stack);
    const reader = role(stack);
    // WHEN
    const grant = dataset.grantRead(reader);
    // THEN
    expect(grant.success).toBe(true);
    const bucket = dataset.destinationBucket;
    expect(resourcesAllowed(stack, reader, 's3:GetObject*')).toEqual([
      stack.resolve(bucket.bucketArn),
      objectArn(stack, bucket, 'packed/versions/*'),
      objectArn(stack, bucket, 'packed/published/*'),
      objectArn(stack, bucket, 'packed/manifest.json'),
      objectArn(stack, bucket, 'packed/shards.manifest'),
      objectArn(stack, bucket, 'packed/index.manifest'),
    ]);
    expect(JSON.stringify(resourcesAllowed(stack, reader, 's3:GetObject*'))).not.toContain('_plan');
  });

  test('also lets the grantee decrypt with the bucket\'s key', () => {
    // GIVEN
    const stack = testStack();
    const key = new kms.Key(stack, 'Key');
    const dataset = ShardedDataset.fromAttributes(stack, 'Packed', {
      destinationBucket: new s3.Bucket(stack, 'Out', { encryption: s3.BucketEncryption.KMS, encryptionKey: key }),
      destinationPrefix: 'imagenet/v1/',
    });
    const reader = role(stack);
    // WHEN
    dataset.grantRead(reader);
    // THEN
    expect(resourcesAllowed(stack, reader, 'kms:Decrypt')).toEqual([stack.resolve(key.keyArn)]);
    expect(dataset.destinationPrefix).toBe('imagenet/v1/');
    expect(dataset.manifestKey).toBe('imagenet/v1/manifest.json');
    expect(dataset.shardsManifestKey).toBe('imagenet/v1/shards.manifest');
    expect(dataset.indexManifestKey).toBe('imagenet/v1/index.manifest');
  });

  test.each(['imagenet', '/imagenet/', 'imagenet//v1/'])('fromAttributes refuses the prefix %j', (destinationPrefix) => {
    const stack = testStack();
    expect(() => ShardedDataset.fromAttributes(stack, 'Packed', { destinationBucket: new s3.Bucket(stack, 'Out'), destinationPrefix }))
      .toThrow(/InvalidPrefix.*destinationPrefix must be empty or a key prefix ending in '\/'/);
  });
});

describe('ShardedDataset.grantPacking', () => {
  test('takes any grantee and returns the grant on the plan\'s task list', () => {
    // GIVEN
    const stack = testStack();
    const dataset = new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw') });
    const runner = role(stack, 'Runner');
    // WHEN
    const grant = dataset.grantPacking(runner);
    // THEN
    expect(grant.success).toBe(true);
    expect(resourcesAllowed(stack, runner, 's3:GetObject')).toEqual([objectArn(stack, dataset.destinationBucket, 'packed/_plan/*/tasks.json')]);
  });

  test('still takes a state machine of the packing steps', () => {
    // GIVEN
    const stack = testStack();
    const dataset = new ShardedDataset(stack, 'Packing', { sourceBucket: new s3.Bucket(stack, 'Raw') });
    const machine = new sfn.StateMachine(stack, 'Mine', { definitionBody: sfn.DefinitionBody.fromChainable(dataset.packingSteps(stack, 'Steps')) });
    // WHEN
    dataset.grantPacking(machine);
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: stack.getLogicalId(machine.role.node.defaultChild as iam.CfnRole) }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({
        Action: 's3:GetObject', Resource: objectArn(stack, dataset.destinationBucket, 'packed/_plan/*/tasks.json'),
      })]) },
    });
  });
});

describe('LustreDatasetCache.fromAttributes', () => {
  test('a cache made elsewhere is read by a job in its subnet, let in on the Lustre ports', () => {
    // GIVEN
    const stack = testStack();
    const vpc = new ec2.Vpc(stack, 'Vpc', { subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
    const securityGroup = new ec2.SecurityGroup(stack, 'CacheGroup', { vpc });
    const cache = LustreDatasetCache.fromAttributes(stack, 'Cache', {
      fileSystemId: 'fs-0123456789abcdef0', mountName: 'abcdefgh', vpc, subnet: vpc.isolatedSubnets[0], securityGroup, linkedPaths: ['/shards'],
    });
    // WHEN
    const job = new TrainingJob(stack, 'Job', {
      instance: TrainingInstance.G5_2XLARGE, container: testContainer(), vpc,
      channels: [TrainingChannel.fromDatasetCache('train', cache, 'shards')],
    });
    // THEN
    const request = stack.resolve(job.renderRequest());
    expect(request.InputDataConfig[0]).toMatchObject({
      InputMode: InputMode.FILE,
      DataSource: { FileSystemDataSource: { FileSystemId: 'fs-0123456789abcdef0', DirectoryPath: '/abcdefgh/shards', FileSystemType: 'FSxLustre' } },
    });
    expect(request.VpcConfig.Subnets).toEqual([stack.resolve(vpc.isolatedSubnets[0].subnetId)]);
    Template.fromStack(stack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: stack.resolve(securityGroup.securityGroupId), FromPort: 988, ToPort: 988,
    });
    expect(() => TrainingChannel.fromDatasetCache('other', cache, 'index')).toThrow(/CachePathNotLinked.*'index' is outside the directories the cache links to S3 \(\/shards\)/);
  });
});
