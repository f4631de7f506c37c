// The S3 half of the CLI, loaded only when a location is s3://: the AWS SDK takes about 90 ms to
// load, which a local pack of 100,000 small files (about 1.6 s in all) should not pay.
import type { S3Client } from '@aws-sdk/client-s3';
import type { DatasetLocation, S3ClientFlags } from './dataset-location';
import { UsageError } from './usage-error';
import { engineS3Client } from '../../lambda/io/s3-client';
import type { S3InventoryLocation } from '../../lambda/io/s3-inventory';
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
  return new S3Source({ client, bucket: location.bucket, prefix: location.prefix, inventory });
}

export function openS3Sink(location: S3DatasetLocation, client: S3Client): S3Sink {
  return new S3Sink({ client, bucket: location.bucket, prefix: location.prefix });
}
