import type { ShardFormatName } from '../packing/formats/shard-format';
import type { Manifest } from '../packing/manifest';
import type { PlannedRecord, PlannedShard } from '../packing/planning/plan-types';
import { HandlerInputError } from './handler-input';

/**
 * Where a run keeps its working files, relative to the dataset prefix. Not under `shards/` or
 * `index/`: a channel reads everything there.
 */
export const PLAN_PREFIX = '_plan/';
/** The Map's item list: a JSON array of {@link ShardTask}. */
export const TASKS_KEY = `${PLAN_PREFIX}tasks.json`;
/** What the planner planned: the finalizer's source of truth. */
export const PLAN_KEY = `${PLAN_PREFIX}plan.json`;

/** The member list of one shard: one JSON array `[key, size, label, recordId]` per line, in write order. */
export function membersKey(shardName: string): string {
  return `${PLAN_PREFIX}${shardName}.jsonl`;
}

/** What one packer wrote: a {@link PackedShardResult}. */
export function resultKey(shardName: string): string {
  return `${PLAN_PREFIX}results/${shardName}.json`;
}

/** One item of the Map: the shard a packer writes. */
export interface ShardTask {
  /** 0-based position of the shard. */
  readonly shardIndex: number;
  /** `part-00000-of-00128`. */
  readonly shardName: string;
  /** Key of its member list, relative to the dataset prefix. */
  readonly membersKey: string;
}

/** The contents of `_plan/plan.json`. */
export interface PlanSummary {
  readonly version: 1;
  readonly format: ShardFormatName;
  readonly seed: number;
  readonly source: Manifest['source'];
  /** Class name → label, names sorted; empty without labels. */
  readonly labels: Record<string, number>;
  readonly shardCount: number;
}

/** The contents of `_plan/results/<shard>.json`. */
export interface PackedShardResult {
  readonly shard: Manifest['shards'][number];
  readonly failures: Manifest['failures'];
}

/**
 * JSON lines of compact arrays: about half the bytes of objects with field names, which matters
 * when 10 million members are written and read back.
 */
export function serializeMembers(shard: PlannedShard): Buffer {
  const lines = new Array<string>(shard.records.length);
  for (let i = 0; i < shard.records.length; i++) {
    const record = shard.records[i];
    lines[i] = `${JSON.stringify([record.key, record.size, record.label, record.recordId])}\n`;
  }
  return Buffer.from(lines.join(''));
}

/** Reads a member list back into the shard the shard writer takes; errors name the object and the line. */
export function parseMembers(task: ShardTask, data: Buffer): PlannedShard {
  const records: PlannedRecord[] = [];
  let bytes = 0;
  const lines = data.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === '') continue;
    let entry: unknown;
    try {
      entry = JSON.parse(lines[i]);
    } catch {
      entry = undefined;
    }
    if (!isMember(entry)) {
      throw new HandlerInputError(
        `${task.membersKey} line ${i + 1}: expected [key, size, label, recordId], got ${lines[i].slice(0, 80)}`,
      );
    }
    const [key, size, label, recordId] = entry;
    records.push({ key, size, label, recordId });
    bytes += size;
  }
  return { index: task.shardIndex, name: task.shardName, records, bytes };
}

function isMember(entry: unknown): entry is [string, number, number, number] {
  return Array.isArray(entry) && entry.length === 4 && typeof entry[0] === 'string'
    && Number.isSafeInteger(entry[1]) && entry[1] >= 0
    && Number.isSafeInteger(entry[2]) && entry[2] >= -1
    && Number.isSafeInteger(entry[3]) && entry[3] >= 0;
}

/** Reads a JSON object the run wrote; errors name the key. */
export function parseJsonObject<T>(key: string, data: Buffer): T {
  try {
    const value: unknown = JSON.parse(data.toString('utf8'));
    if (value !== null && typeof value === 'object') return value as T;
  } catch {
    // reported below
  }
  throw new HandlerInputError(`${key} is not the JSON this run writes: ${data.subarray(0, 80).toString('utf8')}`);
}
