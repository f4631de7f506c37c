import type { ShardAssignment } from './assign-shards';
import { assignShards } from './assign-shards';
import { assignWithinCeiling, describeBytes, heaviestSharedShard, roundUp, shuffle, withinCeiling, writeOrder } from './plan-core';
import { PlanError } from './plan-error';
import type { PlannedShard, RecordBytes, SourceFile } from './plan-types';
import { SeededRandom } from './seeded-random';

/** When a listing is planned in groups, and how many records a shard may average. */
export interface PlanLimits {
  /** Listings of more files are planned group by group, each group about this many files at most. */
  readonly groupFiles: number;
  /** The shard count is at least files / this: a shard's records, its index and its writer's state stay bounded. */
  readonly maxAverageShardRecords: number;
}

/**
 * Groups of 131,072 files: a group's plan takes tens of MB, so planning stays within the CLI's
 * memory bound (peak RSS ≤ 300 MB) whatever the number of files, and listings up to this size are
 * planned whole. Shards of 32,768 records on average: each worker holds the members and index
 * lines of the shards it writes (with 100,000-record shards, 400,000 files of 100 B peaked at
 * 360–380 MB, with 32,768 at 170–200 MB). At the 64 MiB default this binds only for files
 * averaging under 2 KiB, where it makes smaller shards (e.g. 3.2 MB of 100-byte files).
 */
export const PLAN_LIMITS: PlanLimits = { groupFiles: 131_072, maxAverageShardRecords: 32_768 };

/**
 * Grouped planning spreads each group over its own shards: with fewer files per shard than this,
 * a group could end up with fewer files than shards, so such listings are planned whole.
 */
const MIN_RECORDS_PER_SHARD_FOR_GROUPS = 16;

/**
 * How a large listing is planned in groups, so that no step holds more than one group:
 *
 * 1. Each file goes to one of G groups by a hash of its key keyed with the seed: a random
 *    partition, the same whatever order the files are listed in. G keeps groups within
 *    {@link PlanLimits.groupFiles} files (see groupLayout).
 * 2. Every group gets the same number of shards, S / G, and is shuffled with its own seed (drawn
 *    from the plan's) and assigned as a whole listing is. Groups hold equal shares of the files
 *    and bytes up to sampling noise (σ ≈ 0.3 % with 131,072 files a group), so shards stay about
 *    as even as in a whole plan; equal counts per group keep the total a multiple of consumers.
 * 3. If a group needs more shards to keep every shard of several files within 128 MiB, every
 *    group gets that many (rounded so the total stays a multiple of consumers). Callers therefore
 *    size every group ({@link requireShards}) before planning any ({@link plan}).
 *
 * Group g holds shards g·S/G … (g+1)·S/G − 1 and the record ids after those of groups 0 … g−1.
 */
export class GroupedPlan {
  /**
   * The grouped layout of a listing, or undefined when it is planned whole: few files, or too few
   * files per shard for groups.
   */
  public static of(
    fileCount: number, seed: number, shardCount: number, consumers: number, limits: PlanLimits, recordBytes: RecordBytes = listedSize,
  ): GroupedPlan | undefined {
    if (fileCount <= limits.groupFiles || fileCount / shardCount < MIN_RECORDS_PER_SHARD_FOR_GROUPS) return undefined;
    const { groupCount, shardsPerGroup } = groupLayout(fileCount, shardCount, consumers, limits);
    if (groupCount * shardsPerGroup > fileCount) return undefined;
    return new GroupedPlan(fileCount, seed, shardsPerGroup, groupCount, consumers, recordBytes);
  }

  /** Shards per group: as requested until {@link requireShards} finds a group that needs more. */
  private shardsPerGroup: number;
  private readonly hashBasis: number;
  private readonly groupSeeds: Float64Array;
  private sized = 0;

  private constructor(
    private readonly fileCount: number, seed: number, shardsPerGroup: number, public readonly groupCount: number, private readonly consumers: number,
    private readonly recordBytes: RecordBytes,
  ) {
    this.shardsPerGroup = shardsPerGroup;
    const random = new SeededRandom(seed);
    this.hashBasis = random.nextUint32();
    this.groupSeeds = new Float64Array(groupCount);
    for (let group = 0; group < groupCount; group++) {
      // 53 bits: 21 high, 32 low.
      this.groupSeeds[group] = (random.nextUint32() >>> 11) * 2 ** 32 + random.nextUint32();
    }
  }

  /** The total shard count (final once every group is sized). */
  public get shardCount(): number {
    return this.shardsPerGroup * this.groupCount;
  }

