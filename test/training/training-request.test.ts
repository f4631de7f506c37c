import { Stack, Token } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { TrainingJobProps} from '../../lib';
import { TrainingContainer, TrainingInstance, TrainingJob, TrainingLauncher } from '../../lib';
import { ApiModel } from '../support/api-model';
import { testContainer, trainingTestStack } from '../support/stacks';

const PLAN = 'arn:aws:sagemaker:us-east-1:111111111111:training-plan/p5-reserved';

function newJob(options: Partial<TrainingJobProps> = {}): TrainingJob {
  const { stack } = trainingTestStack();
  return new TrainingJob(stack, 'Job', { instance: TrainingInstance.P4D_24XLARGE, instanceCount: 2, container: testContainer(), ...options });
}

function requestOf(job: TrainingJob): any {
  return Stack.of(job).resolve(job.renderRequest());
}

function apiViolations(job: TrainingJob) {
  return ApiModel.load('sagemaker').validate('CreateTrainingJobRequest', requestOf(job));
}

describe('TrainingJob: an open request', () => {
  test('addRequestOverride adds fields the construct does not model, which the SageMaker model accepts', () => {
    // GIVEN
    const job = newJob();

    // WHEN
    job.addRequestOverride('ProfilerConfig.S3OutputPath', 's3://profiles/job/');
    job.addRequestOverride('ProfilerConfig.ProfilingIntervalInMilliseconds', 500);
    job.addRequestOverride('TensorBoardOutputConfig', { S3OutputPath: 's3://tensorboard/job/' });
    job.addRequestOverride('RemoteDebugConfig.EnableRemoteDebug', true);

    // THEN
    const request = requestOf(job);
    expect(request.ProfilerConfig).toEqual({ S3OutputPath: 's3://profiles/job/', ProfilingIntervalInMilliseconds: 500 });
    expect(request.TensorBoardOutputConfig).toEqual({ S3OutputPath: 's3://tensorboard/job/' });
    expect(request.RemoteDebugConfig).toEqual({ EnableRemoteDebug: true });
    expect(apiViolations(job)).toEqual([]);
  });

  test('an override replaces what the construct renders, inside objects and lists, and leaves the rest', () => {
    // GIVEN
    const job = newJob();

    // WHEN
    job.addRequestOverride('ResourceConfig.InstanceCount', 4);
    job.addRequestOverride('StoppingCondition.MaxRuntimeInSeconds', 7200);
    job.addRequestOverride('AlgorithmSpecification.MetricDefinitions', [{ Name: 'loss', Regex: 'loss=([0-9.]+)' }]);
    job.addRequestOverride('AlgorithmSpecification.MetricDefinitions.0.Name', 'train:loss');

    // THEN
    const request = requestOf(job);
    expect(request.ResourceConfig).toMatchObject({ InstanceType: 'ml.p4d.24xlarge', InstanceCount: 4 });
    expect(request.StoppingCondition).toEqual({ MaxRuntimeInSeconds: 7200 });
    expect(request.AlgorithmSpecification.MetricDefinitions).toEqual([{ Name: 'train:loss', Regex: 'loss=([0-9.]+)' }]);
    expect(apiViolations(job)).toEqual([]);
  });

  test('addRequestDeletionOverride removes a field', () => {
    const job = newJob();
    job.addRequestDeletionOverride('EnableInterContainerTrafficEncryption');
    job.addRequestDeletionOverride('Tags.Missing');
    const request = requestOf(job);
    expect(request).not.toHaveProperty('EnableInterContainerTrafficEncryption');
    expect(apiViolations(job)).toEqual([]);
  });

  test('a JSONPath value is read from the state at run time', () => {
    const job = newJob();
    job.addRequestOverride('ResourceConfig.TrainingPlanArn', sfn.JsonPath.stringAt('$.plan'));
    expect(requestOf(job).ResourceConfig['TrainingPlanArn.$']).toBe('$.plan');
  });

  test('the model check catches an override the API would refuse', () => {
    // GIVEN an override with a field CreateTrainingJob does not have
    const job = newJob();
    // WHEN
    job.addRequestOverride('ProfilerConfig.NotAField', 1);
    // THEN
    expect(apiViolations(job).map((v) => v.path)).toEqual(['ProfilerConfig.NotAField']);
  });

  test.each([
    ['', 'empty'],
    ['ProfilerConfig..S3OutputPath', 'an empty segment'],
    ['profiler-config', 'a hyphen'],
    ['0.Name', 'an index first'],
  ])('refuses the path %j (%s)', (path) => {
    const job = newJob();
    expect(() => job.addRequestOverride(path, 'x')).toThrow(/InvalidRequestPath/);
  });

  test('refuses an undefined value, pointing at the deletion override', () => {
    expect(() => newJob().addRequestOverride('ProfilerConfig', undefined)).toThrow(/UndefinedRequestOverride.*addRequestDeletionOverride/);
  });
});

describe('TrainingJob: reserved capacity and the torchrun launcher', () => {
  test('trainingPlanArn runs the job on the plan\'s capacity', () => {
    const job = newJob({ trainingPlanArn: PLAN });
    expect(requestOf(job).ResourceConfig.TrainingPlanArn).toBe(PLAN);
    expect(apiViolations(job)).toEqual([]);
  });

  test.each([
    'arn:aws:sagemaker:us-east-1:111111111111:hub/x',
    'training-plan/p5',
    'arn:aws:sagemaker:us-east-1:1111:training-plan/p5',
  ])('refuses trainingPlanArn %j', (arn) => {
    expect(() => newJob({ trainingPlanArn: arn })).toThrow(/InvalidTrainingPlanArn/);
  });

  test('skips the trainingPlanArn check for a token', () => {
    const arn = Token.asString({ Ref: 'Plan' });
    expect(requestOf(newJob({ trainingPlanArn: arn })).ResourceConfig.TrainingPlanArn).toEqual({ Ref: 'Plan' });
  });

  test('TORCHRUN sets the hyperparameters the SageMaker SDK sets for torch_distributed', () => {
    // GIVEN the PyTorch container with the reference code
    const job = newJob({ container: TrainingContainer.pytorch(), launcher: TrainingLauncher.TORCHRUN });
    // THEN
    expect(requestOf(job).HyperParameters).toMatchObject({
      sagemaker_torch_distributed_enabled: 'true',
      sagemaker_instance_type: 'ml.p4d.24xlarge',
      sagemaker_program: 'train.py',
    });
    expect(apiViolations(job)).toEqual([]);
  });

  test('the default launcher sets no distribution hyperparameter', () => {
    const job = newJob({ container: TrainingContainer.pytorch() });
    expect(requestOf(job).HyperParameters).not.toHaveProperty('sagemaker_torch_distributed_enabled');
  });

  test('TORCHRUN without code (the image runs itself) is refused', () => {
    expect(() => newJob({ launcher: TrainingLauncher.TORCHRUN })).toThrow(/LauncherWithoutCode/);
  });
});
