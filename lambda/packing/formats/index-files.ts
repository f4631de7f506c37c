/**
 * The index files readers need to find records without scanning shards:
 * - DALI `fn.readers.tfrecord`: one index per shard, `"<offset> <size>\n"` per record, size being
 *   the whole framed record (DALI tools/tfrecord2idx).
 * - MXNet `.idx` (`MXIndexedRecordIO.write_idx`): `"<id>\t<offset>\n"` per record, offset of the
 *   record's first magic word. DALI `fn.readers.mxnet` takes exactly one such file for all shards,
 *   with offsets into the concatenation of the shards in path order (recordio_loader.h), hence
 *   {@link GlobalRecordIoIndex}.
 */
import { FormatError } from './shard-format';

/** One line of a DALI TFRecord index. */
export interface TfRecordIndexEntry {
  readonly offset: number;
  /** The framed record's size: payload + 16. */
  readonly size: number;
}

/** One line of an MXNet `.idx`. */
export interface MxnetIndexEntry {
  readonly id: number;
  readonly offset: number;
}

/** A shard's MXNet index with the shard's size, for {@link GlobalRecordIoIndex}. */
export interface RecordIoShardIndex {
  readonly records: readonly MxnetIndexEntry[];
  /** The shard's size in bytes: where the next shard starts in the concatenation. */
  readonly bytes: number;
}

/** `"<offset> <size>\n"`. */
export function tfrecordIndexLine(offset: number, size: number): string {
  return `${offset} ${size}\n`;
}

/** `"<id>\t<offset>\n"`. */
export function mxnetIndexLine(id: number, offset: number): string {
  return `${id}\t${offset}\n`;
}

/** Parses a DALI TFRecord index; throws a FormatError naming the first bad line (1-based). */
export function parseTfRecordIndex(text: string): TfRecordIndexEntry[] {
  return parseLines(text, /^(\d+) (\d+)$/, '"<offset> <size>"', (offset, size) => ({ offset, size }));
}

/** Parses an MXNet `.idx`; throws a FormatError naming the first bad line (1-based). */
export function parseMxnetIndex(text: string): MxnetIndexEntry[] {
  return parseLines(text, /^(\d+)\t(\d+)$/, '"<id>\\t<offset>"', (id, offset) => ({ id, offset }));
}

/**
 * The one MXNet index over several shards, for DALI, made a shard at a time: each shard's offsets
 * shifted by the sizes of the shards before it, shards in the order given (the order of DALI's
 * `path` list). Written or checked a shard at a time, the index of millions of records is never
 * held whole.
 */
export class GlobalRecordIoIndex {
  private base = 0;
  private position = 0;

  /** The next shard's lines. Throws a FormatError for a record outside its shard. */
  public part(shard: RecordIoShardIndex): string {
    const lines: string[] = [];
    for (const record of shard.records) {
      if (record.offset >= shard.bytes) {
        throw new FormatError(`shard ${this.position}: record ${record.id} at offset ${record.offset} lies outside its ${shard.bytes} bytes`);
      }
      lines.push(mxnetIndexLine(record.id, this.base + record.offset));
    }
    this.base += shard.bytes;
    this.position++;
    return lines.join('');
  }
}

function parseLines<T>(text: string, pattern: RegExp, expected: string, entry: (a: number, b: number) => T): T[] {
  const lines = text.split('\n');
  // The last line ends with "\n", which leaves one empty string; an empty file has no lines.
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line, i) => {
    const match = pattern.exec(line);
    const a = match ? Number(match[1]) : NaN;
    const b = match ? Number(match[2]) : NaN;
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) {
      throw new FormatError(`index line ${i + 1}: expected ${expected}, got ${JSON.stringify(line)}`);
    }
    return entry(a, b);
  });
}
