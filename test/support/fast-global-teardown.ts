import { removeRunTemporaryFolder } from './run-temporary-folder';

/** The fast tier's global teardown (jest.fast.config.js): the run's temporary folder removed. */
export default function fastGlobalTeardown(): void {
  removeRunTemporaryFolder();
}
