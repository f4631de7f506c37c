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
  /**
   * Every file under the root, in batches, in any order (the engine sorts). Batches, so that a
   * listing of millions of files never has to be held whole by the source.
   */
  list(): AsyncIterable<ListedFile[]>;
  /**
   * The bytes of one file. Rejects with the store's error: one that says the file does not exist or
   * may not be read (see isUnreadableInput) makes it a listed failure, any other fails the shard.
   * `listedSize`, when given, lets a source read a large file in parts.
   */
  read(key: string, listedSize?: number): Promise<Buffer>;
  /**
   * Optional, for sources whose reads are local system calls: reads one file synchronously into
   * `scratch` and returns its bytes, a view that is valid until the next call. A fresh buffer per
   * 5 KB file (allocation, page faults, garbage collection) costs more than the read itself
   * (measured: 100,000 files of 2–8 KB, 0.99 s with a buffer each against 0.59 s into one reused block).
   * Throws when the file vanished or cannot be read.
   */
  readInto?(key: string, listedSize: number, scratch: ScratchBuffer): Buffer;
}

/** The whole listing of a source in one array, for callers that plan in memory (the planner Lambda, tests). */
export async function listAll(source: PackingSource): Promise<ListedFile[]> {
  const files: ListedFile[] = [];
  for await (const batch of source.list()) {
    for (const file of batch) files.push(file);
  }
  return files;
}

/** One growable buffer, reused for every file a shard writer reads. */
export class ScratchBuffer {
  private buffer = Buffer.allocUnsafe(64 * 1024);

  /** A buffer of at least `bytes` bytes; its contents are undefined. */
  public reserve(bytes: number): Buffer {
    if (this.buffer.length < bytes) this.buffer = Buffer.allocUnsafe(Math.max(bytes, this.buffer.length * 2));
    return this.buffer;
  }
}

/** An object being written; its key shows only once `complete()` resolves. */
export interface ObjectWriter {
  /**
   * Appends bytes, in order. Resolves when the sink can take more (backpressure) and no longer
   * needs `chunks`: the caller reuses their memory for the next bytes.
   */
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
  /**
   * Writes a small object only if no object has the key, atomically: of two callers, exactly one
   * gets `true`, the other `false` and the object stays the first one's. What publishing a dataset
   * version rests on (ARCHITECTURE.md "Dataset layout"). Rejects when the store cannot do it.
   */
  createIfAbsent(key: string, data: Buffer): Promise<boolean>;
  /** Reads back an object of the dataset (indexes at finalize time, everything at verify time); rejects with an ObjectNotFoundError when there is none. */
  get(key: string): Promise<Buffer>;
  /** Keys of the objects under a prefix of the dataset (e.g. `shards/`), at any depth. */
  list(prefix: string): Promise<string[]>;
  /**
   * When the store last wrote an object, in milliseconds since the epoch, by the store's own clock
   * (S3 `LastModified`, a file's mtime): what retention is measured on, so that packers whose
   * clocks disagree still agree on the age of a version. Rejects with an ObjectNotFoundError when there is none.
   */
  modifiedAt(key: string): Promise<number>;
  /**
   * The size and CRC-32C of an object as stored: what the finalizer checks each packer's result
   * against before it publishes. Rejects with an ObjectNotFoundError when there is none.
   */
  stat(key: string): Promise<StoredObject>;
  /** Removes an object; no error when there is none. */
  delete(key: string): Promise<void>;
  /** The same store rooted at `prefix` (ending in `/`) under this root: a version's folder, for its shard writers. */
  scoped(prefix: string): PackingSink;
}

/** An object's size and CRC-32C, as a store holds it. */
export interface StoredObject {
  readonly bytes: number;
  /** Base64 of the big-endian CRC-32C, as S3 reports it and the manifest records it. */
  readonly crc32c: string;
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
