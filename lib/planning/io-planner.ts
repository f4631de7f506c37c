import * as fsx from 'aws-cdk-lib/aws-fsx';
import type { DatasetProfile} from './dataset-profile';
import { SampleEncoding } from './dataset-profile';
import type {
  FsxAdvice, GpuDecodingAdvice, InputModeAdvice, IoPlan, LoaderAdvice, PinMemoryAdvice, PlanWarning,
  ReadRateEstimate, StartupEstimate} from './io-plan';
import { PlannedInputMode } from './io-plan';
import type { ResolvedCluster} from '../instances/private/cluster-rules';
import { resolveCluster } from '../instances/private/cluster-rules';
import { loaderWorkersWarning } from '../instances/private/loader-rules';
import { decodingRates } from './private/decoding-rates';
import { adviseGpuDecoding } from './private/gpu-decoding-rule';
import { planPacking, shouldPack } from './private/packing-rule';
import { adviseImagePreprocessing } from './private/preprocessing-rule';
import type { ImagePreprocessingOptions } from '../vocabulary/image-preprocessing-options';
import type { ResolvedDataset} from './private/plan-inputs';
import { resolveDataset, resolveEpochs, resolveJobsPerMonth, resolveMaxDollars, resolveSamplesPerSecond } from './private/plan-inputs';
import { listingSeconds, networkBytesPerSecond, objectsPerSecond } from './private/startup-rules';
import { EBS_GP2_MAX_BYTES_PER_SECOND, fitsFileMode } from '../instances/private/storage-rules';
import { formatBytes, formatCount, formatCountOf, formatSeconds } from './private/units';
import { fileDownloadRate, fileDownloadSeconds } from './private/mode-rates';
import { estimateModes } from './private/mode-estimates';
import { chooseMode } from './private/mode-choice';
import { resolvePrices } from './private/resolved-prices';
import type { PriceOverrides } from './price-overrides';
import { GIB } from '../contract/units';
import type { ModeEstimate } from './io-plan';
import type { TrainingCluster } from '../instances/training-cluster';
import type { CacheDeploymentType} from '../instances/private/lustre-sizing';
import { sizeCache } from '../instances/private/lustre-sizing';

/**
 * What the I/O planner plans for: the dataset, the cluster and how the job reads the data.
 */
export interface IoPlanProps {
  /** The dataset as it lies in S3. */
  readonly dataset: DatasetProfile;

  /** The instances that train on it. */
  readonly cluster: TrainingCluster;

  /**
   * Passes over the data in the job.
   *
   * @default 1
   */
  readonly epochs?: number;

  /**
   * Whether other jobs read the same data. Recorded in the plan; what it costs is priced through
   * `jobsPerMonth`.
   *
   * @default false
   */
  readonly reusedAcrossJobs?: boolean;

  /**
   * Jobs a month that read the data: each mode's dollars per month, and what a PERSISTENT_2 cache
   * (paid by the month, loaded from S3 once) costs each job.
   *
   * @default 1
   */
  readonly jobsPerMonth?: number;

  /**
   * Dollars per job above which the plan warns (`aboveMaxDollars`).
   *
   * @default - no limit
   */
  readonly maxDollarsPerJob?: number;

  /**
   * Whether the objects are packed before the job reads them whatever the plan says (a
   * `TrainingPipeline` packs its dataset): only the packed ways of reading them are chosen from.
   *
   * @default false
   */
  readonly alwaysPacked?: boolean;

  /**
   * Prices instead of the table's (us-east-1 on-demand list prices): another region, a discount.
   *
   * @default - the table's prices
   */
  readonly prices?: PriceOverrides;

  /**
   * Samples each training process (a GPU, or a NeuronCore on Trainium) consumes per second at full speed, e.g. 1350 for ResNet-50
   * on a V100. Enables the read rate, training time, decoding and network checks.
   *
   * @default - unknown: those checks are skipped
   */
  readonly samplesPerSecondPerDevice?: number;

  /**
   * How the images are resized when the dataset is packed (`ShardedDataset` `imagePreprocessing`):
   * the decoding estimates then count resized images, and resizing is not advised again.
   *
   * @default - the images are packed as they are
   */
  readonly imagePreprocessing?: ImagePreprocessingOptions;
}

/**
 * The I/O planner: from a dataset profile and a cluster, every input mode priced for the job (start-up,
 * read rate against what the GPUs need, job hours, dollars per job and per month, at the list prices
 * of `lib/contract/prices.ts` or `prices`), the cheapest that keeps the GPUs fed, and the shard layout,
 * loader workers, decoding and FSx size that go with it, each with its reason, and warnings for what
 * will leave them waiting. Pure: no constructs, no I/O. `training-io plan` prints it.
 */
