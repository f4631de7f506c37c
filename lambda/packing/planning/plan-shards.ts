import { assignShards, ShardAssignment } from './assign-shards';
import { sortByKeyInCodePointOrder } from './key-order';
import { labelByFolder } from './label-map';
import { PlanError } from './plan-error';
import { LabelMode, PlannedRecord, PlannedShard, PlanOptions, ShardPlan, SourceFile } from './plan-types';
import { SeededRandom } from './seeded-random';
import { shardName } from './shard-name';

export { PlanError } from './plan-error';

const MIB = 1024 * 1024;

/** Smallest allowed `targetShardBytes`. */
export const MIN_TARGET_SHARD_BYTES = 1 * MIB;
/** Largest allowed `targetShardBytes`. */
export const MAX_TARGET_SHARD_BYTES = 128 * MIB;
/** `targetShardBytes` when not given. */
export const DEFAULT_TARGET_SHARD_BYTES = 64 * MIB;
/** No shard of more than one file holds more (one packer Lambda writes one shard); a single larger file still is a shard. */
export const SHARD_CEILING_BYTES = 128 * MIB;

/** Options with defaults applied, checked. */
interface PlanSettings {
  readonly seed: number;
  readonly targetShardBytes: number;
  readonly shardCount?: number;
  readonly consumers: number;
  readonly labels: LabelMode;
}

/**
 * Plans how files become shards: every file exactly once, shuffled with the seed, spread over
 * shards of about equal bytes and equal record counts. Pure and deterministic: the same set of
 * files (in any order) and the same options give a deep-equal plan.
 *
 * Shard count: `shardCount`, else ceil(total bytes / `targetShardBytes`) (at least 1); never more
 * than the files; rounded up to a multiple of `consumers` (down, if up would exceed the files).
 * It then grows, in multiples of `consumers`, until no shard of more than one file exceeds
 * 128 MiB. O(n log n) time; beyond the returned plan, memory is a few typed arrays of n entries.
 *
 * @throws PlanError for bad options, no files, a duplicate key, a size that is not a whole number
 * of bytes ≥ 0, a root-level key with labels `folder`, or more consumers than files.
 */
export function planShards(files: readonly SourceFile[], options: PlanOptions): ShardPlan {
  const settings = checkOptions(options);
  if (!Array.isArray(files) || files.length === 0) {
    throw new PlanError('files is empty: nothing to pack (the source lists no files)');
  }
  const totalBytes = checkFiles(files);
  const sorted = sortByKeyInCodePointOrder(files);
  const sizes = sizesOfUniqueKeys(sorted);
  const labelling = settings.labels === 'folder' ? labelByFolder(sorted) : undefined;

  const shuffled = new Uint32Array(sorted.length);
  for (let i = 0; i < shuffled.length; i++) shuffled[i] = i;
  new SeededRandom(settings.seed).shuffle(shuffled);
  // Sizes in shuffled order: the assignment then reads them front to back, from one typed array.
  const shuffledSizes = new Float64Array(shuffled.length);
  for (let position = 0; position < shuffled.length; position++) shuffledSizes[position] = sizes[shuffled[position]];

  const assignment = assignWithinCeiling(shuffledSizes, totalBytes, settings);
  const shards = writeOrder(sorted, labelling?.labels, shuffled, assignment);
  return {
    seed: settings.seed,
    shards,
    labelMap: labelling?.labelMap ?? {},
    totalFiles: sorted.length,
    totalBytes,
  };
}

function checkOptions(options: PlanOptions): PlanSettings {
  if (options === null || typeof options !== 'object') {
    throw new PlanError(`options must be an object with at least a seed, got ${String(options)}`);
  }
  const { seed, targetShardBytes, shardCount, consumers, labels } = options;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
    throw new PlanError(`seed must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}, got ${String(seed)}`);
  }
  if (targetShardBytes !== undefined && !isTargetShardBytes(targetShardBytes)) {
    throw new PlanError(
      `targetShardBytes must be a whole number of bytes between 1 MiB (${MIN_TARGET_SHARD_BYTES}) and 128 MiB `
      + `(${MAX_TARGET_SHARD_BYTES}), got ${describeBytes(targetShardBytes)}`,
    );
  }
  if (shardCount !== undefined && !isPositiveInteger(shardCount)) {
    throw new PlanError(`shardCount must be an integer of at least 1, got ${String(shardCount)}`);
  }
  if (consumers !== undefined && !isPositiveInteger(consumers)) {
    throw new PlanError(
      `consumers (instances × GPU processes × loader workers) must be an integer of at least 1, got ${String(consumers)}`,
    );
  }
  if (labels !== undefined && labels !== 'folder' && labels !== 'none') {
    throw new PlanError(`labels must be 'folder' or 'none', got ${JSON.stringify(labels)}`);
  }
  return {
    seed,
    targetShardBytes: targetShardBytes ?? DEFAULT_TARGET_SHARD_BYTES,
    shardCount,
    consumers: consumers ?? 1,
    labels: labels ?? 'folder',
  };
}

