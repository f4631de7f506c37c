import { Annotations, Duration, Size, Stack, Token } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { defaultRecordContent } from '../contract/record-vocabulary';
import type { PackingSettings, RawPackingSettings } from '../contract/packing-settings';
import { checkPackingSettings, normalizePackingSettings, shardCountRounding, toEnvironment } from '../contract/packing-settings';
import { DATASET_LAYOUT } from '../contract/dataset-layout';
import type { FilePatterns } from '../contract/file-patterns';
import { filePatternsProblems, filtersFiles } from '../contract/file-patterns';
import { PACKING_ENV } from '../contract/handler-environment';
import { resolveCluster } from '../instances/private/cluster-rules';
import type { TrainingCluster } from '../instances/training-cluster';
import type { LambdaHandlerName } from '../private/assets';
import type { ErrorCode } from '../private/error-codes';
import { ValidationError } from '../private/errors';
import { createHandlerFunction } from '../private/handler-function';
import type { LogGroupOptions } from '../private/log-group';
import { acknowledge, acknowledgePrefixGrant, wildcardResourceFinding } from '../private/nag';
import { createSecureBucket } from '../private/secure-bucket';
import { isResolved, validateKeyPrefix, validateMebibytes, validateWholeNumber } from '../private/validation';
import { LoggedStateMachine } from '../state-machines/logged-state-machine';
import { grantDatasetRead } from './private/dataset-read-grant';
import { grantPrefixAccess } from './private/packing-grants';
import type { ImportedDatasetKeys } from './private/imported-sharded-dataset';
import { importShardedDataset } from './private/imported-sharded-dataset';
import type { ImagePreprocessingOptions } from '../vocabulary/image-preprocessing-options';
import { RecordContent } from '../vocabulary/record-content';
import type { RecordLabels } from '../vocabulary/record-labels';
import type { ShardFormat } from '../vocabulary/shard-format';
import { imagePreprocessingVariable, packerThreadPoolSize, PREPROCESSING_PACKER_MEMORY_MIB, validateImagePreprocessing } from './private/image-preprocessing-rules';

/**
 * A packed dataset, as training channels read it.
 */
export interface IShardedDataset {
  /** The bucket holding the shards. */
  readonly destinationBucket: s3.IBucket;
  /** Prefix of the packed dataset, e.g. `packed/`: its versions, their claims and the current manifest lie under it. */
  readonly destinationPrefix: string;
  /**
   * Prefix of the shards of a dataset packed before versions, e.g. `packed/shards/`.
   *
   * @deprecated datasets are versioned: a version's shards may lie in several version folders. Read
   * them through `shardsManifestKey` (a SageMaker ManifestFile), as `TrainingChannel.fromShards` does.
   */
  readonly shardsPrefix: string;
  /**
   * Prefix of the index files of a dataset packed before versions, e.g. `packed/index/`.
   *
   * @deprecated use `indexManifestKey`, as `TrainingChannel.fromShardIndex` does.
   */
  readonly indexPrefix: string;
  /** Key of `manifest.json`: the current version's manifest, rewritten when a version is published. */
  readonly manifestKey: string;
  /** Key of `shards.manifest`: a SageMaker ManifestFile listing the current version's shards, in order. */
  readonly shardsManifestKey: string;
  /** Key of `index.manifest`: a SageMaker ManifestFile listing the current version's index files and its manifest. */
  readonly indexManifestKey: string;

  /**
   * Lets the grantee read the dataset: its shards, index files and manifest (and decrypt them with
   * the bucket's key), not the rest of the bucket.
   */
  grantRead(grantee: iam.IGrantable): iam.Grant;
}

/**
 * A dataset packed outside this app, e.g. by `training-io pack` or another stack.
 */
export interface ShardedDatasetAttributes {
  /** The bucket the dataset was packed into. */
  readonly destinationBucket: s3.IBucket;

  /**
   * The prefix it was packed under (the CLI's destination), empty or ending in `/`.
   *
   * @default 'packed/'
   */
  readonly destinationPrefix?: string;
}

/**
 * Where the S3 Inventory report of the source bucket is delivered.
 */
export interface SourceInventory {
  /** The inventory's destination bucket; the planner is granted read on `prefix`. */
  readonly bucket: s3.IBucket;

  /**
   * The report's folder, `<destination prefix>/<source bucket>/<configuration id>/`, whose newest
   * `<YYYY-MM-DDTHH-MMZ>/manifest.json` each execution reads; or the key of one `manifest.json`.
   */
  readonly prefix: string;
}

/**
 * A label file in S3 (`ShardedDataset` `labelFile`): a CSV with the header `key,label` or JSON lines
 * `{"key": ..., "label": ...}`, by the extension of its key. The planner reads it at every execution.
 */
export interface LabelFileLocation {
  /**
   * The bucket holding it; the planner is granted read of that one object.
   *
   * @default - the source bucket
   */
  readonly bucket?: s3.IBucket;

