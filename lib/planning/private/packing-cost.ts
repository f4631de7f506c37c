import { MIB } from '../../contract/units';
import type { PackingCost } from '../io-plan';
import type { ResolvedPrices } from './resolved-prices';
import { KEYS_PER_LIST_PAGE, S3_GETS_PER_SECOND_PER_PREFIX } from './startup-rules';
import { formatCount, formatDollars, formatSeconds } from './units';

// ShardedDataset's packing, priced as docs/performance.md ("Packing 2,000,000 × 5 KB on AWS") estimates it.

/** One ListObjectsV2 page as the packing planner lists them, one after the other (50–100 ms: the midpoint). */
export const LIST_PAGE_SECONDS = 0.075;
/** Objects one packer fetches per second: the low end of 64 GETs in flight at 20–50 ms (1,300–3,200/s). */
export const PACKER_OBJECTS_PER_SECOND = 1300;
/** Each packer's upload of its shard and index. */
export const PACKER_UPLOAD_SECONDS = 2;
/** The packers' memory (ShardedDataset's default packerMemorySize) and the planner's, in GB for Lambda's GB-seconds. */
export const PACKER_MEMORY_GB = 2;
export const PACKING_PLANNER_MEMORY_GB = 4;
/** ShardedDataset's default maxConcurrency: packers at once. */
export const PACKERS_AT_ONCE = 100;
/** The packers' upload part size (8 MiB): one PUT each, plus the create and complete requests. */
const UPLOAD_PART_BYTES = 8 * MIB;
/** State transitions: the packing execution's own, and about three per shard (a child execution's states). */
const FIXED_TRANSITIONS = 50;
const TRANSITIONS_PER_SHARD = 3;
/** Listing longer than this: an S3 Inventory report (`sourceInventory`) lists the objects in seconds instead. */
export const INVENTORY_ABOVE_LISTING_SECONDS = 600;

/** Hours and dollars of packing `objects` objects of `bytes` into `shards` shards, once. */
export function packingCost(objects: number, bytes: number, shards: number, prices: ResolvedPrices): PackingCost {
  const pages = Math.ceil(objects / KEYS_PER_LIST_PAGE);
  const listingSeconds = pages * LIST_PAGE_SECONDS;
  const inventoryAdvised = listingSeconds > INVENTORY_ABOVE_LISTING_SECONDS;
  const packerSeconds = objects / shards / PACKER_OBJECTS_PER_SECOND + PACKER_UPLOAD_SECONDS;
  const packSeconds = Math.max(Math.ceil(shards / PACKERS_AT_ONCE) * packerSeconds, objects / S3_GETS_PER_SECOND_PER_PREFIX);
  const puts = shards * (Math.ceil(bytes / shards / UPLOAD_PART_BYTES) + 2);
  const requestDollars = objects / 1000 * prices.s3GetPer1000 + puts / 1000 * prices.s3PutPer1000 + pages / 1000 * prices.s3ListPer1000;
  const gbSeconds = shards * packerSeconds * PACKER_MEMORY_GB + listingSeconds * PACKING_PLANNER_MEMORY_GB;
  const lambdaDollars = gbSeconds * prices.lambdaGbSecond + (shards + 2) / 1e6 * prices.lambdaPerMillionRequests;
  const transitions = FIXED_TRANSITIONS + TRANSITIONS_PER_SHARD * shards;
  const stepFunctionsDollars = transitions / 1000 * prices.sfnPer1000Transitions;
  const seconds = listingSeconds + packSeconds;
  const dollars = requestDollars + lambdaDollars + stepFunctionsDollars;
  return {
    seconds,
    dollars,
    requestDollars,
    lambdaDollars,
    stepFunctionsDollars,
    inventoryAdvised,
    reason: `packing once: listing ${formatCount(objects)} keys (${formatCount(pages)} pages, ${formatSeconds(listingSeconds)}), ` +
      `${formatCount(shards)} packers of ~${formatSeconds(packerSeconds)} at ${PACKERS_AT_ONCE} at once (${formatSeconds(packSeconds)}); ` +
      `S3 ${formatDollars(requestDollars)} (${formatCount(objects)} GETs, ${formatCount(puts)} PUTs), Lambda ${formatDollars(lambdaDollars)} ` +
      `(${formatCount(gbSeconds)} GB-s), Step Functions ${formatDollars(stepFunctionsDollars)} (${formatCount(transitions)} transitions)` +
      (inventoryAdvised ? `; listing takes over ${INVENTORY_ABOVE_LISTING_SECONDS / 60} min: give ShardedDataset a sourceInventory ` +
        '(an S3 Inventory report lists the keys in seconds)' : ''),
  };
}
