import type { ApiService } from './api-model';
import { ApiModel } from './api-model';

/** A CreateTrainingJob request as the Step Functions task renders it, valid against the model. */
function trainingJobRequest(): Record<string, any> {
  return {
    TrainingJobName: 'resnet50-imagenet-2024',
    RoleArn: 'arn:aws:iam::123456789012:role/TrainingRole',
    AlgorithmSpecification: {
      TrainingImage: '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311',
      TrainingInputMode: 'FastFile',
    },
    HyperParameters: { epochs: '90', 'batch-size': '256' },
    InputDataConfig: [{
      ChannelName: 'train',
      DataSource: {
        S3DataSource: {
          S3DataType: 'S3Prefix',
          S3Uri: 's3://training-data/imagenet/train/',
          S3DataDistributionType: 'ShardedByS3Key',
        },
      },
      InputMode: 'FastFile',
    }],
    OutputDataConfig: { S3OutputPath: 's3://training-output/resnet50/' },
    ResourceConfig: { InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2, VolumeSizeInGB: 50 },
    StoppingCondition: { MaxRuntimeInSeconds: 86400 },
    Environment: { NCCL_DEBUG: 'INFO' },
    EnableManagedSpotTraining: false,
  };
}

function channel(name: string): Record<string, any> {
  return { ChannelName: name, DataSource: { S3DataSource: { S3DataType: 'S3Prefix', S3Uri: `s3://training-data/${name}/` } } };
}

