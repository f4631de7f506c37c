import type { Stack } from 'aws-cdk-lib';
import { Lazy, RemovalPolicy, Size } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as fsx from 'aws-cdk-lib/aws-fsx';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CacheSource, ShardedDataset } from '../../lib';
import { ApiModel } from '../support/api-model';
import { cacheTestStack, newCache, onlyResourceProperties } from './support';

function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as any);
}

describe('LustreDatasetCache', () => {
  describe('file system', () => {
    test('is PERSISTENT_2 on Lustre 2.15 with automatic metadata IOPS, 1200 GiB at 125 MB/s/TiB by default', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context);

      // THEN
      const template = Template.fromStack(context.stack);
      template.resourceCountIs('AWS::FSx::FileSystem', 1);
      template.hasResourceProperties('AWS::FSx::FileSystem', {
        FileSystemType: 'LUSTRE',
        FileSystemTypeVersion: '2.15',
        StorageCapacity: 1200,
        LustreConfiguration: {
          DeploymentType: 'PERSISTENT_2',
          PerUnitStorageThroughput: 125,
          MetadataConfiguration: { Mode: 'AUTOMATIC' },
        },
      });
    });

    test('never sets the file-system-level S3 link that FSx rejects next to data repository associations', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context);

      // THEN
      const configuration = onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem').LustreConfiguration;
      for (const key of ['ImportPath', 'ExportPath', 'AutoImportPolicy', 'ImportedFileChunkSize']) {
        expect(configuration).not.toHaveProperty(key);
      }
    });

    test('is deleted with the stack by default: it only holds copies of S3 data', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context);

      // THEN
      const template = Template.fromStack(context.stack);
      template.hasResource('AWS::FSx::FileSystem', { DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
      template.hasResource('AWS::FSx::DataRepositoryAssociation', { DeletionPolicy: 'Delete' });
    });

    test('keeps the removal policy given, for the file system and its associations', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { removalPolicy: RemovalPolicy.RETAIN });

      // THEN
      const template = Template.fromStack(context.stack);
      template.hasResource('AWS::FSx::FileSystem', { DeletionPolicy: 'Retain' });
      template.hasResource('AWS::FSx::DataRepositoryAssociation', { DeletionPolicy: 'Retain' });
    });

    test('SCRATCH_2 gets Lustre 2.15 explicitly (FSx would pick 2.10), no throughput tier and no metadata configuration', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { deploymentType: fsx.LustreDeploymentType.SCRATCH_2 });

      // THEN
      const properties = onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem');
      expect(properties.FileSystemTypeVersion).toEqual('2.15');
      expect(properties.LustreConfiguration).toEqual({ DeploymentType: 'SCRATCH_2' });
    });

    test('PERSISTENT_1 gets a throughput tier and no metadata configuration', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { deploymentType: fsx.LustreDeploymentType.PERSISTENT_1 });

      // THEN
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem').LustreConfiguration)
        .toEqual({ DeploymentType: 'PERSISTENT_1', PerUnitStorageThroughput: 50 });
    });

    test('PERSISTENT_2 on Lustre 2.12 gets no metadata configuration, which needs 2.15', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { fileSystemTypeVersion: fsx.FileSystemTypeVersion.V_2_12 });

      // THEN
      const properties = onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem');
      expect(properties.FileSystemTypeVersion).toEqual('2.12');
      expect(properties.LustreConfiguration).not.toHaveProperty('MetadataConfiguration');
    });

    test('is encrypted with the KMS key given', () => {
      // GIVEN
      const context = cacheTestStack();
      const key = new kms.Key(context.stack, 'Key');

      // WHEN
      newCache(context, { kmsKey: key });

      // THEN
      Template.fromStack(context.stack).hasResourceProperties('AWS::FSx::FileSystem', {
        KmsKeyId: { Ref: logicalId(context.stack, key) },
      });
    });

    test('exposes the file system, its id, mount name and DNS name', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      const cache = newCache(context);

      // THEN
      const fileSystemId = logicalId(context.stack, cache.fileSystem);
      expect(context.stack.resolve(cache.fileSystemId)).toEqual({ Ref: fileSystemId });
      expect(context.stack.resolve(cache.mountName)).toEqual({ 'Fn::GetAtt': [fileSystemId, 'LustreMountName'] });
      expect(JSON.stringify(context.stack.resolve(cache.dnsName))).toContain('.fsx.us-east-1.');
      expect(cache.deploymentType).toEqual(fsx.LustreDeploymentType.PERSISTENT_2);
    });

    test('renders properties the FSx CreateFileSystem API model accepts', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { kmsKey: new kms.Key(context.stack, 'Key'), datasetSize: Size.tebibytes(3) });

      // THEN
      const properties = onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem');
      expect(ApiModel.load('fsx').validate('CreateFileSystemRequest', properties)).toEqual([]);
    });
  });

  describe('subnet', () => {
    test('is the one subnet given', () => {
      // GIVEN
      const context = cacheTestStack();
      const subnet = context.vpc.isolatedSubnets[1];

      // WHEN
      const cache = newCache(context, { subnet });

      // THEN
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem').SubnetIds).toEqual([context.stack.resolve(subnet.subnetId)]);
      expect(cache.subnet).toBe(subnet);
    });

    test('defaults to the first subnet of the VPC\'s private selection', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      const cache = newCache(context);

      // THEN
      expect(cache.subnet).toBe(context.vpc.isolatedSubnets[0]);
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem').SubnetIds)
        .toEqual([context.stack.resolve(context.vpc.isolatedSubnets[0].subnetId)]);
    });

    test('rejects a public subnet', () => {
      // GIVEN
      const context = cacheTestStack();
      const vpc = new ec2.Vpc(context.stack, 'UserVpc', { natGateways: 0 });

      // WHEN / THEN
      expect(() => newCache(context, { vpc, subnet: vpc.publicSubnets[0] })).toThrow(/CacheInPublicSubnet.*public subnet/);
    });

    test('rejects a VPC whose default selection is public', () => {
      // GIVEN
      const context = cacheTestStack();
      const vpc = new ec2.Vpc(context.stack, 'PublicVpc', {
        natGateways: 0,
        subnetConfiguration: [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC }],
      });

      // WHEN / THEN
      expect(() => newCache(context, { vpc })).toThrow(/CacheInPublicSubnet.*default selection/);
    });
  });

  describe('data repository associations', () => {
    test('link the root to the S3 prefix, import new, changed and deleted objects, and load the metadata at creation', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      const cache = newCache(context);

      // THEN
      const template = Template.fromStack(context.stack);
      template.resourceCountIs('AWS::FSx::DataRepositoryAssociation', 1);
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::DataRepositoryAssociation')).toEqual({
        FileSystemId: { Ref: logicalId(context.stack, cache.fileSystem) },
        FileSystemPath: '/',
        DataRepositoryPath: { 'Fn::Join': ['', ['s3://', { Ref: logicalId(context.stack, context.bucket) }, '/packed/']] },
        BatchImportMetaDataOnCreate: true,
        S3: { AutoImportPolicy: { Events: ['NEW', 'CHANGED', 'DELETED'] } },
      });
      expect(cache.linkedPaths).toEqual(['/']);
      expect(cache.associations).toHaveLength(1);
    });

    test('link the whole bucket when the prefix is empty', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { source: CacheSource.fromBucket(context.bucket) });

      // THEN
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::DataRepositoryAssociation').DataRepositoryPath)
        .toEqual({ 'Fn::Join': ['', ['s3://', { Ref: logicalId(context.stack, context.bucket) }, '/']] });
    });

    test('link the root of a ShardedDataset at /dataset: every version, their claims and the current manifest', () => {
      // GIVEN
      const context = cacheTestStack();
      const dataset = new ShardedDataset(context.stack, 'Packing', {
        sourceBucket: context.bucket, sourcePrefix: 'raw/', destinationBucket: context.bucket, destinationPrefix: 'imagenet/',
      });

      // WHEN
      const cache = newCache(context, { source: CacheSource.fromShards(dataset) });

      // THEN
      const bucketRef = { Ref: logicalId(context.stack, context.bucket) };
      const template = Template.fromStack(context.stack);
      template.resourceCountIs('AWS::FSx::DataRepositoryAssociation', 1);
      template.hasResourceProperties('AWS::FSx::DataRepositoryAssociation', {
        FileSystemPath: '/dataset', DataRepositoryPath: { 'Fn::Join': ['', ['s3://', bucketRef, '/imagenet/']] },
      });
      expect(cache.linkedPaths).toEqual(['/dataset']);
    });

    test('render the imported file chunk size in MiB', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { importedFileChunkSize: Size.gibibytes(2) });

      // THEN
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::DataRepositoryAssociation').ImportedFileChunkSize).toEqual(2048);
    });

    test('render properties the FSx CreateDataRepositoryAssociation API model accepts', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      newCache(context, { importedFileChunkSize: Size.mebibytes(512) });

      // THEN
      const properties = onlyResourceProperties(context.stack, 'AWS::FSx::DataRepositoryAssociation');
      expect(ApiModel.load('fsx').validate('CreateDataRepositoryAssociationRequest', properties)).toEqual([]);
    });
  });

  describe('an SSE-KMS source bucket', () => {
    function kmsBucket(stack: Stack): { bucket: s3.Bucket; key: kms.Key } {
      const key = new kms.Key(stack, 'DataKey');
      return { key, bucket: new s3.Bucket(stack, 'EncryptedData', { encryption: s3.BucketEncryption.KMS, encryptionKey: key }) };
    }

    test('lets the file system\'s FSx service-linked role decrypt through S3, before the first import', () => {
      // GIVEN
      const context = cacheTestStack();
      const { bucket, key } = kmsBucket(context.stack);

      // WHEN
      const cache = newCache(context, { source: CacheSource.fromBucket(bucket, 'data/') });

      // THEN
      const template = Template.fromStack(context.stack);
      const fileSystemId = logicalId(context.stack, cache.fileSystem);
      template.hasResourceProperties('AWS::KMS::Key', {
        KeyPolicy: {
          Statement: Match.arrayWith([Match.objectLike({
            Effect: 'Allow',
            Principal: { AWS: '*' },
            Action: ['kms:Decrypt', 'kms:DescribeKey'],
            Condition: {
              ArnLike: {
                'aws:PrincipalArn': {
                  'Fn::Join': ['', [
                    'arn:', { Ref: 'AWS::Partition' },
                    ':iam::111111111111:role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/AWSServiceRoleForFSxS3Access_',
                    { Ref: fileSystemId },
                  ]],
                },
              },
              StringEquals: {
                'kms:CallerAccount': '111111111111',
                'kms:ViaService': { 'Fn::Join': ['', ['s3.us-east-1.', { Ref: 'AWS::URLSuffix' }]] },
              },
            },
          })]),
        },
      });
      template.hasResource('AWS::FSx::DataRepositoryAssociation', { DependsOn: Match.arrayWith([logicalId(context.stack, key)]) });
    });

    test('names no file system in the policy of a key that also encrypts the file system (no dependency cycle)', () => {
      // GIVEN
      const context = cacheTestStack();
      const { bucket, key } = kmsBucket(context.stack);

      // WHEN
      const cache = newCache(context, { source: CacheSource.fromBucket(bucket, 'data/'), kmsKey: key });

      // THEN
      const keyPolicy = JSON.stringify(Template.fromStack(context.stack).findResources('AWS::KMS::Key'));
      expect(keyPolicy).toContain('AWSServiceRoleForFSxS3Access_fs-*');
      expect(keyPolicy).not.toContain(logicalId(context.stack, cache.fileSystem));
    });

    test('warns when the key is imported and its policy cannot be changed here', () => {
      // GIVEN
      const context = cacheTestStack();
      const key = kms.Key.fromKeyArn(context.stack, 'ImportedKey', 'arn:aws:kms:us-east-1:111111111111:key/0000-1111');
      const bucket = s3.Bucket.fromBucketAttributes(context.stack, 'ImportedBucket', { bucketName: 'datasets', encryptionKey: key });

      // WHEN
      newCache(context, { source: CacheSource.fromBucket(bucket, 'data/') });

      // THEN
      Annotations.fromStack(context.stack).hasWarning('*', Match.stringLikeRegexp('kms:Decrypt.*sourceKeyNotGranted'));
    });

    test('adds nothing to a key when the bucket uses S3-managed encryption', () => {
      // GIVEN
      const context = cacheTestStack();
      const key = new kms.Key(context.stack, 'OtherKey');

      // WHEN
      newCache(context);

      // THEN
      expect(JSON.stringify(Template.fromStack(context.stack).findResources('AWS::KMS::Key'))).not.toContain('FSx');
      expect(key.node.tryFindChild('Resource')).toBeDefined();
      Annotations.fromStack(context.stack).hasNoWarning('*', Match.stringLikeRegexp('sourceKeyNotGranted'));
    });
  });

  describe('security group', () => {
    test('allows Lustre (TCP 988 and 1018-1023) from itself, and nothing broader', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      const cache = newCache(context);

      // THEN
      const template = Template.fromStack(context.stack);
      const groupId = context.stack.resolve(cache.securityGroup.securityGroupId);
      for (const [fromPort, toPort] of [[988, 988], [1018, 1023]]) {
        template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
          IpProtocol: 'tcp', FromPort: fromPort, ToPort: toPort, GroupId: groupId, SourceSecurityGroupId: groupId,
        });
      }
      template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { GroupId: groupId }, 2);
      template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { FromPort: 988, ToPort: 1023 }, 0);
      template.hasResourceProperties('AWS::FSx::FileSystem', { SecurityGroupIds: [groupId] });
    });

    test('has no rule open to an address range', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN
      const cache = newCache(context);

      // THEN
      const group = Template.fromStack(context.stack).findResources('AWS::EC2::SecurityGroup', {
        Properties: { GroupDescription: Match.stringLikeRegexp('dataset cache') },
      });
      expect(Object.keys(group)).toEqual([logicalId(context.stack, cache.securityGroup as ec2.SecurityGroup)]);
      expect(JSON.stringify(Object.values(group)[0])).not.toContain('SecurityGroupIngress');
    });

    test('uses the group given and narrows it the same way', () => {
      // GIVEN
      const context = cacheTestStack();
      const securityGroup = new ec2.SecurityGroup(context.stack, 'MyGroup', { vpc: context.vpc });

      // WHEN
      const cache = newCache(context, { securityGroup });

      // THEN
      const template = Template.fromStack(context.stack);
      const groupId = context.stack.resolve(securityGroup.securityGroupId);
      expect(cache.securityGroup).toBe(securityGroup);
      template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { GroupId: groupId, SourceSecurityGroupId: groupId }, 2);
      template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { FromPort: 988, ToPort: 1023 }, 0);
      template.resourceCountIs('AWS::EC2::SecurityGroup', 1);
    });

    test('exposes the group through connections, so other clients can be allowed', () => {
      // GIVEN
      const context = cacheTestStack();
      const cache = newCache(context);
      const client = new ec2.SecurityGroup(context.stack, 'Client', { vpc: context.vpc });

      // WHEN
      cache.connections.allowFrom(client, ec2.Port.tcp(988));

      // THEN
      Template.fromStack(context.stack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        FromPort: 988, GroupId: context.stack.resolve(cache.securityGroup.securityGroupId),
        SourceSecurityGroupId: context.stack.resolve(client.securityGroupId),
      });
    });
  });

  test('raises no cdk-nag AwsSolutions finding of its own, with an SSE-KMS source and a key of its own', () => {
    // GIVEN
    const context = cacheTestStack();
    const key = new kms.Key(context.stack, 'DataKey', { enableKeyRotation: true });
    const bucket = new s3.Bucket(context.stack, 'EncryptedData', { encryption: s3.BucketEncryption.KMS, encryptionKey: key });
    newCache(context, { source: CacheSource.fromBucket(bucket, 'data/'), kmsKey: new kms.Key(context.stack, 'CacheKey', { enableKeyRotation: true }) });

    // WHEN
    const report = new AwsSolutionsChecks(context.stack).validateScope(context.stack.node.root);

    // THEN: findings about the test's own VPC and buckets are not the cache's
    const findings = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
    expect(findings.filter((f) => /\/(Cache|DataKey|CacheKey)\//.test(f))).toEqual([]);
    expect(findings.length).toBeGreaterThan(0);
  });

  describe('validation', () => {
    test('rejects SCRATCH_1, which takes no data repository association', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN / THEN
      expect(() => newCache(context, { deploymentType: fsx.LustreDeploymentType.SCRATCH_1 }))
        .toThrow(/UnsupportedDeploymentType.*deploymentType must be SCRATCH_2, PERSISTENT_1 or PERSISTENT_2, got SCRATCH_1/);
    });

    test.each([fsx.LustreDeploymentType.SCRATCH_2, fsx.LustreDeploymentType.PERSISTENT_1, fsx.LustreDeploymentType.PERSISTENT_2])(
      'accepts %s', (deploymentType) => {
        // GIVEN
        const context = cacheTestStack();

        // WHEN / THEN
        expect(() => newCache(context, { deploymentType })).not.toThrow();
      });

    test('rejects Lustre 2.10, which takes no data repository association', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN / THEN
      expect(() => newCache(context, { fileSystemTypeVersion: fsx.FileSystemTypeVersion.V_2_10 }))
        .toThrow(/LustreVersionWithoutAssociations.*fileSystemTypeVersion must be 2.12 or 2.15, got 2.10/);
    });

    test.each([0, 1000, 1800, 2401, 3600, 6000, 1200.5, -2400])('rejects a storage capacity of %s GiB', (storageCapacityGiB) => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN / THEN
      expect(() => newCache(context, { storageCapacityGiB }))
        .toThrow(new RegExp(`InvalidStorageCapacity.*storageCapacityGiB must be 1200, 2400 or a multiple of 2400 for PERSISTENT_2 SSD storage, got ${storageCapacityGiB}`));
    });

    test.each([1200, 2400, 4800, 7200, 240000])('accepts a storage capacity of %s GiB', (storageCapacityGiB) => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN / THEN
      expect(() => newCache(context, { storageCapacityGiB })).not.toThrow();
    });

    test('passes a storage capacity known only at deploy time through unchecked', () => {
      // GIVEN
      const context = cacheTestStack();
      const storageCapacityGiB = Lazy.number({ produce: () => 3600 });

      // WHEN
      const cache = newCache(context, { storageCapacityGiB, datasetSize: Size.tebibytes(10) });

      // THEN
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem').StorageCapacity).toEqual(3600);
      expect(cache.baselineThroughputMBps).toBeUndefined();
    });

    test.each([
      [fsx.LustreDeploymentType.PERSISTENT_2, [50, 100, 200, 300, 2000], [125, 250, 500, 1000]],
      [fsx.LustreDeploymentType.PERSISTENT_1, [12, 40, 125, 250], [50, 100, 200]],
    ])('%s: rejects per-unit throughputs %j and accepts %j', (deploymentType, rejected, accepted) => {
      for (const perUnitStorageThroughput of rejected) {
        expect(() => newCache(cacheTestStack(), { deploymentType, perUnitStorageThroughput }))
          .toThrow(new RegExp(`InvalidPerUnitStorageThroughput.*must be one of ${accepted.join(', ')} .* got ${perUnitStorageThroughput}`));
      }
      for (const perUnitStorageThroughput of accepted) {
        expect(() => newCache(cacheTestStack(), { deploymentType, perUnitStorageThroughput })).not.toThrow();
      }
    });

    test('rejects any per-unit throughput for SCRATCH_2, whose baseline is fixed', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN / THEN
      expect(() => newCache(context, { deploymentType: fsx.LustreDeploymentType.SCRATCH_2, perUnitStorageThroughput: 200 }))
        .toThrow(/InvalidPerUnitStorageThroughput.*cannot be set for SCRATCH_2, got 200/);
    });

    test('passes a per-unit throughput known only at deploy time through unchecked', () => {
      // GIVEN
      const context = cacheTestStack();
      const perUnitStorageThroughput = Lazy.number({ produce: () => 300 });

      // WHEN
      newCache(context, { perUnitStorageThroughput });

      // THEN
      expect(onlyResourceProperties(context.stack, 'AWS::FSx::FileSystem').LustreConfiguration.PerUnitStorageThroughput).toEqual(300);
    });

    test('rejects a storage capacity smaller than the dataset, and accepts one exactly its size', () => {
      // WHEN / THEN
      expect(() => newCache(cacheTestStack(), { storageCapacityGiB: 1200, datasetSize: Size.gibibytes(1201) }))
        .toThrow(/StorageCapacityBelowDatasetSize.*storageCapacityGiB \(1200\) must hold the 1201 GiB of datasetSize/);
      expect(() => newCache(cacheTestStack(), { storageCapacityGiB: 1200, datasetSize: Size.gibibytes(1200) })).not.toThrow();
    });

    test('skips the dataset check when the dataset size is known only at deploy time', () => {
      // GIVEN
      const datasetSize = Size.gibibytes(Lazy.number({ produce: () => 5000 }));

      // WHEN / THEN
      expect(() => newCache(cacheTestStack(), { storageCapacityGiB: 1200, datasetSize })).not.toThrow();
    });

    test('rejects a KMS key on SCRATCH_2, which always uses an FSx-managed key', () => {
      // GIVEN
      const context = cacheTestStack();

      // WHEN / THEN
      expect(() => newCache(context, { deploymentType: fsx.LustreDeploymentType.SCRATCH_2, kmsKey: new kms.Key(context.stack, 'Key') }))
        .toThrow(/KmsKeyOnScratchFileSystem/);
    });

    test.each([
      ['0.5 MiB', Size.kibibytes(512)],
      ['512001 MiB', Size.mebibytes(512001)],
      ['0 MiB', Size.mebibytes(0)],
    ])('rejects an imported file chunk size of %s', (_what, importedFileChunkSize) => {
      expect(() => newCache(cacheTestStack(), { importedFileChunkSize })).toThrow(/InvalidImportedFileChunkSize.*between 1 MiB and 512000 MiB/);
    });

    test.each([Size.mebibytes(1), Size.mebibytes(512000)])('accepts an imported file chunk size of %s', (importedFileChunkSize) => {
      expect(() => newCache(cacheTestStack(), { importedFileChunkSize })).not.toThrow();
    });

    test.each(['/packed/', 'packed', 'a'.repeat(1024) + '/'])('rejects the source prefix %s', (prefix) => {
      expect(() => CacheSource.fromBucket(cacheTestStack().bucket, prefix)).toThrow(/InvalidCachePrefix.*prefix must be empty or a key prefix ending in '\/'/);
    });

    test.each(['', 'packed/', 'a/b/'])('accepts the source prefix \'%s\'', (prefix) => {
      expect(() => CacheSource.fromBucket(cacheTestStack().bucket, prefix)).not.toThrow();
    });

    test('skips the prefix check for a token', () => {
      // GIVEN
      const prefix = Lazy.string({ produce: () => 'no-slash' });

      // WHEN / THEN
      expect(() => CacheSource.fromBucket(cacheTestStack().bucket, prefix)).not.toThrow();
    });
  });
});
