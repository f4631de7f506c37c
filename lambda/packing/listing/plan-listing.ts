import type { ListedFile } from '../../io/storage';
import { FingerprintHasher } from '../manifest';
import type { PlanLimits } from '../planning/grouped-plan';
import { GroupedPlan, PLAN_LIMITS } from '../planning/grouped-plan';
import { className, labelMapOf } from '../planning/label-map';
import { firstShardCount } from '../planning/plan-core';
import { checkOptions, checkTotalBytes, duplicateKey, labelsOfPart, planShards, requestedShardCount } from '../planning/plan-shards';
import type { PlannedShard, PlanOptions } from '../planning/plan-types';
import { EntryFileWriter, readEntryFile } from './entry-file';
import type { ListingCollector } from './listing-collector';

/** Group files open at once while the listing is dealt into groups (and the default of `openGroupFiles`); more groups share files. */
const MAX_GROUP_FILES_OPEN = 256;
/** Buffer per group file: hundreds may be open at once. */
const GROUP_FILE_BUFFER_BYTES = 64 * 1024;

/** A plan handed out a group of shards at a time. */
export interface ListingPlan {
  readonly seed: number;
  readonly labelMap: Record<string, number>;
  readonly totalFiles: number;
  readonly totalBytes: number;
  readonly shardCount: number;
  /** The shards, a group at a time in shard order; a group is planned when asked for. */
  readonly groups: Iterable<PlannedShard[]>;
  /** The source fingerprint; for a listing held in memory, computed when asked (callers ask once shards are under way). */
  fingerprint(): string;
}

/**
 * Plans a collected listing: in memory with {@link planShards} when it is held whole, else group
 * by group from disk, to the same plan planShards makes of the same files (see GroupedPlan).
 *
 * From disk (the collector has checked each file): one merge of the sorted runs finds duplicates, hashes the
 * fingerprint, gathers the class names, and deals the files into group files; a pass over the
 * groups sizes them; the groups are then planned one at a time as the caller takes them. Memory
 * is a group's files and plan, whatever the size of the listing.
 */
export function planListing(
  collector: ListingCollector, options: PlanOptions, limits: PlanLimits = PLAN_LIMITS, openGroupFiles = MAX_GROUP_FILES_OPEN,
  /** The listing, when the caller already took it from the collector (ListingCollector.takeInMemory). */
  taken?: ListedFile[],
): ListingPlan {
  const held = taken ?? collector.takeInMemory();
  if (held) return planInMemory(held, options, limits, collector);

  const settings = checkOptions(options);
  const fileCount = collector.count;
  checkTotalBytes(collector.totalBytes);
  const requested = requestedShardCount(fileCount, collector.recordBytes, settings, limits);
  const grouped = GroupedPlan.of(
    fileCount, settings.seed, firstShardCount(fileCount, requested, settings.consumers), settings.consumers, limits, settings.recordBytes,
  );
  // Too few files per shard for groups: planned whole, as planShards would (memory then grows with the listing).
  if (!grouped) return planInMemory([...collector.sorted()], options, limits, collector);

  const groupFiles = Array.from({ length: Math.min(grouped.groupCount, openGroupFiles) },
    (_, i) => new EntryFileWriter(collector.scratchFile(`group-${i}`), GROUP_FILE_BUFFER_BYTES));
  const groupSizes = new Float64Array(grouped.groupCount);
  // Hashed again in key order only when the listing did not come in that order.
  const inOrderFingerprint = collector.inOrderFingerprint();
  const hasher = inOrderFingerprint === undefined ? new FingerprintHasher() : undefined;
  const classNames = new Set<string>();
  let classPrefix: string | undefined;
  let previous: string | undefined;
  try {
    for (const file of collector.sorted()) {
      if (file.key === previous) throw duplicateKey(file.key);
      previous = file.key;
      hasher?.add(file);
      if (settings.labels === 'folder' && (classPrefix === undefined || !file.key.startsWith(classPrefix))) {
        const name = className(file.key);
        classNames.add(name);
        classPrefix = `${name}/`;
      }
      const group = grouped.groupOf(file.key);
      groupSizes[group]++;
      groupFiles[group % groupFiles.length].write(file);
    }
  } finally {
    for (const writer of groupFiles) writer.close();
  }
  const fingerprint = inOrderFingerprint ?? hasher!.digest();

  const filesOf = (group: number): ListedFile[] => {
    const entries = readEntryFile(groupFiles[group % groupFiles.length].path, GROUP_FILE_BUFFER_BYTES);
    // A file per group holds that group only; shared files are sorted out by hashing again.
    if (groupFiles.length === grouped.groupCount) return [...entries];
    const files: ListedFile[] = [];
    for (const file of entries) {
      if (grouped.groupOf(file.key) === group) files.push(file);
    }
    return files;
  };
  for (let group = 0; group < grouped.groupCount; group++) grouped.requireShards(group, filesOf(group));

  const labelMap = settings.labels === 'folder' ? labelMapOf(classNames) : settings.labelTable?.labelMap ?? {};
  return {
    seed: settings.seed,
    labelMap,
    totalFiles: fileCount,
    totalBytes: collector.totalBytes,
    shardCount: grouped.shardCount,
    fingerprint: () => fingerprint,
    groups: (function* planGroups() {
      let firstRecordId = 0;
      for (let group = 0; group < grouped.groupCount; group++) {
        const files = filesOf(group);
        yield grouped.plan(group, files, labelsOfPart(files, settings, labelMap), firstRecordId);
        firstRecordId += groupSizes[group];
      }
    })(),
  };
}

/** The fingerprint is the collector's (see ListingCollector.fingerprintOf), asked for once shards are under way. */
function planInMemory(files: ListedFile[], options: PlanOptions, limits: PlanLimits, collector: ListingCollector): ListingPlan {
  const plan = planShards(files, options, limits);
  let listing: ListedFile[] | undefined = files;
  return {
    seed: plan.seed,
    labelMap: plan.labelMap,
    totalFiles: plan.totalFiles,
    totalBytes: plan.totalBytes,
    shardCount: plan.shards.length,
    groups: [plan.shards],
    fingerprint: () => {
      // The listing is let go once fingerprinted; the collector keeps the result for a second call.
      const fingerprint = collector.fingerprintOf(listing ?? []);
      listing = undefined;
      return fingerprint;
    },
  };
}
