import { DescribeTrainingJobCommand } from '@aws-sdk/client-sagemaker';
import type { AwsJsonServer} from './aws-json-server';
import { awsTestClients, startAwsJsonServer } from './aws-json-server';

let aws: AwsJsonServer;

beforeAll(async () => {
  aws = await startAwsJsonServer(['sagemaker']);
});

afterAll(() => aws.close());

describe('AwsJsonServer', () => {
  test('a response that breaks the API model is recorded as a violation and fails the call', async () => {
    // GIVEN: a DescribeTrainingJob answer without its required TrainingJobArn, and a status outside the enum
    aws.on('sagemaker', 'DescribeTrainingJob', (input) => ({
      TrainingJobName: input.TrainingJobName, ModelArtifacts: { S3ModelArtifacts: 's3://b/m.tar.gz' },
      TrainingJobStatus: 'Finished', SecondaryStatus: 'Completed', StoppingCondition: {}, CreationTime: 1_700_000_000,
    }));
    // WHEN
    const call = awsTestClients(aws).sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: 'job-1' }));
    // THEN
    await expect(call).rejects.toThrow(/invalid test response/);
    expect(aws.violations).toEqual([
      expect.stringMatching(/sagemaker DescribeTrainingJob response: TrainingJobStatus: .*"Finished" is not one of InProgress/),
      expect.stringMatching(/sagemaker DescribeTrainingJob response: TrainingJobArn: .*required member 'TrainingJobArn' is missing/),
    ]);
    aws.reset();
  });

  test('an operation the test did not answer is a violation', async () => {
    await expect(awsTestClients(aws).sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: 'job-1' }))).rejects.toThrow();
    expect(aws.violations).toEqual(['sagemaker DescribeTrainingJob: no answer set by the test']);
    aws.reset();
  });
});
