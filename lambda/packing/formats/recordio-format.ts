/**
 * Shards of MXNet RecordIO image records as im2rec writes them with `--pass-through`: IRHeader
 * (flag 0, label as float32, id = global record id, id2 0) followed by the file's bytes unchanged.
 *
 * Unlabeled files (label -1) keep -1 in the header. im2rec writes 0 for unlabeled images (its
 * non-recursive `list_image` gives every file label 0), but 0 cannot be told apart from class 0;
 * -1 is what DALI's TFRecord examples read for a missing `image/class/label`, so both formats give
 * the training code the same value, and every IRHeader reader accepts any float.
 */
import { IR_HEADER_SIZE, packIrHeader } from './ir-header';
import { mxnetIndexLine } from './index-files';
import { RECORDIO_MAGIC, RECORDIO_PART_HEADER_SIZE, checkRecordIoPayloadLength, encodeRecordIo } from './recordio';
import type { Encoded } from './encoded';
import type { RecordInput, ShardFormat } from './shard-format';
import { FormatError } from './shard-format';

const TWO_POW_32 = 2 ** 32;

/**
 * Why a multi-part sample cannot be a RecordIO record: a record holds one payload after its IRHeader,
 * which MXNet's ImageRecordIter and DALI's mxnet reader decode as one image; a container of parts
 * inside it would be a format of our own that no RecordIO reader knows, and would fail theirs.
 */
export function multiPartRecordIoError(sample: string, parts: readonly string[]): FormatError {
  return new FormatError(`${sample}: a sample of ${parts.length} parts (${parts.join(', ')}) cannot be a RecordIO record, `
    + 'which holds one payload that MXNet\'s ImageRecordIter and DALI decode as an image; pack multi-part samples as TFRecord '
    + '(format: tfrecord, --format tfrecord), or leave the other parts out (exclude patterns)');
}

/** The RecordIO shard format. */
export const recordioFormat: ShardFormat = {
  name: 'recordio',
  extension: '.rec',

  encode(input: RecordInput): Encoded {
    if (input.parts) throw multiPartRecordIoError(input.key, input.parts.map((part) => part.name));
    checkRecord(input);
    const header = packIrHeader({ flag: 0, label: input.label, id: input.recordId, id2: 0 });
    return encodeRecordIo([header, input.data]);
  },

  /** Header, IRHeader, bytes, padding to 4. A magic word in the bytes adds 4 more each: a 2⁻³² chance per word, not counted. */
  recordBytes(_key: string, size: number): number {
    return RECORDIO_PART_HEADER_SIZE + Math.ceil((IR_HEADER_SIZE + size) / 4) * 4;
  },

  indexLine(recordId: number, offset: number): string {
    return mxnetIndexLine(recordId, offset);
  },
};

function checkRecord(input: RecordInput): void {
  try {
    checkRecordIoPayloadLength(IR_HEADER_SIZE + input.data.length);
  } catch (e) {
    if (e instanceof FormatError) throw new FormatError(`${input.key}: ${e.message}`);
    throw e;
  }
  if (Math.fround(input.label) !== input.label) {
    throw new FormatError(`${input.key}: label ${input.label} is not exactly representable as the IRHeader's float32`);
  }
  // dmlc-core would escape a magic word in the id correctly, but DALI's mxnet reader takes the
  // IRHeader from the first part only and computes a negative image size (shard-formats.md §3.2).
  if (input.recordId % TWO_POW_32 === RECORDIO_MAGIC) {
    throw new FormatError(`${input.key}: record id ${input.recordId} contains the RecordIO magic word, which DALI misreads`);
  }
}
