import { ListObjectsV2Command, ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import { getObjectBytes, listPageSize, normalizePrefix, S3Location, s3Uri } from './s3-location';
import { S3RetryOptions, withS3Retry } from './s3-retry';
import { ListedFile, PackingSource } from './storage';

/** Options of an `S3Source`. */
export type S3SourceOptions = S3Location;

/**
 * An S3 prefix as the source of a packing run. Keys are relative to the prefix; "folder" marker
 * objects (keys ending in `/`) are skipped. Reads fetch one object each, with retries; how many run
 * at once is the shard writer's choice.
 */
export class S3Source implements PackingSource {
  public readonly uri: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly retry: S3RetryOptions | undefined;
  private readonly pageSize: number;

  constructor(options: S3SourceOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = normalizePrefix(options.prefix);
    this.retry = options.retry;
    this.pageSize = listPageSize(options.listPageSize);
    this.uri = s3Uri(this.bucket, this.prefix);
  }

  public async list(): Promise<ListedFile[]> {
    const files: ListedFile[] = [];
    for await (const page of listPages(this.client, this.bucket, this.prefix, this.pageSize, this.retry)) {
      for (const object of page.Contents ?? []) {
        if (!object.Key || object.Key.endsWith('/')) continue;
        files.push({ key: object.Key.slice(this.prefix.length), size: object.Size ?? 0, modified: object.LastModified?.getTime() ?? 0 });
      }
    }
    return files;
  }

  public read(key: string): Promise<Buffer> {
    return getObjectBytes(this.client, this.bucket, this.prefix + key, this.retry);
  }
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
