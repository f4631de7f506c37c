import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The variable that names the test run's own temporary folder, for the global teardown to remove. */
export const RUN_TEMPORARY_FOLDER_VARIABLE = 'CDK_TRAINING_IO_TEST_TMPDIR';

/**
 * Points TMPDIR (os.tmpdir() in the workers, which start after the global setup and inherit it; Python's
 * tempfile in the processes they start) at a folder of this run's own, so that what the run leaves in
 * temporary folders goes with it: every App a test makes without an `outdir` synthesizes into a
 * temporary `cdk.out*` folder that aws-cdk-lib never removes: 2.1 GB in 682 folders per full run.
 */
export function useRunTemporaryFolder(): void {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk-training-io-test-run-'));
  process.env[RUN_TEMPORARY_FOLDER_VARIABLE] = folder;
  process.env.TMPDIR = folder;
}

/** Removes the run's temporary folder, in the global teardown of both tiers. */
export function removeRunTemporaryFolder(): void {
  const folder = process.env[RUN_TEMPORARY_FOLDER_VARIABLE];
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
}