  /** Its object key, ending in `.csv` or `.jsonl`, e.g. `raw/labels.csv` (below `sourcePrefix`, it is not packed). */
  readonly key: string;
}

/**
 * Properties of a {@link ShardedDataset}.
 */
export interface ShardedDatasetProps {
  /** The bucket holding the small files to pack; the planner and packers are granted read on `sourcePrefix`. */
  readonly sourceBucket: s3.IBucket;

  /**
   * Prefix of the files to pack, empty or ending in `/` (e.g. `raw/`). With folder labels the
   * first folder below it is the class.
   *
   * @default '' - the whole bucket
   */
  readonly sourcePrefix?: string;

  /**
   * List the source from an S3 Inventory report (CSV, with the Size and LastModifiedDate fields)
   * instead of with ListObjectsV2. For buckets of many millions of objects: listing ten million
   * keys takes 10,000 sequential ListObjectsV2 calls, reading the report a few large GETs.
   * Objects written after the report are not packed; objects deleted since are listed as failures.
   *
   * @default - the planner lists the source with ListObjectsV2
   */
  readonly sourceInventory?: SourceInventory;

  /**
   * Pack only the files whose key below `sourcePrefix` matches one of these globs, e.g. `['cat/**', 'dog/**']`.
   *
   * The globs are picomatch's: `*` within a folder, `**` across folders, `{a,b}`, `[abc]`, and names
   * that start with a dot match too. Files left out are not listed in the manifest's failures.
   *
   * @default - every file under `sourcePrefix`
   */
  readonly include?: string[];

  /**
   * Leave out the files whose key below `sourcePrefix` matches one of these globs, whatever `include`
   * says: e.g. `['README.txt']` for a stray file at the source root, which folder labels would
   * otherwise refuse (it has no class folder).
   *
   * @default - no file is left out
   */
  readonly exclude?: string[];

  /**
   * The bucket the shards are written to.
   *
   * @default - a new bucket: encrypted (with `encryptionKey` when given), SSL only, public access
   * blocked, versioned (old versions kept 30 days), events sent to EventBridge, server access logs to
   * `accessLogsBucket` when given, incomplete multipart uploads aborted after a day, retained on stack deletion
   */
  readonly destinationBucket?: s3.IBucket;

  /**
   * KMS key of the bucket created when `destinationBucket` is not given, and of the construct's log
   * groups (the key policy of a key from this app is given the CloudWatch Logs statement; an imported
   * key's policy must allow `logs.<region>.amazonaws.com`). Buckets you pass bring their own key:
   * the grants include it.
   *
   * @default - S3-managed encryption; CloudWatch Logs' own encryption of the log groups
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Where the bucket created when `destinationBucket` is not given writes its S3 server access logs
   * (under the bucket's construct path). S3 delivers them only to an SSE-S3 bucket in the same
   * account and Region.
   *
   * @default - no server access logs
   */
  readonly accessLogsBucket?: s3.IBucket;

  /**
   * How long the log groups of the functions and the state machine keep their events.
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * The VPC of the planner, packer and finalizer functions. They call S3 only: a VPC with an S3
   * gateway endpoint (or NAT) is enough.
   *
   * @default - the functions run outside any VPC
   */
  readonly vpc?: ec2.IVpc;

  /**
   * The subnets of the functions in `vpc`.
   *
   * @default - the VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Prefix of the packed dataset, empty or ending in `/`. Each execution that packs writes a new
   * version under `<prefix>versions/<version>/` and publishes it atomically (`<prefix>published/`);
   * `<prefix>manifest.json`, `<prefix>shards.manifest` and `<prefix>index.manifest` name the current
   * version; working files go under `<prefix>_plan/`.
   *
   * @default 'packed/'
   */
  readonly destinationPrefix?: string;

  /**
   * How long a version is kept after a newer one is published, so that a job reading it finishes
   * on it. Then the finalizer deletes its objects, except the shards a kept version still reuses.
   * Whole days, at most 3,650.
   *
   * @default Duration.days(7)
   */
  readonly versionRetention?: Duration;

  /**
   * Publish a version even when some source objects could not be packed (unreadable, deleted since
   * listed, over 128 MiB, not decodable when images are preprocessed); they are listed in its
   * manifest's `failures`. When false, such a run publishes nothing: the `Finalize` state fails
   * with `MissingFilesError`, whose cause names the objects, and the version before stays current.
   *
   * @default false
   */
  readonly allowMissing?: boolean;

  /**
   * The parts every multi-part sample must have. Source objects that share a key up to the first dot
   * of their names (`0001.jpg`, `0001.json`, `0001.mask.png`, WebDataset's convention) are one sample
   * and become one TFRecord Example with a feature per part (docs/cli.md, "Multi-part samples") when
   * `parts` is given or half the samples or more have several objects; a
   * sample without a required part, a JSON part that does not parse or an image part that does not
   * decode is a listed failure. A part not required but present is packed too. RecordIO and
   * `imagePreprocessing` refuse multi-part samples.
   *
   * @default - every part seen in the source is required
   */
  readonly parts?: string[];

