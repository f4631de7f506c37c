/** Where a code is raised, and what it refuses or warns about. */
export interface CodeEntry {
  /** The construct or class whose props it checks, as docs/validation-codes.md groups them. */
  readonly subject: string;
  /** What it refuses (errors) or what costs GPU hours or money (warnings), in a line. */
  readonly meaning: string;
}

/**
 * Every code of a `ValidationError` (`[Code] message`): the one list, from which the tables
 * of docs/validation-codes.md are generated (`npm run docs:codes`).
 */
export const ERROR_CODES = {
  // TrainingJob
  FileSystemChannelRequiresFileMode: { subject: 'TrainingJob', meaning: 'a file-system channel in FastFile or Pipe mode' },
  CompressionRequiresPipeMode: { subject: 'TrainingJob', meaning: 'compression on a channel outside Pipe mode' },
  RecordWrapperRequiresPipeMode: { subject: 'TrainingJob', meaning: 'a RecordIO wrapper on a channel outside Pipe mode' },
  FileModeDataTooLarge: { subject: 'TrainingJob', meaning: 'File-mode data larger than the instance\'s NVMe or EBS volume' },
  VolumeKeyOnNvmeInstance: { subject: 'TrainingJob', meaning: 'a volume KMS key on an instance with local NVMe storage, which SageMaker rejects' },
  MaxWaitTimeBelowMaxRuntime: { subject: 'TrainingJob', meaning: 'a spot wait shorter than the run time' },
  MaxWaitTimeRequiresSpot: { subject: 'TrainingJob', meaning: 'maxWaitTime without managed spot training' },
  MaxWaitTimeNeededForTokenRuntime: { subject: 'TrainingJob', meaning: 'spot training with a deploy-time maxRuntime and no maxWaitTime' },
  InvalidMaxRuntime: { subject: 'TrainingJob', meaning: 'maxRuntime outside 1 second to 28 days' },
  KeepAliveWithSpot: { subject: 'TrainingJob', meaning: 'a warm pool (keepAlivePeriod) with managed spot training' },
  InvalidKeepAlivePeriod: { subject: 'TrainingJob', meaning: 'keepAlivePeriod outside 0 to 6 hours' },
  InstanceWithoutAccelerator: { subject: 'TrainingJob', meaning: 'an instance without GPU or Trainium, unless allowed' },
  GpuContainerOnTrainium: { subject: 'TrainingJob', meaning: 'a CUDA image (`pytorch()`, `dali()`) on Trainium, which needs a Neuron container' },
  InvalidInstanceCount: { subject: 'TrainingJob', meaning: 'instanceCount (of a job or a cluster) outside 1 to 10,000' },
  InvalidRetryAttempts: { subject: 'TrainingJob', meaning: 'retryAttempts outside 1 to 30' },
  InvalidDataLoaderWorkers: { subject: 'TrainingJob', meaning: 'loader workers (of a job or a cluster) outside 0 to 1024' },
  LoaderWorkersTwice: { subject: 'TrainingJob', meaning: 'both loaderWorkers and its deprecated name dataLoaderWorkers' },
  InvalidTrainingPlanArn: { subject: 'TrainingJob', meaning: 'a trainingPlanArn that is not a SageMaker training plan ARN' },
  InvalidChannelName: { subject: 'TrainingJob', meaning: 'a channel name SageMaker rejects' },
  DuplicateChannelName: { subject: 'TrainingJob', meaning: 'two channels of one name' },
  TooManyChannels: { subject: 'TrainingJob', meaning: 'more than 20 channels' },
  InvalidShuffleSeed: { subject: 'TrainingJob', meaning: 'a shuffle seed that is not a safe whole number' },
  PublicSubnet: { subject: 'TrainingJob', meaning: 'training in a public subnet' },
  InvalidSubnetCount: { subject: 'TrainingJob', meaning: 'a subnet selection of no subnet or more than 16' },
  SubnetAndVpcSubnets: { subject: 'TrainingJob', meaning: 'both subnet and vpcSubnets' },
  SubnetsWithoutVpc: { subject: 'TrainingJob', meaning: 'subnet or vpcSubnets without vpc' },
  InvalidSecurityGroupCount: { subject: 'TrainingJob', meaning: 'no security group or more than 5' },
  CacheInAnotherVpc: { subject: 'TrainingJob', meaning: 'a file-system channel in another VPC than the job' },
  NetworkAndVpc: { subject: 'TrainingJob', meaning: 'both network and vpc' },
  SharedNetworkConflict: { subject: 'TrainingJob', meaning: 'jobs sharing the stack\'s TrainingNetwork with different network settings' },
  InvalidHyperparameters: { subject: 'TrainingJob', meaning: 'hyperparameters beyond SageMaker\'s count and lengths, or not strings' },
  InvalidEnvironment: { subject: 'TrainingJob', meaning: 'environment variables beyond SageMaker\'s count, names and lengths' },
  InvalidTags: { subject: 'TrainingJob', meaning: 'tags beyond SageMaker\'s count and lengths, or keys starting with `aws:`' },
  InvalidMetricDefinition: { subject: 'TrainingJob', meaning: 'metric definitions beyond SageMaker\'s count and lengths' },
  InvalidJobNamePrefix: { subject: 'TrainingJob', meaning: 'a job name prefix that leaves no room for the run\'s suffix in 63 characters' },
  InvalidOutputPrefix: { subject: 'TrainingJob', meaning: 'an output prefix with a leading `/` or over 900 characters' },
  CodeIgnoredByEntrypoint: { subject: 'TrainingJob', meaning: 'code with a custom entrypoint, which bypasses the toolkit that runs it' },
  LauncherWithoutCode: { subject: 'TrainingJob', meaning: 'a launcher without code for the toolkit to launch' },
  UnsupportedIntegrationPattern: { subject: 'TrainingJob', meaning: 'an integration pattern other than RUN_JOB or REQUEST_RESPONSE' },
  HyperparametersAtRunTimeNotAPath: { subject: 'TrainingJob', meaning: 'hyperparametersAtRunTime that is not a JSONPath or intrinsic function' },
  UndefinedRequestOverride: { subject: 'TrainingJob', meaning: 'a request override to undefined (remove fields with addRequestDeletionOverride)' },
  InvalidRequestPath: { subject: 'TrainingJob', meaning: 'a request override path that is not CreateTrainingJob field names and indexes' },
  // TrainingCode, TrainingContainer
  TrainingCodeDirectoryNotFound: { subject: 'TrainingCode', meaning: 'a code directory that does not exist' },
  TrainingProgramNotFound: { subject: 'TrainingCode', meaning: 'a program that is not a file of the directory' },
  TrainingProgramExcluded: { subject: 'TrainingCode', meaning: 'a program that the exclude patterns leave out' },
  InvalidTrainingProgram: { subject: 'TrainingCode', meaning: 'a program path that is empty or leaves the directory' },
  InvalidTrainingCodeKey: { subject: 'TrainingCode', meaning: 'a code key that is not a `.tar.gz` tarball' },
  ReadersVersionConflict: { subject: 'TrainingCode', meaning: 'code shipped with the readers (`includeReaders`) whose directory has a `shardio` of another version' },
  InvalidFrameworkVersion: { subject: 'TrainingContainer', meaning: 'a framework version not like 2.8.0' },
  InvalidPythonVersion: { subject: 'TrainingContainer', meaning: 'a Python version not like py312' },
  InvalidDaliVersion: { subject: 'TrainingContainer', meaning: 'a DALI version not like 1.53.0' },
  InvalidCudaMajor: { subject: 'TrainingContainer', meaning: 'a CUDA major version not like 120' },
  DaliBuildArgNotLiteral: { subject: 'TrainingContainer', meaning: 'a DALI image build argument known only at deploy time' },
  InvalidImageTag: { subject: 'TrainingContainer', meaning: 'an image tag Docker rejects' },
  InvalidTrainingImage: { subject: 'TrainingContainer', meaning: 'an image URI that is empty, too long or has white space' },
  UnknownDlcRegion: { subject: 'TrainingContainer', meaning: 'a region without a known Deep Learning Containers registry' },
  InvalidContainerEntrypoint: { subject: 'TrainingContainer', meaning: 'an entrypoint beyond SageMaker\'s item count or lengths' },
  InvalidContainerArguments: { subject: 'TrainingContainer', meaning: 'container arguments beyond SageMaker\'s item count or lengths' },
  // TrainingChannel
  RecordWrapperOnShards: { subject: 'TrainingChannel', meaning: 'a RecordIO wrapper on packed shards, which are framed already' },
  CompressionOnShards: { subject: 'TrainingChannel', meaning: 'compression on packed shards, which are stored uncompressed' },
  ShardedFastFileDataset: { subject: 'TrainingChannel', meaning: 'ShardedByS3Key in FastFile mode over a packed dataset, which FastFile reads through its root (every version)' },
  InvalidFileSystemId: { subject: 'TrainingChannel', meaning: 'a file system id not like `fs-0123456789abcdef0`' },
  InvalidDirectoryPath: { subject: 'TrainingChannel', meaning: 'a file-system path that is not absolute or over 4096 characters' },
  InvalidCachePath: { subject: 'TrainingChannel', meaning: 'a cache path with `.`, `..` or empty segments' },
  CachePathNotLinked: { subject: 'TrainingChannel', meaning: 'a cache path outside the folders the cache links to S3' },
  // TrainingInstance
  UnknownInstanceType: { subject: 'TrainingInstance', meaning: 'an instance type outside the catalog (describe it with `TrainingInstance.of`)' },
  InvalidInstanceType: { subject: 'TrainingInstance', meaning: 'an instance type not like `ml.<family>.<size>`' },
  InvalidInstanceSpec: { subject: 'TrainingInstance', meaning: 'a custom spec with counts or sizes out of range' },
  InvalidProcessesPerInstance: { subject: 'TrainingInstance', meaning: 'processes per instance outside 1 to the vCPUs' },
  InvalidMemoryPerWorker: { subject: 'TrainingInstance', meaning: 'memory per loader worker of 0' },
  // ShardedDataset
  InvalidShardSize: { subject: 'ShardedDataset', meaning: 'a target shard size outside 1–128 MiB' },
  ShardSizeAndCount: { subject: 'ShardedDataset', meaning: 'both targetShardSize and shardCount' },
  InvalidShardCount: { subject: 'ShardedDataset', meaning: 'a shard count below 1' },
  ConsumersAndCluster: { subject: 'ShardedDataset', meaning: 'both consumers and cluster' },
  InvalidConsumers: { subject: 'ShardedDataset', meaning: 'consumers below 1' },
  InvalidSeed: { subject: 'ShardedDataset', meaning: 'a seed that is not a safe whole number of at least 0' },
  InvalidPackerConcurrency: { subject: 'ShardedDataset', meaning: 'packer read concurrency outside 1 to 1024' },
  InvalidMaxConcurrency: { subject: 'ShardedDataset', meaning: 'packers at once outside 1 to 10,000' },
  InvalidPrefix: { subject: 'ShardedDataset', meaning: 'a source or destination prefix that does not name a folder' },
  DestinationInsideSource: { subject: 'ShardedDataset', meaning: 'a destination inside the source, which the next run would pack again' },
  InvalidInventoryPrefix: { subject: 'ShardedDataset', meaning: 'an inventory prefix that is neither a report folder nor its manifest.json' },
  InvalidMemorySize: { subject: 'ShardedDataset', meaning: 'Lambda memory outside 128–10,240 MiB or not whole MiB' },
  InvalidVersionRetention: { subject: 'ShardedDataset', meaning: 'a version retention that is not whole days from 0 to 3,650' },
  InvalidImageSide: { subject: 'ShardedDataset', meaning: 'an image preprocessing side outside 1 to 16,384 pixels' },
  LongerSideBelowShorterSide: { subject: 'ShardedDataset', meaning: 'an image preprocessing cap on the longer side below the shorter side\'s target' },
  InvalidJpegQuality: { subject: 'ShardedDataset', meaning: 'an image preprocessing JPEG quality outside 1 to 100' },
  PreprocessingNonImages: { subject: 'ShardedDataset', meaning: 'image preprocessing with recordContent ANY (files that are not images)' },
  // LustreDatasetCache, CacheSource, ReadRate
  UnsupportedDeploymentType: { subject: 'LustreDatasetCache', meaning: 'SCRATCH_1, which cannot have data repository associations' },
  LustreVersionWithoutAssociations: { subject: 'LustreDatasetCache', meaning: 'Lustre 2.10, which cannot have data repository associations' },
  InvalidStorageCapacity: { subject: 'LustreDatasetCache', meaning: 'a capacity FSx does not offer for the deployment type' },
  InvalidPerUnitStorageThroughput: { subject: 'LustreDatasetCache', meaning: 'a throughput tier FSx does not offer for the deployment type' },
  StorageCapacityBelowDatasetSize: { subject: 'LustreDatasetCache', meaning: 'a capacity smaller than the dataset' },
  KmsKeyOnScratchFileSystem: { subject: 'LustreDatasetCache', meaning: 'a KMS key on a scratch file system' },
  CacheInPublicSubnet: { subject: 'LustreDatasetCache', meaning: 'a cache in a public subnet' },
  InvalidImportedFileChunkSize: { subject: 'LustreDatasetCache', meaning: 'an imported file chunk size outside 1 MiB to 500 GiB or not whole MiB' },
  InvalidCachePrefix: { subject: 'CacheSource', meaning: 'a linked prefix that does not name a folder' },
  InvalidReadRate: { subject: 'ReadRate', meaning: 'a read rate of 0, or for an instance without GPU or Trainium' },
  // TrainingPipeline
  ShardsChannelWithCache: { subject: 'TrainingPipeline', meaning: 'a shards channel and a cache, which makes the job read FSx instead' },
  // IoPlanner
  InvalidObjectCount: { subject: 'IoPlanner', meaning: 'a dataset of no object' },
  InvalidDatasetSize: { subject: 'IoPlanner', meaning: 'a dataset size of 0 bytes' },
  MissingDatasetSize: { subject: 'IoPlanner', meaning: 'a dataset without totalSize or meanObjectSize' },
  DatasetSizeAndMeanSize: { subject: 'IoPlanner', meaning: 'both totalSize and meanObjectSize' },
  InvalidRecordCount: { subject: 'IoPlanner', meaning: 'a record count below 1' },
  RecordCountRequired: { subject: 'IoPlanner', meaning: 'a read rate for packed data without its record count' },
  InvalidEpochs: { subject: 'IoPlanner', meaning: 'epochs below 1' },
  InvalidSamplesPerSecond: { subject: 'IoPlanner', meaning: 'samples per second of 0 or not finite' },
  UnresolvedPlanInput: { subject: 'IoPlanner', meaning: 'a plan input (or a cluster\'s size) known only at deploy time' },
} as const satisfies Record<string, CodeEntry>;

