import { types } from 'node:util';
import type { ShardFormat } from './formats/shard-format';
import type { Encoded } from './formats/encoded';
import type { ObjectWriter, PackingSink, PackingSource } from '../io/storage';
import { ScratchBuffer } from '../io/storage';
import { isUnreadableInput } from '../io/unreadable-input';
import type { ManifestFailure, ManifestShard } from './manifest';
import { INDEX_FOLDER, membersKeyInVersion, SHARDS_FOLDER } from './dataset-layout';
import { crc32Base64, crc32cBase64 } from '../io/s3-checksum';
import { serializeMembers } from './members';
import { OutputBlock } from './output-block';
import type { PlannedRecord, PlannedShard } from './planning/plan-types';
import { MAX_SHARD_BYTES } from '../../lib/contract/shard-limits';
import { MIB } from '../../lib/contract/units';
import type { ImagePreprocessing } from './preprocess/image-preprocessing';
import { ImagePreprocessor, PREPROCESSED_FORMAT } from './preprocess/image-preprocessor';
import { UndecodableImageError } from './image-check/undecodable-image';
import { imageCheckFailure, READER_RULES } from './image-check/image-check';
import { PreprocessedReads } from './preprocess/preprocessed-reads';
import type { PartReadFailure, SampleOutcome } from './samples/sample-records';
import { SampleRecords } from './samples/sample-records';
import { refusePreprocessedSamples } from './samples/sample-grouping';

/** How one shard is written. */
export interface ShardWriterOptions {
  readonly source: PackingSource;
  readonly sink: PackingSink;
  readonly format: ShardFormat;
  /** Files read ahead of the writer at most (bounds memory: about this many files in flight); sources that read in place read one at a time. */
  readonly readConcurrency: number;
  /** Called after each input file with its size, whether it became a record or a failure. */
  readonly onFile?: (bytes: number) => void;
  /** Resize and re-encode each image before it becomes a record (default: the files' bytes, unchanged). */
  readonly preprocessing?: ImagePreprocessing;
  /**
   * With preprocessing, images resized at once by this writer (default 2): the CLI runs a writer per
   * core; a Lambda packer, one writer, passes its vCPU count so that its memory size buys speed.
   */
  readonly imagesInFlight?: number;
  /**
   * Check that every file is an image the training readers decode (image/image-check.ts) and list
   * those that are not as failures (default false: any bytes become records). Preprocessing checks
   * every file whatever this says.
   */
  readonly checkImages?: boolean;
  /**
   * Names this attempt at the shard in its keys (`shards/<name>.<attempt>.tfrecord`, `index/<name>.<attempt>.idx`), for
   * writers that may run twice at once (a Step Functions retry while the first Lambda attempt still runs): each writes its
   * own objects, never another's, and the finalizer adopts the one attempt its result names (default: `<name>.tfrecord`,
   * for runs that write each shard once).
   */
  readonly attempt?: string;
}

/** What writing one shard produced. */
export interface ShardResult {
  readonly shard: ManifestShard;
  readonly failures: ManifestFailure[];
}

/** Bytes gathered before one write: few system calls, bounded memory. */
const BLOCK_BYTES = 4 * 1024 * 1024;

/** Images preprocessed at once per shard writer by default (see PreprocessedReads): measured on 2 CPUs, 1,000 JPEGs of ~0.6 MP. */
const PREPROCESS_AHEAD = 2;

/**
 * Writes one planned shard and its index: reads the members with bounded read-ahead, frames them
 * in plan order (deterministic bytes), streams the frames to the sink with a running CRC32C, and
 * lists every member that does not exist, may not be read, cannot be framed or (with
 * preprocessing or the image check) is no image the readers decode as a failure instead of dropping it. Any other read error (the store unreachable, timeouts, throttling that
 * outlasted the retries) fails the shard: the input is not known to be lost, so it is not listed.
 * The shard appears only when complete; a failed write leaves nothing behind.
 */
