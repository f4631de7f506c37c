import { randomBytes } from 'node:crypto';
import { DATASET_LAYOUT, VERSION_ID_PATTERN, VERSION_SEQUENCE_DIGITS } from '../../lib/contract/dataset-layout';

/**
 * The keys of a packed dataset, relative to its root: the one definition (ARCHITECTURE.md
 * "Dataset layout"; the names come from lib/contract/dataset-layout.ts, which the Python reader
 * reads through the generated container/shardio/contract.py). A dataset is a series
 * of immutable versions; `published/` holds the claims that made each one current, in order.
 */

/** The current version's manifest, a copy rewritten at each publish. */
export const MANIFEST_KEY = DATASET_LAYOUT.manifest;
/** Where the versions' objects live, one folder each. */
export const VERSIONS_PREFIX = DATASET_LAYOUT.versions;
/** The claims, one per published version, named by sequence number. */
export const PUBLISHED_PREFIX = DATASET_LAYOUT.published;
/** Working files of the runs, one folder per version being made. Outside `versions/`: never read as data. */
export const PLAN_ROOT = DATASET_LAYOUT.plan;
/** SageMaker ManifestFile channels (S3 only), at the root for the current version and in each version's folder. */
export const SHARDS_CHANNEL_MANIFEST = DATASET_LAYOUT.shardsChannel;
export const INDEX_CHANNEL_MANIFEST = DATASET_LAYOUT.indexChannel;

/**
 * Folders inside a version's folder. A shard writer is given a sink rooted at the version's folder
 * and writes these keys; {@link VersionLayout.rebase} makes them keys of the dataset.
 */
export const SHARDS_FOLDER = DATASET_LAYOUT.shardsFolder;
export const INDEX_FOLDER = DATASET_LAYOUT.indexFolder;
export const MEMBERS_FOLDER = DATASET_LAYOUT.membersFolder;

const VERSION_ID = new RegExp(`^${VERSION_ID_PATTERN}$`);

/** A new version id after `sequence - 1`: `v<sequence, 8 digits>-<8 random hex digits>`. */
export function newVersionId(sequence: number): string {
  if (!Number.isSafeInteger(sequence) || sequence < 1 || sequence >= 10 ** VERSION_SEQUENCE_DIGITS) {
    throw new Error(`a dataset version's sequence must be 1–${10 ** VERSION_SEQUENCE_DIGITS - 1}, got ${sequence}`);
  }
  return `v${String(sequence).padStart(VERSION_SEQUENCE_DIGITS, '0')}-${randomBytes(4).toString('hex')}`;
}

/** The sequence number of a version id, or undefined when `id` is not one. */
export function versionSequence(id: string): number | undefined {
  const match = VERSION_ID.exec(id);
  return match ? Number(match[1]) : undefined;
}

/** The claim that publishes version number `sequence`: created once, never changed. */
export function claimKey(sequence: number): string {
  return `${PUBLISHED_PREFIX}${String(sequence).padStart(VERSION_SEQUENCE_DIGITS, '0')}.json`;
}

/** The sequence number a claim key names, or undefined for any other key. */
export function claimSequence(key: string): number | undefined {
  const match = new RegExp(`^${PUBLISHED_PREFIX}(\\d{${VERSION_SEQUENCE_DIGITS}})\\.json$`).exec(key);
  return match ? Number(match[1]) : undefined;
}

/** The keys of one version. */
export class VersionLayout {
  /** `versions/<id>/`. */
  public readonly prefix: string;
  /** The version's own manifest, never changed once written. */
  public readonly manifestKey: string;
  /** RecordIO only: one index over all the version's shards. */
  public readonly globalIndexKey: string;
  public readonly shardsChannelKey: string;
  public readonly indexChannelKey: string;
  /** Working files of the run that makes this version. */
  public readonly planPrefix: string;
  /**
   * The objects whose copies the dataset's root holds while this version is current: the channel
   * manifests (S3 only) first, the manifest last, the order they are copied in.
   */
  public readonly rootCopies: ReadonlyArray<{ readonly versionKey: string; readonly rootKey: string }>;

  constructor(public readonly id: string) {
    if (versionSequence(id) === undefined) throw new Error(`'${id}' is not a dataset version id (v<8 digits>-<8 hex digits>)`);
    this.prefix = `${VERSIONS_PREFIX}${id}/`;
    this.manifestKey = `${this.prefix}${MANIFEST_KEY}`;
    this.globalIndexKey = `${this.prefix}${INDEX_FOLDER}all.idx`;
    this.shardsChannelKey = `${this.prefix}${SHARDS_CHANNEL_MANIFEST}`;
    this.indexChannelKey = `${this.prefix}${INDEX_CHANNEL_MANIFEST}`;
    this.planPrefix = `${PLAN_ROOT}${id}/`;
    this.rootCopies = [
      { versionKey: this.shardsChannelKey, rootKey: SHARDS_CHANNEL_MANIFEST },
      { versionKey: this.indexChannelKey, rootKey: INDEX_CHANNEL_MANIFEST },
      { versionKey: this.manifestKey, rootKey: MANIFEST_KEY },
    ];
  }

  /** The sequence number of the version. */
  public get sequence(): number {
    return versionSequence(this.id)!;
  }

  /** The shard's inputs, one JSON array per line (see members.ts). */
  public membersKey(shardName: string): string {
    return `${this.prefix}${membersKeyInVersion(shardName)}`;
  }

  /** A key relative to the version's folder (what a shard writer rooted there wrote) as a key of the dataset. */
  public rebase(keyInVersion: string): string {
    return `${this.prefix}${keyInVersion}`;
  }
}

/** `members/<shard>.jsonl`, relative to a version's folder. */
export function membersKeyInVersion(shardName: string): string {
  return `${MEMBERS_FOLDER}${shardName}.jsonl`;
}

/** The version folder a key of the dataset lies in, or undefined outside `versions/`. */
export function versionOfKey(key: string): string | undefined {
  if (!key.startsWith(VERSIONS_PREFIX)) return undefined;
  const id = key.slice(VERSIONS_PREFIX.length).split('/', 1)[0];
  return versionSequence(id) === undefined ? undefined : id;
}

/** A key stays inside the dataset: relative, `/`-separated, no `.` or `..` segment, no empty segment. */
export function isConfinedKey(key: string): boolean {
  if (typeof key !== 'string' || key === '' || key.startsWith('/') || key.includes('\\')) return false;
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}