  /** The group of a key: FNV-1a over its UTF-16 code units from a seeded basis, mixed by murmur3's finalizer. */
  public groupOf(key: string): number {
    let hash = this.hashBasis;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    hash ^= hash >>> 16;
    hash = Math.imul(hash, 0x85ebca6b);
    hash ^= hash >>> 13;
    hash = Math.imul(hash, 0xc2b2ae35);
    hash ^= hash >>> 16;
    return (hash >>> 0) % this.groupCount;
  }

  /**
   * First pass, once per group (any order): raises the shards per group to what this group needs
   * to keep every shard of several files within 128 MiB.
   * @param files the group's files sorted by key in code-point order
   */
  public requireShards(group: number, files: readonly SourceFile[]): void {
    const { shuffledSizes, totalBytes } = this.shuffled(group, files);
    const needed = assignWithinCeiling(shuffledSizes, totalBytes, this.shardsPerGroup, 1).records.length;
    this.sized++;
    if (needed <= this.shardsPerGroup) return;
    // The total must stay a multiple of consumers: G·s is, when s is a multiple of consumers / gcd(G, consumers).
    const step = this.consumers / greatestCommonDivisor(this.groupCount, this.consumers);
    const perGroup = roundUp(needed, step);
    if (perGroup * this.groupCount > this.fileCount) {
      throw new PlanError(
        `cannot keep every shard of more than one file within 128 MiB: ${this.fileCount} files would need ${perGroup * this.groupCount} shards `
        + `(a multiple of consumers ${this.consumers}); use fewer consumers`,
      );
    }
    this.shardsPerGroup = perGroup;
  }

  /**
   * Second pass: the group's shards, in shard order.
   * @param files the group's files sorted by key in code-point order
   * @param labels class index of each of `files`, or undefined without labels
   * @param firstRecordId the number of files in groups before this one
   */
  public plan(group: number, files: readonly SourceFile[], labels: Int32Array | undefined, firstRecordId: number): PlannedShard[] {
    if (this.sized !== this.groupCount) {
      throw new Error(`grouped plan: ${this.sized} of ${this.groupCount} groups sized before planning (requireShards first)`);
    }
    if (files.length < this.shardsPerGroup) {
      throw new PlanError(
        `group ${group} of the grouped plan holds ${files.length} files for ${this.shardsPerGroup} shards: use fewer shards (a larger shard size)`,
      );
    }
    const { shuffled, shuffledSizes, totalBytes } = this.shuffled(group, files);
    const assignment: ShardAssignment = assignShards(shuffledSizes, totalBytes, this.shardsPerGroup);
    if (!withinCeiling(assignment)) {
      const heaviest = heaviestSharedShard(assignment);
      throw new PlanError(
        `cannot keep every shard of more than one file within 128 MiB: shard ${heaviest} of group ${group} holds `
        + `${describeBytes(assignment.bytes[heaviest])} in ${assignment.records[heaviest]} files; ask for more shards`,
      );
    }
    return writeOrder(files, labels, shuffled, assignment, {
      firstShard: group * this.shardsPerGroup,
      firstRecordId,
      totalShards: this.shardCount,
    });
  }

  private shuffled(group: number, files: readonly SourceFile[]) {
    const sizes = new Float64Array(files.length);
    let totalBytes = 0;
    for (let i = 0; i < files.length; i++) {
      sizes[i] = this.recordBytes(files[i].key, files[i].size, files[i].parts);
      totalBytes += sizes[i];
    }
    return { ...shuffle(sizes, this.groupSeeds[group]), totalBytes };
  }
}

/**
 * Groups as large as allowed, since a group's share of the bytes varies by about 1/√(its files):
 * the fewest groups G that keep them within the limit, or up to twice as many if that divides the
 * shard count exactly; else the shard count is rounded up to G·s, s a multiple of what keeps the
 * total a multiple of consumers (at 64 MiB shards of 100 KB images, 1 more shard in 200).
 */
function groupLayout(fileCount: number, shardCount: number, consumers: number, limits: PlanLimits) {
  const fewestGroups = Math.ceil(fileCount / limits.groupFiles);
  for (let groupCount = fewestGroups; groupCount <= 2 * fewestGroups; groupCount++) {
    if (shardCount % groupCount === 0) return { groupCount, shardsPerGroup: shardCount / groupCount };
  }
  const step = consumers / greatestCommonDivisor(fewestGroups, consumers);
  return { groupCount: fewestGroups, shardsPerGroup: roundUp(Math.ceil(shardCount / fewestGroups), step) };
}

function listedSize(_key: string, size: number): number {
  return size;
}

function greatestCommonDivisor(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
