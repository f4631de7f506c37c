import type * as s3 from 'aws-cdk-lib/aws-s3';
import { validateKeyPrefix } from '../private/validation';
import { DATASET_CACHE_DIRECTORY } from './private/cache-layout';
import type { IShardedDataset } from '../sharding/sharded-dataset';

/**
 * One data repository association: a directory of the file system mirrors an S3 prefix.
 * @internal
 */
export interface CacheLink {
  readonly bucket: s3.IBucket;
  /** Key prefix, empty or ending in `/`. */
  readonly prefix: string;
  /** Directory of the file system, with a leading `/`. */
  readonly fileSystemPath: string;
}

/**
 * The S3 data a `LustreDatasetCache` presents as files. The root of the file system mirrors the
 * source's prefix: `s3://<bucket>/<prefix>train/x.rec` is `/<MountName>/train/x.rec`.
 */
export abstract class CacheSource {
  /**
   * The objects under a prefix of a bucket, linked at the root of the file system.
   *
   * @param bucket the bucket holding the data
   * @param prefix the key prefix, empty (the whole bucket) or ending in `/`, e.g. `imagenet/packed/`
   */
  public static fromBucket(bucket: s3.IBucket, prefix: string = ''): CacheSource {
    validateKeyPrefix(undefined, 'InvalidCachePrefix', 'prefix', prefix, 'a data repository association links whole folders');
    return new LinkedPrefixes([{ bucket, prefix, fileSystemPath: '/' }]);
  }

  /**
   * A packed dataset (e.g. a `ShardedDataset`), its prefix linked at `/dataset`: every version,
   * their claims and the current manifest. A reader of the directory opens the shards the
   * manifest lists (a version's shards may lie in several version folders); files are loaded
   * lazily, so versions not read cost metadata only.
   */
  public static fromShards(dataset: IShardedDataset): CacheSource {
    return new LinkedPrefixes([{ bucket: dataset.destinationBucket, prefix: dataset.destinationPrefix, fileSystemPath: `/${DATASET_CACHE_DIRECTORY}` }]);
  }

  /** @internal */
  public abstract _links(): CacheLink[];
}

class LinkedPrefixes extends CacheSource {
  constructor(private readonly links: CacheLink[]) {
    super();
  }

  public _links(): CacheLink[] {
    return this.links;
  }
}
