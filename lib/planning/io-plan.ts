import type * as fsx from 'aws-cdk-lib/aws-fsx';
import type { DatasetFormat } from './dataset-profile';
import type { ShardFormat } from '../vocabulary/shard-format';
import type { InputMode } from '../vocabulary/input-mode';
import type { S3DataDistribution } from '../vocabulary/s3-data-distribution';

/**
 * Where the training data is read from, as the I/O planner chooses it.
 */
export enum PlannedInputMode {
  /** File mode: SageMaker downloads the data to the instance's storage (local NVMe) before training starts. */
  FILE = 'File',
  /** An FSx for Lustre file system linked to S3 (`LustreDatasetCache`), read by a File-mode channel. */
  FSX_LUSTRE = 'FSxLustre',
  /** FastFile mode: S3 mounted read-only, objects streamed on first read. */
  FAST_FILE = 'FastFile',
  /** Pipe mode: objects streamed through a FIFO per epoch, reshuffled every epoch with ShuffleConfig. */
  PIPE = 'Pipe',
}

/**
 * Where the training container decodes and augments JPEGs: train.py's `--loader` (`auto` picks the
 * same way from what the process finds).
 */
export enum PlannedLoader {
  /** The loader workers decode and augment on the CPU: the GPU only trains. */
  CPU = 'cpu',
  /** The GPU decodes (NVIDIA DALI where the container has it, else nvJPEG through torchvision) and augments. */
  GPU = 'gpu',
}

/**
 * The dataset the plan is for, with the derived sizes.
 */
export interface PlannedDataset {
  /** Objects under the prefix. */
  readonly objectCount: number;
  /** Total size in bytes. */
  readonly totalBytes: number;
  /** Mean object size in bytes. */
  readonly meanObjectBytes: number;
  /** How the objects hold the samples. */
  readonly format: DatasetFormat;
  /** Samples in the dataset, when known. */
  readonly recordCount?: number;
}

/**
 * The cluster the plan is for, with its defaults applied.
 */
export interface PlannedCluster {
  /** The instance type, e.g. `ml.p3dn.24xlarge`. */
  readonly instanceType: string;
  /** Instances in the job. */
  readonly instanceCount: number;
  /** Training processes per instance. */
  readonly processesPerInstance: number;
  /** Epochs the job reads the data for. */
  readonly epochs: number;
  /** Jobs a month that read the data. */
  readonly jobsPerMonth: number;
  /** Whether other jobs read the same data. */
  readonly reusedAcrossJobs: boolean;
}

/**
 * How the data reaches the training containers.
 */
