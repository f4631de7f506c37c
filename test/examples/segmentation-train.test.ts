import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as tar from 'tar';
import { segmentationCode } from '../../examples/segmentation/stack';
import { listFiles, temporaryFolders, writeFiles } from '../support/local-files';
import { pennFudanLikeFolder } from '../support/penn-fudan';
import { runCli } from '../support/run-cli';

/**
 * examples/segmentation: prepare.py on a made-up dataset in the Penn-Fudan Pedestrian layout (no
 * network here), the keyed files it writes packed by `training-io pack --parts`, and train.py run
 * on them on the CPU as a job runs it.
 */

/** Debian's Python, with Pillow, PyTorch and torchvision for the CPU (python3-pil, python3-torch, python3-torchvision; .ci/run installs them). */
const PYTHON = '/usr/bin/python3';
const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'segmentation');
const IMAGES = 12;
const INTERVAL_LINE = /^epoch=(\d+) step=(\d+) samples\/s=[0-9.]+ data_wait=[0-9.]+ loss=[0-9.]+$/gm;

const folder = temporaryFolders();

/** `python <script> <args>` in `cwd` (the example's folder), with `env` added; its exit status and what it printed. */
function runPython(script: string, args: string[], cwd = EXAMPLE, env: Record<string, string> = {}): { status: number | null; output: string } {
  const run = spawnSync(PYTHON, ['-E', '-s', '-B', script, ...args], { cwd, encoding: 'utf8', timeout: 600_000, env: { ...process.env, ...env } });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The example's code tarball as `cdk synth` stages it, extracted: what the toolkit puts in /opt/ml/code. */
function stagedCode(): string {
  const app = new App({ outdir: folder('segmentation-out') });
  const stack = new Stack(app, 'Stack');
  segmentationCode()._bind(stack, new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com') }));
  const assembly = app.synth();
  const tarballs = fs.readdirSync(assembly.directory).filter((name) => name.endsWith('.tar.gz'));
  expect(tarballs).toHaveLength(1);
  const code = folder('segmentation-code');
  tar.x({ file: path.join(assembly.directory, tarballs[0]), cwd: code, sync: true });
  return code;
}

/** /opt/ml as a File-mode job with a `train` channel of `dataset` sees it, two loader workers sized for it. */
function jobFolders(dataset: string): { input: string; model: string; checkpoints: string } {
  const ml = folder('segmentation-ml');
  const input = path.join(ml, 'input');
  writeFiles(input, {
    'config/inputdataconfig.json': JSON.stringify({ train: { TrainingInputMode: 'File' } }),
    'config/hyperparameters.json': JSON.stringify({ num_workers: '2' }),
  });
  fs.cpSync(dataset, path.join(input, 'data', 'train'), { recursive: true });
  return { input, model: path.join(ml, 'model'), checkpoints: path.join(ml, 'checkpoints') };
}

/** `python train.py <hyperparameters>` in the code folder, as the toolkit runs it; its stdout. */
function train(code: string, job: { input: string; model: string; checkpoints: string }, ...hyperparameters: string[]): string {
  const run = runPython('train.py', ['--checkpoint_dir', job.checkpoints, ...hyperparameters], code, { SM_INPUT_DIR: job.input, SM_MODEL_DIR: job.model });
  if (run.status !== 0) throw new Error(`train.py exited with ${run.status}:\n${run.output}`);
  return run.output;
}

function loaderPosition(checkpoints: string, step: number): any {
  return JSON.parse(fs.readFileSync(path.join(checkpoints, `step-${String(step).padStart(9, '0')}.rank-0.json`), 'utf8'));
}

/** The keys train.py's --keys_log wrote, by epoch, each epoch's sorted. */
function keysByEpoch(log: string): string[][] {
  const epochs: string[][] = [];
  for (const line of fs.readFileSync(log, 'utf8').trim().split('\n')) {
    const [epoch, key] = line.split(' ');
    (epochs[Number(epoch)] ??= []).push(key);
  }
  return epochs.map((keys) => keys.sort());
}

describe('examples/segmentation/prepare.py', () => {
  test('writes each Penn-Fudan image as a sample of three parts: the image unchanged, its instance mask, its boxes and labels', () => {
    // GIVEN
    const work = folder('segmentation-prepare');
    const samples = pennFudanLikeFolder(path.join(work, 'PennFudanPed'), IMAGES);

    // WHEN
    const run = runPython('prepare.py', [path.join(work, 'PennFudanPed'), path.join(work, 'prepared')]);

    // THEN
    expect(run).toEqual({ status: 0, output: `prepared ${IMAGES} samples in ${path.join(work, 'prepared')}\n` });
    expect(listFiles(path.join(work, 'prepared'))).toEqual(samples.flatMap(({ key }) => [`${key}.json`, `${key}.mask.png`, `${key}.png`]).sort());
    for (const { key, boxes } of samples) {
      const prepared = (name: string): Buffer => fs.readFileSync(path.join(work, 'prepared', name));
      expect(prepared(`${key}.png`)).toEqual(fs.readFileSync(path.join(work, 'PennFudanPed', 'PNGImages', `${key}.png`)));
      expect(JSON.parse(prepared(`${key}.json`).toString())).toEqual({
        width: 64, height: 48, boxes, labels: boxes.map(() => 1), instances: boxes.map((_, person) => person + 1),
      });
      // An 8-bit grayscale PNG (colour type 0) of the instance values, not the palette's colours.
      expect(prepared(`${key}.mask.png`).readUInt8(25)).toBe(0);
    }
  });

  test.each([
    ['an image without its mask', { 'PNGImages/FudanPed00099.png': 'x' }, /PNGImages\/FudanPed00099\.png has no mask .*PedMasks\/FudanPed00099_mask\.png/],
    ['a mask without its image', { 'PedMasks/FudanPed00099_mask.png': 'x' }, /PedMasks\/FudanPed00099_mask\.png has no image .*PNGImages\/FudanPed00099\.png/],
    ['another file', { 'PedMasks/README.txt': 'x' }, /PedMasks\/README\.txt is neither an image .* nor a mask/],
    ['a dot in a name', { 'PNGImages/Fudan.Ped.png': 'x', 'PedMasks/Fudan.Ped_mask.png': 'x' }, /Fudan\.Ped\.png: a dot in the name would end the sample's key/],
  ])('refuses %s, naming the file, and writes nothing', (_, extra, message) => {
    // GIVEN
    const work = folder('segmentation-prepare-bad');
    pennFudanLikeFolder(path.join(work, 'PennFudanPed'), 2);
    writeFiles(path.join(work, 'PennFudanPed'), extra);

    // WHEN
    const run = runPython('prepare.py', [path.join(work, 'PennFudanPed'), path.join(work, 'prepared')]);

    // THEN
    expect(run.status).toBe(1);
    expect(run.output).toMatch(message);
    expect(fs.existsSync(path.join(work, 'prepared'))).toBe(false);
  });

  test('refuses a mask whose size is not its image\'s, naming both, and writes nothing', () => {
    // GIVEN
    const work = folder('segmentation-prepare-size');
    pennFudanLikeFolder(path.join(work, 'PennFudanPed'), 2);
    pennFudanLikeFolder(path.join(work, 'other'), 1, 80, 48);
    fs.copyFileSync(path.join(work, 'other', 'PedMasks', 'FudanPed00001_mask.png'), path.join(work, 'PennFudanPed', 'PedMasks', 'FudanPed00001_mask.png'));

    // WHEN
    const run = runPython('prepare.py', [path.join(work, 'PennFudanPed'), path.join(work, 'prepared')]);

    // THEN
    expect(run.status).toBe(1);
    expect(run.output).toMatch(/FudanPed00001_mask\.png is 80x48, its image .*PNGImages\/FudanPed00001\.png 64x48/);
    expect(fs.existsSync(path.join(work, 'prepared'))).toBe(false);
  });
});

describe('examples/segmentation/train.py on the CPU', () => {
  test('trains on the samples the CLI packed from prepare.py\'s files, every sample once an epoch, and resumes at the sample it reached', async () => {
    // GIVEN: the made-up Penn-Fudan folder prepared and packed as the example's README says
    const work = folder('segmentation-train');
    const samples = pennFudanLikeFolder(path.join(work, 'PennFudanPed'), IMAGES);
    expect(runPython('prepare.py', [path.join(work, 'PennFudanPed'), path.join(work, 'prepared')]).status).toBe(0);
    const packed = await runCli('pack', path.join(work, 'prepared'), path.join(work, 'dataset'), '--parts', 'png,mask.png,json', '--labels', 'none', '--shards', '3');
    expect([packed.code, packed.stderr]).toEqual([0, expect.any(String)]);
    const code = stagedCode();
    const job = jobFolders(path.join(work, 'dataset'));
    const keysLog = path.join(work, 'keys.log');
    // Two loader workers read 6 samples each an epoch: batches of 4 and 2 from each, 4 steps an epoch.
    const small = ['--epochs', '2', '--image_size', '32', '--batch_size', '4', '--width', '8', '--log_interval', '2', '--checkpoint_interval', '3',
      '--keys_log', keysLog];

    // WHEN: stopped after 6 steps (2 into the second epoch), then run again
    const first = train(code, job, ...small, '--max_steps', '6');
    const second = train(code, job, ...small);

    // THEN
    expect([...first.matchAll(INTERVAL_LINE)].map((m) => [Number(m[1]), Number(m[2])])).toEqual([[0, 2], [0, 4], [1, 6]]);
    expect(first).toMatch(/^done at step=6$/m);
    for (const [line] of first.matchAll(INTERVAL_LINE)) {
      const captured = Object.fromEntries(segmentationCode().metricDefinitions.map((m) => [m.name, new RegExp(m.regex).exec(line)?.[1]]));
      expect(captured).toMatchObject({ 'train:samples_per_second': expect.stringMatching(/^\d+\.\d$/), 'train:loss': expect.stringMatching(/^\d+\.\d{4}$/) });
    }
    expect(loaderPosition(job.checkpoints, 6)).toMatchObject({ epoch: 1, yielded: [4, 4], sample_in_epoch: 8 });
    expect(second).toMatch(/^resumed step=6 at record 8 of epoch 1$/m);
    expect([...second.matchAll(INTERVAL_LINE)].map((m) => [Number(m[1]), Number(m[2])])).toEqual([[1, 8]]);
    expect(loaderPosition(job.checkpoints, 8)).toMatchObject({ epoch: 1, yielded: [6, 6], sample_in_epoch: IMAGES });
    // Every sample once in each epoch, the second's over both runs.
    const keys = samples.map(({ key }) => key).sort();
    expect(keysByEpoch(keysLog)).toEqual([keys, keys]);
    expect(fs.statSync(path.join(job.model, 'model.pt')).size).toBeGreaterThan(0);
  }, 900_000);
});
