import { Token } from 'aws-cdk-lib';

/**
 * True when a value is known at synth time and can be checked; rules skip `undefined`
 * and unresolved tokens (the value is only known at deploy time).
 */
export function isResolved<T>(value: T | undefined): value is T {
  return value !== undefined && !Token.isUnresolved(value);
}
