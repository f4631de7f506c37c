import * as fsx from 'aws-cdk-lib/aws-fsx';
import { HOURS_PER_MONTH } from '../../contract/prices';
import { DEFAULT_SHARD_BYTES } from '../../contract/shard-limits';
import type { ResolvedCluster } from '../../instances/private/cluster-rules';
import { sizeCache } from '../../instances/private/lustre-sizing';
import { fitsFileMode } from '../../instances/private/storage-rules';
import { InputMode } from '../../vocabulary/input-mode';
import { S3DataDistribution } from '../../vocabulary/s3-data-distribution';
import { DatasetFormat } from '../dataset-profile';
import type { ModeEstimate, PackingCost, UnavailableMode } from '../io-plan';
import { PlannedInputMode } from '../io-plan';
import type { Rate } from './mode-rates';
import { Bottleneck, fileDownloadSeconds, fsxRate, localReadRate, onDemandRate, pipeRate, slowest } from './mode-rates';
import { packingCost } from './packing-cost';
import type { ResolvedDataset } from './plan-inputs';
import type { ResolvedPrices } from './resolved-prices';
import { FAST_FILE_SHARD_BYTES, shardLayout } from './shard-rules';
import { listingSeconds } from './startup-rules';
import { formatBytes, formatCount, formatDollars, formatSeconds } from './units';

/** What every row is evaluated against. */
export interface ModeContext {
  readonly dataset: ResolvedDataset;
  readonly cluster: ResolvedCluster;
  readonly epochs: number;
  readonly jobsPerMonth: number;
  readonly prices: ResolvedPrices;
  /** Bytes/s each instance must read to keep its devices busy; undefined when their samples/s are unknown. */
  readonly neededBytesPerSecond?: number;
  /** Bytes/s of samples the CPUs of an instance decode, where decoding caps the devices (JPEG without an NVIDIA GPU). */
  readonly decodedBytesPerSecond?: number;
  /** Whether the data fits the RAM the loaders leave (File mode then reads the page cache). */
  readonly fitsInMemory: boolean;
  /** Whether the objects can be packed (files under 50 MB). */
  readonly packable: boolean;
}

/** What a row reads, and how: the estimate's own fields, and what its figures are worked out from. */
interface RowSpec extends Pick<ModeEstimate, 'label' | 'mode' | 'channelInputMode' | 'distribution' | 'shuffleConfig' | 'packed'> {
  readonly objects: number;
  readonly startupSeconds: number;
  readonly steady: Rate;
  /** FSx: the first epoch's rate (files loaded from S3), and how many first epochs one job pays. */
  readonly cold?: { readonly rate: Rate; readonly epochsPerJob: number };
  readonly getsPerJob: number;
  readonly fsx?: { readonly type: fsx.LustreDeploymentType; readonly capacityGiB: number; readonly tier: number; readonly gbMonth: number };
  readonly startupWhy: string;
  /** Packed rows: packing's one-off cost, at the shard size the row reads. */
  readonly packing?: PackingCost;
}

