import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LoggedStateMachine } from '../../lib';

function stackWith(props: Partial<ConstructorParameters<typeof LoggedStateMachine>[2]> = {}): { stack: Stack; machine: LoggedStateMachine } {
  const stack = new Stack(new App(), 'Stack');
  const machine = new LoggedStateMachine(stack, 'Machine', {
    definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'Step')),
    ...props,
  });
  return { stack, machine };
}

/** The reasons the machine's findings are acknowledged with, by finding id (as aws-cdk-lib qualifies it). */
function acknowledgedReasons(machine: LoggedStateMachine): Record<string, string> {
  return Object.assign({}, ...machine.node.metadata
    .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
    .map((entry) => entry.data as Record<string, string>));
}

/** The reason of the one acknowledged IAM5 wildcard-resource finding. */
function wildcardReason(machine: LoggedStateMachine): string {
  const reasons = Object.entries(acknowledgedReasons(machine));
  expect(reasons.map(([id]) => id)).toEqual([expect.stringContaining('AwsSolutions-IAM5[Resource::*]')]);
  return reasons[0][1];
}

describe('LoggedStateMachine', () => {
  test('traces with X-Ray and logs every event, without execution data, to <id>Logs kept a year', () => {
    // WHEN
    const { stack } = stackWith();
    // THEN
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ALL',
        IncludeExecutionData: false,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^MachineLogs'), 'Arn'] } } }],
      },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
  });

  test('keeps the events as long as asked, encrypted with the key, which CloudWatch Logs may use', () => {
    // GIVEN
    const stack = new Stack(new App(), 'Keyed');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    // WHEN
    const machine = new LoggedStateMachine(stack, 'Machine', {
      definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'Step')),
      logRetention: logs.RetentionDays.ONE_MONTH,
      encryptionKey: key,
      stateMachineName: 'training',
    });
    // THEN
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30, KmsKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Key'), 'Arn'] } });
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', { StateMachineName: 'training' });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } })]) },
    });
    expect(machine.logGroup.node.path).toBe('Keyed/MachineLogs');
  });

  test('acknowledges the X-Ray finding, naming the other unscoped actions given', () => {
    // WHEN
    const plain = stackWith().machine;
    const withFsx = stackWith({ otherUnscopedActions: ['fsx:DescribeDataRepositoryTasks'] }).machine;
    // THEN
    expect(wildcardReason(plain)).toBe('X-Ray tracing and CloudWatch Logs delivery APIs (xray:PutTraceSegments, logs:CreateLogDelivery, ...) '
      + 'have no resource-level permissions');
    expect(wildcardReason(withFsx)).toBe(
      'X-Ray tracing and CloudWatch Logs delivery APIs (xray:PutTraceSegments, logs:CreateLogDelivery, ...) '
        + 'and fsx:DescribeDataRepositoryTasks have no resource-level permissions');
  });

  test('passes cdk-nag AwsSolutions with no finding left', () => {
    // GIVEN
    const { stack } = stackWith();
    // WHEN
    const report = new AwsSolutionsChecks(stack).validateScope(stack);
    // THEN
    expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});
