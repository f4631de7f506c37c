import { Size } from 'aws-cdk-lib';
import { didYouMean } from './did-you-mean';
import { parseCommandArgs } from './command-args';
import { parseChoice, parsePositiveNumber, parseSize, parseWholeNumber, UsageError } from './usage-error';
import { TrainingInstance } from '../../lib/instances/training-instance';
import { DatasetFormat, SampleEncoding } from '../../lib/planning/dataset-profile';
import type { IoPlan} from '../../lib/planning/io-plan';
import { PlannedInputMode } from '../../lib/planning/io-plan';
import { IoPlanner } from '../../lib/planning/io-planner';
import { formatAboutSeconds, formatBytes, formatCount, formatCountOf, formatDollars, formatMiB } from '../../lib/planning/private/units';
import type { PriceOverrides } from '../../lib/planning/price-overrides';
import { ValidationError } from '../../lib/private/errors';
import { S3DataDistribution } from '../../lib/vocabulary/s3-data-distribution';
import { readBoundedJsonFile } from '../../lambda/io/bounded-json';
import { printable, quoted, truncated } from '../../lambda/io/printable';

export const PLAN_USAGE = `Usage: training-io plan --objects N (--bytes SIZE | --mean-size SIZE) --instance TYPE [options]

Plan the data path of a training job before deploying anything. Every input mode (File,
FastFile, Pipe, FSx for Lustre SCRATCH_2 and PERSISTENT_2), as the objects are and packed, priced
side by side: start-up, read rate against what the GPUs need, job hours, dollars per job and per
month; then the cheapest that keeps the GPUs fed. Then loader workers and DALI threads, pinned
memory, GPU decoding, resizing the images at pack time, each with its reason, and warnings.

Dataset:
  --objects N              objects under the S3 prefix (files, or shards if packed)
  --bytes SIZE             their total size, e.g. 10GB, 10GiB, 1.5TB
  --mean-size SIZE         or their mean size, e.g. 5KB
  --format FORMAT          files (one sample per object), tfrecord or recordio (default: files)
  --records N              samples in a packed dataset (needed with --samples-per-second)
  --encoding ENC           jpeg or other (default: jpeg)

Cluster and job:
  --instance TYPE          SageMaker instance type, e.g. ml.p3dn.24xlarge (training-io instances)
  --count N                instances (default: 1)
  --processes N            training processes per instance (default: one per GPU/NeuronCore)
  --workers N              data-loader workers per process (default: sized from the instance)
  --memory-per-worker GiB  memory budget of one loader worker (default: 2)
  --epochs N               passes over the data (default: 1)
  --reused                 other jobs read the same data (recorded; priced through --jobs-per-month)
  --samples-per-second N   samples each GPU consumes per second, e.g. 1350 (ResNet-50 on a V100),
                           at most 1,000,000 (default: ResNet-50 on the GPU where measured)

Prices:
  --jobs-per-month N       jobs a month that read the data (default: 1)
  --max-dollars N          warn when the cheapest job costs more than N US dollars
  --prices FILE.json       prices instead of the table's us-east-1 list prices, e.g.
                           {"instances": [{"instanceType": "ml.p4d.24xlarge", "dollarsPerHour": 25}],
                            "fsxScratch2DollarsPerGbMonth": 0.154}

Output:
  --json                   the plan as JSON instead of a table

Sizes need a unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
Exit status: 0 planned (warnings included), 2 bad arguments.
`;

/**
 * Samples one GPU consumes per second, at most: a thousand times what the fastest take today, and
 * far from where read rates and epoch times overflow to Infinity and print as such.
 */
const MAX_SAMPLES_PER_SECOND = 1_000_000;

/**
 * A dataset size of more than 0 bytes with its unit, e.g. `10GB`, `10GiB`, `1.5TB`, `140B`: a bare
 * number is refused, as `--bytes 140` meant 140 GB far more often than 140 bytes.
 */
function parseDatasetSize(flag: string, raw: string): number {
  if (/^\s*\d+(?:\.\d+)?\s*$/.test(raw)) {
    throw new UsageError(`${flag} needs a unit, got ${quoted(raw)}: write ${raw.trim()}GB or ${raw.trim()}GiB (or ${raw.trim()}B for bytes)`);
  }
  const bytes = parseSize(flag, raw);
  if (bytes <= 0) throw new UsageError(`${flag} must be at least 1 byte, got ${quoted(raw)}`);
  return bytes;
}

function parseInstance(raw: string): TrainingInstance {
  try {
    return TrainingInstance.fromName(raw);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const known = TrainingInstance.all().map((instance) => instance.instanceType);
    throw new UsageError(`--instance must be a catalogued SageMaker training instance type (training-io instances lists them), got ${quoted(raw)}`
      + didYouMean(raw, known));
  }
}

export function planCommand(args: string[], out: NodeJS.WritableStream): number {
  try {
    return plan(args, out);
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(error.message);
    throw error;
  }
}

