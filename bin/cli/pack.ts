import { existsSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as v8 from 'node:v8';
import { parseCommandArgs } from './command-args';
import type { DatasetLocation, S3ClientFlags } from './dataset-location';
import { describeLocation, isInside, parseLocation, resolveLinks } from './dataset-location';
import { ProgressDisplay, formatDuration } from './progress';
import { parseChoice, parseSize, parseWholeNumber, UsageError } from './usage-error';
import type { PackingSettingNames, PackingSettings, RawPackingSettings } from '../../lib/contract/packing-settings';
import { checkPackingSettings, normalizePackingSettings, PACKING_DEFAULTS, PACKING_LIMITS, shardCountFor, shardCountRounding } from '../../lib/contract/packing-settings';
import { LocalDirectorySink, LocalDirectorySource, SourceContainsOutputError } from '../../lambda/io/local-directory';
import type { S3InventoryLocation } from '../../lambda/io/s3-inventory';
import { LocalShardPool } from '../../lambda/packing/parallel/local-shard-pool';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { MissingFilesError } from '../../lambda/packing/finalize';
import { FilteredSource } from '../../lambda/packing/listing/filtered-source';
import type { PackOptions, PackResult } from '../../lambda/packing/pack';
import { packDataset } from '../../lambda/packing/pack';
import type { ImagePreprocessing } from '../../lambda/packing/preprocess/image-preprocessing';
import { describePreprocessing } from '../../lambda/packing/preprocess/preprocessing-settings';
import { checksImages, defaultRecordContent } from '../../lambda/packing/image-check/record-content';
import { DEFAULT_JPEG_QUALITY, IMAGE_PREPROCESSING_LIMITS } from '../../lib/contract/image-preprocessing-limits';
import { PlanError } from '../../lambda/packing/planning/plan-shards';
import { SampleSettingsError } from '../../lambda/packing/samples/sample-grouping';
import { RECORD_CONTENTS } from '../../lib/contract/record-vocabulary';
import { MAX_LABEL_FILE_BYTES } from '../../lib/contract/label-file';
import { readLabelFileArgument } from './label-file-argument';
import { printable, quoted } from '../../lambda/io/printable';
import type { FilePatterns } from '../../lib/contract/file-patterns';
import { filePatternProblem } from '../../lib/contract/file-patterns';

const { sidePixels: SIDE_PIXELS, jpegQuality: JPEG_QUALITY } = IMAGE_PREPROCESSING_LIMITS;

export const PACK_USAGE = `Usage: training-io pack <source> <output> [options]

Pack a folder or S3 prefix of many small files (one sub-folder per class) into 1-128 MiB
TFRecord or MXNet RecordIO shards with index files and a manifest.json, as a new version of the
dataset at <output>, published atomically once complete. <source> and <output> are each a local
folder (a path or a file:// URL) or an s3://bucket/prefix/ URI.

A rerun reuses every shard of the current version whose files did not change (added, changed and
removed files only are packed again), or writes nothing when nothing changed. Two packs into one
output at once: one publishes, the other fails and publishes nothing. A file that cannot be packed
(unreadable, over 128 MiB, refused by the image check of --content images, or not decodable by the
preprocessing of --resize and the like) fails the run: nothing is published and the current
version stays current, unless --allow-missing.

  --format tfrecord|recordio   shard format (default: ${PACKING_DEFAULTS.format})
  --shard-size SIZE            target shard size, 1MiB-128MiB (default: ${PACKING_DEFAULTS.targetShardBytes / 2 ** 20}MiB)
  --shards N                   exact number of shards instead of --shard-size (rounded up to a
                               multiple of --consumers, as the summary then says)
  --consumers N                instances x GPU processes x loader workers: the shard
                               count is rounded up to a multiple of it
  --seed N                     shuffle seed; the same files and seed give identical bytes (default: ${PACKING_DEFAULTS.seed})
  --labels folder|file|none    label = first folder of the path, the class a label file gives
                               each sample, or no labels (default: ${PACKING_DEFAULTS.labels}; file with --label-file)
  --label-file PATH            the label file of --labels file, a local path or an s3://bucket/key
                               URI: a CSV with the header key,label (RFC 4180 quoting) or JSON lines
                               {"key": "train/0001", "label": "cat"}, by extension (.csv, .jsonl;
                               at most ${MAX_LABEL_FILE_BYTES / 2 ** 20} MiB). The key is the sample's: its path below <source>
                               up to the first dot of its name (train/0001.jpg → train/0001). Class
                               names sorted → 0..n-1. A file no row labels is a failure; a row that
                               names no file is counted in the summary; two labels for one sample,
                               an empty label or a malformed row stop the run before packing
  --include GLOB               pack only the files whose key below <source> matches GLOB (repeatable;
                               * within a folder, ** across folders, {a,b}, [abc]; e.g. 'cat/**')
  --exclude GLOB               leave out the files whose key matches GLOB (repeatable), e.g.
                               --exclude README.txt for a stray file at the source root; the
                               summary counts the files left out
  --parts P1,P2,...            the parts every sample must have, e.g. jpg,json,mask.png (default:
                               every part seen). Files sharing a name up to its first dot
                               (0001.jpg, 0001.json, 0001.mask.png) are one sample and become one
                               TFRecord Example, a feature per part (docs/cli.md), when --parts is
                               given or half the samples or more have several files; a
                               sample without a required part, a JSON part that does not parse or
                               an image part that does not decode is a failure. RecordIO and the
                               preprocessing flags refuse multi-part samples
  --content images|any         images: every file is checked, whole, as a JPEG or PNG the training
                               readers decode (anything else is a failure with its reason); any:
                               files packed as they are (default: images with folder labels, any
                               without)
  --concurrency N              files read ahead per shard, 1-1024 (default: ${PACKING_DEFAULTS.readConcurrency} with an S3 side,
                               ${PACKING_DEFAULTS.localReadConcurrency} folder to folder, a worker thread per core)
  --full                       pack every file again instead of reusing unchanged shards
  --follow-symlinks            pack what symbolic links that lead out of a source folder lead to
                               (default: such a link is a failure, listed, and not read)
  --resize PX                  resize each image so that its shorter side is PX pixels (${SIDE_PIXELS.min}-${SIDE_PIXELS.max};
                               never enlarged, aspect ratio kept) and store it as JPEG
  --max-side PX                cap the longer side at PX pixels (${SIDE_PIXELS.min}-${SIDE_PIXELS.max}), with or without --resize
  --quality Q                  JPEG quality of re-encoded images, ${JPEG_QUALITY.min}-${JPEG_QUALITY.max} (default: ${DEFAULT_JPEG_QUALITY})
  --keep-grayscale             keep grayscale images one channel (default: converted to RGB)
                               Any of these four re-encodes every image once, at pack time, with
                               sharp: EXIF orientation applied; CMYK, palette, 16-bit and alpha
                               (flattened on white) made 8-bit sRGB; JPEG, PNG, WebP, TIFF and
                               GIF (first frame) read; a file that does not decode is a failure.
  --retention DAYS             keep versions this many days after they stop being current, so that
                               jobs reading them finish; older ones are deleted (0-3650, default: ${PACKING_DEFAULTS.retentionDays})
  --allow-missing              publish even when some files could not be packed (they are
                               listed in the new manifest's failures), and exit 0
  --inventory S3URI            list an S3 source from its S3 Inventory report (CSV) instead of
                               ListObjectsV2: the report's folder s3://bucket/<prefix>/<source
                               bucket>/<config id>/ (its newest manifest) or one manifest.json
  --endpoint-url URL           S3 endpoint (an S3-compatible server); path-style addressing
  --region R                   S3 region (default: AWS_REGION, then AWS_DEFAULT_REGION)

With an S3 side, 4 shards are written at once in this process; credentials come from the
AWS SDK's default chain (environment, profile, instance role).
A source of more than 131,072 files is sorted and planned through files in the temporary
folder ($TMPDIR, else the system's; ~120 bytes a file, removed at the end).

Output: <output>/manifest.json (the current version's), <output>/published/ (one claim per
version), <output>/versions/<version>/{shards,index,members}/ and its manifest.json; with an S3
output also shards.manifest and index.manifest (SageMaker ManifestFile channels).
Exit status: 0 published (or already current; also when another pack published a newer version
just after this one, which the summary names), 1 some files could not be packed and nothing was
published (or any other error), 2 bad arguments.
`;

/** Shards written at once when one side is S3. */
const S3_PARALLEL_SHARDS = 4;

/** A pack as the command line asks for it, every flag checked. */
interface PackRequest {
  readonly source: DatasetLocation;
  readonly output: DatasetLocation;
  readonly endpoint: S3ClientFlags;
  readonly inventory?: S3InventoryLocation;
  readonly patterns: FilePatterns;
  readonly followSymlinks: boolean;
  readonly checkImages: boolean;
  /** The engine's options, less where it reads from and writes to and how. */
  readonly settings: Omit<PackOptions, 'source' | 'sink' | 'parallelShards' | 'writeShard' | 'onProgress' | 'onLargeListing' | 'labelTable'>
    & { readonly readConcurrency: number; readonly labelFile?: string };
}

export async function packCommand(args: string[], out: NodeJS.WriteStream, err: NodeJS.WriteStream): Promise<number> {
  return runPack(parsePackArgs(args), out, err);
}

function parsePackArgs(args: string[]): PackRequest {
  const { values, positionals, endpoint } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      'format': { type: 'string' },
      'shard-size': { type: 'string' },
      'shards': { type: 'string' },
      'consumers': { type: 'string' },
      'seed': { type: 'string' },
      'labels': { type: 'string' },
      'label-file': { type: 'string' },
      'content': { type: 'string' },
      'concurrency': { type: 'string' },
      'include': { type: 'string', multiple: true },
      'exclude': { type: 'string', multiple: true },
      'allow-missing': { type: 'boolean', default: false },
      'full': { type: 'boolean', default: false },
      'follow-symlinks': { type: 'boolean', default: false },
      'resize': { type: 'string' },
      'max-side': { type: 'string' },
      'quality': { type: 'string' },
      'keep-grayscale': { type: 'boolean', default: false },
      'retention': { type: 'string' },
      'inventory': { type: 'string' },
      'parts': { type: 'string' },
    },
  }, { usage: PACK_USAGE, endpoint: true });
  if (positionals.length !== 2) {
    throw new UsageError(`pack takes a source and an output (folders or s3:// URIs), got ${positionals.length} argument(s)`);
  }
  const source = parseLocation('source', positionals[0]);
  const output = parseLocation('output', positionals[1]);
  checkLocations(source, output);
  const inventory = values.inventory === undefined ? undefined : parseInventory(values.inventory, source);
  const patterns = parseFilePatterns(values.include, values.exclude);

  const onS3 = source.kind === 's3' || output.kind === 's3';
  const packing = packingSettingsOfFlags(values, onS3);
  const labels = packing.labels;
  const preprocessing = parsePreprocessing(values);
  const content = values.content === undefined ? defaultRecordContent(labels) : parseChoice('--content', values.content, RECORD_CONTENTS);
  if (values.content === 'any' && preprocessing) {
    throw new UsageError('--content any packs files as they are, and --resize, --max-side, --quality and --keep-grayscale decode every file '
      + 'as an image: give one or the other');
  }
  return {
    source, output, endpoint, inventory, patterns,
    followSymlinks: values['follow-symlinks'],
    checkImages: checksImages(content, preprocessing !== undefined),
    settings: {
      ...packing,
      fullRepack: values.full,
      preprocessing,
      content,
    },
  };
}