  /**
   * Record format of the shards.
   *
   * @default ShardFormat.TFRECORD
   */
  readonly format?: ShardFormat;

  /**
   * Target size of a shard, 1–128 MiB. Cannot be combined with `shardCount`.
   *
   * @default - 64 MiB, unless `shardCount` is given
   */
  readonly targetShardSize?: Size;

  /**
   * Exact number of shards, rounded up to a multiple of `consumers` (with a synth warning saying so),
   * as the CLI's `--shards` is. Cannot be combined with `targetShardSize`.
   *
   * @default - from `targetShardSize`
   */
  readonly shardCount?: number;

  /**
   * Readers that split the shards between them: instances × GPU processes × loader workers. The
   * shard count is a multiple of it, so every reader gets the same number of equal shards.
   * Cannot be combined with `cluster`.
   *
   * @default - from `cluster` when given, else 1
   */
  readonly consumers?: number;

  /**
   * The training cluster that will read the shards: `consumers` is then its instances × training
   * processes × loader workers, the loader workers sized from the instance as `IoPlanner` and
   * `TrainingJob` size them (e.g. 2 × ml.p3dn.24xlarge: 2 × 8 × 11 = 176). Cannot be combined with `consumers`.
   *
   * @default - no cluster: `consumers` as given
   */
  readonly cluster?: TrainingCluster;

  /**
   * Shuffle seed: the same source and seed give byte-identical shards.
   *
   * @default 0
   */
  readonly seed?: number;

  /**
   * Where class labels come from.
   *
   * @default - RecordLabels.FILE with `labelFile`, else RecordLabels.FOLDER
   */
  readonly labels?: RecordLabels;

  /**
   * The label file of `RecordLabels.FILE`: each row maps a sample's key (its path below `sourcePrefix`
   * up to the first dot of its name, `train/0001` for `train/0001.jpg`) to its class; class names sorted
   * → 0..n-1. A source object whose sample no row labels is a listed failure (see `allowMissing`); a row
   * naming no object is counted in the planner's result (`unmatchedLabelRows`) and the manifest. At most 512 MiB.
   *
   * @default - no label file: labels from `labels`
   */
  readonly labelFile?: LabelFileLocation;

  /**
   * Source objects each packer reads at once (1–1024).
   *
   * @default 64
   */
  readonly packerConcurrency?: number;

  /**
   * Resize and re-encode the images once, at pack time, so that training decodes fewer pixels
   * every epoch (the packers run sharp on x86_64). The settings are recorded in the manifest; a
   * change of them packs the dataset again.
   *
   * @default - none: the records carry the files' bytes unchanged
   */
  readonly imagePreprocessing?: ImagePreprocessingOptions;
  /**
   * What the records hold: images, each checked at pack time (a file the readers cannot decode,
   * such as a truncated JPEG or a text file, is a listed failure), or any bytes, packed as they are.
   *
   * @default - RecordContent.IMAGES with folder labels, RecordContent.ANY without
   */
  readonly recordContent?: RecordContent;

  /**
   * Memory of each packer Lambda (128 MiB–10 GiB). Lambda's CPU and network share grow with it
   * (one vCPU per 1,769 MB).
   *
   * @default - Size.gibibytes(2); with `imagePreprocessing`, 3,538 MiB (two vCPUs: resizing is CPU-bound)
   */
  readonly packerMemorySize?: Size;

  /**
   * Memory of the planner Lambda (128 MiB–10 GiB): it holds the whole listing. About 3 GB at
   * 10 million objects.
   *
   * @default Size.gibibytes(4)
   */
  readonly plannerMemorySize?: Size;

  /**
   * Packers running at once (the Distributed Map's MaxConcurrency, 1–10,000). Keep it within the
   * account's Lambda concurrency.
   *
   * @default 100
   */
  readonly maxConcurrency?: number;
}

const MIN_MEMORY_MIB = 128;
const MAX_MEMORY_MIB = 10240;
const MAX_MAP_CONCURRENCY = 10000;
const PLAN_PREFIX = DATASET_LAYOUT.plan;
const DEFAULT_DESTINATION_PREFIX = 'packed/';

/** Where a dataset packed under a prefix keeps its current manifests (ARCHITECTURE.md "Dataset layout"; lambda/packing/dataset-layout.ts). */
function datasetKeys(destinationPrefix: string): Omit<ImportedDatasetKeys, 'destinationBucket'> {
  return {
    destinationPrefix,
    // Where datasets packed before versions kept them (the deprecated prefixes).
    shardsPrefix: `${destinationPrefix}${DATASET_LAYOUT.shardsFolder}`,
    indexPrefix: `${destinationPrefix}${DATASET_LAYOUT.indexFolder}`,
    manifestKey: `${destinationPrefix}${DATASET_LAYOUT.manifest}`,
    shardsManifestKey: `${destinationPrefix}${DATASET_LAYOUT.shardsChannel}`,
    indexManifestKey: `${destinationPrefix}${DATASET_LAYOUT.indexChannel}`,
  };
}

