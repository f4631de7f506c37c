import { crc32c } from '@node-rs/crc32';
import { crc32 as zlibCrc32 } from 'node:zlib';
import type {
  Feature, RecordIoShardIndex, ShardRecord} from './formats';
import {
  decodeExample, FormatError, GlobalRecordIoIndex, parseMxnetIndex, parseTfRecordIndex, readRecordIo, readTfRecords, unpackImageRecord,
} from './formats';
import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import { JsonLimitError, parseBoundedJson } from '../io/bounded-json';
import { quoted } from '../io/printable';
import type { Manifest, ManifestShard } from './manifest';
import { checkTotals, MANIFEST_FORMAT_VERSION } from './manifest';
import { crc32Base64, crc32cBase64 } from '../io/s3-checksum';
import { isConfinedKey, MANIFEST_KEY, VersionLayout, versionSequence } from './dataset-layout';
import { unlistedObjects } from './leftovers';
import { MemberListError, parseMembers } from './members';
import { currentVersion, publishedClaims } from './publish';
import { imageCheckFailure, READER_RULES } from './image-check/image-check';
import { samplePartProblem } from './samples/sample-records';
import type { SampleDescription } from '../../lib/contract/sample-parts';
import { SAMPLE_KEY_FEATURE } from '../../lib/contract/sample-parts';

/** What verification found. */
export interface VerifyReport {
  /** The manifest, when it could be read. */
  readonly manifest?: Manifest;
  /** Each problem names the object and what is wrong; empty when the dataset is sound. */
  readonly problems: string[];
  readonly shardsChecked: number;
  readonly recordsChecked: number;
  readonly bytesChecked: number;
  /**
   * Objects in the version's `shards/`, `index/` and `members/` that its manifest does not list: a
   * packer attempt's write that landed after its version was published (leftovers.ts). Not a
   * problem of the version (its readers open what the manifest lists), but a reader of the folder
   * would read them too: `verify --repair` and the next publish remove them. Undefined when the
   * manifest could not be read.
   */
  readonly leftovers?: string[];
}

/** Where verification reads a packed dataset from: any sink can read back what it wrote. */
export type DatasetReader = Pick<PackingSink, 'get' | 'list' | 'uri'>;

/** What to verify. */
/** How far a verification is. */
export interface VerifyProgress {
  readonly shardsDone: number;
  readonly totalShards: number;
  readonly bytesDone: number;
  readonly totalBytes: number;
}

export interface VerifyOptions {
  /** A version id: that version's own manifest instead of the current one (the root's `manifest.json`). */
  readonly version?: string;
  /** Called before the first shard and after each: shards and their bytes (as the manifest lists them) checked so far. */
  readonly onProgress?: (progress: VerifyProgress) => void;
  /**
   * Also check every record's image as the pack-time check does (lambda/packing/image-check/):
   * for datasets packed before it, or with `--content any`. Each record that the training readers
   * could not decode is a problem naming the shard, the record's offset, its file and the reason.
   * In a multi-part dataset every part is checked by its kind as the packer checks it
   * (samples/sample-records.ts samplePartProblem): image parts decoded, JSON parts parsed.
   */
  readonly images?: boolean;
}

/**
 * Re-reads a packed dataset: every shard's size and CRC32C against the manifest, every record's
 * framing CRCs, record ids and labels, every index line against the records, RecordIO's global
 * index against the per-shard ones, and the manifest totals against the source. Keys that leave the
 * dataset are reported, never read; an object under `shards/` or `index/` that the manifest does
 * not list is a leftover (reported apart: VerifyReport.leftovers), a key it lists twice a problem.
 */
