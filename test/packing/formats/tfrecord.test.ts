import { crc32c } from '../../../lambda/packing/formats/crc32c';
import { encodedBytes, encodedToBuffer } from '../../../lambda/packing/formats/encoded';
import { FormatError } from '../../../lambda/packing/formats/shard-format';
import {
  TFRECORD_OVERHEAD,
  frameTfRecord,
  readTfRecords,
  tfrecordHeader,
} from '../../../lambda/packing/formats/tfrecord';
import { randomBytes, readExternal, seededRandom } from './support';

/** How TensorFlow frames `foo` and `bar` (Apache Beam's tfrecordio_test.py). */
const BEAM_FOO = Buffer.from('AwAAAAAAAACwmUkOZm9vYYq+/g==', 'base64');
const BEAM_FOO_BAR = Buffer.from('AwAAAAAAAACwmUkOZm9vYYq+/gMAAAAAAAAAsJlJDmJhckYA5cg=', 'base64');

function frame(payload: Buffer): Buffer {
  return encodedToBuffer(frameTfRecord(encodedBytes(payload)));
}

describe('TFRecord framing', () => {
  test('frames "foo" exactly as TensorFlow does', () => {
    // WHEN
    const framed = frame(Buffer.from('foo'));
    // THEN
    expect(framed.toString('hex')).toBe('0300000000000000b099490e666f6f618abefe');
    expect(framed).toEqual(BEAM_FOO);
    expect(TFRECORD_OVERHEAD).toBe(16);
  });

  test('frames "foo" and "bar" back to back as TensorFlow does', () => {
    // WHEN
    const shard = Buffer.concat([frame(Buffer.from('foo')), frame(Buffer.from('bar'))]);
    // THEN
    expect(shard).toEqual(BEAM_FOO_BAR);
  });

  test('frames in place at an offset, leaving the bytes around the record alone', () => {
    // GIVEN a payload of 5,000 bytes: its CRC is computed by the addon, the length's in JS
    const payload = randomBytes(seededRandom(1), 5000);
    const target = Buffer.alloc(7 + payload.length + TFRECORD_OVERHEAD + 5, 0xee);
    // WHEN
    const record = frameTfRecord(encodedBytes(payload));
    record.writeTo(target, 7);
    // THEN
    expect(record.size).toBe(payload.length + TFRECORD_OVERHEAD);
    expect(target.subarray(0, 7)).toEqual(Buffer.alloc(7, 0xee));
    expect(target.subarray(7 + record.size)).toEqual(Buffer.alloc(5, 0xee));
    expect([...readTfRecords(target.subarray(7, 7 + record.size))].map((r) => r.payload)).toEqual([payload]);
  });

  test('returns the CRC-32C of the whole framed record, so a shard checksum can be combined from it', () => {
    // GIVEN payloads of 0, 3 and 5,000 bytes
    for (const payload of [Buffer.alloc(0), Buffer.from('foo'), randomBytes(seededRandom(2), 5000)]) {
      const target = Buffer.alloc(payload.length + TFRECORD_OVERHEAD);
      // WHEN
      const crc = frameTfRecord(encodedBytes(payload)).writeTo(target, 0);
      // THEN
      expect(crc).toBe(crc32c(target));
    }
  });

  test('its header is the header tfrecordHeader makes', () => {
    // WHEN / THEN
    expect(frame(Buffer.from('foo')).subarray(0, 12)).toEqual(tfrecordHeader(3));
  });

  test('writes lengths beyond 4 GiB into both halves of the u64', () => {
    // WHEN
    const header = tfrecordHeader(2 ** 32 + 5);
    // THEN
    expect(header.readBigUInt64LE(0)).toBe(2n ** 32n + 5n);
  });

  test.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 1])('rejects payload length %d', (length) => {
    // WHEN / THEN
    expect(() => tfrecordHeader(length)).toThrow(RangeError);
  });
});

