import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as tar from 'tar';
import { customModelCode } from '../../examples/custom-model/stack';
import { jpegSourceFolder, packWithCli } from '../support/jpeg-dataset';
import { temporaryFolders } from '../support/local-files';

/**
 * examples/custom-model/train.py run on the CPU as a job runs it: the code tarball the example
 * stages (the script and the readers beside it), a channel of shards `training-io pack` wrote, the
 * job's folders and hyperparameters where SageMaker puts them.
 */

/** Debian's Python, with PyTorch and torchvision for the CPU (python3-torch, python3-torchvision; .ci/run installs them). */
const PYTHON = '/usr/bin/python3';
const CLASSES = ['cat', 'dog', 'fish'];
/** Two loader workers read 7 records each an epoch: batches of 4 and 3 from each, 4 steps an epoch. */
const FILES = 14;
const INTERVAL_LINE = /^epoch=(\d+) step=(\d+) samples\/s=[0-9.]+ data_wait=[0-9.]+ loss=[0-9.]+$/gm;

const folder = temporaryFolders();

/** The example's code tarball as `cdk synth` stages it, extracted: what the toolkit puts in /opt/ml/code. */
function stagedCode(): string {
  const app = new App({ outdir: folder('custom-model-out') });
  const stack = new Stack(app, 'Stack');
  customModelCode()._bind(stack, new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') }));
  const assembly = app.synth();
  const tarballs = fs.readdirSync(assembly.directory).filter((name) => name.endsWith('.tar.gz'));
  expect(tarballs).toHaveLength(1);
  const code = folder('custom-model-code');
  tar.x({ file: path.join(assembly.directory, tarballs[0]), cwd: code, sync: true });
  return code;
}

/** /opt/ml as a FastFile job with a `train` channel of `dataset` sees it. */
function jobFolders(dataset: string): { input: string; model: string; checkpoints: string } {
  const ml = folder('custom-model-ml');
  const input = path.join(ml, 'input');
  fs.mkdirSync(path.join(input, 'config'), { recursive: true });
  fs.writeFileSync(path.join(input, 'config', 'inputdataconfig.json'), JSON.stringify({ train: { TrainingInputMode: 'FastFile' } }));
  // TrainingJob sizes num_workers for the instance and passes it as a hyperparameter.
  fs.writeFileSync(path.join(input, 'config', 'hyperparameters.json'), JSON.stringify({ num_workers: '2' }));
  fs.cpSync(dataset, path.join(input, 'data', 'train'), { recursive: true });
  return { input, model: path.join(ml, 'model'), checkpoints: path.join(ml, 'checkpoints') };
}

/** `python train.py <hyperparameters>` in the code folder, as the toolkit runs it; its stdout. */
function train(code: string, job: { input: string; model: string; checkpoints: string }, ...hyperparameters: string[]): string {
  return runTrainPy(code, { SM_INPUT_DIR: job.input, SM_MODEL_DIR: job.model }, '--checkpoint_dir', job.checkpoints, ...hyperparameters);
}

function runTrainPy(code: string, env: Record<string, string>, ...args: string[]): string {
  const run = spawnSync(PYTHON, ['-E', '-s', '-B', 'train.py', ...args], {
    cwd: code,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, ...env },
  });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`train.py exited with ${run.status ?? run.signal}:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

function loaderPosition(checkpoints: string, step: number): any {
  return JSON.parse(fs.readFileSync(path.join(checkpoints, `step-${String(step).padStart(9, '0')}.rank-0.json`), 'utf8'));
}

describe('examples/custom-model/train.py on the CPU', () => {
  test('trains a few steps on shards the CLI packed, prints the lines the metric definitions capture, checkpoints and resumes at the record it reached', async () => {
    // GIVEN
    const work = folder('custom-model');
    jpegSourceFolder(path.join(work, 'source'), FILES, CLASSES);
    await packWithCli(path.join(work, 'source'), path.join(work, 'dataset'), 'tfrecord', 3);
    const code = stagedCode();
    const job = jobFolders(path.join(work, 'dataset'));
    const small = ['--epochs', '2', '--image_size', '32', '--batch_size', '4', '--depth', '2', '--log_interval', '2', '--checkpoint_interval', '3'];

    // WHEN: stopped after 6 steps (2 into the second epoch), then run again
    const first = train(code, job, ...small, '--max_steps', '6');
    const second = train(code, job, ...small);

    // THEN
    expect([...first.matchAll(INTERVAL_LINE)].map((m) => [Number(m[1]), Number(m[2])])).toEqual([[0, 2], [0, 4], [1, 6]]);
    expect(first).toMatch(/^done at step=6$/m);
    const definitions = customModelCode().metricDefinitions;
    for (const [line] of first.matchAll(INTERVAL_LINE)) {
      const captured = Object.fromEntries(definitions.map((m) => [m.name, new RegExp(m.regex).exec(line)?.[1]]));
      expect(captured).toEqual({
        'train:samples_per_second': expect.stringMatching(/^\d+\.\d$/), 'train:data_wait_fraction': expect.stringMatching(/^[01]\.\d{3}$/),
        'train:loss': expect.stringMatching(/^\d+\.\d{4}$/), 'val:loss': undefined, 'val:accuracy': undefined,
      });
    }
    // Every 3 steps, at the first epoch's end and at the stop; the position: 2 batches of 4 into epoch 1.
    expect(loaderPosition(job.checkpoints, 6)).toMatchObject({ epoch: 1, yielded: [4, 4], sample_in_epoch: 8, workers: 2 });
    expect(loaderPosition(job.checkpoints, 4)).toMatchObject({ epoch: 0, sample_in_epoch: FILES });
    expect(second).toMatch(/^resumed step=6 at record 8 of epoch 1$/m);
    expect([...second.matchAll(INTERVAL_LINE)].map((m) => [Number(m[1]), Number(m[2])])).toEqual([[1, 8]]);
    expect(second).toMatch(/^done at step=8$/m);
    expect(loaderPosition(job.checkpoints, 8)).toMatchObject({ epoch: 1, yielded: [7, 7], sample_in_epoch: FILES });
    expect(fs.statSync(path.join(job.model, 'model.pt')).size).toBeGreaterThan(0);
  }, 900_000);

  test('with --data, outside a job, trains on a packed folder and resumes at the record it reached', async () => {
    // GIVEN: no /opt/ml folders; the worker count a job would pass as a hyperparameter, through the toolkit's variable
    const work = folder('custom-model-data');
    jpegSourceFolder(path.join(work, 'source'), FILES, CLASSES);
    await packWithCli(path.join(work, 'source'), path.join(work, 'dataset'), 'tfrecord', 3);
    const code = stagedCode();
    const env = { SM_INPUT_DIR: path.join(work, 'no-job'), SM_HP_NUM_WORKERS: '2' };
    const args = ['--data', path.join(work, 'dataset'), '--checkpoint_dir', path.join(work, 'checkpoints'), '--model_dir', path.join(work, 'model'),
      '--epochs', '2', '--image_size', '32', '--batch_size', '4', '--depth', '2', '--log_interval', '2', '--checkpoint_interval', '3'];

    // WHEN
    const first = runTrainPy(code, env, ...args, '--max_steps', '6');
    const second = runTrainPy(code, env, ...args);

    // THEN
    expect([...first.matchAll(INTERVAL_LINE)].map((m) => [Number(m[1]), Number(m[2])])).toEqual([[0, 2], [0, 4], [1, 6]]);
    expect(second).toMatch(/^resumed step=6 at record 8 of epoch 1$/m);
    expect(second).toMatch(/^done at step=8$/m);
    expect(loaderPosition(path.join(work, 'checkpoints'), 8)).toMatchObject({ epoch: 1, yielded: [7, 7], sample_in_epoch: FILES });
    expect(fs.statSync(path.join(work, 'model', 'model.pt')).size).toBeGreaterThan(0);
  }, 900_000);
});
