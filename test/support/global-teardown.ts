import * as fs from 'node:fs';
import * as path from 'node:path';
import { S3_SKIPS_VARIABLE, summarizeSkips } from './s3-server-capabilities';
import { S3_SERVER_VARIABLE } from './s3-server-kind';
import { removeRunTemporaryFolder } from './run-temporary-folder';

/** Jest's global teardown: says how many S3 checks the run's server could not honour, and why; removes the run's temporary folder. */
export default function globalTeardown(): void {
  const file = process.env[S3_SKIPS_VARIABLE];
  if (file) {
    for (const line of summarizeSkips(file)) process.stderr.write(`S3 suites on ${process.env[S3_SERVER_VARIABLE]}: ${line}\n`);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
  removeRunTemporaryFolder();
}
