import type { ImageCheckRules } from '../../../lambda/packing/image-check/image-check';
import { checkImage, imageCheckFailure, PREPROCESSING_RULES, READER_RULES } from '../../../lambda/packing/image-check/image-check';
import { temporaryFolders } from '../../support/local-files';
import { writeProbeCorpus } from './probe-corpus';

const folder = temporaryFolders();

const READERS = READER_RULES;
const HINT = '; preprocessing (--resize, --max-side) re-encodes webp, tiff, gif and CMYK JPEGs as JPEG';

function reasonOf(data: Buffer, rules: ImageCheckRules = READERS): string | undefined {
  return imageCheckFailure(data, rules);
}

describe('the pack-time image check', () => {
  let corpus: Map<string, Buffer>;
  beforeAll(() => {
    corpus = writeProbeCorpus(folder('corpus'));
  });

  test('every valid JPEG and PNG the readers decode passes, with its size read from its header', () => {
    const valid = [...corpus.keys()].filter((name) => name.startsWith('ok-'));
    expect(valid.length).toBeGreaterThan(10);
    for (const name of valid) expect([name, reasonOf(corpus.get(name)!)]).toEqual([name, undefined]);
    expect(checkImage(corpus.get('ok-baseline.jpg')!, READERS)).toMatchObject({ format: 'jpeg', width: 1600, height: 1200 });
    expect(checkImage(corpus.get('ok-palette.png')!, READERS)).toMatchObject({ format: 'png', width: 120, height: 80 });
  });

  test.each([
    ['bad-text.jpg', 'not an image (no image format recognised in its bytes)'],
    ['bad-empty.jpg', 'not an image (0 bytes)'],
    ['bad-ten-bytes.jpg', 'truncated jpeg image (it ends inside marker 0xe0\'s segment)'],
    ['bad-cut-no-eoi.jpg', /^truncated jpeg image \(premature end of data: scan 1's data stops in MCU \d+ of 7500\)$/],
    ['bad-cut-with-eoi.jpg', /^truncated jpeg image \(premature end of data: scan 1's data stops in MCU \d+ of 7500\)$/],
    ['bad-progressive-cut-with-eoi.jpg', /^truncated jpeg image \(/],
    ['bad-header-bomb.jpg', 'image too large: 16000 x 16000 px, over the limit of 178956970 px'],
    ['bad-progressive-header-bomb.jpg', 'image too large: 16000 x 16000 px, over the limit of 178956970 px'],
    ['bad-page.html', 'not an image (no image format recognised in its bytes)'],
    ['bad-drawing.svg', 'unsupported image format \'svg\' (accepted: jpeg, png' + HINT + ')'],
    ['bad-image.bmp', 'unsupported image format \'bmp\' (accepted: jpeg, png' + HINT + ')'],
    ['bad-jp2-image.jp2', 'unsupported image format \'jp2\' (accepted: jpeg, png' + HINT + ')'],
    ['resize-only-cmyk.jpg', 'unsupported image format \'jpeg\' (CMYK: the training readers cannot convert it to RGB' + HINT + ')'],
    ['bad-png-cut.png', /^truncated png image \(it ends inside chunk "IDAT"\)$/],
    ['bad-png-short-idat.png', /^truncated png image \(its image data holds \d+ of the 28880 bytes its header declares\)$/],
    ['bad-png-crc.png', /^corrupt png image \(chunk "IDAT" at byte \d+ fails its CRC\)$/],
  ])('%s is refused: %s', (name, reason) => {
    expect(reasonOf(corpus.get(name)!)).toEqual(typeof reason === 'string' ? reason : expect.stringMatching(reason));
  });

  test('a header bomb within the pixel limit is refused because its data cannot hold the blocks its header declares', () => {
    const rules = { ...READERS, maxPixels: 2 ** 40 };
    expect(reasonOf(corpus.get('bad-header-bomb.jpg')!, rules)).toMatch(/^truncated jpeg image \(premature end of data: scan 1's data stops in MCU \d+ of 1000000\)$/);
    expect(reasonOf(corpus.get('bad-progressive-header-bomb.jpg')!, rules)).toMatch(/^truncated jpeg image \(premature end of data: scan 1's data stops/);
  });

  test.each(['ok-small.jpg', 'ok-restart.jpg', 'ok-progressive.jpg'])('%s cut at any byte of its scans, FF D9 appended, is refused; fill bytes before a marker are not', (name) => {
    const jpeg = corpus.get(name)!;
    const eoi = jpeg.lastIndexOf(Buffer.from([0xff, 0xd9]));
    const scanData = jpeg.indexOf(Buffer.from([0xff, 0xda])) + 4 + jpeg.readUInt16BE(jpeg.indexOf(Buffer.from([0xff, 0xda])) + 2) - 2;
    // Every cut of a small file; of a large one (a check reads it in milliseconds), 40 cuts at each end and 40 between.
    const length = eoi - scanData;
    const cuts = length < 20_000 ? Array.from({ length: length - 1 }, (_, i) => scanData + 1 + i)
      : Array.from({ length: 120 }, (_, i) => (i < 40 ? scanData + 1 + i : i < 80 ? eoi - (i - 39) : scanData + Math.floor(((i - 80) / 40) * length)));
    const admitted = cuts.filter((cut) => reasonOf(Buffer.concat([jpeg.subarray(0, cut), Buffer.from([0xff, 0xd9])])) === undefined);
    expect(admitted).toEqual([]);
    const filled = Buffer.concat([jpeg.subarray(0, eoi), Buffer.alloc(5, 0xff), jpeg.subarray(eoi)]);
    expect(reasonOf(filled)).toBeUndefined();
  });

  test('with preprocessing, CMYK JPEGs pass (sharp converts them), BMP and JPEG 2000 are still unsupported', () => {
    expect(reasonOf(corpus.get('resize-only-cmyk.jpg')!, PREPROCESSING_RULES)).toBeUndefined();
    expect(reasonOf(corpus.get('bad-image.bmp')!, PREPROCESSING_RULES)).toBe('unsupported image format \'bmp\' (accepted: jpeg, png, webp, tiff, gif)');
    expect(reasonOf(corpus.get('bad-jp2-image.jp2')!, PREPROCESSING_RULES)).toBe('unsupported image format \'jp2\' (accepted: jpeg, png, webp, tiff, gif)');
  });
});
