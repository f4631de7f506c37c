import type { Channel } from '@aws-sdk/client-sagemaker';
import type { Size} from 'aws-cdk-lib';
import { Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { DATASET_LAYOUT } from '../contract/dataset-layout';
import { ValidationError } from '../private/errors';
import { LUSTRE_PORTS } from '../private/lustre-ports';
import { acknowledgePrefixGrant } from '../private/nag';
import { isResolved } from '../private/validation';
import type { IShardedDataset } from '../sharding/sharded-dataset';
import type { ILustreDatasetCache } from '../storage/lustre-dataset-cache';
import { InputMode } from '../vocabulary/input-mode';
import { S3DataDistribution } from '../vocabulary/s3-data-distribution';

/**
 * Whether SageMaker wraps each S3 object in an MXNet RecordIO record (Pipe mode only).
 */
export enum RecordWrapper {
  /** Objects are passed as they are. */
  NONE = 'None',
  /** Each object becomes one RecordIO record. */
  RECORDIO = 'RecordIO',
}

/**
 * Compression of the objects in an S3 channel (Pipe mode only).
 */
export enum ChannelCompression {
  /** Not compressed. */
  NONE = 'None',
  /** Gzip: SageMaker decompresses while streaming. */
  GZIP = 'Gzip',
}

/**
 * The kind of file system a channel reads from.
 */
export enum FileSystemType {
  /** Amazon FSx for Lustre: `directoryPath` is `/<MountName>/<path>`. */
  FSX_LUSTRE = 'FSxLustre',
  /** Amazon EFS. */
  EFS = 'EFS',
}

/**
 * Access to a file-system channel.
 */
export enum FileSystemAccessMode {
  /** Read only. */
  READ_ONLY = 'ro',
  /** Read and write. */
  READ_WRITE = 'rw',
}

/**
 * Options of a channel that reads an S3 prefix.
 */
export interface S3ChannelOptions {
  /**
   * How the data reaches the container.
   *
   * @default - Pipe when `compression` or `recordWrapper` is set (they work in Pipe mode only);
   * otherwise File when the data is known to fit on the instance's storage (or its size is
   * unknown), FastFile when `datasetSize` says it does not fit
   */
  readonly inputMode?: InputMode;

  /**
   * How objects are spread over the instances.
   *
   * @default S3DataDistribution.FULLY_REPLICATED
   */
  readonly distribution?: S3DataDistribution;

  /**
   * Seed of SageMaker's `ShuffleConfig`. In Pipe mode the object order is reshuffled at every
   * epoch (and across nodes with ShardedByS3Key); in File/FastFile mode it only orders the download once.
   *
   * @default - no shuffling by SageMaker
   */
  readonly shuffleSeed?: number;

  /**
   * Wrap each object in a RecordIO record (Pipe mode only).
   *
   * @default - not wrapped
   */
  readonly recordWrapper?: RecordWrapper;

  /**
   * Compression of the objects (Pipe mode only).
   *
   * @default - not compressed
   */
  readonly compression?: ChannelCompression;

  /**
   * MIME type of the data.
   *
   * @default - none
   */
  readonly contentType?: string;

  /**
   * Total size of the objects under the prefix, when known: lets the job check that File-mode
   * data fits on the instance's storage and choose the input mode.
   *
   * @default - unknown
   */
  readonly datasetSize?: Size;
}

/**
 * Options of a channel that reads a file system (FSx for Lustre or EFS).
 */
export interface FileSystemChannelOptions {
  /** The file system ID, e.g. `fs-0123456789abcdef0`. */
  readonly fileSystemId: string;

  /**
   * The directory to mount at `/opt/ml/input/data/<channel>`. For FSx for Lustre it is
   * `/<MountName>/<path>` (the mount name is `LustreFileSystem.mountName`).
   */
  readonly directoryPath: string;

  /**
   * The kind of file system.
   *
   * @default FileSystemType.FSX_LUSTRE
   */
  readonly fileSystemType?: FileSystemType;

  /**
   * Access mode.
   *
   * @default FileSystemAccessMode.READ_ONLY
   */
  readonly accessMode?: FileSystemAccessMode;

  /**
   * Input mode. File-system channels must use File mode: SageMaker mounts the directory.
   *
   * @default InputMode.FILE
   */
  readonly inputMode?: InputMode;

  /**
   * The file system's network side (e.g. the `LustreFileSystem`): the job is allowed to reach
   * it on the file system's client ports (Lustre: TCP 988 and 1018–1023; EFS: TCP 2049).
   *
   * @default - no security group rules are added
   */
  readonly connections?: ec2.IConnectable;

  /**
   * MIME type of the data.
   *
   * @default - none
   */
  readonly contentType?: string;
}

/**
 * Options of a channel that reads a `LustreDatasetCache`.
 */
export interface DatasetCacheChannelOptions {
  /**
   * MIME type of the data.
   *
   * @default - none
   */
  readonly contentType?: string;
}

/**
 * Where a job must run to read a channel: file systems are reached through the VPC.
 * @internal
 */
export interface ChannelPlacement {
  readonly vpc: ec2.IVpc;
  readonly subnet: ec2.ISubnet;
}

/**
 * What a job needs to know about it to bind a channel.
 * @internal
 */
export interface ChannelBindContext {
  readonly scope: Construct;
  readonly grantee: iam.IGrantable;
  readonly connections: ec2.IConnectable;
  /** Input mode to use when the channel does not name one. */
  readonly inputModeFor: (channel: S3ChannelFacts) => InputMode;
}

/**
 * Facts of an S3 channel the job uses to choose an input mode.
 * @internal
 */
export interface S3ChannelFacts {
  readonly channelName: string;
  readonly distribution: S3DataDistribution;
  readonly datasetSize?: Size;
}

/**
 * A bound channel: the `Channel` of the request plus the facts the job's rules need.
 * @internal
 */
export interface ChannelConfig {
  readonly channel: Channel;
  readonly inputMode: InputMode;
  readonly fileSystem: boolean;
  readonly distribution?: S3DataDistribution;
  readonly shuffled: boolean;
  readonly datasetSize?: Size;
}

const CHANNEL_NAME_PATTERN = /^[A-Za-z0-9.\-_]+$/;
const FILE_SYSTEM_ID_PATTERN = /^fs-[0-9a-f]{8,}$/;

/** Client ports per file system type (Lustre: 988 and 1018–1023; EFS: NFS 2049). */
const FILE_SYSTEM_PORTS: Record<FileSystemType, readonly ec2.Port[]> = {
  [FileSystemType.FSX_LUSTRE]: LUSTRE_PORTS,
  [FileSystemType.EFS]: [ec2.Port.tcp(2049)],
};

/**
 * An input channel of a training job: an S3 prefix or a file-system directory.
 *
 * @see https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Channel.html
 */
export abstract class TrainingChannel {
  /**
   * A channel that reads the objects under an S3 prefix.
   *
   * @param channelName the channel's name: the container sees `/opt/ml/input/data/<channelName>`
   * @param bucket the bucket holding the data; the job's role is granted read on the prefix
   * @param prefix the key prefix, e.g. `packed/shards/` (end it with `/`)
   */
  public static fromBucket(channelName: string, bucket: s3.IBucket, prefix: string, options: S3ChannelOptions = {}): TrainingChannel {
    return new S3Channel(channelName, bucket, prefix, options);
  }

  /**
   * A channel over the shards of the current version of a packed dataset. In File and Pipe mode it
   * reads the dataset's `shards.manifest` (S3DataType `ManifestFile`): exactly one published version's
   * shards, whichever version folders they lie in, as SageMaker reads the manifest when the job
   * starts; pair it with `S3DataDistribution.SHARDED_BY_S3_KEY` and `shuffleSeed` in Pipe mode. In
   * FastFile mode (S3Prefix only) it mounts the dataset's root and the reader opens the shards the
   * manifest lists (FullyReplicated: ShardedByS3Key would split every version's objects).
   *
   * @param channelName the channel's name: the container sees `/opt/ml/input/data/<channelName>`
   * @param dataset the packed dataset, e.g. a `ShardedDataset`; the job's role is granted read on its prefix
   */
  public static fromShards(channelName: string, dataset: IShardedDataset, options: S3ChannelOptions = {}): TrainingChannel {
    return shardsChannel(channelName, dataset, options);
  }

  /**
   * `fromShards` pinned to the version a state machine execution names at `versionPath` (e.g.
   * `$.plan.datasetVersion`): the version's own ManifestFile, which no later publish changes.
   * @internal
   */
  public static _fromShardsOfVersion(channelName: string, dataset: IShardedDataset, options: S3ChannelOptions, versionPath: string): TrainingChannel {
    return shardsChannel(channelName, dataset, options, versionPath);
  }

  /**
   * `fromShardIndex` pinned to the version a state machine execution names at `versionPath`.
   * @internal
   */
  public static _fromShardIndexOfVersion(channelName: string, dataset: IShardedDataset, versionPath: string): TrainingChannel {
    return new S3Channel(channelName, dataset.destinationBucket, dataset.destinationPrefix,
      { inputMode: InputMode.FILE, distribution: S3DataDistribution.FULLY_REPLICATED }, dataset.indexManifestKey, versionPath);
  }

  /**
   * A FullyReplicated File-mode channel over the index files and the manifest of the current
   * version of a packed dataset (its `index.manifest`), for readers that seek through the indexes
   * (DALI, random access). Kept apart from the shards so that ShardedByS3Key never splits them.
   *
   * @param channelName the channel's name, e.g. `index`
   * @param dataset the packed dataset; the job's role is granted read on its prefix
   */
  public static fromShardIndex(channelName: string, dataset: IShardedDataset): TrainingChannel {
    return new S3Channel(channelName, dataset.destinationBucket, dataset.destinationPrefix,
      { inputMode: InputMode.FILE, distribution: S3DataDistribution.FULLY_REPLICATED }, dataset.indexManifestKey);
  }

  /**
   * A channel that mounts a directory of a file system (FSx for Lustre or EFS) in File mode.
   *
   * @param channelName the channel's name: the directory is mounted at `/opt/ml/input/data/<channelName>`
   */
  public static fromFileSystem(channelName: string, options: FileSystemChannelOptions): TrainingChannel {
    return new FileSystemChannel(channelName, options);
  }

  /**
   * A channel that mounts a directory of a `LustreDatasetCache` read-only in File mode, with
   * `DirectoryPath` = `/<MountName>/<path>`. The job runs in the cache's VPC, pinned to its subnet
   * (FSx for Lustre is single-AZ), and may reach it on the Lustre ports; many jobs can read one cache.
   *
   * @param channelName the channel's name: the directory is mounted at `/opt/ml/input/data/<channelName>`
   * @param cache the cache to read
   * @param path a directory below the cache's root, which mirrors its S3 source, e.g. `shards`; empty for the root
   */
  public static fromDatasetCache(channelName: string, cache: ILustreDatasetCache, path: string,
    options: DatasetCacheChannelOptions = {}): TrainingChannel {
    const relative = relativeCachePath(channelName, cache, path);
    return new FileSystemChannel(channelName, {
      fileSystemId: cache.fileSystemId,
      directoryPath: relative ? `/${cache.mountName}/${relative}` : `/${cache.mountName}`,
      fileSystemType: FileSystemType.FSX_LUSTRE,
      accessMode: FileSystemAccessMode.READ_ONLY,
      connections: cache,
      contentType: options.contentType,
    }, { vpc: cache.vpc, subnet: cache.subnet });
  }

  /** The channel's name: the container sees its data at `/opt/ml/input/data/<channelName>`. */
  public readonly channelName: string;

  protected constructor(channelName: string) {
    validateChannelName(channelName);
    this.channelName = channelName;
  }

  /**
   * Where a job must run to read this channel; undefined when any subnet will do.
   * @internal
   */
  public get _placement(): ChannelPlacement | undefined {
    return undefined;
  }

  /** @internal */
  public abstract _bind(context: ChannelBindContext): ChannelConfig;
}

/**
 * The objects under a prefix, or (with `manifestKey`) the objects a SageMaker ManifestFile lists,
 * in File and Pipe mode; FastFile takes S3Prefix only, so it reads the prefix.
 */
class S3Channel extends TrainingChannel {
  constructor(channelName: string, private readonly bucket: s3.IBucket, private readonly prefix: string,
    private readonly options: S3ChannelOptions, private readonly manifestKey?: string, private readonly versionPath?: string) {
    super(channelName);
    validatePipeOnlyOptions(channelName, options);
    validateShuffleSeed(channelName, options.shuffleSeed);
  }

  private manifestUri(): string {
    return versionManifestUri(this.bucket, this.prefix, this.manifestKey!, this.versionPath);
  }

  public _bind(context: ChannelBindContext): ChannelConfig {
    const asked = this.options.distribution ?? S3DataDistribution.FULLY_REPLICATED;
    const inputMode = this.options.inputMode ?? (usesPipeOnlyOptions(this.options) ? InputMode.PIPE : context.inputModeFor({
      channelName: this.channelName, distribution: asked, datasetSize: this.options.datasetSize,
    }));
    // A dataset read in FastFile mode is its root prefix (FastFile takes no ManifestFile): split by
    // the loaders, not by key (fromShards refuses ShardedByS3Key given with FastFile).
    const distribution = this.manifestKey !== undefined && inputMode === InputMode.FAST_FILE ? S3DataDistribution.FULLY_REPLICATED : asked;
    this.bucket.grantRead(context.grantee, `${this.prefix}*`);
    acknowledgePrefixGrant(context.scope, this.bucket, this.prefix, `channel '${this.channelName}' reads its data`);
    const { shuffleSeed, recordWrapper, compression, contentType } = this.options;
    const listed = this.manifestKey !== undefined && inputMode !== InputMode.FAST_FILE;
    return {
      channel: {
        ChannelName: this.channelName,
        DataSource: {
          S3DataSource: {
            S3DataType: listed ? 'ManifestFile' : 'S3Prefix',
            S3Uri: listed ? this.manifestUri() : `s3://${this.bucket.bucketName}/${this.prefix}`,
            S3DataDistributionType: distribution,
          },
        },
        InputMode: inputMode,
        ...(shuffleSeed !== undefined ? { ShuffleConfig: { Seed: shuffleSeed } } : {}),
        ...(recordWrapper ? { RecordWrapperType: recordWrapper } : {}),
        ...(compression ? { CompressionType: compression } : {}),
        ...(contentType ? { ContentType: contentType } : {}),
      },
      inputMode,
      fileSystem: false,
      distribution,
      shuffled: shuffleSeed !== undefined,
      datasetSize: this.options.datasetSize,
    };
  }
}

function shardsChannel(channelName: string, dataset: IShardedDataset, options: S3ChannelOptions, versionPath?: string): TrainingChannel {
  validateShardChannelOptions(channelName, options);
  if (options.inputMode === InputMode.FAST_FILE && options.distribution === S3DataDistribution.SHARDED_BY_S3_KEY) {
    throw new ValidationError('ShardedFastFileDataset',
      `channel '${channelName}': FastFile mode reads a dataset through its root prefix (FastFile takes no ManifestFile), where `
      + 'ShardedByS3Key would split the objects of every version; use File or Pipe mode with ShardedByS3Key, or FastFile with FullyReplicated');
  }
  return new S3Channel(channelName, dataset.destinationBucket, dataset.destinationPrefix, options, dataset.shardsManifestKey, versionPath);
}

/** The channel manifest of the current version, or of the version the execution names (`versions/<id>/<name>`, dataset-layout.ts). */
function versionManifestUri(bucket: s3.IBucket, prefix: string, manifestKey: string, versionPath?: string): string {
  if (versionPath === undefined) return `s3://${bucket.bucketName}/${manifestKey}`;
  const name = manifestKey.slice(manifestKey.lastIndexOf('/') + 1);
  return sfn.JsonPath.format(`s3://${bucket.bucketName}/${prefix}${DATASET_LAYOUT.versions}{}/${name}`, sfn.JsonPath.stringAt(versionPath));
}

class FileSystemChannel extends TrainingChannel {
  constructor(channelName: string, private readonly options: FileSystemChannelOptions, private readonly placement?: ChannelPlacement) {
    super(channelName);
    validateFileSystemOptions(channelName, options);
  }

  public get _placement(): ChannelPlacement | undefined {
    return this.placement;
  }

  public _bind(context: ChannelBindContext): ChannelConfig {
    const type = this.options.fileSystemType ?? FileSystemType.FSX_LUSTRE;
    if (this.options.connections) {
      for (const port of FILE_SYSTEM_PORTS[type]) {
        this.options.connections.connections.allowFrom(context.connections, port,
          `training channel ${this.channelName} reads ${type}`);
      }
    }
    return {
      channel: {
        ChannelName: this.channelName,
        DataSource: {
          FileSystemDataSource: {
            FileSystemId: this.options.fileSystemId,
            FileSystemType: type,
            FileSystemAccessMode: this.options.accessMode ?? FileSystemAccessMode.READ_ONLY,
            DirectoryPath: this.options.directoryPath,
          },
        },
        InputMode: InputMode.FILE,
        ...(this.options.contentType ? { ContentType: this.options.contentType } : {}),
      },
      inputMode: InputMode.FILE,
      fileSystem: true,
      shuffled: false,
    };
  }
}

function validateChannelName(channelName: string): void {
  if (Token.isUnresolved(channelName)) return;
  if (channelName.length < 1 || channelName.length > 64 || !CHANNEL_NAME_PATTERN.test(channelName)) {
    throw new ValidationError('InvalidChannelName',
      `channelName must be 1–64 characters of letters, digits, '.', '-' and '_', got '${channelName}'`);
  }
}

/** True when the channel sets an option that works in Pipe mode only. */
function usesPipeOnlyOptions(options: S3ChannelOptions): boolean {
  return (options.compression !== undefined && options.compression !== ChannelCompression.NONE)
    || (options.recordWrapper !== undefined && options.recordWrapper !== RecordWrapper.NONE);
}

function validatePipeOnlyOptions(channelName: string, options: S3ChannelOptions): void {
  const mode = options.inputMode;
  if (mode === undefined || mode === InputMode.PIPE) return;
  if (options.compression && options.compression !== ChannelCompression.NONE) {
    throw new ValidationError('CompressionRequiresPipeMode',
      `channel '${channelName}': compression ${options.compression} is only supported in Pipe mode, got inputMode ${mode}; ` +
      'decompress the data, or use InputMode.PIPE');
  }
  if (options.recordWrapper && options.recordWrapper !== RecordWrapper.NONE) {
    throw new ValidationError('RecordWrapperRequiresPipeMode',
      `channel '${channelName}': recordWrapper ${options.recordWrapper} is only supported in Pipe mode, got inputMode ${mode}; ` +
      'pack the data into RecordIO shards instead, or use InputMode.PIPE');
  }
}

/**
 * Packed shards are already TFRecord or RecordIO files, stored uncompressed: a RecordIO wrapper
 * would frame each shard as one more record, and Gzip would have SageMaker gunzip bytes that are
 * not gzip. `container/shardio` refuses both at run time; refuse them before a job is launched.
 */
function validateShardChannelOptions(channelName: string, options: S3ChannelOptions): void {
  if (options.recordWrapper && options.recordWrapper !== RecordWrapper.NONE) {
    throw new ValidationError('RecordWrapperOnShards',
      `channel '${channelName}': recordWrapper ${options.recordWrapper} on packed shards wraps every shard in one more RecordIO record; `
      + `leave recordWrapper unset (or ${RecordWrapper.NONE}): the shards are framed already`);
  }
  if (options.compression && options.compression !== ChannelCompression.NONE) {
    throw new ValidationError('CompressionOnShards',
      `channel '${channelName}': compression ${options.compression} on packed shards, which the packer writes uncompressed; `
      + `leave compression unset (or ${ChannelCompression.NONE})`);
  }
}

function validateShuffleSeed(channelName: string, seed: number | undefined): void {
  if (!isResolved(seed)) return;
  if (!Number.isSafeInteger(seed)) {
    throw new ValidationError('InvalidShuffleSeed',
      `channel '${channelName}': shuffleSeed must be a whole number between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}, got ${seed}`);
  }
}

function validateFileSystemOptions(channelName: string, options: FileSystemChannelOptions): void {
  const mode = options.inputMode ?? InputMode.FILE;
  if (mode !== InputMode.FILE) {
    throw new ValidationError('FileSystemChannelRequiresFileMode',
      `channel '${channelName}': a file-system channel must use File mode (SageMaker mounts the directory), got inputMode ${mode}; ` +
      'use TrainingChannel.fromBucket() for FastFile or Pipe');
  }
  const id = options.fileSystemId;
  if (isResolved(id) && (id.length > 21 || !FILE_SYSTEM_ID_PATTERN.test(id))) {
    throw new ValidationError('InvalidFileSystemId',
      `channel '${channelName}': fileSystemId must look like 'fs-0123456789abcdef0' (fs- and 8–18 hex digits), got '${id}'`);
  }
  const path = options.directoryPath;
  if (isResolved(path) && (!path.startsWith('/') || path.length > 4096)) {
    throw new ValidationError('InvalidDirectoryPath',
      `channel '${channelName}': directoryPath must be an absolute path of at most 4096 characters ` +
      `(for FSx for Lustre '/<MountName>/<path>'), got '${path}'`);
  }
}

/** `path` relative to the cache's root, checked to lie under (or above) a directory linked to S3. */
function relativeCachePath(channelName: string, cache: ILustreDatasetCache, path: string): string {
  if (!isResolved(path)) return path;
  const relative = path.replace(/^\/+|\/+$/g, '');
  if (relative.split('/').some((segment) => segment === '.' || segment === '..' || (relative !== '' && segment === ''))) {
    throw new ValidationError('InvalidCachePath',
      `channel '${channelName}': path must be a directory below the cache's root without '.', '..' or empty segments, got '${path}'`);
  }
  const linked = cache.linkedPaths.map((p) => p.replace(/^\/+|\/+$/g, ''));
  const reachesData = (dir: string) => dir === '' || relative === '' || relative === dir
    || relative.startsWith(`${dir}/`) || dir.startsWith(`${relative}/`);
  if (!linked.some(reachesData)) {
    throw new ValidationError('CachePathNotLinked',
      `channel '${channelName}': path '${path}' is outside the directories the cache links to S3 ` +
      `(${cache.linkedPaths.join(', ')}), so it would be empty; use a path under one of them`);
  }
  return relative;
}
