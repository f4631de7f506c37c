import { types } from 'node:util';
import type { ShardFormat } from './formats/shard-format';
import type { ObjectWriter, PackingSink, PackingSource } from './io/storage';
import { ScratchBuffer } from './io/storage';
import { isUnreadableInput } from './io/unreadable-input';
import type { ManifestFailure, ManifestShard } from './manifest';
import { INDEX_FOLDER, membersKeyInVersion, SHARDS_FOLDER } from './dataset-layout';
import { crc32cBase64 } from './manifest';
import { serializeMembers } from './members';
import { OutputBlock } from './output-block';
import type { PlannedRecord, PlannedShard } from './planning/plan-types';
import type { ImagePreprocessing } from './preprocess/image-preprocessing';

/** How one shard is written. */
export interface ShardWriterOptions {
  readonly source: PackingSource;
  readonly sink: PackingSink;
  readonly format: ShardFormat;
  /** Files read ahead of the writer at most (bounds memory: about this many files in flight); sources that read in place read one at a time. */
  readonly readConcurrency: number;
  /** Called after each input file with its size, whether it became a record or a failure. */
  readonly onFile?: (bytes: number) => void;
  /** What is done to each image before it becomes a record; absent, the file's bytes unchanged. */
  readonly preprocessing?: ImagePreprocessing;
}

/** What writing one shard produced. */
export interface ShardResult {
  readonly shard: ManifestShard;
  readonly failures: ManifestFailure[];
}

/** Bytes gathered before one write: few system calls, bounded memory. */
const BLOCK_BYTES = 4 * 1024 * 1024;

/**
 * Writes one planned shard and its index: reads the members with bounded read-ahead, frames them
 * in plan order (deterministic bytes), streams the frames to the sink with a running CRC32C, and
 * lists every member that does not exist, may not be read or cannot be framed as a failure
 * instead of dropping it. Any other read error (the store unreachable, timeouts, throttling that
 * outlasted the retries) fails the shard: the input is not known to be lost, so it is not listed.
 * The shard appears only when complete; a failed write leaves nothing behind.
 */
export async function writeShard(planned: PlannedShard, options: ShardWriterOptions): Promise<ShardResult> {
  const { format, sink } = options;
  // Keys relative to the sink, which is rooted at the version's folder (dataset-layout.ts).
  const key = `${SHARDS_FOLDER}${planned.name}${format.extension}`;
  const indexKey = `${INDEX_FOLDER}${planned.name}.idx`;
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
  readonly index: string;
  readonly recordIds: number[];
  readonly failures: ManifestFailure[];
}

async function writeRecords(records: PlannedRecord[], writer: ObjectWriter, options: ShardWriterOptions): Promise<WrittenRecords> {
  const { format } = options;
  const reads = memberReads(records, options);
  const output = new OutputBlock(writer, BLOCK_BYTES);
  const failures: ManifestFailure[] = [];
  const recordIds: number[] = [];
  const indexLines: string[] = [];

  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    const taken = reads.take(i);
    const data = taken instanceof Promise ? await taken : taken;
    if (types.isNativeError(data)) {
      if (!isUnreadableInput(data)) throw data;
      failures.push({ key: record.key, reason: describeReadError(data) });
      options.onFile?.(record.size);
      continue;
    }
    let encoded;
    try {
      encoded = format.encode({ data, key: record.key, label: record.label, recordId: record.recordId });
    } catch (error) {
      failures.push({ key: record.key, reason: (error as Error).message });
      options.onFile?.(data.length);
      continue;
    }
    indexLines.push(format.indexLine(record.recordId, output.size, encoded.size));
    recordIds.push(record.recordId);
    const appending = output.append(encoded);
    if (appending) await appending;
    options.onFile?.(data.length);
  }
  await output.flush();
  return { bytes: output.size, crc: output.checksum, index: indexLines.join(''), recordIds, failures };
}

/** The members' bytes in plan order; a buffer taken is valid until the next `take`. */
interface MemberReads {
  take(position: number): Buffer | Error | Promise<Buffer | Error>;
}

/** In place when the source reads locally, else concurrently with read-ahead. */
function memberReads(records: PlannedRecord[], options: ShardWriterOptions): MemberReads {
  const { source } = options;
  if (source.readInto) {
    const scratch = new ScratchBuffer();
    const readInto = source.readInto.bind(source);
    return {
      take: (position) => {
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
      this.inFlight.set(this.next, this.source.read(key, size).catch((error: unknown) => toError(error)));
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
