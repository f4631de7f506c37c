import * as fs from 'node:fs';
import * as path from 'node:path';
import { ImagePreprocessor, UndecodableImageError } from '../../../lambda/packing/preprocess/image-preprocessor';
import { loadSharp } from '../../../lambda/packing/preprocess/load-sharp';

const FIXTURES = path.resolve(__dirname, '../../fixtures/images/preprocess');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name));

/** The JPEG with its frame header (SOF0 or SOF2) claiming another size: a header bomb when larger. */
function withFrameSize(jpeg: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(jpeg);
  const sof = Math.max(copy.indexOf(Buffer.from([0xff, 0xc0])), copy.indexOf(Buffer.from([0xff, 0xc2])));
  copy.writeUInt16BE(height, sof + 5);
  copy.writeUInt16BE(width, sof + 7);
  return copy;
}

describe('ImagePreprocessor', () => {
  const preprocessor = new ImagePreprocessor({ shorterSide: 32 });

  test.each<[string, Buffer, string]>([
    ['a PNG cut in half', fixture('pillow-alpha.png').subarray(0, 200), 'truncated png image (it ends inside chunk "IDAT")'],
    ['a JPEG cut in half', fixture('pillow-baseline.jpg').subarray(0, 800), 'truncated jpeg image (premature end of data: scan 1\'s data stops in MCU 10 of 40)'],
    ['a JPEG cut in half, FF D9 appended', Buffer.concat([fixture('pillow-baseline.jpg').subarray(0, 800), Buffer.from([0xff, 0xd9])]),
      'truncated jpeg image (premature end of data: scan 1\'s data stops in MCU 10 of 40)'],
    ['a JPEG whose header claims 16000 x 16000 px', withFrameSize(fixture('pillow-baseline.jpg'), 16000, 16000),
      'truncated jpeg image (premature end of data: scan 1\'s data stops in MCU 41 of 1000000)'],
    ['a progressive JPEG whose header claims 16000 x 16000 px', withFrameSize(fixture('pillow-progressive.jpg'), 16000, 16000),
      'corrupt jpeg image (scan 1 has a bad Huffman code in MCU 40 of 1000000)'],
    ['a JPEG whose header claims 20000 x 20000 px', withFrameSize(fixture('pillow-baseline.jpg'), 20000, 20000),
      'image too large: 20000 x 20000 px, over the limit of 268402689 px'],
    ['an SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'),
      "unsupported image format 'svg' (accepted: jpeg, png, webp, tiff, gif)"],
    ['a BMP', Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]), "unsupported image format 'bmp' (accepted: jpeg, png, webp, tiff, gif)"],
    ['an empty file', Buffer.alloc(0), 'not an image (0 bytes)'],
    ['a text file', Buffer.from('notes, not a picture\n'), 'not an image (no image format recognised in its bytes)'],
  ])('%s is an UndecodableImageError whose reason comes from the bytes', async (_what, data, reason) => {
    // WHEN
    const processing = preprocessor.process(data);

    // THEN
    await expect(processing).rejects.toThrow(UndecodableImageError);
    await expect(processing).rejects.toThrow(reason);
  });

  test('an image whose resized output would be over libjpeg\'s 65,500 px a side is refused with the cause, and a cap on the longer side suggested', async () => {
    // GIVEN a valid 100000 x 300 grey PNG
    const png = await loadSharp()(Buffer.alloc(100_000 * 300, 0x80), { raw: { width: 100_000, height: 300, channels: 1 } }).png().toBuffer();

    // WHEN
    const processing = new ImagePreprocessor({ shorterSide: 256 }).process(png);

    // THEN
    await expect(processing).rejects.toThrow(new UndecodableImageError('output too large for JPEG: 100000 x 300 px would be stored at 85333 x 256 px, '
      + 'over libjpeg\'s 65,500 px a side; cap the longer side (--max-side, or longerSide) to store it'));
    await expect(new ImagePreprocessor({ shorterSide: 256, longerSide: 4096 }).process(png)).resolves.toBeInstanceOf(Buffer);
  });

  test('the same file gives the same reason however many images are decoded beside it (libvips keeps one error buffer per process)', async () => {
    // GIVEN
    const truncated = fixture('pillow-truncated.jpg');
    const whole = fixture('pillow-baseline.jpg');

    // WHEN
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => preprocessor.process(i % 2 ? truncated : whole)
      .then(() => 'ok', (error: Error) => error.message)));

    // THEN
    expect(new Set(outcomes.filter((_, i) => i % 2))).toEqual(new Set(['truncated jpeg image (premature end of data: scan 1\'s data stops in MCU 12 of 40)']));
    expect(new Set(outcomes.filter((_, i) => i % 2 === 0))).toEqual(new Set(['ok']));
  });
});
