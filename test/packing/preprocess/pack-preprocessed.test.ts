import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../../lambda/io/local-directory';
import type { PackOptions } from '../../../lambda/packing/pack';
import { packDataset } from '../../../lambda/packing/pack';
import { LocalShardPool } from '../../../lambda/packing/parallel/local-shard-pool';
import type { ImagePreprocessing } from '../../../lambda/packing/preprocess/image-preprocessing';
import { datasetObjects, expectSameObjects, withoutVersionIds } from '../../support/dataset-objects';
import { temporaryFolders, writeFiles } from '../../support/local-files';

const REPO = path.resolve(__dirname, '../../..');
const FIXTURES = path.join(REPO, 'test/fixtures/images/preprocess');
const PYTHON = process.env.PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const folder = temporaryFolders();

/** The fixture images (the encoders' files), under `photos/`, each `copies` times. */
function fixtureSource(copies = 1): string {
  const dir = folder('src');
  const files: Record<string, Buffer> = {};
  for (const name of fs.readdirSync(FIXTURES).filter((file) => !/\.(py|js|md)$/.test(file))) {
    for (let copy = 0; copy < copies; copy++) files[`photos/${copy === 0 ? '' : `${copy}-`}${name}`] = fs.readFileSync(path.join(FIXTURES, name));
  }
  writeFiles(dir, files);
  return dir;
}

async function pack(source: string, options: Partial<PackOptions> = {}, output = folder('out')) {
  const result = await packDataset({
    source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format: 'tfrecord', seed: 11, allowMissing: true, ...options,
  });
  return { ...result, output };
}

type Colour = [number, number, number] | number;
interface DecodedRecord {
  readonly filename: string;
  readonly formatFeature: string;
  readonly decodedFormat: string;
  readonly width: number;
  readonly height: number;
  readonly channels: number;
  readonly quarters: Record<'topLeft' | 'topRight' | 'bottomLeft' | 'bottomRight', Colour>;
}