export class IoPlanner {
  /**
   * Plans the data path of a training job.
   *
   * @throws ValidationError naming the field, the value and what is allowed, for bad input
   */
  public static plan(props: IoPlanProps): IoPlan {
    const dataset = resolveDataset(props.dataset);
    const cluster = resolveCluster(props.cluster, 'cluster');
    const epochs = resolveEpochs(props.epochs);
    const reusedAcrossJobs = props.reusedAcrossJobs ?? false;
    const samplesPerSecond = resolveSamplesPerSecond(props.samplesPerSecondPerDevice, dataset);
    const jobsPerMonth = resolveJobsPerMonth(props.jobsPerMonth);
    const prices = resolvePrices(props.prices);
    const warnings: PlanWarning[] = [];

    const rates = decodingRates(dataset, cluster, samplesPerSecond, props.imagePreprocessing);
    const bytesPerRecord = dataset.recordCount === undefined ? undefined : dataset.totalBytes / dataset.recordCount;
    const processes = cluster.sizing.processesPerInstance;
    const demand = rates.demand?.samplesPerSecond;
    const cpuDecodes = dataset.sampleEncoding === SampleEncoding.JPEG && cluster.instance.gpus === 0;
    const fitsLocalStorage = fitsFileMode(cluster.instance, dataset.totalBytes);
    // After the first epoch the OS page cache serves reads from whatever RAM the loader workers leave.
    const fitsInMemory = dataset.totalBytes <= cluster.instance.memoryGiB * GIB - cluster.loaderMemoryBytes;
    const estimates = estimateModes({
      dataset, cluster, epochs, jobsPerMonth, prices, fitsInMemory, packable: shouldPack(dataset),
      ...(demand !== undefined && bytesPerRecord !== undefined ? { neededBytesPerSecond: processes * demand * bytesPerRecord } : {}),
      ...(cpuDecodes && bytesPerRecord !== undefined ? { decodedBytesPerSecond: processes * rates.perProcess * bytesPerRecord } : {}),
    });
    const packedOnly = (props.alwaysPacked ?? false) && shouldPack(dataset);
    const candidates = packedOnly ? estimates.modes.filter((mode) => mode.packed) : estimates.modes;
    const { choice, chosen, warnings: choiceWarnings } = chooseMode(candidates, {
      cluster, prices, jobsPerMonth, maxDollarsPerJob: resolveMaxDollars(props.maxDollarsPerJob),
    });
    const inputMode: InputModeAdvice = {
      mode: chosen.mode, channelInputMode: chosen.channelInputMode, distribution: chosen.distribution,
      shuffleConfig: chosen.shuffleConfig, fitsLocalStorage, fitsInMemory, reason: choice.reason,
    };
    const pack = chosen.packed;
    const packing = planPacking(dataset, cluster, inputMode.mode, inputMode.distribution, pack);
    warnings.push(...packing.warnings);
    const readRate = samplesPerSecond === undefined ? undefined : estimateReadRate(dataset, cluster, samplesPerSecond, epochs);
    const startup = estimateStartup(dataset, cluster, inputMode, packing.advice.shardCount, pack);
    const gpuDecoding = adviseGpuDecoding(dataset, cluster, rates);
    const fsxAdvice = inputMode.mode === PlannedInputMode.FSX_LUSTRE ? adviseFsx(dataset, chosen, readRate) : undefined;
    warnings.push(...choiceWarnings);

    if (props.cluster.loaderWorkers !== undefined) {
      const warning = loaderWorkersWarning(cluster.sizing, cluster.loaderWorkers);
      if (warning) warnings.push(warning);
    }
    warnings.push(...starvationWarnings(dataset, cluster, inputMode, readRate, gpuDecoding, samplesPerSecond));

    return {
      dataset: {
        objectCount: dataset.objectCount,
        totalBytes: dataset.totalBytes,
        meanObjectBytes: dataset.meanObjectBytes,
        format: dataset.format,
        ...(dataset.recordCount !== undefined ? { recordCount: dataset.recordCount } : {}),
      },
      cluster: {
        instanceType: cluster.instance.instanceType,
        instanceCount: cluster.instanceCount,
        processesPerInstance: cluster.sizing.processesPerInstance,
        epochs,
        jobsPerMonth,
        reusedAcrossJobs,
      },
      inputMode,
      packing: packing.advice,
      loaders: adviseLoaders(cluster, props.cluster.loaderWorkers !== undefined),
      pinMemory: advisePinMemory(cluster),
      gpuDecoding,
      imagePreprocessing: adviseImagePreprocessing(dataset, rates, props.imagePreprocessing !== undefined),
      startup,
      ...(readRate ? { readRate } : {}),
      ...(fsxAdvice ? { fsx: fsxAdvice } : {}),
      modes: estimates.modes,
      unavailableModes: estimates.unavailable,
      choice,
      ...(estimates.packing ? { packingCost: estimates.packing } : {}),
      warnings,
    };
  }

