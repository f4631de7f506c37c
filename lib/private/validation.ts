import { Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ValidationError } from './errors';

/**
 * True when a value is known at synth time and can be checked; rules skip `undefined`
 * and unresolved tokens (the value is only known at deploy time).
 */
export function isResolved<T>(value: T | undefined): value is T {
  return value !== undefined && !Token.isUnresolved(value);
}

/** Plans are made at synth time: a value known only at deploy time cannot be planned for. */
export function requireKnown(name: string, unresolved: boolean, scope?: Construct): void {
  if (!unresolved) return;
  throw new ValidationError('UnresolvedPlanInput',
    `${name} must be known at synth time to plan the data path, got a deploy-time value; give a literal value`, scope);
}
