import type { PlanLimits } from './grouped-plan';
import { GroupedPlan, PLAN_LIMITS } from './grouped-plan';
import { sortByKeyInCodePointOrder } from '../../io/key-order';
import { labelByFolder, labelsByMap } from './label-map';
import { assignWithinCeiling, firstShardCount, shuffle, writeOrder } from './plan-core';
import { PlanError } from './plan-error';
import type { LabelMode, PlannedShard, PlanOptions, RecordBytes, ShardPlan, SourceFile } from './plan-types';
import type { PackingSettingNames, PackingSettings } from '../../../lib/contract/packing-settings';
import { checkPackingSettings, normalizePackingSettings, PACKING_PROP_NAMES } from '../../../lib/contract/packing-settings';

export { PlanError } from './plan-error';

/** Options with defaults applied, checked: the packing settings the plan depends on, and how records are framed. */
export interface PlanSettings extends Pick<PackingSettings, 'seed' | 'targetShardBytes' | 'shardCount' | 'consumers'> {
  readonly labels: LabelMode;
  readonly recordBytes: RecordBytes;
}

/** The settings as PlanOptions name them in messages. */
const PLAN_OPTION_NAMES: PackingSettingNames = {
  ...PACKING_PROP_NAMES, targetShardBytes: 'targetShardBytes',
};

/**
 * Plans how files become shards: every file exactly once, shuffled with the seed, spread over
 * shards of about equal bytes and equal record counts. Pure and deterministic: the same set of
 * files (in any order) and the same options give a deep-equal plan.
 *
 * Shard count: `shardCount`, else ceil(total bytes / `targetShardBytes`) (at least 1), and at
 * least files / 32,768 (see PLAN_LIMITS); never more than the files; rounded up to a multiple of `consumers`
 * (down, if up would exceed the files). It then grows, in multiples of `consumers`, until no
 * shard of more than one file exceeds 128 MiB.
 *
 * Listings of more than 131,072 files are planned in groups (see {@link GroupedPlan}), the same
 * way here as by a caller that streams the groups from disk, so both give the same plan.
 * O(n log n) time; beyond the returned plan, memory is a few typed arrays of n entries.
 *
 * @throws PlanError for bad options, no files, a duplicate key, a size that is not a whole number
 * of bytes ≥ 0, a root-level key with labels `folder`, or more consumers than files.
 */
export function planShards(files: readonly SourceFile[], options: PlanOptions, limits: PlanLimits = PLAN_LIMITS): ShardPlan {
  const settings = checkOptions(options);
  if (!Array.isArray(files) || files.length === 0) {
    throw new PlanError('files is empty: nothing to pack (the source lists no files)');
  }
  const totalBytes = checkFiles(files);
  const sorted = sortByKeyInCodePointOrder(files);
  const sizes = recordSizesOfUniqueKeys(sorted, settings.recordBytes);
  let recordBytes = 0;
  for (const size of sizes) recordBytes += size;
  const labelling = settings.labels === 'folder' ? labelByFolder(sorted) : undefined;
  const plan = { seed: settings.seed, labelMap: labelling?.labelMap ?? {}, totalFiles: sorted.length, totalBytes };

  const requested = requestedShardCount(sorted.length, recordBytes, settings, limits);
  const grouped = GroupedPlan.of(
    sorted.length, settings.seed, firstShardCount(sorted.length, requested, settings.consumers), settings.consumers, limits, settings.recordBytes,
  );
  if (grouped) return { ...plan, shards: planInGroups(grouped, sorted, labelling?.labelMap) };

  const { shuffled, shuffledSizes } = shuffle(sizes, settings.seed);
  const assignment = assignWithinCeiling(shuffledSizes, recordBytes, requested, settings.consumers);
  return { ...plan, shards: writeOrder(sorted, labelling?.labels, shuffled, assignment) };
}

/**
 * The shard count asked for, before consumers and the ceiling: `shardCount` or the target size
 * (over the records' bytes, framing included), and enough shards that none averages more records than the limit.
 */