  private constructor() {}
}

function adviseLoaders(cluster: ResolvedCluster, given: boolean): LoaderAdvice {
  const { sizing, instance } = cluster;
  const processes = formatCountOf(sizing.processesPerInstance, 'process', 'processes');
  const sized = `${instance.vcpus} vCPUs ÷ ${processes} = ${sizing.vcpusPerProcess} per process, ` +
    `one for the process itself${sizing.limitedByMemory ? `, capped by memory at ${sizing.loaderWorkers} (every worker is a process with its own copy)` : ''}`;
  return {
    processesPerInstance: sizing.processesPerInstance,
    loaderWorkers: cluster.loaderWorkers,
    daliThreads: sizing.daliThreads,
    limitedByMemory: sizing.limitedByMemory,
    reason: given
      ? `${cluster.loaderWorkers} workers as given (the sizing rule says ${sizing.loaderWorkers}: ${sized}); ` +
        `${sizing.daliThreads} DALI threads`
      : `${sizing.loaderWorkers} workers and ${sizing.daliThreads} DALI threads per process: ${sized}; more workers than cores ` +
        'slow every one of them',
  };
}

function advisePinMemory(cluster: ResolvedCluster): PinMemoryAdvice {
  if (cluster.instance.gpus > 0) {
    return {
      pinMemory: true,
      reason: 'batches in page-locked memory let CUDA copy them to the GPU asynchronously (`.cuda(non_blocking=True)`) ' +
        'and faster (PyTorch CUDA notes, "Use pinned memory buffers")',
    };
  }
  return {
    pinMemory: false,
    reason: `${cluster.instance.instanceType} has no NVIDIA GPU: pinned memory only speeds up CUDA copies`,
  };
}

function estimateReadRate(dataset: ResolvedDataset, cluster: ResolvedCluster, samplesPerSecond: number, epochs: number): ReadRateEstimate {
  const records = dataset.recordCount!;
  const bytesPerRecord = dataset.totalBytes / records;
  const perInstance = cluster.sizing.processesPerInstance;
  const processes = cluster.instanceCount * perInstance;
  const bytesPerSecondPerInstance = perInstance * samplesPerSecond * bytesPerRecord;
  const epochSeconds = records / (processes * samplesPerSecond);
  return {
    bytesPerSecondPerInstance,
    bytesPerSecond: bytesPerSecondPerInstance * cluster.instanceCount,
    epochSeconds,
    trainingSeconds: epochSeconds * epochs,
    reason: `${formatCountOf(perInstance, 'process', 'processes')} per instance × ${formatCount(samplesPerSecond)} samples/s × ` +
      `${formatBytes(bytesPerRecord)} per sample: ${formatBytes(bytesPerSecondPerInstance)}/s per instance` +
      `${cluster.instanceCount > 1 ? `, ${formatBytes(bytesPerSecondPerInstance * cluster.instanceCount)}/s for the ${cluster.instanceCount} instances` : ''}; ` +
      `an epoch of ${formatCount(records)} samples over ${formatCountOf(processes, 'process', 'processes')} takes ` +
      `${formatSeconds(epochSeconds)}${epochs > 1 ? `, ${epochs} take ${formatSeconds(epochSeconds * epochs)}` : ''}`,
  };
}

function estimateStartup(dataset: ResolvedDataset, cluster: ResolvedCluster, inputMode: InputModeAdvice, objectsRead: number,
  packed: boolean): StartupEstimate {
  const { instance, instanceCount } = cluster;
  switch (inputMode.mode) {
    case PlannedInputMode.FILE: {
      const download = (objects: number) => fileDownloadSeconds(instance, dataset.totalBytes, objects, instanceCount);
      const seconds = download(objectsRead);
      const { bytesPerSecond: rate, bottleneck } = fileDownloadRate(instance);
      const cap = ` (${bottleneck})`;
      return {
        seconds,
        ...(packed ? { unpackedSeconds: download(dataset.objectCount) } : {}),
        reason: `each instance downloads ${formatBytes(dataset.totalBytes)} in ${formatCount(objectsRead)} objects before ` +
          `training: ${formatSeconds(dataset.totalBytes / rate)} at ${formatBytes(rate)}/s${cap} plus ` +
          `${formatSeconds(objectsRead / objectsPerSecond(instanceCount))} of requests` +
          `${packed ? `; as ${formatCount(dataset.objectCount)} small files it would take ${formatSeconds(download(dataset.objectCount))}` : ''}`,
      };
    }
    case PlannedInputMode.FSX_LUSTRE:
      return {
        seconds: 0,
        reason: 'SageMaker mounts the file system in moments, whatever its size; the first epoch loads each file from S3 ' +
          'on first read (metadata is imported when the cache is created), later epochs and jobs read the cache',
      };
    default: {
      const seconds = listingSeconds(objectsRead);
      return {
        seconds,
        ...(packed ? { unpackedSeconds: listingSeconds(dataset.objectCount) } : {}),
        reason: `${inputMode.mode} streams while training runs; it starts after listing ${formatCount(objectsRead)} objects ` +
          `(${formatSeconds(seconds)} at 1,000 keys a page)` +
          `${packed ? `; ${formatCount(dataset.objectCount)} small files would take ${formatSeconds(listingSeconds(dataset.objectCount))}` : ''}`,
      };
    }
  }
}

