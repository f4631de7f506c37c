import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ReferenceTrainingStack, Scenario } from '../../bin/reference-stack';
import { CONTROL_RULES_DIRECTORY, controlTowerFailures, guardFailures, rulesThatCanFail } from '../support/control-tower';

/**
 * What the AWS Control Tower proactive controls (the cfn-guard rules of @cdklabs/cdk-validator-cfnguard)
 * say of each reference scenario. The table of docs/governed-accounts.md states the same: change both.
 */
/** Need a choice from the user: a KMS key, a server access logs bucket, object lock (see docs/governed-accounts.md). */
const USER_CHOICES = ['ct-cloudwatch-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-9', 'ct-s3-pr-10'];
/** The Lambdas of the packing scenarios run outside any VPC unless given one. */
const WITH_LAMBDAS = ['ct-cloudwatch-pr-3', 'ct-lambda-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-9', 'ct-s3-pr-10'];

/**
 * The controls each default scenario fails: only those that need a user's choice. Before the
 * options with safe defaults they also failed ct-cloudwatch-pr-2, ct-s3-pr-4 and ct-s3-pr-11.
 */
const EXPECTED_FAILURES: Record<string, string[]> = {
  [Scenario.PIPELINE]: WITH_LAMBDAS,
  [Scenario.PIPE]: USER_CHOICES,
  [Scenario.NVME]: USER_CHOICES,
  [Scenario.FASTFILE]: USER_CHOICES,
  [Scenario.PACKED]: WITH_LAMBDAS,
  [Scenario.FSX]: USER_CHOICES,
  // Every choice made: a customer key, Lambdas in the VPC, object lock, server access logs.
  [Scenario.REGULATED]: [],
};

describe('Control Tower proactive controls', () => {
  test.each(Object.entries(EXPECTED_FAILURES))('scenario %s fails exactly the controls docs/governed-accounts.md names', (scenario, expected) => {
    // GIVEN
    const stack = new ReferenceTrainingStack(new App(), 'Reference', { scenario: scenario as Scenario });
    // WHEN
    const failures = controlTowerFailures(stack);
    // THEN
    expect(Object.keys(failures)).toEqual(expected);
  });

  test('the regulated scenario writes its server access logs to the bucket it is given, outside the stack', () => {
    // GIVEN
    const stack = new ReferenceTrainingStack(new App(), 'Reference', { scenario: Scenario.REGULATED, accessLogsBucketName: 'central-access-logs' });
    // WHEN
    const template = Template.fromStack(stack);
    // THEN
    template.resourceCountIs('AWS::S3::Bucket', 2);
    template.allResourcesProperties('AWS::S3::Bucket', {
      LoggingConfiguration: { DestinationBucketName: 'central-access-logs', LogFilePrefix: Match.anyValue() },
      ObjectLockEnabled: true,
    });
    template.allResourcesProperties('AWS::Lambda::Function', { VpcConfig: Match.objectLike({ SubnetIds: Match.anyValue() }) });
    expect(controlTowerFailures(stack)).toEqual({});
  });

  test('a rule passes a template with no resource of the types it names: the checker leaves it out of a run, changing nothing', () => {
    // GIVEN a template of one resource, of a type no rule names
    const stack = new Stack(new App(), 'Bare');
    new CfnResource(stack, 'Handle', { type: 'AWS::CloudFormation::WaitConditionHandle' });
    const template = Template.fromStack(stack).toJSON();
    // WHEN / THEN: every rule passes it, and none can fail it
    expect(guardFailures(stack, template, [CONTROL_RULES_DIRECTORY])).toEqual({});
    expect(rulesThatCanFail(template)).toEqual([]);
  });

  test('the checker finds a control the stack fails: a Lambda outside any VPC', () => {
    // GIVEN a regulated stack with one Lambda of the user's outside the VPC
    const stack = new ReferenceTrainingStack(new App(), 'Reference', { scenario: Scenario.REGULATED });
    new lambda.Function(stack, 'Outside', {
      runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => {}'),
    });
    // WHEN
    const failures = controlTowerFailures(stack);
    // THEN
    expect(failures['ct-lambda-pr-3']).toEqual([stack.getLogicalId(stack.node.findChild('Outside').node.defaultChild as lambda.CfnFunction)]);
  });
});
