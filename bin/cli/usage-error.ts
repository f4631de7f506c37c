import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';

/** A command-line mistake: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string, public readonly usage?: string) {
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
    throw new UsageError(`${flag} must be a size such as 64MiB, 100MB or 1048576 (bytes), got '${raw}'`);
  }
  return Math.round(Number(match[1]) * unit);
}

/** A whole number within bounds. */
export function parseWholeNumber(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} must be a whole number between ${min} and ${max}, got '${raw}'`);
  }
  return value;
}

/** One of a few words. */
export function parseChoice<T extends string>(flag: string, raw: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(raw)) {
    throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got '${raw}'`);
  }
  return raw as T;
}

/** A positive number (fractions allowed). */
export function parsePositiveNumber(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new UsageError(`${flag} must be a number greater than 0, got '${raw}'`);
  }
  return value;
}

/** `util.parseArgs`, with its errors (unknown option, missing value) turned into a UsageError carrying the command's usage. */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message, usage);
    throw error;
  }
}
