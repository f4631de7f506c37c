import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ILocalBundling} from 'aws-cdk-lib';
import { Annotations, AssetHashType, BundlingOutput, DockerImage, FileSystem, IgnoreStrategy, Stack, Token } from 'aws-cdk-lib';
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
   * (e.g. `data/**`, `*.ckpt`), besides what is never training code: `node_modules`, `cdk.out`,
   * `.git`, virtual environments (`.venv`, `venv`), `__pycache__` and `*.pyc`, the CDK app's
   * `*.ts` (and `*.d.ts`) and `*.js`, `cdk.json`, `cdk.context.json`, `package*.json` and
   * `tsconfig*.json`. Ship one of those with `include`.
   *
   * @default - only what is never training code is left out
   */
  readonly exclude?: string[];

  /**
   * Glob patterns of files and folders shipped although the defaults leave them out (e.g.
   * `*.js` for JavaScript the training code runs, or `venv`). `exclude` still leaves out what
   * it matches.
   *
   * @default - none: `node_modules`, `cdk.out`, `.git`, virtual environments, compiled Python
   * and the CDK app's own files are left out
   */
  readonly include?: string[];

  /**
   * The metrics the code prints to its log, which a job running it publishes unless the job sets
   * its own `metricDefinitions`.
   *
   * @default - with `includeReaders`, the lines of the readers' `interval_line` and
   * `validation_line` (samples per second, data wait, loss, validation loss and accuracy); else none
   */
  readonly metricDefinitions?: MetricDefinition[];

  /**
   * Whether the code saves checkpoints to `/opt/ml/checkpoints` and resumes from them, so that a
   * job running it syncs that folder to S3 unless the job sets `enableCheckpoints` itself.
   *
   * @default false
   */
  readonly savesCheckpoints?: boolean;

  /**
   * Whether to ship this package's readers beside the code, so that `import shardio` works in any PyTorch image.
   *
   * The `shardio` Python package (the channel's DataLoader, the resumable position for
   * checkpoints, the metric lines) goes into the tarball as `shardio/` at its root.
   *
   * A `shardio` folder already in the directory is replaced by the package's when its
   * `__version__` is the package's version, and refused otherwise.
   *
   * @default false
   */
  readonly includeReaders?: boolean;
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
      // The DALI Dockerfile is the image's build context, and pyproject.toml and setup.py the readers'
      // packaging, not code (with a setup.py in the code, SageMaker's training toolkit would pip
      // install it); compiled files differ per machine.
      exclude: ['dali', 'pyproject.toml', 'setup.py', 'build', '*.egg-info', ...COMPILED_PYTHON],
      metricDefinitions: READER_METRICS,
      savesCheckpoints: true,
    });
  }

  /**
   * A local directory, packed at synth time into a deterministic `sourcedir.tar.gz` file asset,
   * with this package's readers (`shardio/`) beside its files where `includeReaders` is set.
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
   * The local files the code ships, read for what they need from the network; undefined when the code is in S3.
   *
   * @internal
   */
  public _sourceFiles(): TrainingCodeFiles | undefined {
    return undefined;
  }
}

/**
 * The files of a local code directory that its tarball ships.
 *
 * @internal
 */
export interface TrainingCodeFiles {
  /** The absolute path of the directory. */
  readonly directory: string;
  /** Sorted POSIX paths relative to `directory`. */
  readonly files: string[];
}

/**
 * What code using the readers prints every interval (shardio/epoch/metrics.py `interval_line`):
 * `epoch=0 step=100 samples/s=1234.5 data_wait=0.123 loss=2.3456`, and after each epoch with a
 * validation channel (`validation_line`): `epoch=0 step=500 val_loss=2.3456 val_accuracy=0.4567`.
 */