/** Every way of reading the data the job can use, priced, and the ways it cannot. */
export function estimateModes(context: ModeContext): { modes: ModeEstimate[]; unavailable: UnavailableMode[]; packing?: PackingCost } {
  const { dataset, cluster, prices } = context;
  const packings = new Map<number, PackingCost>();
  const layouts = (target: number) => {
    const layout = shardLayout(dataset.totalBytes, dataset.objectCount, cluster.consumers, target);
    if (!packings.has(target)) packings.set(target, packingCost(dataset.objectCount, dataset.totalBytes, layout.count, prices));
    return layout;
  };
  const variants: Array<{ packed: boolean; objects: (target: number) => number }> = [
    { packed: false, objects: () => dataset.objectCount },
    ...(context.packable ? [{ packed: true, objects: (target: number) => layouts(target).count }] : []),
  ];
  const specs: RowSpec[] = [];
  const unavailable: UnavailableMode[] = [];
  for (const variant of variants) {
    // The rows read at `target`, with packing's cost at that target where they read packed shards.
    const at = (target: number, rows: RowSpec[]) => rows.map((row) => (variant.packed ? { ...row, packing: packings.get(target) } : row));
    specs.push(...at(DEFAULT_SHARD_BYTES, fileRows(context, variant.packed, variant.objects(DEFAULT_SHARD_BYTES), unavailable)));
    specs.push(...at(FAST_FILE_SHARD_BYTES, [fastFileRow(context, variant.packed, variant.objects(FAST_FILE_SHARD_BYTES))]));
    if (variant.packed || dataset.format !== DatasetFormat.FILES) {
      specs.push(...at(DEFAULT_SHARD_BYTES, [pipeRow(context, variant.packed, variant.objects(DEFAULT_SHARD_BYTES))]));
    } else {
      unavailable.push({ label: 'Pipe', reason: 'Pipe mode streams record shards: the files must be packed first' });
    }
    for (const type of [fsx.LustreDeploymentType.SCRATCH_2, fsx.LustreDeploymentType.PERSISTENT_2] as const) {
      specs.push(...at(DEFAULT_SHARD_BYTES, [fsxRow(context, variant.packed, variant.objects(DEFAULT_SHARD_BYTES), type)]));
    }
  }
  const packing = packings.get(DEFAULT_SHARD_BYTES);
  return { modes: specs.map((spec) => priceRow(context, spec)), unavailable, ...(packing ? { packing } : {}) };
}

function suffix(packed: boolean): string {
  return packed ? ', packed' : '';
}

function fileRows(context: ModeContext, packed: boolean, objects: number, unavailable: UnavailableMode[]): RowSpec[] {
  const { dataset, cluster } = context;
  const label = `File${suffix(packed)}`;
  if (!fitsFileMode(cluster.instance, dataset.totalBytes)) {
    if (!packed) {
      unavailable.push({ label: 'File', reason: `${formatBytes(dataset.totalBytes)} does not fit the storage of ${cluster.instance.instanceType}` +
        `${cluster.instance.hasLocalNvme ? ` (${cluster.instance.localNvmeGB} GB of NVMe, with 10 % + 50 GiB kept free)` : ' (EBS only: 100 GB at most)'}` });
    }
    return [];
  }
  const startupSeconds = fileDownloadSeconds(cluster.instance, dataset.totalBytes, objects, cluster.instanceCount);
  return [{
    label, mode: PlannedInputMode.FILE, channelInputMode: InputMode.FILE, distribution: S3DataDistribution.FULLY_REPLICATED,
    shuffleConfig: false, packed, objects, startupSeconds,
    steady: localReadRate(cluster.instance, context.fitsInMemory),
    getsPerJob: objects * cluster.instanceCount,
    startupWhy: `each instance downloads ${formatBytes(dataset.totalBytes)} in ${formatCount(objects)} objects`,
  }];
}

function streamedDistribution(cluster: ResolvedCluster): S3DataDistribution {
  return cluster.instanceCount > 1 ? S3DataDistribution.SHARDED_BY_S3_KEY : S3DataDistribution.FULLY_REPLICATED;
}

function fastFileRow(context: ModeContext, packed: boolean, objects: number): RowSpec {
  const { dataset, cluster, epochs } = context;
  const distribution = streamedDistribution(cluster);
  return {
    label: `FastFile${distribution === S3DataDistribution.SHARDED_BY_S3_KEY ? ', ShardedByS3Key' : ''}${suffix(packed)}`,
    mode: PlannedInputMode.FAST_FILE, channelInputMode: InputMode.FAST_FILE, distribution, shuffleConfig: false, packed, objects,
    startupSeconds: listingSeconds(objects),
    steady: onDemandRate(cluster, dataset.totalBytes / objects),
    getsPerJob: objects * epochs,
    startupWhy: `listing ${formatCount(objects)} keys`,
  };
}