/** What the packing settings are called on the command line, in the codec's messages. */
const FLAG_NAMES: PackingSettingNames = {
  format: '--format', seed: '--seed', labels: '--labels', labelFile: '--label-file', targetShardBytes: '--shard-size', shardCount: '--shards',
  consumers: '--consumers', readConcurrency: '--concurrency', retentionDays: '--retention', allowMissing: '--allow-missing', parts: '--parts',
};

/** The flags that are packing settings, as the raw settings the construct also gives (each flag's syntax checked here, its range by the codec). */
export interface PackingFlags {
  readonly format?: string;
  readonly seed?: string;
  readonly labels?: string;
  readonly 'label-file'?: string;
  readonly 'shard-size'?: string;
  readonly shards?: string;
  readonly consumers?: string;
  readonly concurrency?: string;
  readonly retention?: string;
  readonly 'allow-missing'?: boolean;
  readonly parts?: string;
}

/**
 * The packing settings the flags ask for, checked and completed by the contract's codec
 * (lib/contract/packing-settings.ts), as the construct's props are: its problems are usage errors.
 */
export function packingSettingsOfFlags(values: PackingFlags, onS3: boolean): PackingSettings {
  const whole = (setting: keyof typeof PACKING_LIMITS & keyof PackingSettingNames, raw: string | undefined) => (raw === undefined ? undefined
    : parseWholeNumber(FLAG_NAMES[setting], raw, PACKING_LIMITS[setting].min, PACKING_LIMITS[setting].max));
  const given: RawPackingSettings = {
    format: values.format,
    seed: whole('seed', values.seed),
    labels: values.labels,
    labelFile: values['label-file'],
    targetShardBytes: values['shard-size'] === undefined ? undefined : parseSize('--shard-size', values['shard-size']),
    shardCount: whole('shardCount', values.shards),
    consumers: whole('consumers', values.consumers),
    readConcurrency: whole('readConcurrency', values.concurrency),
    retentionDays: whole('retentionDays', values.retention),
    allowMissing: values['allow-missing'] || undefined,
    parts: values.parts?.split(','),
  };
  const raw = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as RawPackingSettings;
  const problems = checkPackingSettings(raw, FLAG_NAMES);
  if (problems.length > 0) throw new UsageError(problems.map(({ message }) => message).join('; '));
  return normalizePackingSettings(raw, !onS3);
}

