import { IR_HEADER_SIZE, packIrHeader, unpackImageRecord } from '../../../lambda/packing/formats/ir-header';
import {
  RECORDIO_MAGIC,
  RECORDIO_MAX_PAYLOAD,
  checkRecordIoPayloadLength,
  encodeRecordIo,
  readRecordIo,
} from '../../../lambda/packing/formats/recordio';
import { encodedToBuffer } from '../../../lambda/packing/formats/encoded';
import { FormatError } from '../../../lambda/packing/formats/shard-format';
import { hex, randomBytes, readExternal, seededRandom } from './support';

const MAGIC = hex('0a23d7ce');

function encode(...chunks: Buffer[]): Buffer {
  return encodedToBuffer(encodeRecordIo(chunks));
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
}

/** A part as dmlc-core writes it: magic, lrecord = cflag << 29 | length, data (padding added by the caller). */
function part(flag: number, data: Buffer): Buffer {
  return Buffer.concat([MAGIC, u32(flag * 2 ** 29 + data.length), data]);
}

/** A line-by-line port of dmlc-core's RecordIOWriter::WriteRecord (src/recordio.cc), as an oracle. */
function dmlcWriteRecord(payload: Buffer): Buffer {
  const out: Buffer[] = [];
  const len = payload.length;
  const lowerAlign = (len >> 2) << 2;
  const upperAlign = ((len + 3) >> 2) << 2;
  let dptr = 0;
  for (let i = 0; i < lowerAlign; i += 4) {
    if (payload.readUInt32LE(i) === 0xced7230a) {
      out.push(MAGIC, u32(((dptr === 0 ? 1 : 2) << 29) | (i - dptr)), payload.subarray(dptr, i));
      dptr = i + 4;
    }
  }
  out.push(MAGIC, u32(((dptr !== 0 ? 3 : 0) << 29) | (len - dptr)), payload.subarray(dptr));
  out.push(Buffer.alloc(upperAlign - len));
  return Buffer.concat(out);
}

/** Random payload with the magic word sprinkled in at random (aligned and unaligned) positions. */
function magicRichPayload(random: () => number): Buffer {
  const pieces: Buffer[] = [];
  const count = Math.floor(random() * 12);
  for (let i = 0; i < count; i++) {
    pieces.push(random() < 0.4 ? MAGIC : randomBytes(random, Math.floor(random() * 9)));
  }
  return Buffer.concat(pieces);
}

/** Cuts a buffer into up to 4 chunks at random places (empty chunks included). */
function randomChunks(random: () => number, payload: Buffer): Buffer[] {
  const cuts = Array.from({ length: Math.floor(random() * 4) }, () => Math.floor(random() * (payload.length + 1))).sort((a, b) => a - b);
  const bounds = [0, ...cuts, payload.length];
  return bounds.slice(1).map((end, i) => payload.subarray(bounds[i], end));
}

describe('RecordIO on dmlc-sample.rec', () => {
  const sample = readExternal('dmlc-sample.rec');

  test('reads the 10 records dmlc-core wrote, every 52 bytes, the last one padded', () => {
    // WHEN
    const records = [...readRecordIo(sample)];
    // THEN
    expect(records.map((r) => r.offset)).toEqual([0, 52, 104, 156, 208, 260, 312, 364, 416, 468]);
    expect(records.map((r) => r.size)).toEqual([52, 52, 52, 52, 52, 52, 52, 52, 52, 64]);
    expect(sample.length).toBe(532);
  });

  test('each record is an IRHeader (flag 0, label i % 2, id i, id2 0) and "i\\n" ten times', () => {
    // WHEN
    const images = [...readRecordIo(sample)].map((r) => unpackImageRecord(r.payload));
    // THEN
    images.forEach((image, index) => {
      const i = index + 1;
      expect(image.header).toEqual({ flag: 0, label: i % 2, id: i, id2: 0 });
      expect(image.labels).toEqual([i % 2]);
      expect(image.data.toString()).toBe(`${i}\n`.repeat(10));
    });
  });

  test('re-encoding the documented contents gives back the file byte for byte', () => {
    // WHEN
    const rebuilt = Buffer.concat(Array.from({ length: 10 }, (_, index) => {
      const i = index + 1;
      return encode(packIrHeader({ flag: 0, label: i % 2, id: i, id2: 0 }), Buffer.from(`${i}\n`.repeat(10)));
    }));
    // THEN
    expect(rebuilt).toEqual(sample);
  });

  test('the IRHeader of record 1 packs to the bytes in the file', () => {
    // WHEN
    const header = packIrHeader({ flag: 0, label: 1, id: 1, id2: 0 });
    // THEN
    expect(header).toEqual(sample.subarray(8, 8 + IR_HEADER_SIZE));
    expect(header).toEqual(hex('00000000 0000803f 0100000000000000 0000000000000000'));
  });

  test.each([
    ['the magic of record 2', 52, /RecordIO at byte 52: bad magic 0xced7230b/],
    ['the magic of record 10', 468 + 3, /RecordIO at byte 468: bad magic 0x4ed7230a/],
  ])('names the offset when %s is damaged', (_what, byte, message) => {
    // GIVEN
    const shard = Buffer.from(sample);
    shard[byte] ^= byte === 52 ? 0x01 : 0x80;
    // WHEN / THEN
    expect(() => [...readRecordIo(shard)]).toThrow(FormatError);
    expect(() => [...readRecordIo(shard)]).toThrow(message);
  });

  test.each([
    [530, /RecordIO at byte 468: truncated record: part of 54 bytes needs 64 bytes, 62 left/],
    [470, /RecordIO at byte 468: truncated record: 2 bytes left, a part header needs 8/],
    [51, /RecordIO at byte 0: truncated record: part of 44 bytes needs 52 bytes, 51 left/],
  ])('names the offset when the file is cut to %d bytes', (length, message) => {
    // WHEN / THEN
    expect(() => [...readRecordIo(sample.subarray(0, length))]).toThrow(message);
  });

  test('returns one-part payloads as views into the shard', () => {
    // WHEN
    const [first] = readRecordIo(sample);
    // THEN
    expect(first.payload.buffer).toBe(sample.buffer);
  });
});

