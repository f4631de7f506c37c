import type { Size} from 'aws-cdk-lib';
import { Annotations, RemovalPolicy, SizeRoundingBehavior } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as fsx from 'aws-cdk-lib/aws-fsx';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { CacheLink, CacheSource } from './cache-source';
import { validateCacheProps } from './private/cache-rules';
import type { CacheDeploymentType, CacheSizing} from '../instances/private/lustre-sizing';
import { sizeCache, THROUGHPUT_TIERS } from '../instances/private/lustre-sizing';
import { importDatasetCache } from './private/imported-dataset-cache';
import { allowFsxToDecrypt } from './private/source-key-access';
import type { ReadRate } from './read-rate';
import { ValidationError } from '../private/errors';
import { LUSTRE_PORTS } from '../private/lustre-ports';
import { isResolved } from '../private/validation';

/**
 * An FSx for Lustre file system that presents S3 data to training jobs, as channels read it.
 */
export interface ILustreDatasetCache extends ec2.IConnectable {
  /** The file system ID, e.g. `fs-0123456789abcdef0`. */
  readonly fileSystemId: string;
  /** The Lustre mount name: a channel's `DirectoryPath` is `/<MountName>/<path>`. */
  readonly mountName: string;
  /** The VPC of the file system. */
  readonly vpc: ec2.IVpc;
  /** The one subnet of the file system (FSx for Lustre is single-AZ): jobs that read it run there. */
  readonly subnet: ec2.ISubnet;
  /** The directories of the file system linked to S3, e.g. `['/']` or `['/shards', '/index']`. */
  readonly linkedPaths: string[];
}

/**
 * How a {@link LustreDatasetCache} is built: everything but what it presents and where.
 * `TrainingPipeline` takes these for the cache of its dataset.
 */
export interface LustreDatasetCacheOptions {
  /**
   * The one subnet of the file system. Training jobs that read the cache are pinned to it.
   * Public subnets are refused.
   *
   * @default - the first subnet of the VPC's default selection (private subnets, else isolated ones)
   */
  readonly subnet?: ec2.ISubnet;

  /**
   * The deployment type: SCRATCH_2 (cheapest, data not replicated, fixed 200 MB/s/TiB baseline),
   * PERSISTENT_1 or PERSISTENT_2 (replicated in the AZ, throughput chosen per TiB). SCRATCH_1
   * cannot be linked to S3 with data repository associations and is refused.
   *
   * @default LustreDeploymentType.PERSISTENT_2
   * @see https://docs.aws.amazon.com/fsx/latest/LustreGuide/using-fsx-lustre.html
   */
  readonly deploymentType?: fsx.LustreDeploymentType;

  /**
   * The Lustre version. Data repository associations need 2.12 or later; 2.10 is refused.
   * FSx itself would default to 2.10 for every type but PERSISTENT_2.
   *
   * @default FileSystemTypeVersion.V_2_15
   */
  readonly fileSystemTypeVersion?: fsx.FileSystemTypeVersion;

  /**
   * Size of the linked data. The cache holds it with 10 % to spare.
   *
   * @default - unknown: the smallest capacity, 1200 GiB, unless `storageCapacityGiB` is given
   */
  readonly datasetSize?: Size;

  /**
   * The rate the training jobs read at, e.g. `ReadRate.forTraining({ instance, instanceCount,
   * samplesPerSecondPerDevice, sampleSize })`. The cache's baseline throughput is sized to feed it.
   *
   * @default - no throughput requirement: the lowest throughput tier
   */
  readonly readRate?: ReadRate;

  /**
   * Storage capacity in GiB: 1200, 2400 or a multiple of 2400. Throughput grows with it.
   *
   * @default - the smallest capacity that holds `datasetSize` and, at the top throughput tier, feeds `readRate`
   */
  readonly storageCapacityGiB?: number;

  /**
   * Baseline throughput per TiB of storage, in MB/s: 125, 250, 500 or 1000 for PERSISTENT_2;
   * 50, 100 or 200 for PERSISTENT_1. SCRATCH_2 has a fixed 200 and refuses it.
   *
   * @default - the lowest tier that feeds `readRate` at the chosen capacity
   */
  readonly perUnitStorageThroughput?: number;

  /**
   * KMS key that encrypts the file system at rest (PERSISTENT types only; scratch file systems
   * always use an FSx-managed key).
   *
   * @default - the FSx-managed key of the account
   */
  readonly kmsKey?: kms.IKey;