function plan(args: string[], out: NodeJS.WritableStream): number {
  const { values } = parseCommandArgs({
    args,
    options: {
      'objects': { type: 'string' },
      'bytes': { type: 'string' },
      'mean-size': { type: 'string' },
      'format': { type: 'string', default: 'files' },
      'records': { type: 'string' },
      'encoding': { type: 'string', default: 'jpeg' },
      'instance': { type: 'string' },
      'count': { type: 'string', default: '1' },
      'processes': { type: 'string' },
      'workers': { type: 'string' },
      'memory-per-worker': { type: 'string' },
      'epochs': { type: 'string', default: '1' },
      'reused': { type: 'boolean', default: false },
      'samples-per-second': { type: 'string' },
      'jobs-per-month': { type: 'string', default: '1' },
      'max-dollars': { type: 'string' },
      'prices': { type: 'string' },
      'json': { type: 'boolean', default: false },
    },
  }, { usage: PLAN_USAGE });
  if (values.objects === undefined) throw new UsageError('--objects is required: the number of objects under the prefix');
  if (values.instance === undefined) throw new UsageError('--instance is required, e.g. --instance ml.p3dn.24xlarge');
  if ((values.bytes === undefined) === (values['mean-size'] === undefined)) {
    throw new UsageError('give --bytes (the total size) or --mean-size (the mean object size), one of them');
  }
  const memoryGiB = values['memory-per-worker'] === undefined ? undefined : parsePositiveNumber('--memory-per-worker', values['memory-per-worker']);
  const result = IoPlanner.plan({
    dataset: {
      objectCount: parseWholeNumber('--objects', values.objects, 1),
      ...(values.bytes !== undefined ? { totalSize: Size.bytes(parseDatasetSize('--bytes', values.bytes)) } : {}),
      ...(values['mean-size'] !== undefined ? { meanObjectSize: Size.bytes(parseDatasetSize('--mean-size', values['mean-size'])) } : {}),
      format: parseChoice('--format', values.format!, Object.values(DatasetFormat)),
      recordCount: values.records === undefined ? undefined : parseWholeNumber('--records', values.records, 1),
      sampleEncoding: parseChoice('--encoding', values.encoding!, Object.values(SampleEncoding)),
    },
    cluster: {
      instance: parseInstance(values.instance),
      instanceCount: parseWholeNumber('--count', values.count!, 1, 10000),
      processesPerInstance: values.processes === undefined ? undefined : parseWholeNumber('--processes', values.processes, 1),
      loaderWorkers: values.workers === undefined ? undefined : parseWholeNumber('--workers', values.workers, 0, 1024),
      memoryPerLoaderWorker: memoryGiB === undefined ? undefined : Size.mebibytes(Math.round(memoryGiB * 1024)),
    },
    epochs: parseWholeNumber('--epochs', values.epochs!, 1),
    reusedAcrossJobs: values.reused,
    samplesPerSecondPerDevice: values['samples-per-second'] === undefined
      ? undefined : parsePositiveNumber('--samples-per-second', values['samples-per-second'], MAX_SAMPLES_PER_SECOND),
    jobsPerMonth: parseWholeNumber('--jobs-per-month', values['jobs-per-month']!, 1, 1_000_000),
    maxDollarsPerJob: values['max-dollars'] === undefined ? undefined : parsePositiveNumber('--max-dollars', values['max-dollars']),
    prices: values.prices === undefined ? undefined : readPrices(values.prices),
  });
  out.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : table(result));
  return 0;
}

/** A `--prices` file: a JSON object in the shape of `PriceOverrides`; the planner checks each figure. */
function readPrices(file: string): PriceOverrides {
  let parsed: unknown;
  try {
    // Bounded, as every JSON file the CLI reads: a device, a FIFO, a huge or deeply nested file is refused, naming it.
    parsed = readBoundedJsonFile(file);
  } catch (error) {
    const why = printable((error as Error).message);
    throw new UsageError(error instanceof SyntaxError ? `--prices: ${quoted(file)} is not JSON: ${why}` : `--prices: cannot read ${quoted(file)}: ${why}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--prices: ${quoted(file)} must hold a JSON object such as {"s3GetDollarsPer1000": 0.0004}, got ${truncated(JSON.stringify(parsed), 40)}`);
  }
  const known = Object.keys(PRICE_FIELDS);
  for (const key of Object.keys(parsed)) {
    if (!known.includes(key)) throw new UsageError(`--prices: ${quoted(file)} has an unknown field ${quoted(key)}; known: ${known.join(', ')}` + didYouMean(key, known));
  }
  return parsed as PriceOverrides;
}

/** The fields of a `--prices` file. */
const PRICE_FIELDS: Record<keyof PriceOverrides, true> = {
  instances: true, fsxScratch2DollarsPerGbMonth: true, fsxPersistent2: true, s3StorageDollarsPerGbMonth: true,
  s3GetDollarsPer1000: true, s3PutDollarsPer1000: true, s3ListDollarsPer1000: true, lambdaDollarsPerGbSecond: true,
  lambdaDollarsPerMillionRequests: true, stepFunctionsDollarsPer1000Transitions: true,
};

