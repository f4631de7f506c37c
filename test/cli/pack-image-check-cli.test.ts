import * as fs from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import type { Manifest } from '../../lambda/packing/manifest';
import { temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';
import { readerProblems, writeProbeCorpus } from '../packing/image-check/probe-corpus';

const folder = temporaryFolders();

/**
 * Each failure's reason, by key, from the manifest; the summary shows the first ten of them as
 * they are there (11 spaces, key, colon, reason) and counts the rest.
 */
function listedReasons(stdout: string, output: string): Map<string, string> {
  const { failures } = manifestOf(output);
  const shown = [...stdout.matchAll(/^ {11}(probe\/[^:\s]+): (.+)$/gm)].map((match) => ({ key: match[1], reason: match[2] }));
  expect(shown).toEqual(failures.slice(0, 10));
  if (failures.length > 10) expect(stdout).toContain(`… and ${failures.length - 10} more in ${MANIFEST_KEY}`);
  return new Map(failures.map((failure) => [failure.key, failure.reason]));
}

function manifestOf(output: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(output, MANIFEST_KEY), 'utf8')) as Manifest;
}

describe('training-io pack checks every image (issue 32)', () => {
  let source: string;
  let corpus: Map<string, Buffer>;
  beforeAll(() => {
    corpus = writeProbeCorpus(folder('corpus'));
    source = folder('src');
    writeFiles(source, Object.fromEntries([...corpus].map(([name, data]) => [`probe/${name}`, data])));
  });
  const keys = (prefix: string) => [...corpus.keys()].filter((name) => name.startsWith(prefix)).map((name) => `probe/${name}`).sort();

  test('without --resize: each bad file is listed with its reason in the summary and the manifest, exit 1; the readers decode every record', async () => {
    // WHEN
    const output = folder('out');
    const packed = await runCli('pack', source, output, '--allow-missing');
    const strict = await runCli('pack', source, folder('out'));

    // THEN
    expect(packed.code).toBe(0);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(new RegExp(`${keys('bad-').length + 1} file\\(s\\) could not be packed`));
    const reasons = listedReasons(packed.stdout, output);
    expect([...reasons.keys()].sort()).toEqual([...keys('bad-'), ...keys('resize-only-')].sort());
    expect(reasons.get('probe/bad-text.jpg')).toBe('not an image (no image format recognised in its bytes)');
    expect(reasons.get('probe/bad-empty.jpg')).toBe('not an image (0 bytes)');
    expect(reasons.get('probe/bad-cut-with-eoi.jpg')).toMatch(/^truncated jpeg image \(premature end of data: scan 1's data stops in MCU \d+ of 7500\)$/);
    expect(reasons.get('probe/bad-header-bomb.jpg')).toBe('image too large: 16000 x 16000 px, over the limit of 178956970 px');
    expect(reasons.get('probe/bad-image.bmp')).toMatch(/^unsupported image format 'bmp' \(accepted: jpeg, png; preprocessing \(--resize, --max-side\)/);
    expect(reasons.get('probe/resize-only-cmyk.jpg')).toMatch(/^unsupported image format 'jpeg' \(CMYK: the training readers cannot convert it to RGB/);
    const problems = readerProblems(output);
    expect([...problems.keys()].sort()).toEqual(keys('ok-'));
    for (const [key, found] of problems) expect([key, found]).toEqual([key, []]);
  });

  test('with --resize: the same bad files are listed (the header bombs and the cut file with FF D9 among them), the CMYK JPEG is converted', async () => {
    // WHEN
    const output = folder('out');
    const packed = await runCli('pack', source, output, '--resize', '48', '--allow-missing');

    // THEN
    expect(packed.code).toBe(0);
    const reasons = listedReasons(packed.stdout, output);
    expect([...reasons.keys()].sort()).toEqual(keys('bad-'));
    expect(reasons.get('probe/bad-cut-with-eoi.jpg')).toMatch(/^truncated jpeg image \(premature end of data/);
    expect(reasons.get('probe/bad-progressive-header-bomb.jpg')).toMatch(/^(corrupt|truncated) jpeg image \(/);
    expect(reasons.get('probe/bad-image.bmp')).toBe('unsupported image format \'bmp\' (accepted: jpeg, png, webp, tiff, gif)');
    const problems = readerProblems(output);
    expect([...problems.keys()].sort()).toEqual([...keys('ok-'), ...keys('resize-only-')].sort());
    for (const [key, found] of problems) expect([key, found]).toEqual([key, []]);
  });

  test('--content any packs every file as it is (exit 0, no failures), which verify --images then finds; with --resize it is a usage error', async () => {
    // WHEN
    const output = folder('out');
    const packed = await runCli('pack', source, output, '--content', 'any');
    const both = await runCli('pack', source, folder('out'), '--content', 'any', '--resize', '48');

    // THEN
    expect(packed.code).toBe(0);
    expect(manifestOf(output)).toMatchObject({ records: corpus.size, failures: [] });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--content any packs files as they are, and --resize, --max-side, --quality and --keep-grayscale decode every file/);

    // WHEN such a dataset (or one packed before the check) is verified with and without --images
    const plain = await runCli('verify', output);
    const images = await runCli('verify', output, '--images');

    // THEN only --images finds the records the readers could not decode, each named with its reason
    expect(plain.code).toBe(0);
    expect(images.code).toBe(1);
    const named = [...images.stdout.matchAll(/record at offset \d+ \((probe\/[^)]+)\): (.+)$/gm)].map((match) => match[1]).sort();
    expect(named).toEqual([...keys('bad-'), ...keys('resize-only-')].sort());
    expect(images.stdout).toMatch(/record at offset \d+ \(probe\/bad-cut-with-eoi\.jpg\): truncated jpeg image \(premature end of data/);
  });
});
