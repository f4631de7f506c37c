import type { ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3RetryOptions} from './s3-retry';
import { withS3Retry } from './s3-retry';
import { normalizePrefix, s3Uri } from './s3-uri';

/** A bucket and a key prefix: the root of an S3 source or sink. */
export interface S3Location {
  readonly client: S3Client;
  readonly bucket: string;
  /** Keys are relative to it; `''` for the whole bucket, otherwise ends with `/` (added when missing). */
  readonly prefix?: string;
  readonly retry?: S3RetryOptions;
  /** Keys per ListObjectsV2 page (1–1000, default 1000). */
  readonly listPageSize?: number;
}

/** An S3Location checked and its prefix normalised: what S3Source and S3Sink are built on. */
export abstract class S3Prefix {
  /** `s3://bucket/prefix/`. */
  public readonly uri: string;
  protected readonly client: S3Client;
  protected readonly bucket: string;
  /** `''` or ends with `/`. */
  protected readonly prefix: string;
  protected readonly retry: S3RetryOptions | undefined;
  protected readonly pageSize: number;

  protected constructor(location: S3Location) {
    this.client = location.client;
    this.bucket = location.bucket;
    this.prefix = normalizePrefix(location.prefix);
    this.retry = location.retry;
    this.pageSize = listPageSize(location.listPageSize);
    this.uri = s3Uri(this.bucket, this.prefix);
  }
}

/** Checks a ListObjectsV2 page size: S3 answers at most 1000 keys a page. */
export function listPageSize(size: number | undefined): number {
  const value = size ?? 1000;
  if (!Number.isInteger(value) || value < 1 || value > 1000) {
    throw new Error(`listPageSize must be an integer between 1 and 1000, got ${value}`);
  }
  return value;
}

/** The bytes of one object, with retries; a missing object fails at once with an error naming it. */
export function getObjectBytes(client: S3Client, bucket: string, key: string, retry: S3RetryOptions | undefined): Promise<Buffer> {
  // The body is read inside the retried call: a reset in the middle of the body is retried too.
  return withS3Retry(s3Uri(bucket, key), () => sdkGetObject(client, bucket, key), retry);
}

/** One GetObject through the SDK, body included, no retries. */
export async function sdkGetObject(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if (!response.Body) return Buffer.alloc(0);
  const bytes = await response.Body.transformToByteArray();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Every ListObjectsV2 page under `prefix`, each page retried on its own. */
export async function* listPages(client: S3Client, bucket: string, prefix: string, pageSize: number,
  retry: S3RetryOptions | undefined): AsyncGenerator<ListObjectsV2CommandOutput> {
  let continuationToken: string | undefined;
  do {
    const page = await withS3Retry(s3Uri(bucket, prefix), () => client.send(new ListObjectsV2Command({
      Bucket: bucket, Prefix: prefix, MaxKeys: pageSize, ContinuationToken: continuationToken,
    })), retry);
    yield page;
    continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (continuationToken);
}