describe('RecordIO magic escaping', () => {
  test.each([
    ['at aligned offset 0', Buffer.concat([MAGIC, Buffer.from('abcd')]),
      Buffer.concat([part(1, Buffer.alloc(0)), part(3, Buffer.from('abcd'))])],
    ['at aligned offset 4', Buffer.concat([Buffer.from('abcd'), MAGIC, Buffer.from('ef')]),
      Buffer.concat([part(1, Buffer.from('abcd')), part(3, Buffer.from('ef')), Buffer.alloc(2)])],
    ['at the aligned end', Buffer.concat([Buffer.from('abcd'), MAGIC]),
      Buffer.concat([part(1, Buffer.from('abcd')), part(3, Buffer.alloc(0))])],
    ['at aligned offsets 4 and 12', Buffer.concat([Buffer.from('abcd'), MAGIC, Buffer.from('efgh'), MAGIC, Buffer.from('i')]),
      Buffer.concat([part(1, Buffer.from('abcd')), part(2, Buffer.from('efgh')), part(3, Buffer.from('i')), Buffer.alloc(3)])],
    ['aligned, with a 1-byte tail', Buffer.concat([Buffer.from('abcd'), MAGIC, Buffer.from('z')]),
      Buffer.concat([part(1, Buffer.from('abcd')), part(3, Buffer.from('z')), Buffer.alloc(3)])],
  ])('splits a payload with the magic %s', (_where, payload, expected) => {
    // WHEN
    const encoded = encode(payload);
    // THEN
    expect(encoded).toEqual(expected);
    expect(encoded).toEqual(dmlcWriteRecord(payload));
    expect([...readRecordIo(encoded)]).toEqual([{ offset: 0, size: encoded.length, payload }]);
  });

  test.each([1, 2, 3])('leaves the magic alone at unaligned offset %d', (offset) => {
    // GIVEN
    const payload = Buffer.concat([Buffer.alloc(offset, 0x61), MAGIC, Buffer.from('tail')]);
    // WHEN
    const encoded = encode(payload);
    // THEN
    const padding = (4 - (payload.length % 4)) % 4;
    expect(encoded).toEqual(Buffer.concat([part(0, payload), Buffer.alloc(padding)]));
    expect([...readRecordIo(encoded)].map((r) => r.payload)).toEqual([payload]);
  });

  test('leaves an unaligned magic at the very end alone', () => {
    // GIVEN 7 bytes with the magic at offset 3: no aligned word fits
    const payload = Buffer.concat([Buffer.from('abc'), MAGIC]);
    // WHEN / THEN
    expect(encode(payload)).toEqual(Buffer.concat([part(0, payload), Buffer.alloc(1)]));
  });

  test('splits a payload of nothing but magic words into empty parts', () => {
    // GIVEN
    const payload = Buffer.concat([MAGIC, MAGIC, MAGIC]);
    // WHEN
    const encoded = encode(payload);
    // THEN 8 + 4k + align4(L) bytes
    expect(encoded).toEqual(Buffer.concat([part(1, Buffer.alloc(0)), part(2, Buffer.alloc(0)), part(2, Buffer.alloc(0)), part(3, Buffer.alloc(0))]));
    expect(encoded.length).toBe(8 + 4 * 3 + 12);
    expect([...readRecordIo(encoded)].map((r) => r.payload)).toEqual([payload]);
  });

  test('frames a zero-length payload as a bare header', () => {
    // WHEN
    const encoded = encode(Buffer.alloc(0));
    // THEN
    expect(encoded).toEqual(Buffer.concat([MAGIC, u32(0)]));
    expect([...readRecordIo(encoded)]).toEqual([{ offset: 0, size: 8, payload: Buffer.alloc(0) }]);
  });

  test('finds aligned magic words that straddle chunks, and only those', () => {
    // GIVEN the magic at offset 4 cut in the middle, and at offset 9 (unaligned) cut too
    const aligned = [Buffer.concat([Buffer.from('abcd'), MAGIC.subarray(0, 2)]), MAGIC.subarray(2), Buffer.from('x')];
    const unaligned = [Buffer.concat([Buffer.from('abcdefghi'), MAGIC.subarray(0, 1)]), MAGIC.subarray(1, 3), MAGIC.subarray(3)];
    // WHEN / THEN
    expect(encode(...aligned)).toEqual(dmlcWriteRecord(Buffer.concat(aligned)));
    expect(encode(...aligned)).toEqual(Buffer.concat([part(1, Buffer.from('abcd')), part(3, Buffer.from('x')), Buffer.alloc(3)]));
    expect(encode(...unaligned)).toEqual(dmlcWriteRecord(Buffer.concat(unaligned)));
    expect(encode(...unaligned).readUInt32LE(4)).toBe(13);
  });

  test('writes in place at an offset, padding with zeros and leaving the bytes around the record alone', () => {
    // GIVEN a payload of 10,001 bytes with the magic at an aligned offset (two parts, 3 bytes of padding)
    const header = Buffer.alloc(24, 1);
    const image = Buffer.concat([randomBytes(seededRandom(5), 4000), MAGIC, randomBytes(seededRandom(6), 5973)]);
    const target = Buffer.alloc(3 + 10_000 + 24 + 5, 0xee);
    // WHEN
    const record = encodeRecordIo([header, image]);
    record.writeTo(target, 3);
    // THEN
    const written = target.subarray(3, 3 + record.size);
    expect(target.subarray(0, 3)).toEqual(Buffer.alloc(3, 0xee));
    expect(target.subarray(3 + record.size)).toEqual(Buffer.alloc(target.length - 3 - record.size, 0xee));
    expect(written.subarray(written.length - 3)).toEqual(Buffer.alloc(3));
    expect(written).toEqual(dmlcWriteRecord(Buffer.concat([header, image])));
  });

  test('agrees with the dmlc-core oracle on random magic-rich payloads in random chunks (seeded)', () => {
    const random = seededRandom(99);
    for (let round = 0; round < 2000; round++) {
      // GIVEN
      const payload = magicRichPayload(random);
      const chunks = randomChunks(random, payload);
      // WHEN
      const encoded = encode(...chunks);
      // THEN
      expect(encoded).toEqual(dmlcWriteRecord(payload));
      expect([...readRecordIo(encoded)].map((r) => r.payload)).toEqual([payload]);
    }
  });
});

