import type { ShardFormatName } from '../../../lib/contract/record-vocabulary';
import type { Encoded } from './encoded';
import type { SamplePart } from '../planning/plan-types';

/**
 * What the shard writer needs from a record format (TFRecord or MXNet RecordIO): turn one input
 * file into the framed bytes of one record, and describe the record in the format's index.
 */

/** One input file as it becomes a record. */
export interface RecordInput {
  /** The file's bytes (e.g. a JPEG). */
  readonly data: Buffer;
  /** Key of the file relative to the source root, e.g. `cat/0001.jpg` (stored as `image/filename`). */
  readonly key: string;
  /** Class index, or -1 when the dataset has no labels. */
  readonly label: number;
  /** Global record id, unique across the dataset (RecordIO IRHeader id; manifest first/last id). */
  readonly recordId: number;
  /** The `image/format` of the bytes when they are not the file's own (a re-encoded image: `jpeg`); default: from the key's extension. */
  readonly format?: string;
  /**
   * A multi-part sample's parts (`key` is then the sample's key and `data` unused): each with its
   * bytes, sorted by name. Absent for one-file records.
   */
  readonly parts?: readonly RecordPart[];
  /** With `parts`: the part stored in the `image/*` features (SampleDescription `imagePart`), if any. */
  readonly imagePart?: string;
}

/** One part of a multi-part sample as it becomes a feature. */
export interface RecordPart {
  /** `jpg`, `json`, `mask.png`: the feature's name (the image part's goes in `image/encoded`). */
  readonly name: string;
  readonly data: Buffer;
}

/** A shard file format. */
export interface ShardFormat {
  /** `tfrecord` or `recordio`. */
  readonly name: ShardFormatName;
  /** File extension of shards, with the dot: `.tfrecord` or `.rec`. */
  readonly extension: string;
  /**
   * Frames one record, sized, to be written into the output block. Throws a FormatError naming
   * `input.key` when the file cannot be a record.
   */
  encode(input: RecordInput): Encoded;
  /**
   * The most bytes the record of a file of `size` bytes under `key` (or of a multi-part sample with
   * these `parts`) takes in a shard, framing included: what the planner counts against the target and the 128 MiB ceiling.
   */
  recordBytes(key: string, size: number, parts?: readonly SamplePart[]): number;
  /** The line for this record in the shard's own index file (with the trailing newline). */
  indexLine(recordId: number, offset: number, size: number): string;
}

/** The shard formats the engine writes: the contract's names. */
export type { ShardFormatName } from '../../../lib/contract/record-vocabulary';

/** A file that cannot be turned into a record, or a shard that does not parse. */
export class FormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatError';
  }
}