describe('readTfRecords', () => {
  test('reads the records TensorFlow wrote, at offsets 0, 40 and 85', () => {
    // GIVEN
    const shard = readExternal('tensorflow-singles.tfrecords');
    // WHEN
    const records = [...readTfRecords(shard)];
    // THEN
    expect(records.map((r) => [r.offset, r.size])).toEqual([[0, 40], [40, 45], [85, 45]]);
    expect(records.map((r) => r.payload.length)).toEqual([24, 29, 29]);
    expect(shard.length).toBe(130);
  });

  test('reframing the payloads gives back the file byte for byte', () => {
    // GIVEN
    const shard = readExternal('tensorflow-singles.tfrecords');
    // WHEN
    const reframed = Buffer.concat([...readTfRecords(shard)].map((r) => frame(Buffer.from(r.payload))));
    // THEN
    expect(reframed).toEqual(shard);
  });

  test('reads the Beam vectors', () => {
    // WHEN
    const payloads = [...readTfRecords(BEAM_FOO_BAR)].map((r) => r.payload.toString());
    // THEN
    expect(payloads).toEqual(['foo', 'bar']);
  });

  test('reads an empty shard as no records and an empty payload as a record', () => {
    // GIVEN
    const empty = frame(Buffer.alloc(0));
    // WHEN
    const none = [...readTfRecords(Buffer.alloc(0))];
    const one = [...readTfRecords(empty)];
    // THEN
    expect(none).toEqual([]);
    expect(one).toEqual([{ offset: 0, size: 16, payload: Buffer.alloc(0) }]);
  });

  test('returns views into the shard, not copies', () => {
    // GIVEN
    const shard = readExternal('tensorflow-singles.tfrecords');
    // WHEN
    const [first] = readTfRecords(shard);
    // THEN
    expect(first.payload.buffer).toBe(shard.buffer);
    expect(first.payload.byteOffset).toBe(shard.byteOffset + 12);
  });

  describe('on a corrupted copy of tensorflow-singles.tfrecords', () => {
    const original = readExternal('tensorflow-singles.tfrecords');

    function corrupted(change: (copy: Buffer) => Buffer): Buffer {
      return change(Buffer.from(original));
    }

    test.each([
      ['a length byte of the first record', 0, 0, /TFRecord at byte 0: bad length crc/],
      ['the length crc of the second record', 40 + 9, 40, /TFRecord at byte 40: bad length crc/],
      ['a data byte of the second record', 40 + 12 + 5, 40, /TFRecord at byte 40: bad data crc/],
      ['the data crc of the third record', 129, 85, /TFRecord at byte 85: bad data crc/],
      ['the high half of the third length', 85 + 7, 85, /TFRecord at byte 85: bad length crc/],
    ])('names the offset when %s is flipped', (_what, byte, _recordOffset, message) => {
      // GIVEN
      const shard = corrupted((copy) => {
        copy[byte] ^= 0x01;
        return copy;
      });
      // WHEN / THEN
      expect(() => [...readTfRecords(shard)]).toThrow(FormatError);
      expect(() => [...readTfRecords(shard)]).toThrow(message);
    });

    test('yields the good records before the bad one', () => {
      // GIVEN
      const shard = corrupted((copy) => {
        copy[100] ^= 0xff;
        return copy;
      });
      const reader = readTfRecords(shard);
      // WHEN
      const first = reader.next();
      const second = reader.next();
      // THEN
      expect(first.done).toBe(false);
      expect(second.done).toBe(false);
      expect(() => reader.next()).toThrow(/TFRecord at byte 85: bad data crc/);
    });

    test.each([
      [129, /TFRecord at byte 85: truncated record: payload of 29 bytes needs 45 bytes, 44 left/],
      [85 + 16, /TFRecord at byte 85: truncated record: payload of 29 bytes needs 45 bytes, 16 left/],
      [85 + 11, /TFRecord at byte 85: truncated record: 11 bytes left, a header needs 12/],
      [1, /TFRecord at byte 0: truncated record: 1 bytes left/],
    ])('names the offset when the file is cut to %d bytes', (length, message) => {
      // GIVEN
      const shard = original.subarray(0, length);
      // WHEN / THEN
      expect(() => [...readTfRecords(shard)]).toThrow(message);
    });

    test('reports a length that runs past the end, with a valid length crc, as truncation', () => {
      // GIVEN a record claiming 1000 bytes of payload, its header otherwise valid
      const shard = Buffer.concat([tfrecordHeader(1000), Buffer.from('short')]);
      // WHEN / THEN
      expect(() => [...readTfRecords(shard)]).toThrow(/byte 0: truncated record: payload of 1000 bytes needs 1016 bytes, 17 left/);
    });
  });

  test('round-trips random payloads', () => {
    // GIVEN
    const random = seededRandom(42);
    const payloads = Array.from({ length: 200 }, () => randomBytes(random, Math.floor(random() * 3000)));
    // WHEN
    const shard = Buffer.concat(payloads.map((p) => frame(p)));
    const records = [...readTfRecords(shard)];
    // THEN
    expect(records.map((r) => r.payload)).toEqual(payloads);
    let offset = 0;
    for (const record of records) {
      expect(record.offset).toBe(offset);
      offset += record.size;
    }
    expect(offset).toBe(shard.length);
  });
});