export async function verifyDataset(dataset: DatasetReader, options: VerifyOptions = {}): Promise<VerifyReport> {
  if (options.version !== undefined && versionSequence(options.version) === undefined) {
    return { problems: [`'${options.version}' is not a version id (v<8 digits>-<8 hex digits>)`], shardsChecked: 0, recordsChecked: 0, bytesChecked: 0 };
  }
  if (options.version !== undefined) {
    const unpublished = await checkPublished(dataset, options.version);
    if (unpublished) return { problems: [unpublished], shardsChecked: 0, recordsChecked: 0, bytesChecked: 0 };
  }
  const manifestKey = options.version === undefined ? MANIFEST_KEY : new VersionLayout(options.version).manifestKey;
  let manifest: Manifest;
  try {
    manifest = parseBoundedJson(manifestKey, await dataset.get(manifestKey)) as Manifest;
  } catch (error) {
    // Only a manifest that is not there says the dataset is incomplete; a store that did not answer says nothing of it.
    const why = isObjectNotFound(error) ? 'the dataset is incomplete or not a packed dataset'
      : error instanceof SyntaxError || error instanceof JsonLimitError ? 'it is not a manifest this engine writes, so nothing was checked'
        : 'the store could not be read, so nothing was checked';
    return {
      problems: [`${manifestKey}: cannot be read (${(error as Error).message}); ${why}`],
      shardsChecked: 0, recordsChecked: 0, bytesChecked: 0,
    };
  }
  if (manifest.version !== MANIFEST_FORMAT_VERSION || typeof manifest.datasetVersion !== 'string' || versionSequence(manifest.datasetVersion) === undefined) {
    return {
      manifest,
      problems: [`${manifestKey}: manifest version ${String(manifest.version)} without a dataset version; this engine checks version `
        + `${MANIFEST_FORMAT_VERSION} (a dataset packed before versions: pack it again)`],
      shardsChecked: 0, recordsChecked: 0, bytesChecked: 0,
    };
  }
  if (options.version !== undefined && manifest.datasetVersion !== options.version) {
    // Read as the pinned version, it would be checked as one that was never published.
    return { problems: [`${manifestKey}: names version ${quoted(String(manifest.datasetVersion))}, not ${options.version}: not that version's manifest`],
      shardsChecked: 0, recordsChecked: 0, bytesChecked: 0 };
  }
  const problems: string[] = [];
  const totals = checkTotals(manifest);
  if (totals) problems.push(`${manifestKey}: ${totals}`);
  if (options.version === undefined) await checkCurrent(dataset, manifest, problems);
  const labelCount = Object.keys(manifest.labels).length;
  const confined = checkListedKeys(manifest, manifestKey, problems);
  let recordsChecked = 0;
  let bytesChecked = 0;
  const globalIndex = manifest.format === 'recordio' ? await GlobalIndexCheck.read(dataset, manifest, problems) : undefined;
  const failed = new Set(manifest.failures.map((failure) => failure.key));
  const progress = { shardsDone: 0, totalShards: manifest.shards.length, bytesDone: 0, totalBytes: manifest.shards.reduce((sum, shard) => sum + shard.bytes, 0) };
  options.onProgress?.({ ...progress });

  for (const [position, shard] of manifest.shards.entries()) {
    if (!confined.has(shard.key) || !confined.has(shard.indexKey)) continue;
    const checked = await verifyShard(dataset, manifest, shard, labelCount, problems, options.images === true);
    if (confined.has(shard.membersKey)) await verifyMembers(dataset, shard, failed, problems);
    recordsChecked += checked.records.length;
    bytesChecked += checked.bytes;
    globalIndex?.next({ records: checked.ids.map((id, i) => ({ id, offset: checked.records[i].offset })), bytes: checked.bytes });
    progress.shardsDone = position + 1;
    progress.bytesDone += shard.bytes;
    options.onProgress?.({ ...progress });
  }
  globalIndex?.finish();
  const leftovers = await unlistedObjects(dataset, manifest);
  return { manifest, problems, shardsChecked: manifest.shards.length, recordsChecked, bytesChecked, leftovers };
}

/**
 * Checks RecordIO's global index against the shards' records, a shard at a time: the index is read
 * once as bytes and each shard's expected lines are compared with the next slice of it, so the
 * records' ids and offsets are never held for the whole dataset.
 */
class GlobalIndexCheck {
  public static async read(dataset: DatasetReader, manifest: Manifest, problems: string[]): Promise<GlobalIndexCheck | undefined> {
    const key = manifest.globalIndexKey ?? '(missing globalIndexKey)';
    if (leavesDataset(key)) return undefined;
    const text = await dataset.get(key).catch((error: Error) => {
      problems.push(`${key}: cannot be read (${error.message})`);
      return undefined;
    });
    return text && new GlobalIndexCheck(key, text, problems);
  }

  private readonly expected = new GlobalRecordIoIndex();
  private checked = 0;
  private matches = true;

  private constructor(private readonly key: string, private readonly text: Buffer, private readonly problems: string[]) {}

  public next(shard: RecordIoShardIndex): void {
    if (!this.matches) return;
    const lines = Buffer.from(this.expected.part(shard));
    this.matches = lines.equals(this.text.subarray(this.checked, this.checked + lines.length));
    this.checked += lines.length;
  }