describe('RecordIO record size limit', () => {
  test('accepts 2^29 - 1 bytes and rejects 2^29 and more', () => {
    // WHEN / THEN
    expect(RECORDIO_MAX_PAYLOAD).toBe(2 ** 29 - 1);
    expect(() => checkRecordIoPayloadLength(2 ** 29 - 1)).not.toThrow();
    expect(() => checkRecordIoPayloadLength(2 ** 29)).toThrow(FormatError);
    expect(() => checkRecordIoPayloadLength(2 ** 40)).toThrow(/smaller than 2\^29 bytes \(512 MiB\), got 1099511627776 bytes/);
  });

  test('sizes a 2^29 - 1 byte payload given as chunks of one shared 1 MiB buffer', () => {
    // GIVEN 512 views of the same 1 MiB (no 512 MiB allocation), one byte short of 2^29
    const mib = Buffer.alloc(2 ** 20);
    const chunks = Array.from({ length: 512 }, (_, i) => (i === 511 ? mib.subarray(1) : mib));
    // WHEN
    const record = encodeRecordIo(chunks);
    // THEN one part with the largest length lrecord can hold, and 1 byte of padding
    expect(record.size).toBe(8 + 2 ** 29);
  });

  test('refuses a 2^29 byte payload', () => {
    // GIVEN
    const mib = Buffer.alloc(2 ** 20);
    const chunks = Array.from({ length: 512 }, () => mib);
    // WHEN / THEN
    expect(() => encodeRecordIo(chunks)).toThrow(FormatError);
  });
});

