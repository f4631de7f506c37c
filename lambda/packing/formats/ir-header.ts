/**
 * MXNet's image record header (`IRHeader` in python/mxnet/recordio.py, `ImageRecordIO::Header` in
 * src/io/image_recordio.h): 24 bytes `u32 flag | f32 label | u64 id | u64 id2`, little-endian, in
 * front of the image bytes. `flag` > 0 means that many float32 labels follow the header (multi-label)
 * and `label` is unused.
 */
import { FormatError } from './shard-format';

export const IR_HEADER_SIZE = 24;

/** The fields of an IRHeader. */
export interface IrHeader {
  /** 0 for a single label in `label`; n > 0 for n float32 labels after the header. */
  readonly flag: number;
  /** The label, stored as float32. */
  readonly label: number;
  /** The record's id (im2rec: the image index). */
  readonly id: number;
  /** "Higher order bits of the unique id, should be set to 0" (mxnet docs). */
  readonly id2: number;
}

/** An image record's payload, split. */
export interface ImageRecord {
  readonly header: IrHeader;
  /** `[header.label]` when `flag` is 0, else the `flag` labels after the header. */
  readonly labels: number[];
  /** The image bytes (a view into the payload). */
  readonly data: Buffer;
}

const TWO_POW_32 = 2 ** 32;

/** Packs a single-label header (flag 0): the only kind the packer writes. */
export function packIrHeader(header: IrHeader): Buffer {
  if (header.flag !== 0) {
    throw new RangeError(`only flag 0 (one label in the header) is supported, got flag ${header.flag}`);
  }
  const buffer = Buffer.allocUnsafe(IR_HEADER_SIZE);
  buffer.writeUInt32LE(header.flag, 0);
  buffer.writeFloatLE(header.label, 4);
  writeUInt64(buffer, 8, header.id, 'id');
  writeUInt64(buffer, 16, header.id2, 'id2');
  return buffer;
}

/** Splits an image record's payload into header, labels and image bytes, as `mx.recordio.unpack` does. */
export function unpackImageRecord(payload: Buffer): ImageRecord {
  if (payload.length < IR_HEADER_SIZE) {
    throw new FormatError(`image record of ${payload.length} bytes is shorter than the ${IR_HEADER_SIZE}-byte IRHeader`);
  }
  const header: IrHeader = {
    flag: payload.readUInt32LE(0),
    label: payload.readFloatLE(4),
    id: readUInt64(payload, 8, 'id'),
    id2: readUInt64(payload, 16, 'id2'),
  };
  if (header.flag === 0) return { header, labels: [header.label], data: payload.subarray(IR_HEADER_SIZE) };
  const dataStart = IR_HEADER_SIZE + 4 * header.flag;
  if (dataStart > payload.length) {
    throw new FormatError(`IRHeader announces ${header.flag} labels but the record has only ${payload.length} bytes`);
  }
  const labels: number[] = [];
  for (let at = IR_HEADER_SIZE; at < dataStart; at += 4) labels.push(payload.readFloatLE(at));
  return { header, labels, data: payload.subarray(dataStart) };
}

function writeUInt64(buffer: Buffer, at: number, value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`IRHeader ${field} must be a non-negative safe integer, got ${value}`);
  }
  buffer.writeUInt32LE(value % TWO_POW_32, at);
  buffer.writeUInt32LE(Math.floor(value / TWO_POW_32), at + 4);
}

function readUInt64(buffer: Buffer, at: number, field: string): number {
  const value = buffer.readUInt32LE(at + 4) * TWO_POW_32 + buffer.readUInt32LE(at);
  if (!Number.isSafeInteger(value)) throw new FormatError(`IRHeader ${field} ${value} is beyond 2^53`);
  return value;
}