/** `--include` and `--exclude` (each repeatable): globs over the keys below the source, checked as the construct checks them. */
function parseFilePatterns(include: string[] | undefined, exclude: string[] | undefined): FilePatterns {
  for (const [flag, patterns] of [['--include', include], ['--exclude', exclude]] as const) {
    const problem = (patterns ?? []).map((pattern) => filePatternProblem(flag, pattern)).find((found) => found !== undefined);
    if (problem) throw new UsageError(problem);
  }
  return { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
}

async function runPack(request: PackRequest, out: NodeJS.WriteStream, err: NodeJS.WriteStream): Promise<number> {
  const { source, output, settings, followSymlinks } = request;
  // Local to local is disk- and CPU-bound: a worker thread per core; on one core, this thread
  // alone (a worker there would only add its start, its own compilation and heap: 5-8 % of the
  // CPU of 100,000 small files). With S3 the network is the limit: shards are written in this
  // process, a few at once, each with many reads in flight.
  const labelFileOnS3 = /^s3:/i.test(settings.labelFile ?? '');
  const s3 = source.kind === 's3' || output.kind === 's3' || labelFileOnS3 ? await import('./s3-storage') : undefined;
  const client = s3?.createS3Client(request.endpoint);
  // Read, and every row checked, before anything is listed or written.
  const labelTable = settings.labelFile === undefined ? undefined : await readLabelFileArgument(settings.labelFile, client);
  const threads = Math.max(1, os.availableParallelism());
  if (settings.preprocessing) allowImageWorkOnEveryThread(threads);
  const local = source.kind === 'local' && output.kind === 'local';
  const pool = local && threads > 1
    ? new LocalShardPool({ sourceDir: source.dir, outputDir: output.dir, format: settings.format, readConcurrency: settings.readConcurrency,
      preprocessing: settings.preprocessing, checkImages: request.checkImages, followSymlinks }, threads)
    : undefined;
  const listed = new FilteredSource(source.kind === 'local'
    ? new LocalDirectorySource(source.dir, { statFiles: pool?.statFiles, outputDir: output.kind === 'local' ? output.dir : undefined, followSymlinks })
    : s3!.openS3Source(source, client!, request.inventory), request.patterns);
  const progress = new ProgressDisplay(err, 'packing');
  const started = Date.now();
  let result: PackResult;
  try {
    pool?.start();
    result = await packDataset({
      ...settings,
      labelTable,
      source: listed,
      sink: output.kind === 'local' ? new LocalDirectorySink(output.dir) : s3!.openS3Sink(output, client!),
      parallelShards: local ? threads : S3_PARALLEL_SHARDS,
      writeShard: pool ? (shard, prefix, onFiles) => pool.write(shard, prefix, onFiles) : undefined,
      onProgress: (state) => progress.update(state),
      onLargeListing: favourMemoryOverSpeed,
    });
  } catch (error) {
    if (error instanceof MissingFilesError) {
      out.write(unpublishedSummary(error, describeLocation(output)));
      err.write(`training-io: ${error.failures.length} file(s) could not be packed: nothing was published; `
        + 'pass --allow-missing to publish without them\n');
      return 1;
    }
    if (error instanceof PlanError || error instanceof SourceContainsOutputError || error instanceof SampleSettingsError) throw new UsageError(error.message);
    throw error;
  } finally {
    progress.finish();
    await pool?.close();
    client?.destroy();
  }
  out.write(summary(result, { output: describeLocation(output), seconds: (Date.now() - started) / 1000, excludedFiles: listed.excludedFiles }));
  return 0;
}

/**
 * Switches V8 to its memory-saving heuristics (`--optimize-for-size`: old garbage collected sooner,
 * heaps grown more slowly) for this process and its worker threads: V8 flags are process-wide, and
 * this one is read as heaps grow, so it takes effect from here on. Only for listings planned from
 * disk (over 131,072 files), whose group-by-group planning makes garbage in bursts that V8's
 * defaults leave on the heap. Measured peak RSS: 400,000 files of 100 B 300–320 → 187 MB;
 * 1,200,000 files of 100–400 B 278 → 225 MB, at the same CPU time. Set from the start of every run
 * it cost 10–30 % more CPU, so smaller listings keep V8's defaults (peak 226–248 MB at 100,000 files).
 */
function favourMemoryOverSpeed(): void {
  v8.setFlagsFromString('--optimize-for-size');
}

/** `--resize`, `--max-side`, `--quality`, `--keep-grayscale`: the preprocessing, or none when no flag is given. */
function parsePreprocessing(values: { resize?: string; 'max-side'?: string; quality?: string; 'keep-grayscale'?: boolean }): ImagePreprocessing | undefined {
  if (values.resize === undefined && values['max-side'] === undefined && values.quality === undefined && !values['keep-grayscale']) return undefined;
  return {
    ...(values.resize !== undefined ? { shorterSide: parseWholeNumber('--resize', values.resize, SIDE_PIXELS.min, SIDE_PIXELS.max) } : {}),
    ...(values['max-side'] !== undefined ? { longerSide: parseWholeNumber('--max-side', values['max-side'], SIDE_PIXELS.min, SIDE_PIXELS.max) } : {}),
    ...(values.quality !== undefined ? { jpegQuality: parseWholeNumber('--quality', values.quality, JPEG_QUALITY.min, JPEG_QUALITY.max) } : {}),
    ...(values['keep-grayscale'] ? { keepGrayscale: true } : {}),
  };
}

/**
 * sharp runs each image on libuv's thread pool, which all of a process's worker threads share and
 * which has 4 threads unless UV_THREADPOOL_SIZE says otherwise: with a worker per core on more
 * than 4 cores, the images would queue for those 4. Read when the pool first starts, which is
 * later than this (nothing before packing queues work on it); a value the user set is kept.
 */
function allowImageWorkOnEveryThread(threads: number): void {
  process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, threads));
}

