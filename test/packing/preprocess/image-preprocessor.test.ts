import * as fs from 'node:fs';
import * as path from 'node:path';
import { ImagePreprocessor, UndecodableImageError } from '../../../lambda/packing/preprocess/image-preprocessor';

const FIXTURES = path.resolve(__dirname, '../../fixtures/images/preprocess');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name));

describe('ImagePreprocessor', () => {
  const preprocessor = new ImagePreprocessor({ shorterSide: 32 });

  test.each<[string, Buffer, string]>([
    ['a PNG cut in half', fixture('pillow-alpha.png').subarray(0, 200), 'truncated png image (it ends before its end marker)'],
    ['a JPEG cut in half', fixture('pillow-baseline.jpg').subarray(0, 800), 'truncated jpeg image (it ends before its end marker)'],
    ['an SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'),
      "unsupported image format 'svg' (accepted: jpeg, png, webp, tiff, gif)"],
    ['an empty file', Buffer.alloc(0), 'not an image (no image format recognised in its bytes)'],
  ])('%s is an UndecodableImageError whose reason comes from the bytes', async (_what, data, reason) => {
    // WHEN
    const processing = preprocessor.process(data);

    // THEN
    await expect(processing).rejects.toThrow(UndecodableImageError);
    await expect(processing).rejects.toThrow(reason);
  });

  test('the same file gives the same reason however many images are decoded beside it (libvips keeps one error buffer per process)', async () => {
    // GIVEN
    const truncated = fixture('pillow-truncated.jpg');
    const whole = fixture('pillow-baseline.jpg');

    // WHEN
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => preprocessor.process(i % 2 ? truncated : whole)
      .then(() => 'ok', (error: Error) => error.message)));

    // THEN
    expect(new Set(outcomes.filter((_, i) => i % 2))).toEqual(new Set(['truncated jpeg image (it ends before its end marker)']));
    expect(new Set(outcomes.filter((_, i) => i % 2 === 0))).toEqual(new Set(['ok']));
  });
});