export async function writeShard(planned: PlannedShard, options: ShardWriterOptions): Promise<ShardResult> {
  const { format, sink } = options;
  // Keys relative to the sink, which is rooted at the version's folder (dataset-layout.ts).
  const stem = options.attempt === undefined ? planned.name : `${planned.name}.${options.attempt}`;
  const key = `${SHARDS_FOLDER}${stem}${format.extension}`;
  const indexKey = `${INDEX_FOLDER}${stem}.idx`;
  const writer = await sink.create(key);
  try {
    const written = await writeRecords(planned.records, writer, options);
    await writer.complete();
    await sink.put(indexKey, Buffer.from(written.index));
    return {
      shard: {
        key,
        indexKey,
        membersKey: membersKeyInVersion(planned.name),
        records: written.recordIds.length,
        bytes: written.bytes,
        crc32c: crc32cBase64(written.crc),
        crc32: crc32Base64(written.crc32),
        firstRecordId: written.recordIds[0] ?? -1,
        lastRecordId: written.recordIds[written.recordIds.length - 1] ?? -1,
      },
      failures: written.failures,
    };
  } catch (error) {
    // The write's own error says what went wrong; a failed abort (the store is down) must not hide it.
    const abortError = await writer.abort().then(() => undefined, (problem: unknown) => problem);
    if (abortError === undefined) throw error;
    throw new Error(`${describe(error)}; aborting ${key} failed too: ${describe(abortError)}`, { cause: error });
  }
}

/**
 * {@link writeShard}, then the shard's member list, which the version keeps so that the next repack
 * can tell which shards changed. For runs that plan and write in one go (the CLI): the Lambda
 * planner writes every member list before its packers start. Written where the shard was, so that
 * with worker threads the thread that wrote the shard serializes its list, not the planning thread.
 */
export async function writeShardWithMembers(planned: PlannedShard, options: ShardWriterOptions): Promise<ShardResult> {
  const result = await writeShard(planned, options);
  await options.sink.put(membersKeyInVersion(planned.name), serializeMembers(planned.records));
  return result;
}

function describe(error: unknown): string {
  return types.isNativeError(error) ? error.message : String(error);
}

interface WrittenRecords {
  readonly bytes: number;
  readonly crc: number;
  /** zlib's CRC-32 of the same bytes (the manifest's `crc32`). */
  readonly crc32: number;
  readonly index: string;
  readonly recordIds: number[];
  readonly failures: ManifestFailure[];
}

async function writeRecords(records: PlannedRecord[], writer: ObjectWriter, options: ShardWriterOptions): Promise<WrittenRecords> {
  const { format } = options;
  // Made here, not per file: it loads sharp (failing the shard at once when it is missing) and checks the settings once.
  const preprocessor = options.preprocessing ? new ImagePreprocessor(options.preprocessing) : undefined;
  // A plan holds multi-part samples throughout or not at all (lambda/packing/samples/).
  const samples = records[0]?.parts ? sampleRecords(records, options, preprocessor !== undefined) : undefined;
  const reads = preprocessor ? preprocessedReads(records, options, preprocessor) : memberReads(records, options);
  const checkImages = options.checkImages === true && !preprocessor;
  const output = new OutputBlock(writer, BLOCK_BYTES);
  const failures: ManifestFailure[] = [];
  const recordIds: number[] = [];
  const indexLines: string[] = [];

  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    let encoded: Encoded | string;
    let inputBytes = record.size;
    if (samples) {
      const outcome = await samples.take(i);
      encoded = isPartReadFailure(outcome) ? `part '${outcome.part}' (${record.key}.${outcome.part}): ${listedFailure(outcome.error)}` : outcome;
    } else {
      const taken = reads.take(i);
      const data = taken instanceof Promise ? await taken : taken;
      // The input's bytes, as the progress totals count them (a preprocessed record holds fewer).
      if (Buffer.isBuffer(data) && !preprocessor) inputBytes = data.length;
      encoded = types.isNativeError(data) ? listedFailure(data)
        : (checkImages ? imageCheckFailure(data, READER_RULES) : undefined) ?? frame(format, record, data, preprocessor !== undefined);
    }
    if (typeof encoded === 'string') {
      failures.push({ key: record.key, reason: encoded });
      options.onFile?.(inputBytes);
      continue;
    }
    indexLines.push(format.indexLine(record.recordId, output.size, encoded.size));
    recordIds.push(record.recordId);
    const appending = output.append(encoded);
    if (appending) await appending;
    options.onFile?.(inputBytes);
  }
  await output.flush();
  return { bytes: output.size, crc: output.checksum, crc32: output.zlibChecksum, index: indexLines.join(''), recordIds, failures };
}

/**
 * Why a member whose read ended in `error` is a listed failure: a file too large for any shard,
 * bytes that do not decode (facts of the input: never retried), or an input that does not exist or
 * may not be read. Any other error is rethrown: the input is not known to be lost, the shard fails.
 */
function listedFailure(error: Error): string {
  if (error instanceof TooLargeForShard || error instanceof UndecodableImageError) return error.message;
  if (!isUnreadableInput(error)) throw error;
  return describeReadError(error);
}

