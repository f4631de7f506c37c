import { GlobalRecordIoIndex, parseMxnetIndex } from './formats';
import type { ShardFormatName } from './formats/shard-format';
import type { PackingSink } from '../io/storage';
import { sortByKeyInCodePointOrder } from '../io/key-order';
import type { Manifest, ManifestFailure, ManifestShard, ManifestSizing, PlannedSizing } from './manifest';
import { checkTotals, MANIFEST_FORMAT_VERSION, serializeManifest } from './manifest';
import { isConfinedKey, VERSIONS_PREFIX, VersionLayout } from './dataset-layout';
import { unlistedObjects } from './leftovers';
import { AfterClaimError, ConcurrentPublishError, publishVersion, throwIfClaimedByAnother } from './publish';
import type { PruneResult } from './prune';
import { pruneVersions } from './prune';
import { DELETES_AT_ONCE, mapLimited } from './limited';
import type { ManifestPreprocessing } from './preprocess/image-preprocessing';
import type { SampleDescription } from '../../lib/contract/sample-parts';

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
  /** As planned: `multipleOfConsumers` is counted here, on the shards the version ends up with. */
  readonly sizing: PlannedSizing;
  /** Every shard of the version in order, reused ones included, keys relative to the dataset root. */
  readonly shards: ManifestShard[];
  readonly failures: ManifestFailure[];
  /**
   * Publish the version even when some inputs are listed failures (they stay listed in its manifest).
   * Default: a version with failures is not published, and the current one stays current.
   */
  readonly allowMissing?: boolean;
  /** What was done to the images, when they were preprocessed (see manifest.ts). */
  readonly preprocessing?: ManifestPreprocessing;
  /** The multi-part samples, when the files form them (see manifest.ts). */
  readonly sample?: SampleDescription;
  /** Versions that stopped being current longer ago than this, by the store's clock, are pruned after publishing. */
  readonly retentionMs: number;
  /** The packer's clock, written into the claim for people to read (default: now); retention never uses it. */
  readonly now?: Date;
}

/** A published version and what pruning removed. */
export interface FinalizeResult {
  readonly manifest: Manifest;
  readonly prune: PruneResult;
  /**
   * The version current once the root's copies were made: this one, or a newer one that another
   * run published meanwhile (this one was then superseded; a short retention may have pruned it).
   */
  readonly currentVersion: string;
}

/** The totals do not add up: some input is neither a record nor a listed failure. */
export class IncompleteDatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IncompleteDatasetError';
  }
}

/** Some inputs are listed failures and the run was not allowed to publish without them: nothing was published. */
export class MissingFilesError extends Error {
  constructor(
    public readonly datasetVersion: string,
    /** The version that stays current (null when the dataset has none yet). */
    public readonly previousVersion: string | null,
    public readonly failures: readonly ManifestFailure[],
  ) {
    const shown = failures.slice(0, MISSING_FILES_SHOWN).map((failure) => `${failure.key}: ${failure.reason}`).join('; ');
    const more = failures.length > MISSING_FILES_SHOWN ? `; and ${failures.length - MISSING_FILES_SHOWN} more` : '';
    super(`not publishing ${datasetVersion}: ${failures.length} file(s) could not be packed (${shown}${more}); `
      + `${previousVersion ? `${previousVersion} stays current` : 'the dataset has no published version yet'}. Fix or remove those files `
      + 'and pack again, or allow publishing without them (training-io pack --allow-missing, ShardedDataset allowMissing)');
    this.name = 'MissingFilesError';
  }
}

/** Failures a MissingFilesError's message names (Step Functions keeps 32,768 characters of an error's cause). */
const MISSING_FILES_SHOWN = 20;

/**
 * Completes, publishes and prunes a dataset version, for the CLI's pack and the Lambda finalizer
 * alike: for RecordIO the one index over all its shards (read back from the per-shard indexes, so
 * it works the same after Lambda packers as after the CLI), the version's manifest and channel
 * manifests, a check that every object it lists is there, then the atomic publish (publish.ts) and
 * the prune (prune.ts). Nothing is published unless records + failures account for every source
 * object, nor with any failure unless `allowMissing` (MissingFilesError). A shard left without
 * records (its only inputs were failures) is left out of the manifest, and every object in the
 * version's folder that the manifest does not list is deleted: readers never see an empty shard
 * or another packer attempt's. An error before the claim is thrown as it is: the caller may delete the version's
 * folder. At the claim or after it, the error is a ConcurrentPublishError (another run took the
 * number: nothing of this run was published) or an AfterClaimError (delete nothing).
 */
