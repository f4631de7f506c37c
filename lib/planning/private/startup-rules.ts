import type { TrainingInstance } from '../../instances/training-instance';

/**
 * Latency of one small S3 request: the median of requests under 512 KB is "often in the tens of
 * milliseconds" (Amazon S3 performance whitepaper, "Timeouts and retries for latency-sensitive
 * applications"). Each small object costs one such GET; each page of a listing one such request.
 */
export const SMALL_REQUEST_SECONDS = 0.02;

/**
 * Objects the File-mode downloader of one instance fetches at once. SageMaker does not publish it:
 * this is an assumption, chosen so that 2,000,000 objects of 5 KB take over an hour, as the practice
 * this library is built on reports ("hours"; while 2,000 × 5 MB take minutes).
 */
export const DOWNLOAD_PARALLELISM = 8;

/**
 * GET requests per second S3 serves on one partitioned prefix, the ceiling for all instances that
 * download the same prefix at once (S3 user guide, "Best practices design patterns: optimizing
 * Amazon S3 performance": at least 5,500 GET/HEAD requests per second per partitioned prefix).
 */
export const S3_GETS_PER_SECOND_PER_PREFIX = 5500;

/** Keys one ListObjectsV2 page returns (`MaxKeys`, 1,000 at most): FastFile and Pipe list the prefix before data flows. */
export const KEYS_PER_LIST_PAGE = 1000;

/**
 * Start-up (download) time above this share of the training time is flagged. Our threshold: SageMaker's
 * guide leaves the judgement to the job's length ("a longer training phase means a proportionally
 * smaller download phase"; same page as above).
 */
export const STARTUP_SHARE_WARNING = 0.1;

/** Baseline network bandwidth in bytes per second; undefined when the catalog does not know it. */
export function networkBytesPerSecond(instance: TrainingInstance): number | undefined {
  return instance.networkGbps === undefined ? undefined : instance.networkGbps * 1e9 / 8;
}

/** Objects per second one instance downloads at while `instancesReading` download the same prefix. */
export function objectsPerSecond(instancesReading: number): number {
  return Math.min(DOWNLOAD_PARALLELISM / SMALL_REQUEST_SECONDS, S3_GETS_PER_SECOND_PER_PREFIX / instancesReading);
}

/** Seconds to list `objects` keys, one page after the other. */
export function listingSeconds(objects: number): number {
  return Math.ceil(objects / KEYS_PER_LIST_PAGE) * SMALL_REQUEST_SECONDS;
}
