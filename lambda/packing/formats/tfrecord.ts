/**
 * TFRecord framing, as TensorFlow's RecordWriter/RecordReader do it (tsl/lib/io/record_writer.h):
 * `u64le length | u32le masked crc32c(length bytes) | data | u32le masked crc32c(data)`.
 * No file header or footer: a shard is records back to back.
 */
import { crc32cCombine, crc32cOfRange, maskCrc32c } from './crc32c';
import type { Encoded } from './encoded';
import { FormatError } from './shard-format';
import type { ShardRecord } from './shard-record';

/** Length field plus its CRC. */
export const TFRECORD_HEADER_SIZE = 12;
/** The data CRC. */
export const TFRECORD_FOOTER_SIZE = 4;
/** Bytes a record takes on disk besides its payload: an index line's size is payload + this. */
export const TFRECORD_OVERHEAD = TFRECORD_HEADER_SIZE + TFRECORD_FOOTER_SIZE;

const TWO_POW_32 = 2 ** 32;

/** The 12 bytes before a payload of `payloadLength` bytes. */
export function tfrecordHeader(payloadLength: number): Buffer {
  checkPayloadLength(payloadLength);
  const header = Buffer.allocUnsafe(TFRECORD_HEADER_SIZE);
  writeHeader(header, 0, payloadLength);
  return header;
}

/**
 * Frames a payload as one TFRecord, `header | payload | footer`, written in place: the payload
 * first, then the data CRC over the bytes just written (one CRC32C call, however the payload was
 * assembled). Returns the CRC of the whole record, combined from the data CRC.
 */
export function frameTfRecord(payload: Encoded): Encoded {
  const payloadLength = payload.size;
  checkPayloadLength(payloadLength);
  return {
    size: payloadLength + TFRECORD_OVERHEAD,
    writeTo(target, offset) {
      const dataStart = offset + TFRECORD_HEADER_SIZE;
      const dataEnd = dataStart + payloadLength;
      writeHeader(target, offset, payloadLength);
      payload.writeTo(target, dataStart);
      const dataCrc = crc32cOfRange(target, dataStart, dataEnd);
      target.writeUInt32LE(maskCrc32c(dataCrc), dataEnd);
      const throughData = crc32cCombine(crc32cOfRange(target, offset, dataStart), dataCrc, payloadLength);
      return crc32cOfRange(target, dataEnd, dataEnd + TFRECORD_FOOTER_SIZE, throughData);
    },
  };
}

/**
 * The records of a TFRecord shard, in order, each checked as TensorFlow's reader checks it (length
 * CRC, then that the data fits, then the data CRC). Throws a FormatError naming the byte offset of
 * the first bad record. Payloads are views into `shard`.
 */
export function* readTfRecords(shard: Buffer): Generator<ShardRecord, void, undefined> {
  let offset = 0;
  while (offset < shard.length) {
    const remaining = shard.length - offset;
    if (remaining < TFRECORD_HEADER_SIZE) {
      throw corrupt(offset, `truncated record: ${remaining} bytes left, a header needs ${TFRECORD_HEADER_SIZE}`);
    }
    const storedLengthCrc = shard.readUInt32LE(offset + 8);
    const lengthCrc = maskCrc32c(crc32cOfRange(shard, offset, offset + 8));
    if (storedLengthCrc !== lengthCrc) {
      throw corrupt(offset, `bad length crc: stored ${hex(storedLengthCrc)}, computed ${hex(lengthCrc)}`);
    }
    // Lengths beyond 2^53 lose precision here, but they exceed any Buffer and fail the next check anyway.
    const length = shard.readUInt32LE(offset + 4) * TWO_POW_32 + shard.readUInt32LE(offset);
    if (length > remaining - TFRECORD_OVERHEAD) {
      throw corrupt(offset, `truncated record: payload of ${length} bytes needs ${length + TFRECORD_OVERHEAD} bytes, ${remaining} left`);
    }
    const dataStart = offset + TFRECORD_HEADER_SIZE;
    const payload = shard.subarray(dataStart, dataStart + length);
    const storedDataCrc = shard.readUInt32LE(dataStart + length);
    const dataCrc = maskCrc32c(crc32cOfRange(shard, dataStart, dataStart + length));
    if (storedDataCrc !== dataCrc) {
      throw corrupt(offset, `bad data crc: stored ${hex(storedDataCrc)}, computed ${hex(dataCrc)}`);
    }
    yield { offset, size: length + TFRECORD_OVERHEAD, payload };
    offset += length + TFRECORD_OVERHEAD;
  }
}

function checkPayloadLength(payloadLength: number): void {
  if (!Number.isSafeInteger(payloadLength) || payloadLength < 0) {
    throw new RangeError(`TFRecord payload length must be a non-negative safe integer, got ${payloadLength}`);
  }
}

/** `u64le length | u32le masked crc32c(length bytes)` at `offset`. */
function writeHeader(target: Buffer, offset: number, payloadLength: number): void {
  target.writeUInt32LE(payloadLength % TWO_POW_32, offset);
  target.writeUInt32LE(Math.floor(payloadLength / TWO_POW_32), offset + 4);
  target.writeUInt32LE(maskCrc32c(crc32cOfRange(target, offset, offset + 8)), offset + 8);
}

function corrupt(offset: number, what: string): FormatError {
  return new FormatError(`TFRecord at byte ${offset}: ${what}`);
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}
