/**
 * The variable aws-cdk-lib reads at every synthesis (`core/lib/private/synthesis-validation.js`,
 * `defaultValidationEnabled`): its built-in CloudFormation validation runs unless it is `false`.
 */
export const CDK_VALIDATION_VARIABLE = 'CDK_VALIDATION';

/**
 * Turns off aws-cdk-lib's built-in CloudFormation validation for every suite, in the global setup of
 * both tiers (workers start after it and inherit the environment). The validation checks each
 * synthesized template against the resource schemas and aws-cdk-lib's default rules in a WebAssembly
 * engine started anew in every suite: about three quarters of a construct suite's CPU time (the sizing
 * suite: 17 s of CPU with it, 7 s without), at every synthesis of the same stacks. aws-cdk-lib only
 * prints what it finds, as warnings (`@aws-cdk/core:validateAgainstDefaultRules` unset), failing no
 * synthesis. `test/app/cfn-validation.test.ts` turns it back on for itself and fails on any finding,
 * over the reference app's scenarios, every example and the constructs' main configurations.
 */
export function turnOffBuiltinCfnValidation(): void {
  process.env[CDK_VALIDATION_VARIABLE] = 'false';
}