/** The member's record, or why it is a listed failure: it cannot be framed, or its record is over the shard ceiling (the file grew since it was listed). */
function frame(format: ShardFormat, record: PlannedRecord, data: Buffer, reencoded: boolean): Encoded | string {
  let encoded: Encoded;
  try {
    encoded = format.encode({ data, key: record.key, label: record.label, recordId: record.recordId, format: reencoded ? PREPROCESSED_FORMAT : undefined });
  } catch (error) {
    return (error as Error).message;
  }
  return encoded.size > MAX_SHARD_BYTES ? new TooLargeForShard(data.length).message : encoded;
}

/** The members' samples, read a few ahead (multi-part samples are never preprocessed: see refusePreprocessedSamples). */
function sampleRecords(records: PlannedRecord[], options: ShardWriterOptions, preprocessed: boolean): SampleRecords {
  if (preprocessed) throw refusePreprocessedSamples();
  return new SampleRecords(records, options.source, options.format, Math.max(1, options.readConcurrency));
}

function isPartReadFailure(outcome: SampleOutcome): outcome is PartReadFailure {
  return typeof outcome === 'object' && 'error' in outcome;
}

/** The members' images, preprocessed a few at once: reads in place each with a buffer of their own (see PreprocessedReads). */
function preprocessedReads(records: PlannedRecord[], options: ShardWriterOptions, preprocessor: ImagePreprocessor): MemberReads {
  const ahead = Math.max(1, options.imagesInFlight ?? PREPROCESS_AHEAD);
  const readers = options.source.readInto ? Array.from({ length: ahead }, () => memberReads(records, options)) : [memberReads(records, options)];
  return new PreprocessedReads(readers, records.length, preprocessor, ahead);
}

/** The members' bytes in plan order; a buffer taken is valid until the next `take`. */
interface MemberReads {
  take(position: number): Buffer | Error | Promise<Buffer | Error>;
}

/**
 * A file too large for any shard: a shard holds whole files, and a shard over the ceiling would
 * outgrow a packer Lambda's memory and a Pipe-mode FIFO's restart cost (see MAX_SHARD_BYTES). Listed
 * as a failure, never read, rather than failing the run: the other files pack as usual, the summary
 * and the exit status (1 without --allow-missing) say which file it was, and nothing else is lost.
 */
class TooLargeForShard extends Error {
  constructor(bytes: number) {
    super(`${bytes} bytes (${(bytes / MIB).toFixed(1)} MiB) is over the ${MAX_SHARD_BYTES / MIB} MiB shard limit: a shard holds whole files, `
      + 'so this one cannot be packed; split or shrink it, or leave it out of the source');
    this.name = 'TooLargeForShard';
  }
}

/** In place when the source reads locally, else concurrently with read-ahead; a file listed over the shard limit is not read. */
function memberReads(records: PlannedRecord[], options: ShardWriterOptions): MemberReads {
  const { source } = options;
  if (source.readInto) {
    const scratch = new ScratchBuffer();
    const readInto = source.readInto.bind(source);
    return {
      take: (position) => {
        if (records[position].size > MAX_SHARD_BYTES) return new TooLargeForShard(records[position].size);
        try {
          return readInto(records[position].key, records[position].size, scratch);
        } catch (error) {
          return toError(error);
        }
      },
    };
  }
  return new ReadAhead(records, source, Math.max(1, options.readConcurrency));
}

/**
 * Reads files in plan order with at most `limit` reads in flight: the writer takes them in order
 * while the next ones load, so memory holds about `limit` files, never the whole shard.
 */
class ReadAhead implements MemberReads {
  private readonly inFlight = new Map<number, Promise<Buffer | Error>>();
  private next = 0;

  constructor(private readonly records: PlannedRecord[], private readonly source: PackingSource, private readonly limit: number) {}

  public take(position: number): Promise<Buffer | Error> {
    while (this.next < this.records.length && this.next < position + this.limit) {
      const { key, size } = this.records[this.next];
      this.inFlight.set(this.next, size > MAX_SHARD_BYTES ? Promise.resolve(new TooLargeForShard(size))
        : this.source.read(key, size).catch((error: unknown) => toError(error)));
      this.next++;
    }
    const read = this.inFlight.get(position)!;
    this.inFlight.delete(position);
    return read;
  }
}

/** `isNativeError`, not `instanceof Error`: errors made in another realm (a vm context, jest) keep their code. */
function toError(error: unknown): Error {
  return types.isNativeError(error) ? error : new Error(String(error));
}

/** `ENOENT: no such file or directory` rather than the whole stack or path. */
function describeReadError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error.message.replace(/, open '.*'$/, '');
  return code && !message.startsWith(code) ? `${code}: ${message}` : message;
}
