import { Lazy, Size, Stack, Token } from 'aws-cdk-lib';
import { Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import {
  ChannelCompression,
  FileSystemAccessMode,
  FileSystemType,
  InputMode,
  RecordWrapper,
  S3DataDistribution,
  ShardedDataset,
  TrainingChannel,
  TrainingInstance,
  TrainingJob,
} from '../../lib';
import { testContainer, trainingTestStack } from '../support/stacks';

const FILE_SYSTEM_ID = 'fs-0123456789abcdef0';

/** The first channel of the request a job renders with these channels, resolved. */
function renderedChannels(stack: Stack, channels: TrainingChannel[], instanceCount = 1): any[] {
  const job = new TrainingJob(stack, 'Job', {
    instance: TrainingInstance.G5_2XLARGE,
    instanceCount,
    container: testContainer(),
    channels,
  });
  return stack.resolve(job.renderRequest()).InputDataConfig;
}

function isolatedVpc(stack: Stack): ec2.Vpc {
  return new ec2.Vpc(stack, 'Vpc', {
    natGateways: 0,
    subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
  });
}

describe('TrainingChannel.fromBucket', () => {
  test('renders an S3Prefix data source on s3://<bucket>/<prefix> with the distribution and input mode', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();
    const channel = TrainingChannel.fromBucket('train', bucket, 'packed/shards/', {
      inputMode: InputMode.FAST_FILE,
      distribution: S3DataDistribution.SHARDED_BY_S3_KEY,
      contentType: 'application/x-tar',
    });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel], 2);

    // THEN
    expect(rendered).toEqual({
      ChannelName: 'train',
      DataSource: {
        S3DataSource: {
          S3DataType: 'S3Prefix',
          S3Uri: { 'Fn::Join': ['', ['s3://', { Ref: stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket) }, '/packed/shards/']] },
          S3DataDistributionType: 'ShardedByS3Key',
        },
      },
      InputMode: 'FastFile',
      ContentType: 'application/x-tar',
    });
  });

  test('defaults to FullyReplicated and renders no ShuffleConfig, RecordWrapperType or CompressionType', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();

    // WHEN
    const [rendered] = renderedChannels(stack, [TrainingChannel.fromBucket('train', bucket, 'data/')]);

    // THEN
    expect(rendered.DataSource.S3DataSource.S3DataDistributionType).toEqual('FullyReplicated');
    expect(rendered.InputMode).toEqual('File');
    expect(rendered).not.toHaveProperty('ShuffleConfig');
    expect(rendered).not.toHaveProperty('RecordWrapperType');
    expect(rendered).not.toHaveProperty('CompressionType');
    expect(rendered).not.toHaveProperty('ContentType');
  });

  test('renders the ShuffleConfig seed that aws-cdk-lib drops', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();
    const channel = TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode: InputMode.PIPE, shuffleSeed: 42 });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel]);

    // THEN
    expect(rendered.ShuffleConfig).toEqual({ Seed: 42 });
  });

  test('renders a seed of 0', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();
    const channel = TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode: InputMode.PIPE, shuffleSeed: 0 });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel]);

    // THEN
    expect(rendered.ShuffleConfig).toEqual({ Seed: 0 });
  });

  test('renders RecordWrapperType and CompressionType in Pipe mode', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();
    const channel = TrainingChannel.fromBucket('train', bucket, 'data/', {
      inputMode: InputMode.PIPE,
      recordWrapper: RecordWrapper.RECORDIO,
      compression: ChannelCompression.GZIP,
    });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel]);

    // THEN
    expect(rendered).toMatchObject({ InputMode: 'Pipe', RecordWrapperType: 'RecordIO', CompressionType: 'Gzip' });
  });

  test.each([
    ['compression', { compression: ChannelCompression.GZIP }],
    ['recordWrapper', { recordWrapper: RecordWrapper.RECORDIO }],
  ])('uses Pipe mode by default when %s is set, the only mode it works in', (_option, options) => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();

    // WHEN
    const [rendered] = renderedChannels(stack, [TrainingChannel.fromBucket('train', bucket, 'data/', options)]);

    // THEN
    expect(rendered.InputMode).toEqual('Pipe');
  });

  test('grants the job role read on the prefix only', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();

    // WHEN
    renderedChannels(stack, [TrainingChannel.fromBucket('train', bucket, 'packed/shards/')]);

    // THEN
    const bucketArn = { 'Fn::GetAtt': [stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket), 'Arn'] };
    const statements = new Capture();
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^JobExecutionRole') }],
      PolicyDocument: { Statement: statements },
    });
    const onDataBucket = (statements.asArray() as any[]).filter((s) => JSON.stringify(s.Resource).includes(bucketArn['Fn::GetAtt'][0]));
    expect(onDataBucket).toEqual([{
      Action: ['s3:GetObject*', 's3:GetBucket*', 's3:List*'],
      Effect: 'Allow',
      Resource: [bucketArn, { 'Fn::Join': ['', [bucketArn, '/packed/shards/*']] }],
    }]);
  });

  describe('validation', () => {
    test.each([
      ['empty', ''],
      ['65 characters', 'a'.repeat(65)],
      ['a space', 'a b'],
      ['a non-ASCII letter', 'ü'],
    ])('rejects a channel name that is %s', (_what, channelName) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket(channelName, bucket, 'data/')).toThrow(/InvalidChannelName/);
    });

    test.each([
      ['64 characters', 'a'.repeat(64)],
      ['one character', 'a'],
      ['dots, hyphens and underscores', 'train.v2-shards_a'],
    ])('accepts a channel name of %s', (_what, channelName) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN
      const channel = TrainingChannel.fromBucket(channelName, bucket, 'data/');

      // THEN
      expect(channel.channelName).toEqual(channelName);
    });

    test('skips the channel name check for a token', () => {
      // GIVEN
      const { bucket } = trainingTestStack();
      const channelName = Lazy.string({ produce: () => 'train' });

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket(channelName, bucket, 'data/')).not.toThrow();
    });

    test.each([InputMode.FILE, InputMode.FAST_FILE])('rejects Gzip compression in %s mode', (inputMode) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode, compression: ChannelCompression.GZIP }))
        .toThrow(/CompressionRequiresPipeMode/);
    });

    test.each([InputMode.FILE, InputMode.FAST_FILE])('rejects the RecordIO wrapper in %s mode', (inputMode) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode, recordWrapper: RecordWrapper.RECORDIO }))
        .toThrow(/RecordWrapperRequiresPipeMode/);
    });

    test.each([InputMode.FILE, InputMode.FAST_FILE])('accepts compression and wrapper None in %s mode', (inputMode) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket('train', bucket, 'data/', {
        inputMode, compression: ChannelCompression.NONE, recordWrapper: RecordWrapper.NONE,
      })).not.toThrow();
    });

    test.each([1.5, Number.MAX_SAFE_INTEGER + 1, NaN])('rejects the shuffle seed %p', (shuffleSeed) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode: InputMode.PIPE, shuffleSeed }))
        .toThrow(/InvalidShuffleSeed/);
    });

    test.each([0, -7, Number.MAX_SAFE_INTEGER])('accepts the shuffle seed %p', (shuffleSeed) => {
      // GIVEN
      const { bucket } = trainingTestStack();

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode: InputMode.PIPE, shuffleSeed })).not.toThrow();
    });

    test('skips the shuffle seed check for a token', () => {
      // GIVEN
      const { bucket } = trainingTestStack();
      const shuffleSeed = Token.asNumber(Lazy.number({ produce: () => 7 }));

      // WHEN / THEN
      expect(() => TrainingChannel.fromBucket('train', bucket, 'data/', { inputMode: InputMode.PIPE, shuffleSeed })).not.toThrow();
    });
  });
});

