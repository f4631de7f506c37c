import { types } from 'node:util';
import type { Encoded } from '../formats/encoded';
import type { RecordPart, ShardFormat } from '../formats/shard-format';
import type { PackingSource } from '../../io/storage';
import { parseBoundedJson } from '../../io/bounded-json';
import { imageCheckFailure, READER_RULES } from '../image-check/image-check';
import type { PlannedRecord } from '../planning/plan-types';
import { partKindOf } from '../../../lib/contract/sample-parts';
import { MAX_SHARD_BYTES } from '../../../lib/contract/shard-limits';
import { MIB } from '../../../lib/contract/units';

/** A part whose read failed: the shard writer decides whether that is a listed failure (the file is gone) or fails the shard. */
export interface PartReadFailure {
  readonly part: string;
  readonly error: Error;
}

/** What became of a sample: its framed record, why it is a listed failure, or a part's read error. */
export type SampleOutcome = Encoded | string | PartReadFailure;

/**
 * The records of multi-part samples in plan order: each sample's parts read at once, `ahead` samples
 * ahead of the writer (memory: about `ahead` samples), then checked (every image part as the training
 * readers decode images, every JSON part parsed within lib/contract/json-limits.ts) and framed. A sample
 * with a bad part is a listed failure naming the part and why; it never becomes a record with a hole.
 */
export class SampleRecords {
  /** Each sample's reads; undefined for one over the ceiling, never read. */
  private readonly inFlight = new Map<number, Promise<Array<Buffer | Error>> | undefined>();
  private next = 0;

  constructor(private readonly records: readonly PlannedRecord[], private readonly source: PackingSource,
    private readonly format: ShardFormat, private readonly ahead: number) {}

  public async take(position: number): Promise<SampleOutcome> {
    while (this.next < this.records.length && this.next < position + this.ahead) {
      this.inFlight.set(this.next, this.read(this.records[this.next]));
      this.next++;
    }
    const reads = this.inFlight.get(position);
    this.inFlight.delete(position);
    const record = this.records[position];
    if (!reads) return tooLarge(record.size);
    const data = await reads;
    const parts: RecordPart[] = [];
    for (let i = 0; i < data.length; i++) {
      const name = record.parts![i].name;
      const bytes = data[i];
      if (types.isNativeError(bytes)) return { part: name, error: bytes };
      const problem = samplePartProblem(record.key, name, bytes);
      if (problem) return problem;
      parts.push({ name, data: bytes });
    }
    return this.frame(record, parts);
  }

  private read(record: PlannedRecord): Promise<Array<Buffer | Error>> | undefined {
    // Over the ceiling as listed: never read (see the shard writer's TooLargeForShard).
    if (record.size > MAX_SHARD_BYTES) return undefined;
    return Promise.all(record.parts!.map((part) => this.source.read(`${record.key}.${part.name}`, part.size)
      .catch((error: unknown) => (types.isNativeError(error) ? error : new Error(String(error))))));
  }

  private frame(record: PlannedRecord, parts: RecordPart[]): Encoded | string {
    let encoded: Encoded;
    try {
      encoded = this.format.encode({ data: Buffer.alloc(0), key: record.key, label: record.label, recordId: record.recordId, parts, imagePart: record.imagePart });
    } catch (error) {
      return (error as Error).message;
    }
    return encoded.size > MAX_SHARD_BYTES ? tooLarge(encoded.size) : encoded;
  }
}

/** Why a part's bytes are not what its kind says, or undefined: images are checked as the readers decode them, JSON parsed. */
export function partProblem(part: string, data: Buffer, name: string): string | undefined {
  switch (partKindOf(part)) {
    case 'image':
      return imageCheckFailure(data, READER_RULES);
    case 'json':
      try {
        parseBoundedJson(name, data);
        return undefined;
      } catch (error) {
        return `not valid JSON (${(error as Error).message.replace(`${name}: `, '')})`;
      }
    default:
      return undefined;
  }
}

/**
 * Why a sample's part is not what its kind says, naming the part and its file, or undefined: the
 * words of the sample's listed failure at pack time and of `verify --images` on a packed record.
 */
export function samplePartProblem(sample: string, part: string, data: Buffer): string | undefined {
  const name = `${sample}.${part}`;
  const problem = partProblem(part, data, name);
  return problem && `part '${part}' (${name}): ${problem}`;
}

function tooLarge(bytes: number): string {
  return `${bytes} bytes (${(bytes / MIB).toFixed(1)} MiB) is over the ${MAX_SHARD_BYTES / MIB} MiB shard limit: a shard holds whole samples, `
    + 'so this one cannot be packed; shrink its parts or leave it out of the source';
}
