import { App } from 'aws-cdk-lib';
import { ReferenceTrainingStack, Scenario } from '../../bin/reference-stack';
import { controlTowerFailures } from '../support/control-tower';

/**
 * What the AWS Control Tower proactive controls (the cfn-guard rules of @cdklabs/cdk-validator-cfnguard)
 * say of each reference scenario. The README's "Governed accounts" table states the same: change both.
 */
const EXPECTED_FAILURES: Record<string, string[]> = {
  [Scenario.PIPELINE]: ['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-lambda-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-4', 'ct-s3-pr-9', 'ct-s3-pr-10', 'ct-s3-pr-11'],
  [Scenario.PIPE]: ['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-4', 'ct-s3-pr-9', 'ct-s3-pr-10', 'ct-s3-pr-11'],
  [Scenario.NVME]: ['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-4', 'ct-s3-pr-9', 'ct-s3-pr-10', 'ct-s3-pr-11'],
  [Scenario.FASTFILE]: ['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-4', 'ct-s3-pr-9', 'ct-s3-pr-10', 'ct-s3-pr-11'],
  [Scenario.PACKED]: ['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-lambda-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-4', 'ct-s3-pr-9', 'ct-s3-pr-10', 'ct-s3-pr-11'],
  [Scenario.FSX]: ['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-s3-pr-2', 'ct-s3-pr-4', 'ct-s3-pr-9', 'ct-s3-pr-10', 'ct-s3-pr-11'],
};

describe('Control Tower proactive controls', () => {
  test.each(Object.entries(EXPECTED_FAILURES))('scenario %s fails exactly the controls the README names', (scenario, expected) => {
    // GIVEN
    const stack = new ReferenceTrainingStack(new App(), 'Reference', { scenario: scenario as Scenario });
    // WHEN
    const failures = controlTowerFailures(stack);
    // THEN
    expect(Object.keys(failures)).toEqual(expected);
  });
});
