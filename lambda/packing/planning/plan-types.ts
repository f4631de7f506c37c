import type { LabelMode } from '../../../lib/contract/record-vocabulary';

/** One file of the source, as listed. */
export interface SourceFile {
  /** Key relative to the source root, `/`-separated, e.g. `cat/0001.jpg`. */
  readonly key: string;
  /** Size in bytes, as listed. */
  readonly size: number;
  /** Last change in milliseconds since the epoch, when listed: kept in member lists for incremental repacks. */
  readonly modified?: number;
  /** A multi-part sample's files (`key` is then the sample's key, `size` their sum): see lambda/packing/samples/. */
  readonly parts?: readonly SamplePart[];
  /** With `parts`: the one held in the `image/*` features (the dataset's SampleDescription `imagePart`), if any. */
  readonly imagePart?: string;
}

/** One file of a multi-part sample: its part name (`jpg`, `mask.png`) and size; its key is `<sample key>.<name>`. */
export interface SamplePart {
  readonly name: string;
  readonly size: number;
}

/** How files become labelled records: the contract's names. */
export type { LabelMode } from '../../../lib/contract/record-vocabulary';

/** Inputs of the pure shard planner. */
export interface PlanOptions {
  /** Shuffle seed: the same files and seed give the same plan. */
  readonly seed: number;
  /** Target shard size in bytes, 1–128 MiB (default 64 MiB). Ignored when `shardCount` is given. */
  readonly targetShardBytes?: number;
  /** Exact number of shards (still rounded up to a multiple of `consumers`). */
  readonly shardCount?: number;
  /** Instances × GPU processes × loader workers: the shard count is rounded up to a multiple of it. */
  readonly consumers?: number;
  /** `folder`: the first path segment is the class (sorted names → 0..n-1); `none`: label -1. Default `folder`. */
  readonly labels?: LabelMode;
  /**
   * The bytes a file takes in a shard once framed (the format's `recordBytes`): what the target
   * size and the 128 MiB ceiling count. Default: its size as listed.
   */
  readonly recordBytes?: RecordBytes;
}

/** The bytes of a file's (or a multi-part sample's: `parts`) record in a shard, framing included. */
export type RecordBytes = (key: string, size: number, parts?: readonly SamplePart[]) => number;

/** One record of a planned shard. */
export interface PlannedRecord {
  readonly key: string;
  readonly size: number;
  /** Class index, -1 without labels. */
  readonly label: number;
  /**
   * Global id: consecutive over the shards in order (shard 0 holds ids 0..n0-1, and so on) in a
   * full pack; an incremental repack numbers its new records after the previous version's largest.
   */
  readonly recordId: number;
  /** The source file's last change as listed (milliseconds since the epoch), when known. */
  readonly modified?: number;
  /** A multi-part sample's files, sorted by name: the record holds them all (see SourceFile). */
  readonly parts?: readonly SamplePart[];
  /** With `parts`: the one held in the `image/*` features, if any. */
  readonly imagePart?: string;
}

/** One planned shard. */
export interface PlannedShard {
  /** 0-based position. */
  readonly index: number;
  /** `part-00000-of-00128`: the base name of the shard and of its index file. */
  readonly name: string;
  /** Records in write order (the shuffled order). */
  readonly records: PlannedRecord[];
  /** Sum of the records' bytes in the shard, as planned (framing included when the plan was given `recordBytes`). */
  readonly bytes: number;
}

/** The whole plan. */
export interface ShardPlan {
  readonly seed: number;
  readonly shards: PlannedShard[];
  /** Class name → index, names sorted; empty without labels. */
  readonly labelMap: Record<string, number>;
  readonly totalFiles: number;
  readonly totalBytes: number;
}