function pipeRow(context: ModeContext, packed: boolean, objects: number): RowSpec {
  const { cluster, epochs } = context;
  const distribution = streamedDistribution(cluster);
  const several = cluster.instanceCount > 1;
  return {
    label: `Pipe${several ? ', ShardedByS3Key, ShuffleConfig' : ''}${suffix(packed)}`,
    mode: PlannedInputMode.PIPE, channelInputMode: InputMode.PIPE, distribution, shuffleConfig: several, packed, objects,
    startupSeconds: listingSeconds(objects),
    steady: pipeRate(cluster.instance),
    getsPerJob: objects * epochs,
    startupWhy: `listing ${formatCount(objects)} keys`,
  };
}

function fsxRow(context: ModeContext, packed: boolean, objects: number, type: fsx.LustreDeploymentType.SCRATCH_2 | fsx.LustreDeploymentType.PERSISTENT_2): RowSpec {
  const { dataset, cluster, prices, jobsPerMonth } = context;
  const need = context.neededBytesPerSecond === undefined ? undefined : context.neededBytesPerSecond * cluster.instanceCount;
  const sizing = sizeCache({ deploymentType: type, datasetBytes: dataset.totalBytes, readBytesPerSecond: need });
  const scratch = type === fsx.LustreDeploymentType.SCRATCH_2;
  const steady = fsxRate(cluster, sizing.baselineBytesPerSecond);
  return {
    label: `FSx ${type}${suffix(packed)}`,
    mode: PlannedInputMode.FSX_LUSTRE, channelInputMode: InputMode.FILE, distribution: S3DataDistribution.FULLY_REPLICATED,
    shuffleConfig: false, packed, objects, startupSeconds: 0, steady,
    // A file's first read loads it from S3: a scratch file system made for the job loads all in its
    // first epoch; a persistent one keeps them, so only the month's first job pays that epoch.
    cold: { rate: slowest(steady, onDemandRate(cluster, dataset.totalBytes / objects)), epochsPerJob: scratch ? 1 : 1 / jobsPerMonth },
    getsPerJob: scratch ? objects : objects / jobsPerMonth,
    fsx: {
      type, capacityGiB: sizing.storageCapacityGiB, tier: sizing.perUnitStorageThroughput,
      gbMonth: scratch ? prices.fsxScratch2GbMonth : prices.fsxPersistent2GbMonth(sizing.perUnitStorageThroughput),
    },
    startupWhy: 'SageMaker mounts the file system in moments',
  };
}

/** Seconds of one epoch's reading on each instance at `rate`, within what the devices take and the CPUs decode. */
function epoch(context: ModeContext, rate: Rate): { seconds: number; limit: Rate } {
  const limit = slowest(rate,
    ...(context.decodedBytesPerSecond === undefined ? [] : [{ bytesPerSecond: context.decodedBytesPerSecond, bottleneck: Bottleneck.DECODING }]),
    ...(context.neededBytesPerSecond === undefined ? [] : [{ bytesPerSecond: context.neededBytesPerSecond, bottleneck: Bottleneck.GPU }]));
  const bytes = context.dataset.totalBytes / context.cluster.instanceCount;
  return { seconds: limit.bytesPerSecond === Number.POSITIVE_INFINITY ? 0 : bytes / limit.bytesPerSecond, limit };
}

