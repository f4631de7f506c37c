import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { ILocalBundling} from 'aws-cdk-lib';
import { AssetHashType, BundlingOutput, DockerImage, IgnoreStrategy, Stack, Token } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3_assets from 'aws-cdk-lib/aws-s3-assets';
import type { Construct } from 'constructs';
import * as tar from 'tar';
import type { MetricDefinition } from './metric-definition';
import { LOADER_METRICS } from '../contract/metric-names';
import { containerDirectory } from '../private/assets';
import { ValidationError } from '../private/errors';
import { isResolved } from '../private/validation';

/**
 * Where a training job finds its code, as the sagemaker-training toolkit's hyperparameters.
 *
 * @internal
 */
export interface TrainingCodeConfig {
  /** `sagemaker_submit_directory`: S3 URL of a gzip tarball of the code directory. */
  readonly s3Uri: string;
  /** `sagemaker_program`: the script to run, relative to the code directory. */
  readonly program: string;
}

/**
 * Options for training code shipped from a local directory.
 */
export interface TrainingCodeOptions {
  /**
   * The script the toolkit runs (`sagemaker_program`), relative to the directory, e.g. `train.py`.
   */
  readonly program: string;

  /**
   * Glob patterns of files and folders left out of the tarball, as for CDK assets
   * (e.g. `__pycache__`, `*.pyc`, `data/**`).
   *
   * @default - every file of the directory is shipped
   */
  readonly exclude?: string[];

  /**
   * The metrics the code prints to its log, which a job running it publishes unless the job sets
   * its own `metricDefinitions`.
   *
   * @default - none
   */
  readonly metricDefinitions?: MetricDefinition[];

  /**
   * Whether the code saves checkpoints to `/opt/ml/checkpoints` and resumes from them, so that a
   * job running it syncs that folder to S3 unless the job sets `enableCheckpoints` itself.
   *
   * @default false
   */
  readonly savesCheckpoints?: boolean;
}

/**
 * The training script directory of a job run by the sagemaker-training toolkit: shipped as the
 * `sagemaker_submit_directory` gzip tarball, with `sagemaker_program` as the script to run.
 *
 * The toolkit opens the submit directory with `tarfile.open(mode="r:gz")`: a zip (the format of
 * CDK directory assets) does not work.
 *
 * @see https://github.com/aws/sagemaker-training-toolkit
 */
export abstract class TrainingCode {
  /**
   * The library's reference training code (`container/` of this package): the `shardio` shard
   * readers, the PyTorch DataLoader and DALI pipeline over packed shards, and `train.py`, which
   * trains a torchvision ResNet and prints the samples per second and the fraction of time spent
   * waiting for data every interval. Its metric definitions publish those lines.
   *
   * The default code of a job on `TrainingContainer.pytorch()` or `TrainingContainer.dali()`.
   */
  public static reference(): TrainingCode {
    return new AssetTrainingCode(containerDirectory('code'), {
      program: 'train.py',
      // The DALI Dockerfile is the image's build context, not code; compiled files differ per machine.
      exclude: ['dali', '__pycache__', '*.pyc'],
      metricDefinitions: REFERENCE_METRICS,
      savesCheckpoints: true,
    });
  }

  /**
   * A local directory, packed at synth time into a deterministic `sourcedir.tar.gz` file asset.
   *
   * Packing runs in-process: no Docker is needed, and the same files give the same bytes
   * (sorted entries, mtime 0, no owner information).
   */
  public static fromAsset(directory: string, options: TrainingCodeOptions): TrainingCode {
    return new AssetTrainingCode(directory, options);
  }

  /**
   * A gzip tarball already in S3; the job's role is granted read on that one object.
   *
   * @param key object key of the tarball, ending in `.tar.gz`
   * @param program the script the toolkit runs, relative to the tarball's root
   */
  public static fromBucket(bucket: s3.IBucket, key: string, program: string): TrainingCode {
    return new BucketTrainingCode(bucket, key, program);
  }

  /**
   * The metrics the code prints, published by a job that sets no `metricDefinitions` of its own.
   */
  public abstract readonly metricDefinitions: MetricDefinition[];

  /**
   * Whether the code saves and resumes from `/opt/ml/checkpoints` (a job then enables checkpoints by default).
   */
  public abstract readonly savesCheckpoints: boolean;

  /**
   * Stages the code in the scope's stack and grants the grantee read on it.
   *
   * @internal
   */
  public abstract _bind(scope: Construct, grantee: iam.IGrantable): TrainingCodeConfig;

  /**
   * The local directory of the code, read for what it needs from the network; undefined when the code is in S3.
   *
   * @internal
   */
  public _sourceDirectory(): string | undefined {
    return undefined;
  }
}

/**
 * What `container/train.py` prints every interval (shardio/metrics.py `interval_line`):
 * `epoch=0 step=100 samples/s=1234.5 data_wait=0.123 loss=2.3456`, and after each epoch with a
 * validation channel (`validation_line`): `epoch=0 step=500 val_loss=2.3456 val_accuracy=0.4567`.
 */
const REFERENCE_METRICS: MetricDefinition[] = [
  { name: LOADER_METRICS.samplesPerSecond, regex: 'samples/s=([0-9.]+)' },
  { name: LOADER_METRICS.dataWaitFraction, regex: 'data_wait=([0-9.]+)' },
  { name: 'train:loss', regex: ' loss=([0-9.]+)' },
  { name: 'val:loss', regex: 'val_loss=([0-9.]+)' },
  { name: 'val:accuracy', regex: 'val_accuracy=([0-9.]+)' },
];

