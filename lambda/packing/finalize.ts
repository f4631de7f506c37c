import { GlobalRecordIoIndex, parseMxnetIndex } from './formats';
import type { ShardFormatName } from './formats/shard-format';
import type { PackingSink } from './io/storage';
import type { ImagePreprocessing } from './preprocess/image-preprocessing';
import { sortByKeyInCodePointOrder } from './planning/key-order';
import type { Manifest, ManifestFailure, ManifestShard, ManifestSizing } from './manifest';
import { checkTotals, MANIFEST_FORMAT_VERSION, serializeManifest } from './manifest';
import { isConfinedKey, VERSIONS_PREFIX, VersionLayout } from './dataset-layout';
import { publishVersion, throwIfClaimedByAnother } from './publish';

/** What the shards of a run produced, in shard order. */
export interface FinalizeInput {
  readonly sink: PackingSink;
  /** The version this run made. */
  readonly datasetVersion: string;
  /** The version it was planned from, whose shards it may reuse. */
  readonly previousVersion: string | null;
  readonly format: ShardFormatName;
  readonly seed: number;
  readonly source: Manifest['source'];
  readonly labels: Record<string, number>;
  readonly sizing: ManifestSizing;
  /** Every shard of the version in order, reused ones included, keys relative to the dataset root. */
  readonly shards: ManifestShard[];
  readonly failures: ManifestFailure[];
  /** The image preprocessing the packers applied (absent: none), for the manifest's record of it. */
  readonly preprocessing?: ImagePreprocessing;
  /** When the version is published (default: now). */
  readonly now?: Date;
}

/** The totals do not add up: some input is neither a record nor a listed failure. */
export class IncompleteDatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IncompleteDatasetError';
  }
}

/**
 * Completes and publishes a dataset version: for RecordIO the one index over all its shards (read
 * back from the per-shard indexes, so it works the same after Lambda packers as after the CLI),
 * the version's manifest and channel manifests, a check that every object it lists is there, then
 * the atomic publish (publish.ts). Nothing is published unless records + failures account for
 * every source object.
 */
export async function finalizeDataset(input: FinalizeInput): Promise<Manifest> {
  const layout = new VersionLayout(input.datasetVersion);
  const failures = sortByKeyInCodePointOrder([...input.failures]);
  const manifest: Manifest = {
    version: MANIFEST_FORMAT_VERSION,
    datasetVersion: layout.id,
    sequence: layout.sequence,
    previousVersion: input.previousVersion,
    format: input.format,
    seed: input.seed,
    source: input.source,
    labels: input.labels,
    classes: Object.keys(input.labels).length,
    records: input.shards.reduce((sum, shard) => sum + shard.records, 0),
    sizing: input.sizing,
    shards: input.shards,
    ...(input.format === 'recordio' ? { globalIndexKey: layout.globalIndexKey } : {}),
    failures,
  };
  const problem = checkTotals(manifest);
  if (problem) throw new IncompleteDatasetError(`not publishing ${layout.id}: ${problem}`);

  // A run that lost the race to publish says so before anything else (the winner may have pruned its objects).
  await throwIfClaimedByAnother(input.sink, layout.id, input.previousVersion);
  if (input.format === 'recordio') await writeGlobalIndex(input.sink, layout.globalIndexKey, input.shards);
  await checkObjectsPresent(input.sink, manifest);
  await input.sink.put(layout.manifestKey, serializeManifest(manifest));
  if (input.sink.uri.startsWith('s3://')) {
    await input.sink.put(layout.shardsChannelKey, channelManifest(input.sink.uri, manifest.shards.map((shard) => shard.key)));
    await input.sink.put(layout.indexChannelKey, channelManifest(input.sink.uri, [
      layout.manifestKey, ...manifest.shards.map((shard) => shard.indexKey), ...(manifest.globalIndexKey ? [manifest.globalIndexKey] : []),
    ]));
  }
  await publishVersion(input.sink, manifest, input.now);
  return manifest;
}

/**
 * A SageMaker ManifestFile: a prefix, then keys relative to it. A channel over it reads exactly
 * these objects, in this order, whatever else lies under the dataset.
 */
export function channelManifest(datasetUri: string, keys: readonly string[]): Buffer {
  return Buffer.from(`${JSON.stringify([{ prefix: datasetUri }, ...keys])}\n`);
}

/** Every key the manifest lists is confined to the dataset and present: a reader never trips on a missing shard. */
async function checkObjectsPresent(sink: PackingSink, manifest: Manifest): Promise<void> {
  const wanted = manifest.shards.flatMap((shard) => [shard.key, shard.indexKey, shard.membersKey]);
  const outside = wanted.find((key) => !isConfinedKey(key) || !key.startsWith(VERSIONS_PREFIX));
  if (outside !== undefined) throw new IncompleteDatasetError(`not publishing ${manifest.datasetVersion}: key '${outside}' is not in a version's folder`);
  const folders = [...new Set(wanted.map((key) => key.split('/', 2).join('/') + '/'))];
  const present = new Set((await Promise.all(folders.map((folder) => sink.list(folder)))).flat());
  const missing = wanted.filter((key) => !present.has(key));
  if (missing.length > 0) {
    throw new IncompleteDatasetError(`not publishing ${manifest.datasetVersion}: ${missing.length} listed object(s) missing, `
      + `e.g. ${missing.slice(0, 3).map((key) => `${sink.uri}${key}`).join(', ')}`);
  }
}

/** Shard indexes read at once while the global index is written (S3 reads are latency-bound). */
const INDEX_READ_AHEAD = 16;

/**
 * The RecordIO index over all shards, streamed: the shard indexes are read a few ahead and written
 * in shard order, so memory holds a few shards' lines, not the dataset's.
 */
async function writeGlobalIndex(sink: PackingSink, globalIndexKey: string, shards: readonly ManifestShard[]): Promise<void> {
  const read = (shard: ManifestShard) => {
    const records = sink.get(shard.indexKey).then((data) => parseMxnetIndex(data.toString('utf8')));
    // A read ahead may fail before its turn: handled now, it still rejects where it is awaited.
    records.catch(() => undefined);
    return records;
  };
  // The reads in flight, oldest first: shard `position` is the head.
  const ahead = shards.slice(0, INDEX_READ_AHEAD).map(read);
  const writer = await sink.create(globalIndexKey);
  const globalIndex = new GlobalRecordIoIndex();
  try {
    for (let position = 0; position < shards.length; position++) {
      const records = await ahead.shift()!;
      if (position + INDEX_READ_AHEAD < shards.length) ahead.push(read(shards[position + INDEX_READ_AHEAD]));
      await writer.write([Buffer.from(globalIndex.part({ records, bytes: shards[position].bytes }))]);
    }
    await writer.complete();
  } catch (error) {
    await writer.abort().catch(() => undefined);
    throw error;
  }
}
