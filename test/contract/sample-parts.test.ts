import { imagePartOf, partKindOf, sampleKeyOf } from '../../lib/contract/sample-parts';

describe('sampleKeyOf', () => {
  test.each([
    ['train/0001.jpg', 'train/0001', 'jpg'],
    ['train/0001.mask.png', 'train/0001', 'mask.png'],
    ['a.b/0001.json', 'a.b/0001', 'json'],
    ['README', 'README', ''],
    ['dir/.hidden', 'dir/.hidden', ''],
    ['dir/.hidden.txt', 'dir/.hidden', 'txt'],
  ])('%s is sample %s, part %s', (relativeKey, key, part) => {
    expect(sampleKeyOf(relativeKey)).toEqual({ key, part });
  });
});

describe('partKindOf', () => {
  test.each([
    ['jpg', 'image'],
    ['JPEG', 'image'],
    ['mask.png', 'image'],
    ['json', 'json'],
    ['meta.json', 'json'],
    ['txt', 'text'],
    ['npy', 'bytes'],
    ['', 'bytes'],
  ])('%s is %s', (part, kind) => {
    expect(partKindOf(part)).toBe(kind);
  });
});

describe('imagePartOf', () => {
  test('the first part whose whole name is an image extension, not an image of another role', () => {
    expect(imagePartOf(['json', 'mask.png', 'jpg'])).toBe('jpg');
    expect(imagePartOf(['mask.png', 'json'])).toBeUndefined();
    expect(imagePartOf(['PNG', 'jpg'])).toBe('PNG');
  });
});
