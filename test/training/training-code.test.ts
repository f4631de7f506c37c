import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, DockerImage, Lazy, Stack } from 'aws-cdk-lib';
import { Annotations, Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import * as tar from 'tar';
import type { TrainingCodeConfig } from '../../lib/training/training-code';
import { TrainingCode } from '../../lib/training/training-code';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'training-code');

interface TestStack {
  readonly app: App;
  readonly stack: Stack;
  readonly role: iam.Role;
}

function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function makeStack(): TestStack {
  const app = new App({ outdir: tmpDir('training-code-out-') });
  const stack = new Stack(app, 'Stack');
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') });
  return { app, stack, role };
}

function bind(code: TrainingCode, { stack, role }: TestStack, jobId = 'Job'): TrainingCodeConfig {
  return code._bind(new Construct(stack, jobId), role);
}

interface FileAssetSource {
  readonly path: string;
  readonly packaging: string;
}

/** The code tarballs the synthesized app ships, as absolute paths of the staged files. */
function stagedTarballs(app: App): Array<FileAssetSource & { readonly absolutePath: string }> {
  const assembly = app.synth();
  const tarballs = [];
  for (const file of fs.readdirSync(assembly.directory).filter((name) => name.endsWith('.assets.json'))) {
    const manifest = JSON.parse(fs.readFileSync(path.join(assembly.directory, file), 'utf8'));
    for (const asset of Object.values(manifest.files ?? {}) as Array<{ source: FileAssetSource }>) {
      if (asset.source.path.endsWith('.tar.gz')) {
        tarballs.push({ ...asset.source, absolutePath: path.join(assembly.directory, asset.source.path) });
      }
    }
  }
  return tarballs;
}

function synthTarball(code: TrainingCode): string {
  const env = makeStack();
  bind(code, env);
  const tarballs = stagedTarballs(env.app);
  expect(tarballs).toHaveLength(1);
  return tarballs[0].absolutePath;
}

function entryNames(tarball: string): string[] {
  const names: string[] = [];
  tar.t({ file: tarball, sync: true, onReadEntry: (entry) => names.push(entry.path) });
  return names;
}

function copyFixture(): string {
  const copy = tmpDir('training-code-src-');
  fs.cpSync(FIXTURE, copy, { recursive: true });
  return copy;
}

