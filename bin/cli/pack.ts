import { existsSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ProgressDisplay, formatDuration } from './progress';
import { parseChoice, parseCommandArgs, parseSize, parseWholeNumber, UsageError } from './usage-error';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/packing/io/local-directory';
import { LocalShardPool } from '../../lambda/packing/parallel/local-shard-pool';
import { Manifest, MANIFEST_KEY } from '../../lambda/packing/manifest';
import { packDataset } from '../../lambda/packing/pack';
import { MAX_TARGET_SHARD_BYTES, MIN_TARGET_SHARD_BYTES, PlanError } from '../../lambda/packing/planning/plan-shards';

export const PACK_USAGE = `Usage: training-io pack <source-dir> <output-dir> [options]

Pack a folder of many small files (one sub-folder per class) into 1-128 MiB TFRecord or
MXNet RecordIO shards with index files and a manifest.json (written last).

  --format tfrecord|recordio   shard format (default: tfrecord)
  --shard-size SIZE            target shard size, 1MiB-128MiB (default: 64MiB)
  --shards N                   exact number of shards instead of --shard-size
  --consumers N                instances x GPU processes x loader workers: the shard
                               count is rounded up to a multiple of it
  --seed N                     shuffle seed; the same files and seed give identical bytes (default: 0)
  --labels folder|none         label = first folder of the path, or no labels (default: folder)
  --concurrency N              files read ahead per shard (default: 32)
  --allow-missing              exit 0 even when some files could not be read
                               (they are listed in the manifest's failures either way)

Output: <output-dir>/shards/part-00000-of-0000N.<tfrecord|rec>, <output-dir>/index/*.idx
(and index/all.idx for RecordIO), <output-dir>/manifest.json.
Exit status: 0 done, 1 some files could not be packed, 2 bad arguments.
`;

export async function packCommand(args: string[], out: NodeJS.WriteStream, err: NodeJS.WriteStream): Promise<number> {
  try {
    return await pack(args, out, err);
  } catch (error) {
    // Bad paths and flag values are pack's mistakes: show pack's usage with them.
    if (error instanceof UsageError && !error.usage) throw new UsageError(error.message, PACK_USAGE);
    throw error;
  }
}

async function pack(args: string[], out: NodeJS.WriteStream, err: NodeJS.WriteStream): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      'format': { type: 'string', default: 'tfrecord' },
      'shard-size': { type: 'string' },
      'shards': { type: 'string' },
      'consumers': { type: 'string' },
      'seed': { type: 'string', default: '0' },
      'labels': { type: 'string', default: 'folder' },
      'concurrency': { type: 'string', default: '32' },
      'allow-missing': { type: 'boolean', default: false },
      'help': { type: 'boolean', short: 'h' },
    },
  }, PACK_USAGE);
  if (values.help) {
    out.write(PACK_USAGE);
    return 0;
  }
  if (positionals.length !== 2) {
    throw new UsageError(`pack takes a source folder and an output folder, got ${positionals.length} argument(s)`, PACK_USAGE);
  }
  if (values['shard-size'] !== undefined && values.shards !== undefined) {
    throw new UsageError('--shard-size and --shards both set the shard count: give one of them', PACK_USAGE);
  }
  const [sourceDir, outputDir] = positionals.map((p) => path.resolve(p));
  checkFolders(sourceDir, outputDir);

  const format = parseChoice('--format', values.format!, ['tfrecord', 'recordio'] as const);
  const seed = parseWholeNumber('--seed', values.seed!, 0, 2 ** 32 - 1);
  const targetShardBytes = values['shard-size'] === undefined ? undefined : parseShardSize(values['shard-size']);
  const shardCount = values.shards === undefined ? undefined : parseWholeNumber('--shards', values.shards, 1);
  const consumers = values.consumers === undefined ? undefined : parseWholeNumber('--consumers', values.consumers, 1);
  const labels = parseChoice('--labels', values.labels!, ['folder', 'none'] as const);
  const readConcurrency = parseWholeNumber('--concurrency', values.concurrency!, 1, 4096);

  const progress = new ProgressDisplay(err, 'packing');
  const threads = Math.max(1, os.availableParallelism());
  const pool = new LocalShardPool({ sourceDir, outputDir, format, readConcurrency }, threads);
  const started = Date.now();
  let manifest: Manifest;
  try {
    manifest = await packDataset({
      source: new LocalDirectorySource(sourceDir),
      sink: new LocalDirectorySink(outputDir),
      format, seed, targetShardBytes, shardCount, consumers, labels, readConcurrency,
      parallelShards: threads,
      writeShard: (shard, onFiles) => pool.write(shard, onFiles),
      onProgress: (state) => progress.update(state),
    });
  } catch (error) {
    if (error instanceof PlanError) throw new UsageError(error.message, PACK_USAGE);
    throw error;
  } finally {
    progress.finish();
    await pool.close();
  }
  out.write(summary(manifest, outputDir, (Date.now() - started) / 1000));
  if (manifest.failures.length > 0 && !values['allow-missing']) {
    err.write(`training-io: ${manifest.failures.length} file(s) could not be packed (listed in ${MANIFEST_KEY}); ` +
      'pass --allow-missing to accept that\n');
    return 1;
  }
  return 0;
}

function parseShardSize(raw: string): number {
  const bytes = parseSize('--shard-size', raw);
  if (bytes < MIN_TARGET_SHARD_BYTES || bytes > MAX_TARGET_SHARD_BYTES) {
    throw new UsageError(`--shard-size must be between 1MiB and 128MiB, got '${raw}' (${(bytes / 2 ** 20).toFixed(2)} MiB)`);
  }
  return bytes;
}

function checkFolders(sourceDir: string, outputDir: string): void {
  if (!existsSync(sourceDir)) throw new UsageError(`source folder '${sourceDir}' does not exist`);
  if (!statSync(sourceDir).isDirectory()) throw new UsageError(`source '${sourceDir}' is not a folder`);
  const relative = path.relative(sourceDir, outputDir);
  if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) {
    throw new UsageError(`output folder '${outputDir}' is inside the source folder '${sourceDir}': the shards would be packed into the next run; choose another folder`);
  }
  if (existsSync(outputDir) && !statSync(outputDir).isDirectory()) {
    throw new UsageError(`output '${outputDir}' exists and is not a folder`);
  }
}

function summary(manifest: Manifest, outputDir: string, seconds: number): string {
  const sizes = manifest.shards.map((s) => s.bytes);
  const shardBytes = sizes.reduce((a, b) => a + b, 0);
  const lines = [
    '',
    `source     ${manifest.source.uri}`,
    `           ${manifest.source.objects} files, ${mb(manifest.source.bytes)}`,
    `output     ${outputDir}`,
    `format     ${manifest.format}, seed ${manifest.seed}, ${Object.keys(manifest.labels).length} classes`,
    `shards     ${manifest.shards.length} (${mb(Math.min(...sizes))} – ${mb(Math.max(...sizes))}), ${mb(shardBytes)} in all`,
    `records    ${manifest.records}`,
    `failures   ${manifest.failures.length}`,
    ...manifest.failures.slice(0, 10).map((f) => `           ${f.key}: ${f.reason}`),
    ...(manifest.failures.length > 10 ? [`           … and ${manifest.failures.length - 10} more in ${MANIFEST_KEY}`] : []),
    `time       ${formatDuration(seconds)}, ${(manifest.source.bytes / 1e6 / Math.max(seconds, 1e-3)).toFixed(1)} MB/s`,
    '',
  ];
  return lines.join('\n');
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