  public finish(): void {
    if (!this.matches || this.checked !== this.text.length) {
      this.problems.push(`${this.key}: does not match the records of the shards in order (global offsets)`);
    }
  }
}

/**
 * A version asked for by id must have been published: the folder of a run that crashed or lost the
 * race to publish may hold a complete-looking manifest, and no reader is ever given it. The problem
 * names the version and the published ones, or undefined when it is published.
 */
async function checkPublished(dataset: DatasetReader, version: string): Promise<string | undefined> {
  let published: string[];
  try {
    published = (await publishedClaims(dataset)).map((claim) => claim.datasetVersion);
  } catch (error) {
    return `published/: the claims cannot be read (${(error as Error).message}), so whether ${version} was published is unknown`;
  }
  if (published.includes(version)) return undefined;
  return `version ${version} was never published in ${dataset.uri}; published versions: ${published.length > 0 ? published.join(', ') : 'none'}`;
}

/**
 * A shard's member list (what the next repack compares to tell which shards changed) is there,
 * parses, and accounts for the shard: its inputs, less those listed as failures, are the shard's records.
 */
async function verifyMembers(dataset: DatasetReader, shard: ManifestShard, failed: ReadonlySet<string>, problems: string[]): Promise<void> {
  const fullRepack = 'the next incremental pack cannot use this version; a full repack (--full) rewrites it';
  const data = await dataset.get(shard.membersKey).catch((error: Error) => {
    problems.push(`${shard.membersKey}: cannot be read (${error.message}); ${fullRepack}`);
    return undefined;
  });
  if (!data) return;
  let members;
  try {
    members = parseMembers(shard.membersKey, data);
  } catch (error) {
    if (!(error instanceof MemberListError)) throw error;
    problems.push(`${error.message}; ${fullRepack}`);
    return;
  }
  const packed = members.filter((member) => !failed.has(member.key)).length;
  if (packed !== shard.records) {
    problems.push(`${shard.membersKey}: ${members.length} members, ${packed} of them not listed as failures, but ${shard.key} has ${shard.records} records `
      + `in the manifest; ${fullRepack}`);
  }
}

/** The root's manifest is the newest published version's: a reader of the root reads what was published last. */
async function checkCurrent(dataset: DatasetReader, manifest: Manifest, problems: string[]): Promise<void> {
  const current = await currentVersion(dataset).catch((error: Error) => {
    problems.push(`published/: the claims cannot be read (${error.message})`);
    return undefined;
  });
  if (!current) {
    problems.push(`${MANIFEST_KEY}: names version ${manifest.datasetVersion}, but no version is published (published/ is empty)`);
    return;
  }
  if (current.datasetVersion !== manifest.datasetVersion) {
    problems.push(`${MANIFEST_KEY}: names version ${manifest.datasetVersion}, but the newest published version is ${current.datasetVersion} `
      + '(a run stopped after publishing: training-io verify --repair, or the next pack, rewrites the root\'s copies)');
  }
  // FastFile and FSx jobs read manifest.json, File and Pipe jobs the channel manifests: all must name one version.
  for (const { versionKey, rootKey } of new VersionLayout(current.datasetVersion).rootCopies.filter((copy) => copy.rootKey !== MANIFEST_KEY)) {
    const [wanted, held] = await Promise.all([versionKey, rootKey].map((key) => dataset.get(key).catch((error: unknown) => {
      if (isObjectNotFound(error)) return undefined;
      problems.push(`${key}: cannot be read (${(error as Error).message})`);
      return undefined;
    })));
    if (wanted && !held?.equals(wanted)) {
      problems.push(`${rootKey}: is not the channel manifest of the newest published version ${current.datasetVersion} (${versionKey}); `
        + 'jobs that read it would train on another version than manifest.json names: training-io verify --repair, or the next pack, rewrites it');
    }
  }
}

/**
 * Keys that stay inside the dataset (relative, no `..`, `.` or empty segment, no backslash); each
 * other key, and each key listed twice, is a problem.
 */
