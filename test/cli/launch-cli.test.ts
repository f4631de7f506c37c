import * as fs from 'fs';
import * as path from 'path';
import type { AwsJsonServer} from '../support/aws-json-server';
import { useAwsJsonServer } from '../support/aws-json-server';
import { temporaryFolders } from '../support/local-files';
import { runCli, runCliWaiting } from '../support/run-cli';

const STATE_MACHINE = 'arn:aws:states:us-east-1:111111111111:stateMachine:TrainingPipeline';
const folder = temporaryFolders();
let aws: AwsJsonServer;
useAwsJsonServer(['stepfunctions', 'sagemaker'], (server) => {
  aws = server;
});

/** The waits asked for between polls, in seconds; none is waited. */
let waits: number[] = [];
beforeEach(() => {
  waits = [];
});

function launch(...args: string[]) {
  return runCliWaiting(async (seconds) => {
    waits.push(seconds);
  }, 'launch', ...args, '--endpoint-url', aws.endpoint, '--region', 'us-east-1');
}

const STARTED = 1_793_610_000;

/** An execution that runs through the given states, one more per poll, then ends with `end`. */
function serveExecution(states: string[], end: { status: string; output?: unknown; error?: string; cause?: string }): void {
  let polls = 0;
  aws.on('stepfunctions', 'StartExecution', (input) => ({
    executionArn: `arn:aws:states:us-east-1:111111111111:execution:TrainingPipeline:${input.name}`,
    startDate: STARTED,
  }));
  aws.on('stepfunctions', 'GetExecutionHistory', () => ({
    events: states.slice(0, polls + 1).map((name, i) => ({
      timestamp: STARTED + i, type: 'TaskStateEntered', id: i + 1, previousEventId: i,
      stateEnteredEventDetails: { name, input: '{}' },
    })),
  }));
  aws.on('stepfunctions', 'DescribeExecution', (input) => {
    polls++;
    const done = polls >= states.length;
    return {
      executionArn: input.executionArn,
      stateMachineArn: STATE_MACHINE,
      status: done ? end.status : 'RUNNING',
      startDate: STARTED,
      ...(done && end.output ? { output: JSON.stringify(end.output), stopDate: STARTED + 3600 } : {}),
      ...(done && end.error ? { error: end.error, cause: end.cause, stopDate: STARTED + 60 } : {}),
    };
  });
}

/** A CreateTrainingJob request as a resolved TrainingJob.renderRequest() gives it. */
function jobRequest(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    RoleArn: 'arn:aws:iam::111111111111:role/TrainingRole',
    AlgorithmSpecification: {
      TrainingImage: '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312',
      TrainingInputMode: 'FastFile',
    },
    HyperParameters: { num_workers: '11', epochs: '3' },
    InputDataConfig: [{
      ChannelName: 'train',
      DataSource: { S3DataSource: { S3DataType: 'S3Prefix', S3Uri: 's3://datasets/packed/shards/', S3DataDistributionType: 'ShardedByS3Key' } },
      InputMode: 'FastFile',
    }],
    OutputDataConfig: { S3OutputPath: 's3://training-output/training-output/' },
    ResourceConfig: { InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2 },
    VpcConfig: { SecurityGroupIds: ['sg-0123456789abcdef0'], Subnets: ['subnet-0123456789abcdef0'] },
    StoppingCondition: { MaxRuntimeInSeconds: 86400 },
    ...extra,
  };
}

function requestFile(request: Record<string, unknown>): string {
  const file = path.join(folder('request'), 'request.json');
  fs.writeFileSync(file, JSON.stringify(request));
  return file;
}

