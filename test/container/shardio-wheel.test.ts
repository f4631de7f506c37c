import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jpegSourceFolder, packWithCli } from '../support/jpeg-dataset';
import { temporaryFolders } from '../support/local-files';

/**
 * The readers as a Python package (container/pyproject.toml): the wheel pip builds offline from
 * container/ (in place, writing nothing there), installed into a bare virtual environment, reads what the CLI packs.
 */

const REPO = path.resolve(__dirname, '..', '..');
/** Debian's Python, with setuptools, wheel and pip from Debian (installed by .ci/run). */
const SYSTEM_PYTHON = '/usr/bin/python3';
const PACKAGE_VERSION: string = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version;
const CLASSES = ['cat', 'dog', 'fish'];
const FILES = 14;

const folder = temporaryFolders();

/** Runs a command to its end; its stdout. @throws with its output when it exits with another status than 0 */
function run(command: string, args: string[], cwd: string): string {
  // No PYTHONPATH or other PYTHON* variable from the caller: what runs in the venv is what was installed there.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PYTHON')));
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000, env: { ...env, PIP_NO_INDEX: '1' } });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`\`${[command, ...args].join(' ')}\` exited with ${result.status ?? result.signal}:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** What lies in container/ that git does not track (a build's build/ or *.egg-info would), caches of Python left out. */
function untrackedInContainer(): string[] {
  const listed = spawnSync('git', ['ls-files', '--others', '--directory', 'container'], { cwd: REPO, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout.split('\n').filter((line) => line !== '' && !/__pycache__|\.pyc$/.test(line));
}

/** Reads every record of epoch 0 with the standard-library core and prints what it found, as JSON. */
const READ_SCRIPT = `
import hashlib, importlib.util, json, sys
import shardio
from shardio import Placement
from shardio.epoch.stream import consumer_images
from shardio.source.directory import ShardDirectory

directory = ShardDirectory(sys.argv[1])
records = list(consumer_images(directory, Placement(), 0))
print(json.dumps({
    "version": shardio.__version__,
    "file": shardio.__file__,
    "torch": importlib.util.find_spec("torch") is not None,
    "classes": directory.manifest.classes,
    "records": {record.filename: [record.label, hashlib.sha256(record.image).hexdigest()] for record in records},
}))
`;

describe('the readers\' wheel (container/pyproject.toml)', () => {
  test('is the npm package\'s version: shardio.__version__ equals package.json\'s', () => {
    // WHEN
    const printed = run(SYSTEM_PYTHON, ['-B', '-c', 'import shardio; print(shardio.__version__)'], path.join(REPO, 'container'));

    // THEN
    expect(printed.trim()).toBe(PACKAGE_VERSION);
  });

  test('builds offline, installs alone into a bare venv, and reads every record of a dataset the CLI packed', async () => {
    // GIVEN: a dataset packed by `training-io pack`, and a venv without system site-packages
    const work = folder('shardio-wheel');
    const source = path.join(work, 'source');
    const files = jpegSourceFolder(source, FILES, CLASSES);
    const dataset = path.join(work, 'dataset');
    await packWithCli(source, dataset, 'tfrecord', 3);
    const venv = path.join(work, 'venv');
    run(SYSTEM_PYTHON, ['-m', 'venv', venv], work);
    const python = path.join(venv, 'bin', 'python');

    // WHEN
    const wheels = path.join(work, 'wheels');
    const untrackedBefore = untrackedInContainer();
    run(SYSTEM_PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', path.join(REPO, 'container'), '-w', wheels], work);
    const [wheel] = fs.readdirSync(wheels);
    run(python, ['-m', 'pip', 'install', '--no-index', '--no-deps', path.join(wheels, wheel)], work);
    fs.writeFileSync(path.join(work, 'read.py'), READ_SCRIPT);
    const read = JSON.parse(run(python, ['-E', '-s', '-B', 'read.py', dataset], work));

    // THEN
    expect(wheel).toBe(`cdk_training_io_shardio-${PACKAGE_VERSION}-py3-none-any.whl`);
    const listed = run(python, ['-m', 'pip', 'show', '--files', 'cdk-training-io-shardio'], work);
    expect(listed).toMatch(/^Requires: ?$/m);
    expect(listed).not.toMatch(/train\.py|trainer\/|dali\/Dockerfile/);
    // Every subpackage ships: the formats, the sources, the PyTorch loader.
    for (const module of ['format/tfrecord', 'source/s3_dataset', 'pipe_mode/pipe', 'epoch/order', 'torch/dataset']) {
      expect(listed).toMatch(new RegExp(`^ {2}shardio/${module}\\.py$`, 'm'));
    }
    // PEP 561: type checkers read the package's annotations; and the build wrote nothing into container/.
    expect(listed).toMatch(/^ {2}shardio\/py\.typed$/m);
    // The contract generated from lib/contract/ (layout names, ceilings, the S3 retry rule) ships with the readers.
    expect(listed).toMatch(/^ {2}shardio\/contract\.py$/m);
    expect(untrackedInContainer()).toEqual(untrackedBefore);
    expect(read.version).toBe(PACKAGE_VERSION);
    expect(path.relative(venv, read.file)).toMatch(/^lib\/python3\.\d+\/site-packages\/shardio\/__init__\.py$/);
    expect(read.torch).toBe(false);
    expect(read.classes).toBe(CLASSES.length);
    const expected = Object.fromEntries(Object.entries(files).map(([key, bytes]) => [
      key, [CLASSES.indexOf(key.split('/')[0]), createHash('sha256').update(bytes).digest('hex')],
    ]));
    expect(read.records).toEqual(expected);
  }, 600_000);
});
