import { stableSortByKey } from './stable-sort-by-key';

/**
 * Files larger than this fraction of the mean shard are placed first, largest first. The rest
 * are dealt in rounds, which keeps shards within about one such file of each other.
 */
const LARGE_FILE_FRACTION = 1 / 32;

/** Which shard each file goes to, and what each shard then holds. */
export interface ShardAssignment {
  /** Shard of each file, by the file's position in the shuffled order. */
  readonly shardAt: Uint32Array;
  /** Sum of the file sizes of each shard. */
  readonly bytes: Float64Array;
  /** Number of files of each shard. */
  readonly records: Uint32Array;
}

/**
 * Assigns shuffled files to `shardCount` shards so that shards hold about equal bytes and equal
 * record counts, while which files share a shard stays random (it follows the shuffled order).
 *
 * 1. Large files (over 1/32 of the mean shard, so at most 32 per shard on average) go first,
 *    largest first, each to the shard with the fewest bytes (then fewest records, then lowest
 *    index): longest-processing-time greedy. Only these few files are placed by size rank; a file
 *    over the mean shard ends up alone because no other shard gets that heavy.
 * 2. Each shard's share of the remaining (small) files is set by water-filling: the small bytes
 *    raise every shard towards one common level, so a shard already heavy with large files gets
 *    proportionally fewer small files, and the others get equal counts (within one).
 * 3. The small files are dealt in rounds, in shuffled order: each round takes the next file for
 *    every shard that still has room, and gives the largest of them to the shard with the fewest
 *    small bytes, the second largest to the second, and so on. Every shard gets one file per
 *    round, so record counts stay equal; and the sorted matching never widens the spread of small
 *    bytes beyond the size range of one round's files, so bytes stay within about one small file.
 *
 * Why not longest-processing-time on all files: the assignment becomes a function of size rank
 * (the k largest files always spread one per shard, every shard gets one file of each size
 * stratum), so membership no longer follows the shuffle. Why not "each file in shuffled order to
 * the lightest shard": it balances bytes within one file but lets record counts drift with each
 * shard's mix of small and large files (12,550 vs 12,446 records on 100,000 files of 2–8 KB in 8
 * shards; 1.24× max/min on 200,000 lognormal JPEG-like sizes), and a large file arriving late
 * leaves its shard heavy by that file (1.47× bytes with 40 files of up to 40 MiB among 50,000).
 *
 * Deterministic: equal files go in shuffled order; equal shards by lower index (in a round, among
 * shards of equal quota).
 *
 * @param sizes size of each file, in shuffled order
 * @param totalBytes sum of `sizes`
 */
export function assignShards(sizes: Float64Array, totalBytes: number, shardCount: number): ShardAssignment {
  const shardAt = new Uint32Array(sizes.length);
  const bytes = new Float64Array(shardCount);
  const records = new Uint32Array(shardCount);
  const largeThreshold = (totalBytes / shardCount) * LARGE_FILE_FRACTION;

  const large = placeLargeFiles(sizes, largeThreshold, shardAt, bytes, records);
  const smallCount = sizes.length - large.count;
  if (smallCount > 0) {
    const smallBytes = totalBytes - large.bytes;
    const headroom = smallBytes > 0 ? waterFill(bytes, smallBytes) : waterFill(Float64Array.from(records), smallCount);
    const quota = apportion(smallCount, headroom);
    dealSmallFiles(sizes, largeThreshold, quota, shardAt, bytes, records);
  }
  return { shardAt, bytes, records };
}

function placeLargeFiles(
  sizes: Float64Array, threshold: number, shardAt: Uint32Array, bytes: Float64Array, records: Uint32Array,
): { count: number; bytes: number } {
  let count = 0;
  for (let position = 0; position < sizes.length; position++) {
    if (sizes[position] > threshold) count++;
  }
  if (count === 0) return { count: 0, bytes: 0 };

  // Largest first; equal sizes in shuffled order (the sort is stable).
  const positions = new Uint32Array(count);
  const negatedSizes = new Float64Array(count);
  const order = new Uint32Array(count);
  for (let position = 0, j = 0; position < sizes.length; position++) {
    if (sizes[position] > threshold) {
      positions[j] = position;
      negatedSizes[j] = -sizes[position];
      order[j] = j;
      j++;
    }
  }
  stableSortByKey(order, count, negatedSizes, new Uint32Array(count));

  const heap = new LightestShardHeap(bytes, records);
  let largeBytes = 0;
  for (const j of order) {
    const position = positions[j];
    const shard = heap.lightest();
    shardAt[position] = shard;
    bytes[shard] += sizes[position];
    records[shard]++;
    heap.lightestGrew();
    largeBytes += sizes[position];
  }
  return { count, bytes: largeBytes };
}