/**
 * Packs the small files under an S3 prefix into equal-sized shards (TFRecord or RecordIO) with
 * a Step Functions state machine: plan (list, shuffle, balance) → a Distributed Map of Lambda
 * packers, one shard each → finalize (merged index, manifest last). An execution whose source
 * listing, format, seed and shard options match the last manifest ends after planning.
 *
 * Start an execution with `{}` (or `{"force": true}` to repack anyway).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
 */
export class ShardedDataset extends Construct implements IShardedDataset {
  /**
   * A dataset packed outside this app (by `training-io pack`, or by another stack), for training
   * channels, caches and grants.
   */
  public static fromAttributes(scope: Construct, id: string, attrs: ShardedDatasetAttributes): IShardedDataset {
    const destinationPrefix = attrs.destinationPrefix ?? DEFAULT_DESTINATION_PREFIX;
    validateKeyPrefix(scope, 'InvalidPrefix', 'destinationPrefix', destinationPrefix);
    return importShardedDataset(scope, id, { destinationBucket: attrs.destinationBucket, ...datasetKeys(destinationPrefix) });
  }

  /** The state machine that packs the dataset. */
  public readonly stateMachine: sfn.StateMachine;
  /** The bucket holding the packed dataset. */
  public readonly destinationBucket: s3.IBucket;
  /** Prefix of the packed dataset, e.g. `packed/`. */
  public readonly destinationPrefix: string;
  /** Prefix of the shards, e.g. `packed/shards/`. */
  public readonly shardsPrefix: string;
  /** Prefix of the index files, e.g. `packed/index/`. */
  public readonly indexPrefix: string;
  /** Key of `manifest.json`: the current version's. */
  public readonly manifestKey: string;
  /** Key of `shards.manifest`: a SageMaker ManifestFile of the current version's shards. */
  public readonly shardsManifestKey: string;
  /** Key of `index.manifest`: a SageMaker ManifestFile of the current version's index files and manifest. */
  public readonly indexManifestKey: string;
  /** Lists the source and writes the plan. */
  public readonly plannerFunction: lambda.Function;
  /** Packs one shard. */
  public readonly packerFunction: lambda.Function;
  /** Writes the merged index and the manifest. */
  public readonly finalizerFunction: lambda.Function;
  /** Readers the shard count is a multiple of: `consumers`, or the cluster's instances × processes × loader workers. */
  public readonly consumers: number;
  /** The shuffle seed of the packing (`seed`, default 0). */
  public readonly seed: number;
  /** What the packers do to each image, when anything (`imagePreprocessing`). */
  public readonly imagePreprocessing?: ImagePreprocessingOptions;

  private readonly maxConcurrency: number;
  private readonly logs: LogGroupOptions;
  private readonly network: { readonly vpc?: ec2.IVpc; readonly vpcSubnets?: ec2.SubnetSelection };

  constructor(scope: Construct, id: string, props: ShardedDatasetProps) {
    super(scope, id);
    validateProps(this, props);
    const settings = packingSettings(this, props);
    this.consumers = settings.consumers;
    this.logs = { retention: props.logRetention, encryptionKey: props.encryptionKey };
    this.network = { vpc: props.vpc, vpcSubnets: props.vpcSubnets };
    this.seed = settings.seed;
    this.imagePreprocessing = props.imagePreprocessing;

    const sourcePrefix = props.sourcePrefix ?? '';
    this.destinationPrefix = props.destinationPrefix ?? DEFAULT_DESTINATION_PREFIX;
    this.destinationBucket = props.destinationBucket ?? this.createDestinationBucket(props.encryptionKey, props.accessLogsBucket);
    const keys = datasetKeys(this.destinationPrefix);
    this.shardsPrefix = keys.shardsPrefix;
    this.indexPrefix = keys.indexPrefix;
    this.manifestKey = keys.manifestKey;
    this.shardsManifestKey = keys.shardsManifestKey;
    this.indexManifestKey = keys.indexManifestKey;

    const env = PACKING_ENV;
    const source = { [env.sourceBucket]: props.sourceBucket.bucketName, [env.sourcePrefix]: sourcePrefix };
    const destination = { [env.destinationBucket]: this.destinationBucket.bucketName, [env.destinationPrefix]: this.destinationPrefix };
    const rendered = toEnvironment(settings, numberVariable);
    const preprocessing = props.imagePreprocessing && { [env.imagePreprocessing]: imagePreprocessingVariable(this, props.imagePreprocessing) };
    const packerMemorySize = props.packerMemorySize
      ?? (props.imagePreprocessing ? Size.mebibytes(PREPROCESSING_PACKER_MEMORY_MIB) : Size.gibibytes(2));
    const threadPoolSize = preprocessing && packerThreadPoolSize(packerMemorySize);

    this.plannerFunction = this.createFunction('Planner', 'shard-planner', props.plannerMemorySize ?? Size.gibibytes(4), {
      ...source,
      ...destination,
      ...rendered.planner,
      ...(props.sourceInventory ? { [env.inventoryBucket]: props.sourceInventory.bucket.bucketName, [env.inventoryKey]: props.sourceInventory.prefix } : {}),
      ...filePatternsVariable(this, props),
      ...preprocessing,
    }, 'lists the source, shuffles and balances it into shards, writes the plan');
    this.packerFunction = this.createFunction('Packer', 'shard-packer', packerMemorySize, {
      ...source,
      ...destination,
      ...rendered.packer,
      [env.recordContent]: props.recordContent ?? defaultRecordContent(settings.labels),
      ...preprocessing,
      ...(threadPoolSize !== undefined ? { [env.threadPoolSize]: String(threadPoolSize) } : {}),
    }, props.imagePreprocessing ? 'packs one shard from its member list, resizing the images' : 'packs one shard from its member list');
    this.finalizerFunction = this.createFunction('Finalizer', 'shard-finalizer', Size.gibibytes(1), {
      ...destination,
      ...rendered.finalizer,
    }, 'merges the shard results into a version, publishes it atomically, prunes versions past their retention');

    this.grantAccess(props.sourceBucket, sourcePrefix);
    if (props.sourceInventory) this.grantInventory(props.sourceInventory);
    if (props.labelFile) this.grantLabelFile(props.labelFile.bucket ?? props.sourceBucket, props.labelFile.key);
    this.maxConcurrency = props.maxConcurrency ?? 100;
    this.stateMachine = this.createStateMachine();
  }

