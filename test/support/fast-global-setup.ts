import { turnOffBuiltinCfnValidation } from './cfn-validation';
import { bundleHandlersIfStale } from './global-setup';
import { useRunTemporaryFolder } from './run-temporary-folder';

/**
 * The fast tier's global setup (jest.fast.config.js): the handlers' bundles, which the constructs
 * reference, a temporary folder of the run's own (run-temporary-folder.ts), and nothing else: no fast suite reaches the S3 test server or a ts-node worker thread.
 * aws-cdk-lib's CloudFormation validation is off as in `npm test` (cfn-validation.ts says why), on in
 * `test/app/cfn-validation.test.ts` alone.
 */
export default function fastGlobalSetup(): void {
  useRunTemporaryFolder();
  bundleHandlersIfStale();
  turnOffBuiltinCfnValidation();
}
