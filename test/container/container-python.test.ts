import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ShardFormatName } from '../../lambda/packing/formats/shard-format';
import { TrainingCode } from '../../lib';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { packDataset } from '../../lambda/packing/pack';
import { fixtureJpegs, jpegWithComment } from '../support/jpeg-dataset';
import { temporaryFolders, writeFiles } from '../support/local-files';

const REPO = path.resolve(__dirname, '..', '..');
/**
 * PYTHON if set; else Debian's /usr/bin/python3 where it has PyTorch (python3-torch, which .ci/run
 * installs), so that the PyTorch tests run; else python3 on PATH.
 */
const PYTHON = process.env.PYTHON ?? (hasTorch('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const FORMATS: ShardFormatName[] = ['tfrecord', 'recordio'];
const FILES = 37;

function hasTorch(python: string): boolean {
  return spawnSync(python, ['-c', 'import torch, torchvision'], { stdio: 'ignore', timeout: 60_000 }).status === 0;
}
const SHARDS = 5;

const folder = temporaryFolders();

/** FILES JPEGs over three class folders (one nested deeper), every fifth one with magic words. */
function sourceFolder(): string {
  const dir = folder('container-src');
  const jpegs = fixtureJpegs();
  const classes = ['cat', 'dog', 'fish'];
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < FILES; i++) {
    const cls = classes[i % classes.length];
    const key = i % 11 === 0 ? `${cls}/nested/${i}.jpg` : `${cls}/${i}.jpg`;
    files[key] = jpegWithComment(jpegs[i % jpegs.length], `shardio test file ${key}`, i % 5 === 0);
  }
  writeFiles(dir, files);
  return dir;
}

interface PythonRun {
  readonly status: number | null;
  readonly output: string;
}

function runPython(args: string[], env: Record<string, string> = {}): PythonRun {
  const run = spawnSync(PYTHON, args, {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 900_000,
    // No __pycache__ in container/ (it would ship in the code tarball); the Pipe fan-out's FIFOs
    // under a temporary folder of this run.
    env: {
      ...process.env, PYTHONPATH: path.join(REPO, 'container'), PYTHONDONTWRITEBYTECODE: '1', TMPDIR: folder('container-tmp'), ...env,
    },
  });
  if (run.error) throw new Error(`cannot run ${PYTHON}: ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('container/ Python (test/python, standard library unittest)', () => {
  test('reads every record, label and index of shards the engine packs in this run, through files, FIFOs and the rank/worker split', async () => {
    // GIVEN
    const source = sourceFolder();
    const packed: Record<string, string | number> = { source, shards: SHARDS, files: FILES };
    for (const format of FORMATS) {
      const output = folder(`container-${format}`);
      await packDataset({
        source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format, seed: 3, shardCount: SHARDS,
      });
      packed[format] = output;
    }
    const description = path.join(folder('container-packed'), 'packed.json');
    fs.writeFileSync(description, JSON.stringify(packed));

    // WHEN
    const run = runPython(['-m', 'unittest', 'discover', '-v', '-s', 'test/python', '-t', 'test/python'], { SHARDIO_TEST_PACKED: description });

    // THEN
    if (run.status !== 0) throw new Error(`python unittest failed (exit ${run.status}):\n${run.output}`);
    const summary = /^Ran (\d+) tests? in .*\n\nOK(?: \(skipped=(\d+)\))?$/m.exec(run.output);
    expect(summary).not.toBeNull();
    const skipped = [...run.output.matchAll(/^(\S+) \(([\w.]+)\).*\.\.\. skipped '(.+)'$/gm)];
    expect(skipped).toHaveLength(Number(summary![2] ?? 0));
    const reasons = [...new Set(skipped.map((m) => m[3]))];
    // Say in the jest output which tests did not run here, and why.
    console.log(`Python ${PYTHON}: ran ${summary![1]} tests, ${skipped.length} skipped${reasons.map((r) => `\n  skipped: ${r}`).join('')}`);
  }, 960_000);

  test('the reference code\'s metric definitions capture the line train.py prints every interval', () => {
    // GIVEN
    const definitions = TrainingCode.reference().metricDefinitions;

    // WHEN
    const run = runPython(['-c', 'from shardio.epoch.metrics import interval_line; print(interval_line(2, 300, 1234.56, 0.0456, 2.71828))']);

    // THEN
    expect(run).toEqual({ status: 0, output: 'epoch=2 step=300 samples/s=1234.6 data_wait=0.046 loss=2.7183\n' });
    const captured = Object.fromEntries(definitions.map((m) => [m.name, new RegExp(m.regex).exec(run.output)?.[1]]));
    expect(captured).toEqual({
      'train:samples_per_second': '1234.6', 'train:data_wait_fraction': '0.046', 'train:loss': '2.7183', 'val:loss': undefined, 'val:accuracy': undefined,
    });
  });

  test('the reference code\'s metric definitions capture the validation line train.py prints after each epoch', () => {
    // GIVEN
    const definitions = TrainingCode.reference().metricDefinitions;

    // WHEN
    const run = runPython(['-c', 'from shardio.epoch.metrics import validation_line; print(validation_line(1, 500, 1.23456, 0.75))']);

    // THEN
    expect(run).toEqual({ status: 0, output: 'epoch=1 step=500 val_loss=1.2346 val_accuracy=0.7500\n' });
    const captured = Object.fromEntries(definitions.map((m) => [m.name, new RegExp(m.regex).exec(run.output)?.[1]]));
    expect(captured).toEqual({
      'train:samples_per_second': undefined, 'train:data_wait_fraction': undefined, 'train:loss': undefined, 'val:loss': '1.2346', 'val:accuracy': '0.7500',
    });
  });
});
