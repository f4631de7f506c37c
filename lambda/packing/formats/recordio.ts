/**
 * MXNet RecordIO framing, as dmlc-core writes and reads it (include/dmlc/recordio.h, src/recordio.cc):
 * `u32le magic | u32le lrecord = cflag << 29 | length | data | zero padding to 4 bytes`.
 *
 * A magic word at a 4-byte-aligned offset of the payload would let a reader that resynchronises on
 * the magic (dmlc's RecordIOChunkReader, used to split a file between workers) start a record in
 * the middle of another. dmlc-core therefore drops each aligned magic word and splits the record
 * there into parts (cflag 1 start, 2 middle, 3 end; 0 for a record in one part); readers put the
 * magic back between parts. Unaligned occurrences are left alone.
 */
import type { Encoded } from './encoded';
import { FormatError } from './shard-format';
import type { ShardRecord } from './shard-record';

/** dmlc-core's `RecordIOWriter::kMagic`. */
export const RECORDIO_MAGIC = 0xced7230a;
/** dmlc-core `CHECK`s `size < 2^29`: the length field has 29 bits and large records are not split. */
export const RECORDIO_MAX_PAYLOAD = 2 ** 29 - 1;
/** Magic word plus lrecord. */
export const RECORDIO_PART_HEADER_SIZE = 8;

/** Continuation flags (the top 3 bits of lrecord). */
export const RecordIoFlag = {
  /** The record in one part. */
  Whole: 0,
  /** First part of a record split at magic words. */
  Start: 1,
  /** A part between two dropped magic words. */
  Middle: 2,
  /** Last part of a split record. */
  End: 3,
} as const;

/** One of {@link RecordIoFlag}. */
export type RecordIoFlag = (typeof RecordIoFlag)[keyof typeof RecordIoFlag];

const MAGIC_BYTES = Buffer.from([0x0a, 0x23, 0xd7, 0xce]);
const LENGTH_MASK = 2 ** 29 - 1;

/**
 * Frames a payload given as chunks (e.g. an IRHeader and a file's bytes): part headers, the
 * payload's bytes between them and the padding are written in place, without joining the chunks
 * first. Throws a FormatError when the payload is too large for RecordIO.
 */
export function encodeRecordIo(payloadChunks: readonly Buffer[]): Encoded {
  let payloadLength = 0;
  for (const chunk of payloadChunks) payloadLength += chunk.length;
  checkRecordIoPayloadLength(payloadLength);

  const hits = alignedMagicOffsets(payloadChunks);
  const padding = align4(payloadLength) - payloadLength;
  return {
    size: RECORDIO_PART_HEADER_SIZE * (hits.length + 1) + payloadLength - MAGIC_BYTES.length * hits.length + padding,
    writeTo(target, offset) {
      let at = offset;
      let partStart = 0;
      for (let part = 0; part <= hits.length; part++) {
        const last = part === hits.length;
        const partEnd = last ? payloadLength : hits[part];
        const flag = hits.length === 0 ? RecordIoFlag.Whole
          : part === 0 ? RecordIoFlag.Start
            : last ? RecordIoFlag.End : RecordIoFlag.Middle;
        target.writeUInt32LE(RECORDIO_MAGIC, at);
        target.writeUInt32LE(lrecord(flag, partEnd - partStart), at + 4);
        at = copyRange(payloadChunks, partStart, partEnd, target, at + RECORDIO_PART_HEADER_SIZE);
        partStart = partEnd + MAGIC_BYTES.length;
      }
      target.fill(0, at, at + padding);
      return undefined;
    },
  };
}

/**
 * The size check of {@link encodeRecordIo}, on its own so that the 2^29 boundary can be tested
 * without a 512 MiB payload.
 */
export function checkRecordIoPayloadLength(payloadLength: number): void {
  if (payloadLength > RECORDIO_MAX_PAYLOAD) {
    throw new FormatError(`RecordIO records must be smaller than 2^29 bytes (512 MiB), got ${payloadLength} bytes`);
  }
}

/**
 * The records of a RecordIO shard, in order, with multi-part records reassembled (the magic put
 * back between parts). Throws a FormatError naming the byte offset of a bad magic word, a bad
 * continuation flag or a truncated part. Payloads of one-part records are views into `shard`.
 */
