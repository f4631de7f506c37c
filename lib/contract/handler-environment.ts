/**
 * Environment variables the packing constructs set on the planner, packer and finalizer (the
 * deploy-time half of their contract; the other half is the event). Each handler's `contract.ts`
 * lists the ones it reads.
 */
export const PACKING_ENV = {
  sourceBucket: 'SOURCE_BUCKET',
  sourcePrefix: 'SOURCE_PREFIX',
  destinationBucket: 'DESTINATION_BUCKET',
  destinationPrefix: 'DESTINATION_PREFIX',
  format: 'SHARD_FORMAT',
  seed: 'SHUFFLE_SEED',
  labels: 'RECORD_LABELS',
  targetShardBytes: 'TARGET_SHARD_BYTES',
  shardCount: 'SHARD_COUNT',
  consumers: 'CONSUMERS',
  readConcurrency: 'READ_CONCURRENCY',
  inventoryBucket: 'INVENTORY_BUCKET',
  inventoryKey: 'INVENTORY_KEY',
  /**
   * On the planner: JSON `{"include": [...], "exclude": [...]}`, globs over the keys below the source
   * prefix (lib/contract/file-patterns.ts); absent, every file is packed.
   */
  filePatterns: 'SOURCE_FILE_PATTERNS',
  /** On the planner: the parts every multi-part sample must have, comma-separated (`jpg,json,mask.png`); absent, every part seen. */
  parts: 'SAMPLE_PARTS',
  /** Days an old dataset version is kept after it stops being current (the finalizer prunes). */
  retentionDays: 'VERSION_RETENTION_DAYS',
  /** `true` or `false`: whether the finalizer publishes a version with listed failures (ShardedDataset `allowMissing`). */
  allowMissing: 'ALLOW_MISSING',
  /**
   * JSON of the image preprocessing settings (lambda/packing/preprocess/image-preprocessing.ts), on the
   * planner (it records them in the plan) and the packers (they resize); absent, records carry the files' bytes.
   */
  imagePreprocessing: 'IMAGE_PREPROCESSING',
  /**
   * On the packers: `images` (every file checked as an image the training readers decode,
   * lambda/packing/image-check/) or `any` (files packed as they are); absent, `any`.
   */
  recordContent: 'RECORD_CONTENT',
  /**
   * Node.js's own: the threads of libuv's pool, on which sharp works, one image per thread (the
   * engine sets `sharp.concurrency(1)`, lambda/packing/preprocess/). The construct sets it to the
   * packer's vCPUs when it preprocesses (never below Node's default of 4).
   */
  threadPoolSize: 'UV_THREADPOOL_SIZE',
} as const;

/** Environment variables the TrainingJobDiagnosis construct sets on the diagnoser. */
export const DIAGNOSER_ENV = {
  /** GPUs of one training instance (GPUUtilization is summed over them). */
  gpusPerInstance: 'GPUS_PER_INSTANCE',
  /** vCPUs of one training instance (CPUUtilization is summed over them). */
  vcpusPerInstance: 'VCPUS_PER_INSTANCE',
  /** Metric-definition name of the loader's samples per second. */
  samplesPerSecondMetric: 'LOADER_SAMPLES_METRIC',
  /** Metric-definition name of the loader's data-wait fraction. */
  dataWaitMetric: 'LOADER_DATA_WAIT_METRIC',
  /** The FSx for Lustre cache the jobs read (optional). */
  cacheFileSystemId: 'CACHE_FILE_SYSTEM_ID',
  /** Its baseline throughput in MB/s (with the file system ID). */
  cacheBaselineMBps: 'CACHE_BASELINE_MBPS',
  /** The event bus of the diagnosis events. */
  eventBusName: 'EVENT_BUS_NAME',
} as const;
