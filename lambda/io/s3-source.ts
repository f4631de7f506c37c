import type { S3Location } from './s3-location';
import { listPages, S3Prefix } from './s3-location';
import { signedGetFor } from './s3-signed-get';
import type { S3InventoryLocation } from './s3-inventory';
import { listFromInventory } from './s3-inventory';
import type { ListedFile, PackingSource } from './storage';

/** Options of an `S3Source`. */
export interface S3SourceOptions extends S3Location {
  /** List from this S3 Inventory report instead of ListObjectsV2 (for very large buckets). @default - ListObjectsV2 */
  readonly inventory?: S3InventoryLocation;
}

/**
 * An S3 prefix as the source of a packing run, listed with ListObjectsV2 or from an S3 Inventory
 * report. Keys are relative to the prefix; "folder" marker objects (keys ending in `/`) are
 * skipped. Reads are signed GETs over keep-alive connections (S3SignedGet: a fraction of the
 * SDK's CPU per object), one object each, in ranges when large, with retries; how many run at once
 * is the shard writer's choice. Everything else goes through the SDK client.
 */
export class S3Source extends S3Prefix implements PackingSource {
  private readonly inventory: S3InventoryLocation | undefined;

  constructor(options: S3SourceOptions) {
    super(options);
    this.inventory = options.inventory;
  }

  /** A batch per ListObjectsV2 page, or per inventory file. */
  public async* list(): AsyncGenerator<ListedFile[]> {
    if (this.inventory) {
      yield* listFromInventory(this.client, this.inventory, this.bucket, this.prefix, this.retry);
      return;
    }
    for await (const page of listPages(this.client, this.bucket, this.prefix, this.pageSize, this.retry)) {
      const files: ListedFile[] = [];
      for (const object of page.Contents ?? []) {
        if (!object.Key || object.Key.endsWith('/')) continue;
        files.push({ key: object.Key.slice(this.prefix.length), size: object.Size ?? 0, modified: object.LastModified?.getTime() ?? 0 });
      }
      yield files;
    }
  }

  public read(key: string, listedSize?: number): Promise<Buffer> {
    return signedGetFor(this.client).read(this.bucket, this.prefix + key, listedSize, this.retry);
  }
}
