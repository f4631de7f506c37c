import { LustreDeploymentType } from 'aws-cdk-lib/aws-fsx';

/** The deployment types a dataset cache supports: the ones that take data repository associations. */
export type CacheDeploymentType = LustreDeploymentType.SCRATCH_2 | LustreDeploymentType.PERSISTENT_1 | LustreDeploymentType.PERSISTENT_2;

/**
 * Baseline throughput per TiB of storage (MB/s/TiB) of each SSD deployment type, lowest first
 * (FSx API `PerUnitStorageThroughput`; FSx for Lustre guide, "Performance characteristics of SSD
 * storage"). SCRATCH_2 has one fixed baseline that cannot be chosen (it bursts to 1300 on credits).
 */
export const THROUGHPUT_TIERS: Readonly<Record<CacheDeploymentType, { readonly tiers: readonly number[]; readonly configurable: boolean }>> = {
  [LustreDeploymentType.SCRATCH_2]: { tiers: [200], configurable: false },
  [LustreDeploymentType.PERSISTENT_1]: { tiers: [50, 100, 200], configurable: true },
  [LustreDeploymentType.PERSISTENT_2]: { tiers: [125, 250, 500, 1000], configurable: true },
};

/** SSD capacity steps of SCRATCH_2, PERSISTENT_1 and PERSISTENT_2: 1200 GiB, 2400 GiB, then multiples of 2400 GiB. */
export const MIN_CAPACITY_GIB = 1200;
const CAPACITY_STEP_GIB = 2400;

/**
 * Room kept free above the dataset: Lustre stripes files over its storage targets, and one full
 * target fails writes (and lazy loads from S3) while others still have space.
 */
export const CAPACITY_HEADROOM = 1.1;

export function isLegalCapacity(gib: number): boolean {
  return Number.isInteger(gib) && (gib === MIN_CAPACITY_GIB || (gib > 0 && gib % CAPACITY_STEP_GIB === 0));
}

/** The smallest legal capacity of at least `gib`. */
export function smallestCapacityOf(gib: number): number {
  if (gib <= MIN_CAPACITY_GIB) return MIN_CAPACITY_GIB;
  return Math.ceil(gib / CAPACITY_STEP_GIB) * CAPACITY_STEP_GIB;
}

/**
 * Baseline read throughput in bytes/s. FSx multiplies the capacity "in TiB" by the per-unit
 * throughput and counts 1000 GiB as a TiB: 2400 GiB at 50 MB/s/TiB "yields 120 MB/s" (API
 * reference, `PerUnitStorageThroughput`). So: GiB × MB/s/TiB × 10^6 / 1000.
 */
export function baselineBytesPerSecond(capacityGiB: number, perUnitThroughput: number): number {
  return capacityGiB * perUnitThroughput * 1000;
}

/** The smallest legal capacity whose baseline at this tier reaches the rate. */
function capacityForRate(bytesPerSecond: number, perUnitThroughput: number): number {
  return smallestCapacityOf(Math.ceil(bytesPerSecond / (perUnitThroughput * 1000)));
}

/** What the cache must hold and deliver, and what the user fixed (resolved values only). */
export interface SizingRequest {
  readonly deploymentType: CacheDeploymentType;
  readonly datasetBytes?: number;
  readonly readBytesPerSecond?: number;
  readonly storageCapacityGiB?: number;
  readonly perUnitStorageThroughput?: number;
}

/** The chosen capacity and throughput tier. */
export interface CacheSizing {
  readonly storageCapacityGiB: number;
  /** MB/s per TiB: the tier, or SCRATCH_2's fixed baseline. */
  readonly perUnitStorageThroughput: number;
  readonly baselineBytesPerSecond: number;
}

/**
 * Capacity and tier for a request. Storage is paid per GiB and higher tiers cost more per GiB
 * but less per MB/s, so: the smallest capacity that holds the data (with headroom), then the
 * lowest tier whose baseline feeds the reads at that capacity; when even the top tier cannot,
 * more capacity at the top tier. Values the user fixed are kept as they are.
 */
export function sizeCache(request: SizingRequest): CacheSizing {
  const { tiers } = THROUGHPUT_TIERS[request.deploymentType];
  const top = tiers[tiers.length - 1];
  const rate = request.readBytesPerSecond;
  const forData = request.datasetBytes === undefined
    ? MIN_CAPACITY_GIB
    : smallestCapacityOf(Math.ceil(request.datasetBytes * CAPACITY_HEADROOM / 2 ** 30));
  const feeds = (capacity: number, tier: number) => rate === undefined || baselineBytesPerSecond(capacity, tier) >= rate;

  let capacity: number;
  let tier: number;
  if (request.storageCapacityGiB !== undefined) {
    capacity = request.storageCapacityGiB;
    tier = request.perUnitStorageThroughput ?? tiers.find((t) => feeds(capacity, t)) ?? top;
  } else if (request.perUnitStorageThroughput !== undefined) {
    tier = request.perUnitStorageThroughput;
    capacity = rate === undefined ? forData : Math.max(forData, capacityForRate(rate, tier));
  } else {
    capacity = forData;
    const lowestThatFeeds = tiers.find((t) => feeds(forData, t));
    tier = lowestThatFeeds ?? top;
    if (lowestThatFeeds === undefined) capacity = capacityForRate(rate!, top);
  }
  return { storageCapacityGiB: capacity, perUnitStorageThroughput: tier, baselineBytesPerSecond: baselineBytesPerSecond(capacity, tier) };
}