describe('readRecordIo on malformed continuations', () => {
  test.each([
    ['a middle part without a start', part(2, Buffer.from('abcd')), /RecordIO at byte 0: continuation flag 2 where a whole or start part must be/],
    ['an end part without a start', part(3, Buffer.from('abcd')), /RecordIO at byte 0: continuation flag 3 where a whole or start part must be/],
    ['a whole part after a start', Buffer.concat([part(1, Buffer.from('abcd')), part(0, Buffer.from('efgh'))]),
      /RecordIO at byte 12: continuation flag 0 where a middle or end part must be/],
    ['a start part of unaligned length', Buffer.concat([part(1, Buffer.from('abc')), Buffer.alloc(1), part(3, Buffer.from('efgh'))]),
      /RecordIO at byte 0: start part of 3 bytes is not a multiple of 4/],
    ['a start part with no end', part(1, Buffer.from('abcd')), /RecordIO at byte 12: truncated record: 0 bytes left/],
    ['flag 5', part(5, Buffer.from('abcd')), /RecordIO at byte 0: continuation flag 5/],
  ])('rejects %s', (_what, shard, message) => {
    // WHEN / THEN
    expect(() => [...readRecordIo(shard)]).toThrow(message);
  });
});

describe('RecordIO round trips', () => {
  test('reads back random payloads at the offsets they were written (seeded)', () => {
    // GIVEN
    const random = seededRandom(4242);
    const payloads = Array.from({ length: 300 }, () =>
      (random() < 0.2 ? magicRichPayload(random) : randomBytes(random, Math.floor(random() * 4000))));
    const offsets: number[] = [];
    const pieces: Buffer[] = [];
    let offset = 0;
    for (const payload of payloads) {
      const record = encodedToBuffer(encodeRecordIo([payload]));
      offsets.push(offset);
      pieces.push(record);
      offset += record.length;
    }
    const shard = Buffer.concat(pieces);
    // WHEN
    const records = [...readRecordIo(shard)];
    // THEN
    expect(records.map((r) => r.payload)).toEqual(payloads);
    expect(records.map((r) => r.offset)).toEqual(offsets);
    expect(shard.length).toBe(offset);
  });
});

describe('IRHeader', () => {
  test('unpacks multi-label records (flag = number of float32 labels after the header)', () => {
    // GIVEN
    const header = Buffer.alloc(24);
    header.writeUInt32LE(2, 0);
    header.writeUInt32LE(9, 8);
    const labels = Buffer.alloc(8);
    labels.writeFloatLE(0.5, 0);
    labels.writeFloatLE(3, 4);
    // WHEN
    const image = unpackImageRecord(Buffer.concat([header, labels, Buffer.from('jpeg')]));
    // THEN
    expect(image.header).toEqual({ flag: 2, label: 0, id: 9, id2: 0 });
    expect(image.labels).toEqual([0.5, 3]);
    expect(image.data.toString()).toBe('jpeg');
  });

  test('packs ids beyond 32 bits into both halves', () => {
    // WHEN
    const header = packIrHeader({ flag: 0, label: -1, id: 2 ** 40 + 3, id2: 0 });
    // THEN
    expect(header.readBigUInt64LE(8)).toBe(2n ** 40n + 3n);
    expect(header.readFloatLE(4)).toBe(-1);
    expect(unpackImageRecord(header).header.id).toBe(2 ** 40 + 3);
  });

  test.each([
    [{ flag: 1, label: 0, id: 0, id2: 0 }],
    [{ flag: 0, label: 0, id: -1, id2: 0 }],
    [{ flag: 0, label: 0, id: 2 ** 53, id2: 0 }],
    [{ flag: 0, label: 0, id: 0, id2: 0.5 }],
  ])('refuses to pack %j', (header) => {
    // WHEN / THEN
    expect(() => packIrHeader(header)).toThrow(RangeError);
  });

  test.each([
    ['a payload shorter than the header', Buffer.alloc(23), /shorter than the 24-byte IRHeader/],
    ['more labels than bytes', Buffer.concat([u32(3), Buffer.alloc(20), Buffer.alloc(8)]), /announces 3 labels/],
    ['an id beyond 2^53', Buffer.concat([Buffer.alloc(8), Buffer.alloc(8, 0xff), Buffer.alloc(8)]), /IRHeader id .* is beyond 2\^53/],
  ])('rejects %s', (_what, payload, message) => {
    // WHEN / THEN
    expect(() => unpackImageRecord(payload)).toThrow(FormatError);
    expect(() => unpackImageRecord(payload)).toThrow(message);
  });

  test('RECORDIO_MAGIC is the bytes dmlc-core writes', () => {
    // THEN
    expect(u32(RECORDIO_MAGIC)).toEqual(MAGIC);
  });
});
