import type { ListedFile } from '../../io/storage';
import type { Manifest, ManifestShard } from '../manifest';
import { sortByKeyInCodePointOrder } from '../../io/key-order';
import { labelByFolder } from './label-map';
import { checkOptions, labelsOfPart, planShards } from './plan-shards';
import { MIN_SHARD_BYTES } from '../../../lib/contract/shard-limits';
import type { PlannedRecord, PlannedShard, PlanOptions } from './plan-types';
import { shardName } from './shard-name';

/** The version a repack starts from: its manifest and each shard's member list, in shard order. */
export interface PreviousVersion {
  readonly manifest: Manifest;
  readonly members: ReadonlyArray<readonly PlannedRecord[]>;
}

/** An incremental plan: shards kept by reference, then new shards for everything else. */
export interface IncrementalPlan {
  readonly kind: 'incremental';
  readonly seed: number;
  readonly labelMap: Record<string, number>;
  readonly totalFiles: number;
  readonly totalBytes: number;
  /** Shards of earlier versions, unchanged, in their previous order. */
  readonly reused: ManifestShard[];
  /** Shards to write; indexes and names continue after the reused ones. */
  readonly shards: PlannedShard[];
}

/** Why a repack cannot be incremental: everything is packed again. */
export interface FullRepack {
  readonly kind: 'full';
  readonly reason: string;
}

/**
 * Plans a repack that rewrites only what must change (ARCHITECTURE.md "The manifest"): a shard of
 * the previous version is reused when every one of its inputs still exists with the same size and
 * modification time and none failed, and it is at least half the target size (a smaller one is
 * repacked whenever there is something new to pack with it); the other inputs (new, changed, beside
 * a changed or removed one, or in a small shard) are planned into new shards with the same seed, numbered after the reused ones, their
 * record ids after the previous version's largest. The new shard count keeps the total a multiple
 * of the consumers unless that would make shards under 1 MiB. The record set is the source's:
 * every listed file exactly once.
 *
 * The settings must be the previous version's (planVersion checks them, and asks for a full repack
 * when they changed); a changed class set makes it full too.
 */
export function planIncremental(files: readonly ListedFile[], previous: PreviousVersion, options: PlanOptions): IncrementalPlan | FullRepack {
  const { manifest } = previous;
  const settings = checkOptions(options);
  const { consumers, labels } = settings;
  const sorted = sortByKeyInCodePointOrder([...files]);
  const labelMap = labels === 'folder' ? labelByFolder(sorted).labelMap : settings.labelTable?.labelMap ?? {};
  if (JSON.stringify(labelMap) !== JSON.stringify(manifest.labels)) return { kind: 'full', reason: 'the set of classes changed' };

  const listed = new Map<string, ListedFile>();
  for (const file of sorted) listed.set(file.key, file);
  const failed = new Set(manifest.failures.map((failure) => failure.key));
  const unchanged: Array<{ readonly shard: ManifestShard; readonly members: readonly PlannedRecord[] }> = [];
  const covered = new Set<string>();
  manifest.shards.forEach((shard, i) => {
    const members = previous.members[i];
    const same = members.length > 0 && members.every((member) => {
      const file = listed.get(member.key);
      return file !== undefined && file.size === member.size && file.modified === member.modified && !failed.has(member.key) && !covered.has(member.key);
    });
    if (!same) return;
    unchanged.push({ shard, members });
    for (const member of members) covered.add(member.key);
  });

  // An append of a few files makes shards under half the target; repacked with the next pack's new
  // files rather than reused, they never pile up, however many appends come.
  const halfTarget = (manifest.sizing.targetShardBytes ?? 0) / 2;
  const anyNew = sorted.some((file) => !covered.has(file.key));
  const reused: ManifestShard[] = [];
  for (const { shard, members } of unchanged) {
    if (anyNew && shard.bytes < halfTarget) for (const member of members) covered.delete(member.key);
    else reused.push(shard);
  }

  const pending = sorted.filter((file) => !covered.has(file.key));
  const totalBytes = sorted.reduce((sum, file) => sum + file.size, 0);
  const base = { kind: 'incremental' as const, seed: options.seed, labelMap, totalFiles: sorted.length, totalBytes, reused };
  if (pending.length === 0) return { ...base, shards: [] };

  const planOptions = { seed: options.seed, targetShardBytes: options.targetShardBytes, labels: 'none' as const, recordBytes: options.recordBytes };
  const needed = planShards(pending, planOptions).shards.length;
  const aligned = Math.min(pending.length, needed + ((consumers - ((reused.length + needed) % consumers)) % consumers));
  const pendingBytes = pending.reduce((sum, file) => sum + file.size, 0);
  const count = aligned > needed && pendingBytes / aligned < MIN_SHARD_BYTES ? needed : aligned;
  const plan = planShards(pending, { seed: options.seed, labels: 'none', recordBytes: options.recordBytes, shardCount: count });
  const firstRecordId = manifest.shards.reduce((largest, shard) => Math.max(largest, shard.lastRecordId), -1) + 1;
  const total = reused.length + plan.shards.length;
  const labelOf = labelsOf(pending, labelsOfPart(pending, settings, labelMap));
  const shards = plan.shards.map((shard, i): PlannedShard => ({
    index: reused.length + i,
    name: shardName(reused.length + i, total),
    bytes: shard.bytes,
    records: shard.records.map((record) => ({ ...record, label: labelOf ? labelOf.get(record.key)! : -1, recordId: firstRecordId + record.recordId })),
  }));
  return { ...base, shards };
}

function labelsOf(files: readonly ListedFile[], labels: Int32Array | undefined): Map<string, number> | undefined {
  return labels && new Map(files.map((file, i) => [file.key, labels[i]]));
}