/**
 * Name of the tarball in the bundling output. The staged file keeps `.tar.gz`; the S3 object key
 * ends in `.gz` only (the synthesizer keeps the last extension), which the toolkit does not mind:
 * it opens whatever it downloads with `tarfile.open(mode="r:gz")`.
 */
const TARBALL_NAME = 'sourcedir.tar.gz';

/**
 * Required by `BundlingOptions` but never run: local bundling always succeeds, so CDK never
 * falls back to Docker. A small public image keeps the asset hash stable if it ever did.
 */
const UNUSED_BUNDLING_IMAGE = DockerImage.fromRegistry('public.ecr.aws/docker/library/alpine');

class AssetTrainingCode extends TrainingCode {
  public readonly metricDefinitions: MetricDefinition[];
  public readonly savesCheckpoints: boolean;
  private readonly directory: string;
  private readonly exclude: string[];

  constructor(directory: string, private readonly options: TrainingCodeOptions) {
    super();
    this.directory = path.resolve(directory);
    this.exclude = options.exclude ?? [];
    this.metricDefinitions = options.metricDefinitions ?? [];
    this.savesCheckpoints = options.savesCheckpoints ?? false;
    validateDirectory(this.directory);
    validateProgram(options.program);
    validateProgramInDirectory(this.directory, options.program, this.exclude);
  }

  public _sourceDirectory(): string | undefined {
    return this.directory;
  }

  public _bind(scope: Construct, grantee: iam.IGrantable): TrainingCodeConfig {
    const stack = Stack.of(scope);
    const id = `TrainingIoCode${crypto.createHash('sha256').update(JSON.stringify([this.directory, this.exclude])).digest('hex').slice(0, 16)}`;
    const asset = (stack.node.tryFindChild(id) as s3_assets.Asset | undefined) ?? new s3_assets.Asset(stack, id, {
      path: this.directory,
      exclude: this.exclude,
      assetHashType: AssetHashType.SOURCE,
      bundling: {
        image: UNUSED_BUNDLING_IMAGE,
        local: tarballBundler(this.directory, this.exclude),
        outputType: BundlingOutput.ARCHIVED,
      },
    });
    // Asset.grantRead opens the whole staging bucket; the job needs its one tarball.
    asset.bucket.grantRead(grantee, asset.s3ObjectKey);
    return { s3Uri: asset.s3ObjectUrl, program: this.options.program };
  }
}

class BucketTrainingCode extends TrainingCode {
  public readonly metricDefinitions: MetricDefinition[] = [];
  public readonly savesCheckpoints = false;

  constructor(private readonly bucket: s3.IBucket, private readonly key: string, private readonly program: string) {
    super();
    validateTarballKey(key);
    validateProgram(program);
  }

  public _bind(_scope: Construct, grantee: iam.IGrantable): TrainingCodeConfig {
    this.bucket.grantRead(grantee, this.key);
    return { s3Uri: this.bucket.s3UrlForObject(this.key), program: this.program };
  }
}

/**
 * Writes the tarball synchronously in-process. The bundler holds the directory in a closure
 * rather than a field: CDK hashes the bundling options as JSON, and an absolute path there
 * would make the asset hash differ between machines.
 */
function tarballBundler(directory: string, exclude: string[]): ILocalBundling {
  return {
    tryBundle(outputDir: string): boolean {
      tar.c(
        { sync: true, gzip: true, file: path.join(outputDir, TARBALL_NAME), cwd: directory, portable: true, mtime: new Date(0), noDirRecurse: true },
        listFiles(directory, exclude),
      );
      return true;
    },
  };
}

/**
 * Files and symbolic links under the directory, as sorted POSIX paths relative to it, skipping
 * what `exclude` matches with the same rules CDK uses to fingerprint the asset.
 */
function listFiles(directory: string, exclude: string[]): string[] {
  const ignore = IgnoreStrategy.fromCopyOptions({ exclude }, directory);
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const absolute = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!ignore.completelyIgnores(absolute)) {
          walk(absolute);
        }
      } else if ((entry.isFile() || entry.isSymbolicLink()) && !ignore.ignores(absolute)) {
        files.push(path.relative(directory, absolute).split(path.sep).join('/'));
      }
    }
  };
  walk(directory);
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function validateDirectory(directory: string): void {
  if (!fs.existsSync(directory) || !fs.statSync(directory).isDirectory()) {
    throw new ValidationError('TrainingCodeDirectoryNotFound', `directory must be an existing directory, got '${directory}'`);
  }
}

function validateProgram(program: string): void {
  if (!isResolved(program)) {
    return;
  }
  const segments = program.split(/[\\/]/);
  if (program.length === 0 || path.isAbsolute(program) || segments.includes('..')) {
    throw new ValidationError('InvalidTrainingProgram', `program must be a non-empty path relative to the code directory without '..', got '${program}'`);
  }
}

function validateProgramInDirectory(directory: string, program: string, exclude: string[]): void {
  if (!isResolved(program)) {
    return;
  }
  const programPath = path.join(directory, program);
  if (!fs.existsSync(programPath) || !fs.statSync(programPath).isFile()) {
    throw new ValidationError('TrainingProgramNotFound', `program '${program}' must be a file in directory '${directory}', but ${programPath} is not`);
  }
  if (IgnoreStrategy.fromCopyOptions({ exclude }, directory).ignores(programPath)) {
    throw new ValidationError('TrainingProgramExcluded', `program '${program}' is matched by exclude [${exclude.join(', ')}] and would not be shipped`);
  }
}

function validateTarballKey(key: string): void {
  if (!Token.isUnresolved(key) && !key.endsWith('.tar.gz')) {
    throw new ValidationError('InvalidTrainingCodeKey', `key must name a gzip tarball ending in .tar.gz (the toolkit opens it with tarfile mode r:gz), got '${key}'`);
  }
}
