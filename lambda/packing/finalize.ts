import { mergeRecordIoIndexes, parseMxnetIndex } from './formats';
import { ShardFormatName } from './formats/shard-format';
import { PackingSink } from './io/storage';
import {
  checkTotals, compareKeys, GLOBAL_INDEX_KEY, Manifest, MANIFEST_KEY, ManifestFailure, ManifestShard, serializeManifest,
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
  const failures = [...input.failures].sort((a, b) => compareKeys(a.key, b.key));
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

  if (input.format === 'recordio') {
    const indexes = await Promise.all(input.shards.map(async (shard) => ({
      records: parseMxnetIndex((await input.sink.get(shard.indexKey)).toString('utf8')),
      bytes: shard.bytes,
    })));
    await input.sink.put(GLOBAL_INDEX_KEY, Buffer.from(mergeRecordIoIndexes(indexes)));
  }
  await input.sink.put(MANIFEST_KEY, serializeManifest(manifest));
  return manifest;
}