function checkListedKeys(manifest: Manifest, manifestKey: string, problems: string[]): Set<string> {
  const listed = [
    ...manifest.shards.flatMap((shard) => [shard.key, shard.indexKey, shard.membersKey]),
    ...(manifest.globalIndexKey ? [manifest.globalIndexKey] : []),
  ];
  const confined = new Set<string>();
  for (const key of listed) {
    if (!isConfinedKey(key)) {
      problems.push(`${manifestKey}: key ${JSON.stringify(key)} leaves the dataset; keys must be relative paths inside it`);
    } else if (confined.has(key)) {
      problems.push(`${key}: listed more than once in ${manifestKey}`);
    } else {
      confined.add(key);
    }
  }
  return confined;
}

function leavesDataset(key: unknown): boolean {
  return typeof key !== 'string' || !isConfinedKey(key);
}

interface CheckedShard {
  readonly records: ShardRecord[];
  readonly ids: number[];
  readonly bytes: number;
}

async function verifyShard(dataset: DatasetReader, manifest: Manifest, shard: ManifestShard, labelCount: number,
  problems: string[], checkImages: boolean): Promise<CheckedShard> {
  const none: CheckedShard = { records: [], ids: [], bytes: 0 };
  const data = await dataset.get(shard.key).catch((error: Error) => {
    problems.push(`${shard.key}: cannot be read (${error.message})`);
    return undefined;
  });
  if (!data) return none;
  if (data.length !== shard.bytes) problems.push(`${shard.key}: ${data.length} bytes, the manifest says ${shard.bytes}`);
  const crc = crc32cBase64(crc32c(data));
  if (crc !== shard.crc32c) problems.push(`${shard.key}: CRC32C ${crc}, the manifest says ${shard.crc32c}`);
  const zlibCrc = crc32Base64(zlibCrc32(data));
  if (shard.crc32 !== undefined && zlibCrc !== shard.crc32) problems.push(`${shard.key}: CRC32 ${zlibCrc}, the manifest says ${shard.crc32}`);

  let records: ShardRecord[];
  try {
    records = manifest.format === 'tfrecord' ? [...readTfRecords(data)] : [...readRecordIo(data)];
  } catch (error) {
    if (!(error instanceof FormatError)) throw error;
    problems.push(`${shard.key}: ${error.message}`);
    return { ...none, bytes: data.length };
  }
  if (records.length !== shard.records) problems.push(`${shard.key}: ${records.length} records, the manifest says ${shard.records}`);

  const ids: number[] = [];
  for (const record of records) {
    try {
      const { id, label, filename, image, sample } = describeRecord(manifest, record.payload);
      ids.push(id);
      if (sample) {
        for (const problem of sampleProblems(manifest.sample!, sample, checkImages)) problems.push(`${shard.key}: record at offset ${record.offset} (${sample.key}): ${problem}`);
      } else {
        const undecodable = checkImages ? imageCheckFailure(image!, READER_RULES) : undefined;
        if (undecodable) problems.push(`${shard.key}: record at offset ${record.offset}${filename === undefined ? '' : ` (${filename})`}: ${undecodable}`);
      }
      // A sample's class is its key's first folder as its image part's is (a sample without an image part has no file name).
      const named = filename ?? sample?.key;
      if (labelCount > 0 ? !(Number.isInteger(label) && label >= 0 && label < labelCount) : label !== -1) {
        problems.push(`${shard.key}: record at offset ${record.offset} has label ${label}, outside the ${labelCount} classes of the manifest`);
      } else if (labelCount > 0 && manifest.labelSource === undefined && named !== undefined && manifest.labels[named.split('/')[0]] !== label) {
        // The class is the file's first folder: a label that names another class trains the model wrong without a sound of protest.
        problems.push(`${shard.key}: record at offset ${record.offset} (${named}) has label ${label}, `
          + `but the label map gives its class '${named.split('/')[0]}' ${manifest.labels[named.split('/')[0]] ?? 'no label'}`);
      }
    } catch (error) {
      if (!(error instanceof FormatError)) throw error;
      problems.push(`${shard.key}: record at offset ${record.offset}: ${error.message}`);
    }
  }
  if (manifest.format === 'recordio' && records.length > 0 && (ids[0] !== shard.firstRecordId || ids[ids.length - 1] !== shard.lastRecordId)) {
    problems.push(`${shard.key}: record ids ${ids[0]}–${ids[ids.length - 1]}, the manifest says ${shard.firstRecordId}–${shard.lastRecordId}`);
  }
  await verifyIndex(dataset, manifest, shard, records, ids, problems);
  return { records, ids, bytes: data.length };
}

/** A multi-part record's sample key and the parts it holds, by part name (the image part's bytes are `image/encoded`'s). */
interface RecordSample {
  readonly key: string;
  readonly parts: ReadonlyMap<string, Buffer>;
}

