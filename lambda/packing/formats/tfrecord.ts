/**
 * TFRecord framing, as TensorFlow's RecordWriter/RecordReader do it (tsl/lib/io/record_writer.h):
 * `u64le length | u32le masked crc32c(length bytes) | data | u32le masked crc32c(data)`.
 * No file header or footer: a shard is records back to back.
 */
import { crc32c, maskCrc32c } from './crc32c';
import { EncodedRecord, FormatError } from './shard-format';
import { ShardRecord } from './shard-record';

/** Length field plus its CRC. */
export const TFRECORD_HEADER_SIZE = 12;
/** The data CRC. */
export const TFRECORD_FOOTER_SIZE = 4;
/** Bytes a record takes on disk besides its payload: an index line's size is payload + this. */
export const TFRECORD_OVERHEAD = TFRECORD_HEADER_SIZE + TFRECORD_FOOTER_SIZE;

const TWO_POW_32 = 2 ** 32;

/** The 12 bytes before a payload of `payloadLength` bytes. */
export function tfrecordHeader(payloadLength: number): Buffer {
  const header = Buffer.allocUnsafe(TFRECORD_HEADER_SIZE);
  writeHeader(header, payloadLength);
  return header;
}

/** The 4 bytes after `payload`, which may be given as the chunks it is written in. */
export function tfrecordFooter(payload: Uint8Array | readonly Uint8Array[]): Buffer {
  const footer = Buffer.allocUnsafe(TFRECORD_FOOTER_SIZE);
  writeFooter(footer, payload);
  return footer;
}

/**
 * Frames a payload given as chunks, without concatenating them: the result is
 * `[header, ...payloadChunks, footer]`, the data CRC computed incrementally over the chunks.
 */
export function frameTfRecord(payloadChunks: readonly Buffer[]): EncodedRecord {
  let payloadLength = 0;
  for (const chunk of payloadChunks) payloadLength += chunk.length;
  // One allocation for both ends: small Buffers come from Node's pool, but each still costs an object.
  const ends = Buffer.allocUnsafe(TFRECORD_OVERHEAD);
  const header = ends.subarray(0, TFRECORD_HEADER_SIZE);
  const footer = ends.subarray(TFRECORD_HEADER_SIZE);
  writeHeader(header, payloadLength);
  writeFooter(footer, payloadChunks);
  return { chunks: [header, ...payloadChunks, footer], size: payloadLength + TFRECORD_OVERHEAD };
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
    const lengthCrc = maskCrc32c(crc32c(shard.subarray(offset, offset + 8)));
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
    const dataCrc = maskCrc32c(crc32c(payload));
    if (storedDataCrc !== dataCrc) {
      throw corrupt(offset, `bad data crc: stored ${hex(storedDataCrc)}, computed ${hex(dataCrc)}`);
    }
    yield { offset, size: length + TFRECORD_OVERHEAD, payload };
    offset += length + TFRECORD_OVERHEAD;
  }
}

function writeHeader(header: Buffer, payloadLength: number): void {
  if (!Number.isSafeInteger(payloadLength) || payloadLength < 0) {
    throw new RangeError(`TFRecord payload length must be a non-negative safe integer, got ${payloadLength}`);
  }
  header.writeUInt32LE(payloadLength % TWO_POW_32, 0);
  header.writeUInt32LE(Math.floor(payloadLength / TWO_POW_32), 4);
  header.writeUInt32LE(maskCrc32c(crc32c(header.subarray(0, 8))), 8);
}

function writeFooter(footer: Buffer, payload: Uint8Array | readonly Uint8Array[]): void {
  let crc = 0;
  if (payload instanceof Uint8Array) {
    crc = crc32c(payload);
  } else {
    for (const chunk of payload) crc = crc32c(chunk, crc);
  }
  footer.writeUInt32LE(maskCrc32c(crc), 0);
}

function corrupt(offset: number, what: string): FormatError {
  return new FormatError(`TFRecord at byte ${offset}: ${what}`);
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}
