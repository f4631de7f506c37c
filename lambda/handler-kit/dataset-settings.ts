import type { ShardFormatName } from '../packing/formats/shard-format';
import type { LabelMode } from '../packing/planning/plan-types';
import { PACKING_ENV } from '../../lib/contract/handler-environment';
import { DEFAULT_RETENTION_DAYS } from '../packing/prune';
import { HandlerInputError } from './handler-input';

/** The environment variables the construct sets on the handlers: one definition, in the contract. */
export const ENV = PACKING_ENV;

/** A bucket and a key prefix (empty, or ending in `/`). */
export interface BucketLocation {
  readonly bucket: string;
  readonly prefix: string;
}

/** What the planner plans with. */
export interface PlanSettings {
  readonly format: ShardFormatName;
  readonly seed: number;
  readonly labels: LabelMode;
  readonly targetShardBytes?: number;
  readonly shardCount?: number;
  readonly consumers: number;
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

/** The shard format (`SHARD_FORMAT`). */
export function readFormat(env: Environment): ShardFormatName {
  const format = required(env, ENV.format);
  if (format !== 'tfrecord' && format !== 'recordio') {
    throw new HandlerInputError(`environment variable ${ENV.format} must be 'tfrecord' or 'recordio', got '${format}'`);
  }
  return format;
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
  const labels = env[ENV.labels] ?? 'folder';
  if (labels !== 'folder' && labels !== 'none') {
    throw new HandlerInputError(`environment variable ${ENV.labels} must be 'folder' or 'none', got '${labels}'`);
  }
  return {
    format: readFormat(env),
    seed: wholeNumber(env, ENV.seed, 0) ?? 0,
    labels,
    targetShardBytes: wholeNumber(env, ENV.targetShardBytes, 1),
    shardCount: wholeNumber(env, ENV.shardCount, 1),
    consumers: wholeNumber(env, ENV.consumers, 1) ?? 1,
  };
}

/** Files a packer reads ahead (`READ_CONCURRENCY`, default 64). */
export function readReadConcurrency(env: Environment): number {
  return wholeNumber(env, ENV.readConcurrency, 1) ?? 64;
}

/** Days an old version is kept after it stops being current (`VERSION_RETENTION_DAYS`, default 7). */
export function readRetentionDays(env: Environment): number {
  return wholeNumber(env, ENV.retentionDays, 0) ?? DEFAULT_RETENTION_DAYS;
}

function required(env: Environment, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new HandlerInputError(`environment variable ${name} is not set: the ShardedDataset construct sets it`);
  }
  return value;
}

function wholeNumber(env: Environment, name: string, min: number): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new HandlerInputError(`environment variable ${name} must be a whole number of at least ${min}, got '${text}'`);
  }
  return value;
}