function adviseFsx(dataset: ResolvedDataset, chosen: ModeEstimate, readRate: ReadRateEstimate | undefined): FsxAdvice {
  const deploymentType = chosen.fsxDeploymentType as CacheDeploymentType;
  const persistent = deploymentType === fsx.LustreDeploymentType.PERSISTENT_2;
  const forData = sizeCache({ deploymentType, datasetBytes: dataset.totalBytes }).storageCapacityGiB;
  const capacityGiB = chosen.fsxStorageCapacityGiB!;
  const tier = chosen.fsxPerUnitStorageThroughput!;
  const baselineThroughputMBps = capacityGiB * tier / 1000;
  const type = persistent
    ? 'PERSISTENT_2 (kept between jobs: replicated within the AZ, loaded from S3 once)'
    : 'SCRATCH_2 (made for the job: cheapest per GiB, not replicated, a fixed 200 MB/s per TiB)';
  const capacity = capacityGiB > forData
    ? `${formatCount(capacityGiB)} GiB, more than the ${formatCount(forData)} GiB the data needs, for throughput`
    : `${formatCount(capacityGiB)} GiB holds ${formatBytes(dataset.totalBytes)} + 10 %`;
  const feeds = readRate ? `, which feeds the ${formatBytes(readRate.bytesPerSecond)}/s the job reads`
    : '; give the samples/s per GPU to size it for the read rate';
  return {
    deploymentType,
    storageCapacityGiB: capacityGiB,
    perUnitStorageThroughput: tier,
    baselineThroughputMBps,
    reason: `${type}: ${capacity}; ${tier} MB/s per TiB gives ${formatCount(baselineThroughputMBps)} MB/s baseline${feeds}`,
  };
}

function starvationWarnings(dataset: ResolvedDataset, cluster: ResolvedCluster, inputMode: InputModeAdvice,
  readRate: ReadRateEstimate | undefined, gpuDecoding: GpuDecodingAdvice, samplesPerSecond: number | undefined): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  const { instance } = cluster;
  const network = networkBytesPerSecond(instance);
  if (readRate && network !== undefined && inputMode.mode !== PlannedInputMode.FILE && readRate.bytesPerSecondPerInstance > network) {
    warnings.push({
      code: 'readRateAboveNetwork',
      message: `each instance must read ${formatBytes(readRate.bytesPerSecondPerInstance)}/s over the network, more than the ` +
        `${instance.networkGbps} Gbit/s baseline of ${instance.instanceType}: the GPUs wait for data; use more, smaller instances ` +
        'or an instance with more bandwidth',
    });
  }
  if (readRate && !instance.hasLocalNvme && inputMode.mode === PlannedInputMode.FILE && !inputMode.fitsInMemory &&
    readRate.bytesPerSecondPerInstance > EBS_GP2_MAX_BYTES_PER_SECOND) {
    warnings.push({
      code: 'readRateAboveEbs',
      message: `each instance must read ${formatBytes(readRate.bytesPerSecondPerInstance)}/s from its EBS volume, more than a gp2 ` +
        `volume delivers (${formatBytes(EBS_GP2_MAX_BYTES_PER_SECOND)}/s): use an instance with local NVMe, or FastFile`,
    });
  }
  if (samplesPerSecond !== undefined && dataset.sampleEncoding === SampleEncoding.JPEG && instance.gpus === 0 &&
    samplesPerSecond > gpuDecoding.cpuSamplesPerSecondPerProcess) {
    warnings.push({
      code: 'cpuBoundDecoding',
      message: `the loader workers decode about ${formatCount(gpuDecoding.cpuSamplesPerSecondPerProcess)} JPEGs/s per process, ` +
        `less than the ${formatCount(samplesPerSecond)} each device consumes, and ${instance.instanceType} has no NVIDIA GPU to ` +
        'decode on: store decoded (or smaller) samples, or use an instance with more vCPUs per device',
    });
  }
  return warnings;
}