  private createDestinationBucket(encryptionKey: kms.IKey | undefined, accessLogsBucket: s3.IBucket | undefined): s3.Bucket {
    const bucket = createSecureBucket(this, 'Destination', { encryptionKey, accessLogsBucket });
    if (!accessLogsBucket) {
      acknowledge(bucket, 'AwsSolutions-S1', 'packed dataset bucket written only by this construct\'s functions: audit reads with '
        + 'CloudTrail S3 data events, or set accessLogsBucket');
    }
    return bucket;
  }

  private createFunction(id: string, handler: LambdaHandlerName, memorySize: Size, environment: Record<string, string>,
    description: string): lambda.Function {
    return createHandlerFunction(this, id, handler, { memorySize, environment, description, logs: this.logs, ...this.network });
  }

  private grantAccess(sourceBucket: s3.IBucket, sourcePrefix: string): void {
    for (const fn of [this.plannerFunction, this.packerFunction]) {
      grantPrefixAccess(sourceBucket, fn, sourcePrefix, 'read');
      acknowledgePrefixGrant(fn, sourceBucket, sourcePrefix, 'reads the files to pack');
    }
    for (const fn of [this.plannerFunction, this.packerFunction, this.finalizerFunction]) {
      grantPrefixAccess(this.destinationBucket, fn, this.destinationPrefix, 'readWrite');
      acknowledgePrefixGrant(fn, this.destinationBucket, this.destinationPrefix, 'writes the packed dataset and its plan');
    }
  }

  /** The planner reads the report: its manifests and data files all lie under the report's folder. */
  private grantInventory(inventory: SourceInventory): void {
    const folder = inventory.prefix.endsWith('manifest.json') ? reportFolderOf(inventory.prefix) : inventory.prefix;
    grantPrefixAccess(inventory.bucket, this.plannerFunction, folder, 'read');
    acknowledgePrefixGrant(this.plannerFunction, inventory.bucket, folder, 'reads the S3 Inventory report of the source');
  }

  /** The planner reads the label file: that one object (and the bucket's key), nothing else. */
  private grantLabelFile(bucket: s3.IBucket, key: string): void {
    bucket.encryptionKey?.grantDecrypt(this.plannerFunction);
    iam.Grant.addToPrincipal({ grantee: this.plannerFunction, actions: ['s3:GetObject'], resourceArns: [bucket.arnForObjects(key)] });
  }

  /**
   * A new copy of the packing steps (plan → Distributed Map of packers → finalize) for a state
   * machine of your own, e.g. one that trains on the shards next. Chain from `finalize` (the
   * dataset was packed) and `alreadyPacked` (it was up to date), or from the fragment itself, and
   * call `grantPacking` on the state machine that runs them. Each state can be in one state
   * machine only, hence a new copy per call.
   *
   * @param scope where the states are created
   * @param id the fragment's construct id
   */
  public packingSteps(scope: Construct, id: string): PackingSteps {
    return new PackingSteps(scope, id, this);
  }

