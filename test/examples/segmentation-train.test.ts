import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listFiles, temporaryFolders, writeFiles } from '../support/local-files';
import { pennFudanLikeFolder } from '../support/penn-fudan';

/**
 * examples/segmentation: prepare.py on a made-up dataset in the Penn-Fudan Pedestrian layout (no
 * network here), the keyed files it writes packed by `training-io pack --parts`, and train.py run
 * on them on the CPU as a job runs it.
 */

/** Debian's Python, with Pillow, PyTorch and torchvision for the CPU (python3-pil, python3-torch, python3-torchvision; .ci/run installs them). */
const PYTHON = '/usr/bin/python3';
const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'segmentation');
const IMAGES = 12;

const folder = temporaryFolders();

/** `python <script> <args>` in the example's folder; its exit status and what it printed. */
function runPython(script: string, ...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(PYTHON, ['-E', '-s', '-B', script, ...args], { cwd: EXAMPLE, encoding: 'utf8', timeout: 600_000 });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('examples/segmentation/prepare.py', () => {
  test('writes each Penn-Fudan image as a sample of three parts: the image unchanged, its instance mask, its boxes and labels', () => {
    // GIVEN
    const work = folder('segmentation-prepare');
    const samples = pennFudanLikeFolder(path.join(work, 'PennFudanPed'), IMAGES);

    // WHEN
    const run = runPython('prepare.py', path.join(work, 'PennFudanPed'), path.join(work, 'prepared'));

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
    ['a dot in a name', { 'PNGImages/Fudan.Ped.png': 'x', 'PedMasks/Fudan.Ped_mask.png': 'x' }, /Fudan\.Ped\.png: a dot in the name would end the sample's key/],
  ])('refuses %s, naming the file, and writes nothing', (_, extra, message) => {
    // GIVEN
    const work = folder('segmentation-prepare-bad');
    pennFudanLikeFolder(path.join(work, 'PennFudanPed'), 2);
    writeFiles(path.join(work, 'PennFudanPed'), extra);

    // WHEN
    const run = runPython('prepare.py', path.join(work, 'PennFudanPed'), path.join(work, 'prepared'));

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
    const run = runPython('prepare.py', path.join(work, 'PennFudanPed'), path.join(work, 'prepared'));

    // THEN
    expect(run.status).toBe(1);
    expect(run.output).toMatch(/FudanPed00001_mask\.png is 80x48, its image .*PNGImages\/FudanPed00001\.png 64x48/);
    expect(fs.existsSync(path.join(work, 'prepared'))).toBe(false);
  });
});
