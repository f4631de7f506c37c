import { quoted } from '../../lambda/io/printable';

/**
 * A command-line mistake: printed as one line, then where to read the command's usage (not the usage
 * itself, which would scroll the mistake off a terminal); exit code 2.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const SIZE_UNITS: Record<string, number> = {
  '': 1, 'b': 1, 'kb': 1e3, 'mb': 1e6, 'gb': 1e9, 'tb': 1e12, 'kib': 2 ** 10, 'mib': 2 ** 20, 'gib': 2 ** 30, 'tib': 2 ** 40,
};

/** `64MiB`, `1.5 GB`, `2TB`, `1048576` → bytes. */
export function parseSize(flag: string, raw: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(raw);
  const unit = match ? SIZE_UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new UsageError(`${flag} must be a size such as 64MiB, 100MB or 1048576 (bytes), got ${quoted(raw)}`);
  }
  const bytes = Math.round(Number(match[1]) * unit);
  // Beyond 2^53 bytes (8 PiB) sums and rates lose their precision, then overflow to Infinity.
  if (!Number.isSafeInteger(bytes)) throw new UsageError(`${flag} must be at most 8PiB (${Number.MAX_SAFE_INTEGER} bytes), got ${quoted(raw)}`);
  return bytes;
}

/** A whole number within bounds (no upper bound but the largest exact one by default). */
export function parseWholeNumber(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    // Without a maximum, the largest exact integer is named only to a value past it.
    const allowed = max === Number.MAX_SAFE_INTEGER && !(value > max) ? `≥ ${min}` : `between ${min} and ${max}`;
    throw new UsageError(`${flag} must be a whole number ${allowed}, got ${quoted(raw)}`);
  }
  return value;
}

/** A number (fractions allowed) from `min` to `max`, in `unit` (named in the error). */
export function parseNumberInRange(flag: string, raw: string, min: number, max: number, unit: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`${flag} must be a number of ${unit} from ${min} to ${max}, got ${quoted(raw)}`);
  }
  return value;
}

/** One of a few words. */
export function parseChoice<T extends string>(flag: string, raw: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(raw)) {
    throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got ${quoted(raw)}`);
  }
  return raw as T;
}

/** A positive number (fractions allowed), at most `max` where one is given. */
export function parsePositiveNumber(flag: string, raw: string, max = Number.MAX_VALUE): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    const allowed = max === Number.MAX_VALUE ? 'greater than 0' : `greater than 0 and at most ${max}`;
    throw new UsageError(`${flag} must be a number ${allowed}, got ${quoted(raw)}`);
  }
  return value;
}
