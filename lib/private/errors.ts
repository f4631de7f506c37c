import type { Construct } from 'constructs';
import type { ErrorCode } from './error-codes';

/**
 * A synth-time error in the user's configuration.
 *
 * aws-cdk-lib's own ValidationError is internal, so we carry our own: the code is stable
 * (tests and users match on it) and the message names the prop, the value and what is allowed.
 */
export class ValidationError extends Error {
  /** Stable identifier of the rule that failed, e.g. `VolumeKeyOnNvmeInstance` (the codes and their meanings: error-codes.ts). */
  public readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, scope?: Construct) {
    super(`[${code}] ${message}${scope ? ` (at ${scope.node.path})` : ''}`);
    this.name = 'ValidationError';
    this.code = code;
  }
}