/** Every record, as Pillow (not sharp) decodes it, by file name. */
function decodeWithPillow(dataset: string): Map<string, DecodedRecord> {
  const run = spawnSync(PYTHON, [path.join(__dirname, 'describe_records.py'), dataset], {
    encoding: 'utf8', env: { ...process.env, PYTHONPATH: path.join(REPO, 'container'), PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (run.status !== 0) throw new Error(`describe_records.py failed (${run.status}): ${run.stderr}${run.error?.message ?? ''}`);
  const records = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as DecodedRecord);
  return new Map(records.map((record) => [path.basename(record.filename), record]));
}

/** Which primary a pixel shows most (CMYK converted through a profile comes out duller, hence the margin of 50). */
function dominant(colour: Colour): 'red' | 'green' | 'blue' | 'white' | 'gray' {
  if (typeof colour === 'number') return 'gray';
  const [r, g, b] = colour;
  if (Math.min(r, g, b) > 240) return 'white';
  return r > g + 50 && r > b + 50 ? 'red' : b > r + 50 && b > g + 50 ? 'blue' : g > r + 50 && g > b + 50 ? 'green' : 'gray';
}

/** The fixtures are 120 x 80 (red top-left, blue bottom-right) but for the two shown upright at 80 x 120. */
const UPRIGHT = ['pillow-baseline.jpg', 'pillow-progressive.jpg', 'pillow-cmyk.jpg', 'pillow-webp.webp', 'pillow-tiff.tiff', 'sharp-16bit.png', 'pillow-palette.png'];
const TURNED = ['pillow-exif-orientation-6.jpg', 'sharp-mozjpeg.jpg'];

describe('packing with image preprocessing (sharp), read back by Pillow', () => {
  test('every encoder\'s file becomes an upright 8-bit RGB JPEG with its shorter side at 64 px; the undecodable ones are failures with reasons', async () => {
    // GIVEN
    const source = fixtureSource();

    // WHEN
    const { manifest, output } = await pack(source, { preprocessing: { shorterSide: 64 } });
    const records = decodeWithPillow(output);

    // THEN
    expect(manifest.failures).toEqual([
      { key: 'photos/pillow-truncated.jpg', reason: 'truncated jpeg image (premature end of data: scan 1\'s data stops in MCU 12 of 40)' },
      { key: 'photos/text-named.jpg', reason: 'not an image (no image format recognised in its bytes)' },
    ]);
    expect(manifest.preprocessing).toEqual({ shorterSide: 64, longerSide: null, jpegQuality: 90, keepGrayscale: false, sharp: '0.35.5', libvips: '8.18.7' });
    expect(records.size).toBe(12);
    for (const record of records.values()) {
      expect({ name: record.filename, format: record.formatFeature, decoded: record.decodedFormat, channels: record.channels })
        .toEqual({ name: record.filename, format: 'jpeg', decoded: 'JPEG', channels: 3 });
    }
    for (const name of UPRIGHT) {
      const record = records.get(name)!;
      expect({ name, size: [record.width, record.height], topLeft: dominant(record.quarters.topLeft), bottomRight: dominant(record.quarters.bottomRight) })
        .toEqual({ name, size: [96, 64], topLeft: 'red', bottomRight: 'blue' });
    }
    // Orientation 6 turns the picture a quarter clockwise: its red top-left is shown top-right.
    for (const name of TURNED) {
      const record = records.get(name)!;
      expect({ name, size: [record.width, record.height], topRight: dominant(record.quarters.topRight), bottomLeft: dominant(record.quarters.bottomLeft) })
        .toEqual({ name, size: [64, 96], topRight: 'red', bottomLeft: 'blue' });
    }
    // Transparent pixels (black beneath) are flattened on white; an animated GIF gives its first (red) frame.
    expect(dominant(records.get('pillow-alpha.png')!.quarters.topLeft)).toBe('white');
    expect(dominant(records.get('pillow-alpha.png')!.quarters.bottomRight)).toBe('blue');
    expect(Object.values(records.get('pillow-animated.gif')!.quarters).map(dominant)).toEqual(['red', 'red', 'red', 'red']);
    expect(records.get('pillow-gray.jpg')).toMatchObject({ width: 96, height: 64, channels: 3 });
  });

  test('keepGrayscale keeps a grayscale image one channel, colour ones three; --max-side alone caps the longer side; nothing is enlarged', async () => {
    // GIVEN
    const source = fixtureSource();

    // WHEN
    const { output } = await pack(source, { preprocessing: { longerSide: 60, keepGrayscale: true, jpegQuality: 75 } });
    const records = decodeWithPillow(output);
    const large = await pack(source, { preprocessing: { shorterSide: 1000 } });
    const unchanged = decodeWithPillow(large.output);

    // THEN
    expect(records.get('pillow-gray.jpg')).toMatchObject({ width: 60, height: 40, channels: 1 });
    expect(records.get('pillow-baseline.jpg')).toMatchObject({ width: 60, height: 40, channels: 3 });
    expect(records.get('pillow-exif-orientation-6.jpg')).toMatchObject({ width: 40, height: 60, channels: 3 });
    expect(unchanged.get('pillow-baseline.jpg')).toMatchObject({ width: 120, height: 80 });
    expect(unchanged.get('pillow-exif-orientation-6.jpg')).toMatchObject({ width: 80, height: 120 });
  });

  test('the same files and settings give the same bytes: twice, and on one thread or three worker threads', async () => {
    // GIVEN
    const source = fixtureSource(3);
    const preprocessing: ImagePreprocessing = { shorterSide: 48, jpegQuality: 85 };
    const options = { preprocessing, shardCount: 4 };

    // WHEN
    const first = await pack(source, options);
    const second = await pack(source, options);
    const threadedOutput = folder('out-threads');
    const pool = new LocalShardPool({ sourceDir: source, outputDir: threadedOutput, format: 'tfrecord', readConcurrency: 4, preprocessing }, 3);
    let threaded;
    try {
      threaded = await pack(source, { ...options, parallelShards: 3, writeShard: (shard, prefix, onFiles) => pool.write(shard, prefix, onFiles) }, threadedOutput);
    } finally {
      await pool.close();
    }

    // THEN
    expect(first.manifest.records).toBe(36);
    expectSameObjects(await datasetObjects(new LocalDirectorySink(second.output)), await datasetObjects(new LocalDirectorySink(first.output)));
    expectSameObjects(await datasetObjects(new LocalDirectorySink(threaded.output)), await datasetObjects(new LocalDirectorySink(first.output)));
    expect(withoutVersionIds(threaded.manifest)).toEqual(withoutVersionIds(first.manifest));
  });

  test('changing the preprocessing packs everything again and says why; the same preprocessing is up to date', async () => {
    // GIVEN
    const source = fixtureSource();
    const output = folder('out');
    await pack(source, {}, output);

    // WHEN
    const resized = await pack(source, { preprocessing: { shorterSide: 64 } }, output);
    const again = await pack(source, { preprocessing: { shorterSide: 64 } }, output);
    const requality = await pack(source, { preprocessing: { shorterSide: 64, jpegQuality: 70 } }, output);
    const off = await pack(source, {}, output);

    // THEN
    expect(resized.fullRepackReason).toBe('the image preprocessing changed from none to shorter side 64 px, JPEG quality 90 (sharp 0.35.5, libvips 8.18.7)');
    expect(again.upToDate).toBe(true);
    expect(requality.fullRepackReason).toBe('the image preprocessing changed from shorter side 64 px, JPEG quality 90 (sharp 0.35.5, libvips 8.18.7) '
      + 'to shorter side 64 px, JPEG quality 70 (sharp 0.35.5, libvips 8.18.7)');
    expect(requality.manifest.sizing.reusedShards).toBe(0);
    expect(off.fullRepackReason).toMatch(/^the image preprocessing changed from shorter side 64 px, JPEG quality 70 .* to none$/);
    expect(off.manifest.preprocessing).toBeUndefined();
  });

  test('an incremental repack with the same preprocessing reuses the unchanged shards and preprocesses only the new files', async () => {
    // GIVEN
    const source = fixtureSource(3);
    const output = folder('out');
    const options = { preprocessing: { shorterSide: 48 }, targetShardBytes: 1024 * 1024 };
    await pack(source, { ...options, consumers: 1 }, output);
    writeFiles(source, { 'photos/new.png': fs.readFileSync(path.join(FIXTURES, 'pillow-palette.png')) });

    // WHEN
    const repacked = await pack(source, options, output);
    const records = decodeWithPillow(output);

    // THEN
    expect(repacked.fullRepackReason).toBeUndefined();
    expect(repacked.manifest.preprocessing).toMatchObject({ shorterSide: 48 });
    expect(records.get('new.png')).toMatchObject({ formatFeature: 'jpeg', width: 72, height: 48 });
  });

  test.each<[ImagePreprocessing, RegExp]>([
    [{ shorterSide: 0 }, /^preprocessing\.shorterSide must be a whole number between 1 and 16384, got 0$/],
    [{ longerSide: 16_385 }, /^preprocessing\.longerSide must be a whole number between 1 and 16384, got 16385$/],
    [{ jpegQuality: 101 }, /^preprocessing\.jpegQuality must be a whole number between 1 and 100, got 101$/],
    [{ jpegQuality: 2.5 }, /^preprocessing\.jpegQuality must be a whole number between 1 and 100, got 2.5$/],
  ])('settings out of range fail the run before anything is written: %j', async (preprocessing, message) => {
    // GIVEN
    const source = fixtureSource();
    const output = folder('out');

    // WHEN
    const packing = pack(source, { preprocessing }, output);

    // THEN
    await expect(packing).rejects.toThrow(message);
    expect(fs.readdirSync(output)).toEqual([]);
  });
});
