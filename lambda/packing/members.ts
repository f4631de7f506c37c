import type { PackingSink } from '../io/storage';
import { isObjectNotFound } from '../io/storage';
import { mapLimited } from './limited';
import type { ManifestShard } from './manifest';
import type { PlannedRecord, PlannedShard } from './planning/plan-types';

/**
 * A shard's member list: one JSON array `[key, size, label, recordId, modified]` per line (a
 * multi-part sample adds `[[part, size], ...]` and its image part, if any, its key being the sample's), in
 * write order. JSON lines of compact arrays are about half the bytes of objects with field names,
 * which matters when 10 million members are written and read back. The planner writes them for
 * the packers; a version keeps them so that the next repack can tell which shards changed.
 */
export function serializeMembers(records: readonly PlannedRecord[]): Buffer {
  const lines = new Array<string>(records.length);
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    const member: unknown[] = [record.key, record.size, record.label, record.recordId, record.modified ?? 0];
    // A multi-part sample's parts as a sixth element, [[name, size], ...]; one-file members stay five long.
    if (record.parts) member.push(record.parts.map((part) => [part.name, part.size]), ...(record.imagePart ? [record.imagePart] : []));
    lines[i] = `${JSON.stringify(member)}\n`;
  }
  return Buffer.from(lines.join(''));
}

/** A member list that is not what this engine writes. */
export class MemberListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemberListError';
  }
}

/** Reads a member list back; errors name the object (`key`) and the line. */
export function parseMembers(key: string, data: Buffer): PlannedRecord[] {
  const records: PlannedRecord[] = [];
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
      throw new MemberListError(`${key} line ${i + 1}: expected [key, size, label, recordId, modified(, parts)], got ${lines[i].slice(0, 80)}`);
    }
    const [memberKey, size, label, recordId, modified, parts, imagePart] = entry;
    const record = { key: memberKey, size, label, recordId, modified: modified ?? 0 };
    records.push(parts ? { ...record, parts: parts.map(([name, partSize]) => ({ name, size: partSize })), imagePart } : record);
  }
  return records;
}

/** The shard the shard writer takes, from its member list. */
export function plannedShardOf(index: number, name: string, records: PlannedRecord[]): PlannedShard {
  let bytes = 0;
  for (const record of records) bytes += record.size;
  return { index, name, records, bytes };
}

function isMember(entry: unknown): entry is [string, number, number, number, number?, Array<[string, number]>?, string?] {
  return Array.isArray(entry) && entry.length >= 4 && entry.length <= 7 && typeof entry[0] === 'string'
    && Number.isSafeInteger(entry[1]) && entry[1] >= 0
    && Number.isSafeInteger(entry[2]) && entry[2] >= -1
    && Number.isSafeInteger(entry[3]) && entry[3] >= 0
    && (entry.length === 4 || (typeof entry[4] === 'number' && Number.isFinite(entry[4])))
    && (entry.length < 6 || isPartList(entry[5]))
    && (entry.length < 7 || (entry[5] as Array<[string, number]>).some(([name]) => name === entry[6]));
}

function isPartList(parts: unknown): boolean {
  return Array.isArray(parts) && parts.length > 0 && parts.every((part) => Array.isArray(part) && part.length === 2
    && typeof part[0] === 'string' && part[0] !== '' && Number.isSafeInteger(part[1]) && part[1] >= 0);
}

/** Member lists read at once (S3 reads are latency-bound). */
const MEMBER_READS_AT_ONCE = 16;

/**
 * The member lists of a version's shards, in shard order, for an incremental repack. A list that
 * is missing or garbled fails the run naming it, and says how to go on: a full repack needs none.
 * Only a missing one: a store that did not answer says nothing of the list, and fails as it is.
 */
export function readMembers(sink: Pick<PackingSink, 'get'>, shards: readonly ManifestShard[]): Promise<PlannedRecord[][]> {
  const fullRepack = 'the incremental repack compares it to tell which shards changed: repack everything with --full (fullRepack) to go on without it';
  return mapLimited(shards, MEMBER_READS_AT_ONCE, async (shard) => {
    const data = await sink.get(shard.membersKey).catch((error: Error) => {
      if (!isObjectNotFound(error)) throw error;
      throw new MemberListError(`member list ${shard.membersKey} of the current version is missing (${error.message}); ${fullRepack}`);
    });
    try {
      return parseMembers(shard.membersKey, data);
    } catch (error) {
      if (!(error instanceof MemberListError)) throw error;
      throw new MemberListError(`member list ${error.message}; ${fullRepack}`);
    }
  });
}
