// The S3 half of the CLI, loaded only when a location is s3://: the AWS SDK takes about 90 ms to
// load, which a local pack of 100,000 small files (about 1.6 s in all) should not pay.
import type { S3Client } from '@aws-sdk/client-s3';
import type { DatasetLocation, S3ClientFlags } from './dataset-location';
import { UsageError } from './usage-error';
import { S3_RETRY_RULE, S3_RETRY_SECONDS_ENV } from '../../lib/contract/s3-retry-rule';
import { engineS3Client } from '../../lambda/io/s3-client';
import type { S3InventoryLocation } from '../../lambda/io/s3-inventory';
import type { S3RetryOptions } from '../../lambda/io/s3-retry';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';

type S3DatasetLocation = Extract<DatasetLocation, { kind: 's3' }>;

/**
 * The one S3 client of a command: region from `--region`, else AWS_REGION / AWS_DEFAULT_REGION;
 * credentials from the SDK's default provider chain; an `engineS3Client` like the handlers'.
 */
export function createS3Client(flags: S3ClientFlags, env: NodeJS.ProcessEnv = process.env): S3Client {
  const region = flags.region ?? (env.AWS_REGION || undefined) ?? (env.AWS_DEFAULT_REGION || undefined);
  if (!region) {
    throw new UsageError('an s3:// location needs a region: pass --region (e.g. --region us-east-1) or set AWS_REGION');
  }
  return engineS3Client({
    region,
    ...(flags.endpointUrl !== undefined ? { endpoint: flags.endpointUrl, forcePathStyle: true } : {}),
  });
}

export function openS3Source(location: S3DatasetLocation, client: S3Client, inventory: S3InventoryLocation | undefined): S3Source {
  return new S3Source({ client, bucket: location.bucket, prefix: location.prefix, inventory, retry: s3RetryOptions() });
}

export function openS3Sink(location: S3DatasetLocation, client: S3Client): S3Sink {
  return new S3Sink({ client, bucket: location.bucket, prefix: location.prefix, retry: s3RetryOptions() });
}

/** The contract's retry rule, its budget from SHARDIO_S3_RETRY_SECONDS where set (the Python reader reads it too). */
export function s3RetryOptions(env: NodeJS.ProcessEnv = process.env): S3RetryOptions {
  const text = (env[S3_RETRY_SECONDS_ENV] ?? '').trim();
  if (text === '') return {};
  const seconds = Number(text);
  if (!/^[0-9.e+]+$/i.test(text) || !Number.isFinite(seconds) || seconds < 0) {
    throw new UsageError(`${S3_RETRY_SECONDS_ENV}='${text.slice(0, 40)}': must be a number of seconds, 0 or more `
      + `(0: ${S3_RETRY_RULE.attempts} attempts only; default ${S3_RETRY_RULE.budgetMs / 1000})`);
  }
  return { retryBudgetMs: seconds * 1000 };
}