describe('TrainingCode.fromAsset', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  test('ships the directory as a gzip tarball file asset with relative paths, without Docker', () => {
    // GIVEN
    const dockerRun = jest.spyOn(DockerImage.prototype, 'run');
    // The core module object itself: CDK calls docker through its properties.
    // eslint-disable-next-line @typescript-eslint/consistent-type-imports, @typescript-eslint/no-require-imports -- spied on, so not a namespace copy
    const childProcess: typeof import('child_process') = require('child_process');
    const spawnSync = jest.spyOn(childProcess, 'spawnSync');
    const env = makeStack();

    // WHEN
    const config = bind(TrainingCode.fromAsset(FIXTURE, { program: 'train.py' }), env);
    const [tarball] = stagedTarballs(env.app);

    // THEN
    expect(tarball.packaging).toBe('file');
    const bytes = fs.readFileSync(tarball.absolutePath);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    expect(entryNames(tarball.absolutePath)).toEqual(['lib/util.py', 'train.py']);
    const extracted = tmpDir('training-code-x-');
    tar.x({ file: tarball.absolutePath, cwd: extracted, sync: true });
    for (const file of ['train.py', 'lib/util.py']) {
      expect(fs.readFileSync(path.join(extracted, file), 'utf8')).toBe(fs.readFileSync(path.join(FIXTURE, file), 'utf8'));
    }
    expect(config.program).toBe('train.py');
    expect(dockerRun).not.toHaveBeenCalled();
    expect(spawnSync).not.toHaveBeenCalled();
  });

  test('renders the S3 URL of the tarball (the synthesizer keeps only the last extension: .gz)', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    const config = bind(TrainingCode.fromAsset(FIXTURE, { program: 'train.py' }), env);

    // THEN
    expect(env.stack.resolve(config.s3Uri)).toEqual({
      'Fn::Sub': expect.stringMatching(/^s3:\/\/cdk-[a-z0-9]+-assets-\$\{AWS::AccountId\}-\$\{AWS::Region\}\/[0-9a-f]{64}\.gz$/),
    });
  });

  test('grants the role read on the asset', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    bind(TrainingCode.fromAsset(FIXTURE, { program: 'train.py' }), env);

    // THEN
    const resources = new Capture();
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [Match.objectLike({ Effect: 'Allow', Action: Match.arrayWith(['s3:GetObject*']), Resource: resources })],
      },
    });
    expect(JSON.stringify(resources.asArray())).toContain('cdk-hnb659fds-assets-');
  });

  test('leaves out what exclude matches', () => {
    // WHEN
    const tarball = synthTarball(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', exclude: ['lib'] }));

    // THEN
    expect(entryNames(tarball)).toEqual(['train.py']);
  });

  test('leaves out files matched by a glob in subfolders', () => {
    // GIVEN
    const source = copyFixture();
    fs.mkdirSync(path.join(source, 'lib', '__pycache__'));
    fs.writeFileSync(path.join(source, 'lib', '__pycache__', 'util.cpython-312.pyc'), 'compiled');
    fs.writeFileSync(path.join(source, 'notes.txt'), 'not code');

    // WHEN
    const tarball = synthTarball(TrainingCode.fromAsset(source, { program: 'train.py', exclude: ['__pycache__', '*.txt'] }));

    // THEN
    expect(entryNames(tarball)).toEqual(['lib/util.py', 'train.py']);
  });

  test('is byte-identical across synths, whatever the file times', () => {
    // GIVEN
    const source = copyFixture();
    const first = fs.readFileSync(synthTarball(TrainingCode.fromAsset(source, { program: 'train.py' })));

    // WHEN
    fs.utimesSync(path.join(source, 'train.py'), new Date(2001, 1, 1), new Date(2001, 1, 1));
    const second = fs.readFileSync(synthTarball(TrainingCode.fromAsset(source, { program: 'train.py' })));

    // THEN
    expect(second.equals(first)).toBe(true);
  });

  test('the asset hash follows the shipped sources only', () => {
    // GIVEN
    const source = copyFixture();
    const hashOf = () => path.basename(synthTarball(TrainingCode.fromAsset(source, { program: 'train.py', exclude: ['*.txt'] })));
    const original = hashOf();

    // WHEN
    fs.writeFileSync(path.join(source, 'notes.txt'), 'excluded');
    const afterExcludedChange = hashOf();
    fs.appendFileSync(path.join(source, 'train.py'), '# changed\n');
    const afterSourceChange = hashOf();

    // THEN
    expect(afterExcludedChange).toBe(original);
    expect(afterSourceChange).not.toBe(original);
  });

  test('creates one asset per stack and directory however many jobs bind it', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    const first = bind(TrainingCode.fromAsset(FIXTURE, { program: 'train.py' }), env, 'JobA');
    const second = bind(TrainingCode.fromAsset(FIXTURE, { program: 'lib/util.py' }), env, 'JobB');

    // THEN
    expect(env.stack.resolve(second.s3Uri)).toEqual(env.stack.resolve(first.s3Uri));
    expect(second.program).toBe('lib/util.py');
    expect(env.stack.node.children.filter((child) => child.node.id.startsWith('TrainingIoCode'))).toHaveLength(1);
    expect(stagedTarballs(env.app)).toHaveLength(1);
  });

  test('rejects a program missing from the directory, naming both', () => {
    expect(() => TrainingCode.fromAsset(FIXTURE, { program: 'missing.py' }))
      .toThrow(/TrainingProgramNotFound.*missing\.py.*fixtures[\\/]training-code/);
  });

  test('rejects a program that is a folder', () => {
    expect(() => TrainingCode.fromAsset(FIXTURE, { program: 'lib' })).toThrow(/TrainingProgramNotFound/);
  });

  test('rejects a directory that does not exist', () => {
    expect(() => TrainingCode.fromAsset(path.join(FIXTURE, 'nope'), { program: 'train.py' })).toThrow(/TrainingCodeDirectoryNotFound.*nope/);
  });

  test('rejects a program that exclude leaves out', () => {
    expect(() => TrainingCode.fromAsset(FIXTURE, { program: 'train.py', exclude: ['*.py'] })).toThrow(/TrainingProgramExcluded/);
  });

  test.each(['', '../train.py', '/abs/train.py', 'lib/../../train.py'])('rejects program %p', (program) => {
    expect(() => TrainingCode.fromAsset(FIXTURE, { program })).toThrow(/InvalidTrainingProgram/);
  });

  test('leaves out by default what is never training code: a CDK app\'s dependencies, output, sources and settings, a repository, virtual environments', () => {
    // GIVEN: train.py in a CDK app's folder, as the custom-model example is copied
    const source = copyFixture();
    const write = (file: string, text = 'x') => {
      fs.mkdirSync(path.dirname(path.join(source, file)), { recursive: true });
      fs.writeFileSync(path.join(source, file), text);
    };
    for (const file of ['node_modules/aws-cdk-lib/index.js', 'node_modules/x/client.py', 'cdk.out/manifest.json', '.git/HEAD', '.venv/lib/site.py',
      'venv/bin/python', 'lib/__pycache__/util.cpython-312.pyc', 'app.ts', 'stack.ts', 'stack.d.ts', 'app.js', 'cdk.json', 'cdk.context.json',
      'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.dev.json']) write(file);
    write('config.yaml');

    // WHEN
    const tarball = synthTarball(TrainingCode.fromAsset(source, { program: 'train.py' }));

    // THEN
    expect(entryNames(tarball)).toEqual(['config.yaml', 'lib/util.py', 'train.py']);
  });

  test('include ships what the defaults leave out, and exclude still leaves out what it matches', () => {
    // GIVEN
    const source = copyFixture();
    fs.writeFileSync(path.join(source, 'hook.js'), 'x');
    fs.writeFileSync(path.join(source, 'stack.ts'), 'x');
    fs.mkdirSync(path.join(source, 'venv'));
    fs.writeFileSync(path.join(source, 'venv', 'keep.py'), 'x');
    fs.writeFileSync(path.join(source, 'venv', 'drop.py'), 'x');

    // WHEN
    const tarball = synthTarball(TrainingCode.fromAsset(source, { program: 'train.py', include: ['*.js', 'venv'], exclude: ['drop.py'] }));

    // THEN
    expect(entryNames(tarball)).toEqual(['hook.js', 'lib/util.py', 'train.py', 'venv/keep.py']);
  });

  test('a program the defaults leave out is refused, and shipped with include', () => {
    // GIVEN
    const source = copyFixture();
    fs.writeFileSync(path.join(source, 'train.js'), 'x');

    // THEN
    expect(() => TrainingCode.fromAsset(source, { program: 'train.js' })).toThrow(/TrainingProgramExcluded.*train\.js.*include/);
    expect(entryNames(synthTarball(TrainingCode.fromAsset(source, { program: 'train.js', include: ['train.js'] })))).toContain('train.js');
  });

  test('warns above 50 MiB of code, naming the largest folders, and not below', () => {
    // GIVEN: 51 MiB of data in data/ (sparse files: no disk written), 1 MiB in weights/
    const source = copyFixture();
    fs.mkdirSync(path.join(source, 'data'));
    fs.mkdirSync(path.join(source, 'weights'));
    fs.writeFileSync(path.join(source, 'data', 'train.bin'), '');
    fs.truncateSync(path.join(source, 'data', 'train.bin'), 51 * 1024 * 1024);
    fs.writeFileSync(path.join(source, 'weights', 'w.bin'), Buffer.alloc(1024 * 1024));
    const envOf = (code: TrainingCode) => {
      const env = makeStack();
      bind(code, env);
      return Annotations.fromStack(env.stack);
    };

    // WHEN
    const large = envOf(TrainingCode.fromAsset(source, { program: 'train.py' }));
    const small = envOf(TrainingCode.fromAsset(source, { program: 'train.py', exclude: ['data'] }));

    // THEN
    large.hasWarning('/Stack/Job', Match.stringLikeRegexp('ships 52\\.0 MiB in 4 files \\(largest: data/ 51\\.0 MiB, weights/ 1\\.0 MiB, .*exclude.*largeTrainingCode'));
    small.hasNoWarning('/Stack/Job', Match.stringLikeRegexp('largeTrainingCode'));
  });

  test('skips the program checks for a token', () => {
    // GIVEN
    const program = Lazy.string({ produce: () => 'missing.py' });

    // THEN
    expect(() => TrainingCode.fromAsset(FIXTURE, { program })).not.toThrow();
  });
});