describe('TrainingChannel.fromShards', () => {
  /** A dataset packed elsewhere (the CLI) under `packed/`; a new construct id per call. */
  let imports = 0;
  const packed = (bucket: s3.IBucket) => ShardedDataset.fromAttributes(Stack.of(bucket), `Packed${imports++}`, { destinationBucket: bucket });
  const uriOf = (stack: Stack, bucket: s3.IBucket, key: string) => ({ 'Fn::Join': ['', ['s3://', { Ref: stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket) }, `/${key}`]] });

  test('reads the current version\'s shards through its ManifestFile in Pipe mode, sharded and shuffled as asked', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();

    // WHEN
    const [rendered] = renderedChannels(stack, [TrainingChannel.fromShards('train', packed(bucket), {
      inputMode: InputMode.PIPE, distribution: S3DataDistribution.SHARDED_BY_S3_KEY, shuffleSeed: 7,
      recordWrapper: RecordWrapper.NONE, compression: ChannelCompression.NONE,
    })], 2);

    // THEN
    expect(rendered.DataSource.S3DataSource).toEqual({
      S3DataType: 'ManifestFile', S3Uri: uriOf(stack, bucket, 'packed/shards.manifest'), S3DataDistributionType: 'ShardedByS3Key',
    });
    expect(rendered).toMatchObject({ InputMode: 'Pipe', ShuffleConfig: { Seed: 7 } });
  });

  test('in FastFile mode (S3Prefix only) mounts the dataset root, FullyReplicated; ShardedByS3Key there is refused', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();

    // WHEN
    const [rendered] = renderedChannels(stack, [TrainingChannel.fromShards('train', packed(bucket), { inputMode: InputMode.FAST_FILE })], 1);

    // THEN
    expect(rendered.DataSource.S3DataSource).toEqual({
      S3DataType: 'S3Prefix', S3Uri: uriOf(stack, bucket, 'packed/'), S3DataDistributionType: 'FullyReplicated',
    });
    expect(() => TrainingChannel.fromShards('train', packed(bucket), { inputMode: InputMode.FAST_FILE, distribution: S3DataDistribution.SHARDED_BY_S3_KEY }))
      .toThrow(/ShardedFastFileDataset.*FastFile mode reads a dataset through its root prefix/);
  });

  test('the index channel reads the current version\'s index.manifest, FullyReplicated in File mode', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();

    // WHEN
    const [rendered] = renderedChannels(stack, [TrainingChannel.fromShardIndex('index', packed(bucket))], 2);

    // THEN
    expect(rendered).toMatchObject({ InputMode: 'File' });
    expect(rendered.DataSource.S3DataSource).toEqual({
      S3DataType: 'ManifestFile', S3Uri: uriOf(stack, bucket, 'packed/index.manifest'), S3DataDistributionType: 'FullyReplicated',
    });
  });

  test.each([
    ['a RecordIO wrapper', { recordWrapper: RecordWrapper.RECORDIO }, /RecordWrapperOnShards.*recordWrapper RecordIO on packed shards/],
    ['Gzip', { compression: ChannelCompression.GZIP }, /CompressionOnShards.*compression Gzip on packed shards/],
    ['a RecordIO wrapper with Gzip', { recordWrapper: RecordWrapper.RECORDIO, compression: ChannelCompression.GZIP }, /RecordWrapperOnShards/],
  ])('refuses %s: the shards are framed and stored uncompressed', (_name, options, error) => {
    // GIVEN
    const { bucket } = trainingTestStack();

    // WHEN / THEN
    expect(() => TrainingChannel.fromShards('train', packed(bucket), { inputMode: InputMode.PIPE, ...options })).toThrow(error);
  });
});

