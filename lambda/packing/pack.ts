import { finalizeDataset } from './finalize';
import { shardFormat } from './formats';
import { ShardFormatName } from './formats/shard-format';
import { ListedFile, PackingSink, PackingSource } from './io/storage';
import { Manifest, MANIFEST_KEY, ManifestFailure, ManifestShard, sourceFingerprint } from './manifest';
import { planShards } from './planning/plan-shards';
import { LabelMode } from './planning/plan-types';
import { PlannedShard } from './planning/plan-types';
import { ShardResult, writeShard } from './shard-writer';

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
 * read are listed in the manifest's failures, never dropped.
 */
export async function packDataset(options: PackOptions): Promise<Manifest> {
  const format = shardFormat(options.format);
  let files: ListedFile[] | undefined = await options.source.list();
  const plan = planShards(files, {
    seed: options.seed,
    targetShardBytes: options.targetShardBytes,
    shardCount: options.shardCount,
    consumers: options.consumers,
    labels: options.labels,
  });
  // The manifest says "complete": an earlier run's must not vouch for shards this run is rewriting.
  await options.sink.delete(MANIFEST_KEY);
  const progress = { filesDone: 0, bytesDone: 0, totalFiles: plan.totalFiles, totalBytes: plan.totalBytes, shardsDone: 0, totalShards: plan.shards.length };
  const report = () => options.onProgress?.({ ...progress });
  report();

  const write: ShardWriteFunction = options.writeShard ?? ((shard, onFiles) => writeShard(shard, {
    source: options.source,
    sink: options.sink,
    format,
    readConcurrency: options.readConcurrency ?? 32,
    onFile: (bytes) => onFiles(bytes, 1),
  }));
  const results = new Array<{ shard: ManifestShard; failures: ManifestFailure[] }>(plan.shards.length);
  const pending: Array<PlannedShard | undefined> = plan.shards;
  let nextShard = 0;
  // After a failure no shard starts, and the run rejects only once the shards in flight are done:
  // nothing keeps writing after the caller has been told the run failed.
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (!failure && nextShard < plan.shards.length) {
      const position = nextShard++;
      try {
        const shard = pending[position]!;
        // Once dispatched, a shard's records are let go: the live heap keeps the shards in flight only.
        pending[position] = undefined;
        results[position] = await write(shard, (bytes, files) => {
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
  // The fingerprint (a sort and a hash over the whole listing) is computed while the first shards
  // are written, once their writes have been handed over: with worker threads or S3 doing the
  // writing, this thread would otherwise only wait.
  await new Promise((resolve) => setImmediate(resolve));
  const fingerprint = sourceFingerprint(files);
  // Nor is the listing needed any more (with both let go, 400,000 files left 66 MB live on this heap).
  files = undefined;
  await writing;
  if (failure) throw failure.error;

  return finalizeDataset({
    sink: options.sink,
    format: options.format,
    seed: plan.seed,
    source: {
      uri: options.source.uri,
      objects: plan.totalFiles,
      bytes: plan.totalBytes,
      fingerprint,
    },
    labels: plan.labelMap,
    shards: results.map((r) => r.shard),
    failures: results.flatMap((r) => r.failures),
  });
}
