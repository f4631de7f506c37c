import type { ImagePreprocessing } from '../packing/preprocess/image-preprocessing';
import type { RecordContent } from '../../lib/contract/record-vocabulary';
import { isOneOf, RECORD_CONTENTS } from '../../lib/contract/record-vocabulary';
import type { PackingSettings } from '../../lib/contract/packing-settings';
import { fromEnvironment, PackingSettingsError } from '../../lib/contract/packing-settings';
import type { FilePatterns } from '../../lib/contract/file-patterns';
import { filePatternsProblems } from '../../lib/contract/file-patterns';
import { PACKING_ENV } from '../../lib/contract/handler-environment';
import { IMAGE_PREPROCESSING_FIELDS, IMAGE_PREPROCESSING_LIMITS } from '../../lib/contract/image-preprocessing-limits';
import { HandlerInputError } from './handler-input';

/** The environment variables the construct sets on the handlers: one definition, in the contract. */
export const ENV = PACKING_ENV;

/** A bucket and a key prefix (empty, or ending in `/`). */
export interface BucketLocation {
  readonly bucket: string;
  readonly prefix: string;
}

/** What the planner plans with: the codec's packing settings it needs, and the preprocessing. */
export interface PlanSettings extends Pick<PackingSettings, 'format' | 'seed' | 'labels' | 'targetShardBytes' | 'shardCount' | 'consumers' | 'parts'> {
  /** Absent: the records carry the files' bytes. */
  readonly preprocessing?: ImagePreprocessing;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** The source (`SOURCE_*`) or destination (`DESTINATION_*`) bucket and prefix. */
export function readLocation(env: Environment, which: 'source' | 'destination'): BucketLocation {
  const bucketName = which === 'source' ? ENV.sourceBucket : ENV.destinationBucket;
  const prefixName = which === 'source' ? ENV.sourcePrefix : ENV.destinationPrefix;
  const bucket = required(env, bucketName);
  const prefix = env[prefixName] ?? '';
  if (prefix !== '' && (!prefix.endsWith('/') || prefix.startsWith('/'))) {
    throw new HandlerInputError(`environment variable ${prefixName} must be empty or a key prefix ending in '/' (not starting with '/'), got '${prefix}'`);
  }
  return { bucket, prefix };
}

/**
 * The packing run's settings in the environment, checked and with every default applied: the
 * contract's one codec (lib/contract/packing-settings.ts `fromEnvironment`), which the construct renders with.
 */
export function readPackingSettings(env: Environment): PackingSettings {
  try {
    return fromEnvironment(env);
  } catch (error) {
    if (error instanceof PackingSettingsError) throw new HandlerInputError(error.message);
    throw error;
  }
}

/**
 * The S3 Inventory report to list the source from (`INVENTORY_BUCKET`, `INVENTORY_KEY`: a
 * manifest.json key or the report's folder), or undefined to list with ListObjectsV2.
 */
export function readInventory(env: Environment): BucketLocation | undefined {
  const bucket = env[ENV.inventoryBucket];
  if (bucket === undefined || bucket === '') return undefined;
  const key = env[ENV.inventoryKey] ?? '';
  if (key.startsWith('/') || !(key === '' || key.endsWith('/') || key.endsWith('manifest.json'))) {
    throw new HandlerInputError(`environment variable ${ENV.inventoryKey} must be an inventory report folder ending in '/' `
      + `or the key of its manifest.json, got '${key}'`);
  }
  return { bucket, prefix: key };
}

/** The planner's settings. */
export function readPlanSettings(env: Environment): PlanSettings {
  const { format, seed, labels, targetShardBytes, shardCount, consumers, parts } = readPackingSettings(env);
  return {
    format, seed, labels,
    ...optional('targetShardBytes', targetShardBytes),
    ...optional('shardCount', shardCount),
    consumers,
    ...optional('parts', parts),
    ...optional('preprocessing', readImagePreprocessing(env)),
  };
}

/**
 * The image preprocessing settings (`IMAGE_PREPROCESSING`, JSON), or undefined when not set. Every
 * field is checked against lib/contract/image-preprocessing-limits.ts; an unknown field is an error,
 * not ignored, so a misspelt setting never packs unresized images silently.
 */
export function readImagePreprocessing(env: Environment): ImagePreprocessing | undefined {
  const name = ENV.imagePreprocessing;
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const bad = (why: string) => new HandlerInputError(`environment variable ${name} ${why}, got '${text}'`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad(`must be a JSON object of ${IMAGE_PREPROCESSING_FIELDS.join(', ')}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad(`must be a JSON object of ${IMAGE_PREPROCESSING_FIELDS.join(', ')}`);
  const fields = parsed as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((field) => !(IMAGE_PREPROCESSING_FIELDS as readonly string[]).includes(field));
  if (unknown.length > 0) throw bad(`has unknown field(s) ${unknown.join(', ')}; allowed: ${IMAGE_PREPROCESSING_FIELDS.join(', ')}`);
  const { sidePixels, jpegQuality } = IMAGE_PREPROCESSING_LIMITS;
  const whole = (field: string, { min, max }: { min: number; max: number }): number | undefined => {
    const value = fields[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw bad(`field ${field} must be a whole number from ${min} to ${max}`);
    }
    return value;
  };
  const shorterSide = whole('shorterSide', sidePixels);
  const longerSide = whole('longerSide', sidePixels);
  if (shorterSide !== undefined && longerSide !== undefined && longerSide < shorterSide) {
    throw bad(`field longerSide (${longerSide}) must be at least shorterSide (${shorterSide}): the longer side cannot be the shorter`);
  }
  const keepGrayscale = fields.keepGrayscale;
  if (keepGrayscale !== undefined && typeof keepGrayscale !== 'boolean') throw bad('field keepGrayscale must be true or false');
  return {
    ...optional('shorterSide', shorterSide),
    ...optional('longerSide', longerSide),
    ...optional('jpegQuality', whole('jpegQuality', jpegQuality)),
    ...optional('keepGrayscale', keepGrayscale),
  };
}

/**
 * The include and exclude globs over the source's keys (`SOURCE_FILE_PATTERNS`, JSON
 * `{"include": [...], "exclude": [...]}`), each checked as the construct checks it; absent, none.
 */
export function readFilePatterns(env: Environment): FilePatterns {
  const name = ENV.filePatterns;
  const text = env[name];
  if (text === undefined || text === '') return {};
  const bad = (why: string) => new HandlerInputError(`environment variable ${name} ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad('must be a JSON object {"include": [globs], "exclude": [globs]}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad('must be a JSON object {"include": [globs], "exclude": [globs]}');
  const fields = parsed as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((field) => field !== 'include' && field !== 'exclude');
  if (unknown.length > 0) throw bad(`has unknown field(s) ${unknown.join(', ')}; allowed: include, exclude`);
  const list = (field: 'include' | 'exclude'): string[] | undefined => {
    const value = fields[field];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((pattern) => typeof pattern === 'string')) throw bad(`field ${field} must be an array of strings`);
    const problems = filePatternsProblems(field, value as string[]);
    if (problems.length > 0) throw bad(`field ${problems.join('; ')}`);
    return value as string[];
  };
  return { ...optional('include', list('include')), ...optional('exclude', list('exclude')) };
}

/** `{ [name]: value }`, or nothing when the value is undefined: settings hold no undefined fields (the plan is JSON). */
function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

/** What the records hold (`RECORD_CONTENT`: `images`, checked, or `any`; absent, `any`, as stacks deployed before the check packed). */
export function readRecordContent(env: Environment): RecordContent {
  return oneOf(ENV.recordContent, RECORD_CONTENTS, env[ENV.recordContent] ?? 'any');
}

/** `value` (the variable `name`, or its fallback) when it is one of the contract's `names`. */
function oneOf<T extends string>(name: string, names: readonly T[], value: string): T {
  if (!isOneOf(names, value)) {
    throw new HandlerInputError(`environment variable ${name} must be ${names.map((each) => `'${each}'`).join(' or ')}, got '${value}'`);
  }
  return value;
}

function required(env: Environment, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new HandlerInputError(`environment variable ${name} is not set: the ShardedDataset construct sets it`);
  }
  return value;
}