const READER_METRICS: MetricDefinition[] = [
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

/** What Python compiles next to the sources: it differs per machine and is never shipped. */
const COMPILED_PYTHON = ['__pycache__', '*.pyc'];

/**
 * What `fromAsset` leaves out unless `include` names it: a CDK app's folder (the usual place
 * of the script) holds its dependencies, its output and its own sources, none of it training
 * code; shipped, they made a 73 MB tarball of 2,329 files for a 5 kB script.
 */
const NOT_TRAINING_CODE = [
  'node_modules', 'cdk.out', '.git', '.venv', 'venv', ...COMPILED_PYTHON,
  '*.ts', '*.js', 'cdk.json', 'cdk.context.json', 'package*.json', 'tsconfig*.json',
];

/** Above this, a code tarball is likely to hold data or dependencies: uploaded at every change, downloaded by every instance. */
const LARGE_CODE_BYTES = 50 * 1024 * 1024;

/** The readers' folder in the tarball, where `import shardio` finds them (the script's folder is on sys.path). */
const READERS_FOLDER = 'shardio';

/**
 * Required by `BundlingOptions` but never run: local bundling always succeeds, so CDK never
 * falls back to Docker. A small public image keeps the asset hash stable if it ever did.
 */
const UNUSED_BUNDLING_IMAGE = DockerImage.fromRegistry('public.ecr.aws/docker/library/alpine');

class AssetTrainingCode extends TrainingCode {
  public readonly metricDefinitions: MetricDefinition[];
  public readonly savesCheckpoints: boolean;
  private readonly directory: string;
  /** The defaults, then `include` as negated patterns, then `exclude`: the last pattern that matches decides. */
  private readonly exclude: string[];
  /** `container/shardio` of this package, shipped as `shardio/`; undefined without `includeReaders`. */
  private readonly readers?: string;
  private listedFiles?: string[];

  constructor(directory: string, private readonly options: TrainingCodeOptions) {
    super();
    this.directory = path.resolve(directory);
    this.exclude = [...NOT_TRAINING_CODE, ...(options.include ?? []).map((pattern) => `!${pattern}`), ...(options.exclude ?? [])];
    this.readers = options.includeReaders ? containerDirectory('readers') : undefined;
    this.metricDefinitions = options.metricDefinitions ?? (this.readers ? READER_METRICS : []);
    this.savesCheckpoints = options.savesCheckpoints ?? false;
    validateDirectory(this.directory);
    validateProgram(options.program);
    validateProgramInDirectory(this.directory, options.program, this.exclude);
    if (this.readers) {
      validateNoOtherReaders(this.directory, this.exclude, this.readers);
    }
  }

  public _sourceFiles(): TrainingCodeFiles | undefined {
    return { directory: this.directory, files: this.ownFiles() };
  }

  public _bind(scope: Construct, grantee: iam.IGrantable): TrainingCodeConfig {
    const stack = Stack.of(scope);
    const largeWarning = largeCodeWarning(this.directory, this.ownFiles());
    if (largeWarning) {
      Annotations.of(scope).addWarningV2('cdk-training-io:largeTrainingCode', largeWarning);
    }
    // The user's patterns name the asset, as before the defaults existed: the same code keeps its construct id.
    const userPatterns = this.options.include?.length ? [this.options.exclude ?? [], this.options.include] : [this.options.exclude ?? []];
    const key = this.readers ? [this.directory, ...userPatterns, READERS_FOLDER] : [this.directory, ...userPatterns];
    const id = `TrainingIoCode${crypto.createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16)}`;
    const asset = (stack.node.tryFindChild(id) as s3_assets.Asset | undefined) ?? new s3_assets.Asset(stack, id, {
      path: this.directory,
      exclude: this.exclude,
      // The source hash covers the directory only: with the readers, a hash of both.
      ...(this.readers ? { assetHashType: AssetHashType.CUSTOM, assetHash: this.sourceHashWithReaders(this.readers) } : { assetHashType: AssetHashType.SOURCE }),
      bundling: {
        image: UNUSED_BUNDLING_IMAGE,
        local: tarballBundler(this.tarballSources()),
        outputType: BundlingOutput.ARCHIVED,
      },
    });
    // Asset.grantRead opens the whole staging bucket; the job needs its one tarball.
    asset.bucket.grantRead(grantee, asset.s3ObjectKey);
    return { s3Uri: asset.s3ObjectUrl, program: this.options.program };
  }

  private sourceHashWithReaders(readers: string): string {
    return crypto.createHash('sha256')
      .update(FileSystem.fingerprint(this.directory, { exclude: this.exclude }))
      .update(FileSystem.fingerprint(readers, { exclude: COMPILED_PYTHON }))
      .digest('hex');
  }

  /** The directory's files that are shipped, listed once. */
  private ownFiles(): string[] {
    this.listedFiles ??= listFiles(this.directory, this.exclude);
    return this.listedFiles;
  }

  /** The directory's files and, with the readers, theirs under `shardio/` in place of any the directory has. */
  private tarballSources(): TarballSource[] {
    if (!this.readers) {
      return [{ directory: this.directory, files: this.ownFiles() }];
    }
    const ownFiles = this.ownFiles().filter((file) => !file.startsWith(`${READERS_FOLDER}/`));
    const readerFiles = listFiles(this.readers, COMPILED_PYTHON);
    return [
      { directory: this.directory, files: ownFiles },
      { directory: this.readers, files: readerFiles, under: READERS_FOLDER },
    ];
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

/** Files of one local folder that go into the tarball, under a folder of it or at its root. */
interface TarballSource {
  readonly directory: string;
  /** Sorted POSIX paths relative to `directory` (`listFiles`). */
  readonly files: string[];
  /** @default - the tarball's root */
  readonly under?: string;
}

/**
 * Writes the tarball synchronously in-process. The bundler holds the sources in a closure
 * rather than a field: CDK hashes the bundling options as JSON, and an absolute path there
 * would make the asset hash differ between machines.
 *
 * tar takes its entries relative to one folder: files of several sources are first copied into
 * one temporary folder, links kept as links.
 */
function tarballBundler(sources: TarballSource[]): ILocalBundling {
  return {
    tryBundle(outputDir: string): boolean {
      const options = { sync: true, gzip: true, file: path.join(outputDir, TARBALL_NAME), portable: true, mtime: new Date(0), noDirRecurse: true } as const;
      if (sources.length === 1 && sources[0].under === undefined) {
        tar.c({ ...options, cwd: sources[0].directory }, sources[0].files);
        return true;
      }
      const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'training-io-code-'));
      try {
        const entries: string[] = [];
        for (const source of sources) {
          for (const file of source.files) {
            const entry = source.under ? `${source.under}/${file}` : file;
            fs.mkdirSync(path.dirname(path.join(staging, entry)), { recursive: true });
            fs.cpSync(path.join(source.directory, file), path.join(staging, entry), { verbatimSymlinks: true });
            entries.push(entry);
          }
        }
        tar.c({ ...options, cwd: staging }, entries.sort(byCodePoint));
      } finally {
        fs.rmSync(staging, { recursive: true, force: true });
      }
      return true;
    },
  };
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
  return files.sort(byCodePoint);
}

/**
 * A warning when the shipped files pass {@link LARGE_CODE_BYTES}, naming the largest folders
 * (first level of the directory) that made them so; undefined below.
 */
function largeCodeWarning(directory: string, files: string[]): string | undefined {
  const bytesByFolder = new Map<string, number>();
  let total = 0;
  for (const file of files) {
    const size = fs.lstatSync(path.join(directory, file)).size;
    total += size;
    const slash = file.indexOf('/');
    const folder = slash < 0 ? '(files at the top)' : `${file.slice(0, slash)}/`;
    bytesByFolder.set(folder, (bytesByFolder.get(folder) ?? 0) + size);
  }
  if (total <= LARGE_CODE_BYTES) {
    return undefined;
  }
  const largest = [...bytesByFolder].sort((a, b) => b[1] - a[1]).slice(0, 3)
    .map(([folder, bytes]) => `${folder} ${megabytes(bytes)}`).join(', ');
  return `the training code in '${directory}' ships ${megabytes(total)} in ${files.length} files (largest: ${largest}), `
    + `over ${megabytes(LARGE_CODE_BYTES)}: it is uploaded at every change and downloaded by every instance before training; `
    + 'leave data, checkpoints and dependencies out with exclude (read data from a channel, install packages in the image)';
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
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
    throw new ValidationError('TrainingProgramExcluded', `program '${program}' is matched by exclude [${exclude.join(', ')}] and would not be shipped: `
      + 'ship it with include');
  }
}

