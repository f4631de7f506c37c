import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { parseDiagnoserEvent } from '../../lambda/job-diagnoser/diagnoser-settings';
import { TrainingCode, TrainingContainer, TrainingInstance, TrainingJob, TrainingJobDiagnosis } from '../../lib';
import { ApiModel } from '../support/api-model';
import { testApp, testContainer, trainingTestStack } from '../support/stacks';

/** A job-state-change event as SageMaker sends it to EventBridge (the fields the rule and the target read). */
function jobStateChange(trainingJobName: string, status: string): Record<string, unknown> {
  return {
    'version': '0',
    'id': '844e2571-85d4-695f-b930-0153b71dcb42',
    'detail-type': 'SageMaker Training Job State Change',
    'source': 'aws.sagemaker',
    'account': '111111111111',
    'time': '2026-11-24T10:00:00Z',
    'region': 'us-east-1',
    'resources': [`arn:aws:sagemaker:us-east-1:111111111111:training-job/${trainingJobName}`],
    'detail': { TrainingJobName: trainingJobName, TrainingJobStatus: status, SecondaryStatus: status, FailureReason: 'AlgorithmError' },
  };
}

/**
 * Whether an event matches an EventBridge pattern, for the operators the construct uses: lists of
 * exact values and `{prefix}` (the matching rules of the EventBridge user guide, "Event patterns").
 */
function matches(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([field, expected]) => {
    const value = event[field];
    if (Array.isArray(expected)) {
      return expected.some((item) => (typeof item === 'object' && item !== null && 'prefix' in item
        ? typeof value === 'string' && value.startsWith((item as { prefix: string }).prefix)
        : item === value));
    }
    return typeof value === 'object' && value !== null && matches(expected as Record<string, unknown>, value as Record<string, unknown>);
  });
}

/** What the target sends the Lambda: the rule's InputTransformer applied to the event (JSON values substituted). */
function transformedInput(transformer: { InputPathsMap: Record<string, string>; InputTemplate: string }, event: any): unknown {
  let text = transformer.InputTemplate;
  for (const [name, path] of Object.entries(transformer.InputPathsMap)) {
    const value = path.replace(/^\$\./, '').split('.').reduce((node, key) => node?.[key], event);
    text = text.split(`<${name}>`).join(JSON.stringify(value));
  }
  return JSON.parse(text);
}

function newJob(stack: Stack, id = 'Train'): TrainingJob {
  return new TrainingJob(stack, id, { instance: TrainingInstance.G5_12XLARGE, container: testContainer(), jobNamePrefix: 'resnet' });
}

describe('TrainingJobDiagnosis', () => {
  test('runs the diagnoser on every end of the job\'s runs (completed, failed, stopped), and on nothing else', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const diagnosis = new TrainingJobDiagnosis(stack, 'Diagnosis', { job: newJob(stack) });

    // WHEN
    const rule = Template.fromStack(stack).findResources('AWS::Events::Rule');

    // THEN
    const [{ Properties: properties }] = Object.values(rule) as any[];
    const pattern = properties.EventPattern;
    expect(pattern).toEqual({
      'source': ['aws.sagemaker'],
      'detail-type': ['SageMaker Training Job State Change'],
      'detail': { TrainingJobName: [{ prefix: 'resnet-' }], TrainingJobStatus: ['Completed', 'Failed', 'Stopped'] },
    });
    for (const status of ['Completed', 'Failed', 'Stopped']) expect(matches(pattern, jobStateChange('resnet-a1b2', status))).toBe(true);
    expect(matches(pattern, jobStateChange('resnet-a1b2', 'InProgress'))).toBe(false);
    expect(matches(pattern, jobStateChange('other-a1b2', 'Failed'))).toBe(false);
    expect(properties.Targets).toHaveLength(1);
    expect(properties.Targets[0].Arn).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(diagnosis.diagnoserFunction.node.defaultChild as any), 'Arn'] });
  });

  test('sends the diagnoser the event its handler reads: the job\'s name', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    new TrainingJobDiagnosis(stack, 'Diagnosis', { job: newJob(stack) });
    const [{ Properties: properties }] = Object.values(Template.fromStack(stack).findResources('AWS::Events::Rule')) as any[];

    // WHEN
    const input = transformedInput(properties.Targets[0].InputTransformer, jobStateChange('resnet-a1b2', 'Failed'));

    // THEN
    expect(parseDiagnoserEvent(input)).toEqual({ trainingJobName: 'resnet-a1b2' });
    expect(ApiModel.load('events').validate('Target', { Id: 'Target0', Arn: 'arn:aws:lambda:us-east-1:111111111111:function:f', ...properties.Targets[0], })).toEqual([]);
  });

  test('reads the loader metrics the reference code declares, and may read only its own job\'s runs and write only their reports', () => {
    // GIVEN
    const { stack } = trainingTestStack();
    const job = new TrainingJob(stack, 'Train', {
      instance: TrainingInstance.G5_12XLARGE, container: TrainingContainer.pytorch(), code: TrainingCode.reference(), jobNamePrefix: 'resnet',
    });

    // WHEN
    const diagnosis = new TrainingJobDiagnosis(stack, 'Diagnosis', { job });

    // THEN
    const template = Template.fromStack(stack);
    const fn = template.toJSON().Resources[stack.getLogicalId(diagnosis.diagnoserFunction.node.defaultChild as any)];
    expect(fn.Properties.Environment.Variables).toMatchObject({
      GPUS_PER_INSTANCE: '4', VCPUS_PER_INSTANCE: '48',
      LOADER_SAMPLES_METRIC: 'train:samples_per_second', LOADER_DATA_WAIT_METRIC: 'train:data_wait_fraction', EVENT_BUS_NAME: 'default',
    });
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy: any) => policy.Properties.Roles.some((role: any) => /DiagnosisDiagnoser/.test(role.Ref)))
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement);
    const describe = statements.find((s: any) => s.Action === 'sagemaker:DescribeTrainingJob');
    expect(JSON.stringify(describe.Resource)).toContain(':training-job/resnet-*');
    const puts = statements.find((s: any) => [s.Action].flat().includes('s3:PutObject'));
    expect(JSON.stringify(puts.Resource)).toMatch(/resnet-\*\/diagnosis\/\*/);
  });

  test('passes cdk-nag AwsSolutions with every finding acknowledged', () => {
    // GIVEN
    const app = testApp();
    const stack = new Stack(app, 'Stack', { env: { account: '111111111111', region: 'us-east-1' } });
    new TrainingJobDiagnosis(stack, 'Diagnosis', { job: newJob(stack) });

    // WHEN
    const report = new AwsSolutionsChecks(stack).validateScope(stack.node.root);

    // THEN
    expect(report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`))).toEqual([]);
  });
});
