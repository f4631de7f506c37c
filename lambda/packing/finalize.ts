import { GlobalRecordIoIndex, parseMxnetIndex } from './formats';
import type { ShardFormatName } from './formats/shard-format';
import type { PackingSink } from './io/storage';
import { sortByKeyInCodePointOrder } from './planning/key-order';
import type { Manifest, ManifestFailure, ManifestShard} from './manifest';
import {
  checkTotals, GLOBAL_INDEX_KEY, INDEX_PREFIX, MANIFEST_KEY, serializeManifest, SHARDS_PREFIX,
} from './manifest';

/** What the shards of a run produced, in shard order. */
export interface FinalizeInput {
  readonly sink: PackingSink;
  readonly format: ShardFormatName;
  readonly seed: number;
  readonly source: Manifest['source'];
  readonly labels: Record<string, number>;
  readonly shards: ManifestShard[];
  readonly failures: ManifestFailure[];
}

/** The totals do not add up: some input is neither a record nor a listed failure. */
export class IncompleteDatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IncompleteDatasetError';
  }
}

/**
 * Completes a packed dataset: for RecordIO the one index over all shards (read back from the
 * per-shard indexes, so it works the same after Lambda packers as after the CLI), then the
 * manifest, last, and only if records + failures account for every source object.
 */
export async function finalizeDataset(input: FinalizeInput): Promise<Manifest> {
  const failures = sortByKeyInCodePointOrder([...input.failures]);
  const manifest: Manifest = {
    version: 1,
    format: input.format,
    seed: input.seed,
    source: input.source,
    labels: input.labels,
    records: input.shards.reduce((sum, shard) => sum + shard.records, 0),
    shards: input.shards,
    ...(input.format === 'recordio' ? { globalIndexKey: GLOBAL_INDEX_KEY } : {}),
    failures,
  };
  const problem = checkTotals(manifest);
  if (problem) throw new IncompleteDatasetError(`not writing ${MANIFEST_KEY}: ${problem}`);

  if (input.format === 'recordio') await writeGlobalIndex(input.sink, input.shards);
  await removeStaleObjects(input.sink, manifest);
  await input.sink.put(MANIFEST_KEY, serializeManifest(manifest));
  return manifest;
}

/** Shard indexes read at once while the global index is written (S3 reads are latency-bound). */
const INDEX_READ_AHEAD = 16;

/**
 * The RecordIO index over all shards, streamed: the shard indexes are read a few ahead and written
 * in shard order, so memory holds a few shards' lines, not the dataset's.
 */
async function writeGlobalIndex(sink: PackingSink, shards: readonly ManifestShard[]): Promise<void> {
  const read = (shard: ManifestShard) => {
    const records = sink.get(shard.indexKey).then((data) => parseMxnetIndex(data.toString('utf8')));
    // A read ahead may fail before its turn: handled now, it still rejects where it is awaited.
    records.catch(() => undefined);
    return records;
  };
  // The reads in flight, oldest first: shard `position` is the head.
  const ahead = shards.slice(0, INDEX_READ_AHEAD).map(read);
  const writer = await sink.create(GLOBAL_INDEX_KEY);
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

/** Shard and index names the engine writes: only these are ever removed. */
const PART_FILE = /^(shards|index)\/(\.)?part-\d+-of-\d+(\.tfrecord|\.rec|\.idx)(\.[0-9a-f]+\.partial)?$/;

/**
 * Removes the shards and indexes of an earlier run into the same place that this run did not
 * rewrite (a different shard count or format): a channel reads everything under `shards/`.
 */
async function removeStaleObjects(sink: PackingSink, manifest: Manifest): Promise<void> {
  const current = new Set(manifest.shards.flatMap((shard) => [shard.key, shard.indexKey]));
  const existing = [...await sink.list(SHARDS_PREFIX), ...await sink.list(INDEX_PREFIX)];
  const stale = existing.filter((key) => !current.has(key) && (PART_FILE.test(key) || (key === GLOBAL_INDEX_KEY && !manifest.globalIndexKey)));
  await Promise.all(stale.map((key) => sink.delete(key)));
}