  /**
   * Lets a state machine that runs `packingSteps` read this dataset's Map items (the plan's task
   * list, and the bucket's key). When the grantee is a state machine, also accepts the cdk-nag
   * findings of the policies aws-cdk-lib adds for the Lambda tasks and the Distributed Map: call it
   * after the state machine is created.
   */
  public grantPacking(grantee: iam.IGrantable): iam.Grant {
    this.destinationBucket.encryptionKey?.grantDecrypt(grantee);
    // The Map reads its items from the one task list of this dataset, nothing else.
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ['s3:GetObject'],
      resourceArns: [this.destinationBucket.arnForObjects(`${this.destinationPrefix}${PLAN_PREFIX}*/tasks.json`)],
    });
    if (grantee instanceof sfn.StateMachine) {
      acknowledge(grantee, wildcardResourceFinding(grantee, this.destinationBucket.arnForObjects(`${this.destinationPrefix}${PLAN_PREFIX}*/tasks.json`)),
        'the task list of each run lies in the working folder of the version it makes: the wildcard is the version id, known only when the run plans');
      for (const fn of [this.plannerFunction, this.packerFunction, this.finalizerFunction]) {
        acknowledge(grantee, wildcardResourceFinding(grantee, `${fn.functionArn}:*`),
          'lambda:InvokeFunction on the versions and aliases of this construct\'s own function');
      }
      acknowledgeDistributedMapPolicy(grantee);
    }
    return grant;
  }

  /** Lets the grantee read the dataset: its shards, index files and manifest, not the plan's working files. */
  public grantRead(grantee: iam.IGrantable): iam.Grant {
    return grantDatasetRead(this, grantee);
  }

  /** @internal */
  public _maxConcurrency(): number {
    return this.maxConcurrency;
  }

  private createStateMachine(): sfn.StateMachine {
    const stateMachine = new LoggedStateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(this.packingSteps(this, 'Packing')),
      logRetention: this.logs.retention,
      encryptionKey: this.logs.encryptionKey,
    });
    this.grantPacking(stateMachine);
    return stateMachine;
  }
}

/**
 * The packing steps of a `ShardedDataset` as a state machine fragment: `Plan` (list, shuffle,
 * balance, write the plan) → `UpToDate` → `PackShards` (a Distributed Map of packers, one shard
 * each) → `Finalize` (merged index, manifest last); or `AlreadyPacked` when the source and options
 * match the last manifest. The planner's result is at `$.plan`, the finalizer's at `$.dataset`.
 * Create it with `ShardedDataset.packingSteps()`.
 */
export class PackingSteps extends sfn.StateMachineFragment {
  public readonly startState: sfn.State;
  public readonly endStates: sfn.INextable[];
  /** Lists the source and writes the plan; reads `force` from the state's input. */
  public readonly plan: tasks.LambdaInvoke;
  /** Packs the shards, one packer each. */
  public readonly packShards: sfn.DistributedMap;
  /**
   * Writes the merged index and the manifest: reached when the dataset was (re)packed. Fails with
   * `MissingFilesError`, publishing nothing, when some source object could not be packed, unless
   * the dataset's `allowMissing`.
   */
  public readonly finalize: tasks.LambdaInvoke;
  /** Reached when the dataset was up to date: nothing was packed. */
  public readonly alreadyPacked: sfn.Pass;

  constructor(scope: Construct, id: string, dataset: ShardedDataset) {
    super(scope, id);
    this.plan = new tasks.LambdaInvoke(this, 'Plan', {
      lambdaFunction: dataset.plannerFunction,
      payloadResponseOnly: true,
      resultPath: '$.plan',
    });

    const pack = new tasks.LambdaInvoke(this, 'PackShard', {
      lambdaFunction: dataset.packerFunction,
      payloadResponseOnly: true,
      payload: sfn.TaskInput.fromObject({
        shardIndex: sfn.JsonPath.numberAt('$.shardIndex'),
        shardName: sfn.JsonPath.stringAt('$.shardName'),
        membersKey: sfn.JsonPath.stringAt('$.membersKey'),
      }),
    });
    // Throttling when the Map outruns the account's Lambda concurrency: wait it out.
    pack.addRetry({
      errors: ['Lambda.TooManyRequestsException'],
      interval: Duration.seconds(5),
      backoffRate: 2,
      maxAttempts: 8,
      maxDelay: Duration.minutes(2),
      jitterStrategy: sfn.JitterType.FULL,
    });
    // A packer is safe to rerun (same members, same bytes, same keys): retry what escaped its own S3 retries.
    pack.addRetry({
      errors: [sfn.Errors.TASKS_FAILED, sfn.Errors.TIMEOUT],
      interval: Duration.seconds(10),
      backoffRate: 2,
      maxAttempts: 3,
      jitterStrategy: sfn.JitterType.FULL,
    });

    this.packShards = new sfn.DistributedMap(this, 'PackShards', {
      itemReader: new sfn.S3JsonItemReader({
        bucketNamePath: sfn.JsonPath.stringAt('$.plan.tasksBucket'),
        key: sfn.JsonPath.stringAt('$.plan.tasksKey'),
      }),
      itemSelector: {
        shardIndex: sfn.JsonPath.numberAt('$$.Map.Item.Value.shardIndex'),
        shardName: sfn.JsonPath.stringAt('$$.Map.Item.Value.shardName'),
        membersKey: sfn.JsonPath.stringAt('$$.Map.Item.Value.membersKey'),
      },
      maxConcurrency: dataset._maxConcurrency(),
      toleratedFailurePercentage: 0,
      mapExecutionType: sfn.StateMachineType.STANDARD,
      // Results are in S3 (`_plan/<version>/results/`): the Map's output would outgrow a state's 256 KB.
      resultPath: sfn.JsonPath.DISCARD,
    });
    this.packShards.itemProcessor(pack);

    this.finalize = new tasks.LambdaInvoke(this, 'Finalize', {
      lambdaFunction: dataset.finalizerFunction,
      payloadResponseOnly: true,
      payload: sfn.TaskInput.fromObject({
        datasetVersion: sfn.JsonPath.stringAt('$.plan.datasetVersion'),
        shardCount: sfn.JsonPath.numberAt('$.plan.shardCount'),
        fingerprint: sfn.JsonPath.stringAt('$.plan.source.fingerprint'),
      }),
      resultPath: '$.dataset',
    });
    // An error at or after the claim leaves a published version whose root copies, working files or
    // prune are unfinished: a second call finishes them (lambda/shard-finalizer, ARCHITECTURE.md "Publishing protocol").
    this.finalize.addRetry({
      errors: ['AfterClaimError'],
      interval: Duration.seconds(10),
      backoffRate: 2,
      maxAttempts: 3,
      jitterStrategy: sfn.JitterType.FULL,
    });

    this.alreadyPacked = new sfn.Pass(this, 'AlreadyPacked');
    const upToDate = new sfn.Choice(this, 'UpToDate')
      .when(sfn.Condition.booleanEquals('$.plan.upToDate', true), this.alreadyPacked)
      .otherwise(this.packShards.next(this.finalize));
    this.plan.next(upToDate);

    this.startState = this.plan;
    this.endStates = [this.alreadyPacked, this.finalize];
  }
}