/** What verify reads from a record. */
interface DescribedRecord {
  /** The RecordIO id; TFRecord Examples carry none: -1. */
  readonly id: number;
  readonly label: number;
  /** The file's key, where the record keeps one (TFRecord's `image/filename`). */
  readonly filename?: string;
  /** The image bytes of a one-file record. */
  readonly image?: Buffer;
  /** In a multi-part dataset (manifest `sample`), the record's sample. */
  readonly sample?: RecordSample;
}

/** The id, label, file name and image bytes a record carries, or in a multi-part dataset its sample's key and parts. */
function describeRecord(manifest: Manifest, payload: Buffer): DescribedRecord {
  if (manifest.format === 'recordio') {
    const { header, data } = unpackImageRecord(payload);
    return { id: header.id, label: Object.keys(manifest.labels).length > 0 ? header.label : -1, image: data };
  }
  const example = decodeExample(payload);
  const label = example['image/class/label'];
  const filename = oneBytesValue(example['image/filename']);
  const described = {
    id: -1,
    label: label && 'int64List' in label ? Number(label.int64List[0]) : -1,
    filename: filename?.toString('utf8'),
  };
  if (manifest.sample) return { ...described, sample: recordSample(manifest.sample, example) };
  const encoded = example['image/encoded'];
  if (!encoded || !('bytesList' in encoded)) throw new FormatError('Example has no image/encoded bytes');
  return { ...described, image: encoded.bytesList[0] ?? Buffer.alloc(0) };
}

/** The sample an Example of a multi-part dataset holds (lib/contract/sample-parts.ts): its key and each part of the description it has. */
function recordSample(description: SampleDescription, example: Record<string, Feature>): RecordSample {
  const key = oneBytesValue(example[SAMPLE_KEY_FEATURE]);
  if (key === undefined) throw new FormatError(`Example has no ${SAMPLE_KEY_FEATURE} bytes, which every record of a multi-part dataset holds`);
  const parts = new Map<string, Buffer>();
  for (const { name } of description.parts) {
    const data = oneBytesValue(example[name === description.imagePart ? 'image/encoded' : name]);
    if (data !== undefined) parts.set(name, data);
  }
  return { key: key.toString('utf8'), parts };
}

/**
 * What is wrong with a multi-part record: a required part it lacks (the packer never writes a sample
 * with a hole) and, with `checkParts` (`--images`), each part that is not what its kind says, in the
 * packer's words (samplePartProblem: images decoded as the readers decode them, JSON parsed within its limits).
 */
function sampleProblems(description: SampleDescription, sample: RecordSample, checkParts: boolean): string[] {
  const problems = description.required.filter((name) => !sample.parts.has(name))
    .map((name) => `lacks the required part '${name}' (required: ${description.required.join(', ')})`);
  if (!checkParts) return problems;
  for (const [name, data] of sample.parts) {
    const problem = samplePartProblem(sample.key, name, data);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** The one value of a bytes feature, or undefined when it is absent or not one bytes value. */
function oneBytesValue(feature: Feature | undefined): Buffer | undefined {
  return feature && 'bytesList' in feature && feature.bytesList.length === 1 ? feature.bytesList[0] : undefined;
}

async function verifyIndex(dataset: DatasetReader, manifest: Manifest, shard: ManifestShard, records: ShardRecord[],
  ids: number[], problems: string[]): Promise<void> {
  const text = await dataset.get(shard.indexKey).then((b) => b.toString('utf8'), (error: Error) => {
    problems.push(`${shard.indexKey}: cannot be read (${error.message})`);
    return undefined;
  });
  if (text === undefined) return;
  try {
    const matches = manifest.format === 'tfrecord'
      ? sameList(parseTfRecordIndex(text), records.map((r) => ({ offset: r.offset, size: r.size })))
      : sameList(parseMxnetIndex(text), records.map((r, i) => ({ id: ids[i], offset: r.offset })));
    if (!matches) problems.push(`${shard.indexKey}: does not match the records of ${shard.key}`);
  } catch (error) {
    if (!(error instanceof FormatError)) throw error;
    problems.push(`${shard.indexKey}: ${error.message}`);
  }
}

function sameList<T extends object>(a: T[], b: T[]): boolean {
  return a.length === b.length && a.every((entry, i) => JSON.stringify(entry) === JSON.stringify(b[i]));
}
