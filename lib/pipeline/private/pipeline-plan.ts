import { Annotations, CfnOutput, Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { DatasetProfile } from '../../planning/dataset-profile';
import type { ImagePreprocessingOptions } from '../../vocabulary/image-preprocessing-options';
import type { IoPlan} from '../../planning/io-plan';
import { PlannedInputMode } from '../../planning/io-plan';
import { IoPlanner } from '../../planning/io-planner';
import type { PriceOverrides } from '../../planning/price-overrides';
import type { LustreDatasetCacheOptions } from '../../storage/lustre-dataset-cache';
import { ReadRate } from '../../storage/read-rate';
import type { S3ChannelOptions} from '../../training/training-channel';
import { InputMode } from '../../vocabulary/input-mode';
import { S3DataDistribution } from '../../vocabulary/s3-data-distribution';
import { clusterOfJob } from '../../training/private/job-cluster';
import type { TrainingJobOptions } from '../../training/training-job';

/** What the pipeline decides about its data path, and why: each choice with its reason. */
export interface PipelineDataPath {
  /** How the job reads the shards from S3, without a cache. */
  readonly shardsChannel?: S3ChannelOptions;
  /** The cache, with the planner's size and read rate where the user gave none. */
  readonly datasetCache?: LustreDatasetCacheOptions;
  /** Choice → reason, recorded in the cloud assembly and the stack's outputs. */
  readonly reasons: Record<string, string>;
}

/** What the pipeline knows when it plans. */
export interface PipelinePlanInputs {
  readonly training: TrainingJobOptions;
  readonly shardsChannel?: S3ChannelOptions;
  readonly datasetCache?: LustreDatasetCacheOptions;
  readonly datasetProfile?: DatasetProfile;
  readonly samplesPerSecondPerDevice?: number;
  /** The dataset's shuffle seed: the channel's ShuffleConfig uses the same, so runs repeat. */
  readonly seed: number;
  /** How the dataset's packers resize the images, if they do. */
  readonly imagePreprocessing?: ImagePreprocessingOptions;
  /** Prices instead of the table's, for the planner. */
  readonly prices?: PriceOverrides;
}

/** Metadata type of the recorded choices in the cloud assembly (`manifest.json` of the stack). */
export const PLAN_METADATA = 'cdk-training-io:plan';

/**
 * The shards channel and the cache as the I/O planner chooses them from the dataset's profile and
 * the job's cluster, under whatever the user set explicitly; without a profile, the fixed defaults.
 * Records every choice with its reason on `scope` (metadata and a stack output) and warns where the
 * data path will starve the GPUs.
 */
export function planDataPath(scope: Construct, inputs: PipelinePlanInputs): PipelineDataPath {
  const { training } = inputs;
  const instanceCount = training.instanceCount ?? 1;
  const plan = inputs.datasetProfile ? IoPlanner.plan({
    dataset: inputs.datasetProfile,
    cluster: { ...clusterOfJob(training), instanceCount },
    epochs: epochsOf(training),
    // A pipeline's cache serves every execution's job: the data is read again and again.
    reusedAcrossJobs: inputs.datasetCache !== undefined,
    samplesPerSecondPerDevice: inputs.samplesPerSecondPerDevice,
    imagePreprocessing: inputs.imagePreprocessing,
    // The pipeline packs its dataset before every job: only the packed ways of reading it are chosen from.
    alwaysPacked: true,
    prices: inputs.prices,
  }) : undefined;
  const reasons: Record<string, string> = {};
  const shardsChannel = inputs.datasetCache ? undefined : planShardsChannel(scope, inputs, plan, reasons);
  const datasetCache = inputs.datasetCache ? planCache(scope, inputs, plan, reasons) : undefined;
  if (plan) adviseImagePreprocessing(scope, plan, reasons);
  for (const warning of plan?.warnings ?? []) {
    Annotations.of(scope).addWarningV2(`cdk-training-io:${warning.code}`, warning.message);
  }
  scope.node.addMetadata(PLAN_METADATA, reasons);
  new CfnOutput(scope, 'DataPath', {
    description: 'cdk-training-io: what the pipeline chose for its data path, and why',
    value: Object.entries(reasons).map(([choice, reason]) => `${choice}: ${reason}`).join(' | ').slice(0, 4000),
  });
  return { shardsChannel, datasetCache, reasons };
}

/** The planner's word on resizing at pack time; a warning when the GPUs would wait for the CPUs' decoding. */
function adviseImagePreprocessing(scope: Construct, plan: IoPlan, reasons: Record<string, string>): void {
  reasons.imagePreprocessing = `IoPlanner: ${plan.imagePreprocessing.reason}`;
  if (plan.imagePreprocessing.advised) {
    Annotations.of(scope).addWarningV2('cdk-training-io:resizeImagesAtPackTime',
      `the loader workers decode fewer JPEGs than the GPUs consume: ${plan.imagePreprocessing.reason}; give the dataset imagePreprocessing`);
  }
}

function planShardsChannel(scope: Construct, inputs: PipelinePlanInputs, plan: IoPlan | undefined,
  reasons: Record<string, string>): S3ChannelOptions {
  const given = inputs.shardsChannel ?? {};
  const instanceCount = inputs.training.instanceCount ?? 1;
  let planned: S3ChannelOptions;
  if (plan && plan.inputMode.mode !== PlannedInputMode.FSX_LUSTRE) {
    planned = {
      inputMode: plan.inputMode.channelInputMode,
      distribution: plan.inputMode.distribution,
      ...(plan.inputMode.shuffleConfig ? { shuffleSeed: inputs.seed } : {}),
      ...(inputs.datasetProfile?.totalSize ? { datasetSize: inputs.datasetProfile.totalSize } : {}),
    };
    reasons.inputMode = `IoPlanner: ${plan.inputMode.reason}`;
  } else {
    planned = instanceCount > 1 ? { distribution: S3DataDistribution.SHARDED_BY_S3_KEY } : {};
    reasons.inputMode = plan
      ? `the planner advises an FSx for Lustre cache (${plan.inputMode.reason}), but the pipeline has no datasetCache: `
        + 'the shards are read from S3 with the defaults'
      : `no datasetProfile: ${instanceCount > 1 ? 'ShardedByS3Key over the instances' : 'FullyReplicated on one instance'}, `
        + 'the input mode TrainingJob derives (File when the shards fit on the instance, else FastFile)';
    if (plan) {
      Annotations.of(scope).addWarningV2('cdk-training-io:plannerAdvisesCache',
        `the I/O planner advises an FSx for Lustre cache: ${plan.inputMode.reason}; give the pipeline a datasetCache`);
    }
  }
  for (const key of Object.keys(given) as Array<keyof S3ChannelOptions>) {
    if (given[key] !== undefined) reasons[`shardsChannel.${key}`] = 'as given';
  }
  const chosen = { ...planned, ...given };
  if (chosen.inputMode === InputMode.FAST_FILE && chosen.distribution === S3DataDistribution.SHARDED_BY_S3_KEY && given.distribution === undefined) {
    // FastFile reads a versioned dataset through its root prefix: the loaders split the shards by rank instead.
    reasons.distribution = 'FullyReplicated: FastFile reads the dataset through its root (a version\'s shards may lie in several '
      + 'version folders), and the data loaders split the shards by rank';
    return { ...chosen, distribution: S3DataDistribution.FULLY_REPLICATED };
  }
  return chosen;
}

function planCache(scope: Construct, inputs: PipelinePlanInputs, plan: IoPlan | undefined,
  reasons: Record<string, string>): LustreDatasetCacheOptions {
  const given = inputs.datasetCache!;
  const profile = inputs.datasetProfile;
  const { training } = inputs;
  const datasetSize = given.datasetSize ?? profile?.totalSize
    ?? (profile?.meanObjectSize ? Size.bytes(profile.meanObjectSize.toBytes() * profile.objectCount) : undefined);
  reasons.cacheSize = given.datasetSize ? 'datasetSize as given'
    : datasetSize ? `datasetSize from the dataset profile: ${datasetSize.toGibibytes({ rounding: SizeRoundingBehavior.NONE }).toFixed(1)} GiB` : 'no datasetSize: the smallest capacity';
  const sampleSize = profile?.meanObjectSize ?? (profile?.totalSize ? Size.bytes(profile.totalSize.toBytes() / profile.objectCount) : undefined);
  let readRate = given.readRate;
  if (readRate) {
    reasons.cacheReadRate = 'readRate as given';
  } else if (inputs.samplesPerSecondPerDevice !== undefined && sampleSize) {
    readRate = ReadRate.forTraining({
      instance: training.instance, instanceCount: training.instanceCount,
      samplesPerSecondPerDevice: inputs.samplesPerSecondPerDevice, sampleSize,
    });
    reasons.cacheReadRate = plan?.readRate ? `IoPlanner: ${plan.readRate.reason}`
      : `${inputs.samplesPerSecondPerDevice} samples/s per device × ${training.instance.acceleratorCount} devices × ${training.instanceCount ?? 1} instances`;
  } else if (given.perUnitStorageThroughput === undefined && given.storageCapacityGiB === undefined) {
    reasons.cacheReadRate = 'none: the cache is sized for capacity only, at the lowest throughput tier';
    Annotations.of(scope).addWarningV2('cdk-training-io:cacheWithoutReadRate',
      `the cache has no readRate, so it gets the lowest throughput tier of the smallest capacity that holds the data, whatever `
      + `the ${(training.instanceCount ?? 1) * training.instance.acceleratorCount} GPUs read; give datasetCache.readRate `
      + '(ReadRate.forTraining), or samplesPerSecondPerDevice and a datasetProfile');
  } else {
    reasons.cacheReadRate = 'throughput from the given storageCapacityGiB / perUnitStorageThroughput';
  }
  return { ...given, ...(datasetSize ? { datasetSize } : {}), ...(readRate ? { readRate } : {}) };
}

/** The job's `epochs` hyperparameter, when it is a whole number (the reference code reads it). */
function epochsOf(training: TrainingJobOptions): number | undefined {
  const text = training.hyperparameters?.epochs;
  const epochs = text === undefined ? NaN : Number(text);
  return Number.isSafeInteger(epochs) && epochs >= 1 ? epochs : undefined;
}