function priceRow(context: ModeContext, spec: RowSpec): ModeEstimate {
  const { dataset, cluster, epochs, jobsPerMonth, prices } = context;
  const packing = spec.packing;
  const steady = epoch(context, spec.steady);
  const cold = spec.cold ? epoch(context, spec.cold.rate) : undefined;
  const coldEpochs = spec.cold?.epochsPerJob ?? 0;
  const trainingSeconds = steady.seconds * (epochs - coldEpochs) + (cold ? cold.seconds * coldEpochs : 0);
  const need = context.neededBytesPerSecond;
  const ideal = need === undefined ? trainingSeconds : epochs * dataset.totalBytes / cluster.instanceCount / need;
  const starvedSeconds = Math.max(0, trainingSeconds - ideal);
  const jobSeconds = spec.startupSeconds + trainingSeconds;
  const hourly = prices.instanceHourly(cluster.instance.instanceType) ?? 0;
  const instanceDollars = cluster.instanceCount * hourly * jobSeconds / 3600;
  const fsxMonth = spec.fsx ? spec.fsx.capacityGiB * spec.fsx.gbMonth : 0;
  const scratch = spec.fsx?.type === fsx.LustreDeploymentType.SCRATCH_2;
  const fsxDollars = spec.fsx ? (scratch ? fsxMonth * jobSeconds / 3600 / HOURS_PER_MONTH : fsxMonth / jobsPerMonth) : 0;
  const requestDollars = spec.getsPerJob / 1000 * prices.s3GetPer1000 +
    (spec.mode === PlannedInputMode.FSX_LUSTRE ? 0 : Math.ceil(spec.objects / 1000) / 1000 * prices.s3ListPer1000);
  const packingDollars = packing?.dollars ?? 0;
  const packedCopyMonth = spec.packed ? dataset.totalBytes / 1e9 * prices.s3StorageGbMonth : 0;
  const runDollars = instanceDollars + fsxDollars + requestDollars;
  const feedsGpus = need === undefined ? undefined : Math.min(spec.steady.bytesPerSecond, context.decodedBytesPerSecond ?? Infinity) >= need;
  const rate = spec.steady.bytesPerSecond === Number.POSITIVE_INFINITY ? 'local storage' : `${formatBytes(spec.steady.bytesPerSecond)}/s per instance`;
  return {
    label: spec.label, mode: spec.mode, channelInputMode: spec.channelInputMode, distribution: spec.distribution,
    shuffleConfig: spec.shuffleConfig, packed: spec.packed,
    ...(spec.fsx ? { fsxDeploymentType: spec.fsx.type, fsxStorageCapacityGiB: spec.fsx.capacityGiB, fsxPerUnitStorageThroughput: spec.fsx.tier } : {}),
    startupSeconds: spec.startupSeconds,
    ...(spec.steady.bytesPerSecond === Number.POSITIVE_INFINITY ? {} : { readBytesPerSecondPerInstance: spec.steady.bytesPerSecond }),
    ...(need === undefined ? {} : { neededBytesPerSecondPerInstance: need }),
    ...(feedsGpus === undefined ? {} : { feedsGpus }),
    bottleneck: steady.limit.bottleneck,
    trainingSeconds,
    starvedSeconds,
    jobHours: jobSeconds / 3600,
    instanceDollars, fsxDollars, requestDollars, packingDollars,
    dollarsPerJob: runDollars + packingDollars,
    dollarsPerMonth: jobsPerMonth * runDollars + packedCopyMonth + packingDollars,
    reason: `${spec.startupWhy} (${formatSeconds(spec.startupSeconds)}); reads ${rate}` +
      `${need === undefined ? '' : ` against ${formatBytes(need)}/s needed`} (${steady.limit.bottleneck})` +
      `${cold && coldEpochs > 0 ? `, a first epoch loading from S3 at ${formatBytes(cold.limit.bytesPerSecond)}/s` +
        `${coldEpochs < 1 ? ` once for the month's ${jobsPerMonth} jobs` : ''}` : ''}; ` +
      `${cluster.instanceCount} × ${formatDollars(hourly)}/h × ${(jobSeconds / 3600).toFixed(2)} h = ${formatDollars(instanceDollars)}` +
      `${spec.fsx ? `, FSx ${formatCount(spec.fsx.capacityGiB)} GiB at ${spec.fsx.tier} MB/s/TiB × ${formatDollars(spec.fsx.gbMonth)}/GB-month ` +
        `${scratch ? 'for the job' : `÷ ${jobsPerMonth} jobs`} = ${formatDollars(fsxDollars)}` : ''}` +
      `, requests ${formatDollars(requestDollars)}${packing ? `, packing ${formatDollars(packingDollars)} once` : ''}`,
  };
}
