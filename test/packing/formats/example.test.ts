import type {
  Features} from '../../../lambda/packing/formats/example';
import {
  decodeExample,
  encodeExample,
  exampleEncoding,
  imageExampleEncoding,
} from '../../../lambda/packing/formats/example';
import { encodedBytes, encodedToBuffer } from '../../../lambda/packing/formats/encoded';
import { FormatError } from '../../../lambda/packing/formats/shard-format';
import { frameTfRecord, readTfRecords } from '../../../lambda/packing/formats/tfrecord';
import { seededBytes } from '../../support/local-files';
import { hex, randomBytes, readExternal, seededRandom } from './support';

/** A length-delimited protobuf field with a one-byte tag, for hand-built messages. */
function field(tag: number, ...body: Buffer[]): Buffer {
  const content = Buffer.concat(body);
  const length: number[] = [];
  let n = content.length;
  while (n >= 0x80) {
    length.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  length.push(n);
  return Buffer.concat([Buffer.from([tag, ...length]), content]);
}

/** `Example { features { feature { key: name, value: <featureBody> } } }`. */
function exampleWith(name: string, featureBody: Buffer): Buffer {
  return field(0x0a, field(0x0a, field(0x0a, Buffer.from(name)), field(0x12, featureBody)));
}

describe('encodeExample / decodeExample', () => {
  const singles = readExternal('tensorflow-singles.tfrecords');
  const payloads = [...readTfRecords(singles)].map((r) => r.payload);

  test('decodes the three Examples TensorFlow wrote', () => {
    // WHEN
    const decoded = payloads.map((p) => decodeExample(p));
    // THEN
    expect(decoded).toEqual([
      { int_feature: { int64List: [42] } },
      { float_feature: { floatList: [Math.fround(3.14)] } },
      { byte_feature: { bytesList: [Buffer.from([0x40, 0x41, 0x42, 0x43, 0x44])] } },
    ]);
  });

  test('re-encodes them byte for byte, and the whole file with them', () => {
    // WHEN
    const reencoded = payloads.map((p) => encodeExample(decodeExample(p)));
    const file = Buffer.concat(reencoded.map((e) => encodedToBuffer(frameTfRecord(encodedBytes(e)))));
    // THEN
    reencoded.forEach((bytes, i) => expect(bytes).toEqual(payloads[i]));
    expect(file).toEqual(singles);
  });

  test.each([
    [{ int_feature: { int64List: [42] } }, '0a16 0a14 0a0b 696e745f66656174757265 1205 1a03 0a01 2a'],
    [{ float_feature: { floatList: [3.14] } }, '0a1b 0a19 0a0d 666c6f61745f66656174757265 1208 1206 0a04 c3f54840'],
    [{ byte_feature: { bytesList: [Buffer.from('@ABCD')] } }, '0a1b 0a19 0a0c 627974655f66656174757265 1209 0a07 0a05 4041424344'],
  ])('encodes %j as the reference bytes', (features, expected) => {
    // WHEN
    const bytes = encodeExample(features as Features);
    // THEN
    expect(bytes).toEqual(hex(expected));
  });

  test('sorts features by the UTF-8 bytes of their names, whatever the insertion order', () => {
    // GIVEN names whose UTF-16 order differs from their UTF-8 order (U+FFFF vs U+1F600)
    const value = { int64List: [1] };
    const names = ['😀', 'b', '\uffff', 'é', 'a'];
    // WHEN
    const forward = encodeExample(Object.fromEntries(names.map((n) => [n, value])));
    const backward = encodeExample(Object.fromEntries([...names].reverse().map((n) => [n, value])));
    // THEN
    expect(forward).toEqual(backward);
    expect(Object.keys(decodeExample(forward))).toEqual(['a', 'b', 'é', '\uffff', '😀']);
  });

  test('encodes negative int64 as 10-byte two\'s complement varints (not zigzag)', () => {
    // WHEN
    const bytes = encodeExample({ n: { int64List: [-1] } });
    // THEN
    expect(bytes.subarray(bytes.length - 10)).toEqual(hex('ffffffffffffffffff01'));
    expect(decodeExample(bytes)).toEqual({ n: { int64List: [-1] } });
  });

  test('round-trips the int64 range: safe integers as numbers, the rest as bigints', () => {
    // GIVEN
    const values = [0, 1, 127, 128, 300, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER,
      -(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n, -(2n ** 53n)];
    // WHEN
    const decoded = decodeExample(encodeExample({ v: { int64List: values } }));
    // THEN
    expect(decoded).toEqual({
      v: { int64List: [0, 1, 127, 128, 300, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER,
        -(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n, -(2n ** 53n)] },
    });
  });

  test('bigints that are safe integers encode like the numbers', () => {
    // WHEN / THEN
    expect(encodeExample({ v: { int64List: [5n, -7n] } })).toEqual(encodeExample({ v: { int64List: [5, -7] } }));
  });

  test.each([
    [{ v: { int64List: [1.5] } }],
    [{ v: { int64List: [2 ** 53] } }],
    [{ v: { int64List: [2n ** 63n] } }],
    [{ v: { int64List: [-(2n ** 63n) - 1n] } }],
    [{ v: {} }],
    [{ v: { int64List: [1], floatList: [1] } }],
  ])('rejects %p', (features) => {
    // WHEN / THEN
    expect(() => encodeExample(features as unknown as Features)).toThrow(RangeError);
  });

  test('stores floats as float32, NaN and infinities included', () => {
    // WHEN
    const decoded = decodeExample(encodeExample({ f: { floatList: [0.1, -0, Infinity, -Infinity, NaN, 1e39] } }));
    // THEN
    expect(decoded).toEqual({ f: { floatList: [Math.fround(0.1), -0, Infinity, -Infinity, NaN, Infinity] } });
  });

  test('round-trips empty lists, empty values, empty names and a feature called __proto__', () => {
    // GIVEN
    const features: Features = Object.fromEntries([
      ['', { bytesList: [Buffer.alloc(0)] }],
      ['b', { bytesList: [] }],
      ['f', { floatList: [] }],
      ['i', { int64List: [] }],
      ['__proto__', { int64List: [3] }],
    ]);
    // WHEN
    const decoded = decodeExample(encodeExample(features));
    // THEN
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.keys(decoded).sort()).toEqual(['', '__proto__', 'b', 'f', 'i']);
    expect(decoded['__proto__']).toEqual({ int64List: [3] });
    expect(decoded['']).toEqual({ bytesList: [Buffer.alloc(0)] });
    expect(decoded.b).toEqual({ bytesList: [] });
    expect(decoded.f).toEqual({ floatList: [] });
    expect(decoded.i).toEqual({ int64List: [] });
  });

  test('decodes unpacked int64 and float lists, as older writers produce', () => {
    // GIVEN int64_list { value: 42 value: -1 } and float_list { value: 1.5 } written field by field
    const int64s = exampleWith('i', field(0x1a, hex('082a 08ffffffffffffffffff01')));
    const floats = exampleWith('f', field(0x12, hex('0d 0000c03f')));
    // WHEN / THEN
    expect(decodeExample(int64s)).toEqual({ i: { int64List: [42, -1] } });
    expect(decodeExample(floats)).toEqual({ f: { floatList: [1.5] } });
  });

  test('merges repeated list fields and skips unknown fields', () => {
    // GIVEN packed 1, 2 then packed 3, plus an unknown varint field 9 and fixed32 field 10 in the Example
    const body = field(0x1a, hex('0a02 0102'), hex('0a01 03'));
    const example = Buffer.concat([exampleWith('i', body), hex('4807'), hex('5501020304')]);
    // WHEN / THEN
    expect(decodeExample(example)).toEqual({ i: { int64List: [1, 2, 3] } });
  });

  test('returns bytes values as views into the Example', () => {
    // GIVEN
    const example = encodeExample({ b: { bytesList: [Buffer.from('hello')] } });
    // WHEN
    const value = (decodeExample(example).b as { bytesList: Buffer[] }).bytesList[0];
    // THEN
    expect(value.buffer).toBe(example.buffer);
  });

  test.each([
    ['a truncated Example', hex('0a16 0a14'), /Example at byte 1: length 22 runs past the end/],
    ['a truncated varint', hex('0a16 0a14 0a0b 696e745f66656174757265 1205 1a03 0a01 aa'), /Example at byte 23: truncated varint/],
    ['a key that is not UTF-8', exampleWith('\u0000', field(0x1a)).fill(0xff, 6, 7), /Example at byte 4: feature name is not valid UTF-8/],
    ['a feature without a list', exampleWith('x', Buffer.alloc(0)), /Example at byte 2: feature 'x' has no bytes_list/],
    ['a group wire type', hex('0b'), /Example at byte 0: unsupported wire type 3/],
    ['field number 0', hex('0200'), /Example at byte 0: field number 0/],
    ['a packed float list of 3 bytes', exampleWith('f', field(0x12, hex('0a03 000000'))), /Example at byte 11: packed float list of 3 bytes/],
  ])('rejects %s with a FormatError naming the offset', (_what, bytes, message) => {
    // WHEN / THEN
    expect(() => decodeExample(bytes)).toThrow(FormatError);
    expect(() => decodeExample(bytes)).toThrow(message);
  });

  test('round-trips random features (seeded)', () => {
    const random = seededRandom(2024);
    for (let round = 0; round < 100; round++) {
      // GIVEN
      const features: Record<string, { bytesList: Buffer[] } | { int64List: number[] } | { floatList: number[] }> = {};
      const count = Math.floor(random() * 5);
      for (let i = 0; i < count; i++) {
        const name = `f${Math.floor(random() * 1000)}/${String.fromCodePoint(0x20 + Math.floor(random() * 0x2000))}`;
        const kind = Math.floor(random() * 3);
        const length = Math.floor(random() * 4);
        if (kind === 0) features[name] = { bytesList: Array.from({ length }, () => randomBytes(random, Math.floor(random() * 2000))) };
        else if (kind === 1) features[name] = { int64List: Array.from({ length }, () => Math.floor((random() - 0.5) * 2 ** 40)) };
        else features[name] = { floatList: Array.from({ length }, () => Math.fround((random() - 0.5) * 1e6)) };
      }
      // WHEN
      const encoding = exampleEncoding(features);
      const bytes = encodedToBuffer(encoding);
      // THEN
      expect(bytes.length).toBe(encoding.size);
      expect(decodeExample(bytes)).toEqual(features);
      expect(encodeExample(decodeExample(bytes))).toEqual(bytes);
    }
  });
});

describe('imageExampleEncoding', () => {
  test('holds the label, the image bytes, the file name and the format', () => {
    // GIVEN
    const image = randomBytes(seededRandom(3), 150_000);
    // WHEN
    const bytes = encodedToBuffer(imageExampleEncoding({ encoded: image, label: 7, filename: 'cat/0001.jpg', format: 'jpeg' }));
    // THEN
    expect(decodeExample(bytes)).toEqual({
      'image/class/label': { int64List: [7] },
      'image/encoded': { bytesList: [image] },
      'image/filename': { bytesList: [Buffer.from('cat/0001.jpg')] },
      'image/format': { bytesList: [Buffer.from('jpeg')] },
    });
  });

  test('matches the generic encoder byte for byte', () => {
    // GIVEN
    const image = randomBytes(seededRandom(4), 5000);
    // WHEN
    const direct = encodedToBuffer(imageExampleEncoding({ encoded: image, label: 0, filename: 'a.png', format: 'png' }));
    const generic = encodeExample({
      'image/format': { bytesList: [Buffer.from('png')] },
      'image/encoded': { bytesList: [image] },
      'image/filename': { bytesList: [Buffer.from('a.png')] },
      'image/class/label': { int64List: [0] },
    });
    // THEN
    expect(direct).toEqual(generic);
  });

  test('matches the generic encoder at varint boundaries of every length and label (seeded)', () => {
    // GIVEN sizes and labels on both sides of 1-, 2- and 3-byte varints, unicode file names
    const random = seededRandom(17);
    const lengths = [0, 1, 100, 127, 128, 16_383, 16_384, 2_097_152];
    const labels = [-1, 0, 1, 127, 128, 16_383, 16_384, 2 ** 31, Number.MAX_SAFE_INTEGER];
    for (const imageLength of lengths) {
      const image = seededBytes(`image-${imageLength}`, imageLength);
      for (const label of labels) {
        const filename = 'é'.repeat(Math.floor(random() * 130)) + '/😺.jpg';
        const format = random() < 0.5 ? '' : 'jpeg';
        // WHEN
        const direct = encodedToBuffer(imageExampleEncoding({ encoded: image, label, filename, format }));
        // THEN
        const features: Features = {
          'image/encoded': { bytesList: [image] },
          'image/filename': { bytesList: [Buffer.from(filename)] },
          'image/format': { bytesList: [Buffer.from(format)] },
          ...(label === -1 ? {} : { 'image/class/label': { int64List: [label] } }),
        };
        expect(direct.equals(encodeExample(features))).toBe(true);
      }
    }
  });

  test('omits the label when it is -1', () => {
    // WHEN
    const features = decodeExample(encodedToBuffer(
      imageExampleEncoding({ encoded: Buffer.from('x'), label: -1, filename: 'x', format: '' })));
    // THEN
    expect(Object.keys(features)).toEqual(['image/encoded', 'image/filename', 'image/format']);
  });

  test('writes in place at an offset, leaving the bytes around it alone', () => {
    // GIVEN
    const encoding = imageExampleEncoding({ encoded: Buffer.alloc(100, 9), label: 1, filename: 'x', format: 'png' });
    const target = Buffer.alloc(encoding.size + 8, 0xee);
    // WHEN
    encoding.writeTo(target, 4);
    // THEN
    expect(target.subarray(0, 4)).toEqual(Buffer.alloc(4, 0xee));
    expect(target.subarray(4 + encoding.size)).toEqual(Buffer.alloc(4, 0xee));
    expect(target.subarray(4, 4 + encoding.size)).toEqual(encodedToBuffer(encoding));
  });

  test('stores unicode filenames as UTF-8', () => {
    // GIVEN
    const filename = 'chats/Ça va — 日本語 😺.jpeg';
    // WHEN
    const features = decodeExample(encodedToBuffer(
      imageExampleEncoding({ encoded: Buffer.from('x'), label: 2, filename, format: 'jpeg' })));
    // THEN
    const stored = (features['image/filename'] as { bytesList: Buffer[] }).bytesList[0];
    expect(stored).toEqual(Buffer.from(filename, 'utf8'));
    expect(stored.toString('utf8')).toBe(filename);
  });

  test.each([-2, 1.5, NaN])('rejects label %d', (label) => {
    // WHEN / THEN
    expect(() => imageExampleEncoding({ encoded: Buffer.from('x'), label, filename: 'x', format: '' })).toThrow(RangeError);
  });
});
