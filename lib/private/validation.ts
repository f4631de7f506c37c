import type { Size } from 'aws-cdk-lib';
import { SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { MIB } from '../contract/units';
import type { ErrorCode } from './error-codes';
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

/** S3's longest object key, so the longest prefix. */
const MAX_KEY_BYTES = 1024;

/** A whole number from `min` to `max`; `prop` names it in the message. */
export function validateWholeNumber(scope: Construct | undefined, code: ErrorCode, prop: string, value: number | undefined, min: number, max: number): void {
  if (!isResolved(value)) return;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ValidationError(code, `${prop} must be a whole number between ${min} and ${max}, got ${value}`, scope);
  }
}

/**
 * An S3 key prefix that names a folder: empty, or ending in '/' without a leading '/' or empty
 * folders, at most 1024 characters. `why` says what depends on it, after the message.
 */
export function validateKeyPrefix(scope: Construct | undefined, code: ErrorCode, prop: string, prefix: string | undefined, why?: string): void {
  if (!isResolved(prefix) || prefix === '') return;
  if (!prefix.endsWith('/') || prefix.startsWith('/') || prefix.includes('//') || prefix.length > MAX_KEY_BYTES) {
    throw new ValidationError(code,
      `${prop} must be empty or a key prefix ending in '/' without a leading '/' or empty folders, at most ${MAX_KEY_BYTES} characters `
      + `(e.g. 'raw/train/'), got '${prefix}'${why ? `; ${why}` : ''}`, scope);
  }
}

/** A size that is a whole number of MiB from `minMiB` to `maxMiB`. */
export function validateMebibytes(scope: Construct | undefined, code: ErrorCode, prop: string, size: Size | undefined, minMiB: number, maxMiB: number): void {
  if (size === undefined || size.isUnresolved()) return;
  const mib = size.toBytes({ rounding: SizeRoundingBehavior.NONE }) / MIB;
  if (!Number.isInteger(mib) || mib < minMiB || mib > maxMiB) {
    throw new ValidationError(code, `${prop} must be a whole number of MiB between ${minMiB} MiB and ${maxMiB} MiB, got ${mib} MiB`, scope);
  }
}