/**
 * The Distributed Map's policy (added by aws-cdk-lib) lets the state machine start, describe and
 * stop its own child executions: the wildcard is the execution name.
 */
function acknowledgeDistributedMapPolicy(stateMachine: sfn.StateMachine): void {
  const policy = stateMachine.node.tryFindChild('DistributedMapPolicy');
  if (!(policy instanceof iam.Policy)) return;
  const document = Stack.of(stateMachine).resolve(policy.document) as { Statement?: Array<{ Resource?: unknown }> };
  for (const statement of document.Statement ?? []) {
    const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
    for (const resource of resources) {
      acknowledge(stateMachine, wildcardResourceFinding(stateMachine, resource as string),
        'the Distributed Map starts, describes and stops the child executions of this state machine only');
    }
  }
}

/**
 * The packing settings of the props, checked by the contract's one check (values that are tokens are
 * rendered, not checked) and completed with its defaults; warns when an exact shard count is rounded up.
 */
function packingSettings(scope: Construct, props: ShardedDatasetProps): PackingSettings {
  if (props.parts !== undefined && Token.isUnresolved(props.parts)) {
    // A list token (a CommaDelimitedList parameter) cannot be sorted and joined into the planner's
    // environment at synth; part names belong to the dataset's layout, known when the stack is written.
    throw new ValidationError('InvalidParts', 'parts must be a list of part names known at synth (jpg, json, mask.png), got a list token '
      + '(a CommaDelimitedList parameter or an attribute); a token for one name inside the list is accepted', scope);
  }
  const retention = props.versionRetention;
  const raw: RawPackingSettings = {
    format: props.format,
    seed: props.seed,
    labels: props.labels,
    labelFile: props.labelFile && `s3://${(props.labelFile.bucket ?? props.sourceBucket).bucketName}/${props.labelFile.key}`,
    targetShardBytes: props.targetShardSize?.toBytes(),
    shardCount: props.shardCount,
    consumers: props.cluster ? resolveCluster(props.cluster, 'cluster', scope).consumers : props.consumers,
    readConcurrency: props.packerConcurrency,
    // Fractions of a day reach the check (and are refused), not rounded away.
    retentionDays: retention && (retention.isUnresolved() ? retention.toDays() : retention.toDays({ integral: false })),
    allowMissing: props.allowMissing,
    parts: props.parts,
  };
  // The key alone is checked: the bucket's name is most often a token.
  const checked = { ...raw, labelFile: props.labelFile?.key };
  const resolved = Object.fromEntries(Object.entries(checked).filter(([, value]) => value !== undefined && !Token.isUnresolved(value)));
  const problem = checkPackingSettings(resolved)[0];
  if (problem) throw new ValidationError(problem.code as ErrorCode, problem.message, scope);
  const settings = normalizePackingSettings(Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined)));
  const rounding = !Token.isUnresolved(settings.shardCount) && !Token.isUnresolved(settings.consumers) && shardCountRounding(settings);
  if (rounding) Annotations.of(scope).addWarningV2('cdk-training-io:shardCountRounded', rounding);
  return settings;
}

