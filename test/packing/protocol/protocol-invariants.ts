import { claimSequence, INDEX_CHANNEL_MANIFEST, MANIFEST_KEY, PUBLISHED_PREFIX, SHARDS_CHANNEL_MANIFEST, VersionLayout } from '../../../lambda/packing/dataset-layout';
import { MIB } from '../../../lib/contract/units';
import type { PackOptions, PackResult } from '../../../lambda/packing/pack';
import { packDataset } from '../../../lambda/packing/pack';
import { verifyDataset } from '../../../lambda/packing/verify';
import type { MemoryStore } from '../../support/memory-store';
import { MemorySource } from '../../support/memory-store';

/**
 * The publishing protocol's invariants (ARCHITECTURE.md "Publishing protocol"), checked from the
 * store's objects after every step of the fault-injection and property tests, and the test's model
 * of which versions a prune may have removed.
 */
export class ProtocolModel {
  /** Versions some run was allowed to prune: out of its retention, by the store's clock, when it ran. */
  private readonly mayBePruned = new Set<string>();

  constructor(private readonly store: MemoryStore) {}

  /** The model of a copy of its store (MemoryStore.copy): what any run so far was allowed to prune. */
  public copyFor(store: MemoryStore): ProtocolModel {
    const copy = new ProtocolModel(store);
    this.mayBePruned.forEach((version) => copy.mayBePruned.add(version));
    return copy;
  }

  /** Notes what a run with `retentionDays` may prune by now (called after each run, whatever its end). */
  public ranWithRetention(retentionDays: number): void {
    const claims = this.claims();
    let latest = -Infinity;
    const stoppedAt = claims.map((claim) => (latest = Math.max(latest, claim.claimedAt)));
    claims.forEach((claim, i) => {
      if (i < claims.length - 1 && this.store.now - stoppedAt[i + 1] >= retentionDays * 86_400_000) this.mayBePruned.add(claim.datasetVersion);
    });
  }

  /**
   * What must hold after any step, whatever failed or crashed: the newest claim's version and every
   * claimed version no run was allowed to prune are complete and verify (every object they list is
   * there, CRCs, records and totals). Returns the problems, empty when all hold.
   */
  public async problemsAfterAnyStep(): Promise<string[]> {
    this.store.heal();
    const claims = this.claims();
    const problems: string[] = [];
    for (const [i, claim] of claims.entries()) {
      if (i < claims.length - 1 && this.mayBePruned.has(claim.datasetVersion)) continue;
      const report = await verifyDataset(this.store.sink(), { version: claim.datasetVersion });
      problems.push(...report.problems.map((problem) => `${claim.datasetVersion}: ${problem}`));
    }
    return problems;
  }

  /**
   * What must hold after a run that succeeded: the above, and the root's copies are the newest
   * claim's (manifest.json and both channel manifests), so every kind of job reads one version.
   */
  public async problemsAfterSuccess(): Promise<string[]> {
    const problems = await this.problemsAfterAnyStep();
    const newest = this.claims().at(-1);
    if (!newest) return [...problems, 'no version is published'];
    const layout = new VersionLayout(newest.datasetVersion);
    for (const [versionKey, rootKey] of [[layout.manifestKey, MANIFEST_KEY], [layout.shardsChannelKey, SHARDS_CHANNEL_MANIFEST],
      [layout.indexChannelKey, INDEX_CHANNEL_MANIFEST]]) {
      const wanted = this.store.objects.get(versionKey)?.data;
      const held = this.store.objects.get(rootKey)?.data;
      if (!wanted || !held?.equals(wanted)) problems.push(`${rootKey} is not ${versionKey} of the newest claim`);
    }
    problems.push(...(await verifyDataset(this.store.sink())).problems.map((problem) => `root: ${problem}`));
    return problems;
  }

  /** The claims in the store, oldest first, read directly (not through the faulty calls). */
  public claims(): Array<{ readonly sequence: number; readonly datasetVersion: string; readonly claimedAt: number }> {
    return [...this.store.objects].filter(([key]) => key.startsWith(PUBLISHED_PREFIX))
      .map(([key, object]) => ({
        sequence: claimSequence(key)!,
        datasetVersion: (JSON.parse(object.data.toString('utf8')) as { datasetVersion: string }).datasetVersion,
        claimedAt: object.modified,
      }))
      .sort((a, b) => a.sequence - b.sequence);
  }
}

/** A source of small labelled files whose bytes follow from their names. */
export function sourceWith(count: number, from = 0, store?: MemoryStore): MemorySource {
  const source = new MemorySource();
  addFiles(source, count, from, store?.now ?? 0);
  return source;
}

export function addFiles(source: MemorySource, count: number, from: number, modified: number): void {
  for (let i = from; i < from + count; i++) {
    const data = Buffer.alloc(100_000 + (i * 7919) % 150_000, `file ${i} `);
    source.files.set(`${['ant', 'bee', 'cat'][i % 3]}/${String(i).padStart(5, '0')}.jpg`, { data, modified });
  }
}

/** One pack over the memory store, as the CLI runs it (in process), to the smallest shards (1 MiB), so that a few files make several. */
export function pack(store: MemoryStore, source: MemorySource, retentionDays: number, extra: Partial<PackOptions> = {}): Promise<PackResult> {
  return packDataset({
    source, sink: store.sink(), format: 'tfrecord', seed: 7, targetShardBytes: MIB, retentionDays, readConcurrency: 4, ...extra,
  });
}