function checkLocations(source: DatasetLocation, output: DatasetLocation): void {
  if (source.kind === 'local') {
    if (!existsSync(source.dir)) throw new UsageError(`source folder '${source.dir}' does not exist`);
    if (!statSync(source.dir).isDirectory()) throw new UsageError(`source '${source.dir}' is not a folder`);
  }
  // After resolving links: an output that is a link into the source (or under one) is inside it all the same.
  const realSource = resolveLinks(source);
  const realOutput = resolveLinks(output);
  const kind = output.kind === 'local' ? 'folder' : 'prefix';
  if (isInside(realOutput, realSource)) {
    throw new UsageError(`output ${kind} '${describeLocation(output)}'${resolvedTo(output, realOutput)} is inside the source ${kind} ` +
      `'${describeLocation(source)}'${resolvedTo(source, realSource)}: the shards would be packed into the next run; choose another ${kind}`);
  }
  if (isInside(realSource, realOutput)) {
    throw new UsageError(`source ${kind} '${describeLocation(source)}'${resolvedTo(source, realSource)} is inside the output ${kind} ` +
      `'${describeLocation(output)}'${resolvedTo(output, realOutput)}: the dataset written there would become part of the source; choose another ${kind}`);
  }
  if (output.kind === 'local' && existsSync(output.dir) && !statSync(output.dir).isDirectory()) {
    throw new UsageError(`output '${output.dir}' exists and is not a folder`);
  }
}

