/**
 * Where the packing engine reads files from and writes shards to. Local folders implement these
 * for the CLI; S3 implements them for the Lambda handlers. The engine knows nothing else of either.
 */

/** One listed file of a source. */
export interface ListedFile {
  /** Key relative to the source root, `/`-separated. */
  readonly key: string;
  /** Size in bytes. */
  readonly size: number;
  /** Last change, in milliseconds since the epoch (mtime, or S3 LastModified). */
  readonly modified: number;
}

/** A tree of files to pack (a folder, an S3 prefix). */
export interface PackingSource {
  /** `file:///abs/dir/` or `s3://bucket/prefix/`: named in the manifest and in errors. */
  readonly uri: string;
  /** Every file under the root, in any order. */
  list(): Promise<ListedFile[]>;
  /** The bytes of one file. Rejects when it vanished or cannot be read: the engine lists it as a failure. */
  read(key: string): Promise<Buffer>;
}

/** An object being written; its key shows only once `complete()` resolves. */
export interface ObjectWriter {
  /** Appends bytes, in order. Resolves when the sink can take more (backpressure). */
  write(chunks: Buffer[]): Promise<void>;
  /** Makes the object visible under its key, whole. */
  complete(): Promise<void>;
  /** Drops what was written; nothing appears under the key. */
  abort(): Promise<void>;
}

/** Where a packed dataset is written (a folder, an S3 prefix). */
export interface PackingSink {
  /** `file:///abs/dir/` or `s3://bucket/prefix/`. */
  readonly uri: string;
  /** Starts a large object written in parts. */
  create(key: string): Promise<ObjectWriter>;
  /** Writes a small object whole, atomically. */
  put(key: string, data: Buffer): Promise<void>;
  /** Reads back an object of the dataset (indexes at finalize time, everything at verify time); rejects with an ObjectNotFoundError when there is none. */
  get(key: string): Promise<Buffer>;
  /** Keys of the objects under a prefix of the dataset (e.g. `shards/`), at any depth. */
  list(prefix: string): Promise<string[]>;
  /** Removes an object; no error when there is none. */
  delete(key: string): Promise<void>;
}

/** What every sink's `get` rejects with for a key that holds no object, whatever the store calls it. */
export class ObjectNotFoundError extends Error {
  /** Keeps the store's own message and code (`ENOENT`, `NoSuchKey`…); only the name is common. */
  constructor(public readonly uri: string, public readonly code: string, message: string) {
    super(message);
    this.name = 'ObjectNotFoundError';
  }
}

/** By name, not instanceof: the error may come from another copy of this module (a bundle, a test realm). */
export function isObjectNotFound(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ObjectNotFoundError';
}