describe('training-io launch: the pipeline', () => {
  test('starts an execution with the hyperparameters and follows it state by state to the diagnosis', async () => {
    // GIVEN
    serveExecution(['ApplyDefaults', 'Plan', 'PackShards', 'Finalize', 'Train', 'Diagnose'], {
      status: 'SUCCEEDED',
      output: {
        trainingJobName: 'train-run-7',
        diagnosis: { verdict: 'input-bound', summary: 'The GPUs waited for data.', markdownUri: 's3://out/train-run-7/diagnosis/report.md', reportUri: 's3://out/x.json' },
      },
    });
    // WHEN
    const { code, stdout } = await launch('--state-machine', STATE_MACHINE, '--name', 'run-7', '--hyperparameter', 'epochs=5',
      '--hyperparameter', 'lr=0.1', '--force', '--poll', '2.5');
    // THEN
    expect(code).toBe(0);
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((seconds) => seconds === 2.5)).toBe(true);
    const start = aws.calls.find((c) => c.operation === 'StartExecution')!.input;
    expect(start).toMatchObject({ stateMachineArn: STATE_MACHINE, name: 'run-7' });
    expect(JSON.parse(start.input)).toEqual({ force: true, hyperparameters: { epochs: '5', lr: '0.1' } });
    expect(stdout).toBe([
      'started arn:aws:states:us-east-1:111111111111:execution:TrainingPipeline:run-7',
      '  ApplyDefaults', '  Plan', '  PackShards', '  Finalize', '  Train', '  Diagnose',
      'succeeded: training job train-run-7',
      'diagnosis: input-bound: The GPUs waited for data.',
      'report: s3://out/train-run-7/diagnosis/report.md',
      '',
    ].join('\n'));
  });

  test('warns when the execution overrides num_workers, and starts it anyway', async () => {
    // GIVEN
    serveExecution(['Plan'], { status: 'SUCCEEDED' });
    // WHEN
    const { code, stderr } = await launch('--state-machine', STATE_MACHINE, '--no-follow', '--hyperparameter', 'num_workers=4');
    const quiet = await launch('--state-machine', STATE_MACHINE, '--no-follow', '--hyperparameter', 'epochs=4');
    // THEN
    expect(code).toBe(0);
    expect(stderr).toMatch(/warning: num_workers=4 replaces the loader workers the pipeline's dataset was packed for.*set loaderWorkers/);
    expect(quiet.stderr).not.toMatch(/num_workers/);
  });

  test('a failed execution exits 1 with its error and cause', async () => {
    serveExecution(['ApplyDefaults', 'Plan', 'NotifyFailure'], { status: 'FAILED', error: 'States.TaskFailed', cause: 'shard part-00001 has no result' });
    const { code, stderr } = await launch('--state-machine', STATE_MACHINE);
    expect(code).toBe(1);
    expect(stderr).toMatch(/execution launch-\d{8}-\d{6}-[0-9a-f]{4} failed: States\.TaskFailed \(shard part-00001 has no result\)/);
  });

  test('--no-follow only starts it, with an empty input by default', async () => {
    serveExecution(['Plan'], { status: 'SUCCEEDED' });
    const { code } = await launch('--state-machine', STATE_MACHINE, '--no-follow');
    expect(code).toBe(0);
    expect(aws.calls.map((c) => c.operation)).toEqual(['StartExecution']);
    expect(JSON.parse(aws.calls[0].input.input)).toEqual({ force: false, hyperparameters: {} });
  });
});

