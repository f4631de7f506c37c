import type { ShardAssignment } from './assign-shards';
import { assignShards } from './assign-shards';
import { PlanError } from './plan-error';
import type { PlannedRecord, PlannedShard, SourceFile } from './plan-types';
import { SeededRandom } from './seeded-random';
import { shardName } from './shard-name';
import { MAX_SHARD_BYTES } from '../../../lib/contract/shard-limits';
import { describeBytes } from '../../../lib/contract/packing-settings';

// The steps of planning that whole listings and groups of a large one share (see planShards).

/** Where a run of shards starts in the whole plan. */
export interface ShardNumbering {
  readonly firstShard: number;
  readonly firstRecordId: number;
  readonly totalShards: number;
}

/** The files' positions in seeded shuffled order, and their sizes in that order. */
export function shuffle(sizes: Float64Array, seed: number): { readonly shuffled: Uint32Array; readonly shuffledSizes: Float64Array } {
  const shuffled = new Uint32Array(sizes.length);
  for (let i = 0; i < shuffled.length; i++) shuffled[i] = i;
  new SeededRandom(seed).shuffle(shuffled);
  // Sizes in shuffled order: the assignment then reads them front to back, from one typed array.
  const shuffledSizes = new Float64Array(shuffled.length);
  for (let position = 0; position < shuffled.length; position++) shuffledSizes[position] = sizes[shuffled[position]];
  return { shuffled, shuffledSizes };
}

/** `0.99999905 MiB (1048575 bytes)`: MiB to read the scale, bytes to see an off-by-one (the settings codec's). */
export { describeBytes };

/**
 * The requested count rounded up to a multiple of consumers, or down to the most that every get a
 * file.
 * @throws PlanError when there are more consumers than files
 */
export function firstShardCount(fileCount: number, requested: number, consumers: number): number {
  const mostShards = Math.floor(fileCount / consumers) * consumers;
  if (mostShards === 0) {
    throw new PlanError(
      `consumers is ${consumers} but the source has only ${fileCount} file${fileCount === 1 ? '' : 's'}: the shard count must be a `
      + `multiple of consumers and every shard needs a file, so ${consumers - fileCount} consumers would get empty shards `
      + `(nothing to read); use at most ${fileCount} consumers`,
    );
  }
  return Math.min(roundUp(requested, consumers), mostShards);
}

/**
 * Assigns with the requested shard count; while a shard of more than one file exceeds the ceiling,
 * adds shards (in multiples of consumers): first in proportion to the overshoot, so a large
 * dataset needs one or two re-plans, then bisects back to the fewest shards that fit, so coarse
 * files (e.g. 50 MiB each) do not end with more shards than needed.
 */
export function assignWithinCeiling(sizes: Float64Array, totalBytes: number, requested: number, consumers: number): ShardAssignment {
  const fileCount = sizes.length;
  const mostShards = Math.floor(fileCount / consumers) * consumers;
  let tooFew = firstShardCount(fileCount, requested, consumers);
  let assignment = assignShards(sizes, totalBytes, tooFew);
  if (withinCeiling(assignment)) return assignment;

  let enough: number;
  for (;;) {
    if (tooFew === mostShards) {
      const heaviest = heaviestSharedShard(assignment);
      throw new PlanError(
        `cannot keep every shard of more than one file within 128 MiB: with ${tooFew} shards (the most that is a multiple `
        + `of consumers ${consumers} with ${fileCount} files) shard ${heaviest} holds ${describeBytes(assignment.bytes[heaviest])} `
        + `in ${assignment.records[heaviest]} files; use fewer consumers`,
      );
    }
    const grown = Math.ceil((tooFew * assignment.bytes[heaviestSharedShard(assignment)]) / MAX_SHARD_BYTES);
    const candidate = Math.min(roundUp(Math.max(tooFew + consumers, grown), consumers), mostShards);
    assignment = assignShards(sizes, totalBytes, candidate);
    if (withinCeiling(assignment)) {
      enough = candidate;
      break;
    }
    tooFew = candidate;
  }

  let best = assignment;
  while (enough - tooFew > consumers) {
    const middle = tooFew + Math.floor((enough - tooFew) / consumers / 2) * consumers;
    const trial = assignShards(sizes, totalBytes, middle);
    if (withinCeiling(trial)) {
      enough = middle;
      best = trial;
    } else {
      tooFew = middle;
    }
  }
  return best;
}

export function withinCeiling(assignment: ShardAssignment): boolean {
  const heaviest = heaviestSharedShard(assignment);
  return heaviest < 0 || assignment.bytes[heaviest] <= MAX_SHARD_BYTES;
}

/** The shard with the most bytes among shards of more than one file, or -1 if none. */
export function heaviestSharedShard(assignment: ShardAssignment): number {
  let heaviest = -1;
  for (let shard = 0; shard < assignment.bytes.length; shard++) {
    if (assignment.records[shard] > 1 && (heaviest < 0 || assignment.bytes[shard] > assignment.bytes[heaviest])) {
      heaviest = shard;
    }
  }
  return heaviest;
}

export function roundUp(value: number, multiple: number): number {
  return Math.ceil(value / multiple) * multiple;
}

/**
 * Lays out each shard's records in shuffled order (a counting sort over the shuffle, O(n)) and
 * numbers them consecutively across shards in shard order, from the given first shard and record id.
 */
export function writeOrder(
  sorted: readonly SourceFile[], labels: Int32Array | undefined, shuffled: Uint32Array, assignment: ShardAssignment,
  numbering: ShardNumbering = { firstShard: 0, firstRecordId: 0, totalShards: assignment.records.length },
): PlannedShard[] {
  const shardCount = assignment.records.length;
  const next = new Float64Array(shardCount);
  for (let shard = 1; shard < shardCount; shard++) {
    next[shard] = next[shard - 1] + assignment.records[shard - 1];
  }
  const inWriteOrder = new Uint32Array(sorted.length);
  for (let position = 0; position < shuffled.length; position++) {
    inWriteOrder[next[assignment.shardAt[position]]++] = shuffled[position];
  }

  const shards: PlannedShard[] = [];
  let written = 0;
  for (let shard = 0; shard < shardCount; shard++) {
    const records = new Array<PlannedRecord>(assignment.records[shard]);
    for (let r = 0; r < records.length; r++, written++) {
      const file = inWriteOrder[written];
      const recordId = numbering.firstRecordId + written;
      const { key, size, modified, parts, imagePart } = sorted[file];
      const label = labels ? labels[file] : -1;
      // No `parts` field at all for one-file records: their plans stay what they were.
      records[r] = parts ? { key, size, label, recordId, modified, parts, imagePart } : { key, size, label, recordId, modified };
    }
    const index = numbering.firstShard + shard;
    shards.push({ index, name: shardName(index, numbering.totalShards), records, bytes: assignment.bytes[shard] });
  }
  return shards;
}