describe('TrainingCode.fromAsset with includeReaders', () => {
  const READERS = path.join(__dirname, '..', '..', 'container', 'shardio');
  const PACKAGE_VERSION: string = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')).version;

  /** The package's reader files and its py.typed as the tarball holds them: `shardio/<file>`, sorted, nothing compiled. */
  function readerEntries(): string[] {
    return fs.readdirSync(READERS, { recursive: true, encoding: 'utf8' })
      .filter((name) => (name.endsWith('.py') || name === 'py.typed') && !name.split(path.sep).includes('__pycache__'))
      .map((name) => `shardio/${name.split(path.sep).join('/')}`).sort();
  }

  /** A copy of the fixture with a `shardio/__init__.py` of its own holding `init`. */
  function fixtureWithOwnReaders(init: string): string {
    const source = copyFixture();
    fs.mkdirSync(path.join(source, 'shardio'));
    fs.writeFileSync(path.join(source, 'shardio', '__init__.py'), init);
    fs.writeFileSync(path.join(source, 'shardio', 'extra.py'), '# only in the user\'s copy\n');
    return source;
  }

  test('ships the package\'s shardio/ beside the code in the one tarball, file for file', () => {
    // WHEN
    const tarball = synthTarball(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', includeReaders: true }));

    // THEN
    expect(entryNames(tarball)).toEqual(['lib/util.py', ...readerEntries(), 'train.py']);
    const extracted = tmpDir('training-code-readers-x-');
    tar.x({ file: tarball, cwd: extracted, sync: true });
    for (const entry of readerEntries()) {
      expect(fs.readFileSync(path.join(extracted, entry))).toEqual(fs.readFileSync(path.join(READERS, path.relative('shardio', entry))));
    }
  });

  test('the script the toolkit runs imports shardio from the tarball, with no PYTHONPATH and no install', () => {
    // GIVEN: a script that says where its shardio comes from
    const source = copyFixture();
    fs.writeFileSync(path.join(source, 'where.py'), 'import shardio\nprint(shardio.__version__, shardio.__file__)\n');
    const tarball = synthTarball(TrainingCode.fromAsset(source, { program: 'where.py', includeReaders: true }));
    const extracted = tmpDir('training-code-readers-run-');
    tar.x({ file: tarball, cwd: extracted, sync: true });

    // WHEN: as the toolkit runs it (python <program> in the code folder); -E -s: no PYTHONPATH, no user site
    const run = spawnSync('/usr/bin/python3', ['-E', '-s', '-B', 'where.py'], { cwd: extracted, encoding: 'utf8' });

    // THEN
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(`${PACKAGE_VERSION} ${path.join(fs.realpathSync(extracted), 'shardio', '__init__.py')}`);
  });

  test('is byte-identical across synths', () => {
    // GIVEN
    const first = fs.readFileSync(synthTarball(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', includeReaders: true })));

    // WHEN
    const second = fs.readFileSync(synthTarball(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', includeReaders: true })));

    // THEN
    expect(second.equals(first)).toBe(true);
  });

  test('is another asset than the same directory without the readers', () => {
    // GIVEN
    const env = makeStack();

    // WHEN
    const withReaders = bind(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', includeReaders: true }), env, 'JobA');
    const without = bind(TrainingCode.fromAsset(FIXTURE, { program: 'train.py' }), env, 'JobB');

    // THEN
    expect(env.stack.resolve(withReaders.s3Uri)).not.toEqual(env.stack.resolve(without.s3Uri));
    expect(stagedTarballs(env.app).map((tarball) => entryNames(tarball.absolutePath).length).sort()).toEqual([2, 2 + readerEntries().length]);
  });

  test('publishes the readers\' metric lines unless told otherwise; none without the readers', () => {
    const reference = TrainingCode.reference().metricDefinitions;
    expect(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', includeReaders: true }).metricDefinitions).toEqual(reference);
    expect(TrainingCode.fromAsset(FIXTURE, { program: 'train.py', includeReaders: true, metricDefinitions: [] }).metricDefinitions).toEqual([]);
    expect(TrainingCode.fromAsset(FIXTURE, { program: 'train.py' }).metricDefinitions).toEqual([]);
  });

  test('replaces a shardio of the package\'s version in the directory with the package\'s', () => {
    // GIVEN
    const source = fixtureWithOwnReaders(`__version__ = "${PACKAGE_VERSION}"\n`);

    // WHEN
    const tarball = synthTarball(TrainingCode.fromAsset(source, { program: 'train.py', includeReaders: true }));

    // THEN
    expect(entryNames(tarball)).toEqual(['lib/util.py', ...readerEntries(), 'train.py']);
  });

  test.each([
    ['another version', '__version__ = "0.0.1"\n', /ReadersVersionConflict.*readers \S+ as shardio\/.*training-code-src-\w+'.*version 0\.0\.1/],
    ['no version', 'from .util import x\n', /ReadersVersionConflict.*has a shardio of no version/],
  ])('refuses a directory with a shardio of %s, naming the directory and both versions', (_case, init, message) => {
    // GIVEN
    const source = fixtureWithOwnReaders(init);

    // THEN
    expect(() => TrainingCode.fromAsset(source, { program: 'train.py', includeReaders: true })).toThrow(message);
    expect(() => TrainingCode.fromAsset(source, { program: 'train.py', includeReaders: true })).toThrow(PACKAGE_VERSION);
  });

  test('ships a shardio of another version as it is without includeReaders, and accepts it left out by exclude', () => {
    // GIVEN
    const source = fixtureWithOwnReaders('__version__ = "0.0.1"\n');

    // WHEN
    const own = synthTarball(TrainingCode.fromAsset(source, { program: 'train.py' }));
    const replaced = synthTarball(TrainingCode.fromAsset(source, { program: 'train.py', includeReaders: true, exclude: ['shardio'] }));

    // THEN
    expect(entryNames(own)).toEqual(['lib/util.py', 'shardio/__init__.py', 'shardio/extra.py', 'train.py']);
    expect(entryNames(replaced)).toEqual(['lib/util.py', ...readerEntries(), 'train.py']);
  });
});

describe('TrainingCode.reference', () => {
  test('ships container/ (train.py and the shardio package) without the DALI build context, the packaging or compiled files', () => {
    // GIVEN
    const cache = path.join(__dirname, '..', '..', 'container', 'shardio', '__pycache__');
    const made = fs.mkdirSync(cache, { recursive: true });
    const compiled = path.join(cache, 'stale.cpython-312.pyc');
    fs.writeFileSync(compiled, 'compiled');

    try {
      // WHEN
      const code = TrainingCode.reference();
      const names = entryNames(synthTarball(code));

      // THEN
      expect(names).toContain('train.py');
      expect(names).toEqual(expect.arrayContaining(['shardio/__init__.py', 'shardio/torch/dataset.py', 'shardio/dali.py', 'shardio/pipe_mode/pipe.py', 'trainer/loader_choice.py',
      ]));
      expect(names.filter((name) => name.startsWith('dali/') || name.includes('__pycache__') || name.endsWith('.pyc'))).toEqual([]);
      // The readers' packaging (pyproject.toml, setup.py, which SageMaker's toolkit would pip install, and what a wheel build leaves) is not code.
      expect(['pyproject.toml', 'setup.py'].filter((name) => !fs.existsSync(path.join(__dirname, '..', '..', 'container', name)))).toEqual([]);
      expect(names.filter((name) => ['pyproject.toml', 'setup.py'].includes(name) || name.startsWith('build/') || name.includes('.egg-info/'))).toEqual([]);
      expect(code.metricDefinitions.map((m) => m.name)).toEqual(['train:samples_per_second', 'train:data_wait_fraction', 'train:loss', 'val:loss', 'val:accuracy']);
    } finally {
      fs.rmSync(made ?? compiled, { recursive: true });
    }
  });

  test('binds to train.py', () => {
    // WHEN
    const config = bind(TrainingCode.reference(), makeStack());

    // THEN
    expect(config.program).toBe('train.py');
  });
});

describe('TrainingCode.fromBucket', () => {
  test('points at the object and grants read on that key only', () => {
    // GIVEN
    const env = makeStack();
    const bucket = s3.Bucket.fromBucketName(env.stack, 'Bucket', 'code-bucket');

    // WHEN
    const config = bind(TrainingCode.fromBucket(bucket, 'jobs/resnet/sourcedir.tar.gz', 'train.py'), env);

    // THEN
    expect(config).toEqual({ s3Uri: 's3://code-bucket/jobs/resnet/sourcedir.tar.gz', program: 'train.py' });
    const resources = new Capture();
    Template.fromStack(env.stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [Match.objectLike({ Action: Match.arrayWith(['s3:GetObject*']), Resource: resources })],
      },
    });
    expect(JSON.stringify(resources.asArray())).toContain(':s3:::code-bucket/jobs/resnet/sourcedir.tar.gz"');
  });

  test.each(['sourcedir.zip', 'sourcedir.tgz', 'sourcedir.tar', 'code/'])('rejects key %p', (key) => {
    // GIVEN
    const bucket = s3.Bucket.fromBucketName(makeStack().stack, 'Bucket', 'code-bucket');

    // THEN
    expect(() => TrainingCode.fromBucket(bucket, key, 'train.py')).toThrow(/InvalidTrainingCodeKey/);
  });

  test('rejects an invalid program', () => {
    // GIVEN
    const bucket = s3.Bucket.fromBucketName(makeStack().stack, 'Bucket', 'code-bucket');

    // THEN
    expect(() => TrainingCode.fromBucket(bucket, 'sourcedir.tar.gz', '../train.py')).toThrow(/InvalidTrainingProgram/);
  });

  test('skips the key check for a token', () => {
    // GIVEN
    const bucket = s3.Bucket.fromBucketName(makeStack().stack, 'Bucket', 'code-bucket');
    const key = Lazy.string({ produce: () => 'code.zip' });

    // THEN
    expect(() => TrainingCode.fromBucket(bucket, key, 'train.py')).not.toThrow();
  });
});
