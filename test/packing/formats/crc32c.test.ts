import { crc32c, crc32cCombine, crc32cOfRange, maskCrc32c, unmaskCrc32c } from '../../../lambda/packing/formats/crc32c';
import { seededRandom } from './support';

// RFC 3720 B.4, as in TensorFlow's tsl/lib/hash/crc32c_test.cc.
const ISCSI_READ_PDU = Buffer.from([
  0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
  0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
]);
const ascending = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const descending = Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i));

describe('crc32c', () => {
  test.each([
    ['32 zero bytes', Buffer.alloc(32, 0x00), 0x8a9136aa],
    ['32 0xff bytes', Buffer.alloc(32, 0xff), 0x62a8ab43],
    ['bytes 0..31', ascending, 0x46dd794e],
    ['bytes 31..0', descending, 0x113fdb5c],
    ['the 48-byte iSCSI read PDU', ISCSI_READ_PDU, 0xd9963a56],
    ['its first 41 bytes', ISCSI_READ_PDU.subarray(0, 41), 0xdd1b19be],
    ['its bytes 1..45', ISCSI_READ_PDU.subarray(1, 45), 0x4930c4b1],
    ['"123456789"', Buffer.from('123456789'), 0xe3069283],
    ['"The quick brown fox jumps over the lazy dog"', Buffer.from('The quick brown fox jumps over the lazy dog'), 0x22620404],
    ['no bytes', Buffer.alloc(0), 0],
  ])('matches the published CRC-32C of %s', (_name, data, expected) => {
    // WHEN
    const crc = crc32c(data);
    // THEN
    expect(crc).toBe(expected);
  });

  test('returns unsigned values', () => {
    // GIVEN a vector whose CRC has the top bit set
    // WHEN
    const crc = crc32c(Buffer.alloc(32, 0x00));
    // THEN
    expect(crc).toBeGreaterThan(0x7fffffff);
  });

  test('continues from an initial CRC, so chunks need no concatenation', () => {
    // GIVEN random data cut at several places
    const random = seededRandom(7);
    const data = Buffer.from(Array.from({ length: 10_000 }, () => Math.floor(random() * 256)));
    for (const cut of [0, 1, 3, 4096, 9999, 10_000]) {
      // WHEN
      const chained = crc32c(data.subarray(cut), crc32c(data.subarray(0, cut)));
      // THEN
      expect(chained).toBe(crc32c(data));
    }
  });
});

describe('crc32cOfRange', () => {
  test('matches the published vectors whether the JS table (short ranges) or the addon computes it', () => {
    // WHEN / THEN: 32 and 45 bytes go through the table, 48 and more through the addon
    expect(crc32cOfRange(ascending, 0, 32)).toBe(0x46dd794e);
    expect(crc32cOfRange(ISCSI_READ_PDU, 1, 45)).toBe(0x4930c4b1);
    expect(crc32cOfRange(Buffer.concat([ISCSI_READ_PDU, ISCSI_READ_PDU]), 48, 96)).toBe(0xd9963a56);
    expect(crc32cOfRange(ISCSI_READ_PDU, 7, 7)).toBe(0);
  });

  test('equals the addon on every range length from 0 to 200 bytes at several offsets (seeded)', () => {
    // GIVEN
    const random = seededRandom(11);
    const data = Buffer.from(Array.from({ length: 300 }, () => Math.floor(random() * 256)));
    for (const start of [0, 1, 3, 50]) {
      for (let length = 0; length <= 200; length++) {
        // WHEN / THEN
        expect(crc32cOfRange(data, start, start + length)).toBe(crc32c(data.subarray(start, start + length)));
      }
    }
  });
});

describe('crc32cCombine', () => {
  test('gives the CRC of a concatenation from the CRCs of its parts (seeded lengths, 0 to 1 MiB)', () => {
    // GIVEN
    const random = seededRandom(21);
    const data = Buffer.from(Array.from({ length: 1 << 20 }, () => Math.floor(random() * 256)));
    for (const [cut, end] of [[0, 0], [0, 5], [5, 5], [1, 2], [100, 5100], [7, 1 << 20], [3, 123_460], [65_536, 131_072]]) {
      // WHEN
      const combined = crc32cCombine(crc32c(data.subarray(0, cut)), crc32c(data.subarray(cut, end)), end - cut);
      // THEN
      expect(combined).toBe(crc32c(data.subarray(0, end)));
    }
  });

  test('holds for a second part beyond 2^32 bits (600 MiB of zeros, checksummed a MiB at a time)', () => {
    // GIVEN
    const head = Buffer.from('head');
    const mib = Buffer.alloc(1 << 20);
    let zeros = 0;
    let whole = crc32c(head);
    for (let i = 0; i < 600; i++) {
      zeros = crc32c(mib, zeros);
      whole = crc32c(mib, whole);
    }
    // WHEN / THEN
    expect(crc32cCombine(crc32c(head), zeros, 600 * (1 << 20))).toBe(whole);
  });
});

describe('maskCrc32c', () => {
  // Apache Beam's tfrecordio_test.py.
  test.each([
    ['32 zero bytes', Buffer.alloc(32, 0x00), 0x0fd7fffa],
    ['32 0xff bytes', Buffer.alloc(32, 0xff), 0xf909b029],
    ['"foo"', Buffer.from('foo'), 0xfebe8a61],
    ['u64le(3)', Buffer.from([3, 0, 0, 0, 0, 0, 0, 0]), 0x0e4999b0],
  ])('matches the published masked CRC of %s', (_name, data, expected) => {
    // WHEN
    const masked = maskCrc32c(crc32c(data));
    // THEN
    expect(masked).toBe(expected);
  });

  test.each([0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xa282ead8, 0x5d7d1527])('unmask inverts mask for %d', (crc) => {
    // WHEN
    const masked = maskCrc32c(crc);
    // THEN
    expect(masked).toBeGreaterThanOrEqual(0);
    expect(masked).toBeLessThanOrEqual(0xffffffff);
    expect(unmaskCrc32c(masked)).toBe(crc);
  });
});