describe('training-io launch: a single job', () => {
  test('creates the job from the request and follows its secondary statuses', async () => {
    // GIVEN
    let polls = 0;
    const transitions = ['Starting', 'Downloading', 'Training', 'Uploading', 'Completed'];
    aws.on('sagemaker', 'CreateTrainingJob', (input) => ({ TrainingJobArn: `arn:aws:sagemaker:us-east-1:111111111111:training-job/${input.TrainingJobName}` }));
    aws.on('sagemaker', 'DescribeTrainingJob', (input) => {
      polls++;
      const seen = transitions.slice(0, Math.min(polls + 1, transitions.length));
      return {
        TrainingJobName: input.TrainingJobName,
        TrainingJobArn: `arn:aws:sagemaker:us-east-1:111111111111:training-job/${input.TrainingJobName}`,
        ModelArtifacts: { S3ModelArtifacts: 's3://training-output/m.tar.gz' },
        TrainingJobStatus: seen.length === transitions.length ? 'Completed' : 'InProgress',
        SecondaryStatus: seen[seen.length - 1],
        StoppingCondition: { MaxRuntimeInSeconds: 86400 },
        CreationTime: STARTED,
        SecondaryStatusTransitions: seen.map((Status, i) => ({ Status, StartTime: STARTED + i * 60 })),
      };
    });
    // WHEN: a request rendered per execution, whose job name is a Step Functions path
    const { code, stdout } = await launch('--request', requestFile(jobRequest({ 'TrainingJobName.$': "States.Format('resnet-{}', States.UUID())" })),
      '--job-name', 'resnet-manual-1');
    // THEN
    expect(code).toBe(0);
    const created = aws.calls.find((c) => c.operation === 'CreateTrainingJob')!.input;
    expect(created.TrainingJobName).toBe('resnet-manual-1');
    expect(created.ResourceConfig).toEqual({ InstanceType: 'ml.p4d.24xlarge', InstanceCount: 2 });
    expect(stdout).toBe([
      'created arn:aws:sagemaker:us-east-1:111111111111:training-job/resnet-manual-1',
      '  Starting', '  Downloading', '  Training', '  Uploading', '  Completed',
      'completed: resnet-manual-1; see what held its GPUs back with: training-io diagnose resnet-manual-1',
      '',
    ].join('\n'));
  });

  test('a failed job exits 1 with its failure reason', async () => {
    aws.on('sagemaker', 'CreateTrainingJob', (input) => ({ TrainingJobArn: `arn:aws:sagemaker:us-east-1:111111111111:training-job/${input.TrainingJobName}` }));
    aws.on('sagemaker', 'DescribeTrainingJob', (input) => ({
      TrainingJobName: input.TrainingJobName, TrainingJobArn: `arn:aws:sagemaker:us-east-1:111111111111:training-job/${input.TrainingJobName}`,
      ModelArtifacts: { S3ModelArtifacts: 's3://training-output/m.tar.gz' }, TrainingJobStatus: 'Failed', SecondaryStatus: 'Failed',
      FailureReason: 'ClientError: No space left on device', StoppingCondition: {}, CreationTime: STARTED,
    }));
    const { code, stderr } = await launch('--request', requestFile(jobRequest({ TrainingJobName: 'resnet-2' })));
    expect(code).toBe(1);
    expect(stderr).toContain('training job resnet-2 failed: ClientError: No space left on device');
  });

  test('a request with a deploy-time value is refused, naming where', async () => {
    const request = jobRequest({ RoleArn: { 'Fn::GetAtt': ['TrainExecutionRole', 'Arn'] } });
    const { code, stderr } = await launch('--request', requestFile(request));
    expect(code).toBe(2);
    expect(stderr).toMatch(/RoleArn is a CloudFormation value, known only once deployed/);
  });
});

describe('training-io launch: arguments', () => {
  test.each<[string[], RegExp]>([
    [[], /give --state-machine ARN \(the pipeline\) or --request FILE\.json \(a single job\), one of the two/],
    [['--state-machine', STATE_MACHINE, '--request', 'r.json'], /one of the two/],
    [['--state-machine', 'TrainingPipeline'], /--state-machine must be a state machine ARN/],
    [['--state-machine', STATE_MACHINE, '--name', 'run_7'], /--name must be letters, digits and hyphens .* got 'run_7'/],
    [['--state-machine', STATE_MACHINE, '--name', 'x'.repeat(37)], /at most 36 characters/],
    [['--state-machine', STATE_MACHINE, '--hyperparameter', 'epochs'], /--hyperparameter must be KEY=VALUE, got 'epochs'/],
    [['--state-machine', STATE_MACHINE, '--job-name', 'j'], /--job-name is for a single job/],
    [['--request', 'r.json', '--force'], /--force is for the pipeline/],
    [['--request', '/nonexistent/r.json'], /--request '\/nonexistent\/r\.json' cannot be read as JSON/],
    // A device is never read: /dev/zero would be read until memory ran out.
    [['--request', '/dev/zero'], /--request '\/dev\/zero' cannot be read as JSON: \/dev\/zero: not a regular file; only a file is read as JSON/],
    [['--state-machine', STATE_MACHINE, '--poll', 'often'], /--poll must be a number of seconds from 1 to 3600, got 'often'/],
    // Every poll is a few API calls: --poll 0 made about 850 a second.
    [['--state-machine', STATE_MACHINE, '--poll', '0'], /--poll must be a number of seconds from 1 to 3600, got '0'/],
    [['--state-machine', STATE_MACHINE, '--poll', '0.5'], /--poll must be a number of seconds from 1 to 3600, got '0\.5'/],
    [['--state-machine', STATE_MACHINE, '--poll', '3601'], /--poll must be a number of seconds from 1 to 3600, got '3601'/],
    [['--state-machine', STATE_MACHINE, '--poll', '-3'], /--poll must be a number of seconds from 1 to 3600, got '-3'/],
  ])('launch %j exits 2 naming the problem', async (args, message) => {
    const { code, stderr } = await runCli('launch', ...args, '--region', 'us-east-1');
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
