import * as fs from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import type { Manifest } from '../../lambda/packing/manifest';
import { temporaryFolders, writeFiles } from '../support/local-files';
import { sizedJpeg } from '../support/jpeg-dataset';
import { runCli } from '../support/run-cli';

const FIXTURES = path.resolve(__dirname, '../fixtures/images/preprocess');
const folder = temporaryFolders();

/** A class folder of three fixture images, one of them truncated. */
function sourceFolder(): string {
  const dir = folder('src');
  writeFiles(dir, Object.fromEntries(['pillow-baseline.jpg', 'pillow-alpha.png', 'pillow-truncated.jpg']
    .map((name) => [`photos/${name}`, fs.readFileSync(path.join(FIXTURES, name))])));
  return dir;
}

describe('training-io pack --resize, --max-side, --quality, --keep-grayscale', () => {
  test('packs resized JPEGs, prints the preprocessing, lists the undecodable file and publishes nothing, exit 1 (publishes, exit 0 with --allow-missing)', async () => {
    // GIVEN
    const source = sourceFolder();
    const output = folder('out');

    // WHEN
    const packed = await runCli('pack', source, output, '--resize', '32', '--max-side', '40', '--quality', '80', '--keep-grayscale');
    const allowedOutput = folder('out');
    const allowed = await runCli('pack', source, allowedOutput, '--resize', '32', '--max-side', '40', '--quality', '80', '--keep-grayscale', '--allow-missing');

    // THEN
    expect(packed.code).toBe(1);
    expect(packed.stdout).toMatch(/^version {4}v00000001-[0-9a-f]{8} not published: 1 file\(s\) could not be packed/m);
    expect(packed.stdout).toMatch(/^ {11}photos\/pillow-truncated\.jpg: truncated jpeg image \(premature end of data: scan 1's data stops in MCU 12 of 40\)$/m);
    expect(packed.stderr).toMatch(/1 file\(s\) could not be packed: nothing was published/);
    expect(fs.existsSync(path.join(output, MANIFEST_KEY))).toBe(false);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/^images {5}shorter side 32 px, longer side at most 40 px, JPEG quality 80, grayscale kept \(sharp [\d.]+, libvips [\d.]+\)$/m);
    expect(allowed.stdout).toMatch(/^records {4}2$/m);
    const manifest = JSON.parse(fs.readFileSync(path.join(allowedOutput, MANIFEST_KEY), 'utf8')) as Manifest;
    expect(manifest.preprocessing).toMatchObject({ shorterSide: 32, longerSide: 40, jpegQuality: 80, keepGrayscale: true });
    expect(manifest.failures.map((failure) => failure.key)).toEqual(['photos/pillow-truncated.jpg']);
  });

  test.each([
    ['--resize', '0', /^training-io: --resize must be a whole number between 1 and 16384, got '0'$/m],
    ['--resize', '256px', /^training-io: --resize must be a whole number between 1 and 16384, got '256px'$/m],
    ['--max-side', '16385', /^training-io: --max-side must be a whole number between 1 and 16384, got '16385'$/m],
    ['--quality', '0', /^training-io: --quality must be a whole number between 1 and 100, got '0'$/m],
    ['--quality', '101', /^training-io: --quality must be a whole number between 1 and 100, got '101'$/m],
  ])('%s %s is refused with the flag, the value and the range, exit 2, nothing written', async (flag, value, message) => {
    // GIVEN
    const source = sourceFolder();
    const output = path.join(folder('out'), 'dataset');

    // WHEN
    const { code, stdout, stderr } = await runCli('pack', source, output, flag, value);

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
    expect(fs.existsSync(output)).toBe(false);
  });

  test('--help describes the four flags and their ranges', async () => {
    // WHEN
    const { code, stdout } = await runCli('pack', '--help');

    // THEN
    expect(code).toBe(0);
    expect(stdout).toMatch(/--resize PX +resize each image so that its shorter side is PX pixels \(1-16384;/);
    expect(stdout).toMatch(/--max-side PX +cap the longer side at PX pixels \(1-16384\)/);
    expect(stdout).toMatch(/--quality Q +JPEG quality of re-encoded images, 1-100 \(default: 90\)/);
    expect(stdout).toMatch(/--keep-grayscale +keep grayscale images one channel/);
  });
});

describe('training-io pack --resize: shards far under --shard-size', () => {
  test('the summary says that shards are planned by the source bytes, how much smaller the records came out, and the --shards that fills them', async () => {
    // GIVEN 40 JPEGs of about 60 KB (a comment segment pads each; re-encoding drops it): 2.4 MB, planned as 3 shards of 1 MiB
    const source = folder('src');
    writeFiles(source, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`photos/${i}.jpg`, sizedJpeg(`photos/${i}.jpg`, 60_000)])));
    const output = folder('out');

    // WHEN
    const packed = await runCli('pack', source, output, '--resize', '16', '--shard-size', '1MiB');

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(/^shards {5}3 /m);
    expect(packed.stdout).toMatch(/^ {11}shards average 0\.\d MB against a target of 1\.0 MB: shards are planned by the source files' bytes, and preprocessing made the records [\d.]+× smaller; --shards 1 gives shards near the target$/m);
  });

  test('without preprocessing nothing is said about the shard sizes', async () => {
    // GIVEN
    const source = folder('src');
    writeFiles(source, Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`photos/${i}.jpg`, sizedJpeg(`photos/${i}.jpg`, 2_000)])));

    // WHEN
    const packed = await runCli('pack', source, folder('out'));

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).not.toMatch(/shards average/);
  });
});