/**
 * The readers `includeReaders` ships replace a `shardio` folder of the directory: only one of the
 * same version, whose code is the package's.
 */
function validateNoOtherReaders(directory: string, exclude: string[], readers: string): void {
  const own = path.join(directory, READERS_FOLDER);
  if (!fs.existsSync(own) || IgnoreStrategy.fromCopyOptions({ exclude }, directory).completelyIgnores(own)) {
    return;
  }
  const ownVersion = readersVersion(own);
  const shippedVersion = readersVersion(readers);
  if (ownVersion !== shippedVersion) {
    throw new ValidationError('ReadersVersionConflict', `includeReaders ships the readers ${shippedVersion} as shardio/, but directory `
      + `'${directory}' has a shardio of ${ownVersion === undefined ? 'no version (no __version__ in its __init__.py)' : `version ${ownVersion}`}: `
      + 'remove it from the directory (or leave it out with exclude) to use the package\'s, or set includeReaders to false to ship your own');
  }
}

/** `__version__` of a shardio folder's `__init__.py`; undefined where there is none. */
function readersVersion(folder: string): string | undefined {
  const init = path.join(folder, '__init__.py');
  if (!fs.existsSync(init) || !fs.statSync(init).isFile()) {
    return undefined;
  }
  return /^__version__\s*=\s*["']([^"']+)["']/m.exec(fs.readFileSync(init, 'utf8'))?.[1];
}

function validateTarballKey(key: string): void {
  if (!Token.isUnresolved(key) && !key.endsWith('.tar.gz')) {
    throw new ValidationError('InvalidTrainingCodeKey', `key must name a gzip tarball ending in .tar.gz (the toolkit opens it with tarfile mode r:gz), got '${key}'`);
  }
}