/** ` (links resolved: /real/path)` when resolving links changed the location, else nothing. */
function resolvedTo(given: DatasetLocation, real: DatasetLocation): string {
  return describeLocation(given) === describeLocation(real) ? '' : ` (links resolved: '${describeLocation(real)}')`;
}

/** `--inventory`: an S3 report folder, or one manifest.json, of an S3 source. */
function parseInventory(raw: string, source: DatasetLocation): S3InventoryLocation {
  if (source.kind !== 's3') throw new UsageError(`--inventory lists an S3 source; the source '${describeLocation(source)}' is a local folder`);
  const location = parseLocation('--inventory', raw);
  if (location.kind !== 's3') throw new UsageError(`--inventory ${quoted(raw)} is not an S3 URI: give the report's folder or manifest.json as s3://bucket/key`);
  const manifest = /\/manifest\.json$/.test(raw);
  return { bucket: location.bucket, key: manifest ? location.prefix.slice(0, -1) : location.prefix };
}

/** What the summary says beside the result. */
interface RunFacts {
  readonly output: string;
  readonly seconds: number;
  /** Files --include/--exclude left out. */
  readonly excludedFiles: number;
}

function summary(result: PackResult, { output, seconds, excludedFiles }: RunFacts): string {
  const { manifest } = result;
  const sizes = manifest.shards.map((s) => s.bytes);
  const shardBytes = sizes.reduce((a, b) => a + b, 0);
  const reused = manifest.sizing.reusedShards;
  const lines = [
    '',
    `source     ${manifest.source.uri}`,
    `           ${manifest.source.objects} files, ${mb(manifest.source.bytes)}`
      + `${excludedFiles > 0 ? `; ${excludedFiles} more left out by --include/--exclude` : ''}`,
    `output     ${output}`,
    ...(result.repairedRootCopies.length > 0
      ? [`repaired   ${result.repairedRootCopies.join(', ')}: behind the newest claim (an earlier run stopped after publishing), now rewritten`] : []),
    `version    ${manifest.datasetVersion}${result.upToDate ? ', already current: the source and options did not change, nothing written' : ', published'}`
      + `${!result.upToDate && manifest.failures.length > 0 ? ` without the ${manifest.failures.length} file(s) that could not be packed (--allow-missing)` : ''}`,
    ...(result.currentVersion !== manifest.datasetVersion
      ? [`           superseded since: another pack published ${result.currentVersion}, which is current`] : []),
    ...(result.upToDate ? [] : [
      `           ${reused > 0 ? `${reused} shard(s) reused from earlier versions, ` : ''}${mb(result.shardBytesWritten)} of shards written`
        + `${result.fullRepackReason ? ` (full repack: ${result.fullRepackReason})` : ''}`,
    ]),
    ...(result.prune && result.prune.prunedVersions.length > 0
      ? [`           pruned ${result.prune.prunedVersions.join(', ')} (${result.prune.deletedObjects} objects, past the retention period)`] : []),
    ...(result.removedLeftovers.length > 0
      ? [`           removed ${result.removedLeftovers.length} leftover(s) that its manifest does not list`] : []),
    ...roundingNote(manifest),
    ...(manifest.sizing.multipleOfConsumers ? [] : [
      `           ${manifest.shards.length} shards are not a multiple of the ${manifest.sizing.consumers} consumers (more would be under 1 MiB); --full evens them`,
    ]),
    `format     ${manifest.format}, seed ${manifest.seed}, ${Object.keys(manifest.labels).length} classes`,
    ...labelFileNote(manifest),
    ...(manifest.preprocessing ? [`images     ${describePreprocessing(manifest.preprocessing)}`] : []),
    `shards     ${manifest.shards.length}${sizes.length > 0 ? ` (${mb(Math.min(...sizes))} – ${mb(Math.max(...sizes))}), ${mb(shardBytes)} in all` : ''}`,
    ...shrunkShardsNote(manifest, shardBytes),
    `records    ${manifest.records}`,
    `failures   ${manifest.failures.length}`,
    ...manifest.failures.slice(0, 10).map((f) => `           ${f.key}: ${f.reason}`),
    ...(manifest.failures.length > 10 ? [`           … and ${manifest.failures.length - 10} more in ${MANIFEST_KEY}`] : []),
    `time       ${formatDuration(seconds)}, ${(manifest.source.bytes / 1e6 / Math.max(seconds, 1e-3)).toFixed(1)} MB/s`,
    '',
  ];
  // Each line escaped: a file name holding ESC or a line break must not rewrite the terminal or fake a line.
  return lines.map(printable).join('\n');
}

