import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { LoggedStateMachine } from '../../lib';

function stackWith(props: Partial<ConstructorParameters<typeof LoggedStateMachine>[2]> = {}): { stack: Stack; machine: LoggedStateMachine } {
  const stack = new Stack(new App(), 'Stack');
  const machine = new LoggedStateMachine(stack, 'Machine', {
    definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'Step')),
    ...props,
  });
  return { stack, machine };
}

/** The reasons a construct's own findings are acknowledged with, by finding id (as aws-cdk-lib qualifies it). */
function acknowledgedReasons(scope: IConstruct): Record<string, string> {
  return Object.assign({}, ...scope.node.metadata
    .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
    .map((entry) => entry.data as Record<string, string>));
}

/** The reason of the one acknowledged IAM5 wildcard-resource finding: on the unscoped policy, none on the machine or its role. */
function wildcardReason(machine: LoggedStateMachine): string {
  expect(acknowledgedReasons(machine)).toEqual({});
  expect(acknowledgedReasons(machine.role)).toEqual({});
  const reasons = Object.entries(acknowledgedReasons(machine.node.findChild('UnscopedActionsPolicy')));
  expect(reasons.map(([id]) => id)).toEqual([expect.stringContaining('AwsSolutions-IAM5[Resource::*]')]);
  return reasons[0][1];
}

/** cdk-nag AwsSolutions' findings over a stack, as `<rule> at <construct path>`. */
function nagFindings(stack: Stack): string[] {
  const report = new AwsSolutionsChecks(stack).validateScope(stack);
  return report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
}

/** A step calling FSx's DescribeDataRepositoryTasks, which has no resource-level permissions: its statement is on `*`. */
function describeTasksStep(stack: Stack): sfn.IChainable {
  return new tasks.CallAwsService(stack, 'DescribeTasks', {
    service: 'fsx', action: 'describeDataRepositoryTasks', iamAction: 'fsx:DescribeDataRepositoryTasks', iamResources: ['*'],
  });
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

  test('keeps the X-Ray and log delivery statements in a policy of their own, which the machine waits for', () => {
    // WHEN
    const { stack } = stackWith();
    // THEN
    const template = Template.fromStack(stack);
    const policies = template.findResources('AWS::IAM::Policy');
    expect(Object.keys(policies)).toEqual([expect.stringMatching(/^MachineUnscopedActionsPolicy/)]);
    const [[policyId, policy]] = Object.entries(policies);
    expect(policy.Properties.PolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Resource: '*', Action: expect.arrayContaining(['logs:CreateLogDelivery', 'logs:DescribeLogGroups']) },
      { Effect: 'Allow', Resource: '*', Action: expect.arrayContaining(['xray:PutTraceSegments', 'xray:GetSamplingTargets']) },
    ]);
    expect(policy.Properties.Roles).toEqual([{ Ref: expect.stringMatching(/^MachineRole/) }]);
    expect(Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0].DependsOn).toEqual(expect.arrayContaining([policyId]));
  });

  test.each([
    ['s3:DeleteObject', (machine: LoggedStateMachine) => machine.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: ['*'] }))],
    ['iam:PassRole', (machine: LoggedStateMachine) => machine.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['iam:PassRole'], resources: ['*'] }))],
    ['xray:PutTraceSegments beside s3:GetObject', (machine: LoggedStateMachine) => machine.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['xray:PutTraceSegments', 's3:GetObject'], resources: ['*'] }))],
  ])('reports a wildcard grant of %s on its role to cdk-nag', (_action, grant) => {
    // GIVEN
    const { stack, machine } = stackWith();
    // WHEN
    grant(machine);
    // THEN
    expect(nagFindings(stack)).toEqual(['AwsSolutions-IAM5[Resource::*] at Stack/Machine/Role/DefaultPolicy/Resource']);
  });

  test('acknowledges a step\'s unscoped action only when named in otherUnscopedActions', () => {
    // GIVEN
    const named = new Stack(new App(), 'Named');
    const unnamed = new Stack(new App(), 'Unnamed');
    // WHEN
    new LoggedStateMachine(named, 'Machine', {
      definitionBody: sfn.DefinitionBody.fromChainable(describeTasksStep(named)), otherUnscopedActions: ['fsx:DescribeDataRepositoryTasks'],
    });
    new LoggedStateMachine(unnamed, 'Machine', { definitionBody: sfn.DefinitionBody.fromChainable(describeTasksStep(unnamed)) });
    // THEN
    expect(nagFindings(named)).toEqual([]);
    expect(nagFindings(unnamed)).toEqual(['AwsSolutions-IAM5[Resource::*] at Unnamed/Machine/Role/DefaultPolicy/Resource']);
  });

  test('builds with a role it may not change: the unscoped policy is not synthesized', () => {
    // GIVEN
    const stack = new Stack(new App(), 'Imported');
    const role = iam.Role.fromRoleArn(stack, 'Role', 'arn:aws:iam::111111111111:role/training', { mutable: false });
    // WHEN
    new LoggedStateMachine(stack, 'Machine', { definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'Step')), role });
    // THEN
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::IAM::Policy', 0);
    expect(JSON.stringify(template.toJSON())).not.toContain('UnscopedActionsPolicy');
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', { RoleArn: 'arn:aws:iam::111111111111:role/training' });
  });
});