/** A code of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Every id of a synth-time warning (`cdk-training-io:<id>`, and the codes of the planner's
 * `PlanWarning`s, which the constructs report under the same ids).
 */
export const WARNING_CODES = {
  fileModeWithoutHeadroom: { subject: 'TrainingJob', meaning: 'File-mode data that leaves less than 10 % + 50 GiB of the volume for checkpoints and outputs' },
  volumeSizeIgnoredOnNvme: { subject: 'TrainingJob', meaning: 'a volume size on an NVMe instance, where SageMaker ignores it' },
  spotWithoutCheckpoints: { subject: 'TrainingJob', meaning: 'spot training without checkpoints, so an interruption starts over' },
  numWorkersOverridden: { subject: 'TrainingJob', meaning: 'a num_workers hyperparameter over the loader workers the dataset and the plan count on' },
  noLoaderWorkers: { subject: 'TrainingJob', meaning: 'no loader workers: each training process decodes between steps' },
  loaderWorkersAboveCpus: { subject: 'TrainingJob', meaning: 'more loader workers than the vCPUs of a process' },
  shardedByS3KeyOnOneInstance: { subject: 'TrainingJob', meaning: 'ShardedByS3Key on one instance, where it splits nothing' },
  shuffleOutsidePipeMode: { subject: 'TrainingJob', meaning: 'a shuffle seed outside Pipe mode, where SageMaker ignores it' },
  jobOutsideCacheSubnet: { subject: 'TrainingJob', meaning: 'a job in another subnet than its cache, paying cross-AZ traffic' },
  cachesInSeveralSubnets: { subject: 'TrainingJob', meaning: 'channels reading file systems in several subnets, so some reads cross zones' },
  missingVpcEndpoint: { subject: 'TrainingJob', meaning: 'code that calls an AWS service its isolated subnets have no endpoint for' },
  packageInstallInIsolatedNetwork: { subject: 'TrainingJob', meaning: 'a requirements.txt that isolated subnets cannot install from PyPI' },
  cacheThroughputBelowReadRate: { subject: 'LustreDatasetCache', meaning: 'a cache slower than the read rate it is given' },
  sourceKeyNotGranted: { subject: 'LustreDatasetCache', meaning: 'a source bucket KMS key from outside the stack, whose policy cannot be made to let FSx decrypt' },
  datasetConsumersMismatch: { subject: 'TrainingPipeline', meaning: 'a dataset packed for consumers the job\'s readers do not divide evenly' },
  plannerAdvisesCache: { subject: 'TrainingPipeline', meaning: 'a plan that advises a cache the pipeline does not have' },
  cacheWithoutReadRate: { subject: 'TrainingPipeline', meaning: 'a cache without readRate, which gets the lowest throughput tier' },
  resizeImagesAtPackTime: { subject: 'TrainingPipeline', meaning: 'a dataset packed without imagePreprocessing whose JPEGs the loaders decode slower than the GPUs consume' },
  smallShards: { subject: 'IoPlanner', meaning: 'packed shards averaging below 1 MiB, where per-object costs dominate' },
  shardsBelowMinimum: { subject: 'IoPlanner', meaning: 'a shard count (a multiple of the consumers) that makes shards below 1 MiB' },
  moreConsumersThanObjects: { subject: 'IoPlanner', meaning: 'fewer objects than readers, so some read nothing' },
  cpuBoundDecoding: { subject: 'IoPlanner', meaning: 'more samples per second than the CPUs decode' },
  longStartup: { subject: 'IoPlanner', meaning: 'a download before training that takes a large share of the training time' },
  readRateAboveEbs: { subject: 'IoPlanner', meaning: 'a read rate above the EBS volume\'s throughput' },
  readRateAboveNetwork: { subject: 'IoPlanner', meaning: 'a read rate above the instance\'s network bandwidth' },
} as const satisfies Record<string, CodeEntry>;
