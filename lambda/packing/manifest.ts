import { createHash } from 'node:crypto';
import type { ShardFormatName } from './formats/shard-format';
import { sortByKeyInCodePointOrder } from './planning/key-order';

/** Layout of a packed dataset under its prefix (ARCHITECTURE.md "Dataset layout"). */
export const SHARDS_PREFIX = 'shards/';
export const INDEX_PREFIX = 'index/';
export const GLOBAL_INDEX_KEY = `${INDEX_PREFIX}all.idx`;
export const MANIFEST_KEY = 'manifest.json';

/** One shard as written. */
export interface ManifestShard {
  /** Key under the dataset prefix, e.g. `shards/part-00000-of-00008.tfrecord`. */
  readonly key: string;
  /** Key of its index file, e.g. `index/part-00000-of-00008.idx`. */
  readonly indexKey: string;
  readonly records: number;
  readonly bytes: number;
  /** CRC32C of the whole shard, base64 of the big-endian value: what S3 reports as ChecksumCRC32C. */
  readonly crc32c: string;
  /** Global id of the first and last record (-1 when every member failed). */
  readonly firstRecordId: number;
  readonly lastRecordId: number;
}

/** An input that did not become a record, and why. */
export interface ManifestFailure {
  readonly key: string;
  readonly reason: string;
}

/** `manifest.json`: written last; its presence means the dataset is complete. */
export interface Manifest {
  readonly version: 1;
  readonly format: ShardFormatName;
  readonly seed: number;
  readonly source: {
    readonly uri: string;
    readonly objects: number;
    readonly bytes: number;
    /** SHA-256 over the (key, size, modified) of every listed file, in key order. */
    readonly fingerprint: string;
  };
  /** Class name → label, names sorted; empty without labels. */
  readonly labels: Record<string, number>;
  readonly records: number;
  readonly shards: ManifestShard[];
  /** RecordIO only: one index over all shards in order, offsets global across them (DALI fn.readers.mxnet). */
  readonly globalIndexKey?: string;
  readonly failures: ManifestFailure[];
}

/** Every source object must be a record or a listed failure. */
export function checkTotals(manifest: Manifest): string | undefined {
  const records = manifest.shards.reduce((sum, shard) => sum + shard.records, 0);
  if (records !== manifest.records) {
    return `the shards hold ${records} records but the manifest says ${manifest.records}`;
  }
  if (records + manifest.failures.length !== manifest.source.objects) {
    return `${records} records + ${manifest.failures.length} failures ≠ ${manifest.source.objects} source objects`;
  }
  return undefined;
}

/** Deterministic bytes: keys in a fixed order, two-space indent, trailing newline. */
export function serializeManifest(manifest: Manifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
}

/** The base64 big-endian form S3 uses for CRC32C checksums. */
export function crc32cBase64(crc: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc >>> 0);
  return bytes.toString('base64');
}

const FINGERPRINT_BATCH_LINES = 4096;

/**
 * SHA-256 over `key\tsize\tmodified\n` of the listed files in key order (code points, the order
 * the planner sorts by): equal when the source did not change, whatever order it was listed in.
 */
export function sourceFingerprint(files: ReadonlyArray<{ key: string; size: number; modified: number }>): string {
  // A sorted copy of the references: one string per file for the whole listing took more memory than the listing itself.
  const hasher = new FingerprintHasher();
  for (const file of sortByKeyInCodePointOrder(files)) hasher.add(file);
  return hasher.digest();
}

/** {@link sourceFingerprint} of files fed one at a time, already in key order (a listing streamed from disk). */
export class FingerprintHasher {
  private readonly hash = createHash('sha256');
  private lines: string[] = [];

  public add(file: { key: string; size: number; modified: number }): void {
    this.lines.push(`${file.key}\t${file.size}\t${file.modified}\n`);
    // One update per batch of lines: one per line cost more than the hashing.
    if (this.lines.length === FINGERPRINT_BATCH_LINES) this.flush();
  }

  /** The hex digest; the hasher is spent. */
  public digest(): string {
    this.flush();
    return this.hash.digest('hex');
  }

  private flush(): void {
    this.hash.update(this.lines.join(''));
    this.lines = [];
  }
}