/** The modes side by side: one row each, then the choice in one line. */
function modesTable(result: IoPlan): string {
  const header = ['mode', 'start-up', 'read rate vs needed (per instance)', 'bottleneck', 'job hours', '$ per job', '$ per month'];
  const rows = result.modes.map((mode) => [
    `${mode.label === result.choice.label ? '* ' : '  '}${mode.label}`,
    mode.startupSeconds === 0 ? 'none' : formatAboutSeconds(mode.startupSeconds),
    `${mode.readBytesPerSecondPerInstance === undefined ? 'local' : `${formatBytes(mode.readBytesPerSecondPerInstance)}/s`}` +
      `${mode.neededBytesPerSecondPerInstance === undefined ? '' : ` vs ${formatBytes(mode.neededBytesPerSecondPerInstance)}/s` +
        `${mode.feedsGpus ? '' : ' (starved)'}`}`,
    mode.bottleneck,
    mode.jobHours.toFixed(2),
    formatDollars(mode.dollarsPerJob),
    formatDollars(mode.dollarsPerMonth),
  ]);
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => row[column].length)));
  const lines = all.map((row) => `${row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()}\n`);
  const unavailable = result.unavailableModes.map((mode) => `  (${mode.label}: ${mode.reason})\n`).join('');
  const packing = result.packingCost
    ? `Packing, once: ~${formatHours(result.packingCost.seconds)}, ${formatDollars(result.packingCost.dollars)} (${result.packingCost.reason})\n` : '';
  return `${lines.join('')}${unavailable}${packing}Choice: ${result.choice.reason}\n\n`;
}

function formatHours(seconds: number): string {
  return `${(seconds / 3600).toFixed(2)} h`;
}

/** The plan as the modes side by side, then a table of what, the choice and why, then the warnings. */
function table(result: IoPlan): string {
  const { dataset, cluster, inputMode, packing, loaders, startup, readRate, fsx } = result;
  const rows: Array<[string, string, string]> = [
    ['input mode', describeMode(result), inputMode.reason],
    ['packing', packing.pack
      ? `pack into ${formatCount(packing.shardCount)} ${packing.format} shards of ${formatMiB(packing.shardBytes)}`
      : `as is: ${formatCount(packing.shardCount)} objects of ${formatBytes(packing.shardBytes)}`, packing.reason],
    ['loaders', `${loaders.loaderWorkers} workers, ${loaders.daliThreads} DALI threads per process`, loaders.reason],
    ['pinned memory', result.pinMemory.pinMemory ? 'yes' : 'no', result.pinMemory.reason],
    ['GPU decoding', result.gpuDecoding.advised ? `--loader ${result.gpuDecoding.loader}` : 'no', result.gpuDecoding.reason],
    ['resize images', result.imagePreprocessing.advised ? `resize at pack time (~${result.imagePreprocessing.expectedSpeedup}×)` : 'no',
      result.imagePreprocessing.reason],
    ['start-up', `${startup.seconds === 0 ? 'none' : formatAboutSeconds(startup.seconds)}${startup.unpackedSeconds !== undefined
      ? ` (${formatAboutSeconds(startup.unpackedSeconds)} unpacked)` : ''}`, startup.reason],
  ];
  if (readRate) {
    rows.push(['read rate', `${formatBytes(readRate.bytesPerSecondPerInstance)}/s per instance`, readRate.reason]);
  }
  if (fsx) {
    rows.push(['FSx for Lustre', `${fsx.deploymentType}, ${formatCount(fsx.storageCapacityGiB)} GiB, ` +
      `${fsx.perUnitStorageThroughput} MB/s/TiB`, fsx.reason]);
  }
  const header = `I/O plan: ${formatCount(dataset.objectCount)} objects, ${formatBytes(dataset.totalBytes)} ` +
    `(mean ${formatBytes(dataset.meanObjectBytes)}, ${dataset.format}) on ${cluster.instanceCount} × ${cluster.instanceType} ` +
    `(${formatCountOf(cluster.processesPerInstance, 'process', 'processes')} each), ${formatCountOf(cluster.epochs, 'epoch')}, ` +
    `${formatCountOf(cluster.jobsPerMonth, 'job')} a month${cluster.reusedAcrossJobs ? ', reused across jobs' : ''}\n\n${modesTable(result)}`;
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = rows.map(([what, choice, why]) => `${what.padEnd(widths[0])}  ${choice.padEnd(widths[1])}  ${why}\n`);
  const warnings = result.warnings.length === 0
    ? 'No warnings: nothing in this plan leaves the GPUs waiting for data.\n'
    : `Warnings:\n${result.warnings.map((w) => `  ${w.code}: ${w.message}\n`).join('')}`;
  return `${header}${lines.join('')}\n${warnings}`;
}

function describeMode(result: IoPlan): string {
  const { inputMode } = result;
  if (inputMode.mode === PlannedInputMode.FSX_LUSTRE) return 'FSx for Lustre (File channel)';
  return [
    inputMode.mode,
    ...(inputMode.distribution === S3DataDistribution.SHARDED_BY_S3_KEY ? ['ShardedByS3Key'] : []),
    ...(inputMode.shuffleConfig ? ['ShuffleConfig'] : []),
  ].join(', ');
}