export async function finalizeDataset(input: FinalizeInput): Promise<FinalizeResult> {
  const manifest = await prepareVersion(input);
  const current = await publishVersion(input.sink, manifest, input.now).catch((error: unknown) => {
    if (error instanceof ConcurrentPublishError || error instanceof AfterClaimError) throw error;
    throw new AfterClaimError(manifest.datasetVersion, false, 'confirming the claim', error);
  });
  const prune = await pruneVersions(input.sink, input.retentionMs).catch((error: unknown) => {
    throw new AfterClaimError(manifest.datasetVersion, true, 'pruning old versions', error);
  });
  return { manifest, prune, currentVersion: current.datasetVersion };
}

/** Everything before the claim: the version's objects written and checked, its manifest returned. */
async function prepareVersion(input: FinalizeInput): Promise<Manifest> {
  const layout = new VersionLayout(input.datasetVersion);
  const failures = sortByKeyInCodePointOrder([...input.failures]);
  const shards = input.shards.filter((shard) => shard.records > 0);
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
    records: shards.reduce((sum, shard) => sum + shard.records, 0),
    sizing: sizingOf(input.sizing, shards),
    shards,
    ...(input.format === 'recordio' ? { globalIndexKey: layout.globalIndexKey } : {}),
    failures,
    ...(input.preprocessing ? { preprocessing: input.preprocessing } : {}),
    ...(input.sample ? { sample: input.sample } : {}),
  };
  const problem = checkTotals(manifest);
  if (problem) throw new IncompleteDatasetError(`not publishing ${layout.id}: ${problem}`);
  if (failures.length > 0 && !input.allowMissing) throw new MissingFilesError(layout.id, input.previousVersion, failures);

  // A run that lost the race to publish says so before anything else (the winner may have pruned its objects).
  await throwIfClaimedByAnother(input.sink, layout.id, input.previousVersion);
  await removeUnlistedObjects(input.sink, manifest);
  if (input.format === 'recordio') await writeGlobalIndex(input.sink, layout.globalIndexKey, shards);
  await checkObjectsPresent(input.sink, manifest);
  await input.sink.put(layout.manifestKey, serializeManifest(manifest));
  if (input.sink.uri.startsWith('s3://')) {
    await input.sink.put(layout.shardsChannelKey, channelManifest(input.sink.uri, manifest.shards.map((shard) => shard.key)));
    await input.sink.put(layout.indexChannelKey, channelManifest(input.sink.uri, [
      layout.manifestKey, ...manifest.shards.map((shard) => shard.indexKey), ...(manifest.globalIndexKey ? [manifest.globalIndexKey] : []),
    ]));
  }
  return manifest;
}

/** The planned sizing, with whether the shards the version ends up with are a multiple of the consumers (the key order of earlier manifests). */
function sizingOf(planned: PlannedSizing, shards: readonly ManifestShard[]): ManifestSizing {
  const { targetShardBytes, shardCount, consumers, reusedShards } = planned;
  return { targetShardBytes, shardCount, consumers, multipleOfConsumers: shards.length % consumers === 0, reusedShards };
}

/**
 * Deletes the objects in this version's `shards/`, `index/` and `members/` that its manifest will
 * not list: those of shards that hold no record (every input planned into them was a listed
 * failure; one file over the shard limit is planned alone), and those of Lambda packer attempts
 * whose result was not the one adopted (an attempt that crashed after writing its shard). A reader
 * of the version's folder sees exactly the manifest's shards. Shards reused from older versions
 * lie in their folders, never touched here; the RecordIO global index is written after this.
 */
async function removeUnlistedObjects(sink: PackingSink, manifest: Manifest): Promise<void> {
  await mapLimited(await unlistedObjects(sink, manifest), DELETES_AT_ONCE, (key) => sink.delete(key));
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