  /**
   * Security group of the file system. The cache allows Lustre (TCP 988 and 1018–1023) from the
   * group itself and from the training jobs that read it.
   *
   * @default - a new group
   */
  readonly securityGroup?: ec2.ISecurityGroup;

  /**
   * What happens to the file system when it leaves the stack. It only copies S3 data (nothing
   * is exported back), so deleting it loses nothing but the time to load it again.
   *
   * @default RemovalPolicy.DESTROY
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Largest piece of one file stored on one disk (Lustre stripe size of imported files), 1 MiB to 500 GiB.
   *
   * @default - the FSx default, 1 GiB
   */
  readonly importedFileChunkSize?: Size;
}

/**
 * Properties of a {@link LustreDatasetCache}.
 */
export interface LustreDatasetCacheProps extends LustreDatasetCacheOptions {
  /** The S3 data the file system presents: `CacheSource.fromBucket(...)` or `CacheSource.fromShards(...)`. */
  readonly source: CacheSource;

  /** The VPC of the file system and of the training jobs that read it. */
  readonly vpc: ec2.IVpc;
}

/**
 * An FSx for Lustre file system linked to S3 that was made elsewhere (another stack, the console).
 */
export interface LustreDatasetCacheAttributes {
  /** The file system ID, e.g. `fs-0123456789abcdef0`. */
  readonly fileSystemId: string;
  /** The Lustre mount name. */
  readonly mountName: string;
  /** The VPC of the file system. */
  readonly vpc: ec2.IVpc;
  /** The subnet of the file system: jobs that read it are pinned there. */
  readonly subnet: ec2.ISubnet;
  /** The security group of the file system: jobs that read it are allowed in on the Lustre ports. */
  readonly securityGroup: ec2.ISecurityGroup;

  /**
   * The directories of the file system linked to S3, each starting with `/`.
   *
   * @default ['/'] - the whole file system
   */
  readonly linkedPaths?: string[];
}

/**
 * An FSx for Lustre file system linked to S3 for training: the data is imported once and read by
 * every job at the file system's throughput, instead of being downloaded by each job.
 *
 * Builds on aws-cdk-lib's `LustreFileSystem` and adds what it lacks: data repository
 * associations that import new, changed and deleted objects automatically (and the existing
 * ones' metadata at creation), Lustre 2.15 by default, capacity and throughput sized from the
 * dataset and the read rate, Lustre ports narrowed to 988 and 1018–1023, and the KMS grant FSx
 * needs to read an SSE-KMS bucket. Read it with `TrainingChannel.fromDatasetCache(...)`.
 *
 * @see https://docs.aws.amazon.com/fsx/latest/LustreGuide/create-dra-linked-data-repo.html
 */
export class LustreDatasetCache extends Construct implements ILustreDatasetCache {
  /**
   * A cache made elsewhere, for `TrainingChannel.fromDatasetCache(...)`.
   */
  public static fromAttributes(scope: Construct, id: string, attrs: LustreDatasetCacheAttributes): ILustreDatasetCache {
    return importDatasetCache(scope, id, attrs);
  }

  /** The file system. */
  public readonly fileSystem: fsx.LustreFileSystem;
  /** One data repository association per linked S3 prefix. */
  public readonly associations: fsx.CfnDataRepositoryAssociation[];
  /** The security group of the file system. */
  public readonly securityGroup: ec2.ISecurityGroup;
  /** The file system's security group, for rules to and from it. */
  public readonly connections: ec2.Connections;
  /** The file system ID. */
  public readonly fileSystemId: string;
  /** The Lustre mount name. */
  public readonly mountName: string;
  /** The DNS name clients mount: `<fs-id>.fsx.<region>.amazonaws.com`. */
  public readonly dnsName: string;
  /** The VPC of the file system. */
  public readonly vpc: ec2.IVpc;
  /** The subnet of the file system. */
  public readonly subnet: ec2.ISubnet;
  /** The directories of the file system linked to S3. */
  public readonly linkedPaths: string[];
  /** The deployment type. */
  public readonly deploymentType: fsx.LustreDeploymentType;
  /** The storage capacity in GiB. */
  public readonly storageCapacityGiB: number;
  /** Baseline MB/s per TiB of storage: the chosen tier, or SCRATCH_2's fixed 200. */
  public readonly perUnitStorageThroughput: number;
  /** Baseline throughput of the whole file system in MB/s; undefined when the capacity or tier is a deploy-time value. */
  public readonly baselineThroughputMBps?: number;