export function requestedShardCount(fileCount: number, totalBytes: number, settings: PlanSettings, limits: PlanLimits): number {
  // Refused, not lowered to one shard per file: an exact count is a promise (`--shards`), and a count past the files is a typo.
  if (settings.shardCount !== undefined && settings.shardCount > fileCount) {
    throw new PlanError(`shardCount (--shards) must be between 1 and ${fileCount}, the number of files in the source (every shard holds `
      + `at least one), got ${settings.shardCount}`);
  }
  // Normalized settings hold a target whenever they hold no count.
  const bySize = settings.shardCount ?? Math.max(1, Math.ceil(totalBytes / (settings.targetShardBytes as number)));
  return Math.max(bySize, Math.ceil(fileCount / limits.maxAverageShardRecords));
}

/** Every group sized, then planned, in group order (the layout a streaming caller reproduces). */
function planInGroups(grouped: GroupedPlan, sorted: readonly SourceFile[], labelMap: Record<string, number> | undefined): PlannedShard[] {
  const groups = Array.from({ length: grouped.groupCount }, () => new Array<SourceFile>());
  for (const file of sorted) groups[grouped.groupOf(file.key)].push(file);
  groups.forEach((group, index) => grouped.requireShards(index, group));
  const shards: PlannedShard[] = [];
  let firstRecordId = 0;
  groups.forEach((group, index) => {
    shards.push(...grouped.plan(index, group, labelMap && labelsByMap(group, labelMap), firstRecordId));
    firstRecordId += group.length;
  });
  return shards;
}

/** The options checked and completed by the packing settings codec (lib/contract/packing-settings.ts), the one check and default of each. */
export function checkOptions(options: PlanOptions): PlanSettings {
  if (options === null || typeof options !== 'object') {
    throw new PlanError(`options must be an object with at least a seed, got ${String(options)}`);
  }
  const { seed, targetShardBytes, shardCount, consumers, labels, recordBytes } = options;
  const raw = Object.fromEntries(Object.entries({ seed, targetShardBytes, shardCount, consumers, labels }).filter(([, value]) => value !== undefined));
  const problems = checkPackingSettings(raw, PLAN_OPTION_NAMES).map(({ message }) => message);
  if (problems.length > 0) throw new PlanError(problems.join('; '));
  const settings = normalizePackingSettings(raw);
  return {
    seed: settings.seed,
    ...(settings.targetShardBytes !== undefined ? { targetShardBytes: settings.targetShardBytes } : {}),
    ...(settings.shardCount !== undefined ? { shardCount: settings.shardCount } : {}),
    consumers: settings.consumers,
    labels: settings.labels,
    recordBytes: recordBytes ?? listedSize,
  };
}

function listedSize(_key: string, size: number): number {
  return size;
}

/** Checks each file's key and size; returns the sum of the sizes. */
function checkFiles(files: readonly SourceFile[]): number {
  let totalBytes = 0;
  for (let i = 0; i < files.length; i++) totalBytes += checkFile(files[i], i);
  checkTotalBytes(totalBytes);
  return totalBytes;
}

/** Checks a file's key and size (`i`: its position in the listing); returns its size. */
export function checkFile(file: SourceFile, i: number): number {
  const key: unknown = file?.key;
  if (typeof key !== 'string' || key.length === 0) {
    throw new PlanError(`file ${i} of the listing has no key (got ${JSON.stringify(key)}): every file needs a non-empty key`);
  }
  const size: unknown = file.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw new PlanError(`file '${key}' has size ${String(size)}: a size must be a whole number of bytes, 0 or more`);
  }
  return size;
}

export function checkTotalBytes(totalBytes: number): void {
  if (!Number.isSafeInteger(totalBytes)) {
    throw new PlanError(`the files add up to ${totalBytes} bytes, more than can be counted exactly (${Number.MAX_SAFE_INTEGER})`);
  }
}

export function duplicateKey(key: string): PlanError {
  return new PlanError(`key '${key}' is listed more than once: each file must be packed exactly once`);
}

/** The record sizes of the sorted files, checking on the way that no key is listed twice. */
function recordSizesOfUniqueKeys(sorted: readonly SourceFile[], recordBytes: RecordBytes): Float64Array {
  const sizes = new Float64Array(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && sorted[i].key === sorted[i - 1].key) throw duplicateKey(sorted[i].key);
    sizes[i] = recordBytes(sorted[i].key, sorted[i].size, sorted[i].parts);
  }
  return sizes;
}

