import * as os from 'node:os';
import { finalizeDataset } from './finalize';
import { shardFormat } from './formats';
import type { ShardFormat, ShardFormatName } from './formats/shard-format';
import type { PackingSink, PackingSource } from './io/storage';
import { ListingCollector } from './listing/listing-collector';
import type { ListingPlan} from './listing/plan-listing';
import { planListing } from './listing/plan-listing';
import type { Manifest} from './manifest';
import { MANIFEST_KEY } from './manifest';
import { PLAN_LIMITS } from './planning/grouped-plan';
import type { LabelMode, PlannedShard } from './planning/plan-types';
import type { ShardResult} from './shard-writer';
import { writeShard } from './shard-writer';

/**
 * Writes one planned shard and reports each input file handled (its bytes, and how many files
 * the report covers). The default writes in this process; the CLI passes a worker-thread pool.
 */
export type ShardWriteFunction = (shard: PlannedShard, onFiles: (bytes: number, files: number) => void) => Promise<ShardResult>;

/** A packing run. */
export interface PackOptions {
  readonly source: PackingSource;
  readonly sink: PackingSink;
  readonly format: ShardFormatName;
  readonly seed: number;
  /** Target shard size in bytes (1–128 MiB, default 64 MiB). */
  readonly targetShardBytes?: number;
  /** Exact shard count instead of a target size. */
  readonly shardCount?: number;
  /** Instances × GPU processes × loader workers: shard count rounded up to a multiple. */
  readonly consumers?: number;
  readonly labels?: LabelMode;
  /** Files read ahead per shard (default 32). */
  readonly readConcurrency?: number;
  /** Shards written at once (default 2). */
  readonly parallelShards?: number;
  /** How shards are written (default: in this process, from `source` to `sink`). */
  readonly writeShard?: ShardWriteFunction;
  readonly onProgress?: (progress: PackProgress) => void;
  /**
   * Where a listing too large to hold (over 131,072 files) is sorted and grouped, in a folder
   * removed at the end (about 60 bytes a file, twice). Default: the system's temporary folder.
   */
  readonly scratchDirectory?: string;
  /**
   * Called once if the listing is too large to hold and goes to `scratchDirectory`: the CLI then
   * has V8 favour memory over speed for the rest of the run (see bin/cli/pack.ts).
   */
  readonly onLargeListing?: () => void;
}

/** How far a run is. */
export interface PackProgress {
  readonly filesDone: number;
  readonly bytesDone: number;
  readonly totalFiles: number;
  readonly totalBytes: number;
  readonly shardsDone: number;
  readonly totalShards: number;
}

/**
 * Packs a source into shards, indexes and a manifest: list → plan → write shards (a few at once,
 * each with bounded read-ahead) → finalize (merged index, manifest last). Inputs that cannot be
 * read are listed in the manifest's failures, never dropped. Listings of more than 131,072 files
 * are sorted and planned through files in `scratchDirectory`, a group at a time (see planListing).
 */
export async function packDataset(options: PackOptions): Promise<Manifest> {
  const format = shardFormat(options.format);
  const recordBytes = format.recordBytes.bind(format);
  const collector = new ListingCollector(PLAN_LIMITS.groupFiles, options.scratchDirectory ?? os.tmpdir(), options.onLargeListing, recordBytes);
  try {
    for await (const batch of options.source.list()) collector.add(batch);
    const plan = planListing(collector, {
      seed: options.seed,
      targetShardBytes: options.targetShardBytes,
      shardCount: options.shardCount,
      consumers: options.consumers,
      labels: options.labels,
      recordBytes,
    });
    // The manifest says "complete": an earlier run's must not vouch for shards this run is rewriting.
    await options.sink.delete(MANIFEST_KEY);
    const results = await writeShards(plan, options, format);
    return await finalizeDataset({
      sink: options.sink,
      format: options.format,
      seed: plan.seed,
      source: {
        uri: options.source.uri,
        objects: plan.totalFiles,
        bytes: plan.totalBytes,
        fingerprint: results.fingerprint,
      },
      labels: plan.labelMap,
      shards: results.shards.map((r) => r.shard),
      failures: results.shards.flatMap((r) => r.failures),
    });
  } finally {
    collector.dispose();
  }
}

/** Writes every shard of the plan, a few at once, taking the plan's groups as they are needed. */
async function writeShards(plan: ListingPlan, options: PackOptions, format: ShardFormat) {
  const progress = { filesDone: 0, bytesDone: 0, totalFiles: plan.totalFiles, totalBytes: plan.totalBytes, shardsDone: 0, totalShards: plan.shardCount };
  const report = () => options.onProgress?.({ ...progress });
  report();

  const write: ShardWriteFunction = options.writeShard ?? ((shard, onFiles) => writeShard(shard, {
    source: options.source,
    sink: options.sink,
    format,
    readConcurrency: options.readConcurrency ?? 32,
    onFile: (bytes) => onFiles(bytes, 1),
  }));
  const results = new Array<ShardResult>(plan.shardCount);
  const groups = plan.groups[Symbol.iterator]();
  let group: Array<PlannedShard | undefined> = [];
  let taken = 0;
  const nextShard = (): PlannedShard | undefined => {
    while (taken === group.length) {
      const next = groups.next();
      if (next.done) return undefined;
      group = next.value;
      taken = 0;
    }
    const shard = group[taken];
    // Once dispatched, a shard's records are let go: the live heap keeps the shards in flight only.
    group[taken++] = undefined;
    return shard;
  };
  // After a failure no shard starts, and the run rejects only once the shards in flight are done:
  // nothing keeps writing after the caller has been told the run failed.
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (!failure) {
      try {
        const shard = nextShard();
        if (!shard) return;
        results[shard.index] = await write(shard, (bytes, files) => {
          progress.filesDone += files;
          progress.bytesDone += bytes;
          report();
        });
      } catch (error) {
        failure ??= { error };
        return;
      }
      progress.shardsDone++;
      report();
    }
  };
  const writing = Promise.all(Array.from({ length: Math.max(1, options.parallelShards ?? 2) }, worker));
  // A listing held in memory is fingerprinted (a sort and a hash over the whole listing) while the
  // first shards are written, once their writes have been handed over: with worker threads or S3
  // doing the writing, this thread would otherwise only wait.
  await new Promise((resolve) => setImmediate(resolve));
  const fingerprint = plan.fingerprint();
  await writing;
  if (failure) throw failure.error;
  return { shards: results, fingerprint };
}