export interface InputModeAdvice {
  /** Where the data is read from. */
  readonly mode: PlannedInputMode;
  /** The channel's `InputMode` (File for an FSx for Lustre channel). */
  readonly channelInputMode: InputMode;
  /** How the objects are spread over the instances (FSx channels are always FullyReplicated). */
  readonly distribution: S3DataDistribution;
  /** Whether to give the channel a `shuffleSeed` (SageMaker's ShuffleConfig): Pipe mode reshuffles every epoch. */
  readonly shuffleConfig: boolean;
  /** Whether the data (with headroom for checkpoints and outputs) fits each instance's storage in File mode. */
  readonly fitsLocalStorage: boolean;
  /** Whether the data fits in the RAM the loaders leave: after the first epoch it is read from the page cache. */
  readonly fitsInMemory: boolean;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * Whether and how to pack the objects into shards.
 */
export interface PackingAdvice {
  /** Whether to pack (or repack) the objects into shards first, e.g. with `ShardedDataset` or `training-io pack`. */
  readonly pack: boolean;
  /** The shard format to pack into; undefined when the objects are read as they are. */
  readonly format?: ShardFormat;
  /** Target shard size in bytes (`targetShardSize`), 1–128 MiB; undefined when not packing. */
  readonly targetShardBytes?: number;
  /** Objects the training channel reads: the shard count when packing, else the objects as they are. */
  readonly shardCount: number;
  /** Mean size of those objects in bytes. */
  readonly shardBytes: number;
  /** Readers that split the shards: instances × processes × loader workers (`consumers` of the packer). */
  readonly consumers: number;
  /** Shards each instance reads with ShardedByS3Key (the whole count otherwise). */
  readonly shardsPerInstance: number;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * Data-loader workers and DALI threads of each training process.
 */
export interface LoaderAdvice {
  /** Training processes per instance. */
  readonly processesPerInstance: number;
  /** PyTorch `DataLoader(num_workers=...)` per process. */
  readonly loaderWorkers: number;
  /** NVIDIA DALI `num_threads` per process. */
  readonly daliThreads: number;
  /** Whether memory, not vCPUs, set the worker count. */
  readonly limitedByMemory: boolean;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * Whether the data loader should return batches in pinned (page-locked) memory.
 */
export interface PinMemoryAdvice {
  /** `DataLoader(pin_memory=...)`. */
  readonly pinMemory: boolean;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * Whether to decode and augment the samples on the GPU (NVIDIA DALI, `device='mixed'`).
 */
export interface GpuDecodingAdvice {
  /** Whether the GPU should take a part of the decoding or augmentation (`loader` is not CPU). */
  readonly advised: boolean;
  /** Where to decode and augment: the CPU where its workers keep up with the GPU, else the GPU (never `hybrid`). */
  readonly loader: PlannedLoader;
  /** Samples per second the loader workers of one process can decode and augment on the CPU (an estimate by sample size). */
  readonly cpuSamplesPerSecondPerProcess: number;
  /**
   * Samples per second each GPU consumes as the plan assumes: `samplesPerSecondPerDevice`, else
   * ResNet-50 with mixed precision on this GPU model where known.
   *
   * @default - unknown: no path is compared
   */
  readonly gpuSamplesPerSecond?: number;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * Whether to resize the images once at pack time (`ShardedDataset` `imagePreprocessing`,
 * `training-io pack --resize`), so that every epoch decodes fewer pixels.
 */
export interface ImagePreprocessingAdvice {
  /** Whether resizing at pack time is advised. */
  readonly advised: boolean;
  /** Samples per second the loader workers of one process can decode once the images are resized (an estimate). */
  readonly resizedCpuSamplesPerSecondPerProcess: number;
  /** When advised: samples per second fed to each GPU after resizing ÷ before (e.g. 1.7). */
  readonly expectedSpeedup?: number;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * The time from the job's start to the first batch spent on the data.
 */
export interface StartupEstimate {
  /** Estimated seconds of download (File mode) or listing (FastFile, Pipe) before training starts. */
  readonly seconds: number;
  /** The same for the objects as they are, when packing is advised: what packing saves. */
  readonly unpackedSeconds?: number;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * The read rate of a job that keeps every device busy, from the expected samples per second.
 */
export interface ReadRateEstimate {
  /** Bytes per second each instance reads. */
  readonly bytesPerSecondPerInstance: number;
  /** Bytes per second the whole job reads. */
  readonly bytesPerSecond: number;
  /** Seconds one epoch takes at that rate. */
  readonly epochSeconds: number;
  /** Seconds all epochs take. */
  readonly trainingSeconds: number;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * The FSx for Lustre cache of the data: what `LustreDatasetCache` would build.
 */
export interface FsxAdvice {
  /** The deployment type: PERSISTENT_2 for data reused across jobs, SCRATCH_2 for one long job. */
  readonly deploymentType: fsx.LustreDeploymentType;
  /** Storage capacity in GiB. */
  readonly storageCapacityGiB: number;
  /** Baseline MB/s per TiB of storage (SCRATCH_2's is a fixed 200). */
  readonly perUnitStorageThroughput: number;
  /** Baseline throughput of the whole file system in MB/s. */
  readonly baselineThroughputMBps: number;
  /** Why, in one line. */
  readonly reason: string;
}

/**
 * One way of reading the data, evaluated for the job described: its time to first batch, its read
 * rate against what the GPUs need, its hours and its dollars.
 */
export interface ModeEstimate {
  /** The row's name, e.g. `FastFile, ShardedByS3Key, packed` or `FSx PERSISTENT_2`. */
  readonly label: string;
  /** Where the data is read from. */
  readonly mode: PlannedInputMode;
  /** The channel's `InputMode` (File for an FSx for Lustre channel). */
  readonly channelInputMode: InputMode;
  /** How the objects are spread over the instances. */
  readonly distribution: S3DataDistribution;
  /** Whether the channel gets a ShuffleConfig (Pipe mode on several instances). */
  readonly shuffleConfig: boolean;
  /** Whether the row reads the objects packed into shards first (packing's one-off cost included). */
  readonly packed: boolean;
  /** FSx rows: the deployment type. */
  readonly fsxDeploymentType?: fsx.LustreDeploymentType;
  /** FSx rows: storage capacity in GiB, sized for the data and for the read rate. */
  readonly fsxStorageCapacityGiB?: number;
  /** FSx rows: MB/s per TiB. */
  readonly fsxPerUnitStorageThroughput?: number;
  /** Seconds from the job's start to its first batch spent on the data (download, listing). */
  readonly startupSeconds: number;
  /** Steady bytes/s each instance can read this way; undefined where nothing on the path limits it (local NVMe). */
  readonly readBytesPerSecondPerInstance?: number;
  /** Bytes/s each instance must read to keep its devices busy; undefined when the samples/s per device are unknown. */
  readonly neededBytesPerSecondPerInstance?: number;
  /** Whether the steady read rate keeps the devices busy; undefined when the need is unknown. */
  readonly feedsGpus?: boolean;
  /** What limits the samples/s: `network`, `FSx throughput`, `Pipe fan-out`, `decoding`, or the GPUs themselves. */
  readonly bottleneck: string;
  /** Seconds of training at the rate this way gives (the data alone, where the devices' rate is unknown). */
  readonly trainingSeconds: number;
  /** Of those, seconds the devices wait for data (0 when fed). */
  readonly starvedSeconds: number;
  /** Hours each instance is billed for: start-up plus training. */
  readonly jobHours: number;
  /** Instance dollars of one job. */
  readonly instanceDollars: number;
  /** FSx dollars of one job: SCRATCH_2 prorated to the job, PERSISTENT_2's month shared by the month's jobs. */
  readonly fsxDollars: number;
  /** S3 request dollars of one job (GETs and LISTs). */
  readonly requestDollars: number;
  /** Packing's one-off dollars, counted in the first job and the first month. */
  readonly packingDollars: number;
  /** Dollars of one job, the one-off packing included. */
  readonly dollarsPerJob: number;
  /** Dollars of a month of `jobsPerMonth` jobs: the jobs, standing storage (FSx, the packed copy in S3) and the one-off packing. */
  readonly dollarsPerMonth: number;
  /** How the figures follow, in one line. */
  readonly reason: string;
}

/** A way of reading the data that the job cannot use, and why. */
export interface UnavailableMode {
  /** The row it would be. */
  readonly label: string;
  /** Why not. */
  readonly reason: string;
}

/** Packing the objects once: hours and dollars. */
export interface PackingCost {
  /** Seconds from the start of packing to the last shard. */
  readonly seconds: number;
  /** Dollars in all. */
  readonly dollars: number;
  /** Of which S3 requests (GETs of the objects, PUTs of the shards, LISTs). */
  readonly requestDollars: number;
  /** Of which Lambda (packers and the planner). */
  readonly lambdaDollars: number;
  /** Of which Step Functions state transitions (the Distributed Map's child executions included). */
  readonly stepFunctionsDollars: number;
  /** Whether listing the objects takes long enough that an S3 Inventory report should list them instead. */
  readonly inventoryAdvised: boolean;
  /** How the figures follow, in one line. */
  readonly reason: string;
}

/** The way of reading the data the planner chooses, by price. */
export interface ModeChoice {
  /** The chosen row's label. */
  readonly label: string;
  /** Whether it keeps the devices busy (undefined when their rate is unknown). */
  readonly feedsGpus?: boolean;
  /** Its dollars per job. */
  readonly dollarsPerJob: number;
  /** Its dollars per month. */
  readonly dollarsPerMonth: number;
  /** The next cheapest row that feeds the devices as well (or, where none does, the next least starved). */
  readonly runnerUp?: string;
  /** Dollars per month the choice saves over the runner-up. */
  readonly savingsPerMonth?: number;
  /** The choice in one line. */
  readonly reason: string;
}

/**
 * Something in the plan that will leave the GPUs waiting for data.
 */
export interface PlanWarning {
  /** Stable identifier, e.g. `longStartup`; constructs report it as `cdk-training-io:<code>`. */
  readonly code: string;
  /** What is wrong and what to do instead. */
  readonly message: string;
}

/**
 * The I/O plan of a training job: each choice with its reason.
 */
export interface IoPlan {
  /** The dataset the plan is for. */
  readonly dataset: PlannedDataset;
  /** The cluster the plan is for. */
  readonly cluster: PlannedCluster;
  /** How the data reaches the containers. */
  readonly inputMode: InputModeAdvice;
  /** Whether and how to pack. */
  readonly packing: PackingAdvice;
  /** Loader workers and DALI threads. */
  readonly loaders: LoaderAdvice;
  /** Pinned memory. */
  readonly pinMemory: PinMemoryAdvice;
  /** GPU decoding. */
  readonly gpuDecoding: GpuDecodingAdvice;
  /** Resizing the images at pack time. */
  readonly imagePreprocessing: ImagePreprocessingAdvice;
  /** Start-up time spent on the data. */
  readonly startup: StartupEstimate;
  /** The read rate, when the expected samples per second are given. */
  readonly readRate?: ReadRateEstimate;
  /** The FSx for Lustre cache, when the plan reads from one. */
  readonly fsx?: FsxAdvice;
  /** Every way of reading the data the job can use, priced. */
  readonly modes: ModeEstimate[];
  /** The ways it cannot, and why. */
  readonly unavailableModes: UnavailableMode[];
  /** The cheapest way that keeps the devices busy, or the least starved. */
  readonly choice: ModeChoice;
  /** Packing the objects once, when packing is possible (files smaller than 50 MB). */
  readonly packingCost?: PackingCost;
  /** What will leave the GPUs waiting. */
  readonly warnings: PlanWarning[];
}