describe('TrainingChannel.fromFileSystem', () => {
  test('renders an FSx for Lustre data source, read-only, in File mode by default', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const channel = TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/imagenet' });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel]);

    // THEN
    expect(rendered).toEqual({
      ChannelName: 'train',
      DataSource: {
        FileSystemDataSource: {
          FileSystemId: FILE_SYSTEM_ID,
          FileSystemType: 'FSxLustre',
          FileSystemAccessMode: 'ro',
          DirectoryPath: '/abcdefgh/imagenet',
        },
      },
      InputMode: 'File',
    });
  });

  test('renders EFS, read-write and the content type when given', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const channel = TrainingChannel.fromFileSystem('scratch', {
      fileSystemId: FILE_SYSTEM_ID,
      directoryPath: '/scratch',
      fileSystemType: FileSystemType.EFS,
      accessMode: FileSystemAccessMode.READ_WRITE,
      inputMode: InputMode.FILE,
      contentType: 'application/octet-stream',
    });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel]);

    // THEN
    expect(rendered.DataSource.FileSystemDataSource).toMatchObject({ FileSystemType: 'EFS', FileSystemAccessMode: 'rw' });
    expect(rendered.ContentType).toEqual('application/octet-stream');
  });

  test('lets the job reach FSx for Lustre on TCP 988 and 1018-1023', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const vpc = isolatedVpc(stack);
    const fileSystemGroup = new ec2.SecurityGroup(stack, 'FileSystemGroup', { vpc });
    const channel = TrainingChannel.fromFileSystem('train', {
      fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/data', connections: fileSystemGroup,
    });

    // WHEN
    const job = new TrainingJob(stack, 'Job', { instance: TrainingInstance.G5_2XLARGE, container: testContainer(), vpc, channels: [channel] });

    // THEN
    const template = Template.fromStack(stack);
    const fileSystemGroupId = stack.resolve(fileSystemGroup.securityGroupId);
    const jobGroupId = stack.resolve(job.connections.securityGroups[0].securityGroupId);
    for (const [fromPort, toPort] of [[988, 988], [1018, 1023]]) {
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp', FromPort: fromPort, ToPort: toPort, GroupId: fileSystemGroupId, SourceSecurityGroupId: jobGroupId,
      });
      template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', {
        IpProtocol: 'tcp', FromPort: fromPort, ToPort: toPort, GroupId: jobGroupId, DestinationSecurityGroupId: fileSystemGroupId,
      });
    }
    template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { GroupId: fileSystemGroupId }, 2);
  });

  test('lets the job reach EFS on TCP 2049 only', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const vpc = isolatedVpc(stack);
    const fileSystemGroup = new ec2.SecurityGroup(stack, 'FileSystemGroup', { vpc });
    const channel = TrainingChannel.fromFileSystem('train', {
      fileSystemId: FILE_SYSTEM_ID, directoryPath: '/data', fileSystemType: FileSystemType.EFS, connections: fileSystemGroup,
    });

    // WHEN
    const job = new TrainingJob(stack, 'Job', { instance: TrainingInstance.G5_2XLARGE, container: testContainer(), vpc, channels: [channel] });

    // THEN
    const template = Template.fromStack(stack);
    const fileSystemGroupId = stack.resolve(fileSystemGroup.securityGroupId);
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049, GroupId: fileSystemGroupId,
      SourceSecurityGroupId: stack.resolve(job.connections.securityGroups[0].securityGroupId),
    });
    template.resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { GroupId: fileSystemGroupId }, 1);
  });

  test('adds no security group rules without connections', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const channel = TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/data' });

    // WHEN
    renderedChannels(stack, [channel]);

    // THEN: only the job group's own rules between its instances
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::EC2::SecurityGroupIngress', 1);
    template.resourceCountIs('AWS::EC2::SecurityGroupEgress', 1);
  });

  test('grants the job role no S3 access', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const channel = TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/data' });

    // WHEN
    renderedChannels(stack, [channel]);

    // THEN: the output bucket is the only bucket the role reaches
    const statements = new Capture();
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^JobExecutionRole') }],
      PolicyDocument: { Statement: statements },
    });
    const s3Statements = (statements.asArray() as any[]).filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
    expect(s3Statements).toHaveLength(1);
    expect(JSON.stringify(s3Statements[0].Resource)).toMatch(/OutputBucket.*training-output\/\*/);
  });

  describe('validation', () => {
    test.each([InputMode.PIPE, InputMode.FAST_FILE])('rejects %s mode', (inputMode) => {
      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/data', inputMode }))
        .toThrow(/FileSystemChannelRequiresFileMode/);
    });

    test.each([
      ['without the fs- prefix', '0123456789abcdef0'],
      ['with fewer than 8 hex digits', 'fs-0123456'],
      ['with upper-case hex digits', 'fs-0123456789ABCDEF0'],
      ['longer than 21 characters', 'fs-0123456789abcdef0123'],
      ['empty', ''],
    ])('rejects a file system id %s', (_what, fileSystemId) => {
      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId, directoryPath: '/abcdefgh/data' }))
        .toThrow(/InvalidFileSystemId/);
    });

    test.each([
      ['of 8 hex digits (11 characters)', 'fs-01234567'],
      ['of 18 hex digits (21 characters)', 'fs-0123456789abcdef01'],
    ])('accepts a file system id %s', (_what, fileSystemId) => {
      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId, directoryPath: '/abcdefgh/data' })).not.toThrow();
    });

    test('skips the file system id check for a token', () => {
      // GIVEN
      const fileSystemId = Lazy.string({ produce: () => FILE_SYSTEM_ID });

      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId, directoryPath: '/abcdefgh/data' })).not.toThrow();
    });

    test.each([
      ['relative', 'abcdefgh/data'],
      ['empty', ''],
      ['longer than 4096 characters', `/${'a'.repeat(4096)}`],
    ])('rejects a directory path that is %s', (_what, directoryPath) => {
      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath }))
        .toThrow(/InvalidDirectoryPath/);
    });

    test('accepts a directory path of 4096 characters', () => {
      // GIVEN
      const directoryPath = `/${'a'.repeat(4095)}`;

      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath })).not.toThrow();
    });

    test('skips the directory path check when the path holds a token', () => {
      // GIVEN: a mount name only known at deploy time, and no leading '/' in the literal part
      const mountName = Lazy.string({ produce: () => 'abcdefgh' });

      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('train', { fileSystemId: FILE_SYSTEM_ID, directoryPath: `${mountName}/data` }))
        .not.toThrow();
    });

    test('checks the channel name too', () => {
      // WHEN / THEN
      expect(() => TrainingChannel.fromFileSystem('a b', { fileSystemId: FILE_SYSTEM_ID, directoryPath: '/abcdefgh/data' }))
        .toThrow(/InvalidChannelName/);
    });
  });
});

describe('TrainingChannel datasetSize', () => {
  test('is passed to the job, which picks the input mode from it', () => {
    // GIVEN
    const { stack, bucket } = trainingTestStack();
    const channel = TrainingChannel.fromBucket('train', bucket, 'data/', { datasetSize: Size.gibibytes(10) });

    // WHEN
    const [rendered] = renderedChannels(stack, [channel]);

    // THEN
    expect(rendered.InputMode).toEqual('File');
  });
});
