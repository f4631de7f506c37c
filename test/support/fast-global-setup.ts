import { bundleHandlersIfStale } from './global-setup';

/**
 * The fast tier's global setup (jest.fast.config.js): the handlers' bundles, which the constructs
 * reference, and nothing else: no fast suite reaches the S3 test server or a ts-node worker thread.
 */
export default function fastGlobalSetup(): void {
  bundleHandlersIfStale();
}
