import * as fs from 'fs';
import { isBuiltin } from 'module';
import * as os from 'os';
import * as path from 'path';
import {
  annotations, apiModelProblems, assetProblems, synthesizedStacks, validationViolations,
} from '../support/cloud-assembly';
import { brokenLink, linkedFile, pathReader, relativeLinks } from '../support/markdown';
import type { PackResult} from '../support/npm-package';
import { installOffline, nodeBinFolder, PACKAGE_JSON, packRepository, REPO_ROOT, run } from '../support/npm-package';

/**
 * The published package, as users get it: `npm run build` (tsc, jsii, the handler bundles), the
 * jsii assembly and what is generated from it (API.md, the Python, Java and .NET bindings), the
 * tarball of `npm pack`, and that tarball installed offline into an app outside this repository.
 */

/**
 * The examples synthesized from the installed tarball: docs/pipeline.md's pipeline over an S3 prefix with
 * an FSx cache, and File mode with DALI. Between them they stage every asset of the package (each
 * handler bundle, the container code, the DALI Dockerfile), which a later test checks.
 */
const CONSUMER_APPS = ['pipeline-fsx', 'nvme-file-dali'];

/** The README's offline diagnosis, run from the app that installed the package. */
const DIAGNOSE_OFFLINE = ['training-io', 'diagnose', '--metrics', `node_modules/${PACKAGE_JSON.name}/examples/diagnose/starved/metrics.json`];

/** Debian's Python, with setuptools, wheel and pip from Debian (installed by .ci/run). */
const SYSTEM_PYTHON = '/usr/bin/python3';

/** The handlers scripts/bundle-lambdas.mjs bundles: every lambda/<name>/ with an index.ts. */
const HANDLERS = fs.readdirSync(path.join(REPO_ROOT, 'lambda'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(REPO_ROOT, 'lambda', entry.name, 'index.ts')))
  .map((entry) => entry.name);

const BUILD_TIMEOUT = 10 * 60 * 1000;

/** What scripts/bundle-lambdas.mjs copies next to the packer's bundle for sharp to load on x86_64 Lambda. */
const SHARP_IN_PACKER = ['sharp', '@img/sharp-linux-x64', '@img/sharp-libvips-linux-x64', '@img/colour', 'detect-libc', 'semver'];

let work: string;
let packed: PackResult;
let tarball: string;
let extractedRoot: string | undefined;

/** The tarball's files, extracted once: the folder `package/` of the tarball. */
function extractedPackage(): string {
  if (!extractedRoot) {
    const extracted = path.join(work, 'extracted');
    fs.mkdirSync(extracted);
    run('tar', ['-xzf', tarball, '-C', extracted], { cwd: work });
    extractedRoot = path.join(extracted, 'package');
  }
  return extractedRoot;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'training-io-package-'));
  run('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT });
  packed = packRepository(work);
  tarball = path.join(work, packed.filename);
}, BUILD_TIMEOUT);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

function readAssembly(): any {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, '.jsii'), 'utf8'));
}

