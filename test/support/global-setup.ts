import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { turnOffBuiltinCfnValidation } from './cfn-validation';
import { useRunTemporaryFolder } from './run-temporary-folder';
import { S3_SKIPS_VARIABLE } from './s3-server-capabilities';
import { chooseS3Server, S3_SERVER_VARIABLE } from './s3-server-kind';

/**
 * Jest's global setup: points TMPDIR at the run's own temporary folder (run-temporary-folder.ts), bundles the handlers when stale (constructs reference lambda/dist/), turns off
 * aws-cdk-lib's CloudFormation validation but in its own suite (cfn-validation.ts), has ts-node
 * transpile with esbuild, and picks the S3 test server once for every worker (installing
 * python3-swift where it can), saying which.
 */
export default async function globalSetup(): Promise<void> {
  useRunTemporaryFolder();
  bundleHandlersIfStale();
  turnOffBuiltinCfnValidation();

  // The worker threads of the CLI's pack load the engine's TypeScript with ts-node: through esbuild (test/support/ts-node-esbuild.js).
  process.env.TS_NODE_PROJECT ??= path.join(__dirname, 'tsconfig.ts-node.json');

  const choice = await chooseS3Server();
  // Workers start after this setup and inherit the environment: each knows the server when it declares its tests.
  process.env[S3_SERVER_VARIABLE] = choice.kind;
  process.env[S3_SKIPS_VARIABLE] = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cdk-training-io-skips-')), 'skips.jsonl');
  const fallback = choice.why === undefined ? ''
    : `, as ${choice.why}: the checks it cannot honour are skipped, each saying why (root on Debian/Ubuntu installs python3-swift)`;
  process.stderr.write(`S3 suites run against: ${choice.name}${fallback}\n`);
}

/** Bundles the handlers into lambda/dist/ when their sources changed since the last bundle: the constructs reference the bundles. */
export function bundleHandlersIfStale(): void {
  // A process of its own: the bundler is an ES module, which this CommonJS setup cannot require.
  execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'bundle-lambdas.mjs'), '--if-stale'], { stdio: 'inherit' });
}
