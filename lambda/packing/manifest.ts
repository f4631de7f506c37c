import { createHash } from 'node:crypto';
import type { ShardFormatName } from './formats/shard-format';
import { sortByKeyInCodePointOrder } from '../io/key-order';
import { VersionLayout } from './dataset-layout';
import type { ManifestPreprocessing } from './preprocess/image-preprocessing';
import type { SampleDescription } from '../../lib/contract/sample-parts';

/** One shard as written. */
export interface ManifestShard {
  /** Key relative to the dataset root, e.g. `versions/v00000001-1a2b3c4d/shards/part-00000-of-00008.tfrecord`: in an older version's folder when reused. */
  readonly key: string;
  /** Key of its index file, e.g. `versions/v00000001-1a2b3c4d/index/part-00000-of-00008.idx`. */
  readonly indexKey: string;
  /** Key of its member list (see members.ts): what an incremental repack compares with the source. */
  readonly membersKey: string;
  readonly records: number;
  readonly bytes: number;
  /** CRC32C of the whole shard, base64 of the big-endian value: what S3 reports as ChecksumCRC32C. */
  readonly crc32c: string;
  /**
   * CRC-32 (zlib's, IEEE) of the whole shard, in the same form (what S3 reports as ChecksumCRC32): what a
   * reader without a fast CRC-32C checks the shard with, since Python's standard library computes it at
   * GB/s (container/shardio/shard_crc.py). Absent in manifests packed before it was written.
   */
  readonly crc32?: string;
  /** Global id of the first and last record (-1 when every member failed). */
  readonly firstRecordId: number;
  readonly lastRecordId: number;
}

/** An input that did not become a record, and why. */
export interface ManifestFailure {
  readonly key: string;
  readonly reason: string;
}

/** The manifest's own format version. */
export const MANIFEST_FORMAT_VERSION = 2;

/**
 * `manifest.json` of a dataset version (ARCHITECTURE.md "The manifest"): written before the
 * version is published; the root's copy names the current version.
 */
export interface Manifest {
  readonly version: typeof MANIFEST_FORMAT_VERSION;
  /** The version's id, `v<sequence>-<random>` (dataset-layout.ts). */
  readonly datasetVersion: string;
  readonly sequence: number;
  /** The version this one was planned from (its shards may be reused), or null for the first. */
  readonly previousVersion: string | null;
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
  /** Number of classes (0 without labels): what a model's output layer needs. */
  readonly classes: number;
  readonly records: number;
  /** How the shard count was chosen: the consumers it was rounded for, and whether it is a multiple of them. */
  readonly sizing: ManifestSizing;
  /** In shard order; keys in any version's folder. */
  readonly shards: ManifestShard[];
  /** RecordIO only: one index over all shards in order, offsets global across them (DALI fn.readers.mxnet). */
  readonly globalIndexKey?: string;
  readonly failures: ManifestFailure[];
  /**
   * What was done to every image before it became a record (resized, re-encoded as JPEG), with
   * the sharp and libvips versions that did it; absent when the records hold the files' own bytes.
   */
  readonly preprocessing?: ManifestPreprocessing;
  /**
   * Multi-part samples (lib/contract/sample-parts.ts): their parts with kinds, the required ones, the
   * image part and the number of samples; absent when each file is its own record.
   */
  readonly sample?: SampleDescription;
}

/** The shard options a version was packed with: a rerun with other options is not up to date. */
export interface ManifestSizing {
  readonly targetShardBytes: number | null;
  readonly shardCount: number | null;
  readonly consumers: number;
  /**
   * Whether the version's shard count is a multiple of the consumers: false when an incremental repack could not
   * keep it so without tiny shards, or shards that held only failures were left out.
   */
  readonly multipleOfConsumers: boolean;
  /** Shards reused from earlier versions, by reference. */
  readonly reusedShards: number;
}

/** The sizing a run plans: finalize.ts alone adds `multipleOfConsumers`, counted on the version's final shard list. */
export type PlannedSizing = Omit<ManifestSizing, 'multipleOfConsumers'>;

/** Every source object must be a record or a listed failure. */
export function checkTotals(manifest: Manifest): string | undefined {
  const records = manifest.shards.reduce((sum, shard) => sum + shard.records, 0);
  if (records !== manifest.records) {
    return `the shards hold ${records} records but the manifest says ${manifest.records}`;
  }
  // Multi-part: each sample is a record or a failure, and the source's objects are its files.
  const inputs = manifest.sample ? manifest.sample.samples : manifest.source.objects;
  if (records + manifest.failures.length !== inputs) {
    return `${records} records + ${manifest.failures.length} failures ≠ ${inputs} ${manifest.sample ? 'samples' : 'source objects'}`;
  }
  return checkRecordIds(manifest.shards);
}

/**
 * A shard's record ids are whole numbers from 0, the first at most the last: the next repack numbers
 * new records from the largest plus one. A shard without records has none (its -1 says so).
 */
function checkRecordIds(shards: readonly ManifestShard[]): string | undefined {
  const wrong = shards.find(({ records, firstRecordId: first, lastRecordId: last }) => records > 0
    && (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first));
  return wrong && `${wrong.key}: record ids ${String(wrong.firstRecordId)}–${String(wrong.lastRecordId)} for ${wrong.records} record(s); `
    + 'expected whole numbers from 0, the first at most the last';
}

/** Deterministic bytes: keys in a fixed order, two-space indent, trailing newline. */
export function serializeManifest(manifest: Manifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
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

/** Every object a version's readers open. */
export function referencedKeys(manifest: Manifest): string[] {
  const layout = new VersionLayout(manifest.datasetVersion);
  return [
    layout.manifestKey, layout.shardsChannelKey, layout.indexChannelKey,
    ...(manifest.globalIndexKey ? [manifest.globalIndexKey] : []),
    ...manifest.shards.flatMap((shard) => [shard.key, shard.indexKey, shard.membersKey]),
  ];
}