describe('jsii', () => {
  test('compiles every export of lib/index.ts into the assembly, and nothing from lib/**/private', () => {
    // GIVEN
    const assembly = readAssembly();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const runtimeExports = Object.keys(require('../../lib'));
    // WHEN
    const types = Object.values<any>(assembly.types);
    // THEN
    const typeNames = types.map((type) => type.name);
    expect(runtimeExports.filter((name) => !typeNames.includes(name))).toEqual([]);
    expect(types.filter((type) => /(^|\/)private\//.test(type.locationInModule.filename)).map((type) => type.fqn)).toEqual([]);
    expect(typeNames.filter((name) => name.startsWith('_'))).toEqual([]);
    expect(assembly.name).toBe(PACKAGE_JSON.name);
    expect(assembly.version).toBe(PACKAGE_JSON.version);
    expect(assembly.dependencies).toEqual(PACKAGE_JSON.peerDependencies);
    expect(Object.keys(assembly.bundled ?? {})).toEqual(PACKAGE_JSON.bundledDependencies);
  });

  test('API.md is the reference jsii-docgen generates from the assembly (`npm run docgen` updates it)', () => {
    // WHEN
    const generated = path.join(work, 'API.md');
    run('npx', ['jsii-docgen', '--output', generated], { cwd: REPO_ROOT });
    // THEN
    expect(firstDifference(fs.readFileSync(path.join(REPO_ROOT, 'API.md'), 'utf8'), fs.readFileSync(generated, 'utf8'))).toBeUndefined();
  });

  test('jsii-pacmak generates the Python, Java and .NET bindings, and the Python wheel builds offline', () => {
    // GIVEN
    const bindings = path.join(work, 'bindings');
    // WHEN: pacmak packs the package itself (npm pack without the prepack build, done above)
    run('npx', ['jsii-pacmak', '--code-only', '--no-npmignore', '--outdir', bindings], {
      cwd: REPO_ROOT, env: { npm_config_ignore_scripts: 'true' },
    });
    // THEN
    const python = path.join(bindings, 'python');
    const module = path.join(python, 'src', PACKAGE_JSON.jsii.targets.python.module);
    run(SYSTEM_PYTHON, ['-m', 'compileall', '-q', module], { cwd: python });
    expect(fs.existsSync(path.join(module, '_jsii', `${PACKAGE_JSON.name}@${PACKAGE_JSON.version}.jsii.tgz`))).toBe(true);
    run(SYSTEM_PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '--wheel-dir', path.join(work, 'wheel'), '.'], {
      cwd: python, env: { PIP_DISABLE_PIP_VERSION_CHECK: '1' },
    });
    expect(fs.readdirSync(path.join(work, 'wheel'))).toEqual([`cdk_training_io-${PACKAGE_JSON.version}-py3-none-any.whl`]);
    expect(fs.readFileSync(path.join(module, '__init__.py'), 'utf8')).toMatch(/^class TrainingJob\(/m);
    expect(listFiles(path.join(bindings, 'java')).some((file) => file.endsWith('/TrainingJob.java'))).toBe(true);
    expect(listFiles(path.join(bindings, 'dotnet')).some((file) => file.endsWith('/TrainingJob.cs'))).toBe(true);
  }, BUILD_TIMEOUT);
});

describe('npm package', () => {
  test('holds the compiled library and its assembly, the handler bundles, container/, picomatch and tar, and no sources, tests or benches', () => {
    // GIVEN
    const files = packed.files.map((file) => file.path);
    const required = [
      'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'API.md', '.jsii',
      'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/lib/private/assets.js',
      'dist/bin/training-io.js', 'dist/lambda/packing/pack.js', 'dist/lambda/packing/parallel/local-shard-worker.js',
      'dist/lambda/diagnosis/diagnose-job.js', 'dist/lambda/io/s3-sink.js', 'dist/lib/contract/shard-limits.js',
      ...HANDLERS.flatMap((handler) => [`lambda/dist/${handler}/index.js`, `lambda/dist/${handler}/crc32.linux-x64-gnu.node`]),
      'container/train.py', 'container/shardio/__init__.py', 'container/dali/Dockerfile', 'container/pyproject.toml',
      // The readers' wheel builds from the package's container/: setup.py keeps its build out of the folder, py.typed types it.
      'container/setup.py', 'container/shardio/py.typed',
      'node_modules/tar/package.json', 'node_modules/picomatch/package.json',
      // What the README links to: the docs, the examples (sources only) and the architecture.
      'ARCHITECTURE.md', 'docs/package.md', 'examples/README.md', 'examples/pipeline-fsx/stack.ts', 'examples/custom-model/train.py',
      'examples/diagnose/starved/metrics.json',
      // The packer's image preprocessing: sharp, its linux-x64 binary and libvips, beside the bundle that loads them.
      ...SHARP_IN_PACKER.map((name) => `lambda/dist/shard-packer/node_modules/${name}/package.json`),
    ];
    // THEN
    expect(required.filter((file) => !files.includes(file))).toEqual([]);
    const unwanted = files.filter((file) =>
      (file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.startsWith('examples/'))
      || /^examples\/(.*\/)?(cdk\.out|node_modules)\//.test(file) || /^examples\/.*\.(js|d\.ts)$/.test(file)
      || /^(test|bench|scripts|bin|lib)\//.test(file)
      || /^dist\/(bench|test|examples)\//.test(file)
      || /^dist\/bin\/(app|reference-stack)\./.test(file)
      || (/^dist\/lambda\//.test(file) && !/^dist\/lambda\/(packing|diagnosis|io)\//.test(file))
      || (/^lambda\//.test(file) && !/^lambda\/dist\//.test(file))
      || /(__pycache__|\.pyc$|tsbuildinfo|tsconfig)/.test(file)
      || /^container\/(build\/|[^/]+\.egg-info\/)/.test(file));
    expect(unwanted).toEqual([]);
    const bundledTops = new Set(files.filter((file) => file.startsWith('node_modules/')).map((file) => file.split('/').slice(1, file.split('/')[1].startsWith('@') ? 3 : 2).join('/')));
    expect([...bundledTops].filter((name) => !packed.bundled.includes(name))).toEqual([]);
    // About 20 MB of it is sharp's libvips for linux-x64, in the packer's bundle.
    expect(packed.unpackedSize).toBeLessThan(40 * 1024 * 1024);
  });

  test('every relative link of the packed README and docs/, and of the pages they lead to, resolves inside the package', () => {
    // GIVEN
    const root = extractedPackage();
    const readPage = pathReader(root);
    const pending = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const checked = new Set<string>();
    const broken: string[] = [];
    // WHEN: every link of each page, and each Markdown page of the package a link leads to (a folder's README.md, as GitHub shows it)
    while (pending.length > 0) {
      const page = pending.shift()!;
      if (checked.has(page)) continue;
      checked.add(page);
      for (const link of relativeLinks(page, readPage(page)!)) {
        const why = brokenLink(link, readPage);
        const target = linkedFile(link);
        if (why !== undefined) broken.push(`${page}:${link.line}: ${why}`);
        else if (target.endsWith('.md')) pending.push(target);
        else if (fs.statSync(path.join(root, target)).isDirectory() && readPage(path.posix.join(target, 'README.md'))) pending.push(path.posix.join(target, 'README.md'));
      }
    }
    // THEN
    expect(broken).toEqual([]);
    expect([...checked]).toEqual(expect.arrayContaining(['README.md', 'docs/package.md', 'ARCHITECTURE.md', 'CHANGELOG.md', 'examples/README.md', 'examples/diagnose/README.md']));
  });

  test('depends on aws-cdk-lib and constructs as peers only, bundles picomatch and tar, and leaves the handlers\' dependencies out', () => {
    // GIVEN
    const manifest = JSON.parse(run('tar', ['-xOzf', tarball, 'package/package.json'], { cwd: work }).stdout);
    // THEN
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    expect(manifest.dependencies).toEqual({ picomatch: expect.any(String), tar: expect.any(String) });
    expect(manifest.bundledDependencies).toEqual(['picomatch', 'tar']);
    const installed = { ...manifest.dependencies, ...manifest.optionalDependencies, ...manifest.peerDependencies };
    expect(Object.keys(installed).filter((name) => name.startsWith('@aws-lambda-powertools/'))).toEqual([]);
  });

  test('the constructs load nothing but Node.js, the peers and the bundled dependencies; the optional dependencies are the command line\'s', () => {
    // GIVEN
    const root = extractedPackage();
    // WHEN
    const library = requiredPackages(path.join(root, 'dist', 'lib'));
    const commandLine = new Set([...requiredPackages(path.join(root, 'dist', 'bin')), ...requiredPackages(path.join(root, 'dist', 'lambda'))]);
    // THEN
    const allowed = [...Object.keys(PACKAGE_JSON.peerDependencies), ...PACKAGE_JSON.bundledDependencies];
    expect([...library].filter((name) => !allowed.includes(name))).toEqual([]);
    expect(Object.keys(PACKAGE_JSON.optionalDependencies).filter((name) => !commandLine.has(name))).toEqual([]);
    expect([...commandLine].filter((name) => !allowed.includes(name) && !(name in PACKAGE_JSON.optionalDependencies))).toEqual([]);
  });
});

describe('installed from the tarball, offline', () => {
  let app: string;
  /** The cloud assemblies the consumer apps synthesized. */
  const synthesized: string[] = [];

  beforeAll(() => {
    app = fs.mkdtempSync(path.join(os.tmpdir(), 'training-io-consumer-'));
    fs.copyFileSync(tarball, path.join(app, packed.filename));
    const versions = PACKAGE_JSON.devDependencies;
    installOffline(app, packed.filename, {
      dependencies: { 'aws-cdk-lib': versions['aws-cdk-lib'], 'constructs': versions.constructs, 'cdk-nag': versions['cdk-nag'] },
      // @types/node: the custom-model example's `npm install --save-dev @types/node`
      devDependencies: { 'aws-cdk': versions['aws-cdk'], 'typescript': versions.typescript, '@types/node': versions['@types/node'] },
    });
  }, BUILD_TIMEOUT);

  afterAll(() => {
    if (app) fs.rmSync(app, { recursive: true, force: true });
  });

  test('resolves the library and its peers inside the app, not in this repository', () => {
    for (const name of [PACKAGE_JSON.name, 'aws-cdk-lib', 'constructs']) {
      expect(require.resolve(name, { paths: [app] }).startsWith(fs.realpathSync(app))).toBe(true);
    }
  });

  test.each(CONSUMER_APPS)('the %s example compiles against the published types and `cdk synth` passes cdk-nag, with every asset staged and the requests the API models accept', (example) => {
    // GIVEN: the example's files, as a user copies them into a CDK app set up as the README's install section says
    const source = path.join(REPO_ROOT, 'examples', example);
    const dir = path.join(app, example);
    fs.mkdirSync(dir);
    for (const file of fs.readdirSync(source).filter((name) => name.endsWith('.ts'))) {
      fs.copyFileSync(path.join(source, file), path.join(dir, file));
    }
    for (const [file, text] of Object.entries(readmeAppFiles())) fs.writeFileSync(path.join(dir, file), text);
    // WHEN: cdk.json's app compiles with the app's TypeScript 5, then runs the app
    const outdir = path.join(dir, 'cdk.out');
    run('npx', ['--offline', 'cdk', 'synth', '--output', outdir, '--no-notices', '--quiet'], { cwd: dir });
    // THEN
    expect(validationViolations(outdir)).toEqual([]);
    expect(annotations(outdir)).toEqual([]);
    expect(assetProblems(outdir)).toEqual([]);
    const stacks = synthesizedStacks(outdir);
    expect(stacks.length).toBeGreaterThan(0);
    expect(stacks.flatMap(apiModelProblems)).toEqual([]);
    synthesized.push(outdir);
  }, BUILD_TIMEOUT);

  test('the custom-model example, copied into the app\'s own folder as examples/README.md says, ships its train.py and the readers only', () => {
    // GIVEN: examples/README.md's copy, run in the app's folder beside node_modules; the tarball the app was
    // installed from is not in a user's app
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'examples', 'README.md'), 'utf8');
    const copy = 'cp node_modules/cdk-training-io/examples/custom-model/{*.ts,train.py} .';
    expect(readme).toContain(copy);
    expect(readme).toContain('npm install --save-dev @types/node');
    fs.renameSync(path.join(app, packed.filename), path.join(work, `installed-${packed.filename}`));
    run('bash', ['-c', copy], { cwd: app });
    for (const [file, text] of Object.entries(readmeAppFiles())) fs.writeFileSync(path.join(app, file), text);
    // WHEN
    const outdir = path.join(app, 'cdk.out');
    run('npx', ['--offline', 'cdk', 'synth', '--output', outdir, '--no-notices', '--quiet'], { cwd: app });
    // THEN: no warning (no missingVpcEndpoint from node_modules' code), and a code tarball under 1 MB of train.py and shardio/
    expect(validationViolations(outdir)).toEqual([]);
    expect(annotations(outdir)).toEqual([]);
    expect(assetProblems(outdir)).toEqual([]);
    const codeTarballs = fs.readdirSync(outdir).filter((name) => name.endsWith('.tar.gz')).map((name) => path.join(outdir, name));
    expect(codeTarballs).toHaveLength(1);
    expect(fs.statSync(codeTarballs[0]).size).toBeLessThan(1024 * 1024);
    const entries = run('tar', ['-tzf', codeTarballs[0]], { cwd: app }).stdout.trim().split('\n');
    expect(entries.filter((entry) => !entry.startsWith('shardio/'))).toEqual(['train.py']);
    expect(entries).toContain('shardio/__init__.py');
    synthesized.push(outdir);
  }, BUILD_TIMEOUT);

  test('on Node.js 24 too, the same installed app synthesizes the same templates', () => {
    // GIVEN: Node.js 24 first on PATH (from the npm registry, kept between runs: scripts/node-binary.mjs)
    const dir = path.join(app, CONSUMER_APPS[0]);
    const env = { PATH: `${nodeBinFolder(24)}${path.delimiter}${process.env.PATH}` };
    expect(run('node', ['--version'], { cwd: dir, env }).stdout).toMatch(/^v24\./);
    // WHEN
    const outdir = path.join(dir, 'cdk.out.node24');
    run('npx', ['--offline', 'cdk', 'synth', '--output', outdir, '--no-notices', '--quiet'], { cwd: dir, env });
    // THEN: the same resources; CDKMetadata's analytics differ, as they record the Node.js version
    const templates = (folder: string) => fs.readdirSync(folder).filter((name) => name.endsWith('.template.json')).sort();
    const resources = (file: string) => {
      const { CDKMetadata: _analytics, ...rest } = JSON.parse(fs.readFileSync(file, 'utf8')).Resources;
      return rest;
    };
    const earlier = path.join(dir, 'cdk.out');
    expect(templates(outdir)).toEqual(templates(earlier));
    expect(templates(earlier).length).toBeGreaterThan(0);
    for (const template of templates(earlier)) {
      expect(resources(path.join(outdir, template))).toEqual(resources(path.join(earlier, template)));
    }
  }, BUILD_TIMEOUT);

  test('the apps staged every asset path of the package: each handler bundle, the container code tarball, the DALI Dockerfile', () => {
    // GIVEN
    const packageRoot = path.join(app, 'node_modules', PACKAGE_JSON.name);
    const staged = synthesized.flatMap((outdir) => fs.readdirSync(outdir).map((name) => path.join(outdir, name)));
    // THEN: every Lambda code asset is one of the package's bundles, with its native addon, and every bundle is used
    const lambdaAssets = staged.filter((asset) => fs.existsSync(path.join(asset, 'crc32.linux-x64-gnu.node')));
    const bundleOf = (asset: string) => HANDLERS.find((handler) =>
      fs.readFileSync(path.join(packageRoot, 'lambda', 'dist', handler, 'index.js')).equals(fs.readFileSync(path.join(asset, 'index.js'))));
    expect(lambdaAssets.map((asset) => bundleOf(asset) ?? `${asset}: not a bundle of the package`).filter((v, i, all) => all.indexOf(v) === i).sort())
      .toEqual([...HANDLERS].sort());
    // The reference code tarball holds the package's container/ code, without the DALI build context.
    const codeTarballs = staged.filter((asset) => asset.endsWith('.tar.gz'));
    expect(codeTarballs.length).toBeGreaterThan(0);
    for (const codeTarball of codeTarballs) {
      const entries = run('tar', ['-tzf', codeTarball], { cwd: app }).stdout.split('\n');
      expect(entries).toEqual(expect.arrayContaining(['train.py', 'shardio/__init__.py']));
      expect(entries.filter((entry) => entry.startsWith('dali/'))).toEqual([]);
    }
    // The DALI image's build context is the package's container/dali.
    const dockerfile = fs.readFileSync(path.join(packageRoot, 'container', 'dali', 'Dockerfile'));
    expect(staged.some((asset) => fs.existsSync(path.join(asset, 'Dockerfile')) && fs.readFileSync(path.join(asset, 'Dockerfile')).equals(dockerfile))).toBe(true);
  });

  test('the installed packer bundle loads its own sharp and resizes a JPEG with it, outside this repository', () => {
    // GIVEN: a 400 × 300 JPEG written by Pillow, and the bundle as the package installed it
    const bundle = path.join(app, 'node_modules', PACKAGE_JSON.name, 'lambda', 'dist', 'shard-packer', 'index.js');
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'training-io-sharp-'));
    const input = path.join(scratch, 'in.jpg');
    const output = path.join(scratch, 'out.jpg');
    run(SYSTEM_PYTHON, ['-c', 'import sys; from PIL import Image; Image.new("RGB", (400, 300), (200, 100, 50)).save(sys.argv[1], "JPEG")', input], { cwd: scratch });
    // WHEN: the handler module is loaded with preprocessing on, and the sharp it resolves resizes the JPEG
    const script = `
      const { createRequire } = require('node:module');
      const [bundle, input, output] = process.argv.slice(1);
      require(bundle);
      const fromBundle = createRequire(bundle);
      const sharp = fromBundle('sharp');
      sharp(input).resize({ width: 64, height: 64, fit: 'outside' }).jpeg({ quality: 90 }).toFile(output)
        .then(() => console.log(JSON.stringify({ sharp: fromBundle.resolve('sharp'), vips: sharp.versions.vips })));`;
    const { stdout } = run(process.execPath, ['-e', script, bundle, input, output], {
      cwd: scratch,
      env: {
        SOURCE_BUCKET: 'raw', DESTINATION_BUCKET: 'packed', SHARD_FORMAT: 'tfrecord', IMAGE_PREPROCESSING: '{"shorterSide":64}',
        AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', POWERTOOLS_LOG_LEVEL: 'SILENT', NODE_PATH: '',
      },
    });
    // THEN: sharp and its libvips came from the bundle's own node_modules, and Pillow reads an 85 × 64 JPEG
    const loaded = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(loaded.sharp.startsWith(path.join(path.dirname(fs.realpathSync(bundle)), 'node_modules', 'sharp'))).toBe(true);
    expect(loaded.vips).toMatch(/^\d+\.\d+\.\d+$/);
    const decoded = run(SYSTEM_PYTHON, ['-c', 'import sys; from PIL import Image; im = Image.open(sys.argv[1]); print(im.format, *im.size)', output], { cwd: scratch });
    expect(decoded.stdout.trim()).toBe('JPEG 85 64');
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  test('the README\'s offline diagnosis runs on the packed examples/diagnose', () => {
    // GIVEN
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`npx ${DIAGNOSE_OFFLINE.join(' ')}`);
    // WHEN
    const { stdout } = run('npx', ['--offline', ...DIAGNOSE_OFFLINE], { cwd: app });
    // THEN
    expect(stdout).toMatch(/^# Training job \S+: Preprocessing-bound \(CPU\)$/m);
  });

  test('npx training-io runs the installed command line', () => {
    const { stdout } = run('npx', ['--offline', 'training-io', '--help'], { cwd: app });
    expect(stdout).toMatch(/^training-io: the command line of cdk-training-io/);
    expect(stdout).toMatch(/^ {2}pack <source> <output>/m);
  });
});

describe('training-io installed on its own (the layout of a global install or npx)', () => {
  let prefix: string;
  let cwd: string;

  beforeAll(() => {
    // Only the tarball: its bundled and optional dependencies and peers, nested under one folder.
    prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'training-io-global-'));
    fs.copyFileSync(tarball, path.join(prefix, packed.filename));
    installOffline(prefix, packed.filename, { dependencies: {} });
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'training-io-cwd-'));
  }, BUILD_TIMEOUT);

  afterAll(() => {
    for (const dir of [prefix, cwd]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the installed bin through its symbolic link, from a folder outside the install, as a shell finds it on PATH. */
  function trainingIo(...args: string[]): string {
    return run(path.join(prefix, 'node_modules', '.bin', 'training-io'), args, { cwd }).stdout;
  }

  test('--version and --help', () => {
    expect(trainingIo('--version').trim()).toBe(PACKAGE_JSON.version);
    expect(trainingIo('--help')).toMatch(/^ {2}verify <dataset>/m);
  });

  test('pack and verify a small folder of files, on the native CRC32C of the installed optional dependency', () => {
    // GIVEN: two classes of three files
    const source = path.join(cwd, 'raw');
    for (const label of ['cats', 'dogs']) {
      fs.mkdirSync(path.join(source, label), { recursive: true });
      for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(source, label, `${i}.jpg`), Buffer.alloc(1000 + i, label));
    }
    // WHEN
    trainingIo('pack', '--content', 'any', 'raw', 'packed', '--format', 'recordio', '--shards', '2');
    // THEN
    const manifest = JSON.parse(fs.readFileSync(path.join(cwd, 'packed', 'manifest.json'), 'utf8'));
    expect(manifest.shards).toHaveLength(2);
    expect(trainingIo('verify', 'packed')).toMatch(/^ok: 2 shards, 6 records/);
  });

  test('instances loads the library with its aws-cdk-lib peer', () => {
    expect(trainingIo('instances')).toMatch(/^ml\.p3dn\.24xlarge +96 /m);
  });
});