export function* readRecordIo(shard: Buffer): Generator<ShardRecord, void, undefined> {
  let offset = 0;
  while (offset < shard.length) {
    const recordStart = offset;
    const parts: Buffer[] = [];
    for (;;) {
      const remaining = shard.length - offset;
      if (remaining < RECORDIO_PART_HEADER_SIZE) {
        throw corrupt(offset, `truncated record: ${remaining} bytes left, a part header needs ${RECORDIO_PART_HEADER_SIZE}`);
      }
      const magic = shard.readUInt32LE(offset);
      if (magic !== RECORDIO_MAGIC) {
        throw corrupt(offset, `bad magic 0x${magic.toString(16).padStart(8, '0')}, expected 0x${RECORDIO_MAGIC.toString(16)}`);
      }
      const lrec = shard.readUInt32LE(offset + 4);
      const flag = lrec >>> 29;
      const length = lrec & LENGTH_MASK;
      const expected = parts.length === 0 ? 'whole or start' : 'middle or end';
      const fits = parts.length === 0
        ? flag === RecordIoFlag.Whole || flag === RecordIoFlag.Start
        : flag === RecordIoFlag.Middle || flag === RecordIoFlag.End;
      if (!fits) throw corrupt(offset, `continuation flag ${flag} where a ${expected} part must be`);
      // Non-final parts end where a magic word was dropped, always at an aligned offset.
      if ((flag === RecordIoFlag.Start || flag === RecordIoFlag.Middle) && length % 4 !== 0) {
        throw corrupt(offset, `${flag === RecordIoFlag.Start ? 'start' : 'middle'} part of ${length} bytes is not a multiple of 4`);
      }
      const stored = RECORDIO_PART_HEADER_SIZE + align4(length);
      if (stored > remaining) {
        throw corrupt(offset, `truncated record: part of ${length} bytes needs ${stored} bytes, ${remaining} left`);
      }
      parts.push(shard.subarray(offset + RECORDIO_PART_HEADER_SIZE, offset + RECORDIO_PART_HEADER_SIZE + length));
      offset += stored;
      if (flag === RecordIoFlag.Whole || flag === RecordIoFlag.End) break;
    }
    yield { offset: recordStart, size: offset - recordStart, payload: joinParts(parts) };
  }
}

/** Logical offsets of the magic word at aligned positions of the payload, ascending. */
function alignedMagicOffsets(chunks: readonly Buffer[]): number[] {
  const hits: number[] = [];
  let chunkStart = 0;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c];
    // Buffer.indexOf is a native substring search: far faster than reading every aligned word in JS.
    for (let at = chunk.indexOf(MAGIC_BYTES); at !== -1; at = chunk.indexOf(MAGIC_BYTES, at + 1)) {
      if ((chunkStart + at) % 4 === 0) hits.push(chunkStart + at);
    }
    // A word can also straddle chunks; at most one aligned word starts in a chunk's last 3 bytes.
    const straddler = align4(Math.max(chunkStart, chunkStart + chunk.length - 3));
    if (straddler < chunkStart + chunk.length && magicAt(chunks, c, straddler - chunkStart)) hits.push(straddler);
    chunkStart += chunk.length;
  }
  return hits;
}

/** Whether the magic starts at `at` in chunk `c` and continues into the following chunks. */
function magicAt(chunks: readonly Buffer[], c: number, at: number): boolean {
  let matched = 0;
  for (let i = c; i < chunks.length && matched < MAGIC_BYTES.length; i++) {
    for (let j = i === c ? at : 0; j < chunks[i].length && matched < MAGIC_BYTES.length; j++) {
      if (chunks[i][j] !== MAGIC_BYTES[matched++]) return false;
    }
  }
  return matched === MAGIC_BYTES.length;
}

/** Copies the logical range [start, end) of `chunks` into `target` at `at`; returns where the copy ends. */
function copyRange(chunks: readonly Buffer[], start: number, end: number, target: Buffer, at: number): number {
  let chunkStart = 0;
  for (const chunk of chunks) {
    const chunkEnd = chunkStart + chunk.length;
    const from = Math.max(start, chunkStart);
    const to = Math.min(end, chunkEnd);
    if (from < to) at += chunk.copy(target, at, from - chunkStart, to - chunkStart);
    chunkStart = chunkEnd;
  }
  return at;
}

function joinParts(parts: Buffer[]): Buffer {
  if (parts.length === 1) return parts[0];
  const pieces: Buffer[] = [];
  parts.forEach((part, i) => {
    if (i > 0) pieces.push(MAGIC_BYTES);
    pieces.push(part);
  });
  return Buffer.concat(pieces);
}

function lrecord(flag: RecordIoFlag, length: number): number {
  return ((flag << 29) | length) >>> 0;
}

function align4(length: number): number {
  return Math.ceil(length / 4) * 4;
}

function corrupt(offset: number, what: string): FormatError {
  return new FormatError(`RecordIO at byte ${offset}: ${what}`);
}
