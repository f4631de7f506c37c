import { MAX_SHARD_BYTES } from '../../contract/shard-limits';

/**
 * Target shard size for FastFile: the largest the packer writes. SageMaker's guide: "Fast file mode
 * is ideal for large file containers (more than 150 MB)" (developer guide, "Best practices for
 * choosing data source and input mode").
 */
export const FAST_FILE_SHARD_BYTES = MAX_SHARD_BYTES;

/**
 * Objects smaller than this are packed: SageMaker's guide calls files "less than 50 MB per file"
 * many small files, whose per-file download overhead grows, and advises serializing them into
 * larger containers such as TFRecord or RecordIO (same page).
 */
export const PACK_BELOW_OBJECT_BYTES = 50e6;

/** The shards a packing would write. */
export interface ShardLayout {
  /** Shards: a multiple of the consumers whenever there are objects enough. */
  readonly count: number;
  /** Mean shard size in bytes. */
  readonly meanBytes: number;
  /** False when there are fewer objects than consumers: some readers would get no shard. */
  readonly enoughObjects: boolean;
}

/**
 * The packer's shard count rule: ceil(bytes / target), at least 1, rounded up to a multiple of the
 * consumers, never more shards than objects (rounded down to a multiple then).
 */
export function shardLayout(totalBytes: number, objectCount: number, consumers: number, targetBytes: number): ShardLayout {
  const requested = Math.max(1, Math.ceil(totalBytes / targetBytes));
  const mostShards = Math.floor(objectCount / consumers) * consumers;
  const count = mostShards === 0
    ? Math.min(requested, objectCount)
    : Math.min(Math.ceil(requested / consumers) * consumers, mostShards);
  return { count, meanBytes: totalBytes / count, enoughObjects: mostShards > 0 };
}