/** Where the labels came from, when a label file gave them, and how many of its rows named no listed file (a warning, not a failure). */
function labelFileNote(manifest: PackResult['manifest']): string[] {
  const source = manifest.labelSource;
  if (!source) return [];
  return [`labels     ${source.file}: ${source.rows} samples labelled`
    + `${source.unmatchedRows > 0 ? `; warning: ${source.unmatchedRows} row(s) name no listed file (left out, or not in <source>)` : ''}`];
}

/** That `--shards` was rounded up to a multiple of the consumers, when it was (the codec's words, as the construct's synth warning). */
function roundingNote(manifest: PackResult['manifest']): string[] {
  const { shardCount, consumers } = manifest.sizing;
  if (shardCount === null || manifest.shards.length !== shardCountFor(shardCount, consumers)) return [];
  const note = shardCountRounding({ shardCount, consumers }, FLAG_NAMES);
  return note ? [`           ${note}`] : [];
}

/**
 * Why shards came out far under the target, when preprocessing shrank the images: shards are
 * planned by the source files' bytes (the plan comes before any image is decoded), so a resize
 * that makes images 10× smaller makes shards 10× smaller than --shard-size. Says what to give instead.
 */
function shrunkShardsNote(manifest: PackResult['manifest'], shardBytes: number): string[] {
  const target = manifest.sizing.targetShardBytes;
  if (!manifest.preprocessing || target === null || manifest.shards.length === 0 || manifest.source.bytes === 0) return [];
  const meanShardBytes = shardBytes / manifest.shards.length;
  if (meanShardBytes >= target / 2) return [];
  const shrink = manifest.source.bytes / shardBytes;
  const consumers = manifest.sizing.consumers;
  const fuller = Math.max(consumers, Math.ceil(shardBytes / target / consumers) * consumers);
  return [
    `           shards average ${mb(meanShardBytes)} against a target of ${mb(target)}: shards are planned by the source files' `
      + `bytes, and preprocessing made the records ${shrink.toFixed(1)}× smaller; --shards ${fuller} gives shards near the target`,
  ];
}

/** A run whose files could not all be packed, and that was not allowed to publish without them. */
function unpublishedSummary(error: MissingFilesError, output: string): string {
  return ['',
    `output     ${output}`,
    `version    ${error.datasetVersion} not published: ${error.failures.length} file(s) could not be packed; `
      + `${error.previousVersion ? `${error.previousVersion} stays current` : 'the dataset has no version yet'}`,
    `failures   ${error.failures.length}`,
    // Every one: no manifest was published to list them.
    ...error.failures.map((f) => `           ${f.key}: ${f.reason}`),
    '',
  ].map(printable).join('\n');
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