describe('ApiModel', () => {
  const sagemaker = ApiModel.load('sagemaker');

  test('a realistic CreateTrainingJobRequest has no violations', () => {
    // GIVEN
    const request = trainingJobRequest();

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([]);
  });

  test('a missing required member is reported at its path', () => {
    // GIVEN
    const request = trainingJobRequest();
    delete request.RoleArn;
    delete request.InputDataConfig[0].DataSource.S3DataSource.S3Uri;

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'InputDataConfig[0].DataSource.S3DataSource.S3Uri', message: expect.stringMatching(/S3DataSource: required member 'S3Uri' is missing/) },
      { path: 'RoleArn', message: expect.stringMatching(/CreateTrainingJobRequest: required member 'RoleArn' is missing/) },
    ]);
  });

  test('a member the shape does not define is reported', () => {
    // GIVEN
    const request = trainingJobRequest();
    request.ResourceConfig.InstanceTypes = ['ml.p4d.24xlarge'];

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'ResourceConfig.InstanceTypes', message: expect.stringMatching(/ResourceConfig has no member 'InstanceTypes'/) },
    ]);
  });

  test('a value outside the enum is reported with the allowed values', () => {
    // GIVEN
    const request = trainingJobRequest();
    request.InputDataConfig[0].InputMode = 'Stream';

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'InputDataConfig[0].InputMode', message: expect.stringMatching(/"Stream" is not one of Pipe, File, FastFile/) },
    ]);
  });

  test('a string that does not match the pattern as a whole is reported', () => {
    // GIVEN
    const request = trainingJobRequest();
    request.TrainingJobName = 'bad_name!';

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'TrainingJobName', message: expect.stringMatching(/"bad_name!" does not match pattern/) },
    ]);
  });

  test('a pattern is anchored at both ends, as Java matches() is', () => {
    // GIVEN a name whose prefix matches the pattern but whose tail does not
    const request = trainingJobRequest();
    request.TrainingJobName = 'valid-prefix-';

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'TrainingJobName', message: expect.stringMatching(/does not match pattern/) },
    ]);
  });

  test('a string longer than the maximum is reported', () => {
    // GIVEN ChannelName allows 64 characters
    const request = trainingJobRequest();
    request.InputDataConfig[0].ChannelName = 'c'.repeat(65);

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'InputDataConfig[0].ChannelName', message: expect.stringMatching(/ChannelName: length 65 is above the maximum 64/) },
    ]);
  });

  test('a string at the maximum length passes', () => {
    // GIVEN
    const request = trainingJobRequest();
    request.InputDataConfig[0].ChannelName = 'c'.repeat(64);

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([]);
  });

  test('a list with more items than the maximum is reported', () => {
    // GIVEN InputDataConfig allows 20 channels
    const request = trainingJobRequest();
    request.InputDataConfig = Array.from({ length: 21 }, (_, i) => channel(`channel${i}`));

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'InputDataConfig', message: expect.stringMatching(/InputDataConfig: 21 items, above the maximum 20/) },
    ]);
  });

  test('an empty list below the minimum is reported', () => {
    // GIVEN InputDataConfig needs at least 1 channel when present
    const request = trainingJobRequest();
    request.InputDataConfig = [];

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'InputDataConfig', message: expect.stringMatching(/0 items, below the minimum 1/) },
    ]);
  });

  test('a number below the minimum is reported', () => {
    // GIVEN MaxRuntimeInSeconds has min 1 (the model lets InstanceCount be 0)
    const request = trainingJobRequest();
    request.StoppingCondition.MaxRuntimeInSeconds = 0;

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'StoppingCondition.MaxRuntimeInSeconds', message: expect.stringMatching(/0 is below the minimum 1/) },
    ]);
  });

  test.each([
    ['a numeric string', '2', /expected an integer, got string "2"/],
    ['a fraction', 1.5, /expected a whole number, got 1.5/],
    ['a boolean', true, /expected an integer, got boolean true/],
  ])('an integer member given %s is reported', (_, instanceCount, message) => {
    // GIVEN
    const request = trainingJobRequest();
    request.ResourceConfig.InstanceCount = instanceCount;

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([{ path: 'ResourceConfig.InstanceCount', message: expect.stringMatching(message) }]);
  });

  test('a boolean member given a string is reported', () => {
    // GIVEN
    const request = trainingJobRequest();
    request.EnableManagedSpotTraining = 'false';

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'EnableManagedSpotTraining', message: expect.stringMatching(/expected a boolean, got string "false"/) },
    ]);
  });

  test('a map with more entries than the maximum is reported', () => {
    // GIVEN HyperParameters allows 100 entries
    const request = trainingJobRequest();
    request.HyperParameters = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`param${i}`, `${i}`]));

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'HyperParameters', message: expect.stringMatching(/HyperParameters: 101 entries, above the maximum 100/) },
    ]);
  });

  test('map keys and values are checked against their own shapes', () => {
    // GIVEN environment variable names must match [a-zA-Z_][a-zA-Z0-9_]*, values are strings
    const request = trainingJobRequest();
    request.Environment = { '1BAD': 'x', GOOD: 3 };

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'Environment["1BAD"]', message: expect.stringMatching(/TrainingEnvironmentKey: "1BAD" does not match pattern/) },
      { path: 'Environment["GOOD"]', message: expect.stringMatching(/TrainingEnvironmentValue: expected a string, got number 3/) },
    ]);
  });

  test('a Step Functions "Field.$" key counts as the member and its value is not checked', () => {
    // GIVEN a required member given only as a JSONPath expression
    const request = trainingJobRequest();
    delete request.TrainingJobName;
    request['TrainingJobName.$'] = "States.Format('resnet50-{}', $$.Execution.Name)";

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([]);
  });

  test('a "Field.$" key for a member the shape does not define is reported', () => {
    // GIVEN
    const request = trainingJobRequest();
    request['JobName.$'] = '$.name';

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'JobName.$', message: expect.stringMatching(/CreateTrainingJobRequest has no member 'JobName'/) },
    ]);
  });

  test('a member set both as "Field" and "Field.$" is reported', () => {
    // GIVEN
    const request = trainingJobRequest();
    request['TrainingJobName.$'] = '$.name';

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'TrainingJobName.$', message: expect.stringMatching(/'TrainingJobName' is set both as 'TrainingJobName' and as 'TrainingJobName.\$'/) },
    ]);
  });

  test.each([
    ['Ref', { Ref: 'TrainingRole' }],
    ['Fn::GetAtt', { 'Fn::GetAtt': ['TrainingRole', 'Arn'] }],
    ['Fn::Join', { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:role/R']] }],
    ['an unresolved CDK token', '${Token[TOKEN.123]}'],
  ])('%s is accepted for a required string member whose value is known only at deploy time', (_, roleArn) => {
    // GIVEN
    const request = trainingJobRequest();
    request.RoleArn = roleArn;

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([]);
  });

  test('an object with a Ref key and other keys is not an intrinsic and is checked', () => {
    // GIVEN
    const request = trainingJobRequest();
    request.RoleArn = { Ref: 'TrainingRole', Extra: true };

    // WHEN
    const violations = sagemaker.validate('CreateTrainingJobRequest', request);

    // THEN
    expect(violations).toEqual([
      { path: 'RoleArn', message: expect.stringMatching(/RoleArn: expected a string, got an object/) },
    ]);
  });

  test('a union with two members set is reported', () => {
    // GIVEN CustomFileSystem is a union of EFS, FSx for Lustre and S3
    const fileSystem = {
      EFSFileSystem: { FileSystemId: 'fs-0123456789abcdef0' },
      FSxLustreFileSystem: { FileSystemId: 'fs-0123456789abcdef1' },
    };

    // WHEN
    const violations = sagemaker.validate('CustomFileSystem', fileSystem);

    // THEN
    expect(violations).toEqual([
      { path: '', message: expect.stringMatching(/exactly one member must be set, got 2/) },
    ]);
  });

  test('an unknown shape name throws, since it is a mistake in the test', () => {
    expect(() => sagemaker.validate('CreateTrainingJobRequst', {})).toThrow(/no shape 'CreateTrainingJobRequst'/);
  });

  describe('Java patterns', () => {
    test.each<ApiService>(['sagemaker', 'fsx', 'stepfunctions'])('every pattern of the %s model compiles', (service) => {
      // GIVEN
      const model = ApiModel.load(service);

      // WHEN
      const failures = model.shapeNames
        .map((name) => [name, model.compilePattern(name)] as const)
        .filter(([, compiled]) => compiled instanceof Error)
        .map(([name, error]) => `${name}: ${(error as Error).message}`);

      // THEN
      expect(failures).toEqual([]);
    });

    test.each<[string, ApiService, string, string, boolean]>([
      ['\\p{Alnum} (POSIX class)', 'sagemaker', 'TrainingRepositoryCredentialsProviderArn', 'arn:aws:lambda:us-east-1:123456789012:function:creds', true],
      ['\\p{Alnum} (POSIX class)', 'sagemaker', 'TrainingRepositoryCredentialsProviderArn', 'arn:aws_cn:lambda:us-east-1:123456789012:function:creds', false],
      ['escaped space and underscore', 'sagemaker', 'EdgeVersion', 'v1_2 beta.3', true],
      ['escaped space and underscore', 'sagemaker', 'EdgeVersion', 'v1/2', false],
      ['quantified end anchor ${1,128}', 'sagemaker', 'CustomerMetadataKey', 'team:vision', true],
      ['quantified end anchor ${1,128}', 'sagemaker', 'CustomerMetadataKey', 'team#vision', false],
      ['surrogate-pair range', 'sagemaker', 'Catalog', 'catalog-\u{1F600}', true],
      ['surrogate-pair range', 'sagemaker', 'Catalog', 'catalog\u0007', false],
      ['leading (?i) flag', 'fsx', 'VerboseFlag', 'TRUE', true],
      ['leading (?i) flag', 'fsx', 'VerboseFlag', 'yes!', false],
    ])('a pattern with %s: %s %s %j matches = %s', (_, service, shapeName, value, matches) => {
      // GIVEN
      const model = ApiModel.load(service);

      // WHEN
      const violations = model.validate(shapeName, value);

      // THEN
      expect(violations.filter((v) => /does not match pattern/.test(v.message))).toHaveLength(matches ? 0 : 1);
    });
  });

  describe('other services', () => {
    test('CreateFileSystemRequest of the fsx model requires FileSystemType', () => {
      // GIVEN
      const fsx = ApiModel.load('fsx');
      const request = {
        SubnetIds: ['subnet-0123456789abcdef0'],
        StorageCapacity: 1200,
        LustreConfiguration: { DeploymentType: 'PERSISTENT_2', PerUnitStorageThroughput: 250 },
      };

      // WHEN
      const violations = fsx.validate('CreateFileSystemRequest', request);

      // THEN
      expect(violations).toEqual([
        { path: 'FileSystemType', message: expect.stringMatching(/required member 'FileSystemType' is missing/) },
      ]);
    });

    test('the same fsx request with FileSystemType LUSTRE is valid', () => {
      // GIVEN
      const fsx = ApiModel.load('fsx');
      const request = {
        FileSystemType: 'LUSTRE',
        SubnetIds: ['subnet-0123456789abcdef0'],
        StorageCapacity: 1200,
        LustreConfiguration: { DeploymentType: 'PERSISTENT_2', PerUnitStorageThroughput: 250 },
      };

      // WHEN
      const violations = fsx.validate('CreateFileSystemRequest', request);

      // THEN
      expect(violations).toEqual([]);
    });

    test('load returns the same model for the same service', () => {
      expect(ApiModel.load('stepfunctions')).toBe(ApiModel.load('stepfunctions'));
    });
  });
});
