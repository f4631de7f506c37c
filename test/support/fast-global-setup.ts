import { bundleHandlersIfStale } from './global-setup';

/**
 * The fast tier's global setup (jest.fast.config.js): the handlers' bundles, which the constructs
 * reference, and nothing else: no fast suite reaches the S3 test server or a ts-node worker thread.
 * It also turns off aws-cdk-lib's built-in CloudFormation validation, which checks each synthesized
 * template against the resource schemas in a WebAssembly engine started anew in every suite: about
 * three quarters of a construct suite's CPU time (the sizing suite's 42 syntheses: 26 s of CPU with
 * it, 7.5 s without), for a check of aws-cdk-lib's rather than of what a test asserts. `npm test`
 * keeps it on every synthesis, so a template it rejects still fails there.
 */
export default function fastGlobalSetup(): void {
  bundleHandlersIfStale();
  // Workers start after this setup and inherit the environment.
  process.env.CDK_VALIDATION = 'false';
}