/**
 * The files of a consumer app that the README's install section shows: each ` ```json ` block whose
 * preceding line names the file (`` `tsconfig.json`: ``), by file name.
 */
function readmeAppFiles(): Record<string, string> {
  const lines = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').split('\n');
  const files: Record<string, string> = {};
  lines.forEach((line, i) => {
    if (line.trim() !== '```json') return;
    const label = lines.slice(0, i).reverse().find((previous) => previous.trim() !== '');
    const name = /^`([\w.-]+\.json)`/.exec(label ?? '')?.[1];
    const end = lines.findIndex((closing, j) => j > i && closing.trim() === '```');
    if (name && end > i) files[name] = lines.slice(i + 1, end).join('\n');
  });
  expect(Object.keys(files).sort()).toEqual(['cdk.json', 'tsconfig.json']);
  return files;
}

/** Where the committed API.md first differs from a freshly generated one, and what to do; undefined when they are equal. */
function firstDifference(committed: string, generated: string): string | undefined {
  if (committed === generated) return undefined;
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line < 0 ? a.length : line;
  return `API.md is stale at line ${at + 1} (committed: ${JSON.stringify(a[at])}, generated: ${JSON.stringify(b[at])}): `
    + 'run `npm run docgen` and commit API.md';
}

/** The packages (not Node.js built-ins, not relative paths) the JavaScript files under `directory` require. */
function requiredPackages(directory: string): Set<string> {
  const names = new Set<string>();
  for (const file of listFiles(directory).filter((name) => name.endsWith('.js'))) {
    for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(/\brequire\(["']([^"'.][^"']*)["']\)/g)) {
      if (specifier.startsWith('node:') || isBuiltin(specifier)) continue;
      const parts = specifier.split('/');
      names.add(parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
    }
  }
  return names;
}

function listFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}