/** `inv/src/cfg/2026-11-20T00-00Z/manifest.json` → `inv/src/cfg/`: the data files lie beside the dated folders. */
function reportFolderOf(manifestKey: string): string {
  const parts = manifestKey.split('/');
  return parts.length > 2 ? `${parts.slice(0, -2).join('/')}/` : '';
}

/** An environment variable's value must be a string, also when the number is a token. */
function numberVariable(value: number): string {
  return Token.isUnresolved(value) ? Token.asString(value) : String(value);
}

/** The planner's `SOURCE_FILE_PATTERNS`, or nothing when every file is packed. */
function filePatternsVariable(scope: Construct, props: ShardedDatasetProps): Record<string, string> {
  const patterns: FilePatterns = { ...optionalList('include', props.include), ...optionalList('exclude', props.exclude) };
  if (!filtersFiles(patterns)) return {};
  const resolved = [...patterns.include ?? [], ...patterns.exclude ?? []].every((pattern) => !Token.isUnresolved(pattern));
  return { [PACKING_ENV.filePatterns]: resolved ? JSON.stringify(patterns) : Stack.of(scope).toJsonString(patterns) };
}

function optionalList(name: 'include' | 'exclude', list: string[] | undefined): Partial<FilePatterns> {
  return list && list.length > 0 ? { [name]: list } : {};
}

function validateFilePatterns(scope: Construct, props: ShardedDatasetProps): void {
  for (const name of ['include', 'exclude'] as const) {
    const list = props[name];
    if (!list || Token.isUnresolved(list)) continue;
    const problems = filePatternsProblems(name, list.filter((pattern) => !Token.isUnresolved(pattern)));
    if (problems.length > 0) throw new ValidationError('InvalidFilePattern', problems.join('; '), scope);
  }
}

function validateProps(scope: Construct, props: ShardedDatasetProps): void {
  validateKeyPrefix(scope, 'InvalidPrefix', 'sourcePrefix', props.sourcePrefix);
  validateKeyPrefix(scope, 'InvalidPrefix', 'destinationPrefix', props.destinationPrefix);
  validateDestinationOutsideSource(scope, props);
  validateConsumersOrCluster(scope, props);
  validateWholeNumber(scope, 'InvalidMaxConcurrency', 'maxConcurrency', props.maxConcurrency, 1, MAX_MAP_CONCURRENCY);
  validateMebibytes(scope, 'InvalidMemorySize', 'packerMemorySize', props.packerMemorySize, MIN_MEMORY_MIB, MAX_MEMORY_MIB);
  validateMebibytes(scope, 'InvalidMemorySize', 'plannerMemorySize', props.plannerMemorySize, MIN_MEMORY_MIB, MAX_MEMORY_MIB);
  validateInventory(scope, props.sourceInventory);
  validateFilePatterns(scope, props);
  validateImagePreprocessing(scope, props.imagePreprocessing);
  if (props.recordContent === RecordContent.ANY && props.imagePreprocessing) {
    throw new ValidationError('PreprocessingNonImages',
      'recordContent is RecordContent.ANY (files packed as they are), and imagePreprocessing decodes every file as an image: '
      + 'set one or the other', scope);
  }
}

function validateInventory(scope: Construct, inventory: SourceInventory | undefined): void {
  if (!inventory || !isResolved(inventory.prefix)) return;
  const { prefix } = inventory;
  if (prefix.startsWith('/') || !(prefix === '' || prefix.endsWith('/') || prefix.endsWith('/manifest.json') || prefix === 'manifest.json')) {
    throw new ValidationError('InvalidInventoryPrefix',
      `sourceInventory.prefix must be the report's folder ending in '/' (e.g. 'inventory/my-bucket/daily/') or the key of one of its `
      + `manifest.json files, got '${prefix}'`, scope);
  }
}

/** Packing into the source's own prefix would pack the shards again on the next run. */
function validateDestinationOutsideSource(scope: Construct, props: ShardedDatasetProps): void {
  if (props.destinationBucket !== props.sourceBucket) return;
  const source = props.sourcePrefix ?? '';
  const destination = props.destinationPrefix ?? 'packed/';
  if (!isResolved(source) || !isResolved(destination)) return;
  if (destination.startsWith(source)) {
    throw new ValidationError('DestinationInsideSource',
      `destinationPrefix '${destination}' is inside sourcePrefix '${source}' of the same bucket: the next run would pack the shards `
      + 'as source files; use a prefix outside the source (e.g. sourcePrefix \'raw/\', destinationPrefix \'packed/\')', scope);
  }
}

function validateConsumersOrCluster(scope: Construct, props: ShardedDatasetProps): void {
  if (props.consumers !== undefined && props.cluster !== undefined) {
    throw new ValidationError('ConsumersAndCluster',
      'give consumers or cluster, not both: consumers follow from the cluster (instances × processes × loader workers)', scope);
  }
}