function isTargetShardBytes(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value)
    && value >= MIN_TARGET_SHARD_BYTES && value <= MAX_TARGET_SHARD_BYTES;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/** `0.99999905 MiB (1048575 bytes)`: MiB to read the scale, bytes to see an off-by-one. */
function describeBytes(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return String(value);
  return `${Number((value / MIB).toFixed(8))} MiB (${value} bytes)`;
}

/** Checks each file's key and size; returns the sum of the sizes. */
function checkFiles(files: readonly SourceFile[]): number {
  let totalBytes = 0;
  for (let i = 0; i < files.length; i++) {
    const file = files[i];
    const key: unknown = file?.key;
    if (typeof key !== 'string' || key.length === 0) {
      throw new PlanError(`file ${i} of the listing has no key (got ${JSON.stringify(key)}): every file needs a non-empty key`);
    }
    const size: unknown = file.size;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw new PlanError(`file '${key}' has size ${String(size)}: a size must be a whole number of bytes, 0 or more`);
    }
    totalBytes += size;
  }
  if (!Number.isSafeInteger(totalBytes)) {
    throw new PlanError(`the files add up to ${totalBytes} bytes, more than can be counted exactly (${Number.MAX_SAFE_INTEGER})`);
  }
  return totalBytes;
}

/** The sizes of the sorted files, checking on the way that no key is listed twice. */
function sizesOfUniqueKeys(sorted: readonly SourceFile[]): Float64Array {
  const sizes = new Float64Array(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && sorted[i].key === sorted[i - 1].key) {
      throw new PlanError(`key '${sorted[i].key}' is listed more than once: each file must be packed exactly once`);
    }
    sizes[i] = sorted[i].size;
  }
  return sizes;
}

/**
 * Assigns with the requested shard count; while a shard of more than one file exceeds the ceiling,
 * adds shards (in multiples of consumers): first in proportion to the overshoot, so a large
 * dataset needs one or two re-plans, then bisects back to the fewest shards that fit, so coarse
 * files (e.g. 50 MiB each) do not end with more shards than needed.
 */
function assignWithinCeiling(sizes: Float64Array, totalBytes: number, settings: PlanSettings): ShardAssignment {
  const fileCount = sizes.length;
  const { consumers } = settings;
  const mostShards = Math.floor(fileCount / consumers) * consumers;
  if (mostShards === 0) {
    throw new PlanError(
      `consumers is ${consumers} but the source has only ${fileCount} file${fileCount === 1 ? '' : 's'}: the shard count must be a `
      + `multiple of consumers and every shard needs a file, so ${consumers - fileCount} consumers would get empty shards `
      + `(nothing to read); use at most ${fileCount} consumers`,
    );
  }
  const requested = settings.shardCount ?? Math.max(1, Math.ceil(totalBytes / settings.targetShardBytes));
  let tooFew = Math.min(roundUp(requested, consumers), mostShards);
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
    const grown = Math.ceil((tooFew * assignment.bytes[heaviestSharedShard(assignment)]) / SHARD_CEILING_BYTES);
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

function withinCeiling(assignment: ShardAssignment): boolean {
  const heaviest = heaviestSharedShard(assignment);
  return heaviest < 0 || assignment.bytes[heaviest] <= SHARD_CEILING_BYTES;
}

/** The shard with the most bytes among shards of more than one file, or -1 if none. */
function heaviestSharedShard(assignment: ShardAssignment): number {
  let heaviest = -1;
  for (let shard = 0; shard < assignment.bytes.length; shard++) {
    if (assignment.records[shard] > 1 && (heaviest < 0 || assignment.bytes[shard] > assignment.bytes[heaviest])) {
      heaviest = shard;
    }
  }
  return heaviest;
}

function roundUp(value: number, multiple: number): number {
  return Math.ceil(value / multiple) * multiple;
}

/**
 * Lays out each shard's records in shuffled order (a counting sort over the shuffle, O(n)) and
 * numbers them consecutively across shards in shard order.
 */
function writeOrder(
  sorted: readonly SourceFile[], labels: Int32Array | undefined, shuffled: Uint32Array, assignment: ShardAssignment,
): PlannedShard[] {
  const shardCount = assignment.records.length;
  const next = new Float64Array(shardCount);
  for (let shard = 1; shard < shardCount; shard++) {
    next[shard] = next[shard - 1] + assignment.records[shard - 1];
  }
  const byRecordId = new Uint32Array(sorted.length);
  for (let position = 0; position < shuffled.length; position++) {
    byRecordId[next[assignment.shardAt[position]]++] = shuffled[position];
  }

  const shards: PlannedShard[] = [];
  let recordId = 0;
  for (let shard = 0; shard < shardCount; shard++) {
    const records = new Array<PlannedRecord>(assignment.records[shard]);
    for (let r = 0; r < records.length; r++, recordId++) {
      const file = byRecordId[recordId];
      records[r] = { key: sorted[file].key, size: sorted[file].size, label: labels ? labels[file] : -1, recordId };
    }
    shards.push({ index: shard, name: shardName(shard, shardCount), records, bytes: assignment.bytes[shard] });
  }
  return shards;
}