/**
 * How much each level must rise so that all raised levels are equal and the rises add up to
 * `amount` (levels already above that common level do not rise).
 */
function waterFill(levels: Float64Array, amount: number): Float64Array {
  const sorted = Float64Array.from(levels).sort();
  let below = 0;
  let level = 0;
  for (let k = 1; k <= sorted.length; k++) {
    below += sorted[k - 1];
    level = (amount + below) / k;
    if (k === sorted.length || level <= sorted[k]) break;
  }
  return levels.map((current) => Math.max(0, level - current));
}

/**
 * Splits `count` items in proportion to `weights`, each part within one of its exact share:
 * rounds the cumulative shares, so the parts add up to `count` exactly.
 */
function apportion(count: number, weights: Float64Array): Uint32Array {
  let total = 0;
  for (const weight of weights) total += weight;
  const parts = new Uint32Array(weights.length);
  let cumulative = 0;
  let previousBoundary = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulative += weights[i];
    const boundary = Math.floor((count * cumulative) / total + 0.5);
    parts[i] = boundary - previousBoundary;
    previousBoundary = boundary;
  }
  return parts;
}

function dealSmallFiles(
  sizes: Float64Array, largeThreshold: number, quota: Uint32Array,
  shardAt: Uint32Array, bytes: Float64Array, records: Uint32Array,
): void {
  const shardCount = quota.length;
  // Shards by quota, largest first (equal quotas by index): those still open in round r are a prefix.
  const byQuota = new Uint32Array(shardCount);
  for (let shard = 0; shard < shardCount; shard++) byQuota[shard] = shard;
  stableSortByKey(byQuota, shardCount, Float64Array.from(quota, (q) => -q), new Uint32Array(shardCount));
  let open = shardCount;

  const smallBytes = new Float64Array(shardCount);
  const roundPositions = new Uint32Array(shardCount);
  const negatedRoundSizes = new Float64Array(shardCount);
  const filesBySize = new Uint32Array(shardCount);
  const shardsByBytes = new Uint32Array(shardCount);
  const scratch = new Uint32Array(shardCount);

  let position = 0;
  for (let round = 0; ; round++) {
    while (open > 0 && quota[byQuota[open - 1]] <= round) open--;
    if (open === 0) break;

    for (let j = 0; j < open; j++) {
      while (sizes[position] > largeThreshold) position++;
      roundPositions[j] = position;
      negatedRoundSizes[j] = -sizes[position];
      filesBySize[j] = j;
      shardsByBytes[j] = byQuota[j];
      position++;
    }
    // Largest file first, equal sizes in shuffled order; lightest shard first, equal loads in byQuota order.
    stableSortByKey(filesBySize, open, negatedRoundSizes, scratch);
    stableSortByKey(shardsByBytes, open, smallBytes, scratch);

    for (let j = 0; j < open; j++) {
      const filePosition = roundPositions[filesBySize[j]];
      const shard = shardsByBytes[j];
      const size = sizes[filePosition];
      shardAt[filePosition] = shard;
      smallBytes[shard] += size;
      bytes[shard] += size;
      records[shard]++;
    }
  }
}

/** Binary min-heap of shard indices by (bytes, records, index), over the caller's arrays. */
class LightestShardHeap {
  private readonly heap: Uint32Array;

  constructor(private readonly bytes: Float64Array, private readonly records: Uint32Array) {
    // All shards start equal (empty), so index order is already a valid heap.
    this.heap = new Uint32Array(bytes.length);
    for (let shard = 0; shard < bytes.length; shard++) this.heap[shard] = shard;
  }

  lightest(): number {
    return this.heap[0];
  }

  /** Restores the heap after the caller added to the lightest shard. */
  lightestGrew(): void {
    const heap = this.heap;
    const length = heap.length;
    const moving = heap[0];
    let position = 0;
    for (;;) {
      const left = 2 * position + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && this.lighter(heap[right], heap[left]) ? right : left;
      if (!this.lighter(heap[child], moving)) break;
      heap[position] = heap[child];
      position = child;
    }
    heap[position] = moving;
  }

  private lighter(a: number, b: number): boolean {
    const bytes = this.bytes;
    if (bytes[a] !== bytes[b]) return bytes[a] < bytes[b];
    if (this.records[a] !== this.records[b]) return this.records[a] < this.records[b];
    return a < b;
  }
}