  constructor(scope: Construct, id: string, props: LustreDatasetCacheProps) {
    super(scope, id);
    this.deploymentType = props.deploymentType ?? fsx.LustreDeploymentType.PERSISTENT_2;
    validateCacheProps(this, props, this.deploymentType);
    const deploymentType = this.deploymentType as CacheDeploymentType;
    const version = props.fileSystemTypeVersion ?? fsx.FileSystemTypeVersion.V_2_15;

    this.vpc = props.vpc;
    this.subnet = this.privateSubnet(props);

    const { sizing, known } = this.size(props, deploymentType);
    this.storageCapacityGiB = props.storageCapacityGiB ?? sizing.storageCapacityGiB;
    this.perUnitStorageThroughput = props.perUnitStorageThroughput ?? sizing.perUnitStorageThroughput;
    this.baselineThroughputMBps = known ? sizing.baselineBytesPerSecond / 1e6 : undefined;

    this.securityGroup = props.securityGroup ?? new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'FSx for Lustre dataset cache: Lustre from itself and from the training jobs that read it',
      // File servers open connections to each other and to clients; the FSx guide sets no narrower egress.
      allowAllOutbound: true,
    });
    this.fileSystem = new fsx.LustreFileSystem(this, 'FileSystem', {
      vpc: props.vpc,
      vpcSubnet: this.subnet,
      securityGroup: this.securityGroup,
      storageCapacityGiB: sizing.storageCapacityGiB,
      fileSystemTypeVersion: version,
      kmsKey: props.kmsKey,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
      lustreConfiguration: {
        deploymentType: this.deploymentType,
        ...(THROUGHPUT_TIERS[deploymentType].configurable ? { perUnitStorageThroughput: sizing.perUnitStorageThroughput } : {}),
      },
    });
    const resource = this.fileSystem.node.defaultChild as fsx.CfnFileSystem;
    // aws-cdk-lib 2.276 checks these two as numbers even when they are tokens: it gets the sized
    // stand-ins above, and the resource gets the deploy-time values.
    if (!isResolved(this.storageCapacityGiB)) resource.storageCapacity = this.storageCapacityGiB;
    if (!isResolved(this.perUnitStorageThroughput)) {
      resource.addPropertyOverride('LustreConfiguration.PerUnitStorageThroughput', this.perUnitStorageThroughput);
    }
    if (deploymentType === fsx.LustreDeploymentType.PERSISTENT_2 && version === fsx.FileSystemTypeVersion.V_2_15) {
      // Metadata IOPS that scale with the capacity can only be chosen at creation (the L2 has no prop for it).
      resource.addPropertyOverride('LustreConfiguration.MetadataConfiguration', { Mode: 'AUTOMATIC' });
    }
    narrowSelfIngress(this.securityGroup);

    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup] });
    this.fileSystemId = this.fileSystem.fileSystemId;
    this.mountName = this.fileSystem.mountName;
    this.dnsName = this.fileSystem.dnsName;

    const links = props.source._links();
    this.linkedPaths = links.map((link) => link.fileSystemPath);
    this.associations = links.map((link) => this.associate(link, props));
    this.allowReadsOfEncryptedSources(links, props.kmsKey);
  }

  private privateSubnet(props: LustreDatasetCacheProps): ec2.ISubnet {
    const subnet = props.subnet ?? props.vpc.selectSubnets().subnets[0];
    if (!subnet || props.vpc.publicSubnets.some((s) => s.subnetId === subnet.subnetId)) {
      throw new ValidationError('CacheInPublicSubnet',
        `the cache must be in a private subnet, but ${props.subnet ? 'subnet' : 'the VPC\'s default selection'} gives ` +
        `${subnet ? `public subnet ${subnet.node.path}` : 'no subnet'}; pass a private or isolated subnet`, this);
    }
    return subnet;
  }

  /** The sizing, and whether it is known at synth time (it is not when capacity or tier is a token). */
  private size(props: LustreDatasetCacheProps, deploymentType: CacheDeploymentType): { sizing: CacheSizing; known: boolean } {
    const capacity = props.storageCapacityGiB;
    const throughput = props.perUnitStorageThroughput;
    const deployTime = (capacity !== undefined && !isResolved(capacity)) || (throughput !== undefined && !isResolved(throughput));
    const datasetBytes = props.datasetSize && !props.datasetSize.isUnresolved()
      ? props.datasetSize.toBytes({ rounding: SizeRoundingBehavior.NONE }) : undefined;
    const rate = deployTime ? undefined : props.readRate?.bytesPerSecond;
    const request = { deploymentType, datasetBytes, readBytesPerSecond: rate };
    const sizing = sizeCache({
      ...request,
      storageCapacityGiB: isResolved(capacity) ? capacity : undefined,
      perUnitStorageThroughput: isResolved(throughput) ? throughput : undefined,
    });
    if (deployTime) return { sizing, known: false };
    const described = `${sizing.storageCapacityGiB} GiB × ${sizing.perUnitStorageThroughput} MB/s/TiB = ` +
      `${formatMBps(sizing.baselineBytesPerSecond)} baseline`;
    if (rate !== undefined && sizing.baselineBytesPerSecond < rate) {
      const fit = sizeCache(request);
      Annotations.of(this).addWarningV2('cdk-training-io:cacheThroughputBelowReadRate',
        `the cache's ${described} cannot feed the ${formatMBps(rate)} the jobs read, so the GPUs wait for data` +
        `${deploymentType === fsx.LustreDeploymentType.SCRATCH_2 ? ' (SCRATCH_2 bursts above its baseline only while its credits last)' : ''}; ` +
        `use storageCapacityGiB: ${fit.storageCapacityGiB}` +
        `${THROUGHPUT_TIERS[deploymentType].configurable ? ` and perUnitStorageThroughput: ${fit.perUnitStorageThroughput}` : ''}, ` +
        'or remove the values you fixed to let the cache size itself');
    } else {
      Annotations.of(this).addInfo(`FSx for Lustre ${deploymentType}: ${described}` +
        `${rate !== undefined ? ` for a read rate of ${formatMBps(rate)}` : ''}`);
    }
    return { sizing, known: true };
  }

  private associate(link: CacheLink, props: LustreDatasetCacheProps): fsx.CfnDataRepositoryAssociation {
    const association = new fsx.CfnDataRepositoryAssociation(this, associationId(link.fileSystemPath), {
      fileSystemId: this.fileSystemId,
      fileSystemPath: link.fileSystemPath,
      dataRepositoryPath: `s3://${link.bucket.bucketName}/${link.prefix}`,
      // Without it only objects created after the association would appear as files.
      batchImportMetaDataOnCreate: true,
      s3: { autoImportPolicy: { events: ['NEW', 'CHANGED', 'DELETED'] } },
      ...(props.importedFileChunkSize ? {
        importedFileChunkSize: props.importedFileChunkSize.toMebibytes({ rounding: SizeRoundingBehavior.NONE }),
      } : {}),
    });
    association.applyRemovalPolicy(props.removalPolicy ?? RemovalPolicy.DESTROY);
    return association;
  }

  private allowReadsOfEncryptedSources(links: CacheLink[], fileSystemKey: kms.IKey | undefined): void {
    const buckets = [...new Set(links.map((link) => link.bucket))];
    for (const bucket of buckets) {
      const key = bucket.encryptionKey;
      if (!key) continue;
      const added = allowFsxToDecrypt(this, key, key === fileSystemKey ? undefined : this.fileSystemId);
      if (added) {
        // The first import starts with the association: the key policy must allow it by then.
        this.associations.forEach((association) => association.node.addDependency(key));
      }
    }
  }
}

/**
 * aws-cdk-lib's LustreFileSystem opens TCP 988–1023 to its own group; Lustre uses only 988 and
 * 1018–1023, so the broad rule is replaced by the two the FSx guide asks for.
 */
function narrowSelfIngress(group: ec2.ISecurityGroup): void {
  const broadRuleId = `from ${group.uniqueId}:${ec2.Port.tcpRange(988, 1023)}`.replace('/', '_');
  group.node.tryRemoveChild(broadRuleId);
  for (const port of LUSTRE_PORTS) {
    group.addIngressRule(group, port, 'Lustre between the file servers of the cache');
  }
}

/** `/` → `RootAssociation`, `/shards` → `ShardsAssociation`. */
function associationId(fileSystemPath: string): string {
  const name = fileSystemPath.split('/').filter(Boolean).map((part) => part[0].toUpperCase() + part.slice(1)).join('');
  return `${name || 'Root'}Association`;
}

function formatMBps(bytesPerSecond: number): string {
  return `${Math.round(bytesPerSecond / 1e6)} MB/s`;
}
