import * as fc from 'fast-check';
import type { FaultMode } from '../../support/memory-store';
import { FAULT_MODES, MemoryStore } from '../../support/memory-store';
import { addFiles, pack, ProtocolModel, sourceWith } from './protocol-invariants';

/**
 * The publishing protocol over random histories (ARCHITECTURE.md "Publishing protocol"): packs,
 * appends, changed and removed files, retention values from 0 to 30 days, packers whose clocks are
 * 10 days off, faults at random calls, and two packs racing, with the store's clock moving on
 * between them. After every step the invariants hold; after every run that succeeds, the root
 * names the newest claim and its version holds every source file. A fixed seed keeps the
 * histories the same on every machine; a failure prints the shrunk history.
 */

type Step =
  | { readonly kind: 'pack'; readonly retentionDays: number; readonly clockOffsetDays: number; readonly full: boolean; readonly fault?: { readonly at: number; readonly mode: FaultMode } }
  | { readonly kind: 'race'; readonly retentionDays: number }
  | { readonly kind: 'append'; readonly files: number }
  | { readonly kind: 'change'; readonly file: number }
  | { readonly kind: 'remove'; readonly file: number }
  | { readonly kind: 'advance'; readonly days: number };

const retention = fc.constantFrom(0, 1, 7, 30);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({
    kind: fc.constant('pack' as const), retentionDays: retention, clockOffsetDays: fc.constantFrom(-10, 0, 10), full: fc.boolean(),
    fault: fc.option(fc.record({ at: fc.nat({ max: 250 }), mode: fc.constantFrom(...FAULT_MODES) }), { nil: undefined }),
  }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('race' as const), retentionDays: retention }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('append' as const), files: fc.integer({ min: 1, max: 6 }) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('change' as const), file: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), file: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), days: fc.integer({ min: 0, max: 12 }) }), weight: 2 },
);

async function replay(steps: readonly Step[]): Promise<string[]> {
  const store = new MemoryStore();
  const model = new ProtocolModel(store);
  const source = sourceWith(12, 0, store);
  let nextFile = 12;
  for (const [position, current] of steps.entries()) {
    const where = `step ${position} ${JSON.stringify(current)}`;
    switch (current.kind) {
      case 'append':
        addFiles(source, current.files, nextFile, store.now);
        nextFile += current.files;
        break;
      case 'change': {
        const keys = [...source.files.keys()];
        if (keys.length === 0) break;
        const key = keys[current.file % keys.length];
        source.files.set(key, { data: Buffer.concat([source.files.get(key)!.data, Buffer.from('changed')]), modified: store.now + 1 });
        break;
      }
      case 'remove': {
        const keys = [...source.files.keys()];
        if (keys.length > 1) source.files.delete(keys[current.file % keys.length]);
        break;
      }
      case 'advance':
        store.advanceDays(current.days);
        break;
      case 'pack': {
        if (current.fault) store.injectAt(current.fault.at, current.fault.mode);
        else store.heal();
        const error = await pack(store, source, current.retentionDays, {
          fullRepack: current.full, clock: () => new Date(store.now + current.clockOffsetDays * 86_400_000),
        }).then(() => undefined, (e: Error) => e);
        model.ranWithRetention(current.retentionDays);
        const ran = error === undefined;
        const problems = ran ? await model.problemsAfterSuccess() : await model.problemsAfterAnyStep();
        // Without a fault a pack publishes (or is up to date), whatever earlier runs left: a dataset is never stuck.
        if (!ran && !current.fault) problems.push(`a pack without a fault failed: ${error.message}`);
        if (ran) problems.push(...holdsEverySourceFile(store, model, source.files.size));
        if (problems.length > 0) return problems.map((problem) => `${where}: ${problem}`);
        break;
      }
      case 'race': {
        store.heal();
        const runs = await Promise.allSettled([pack(store, source, current.retentionDays), pack(store, source, current.retentionDays)]);
        model.ranWithRetention(current.retentionDays);
        const published = runs.filter((run) => run.status === 'fulfilled').length;
        const problems = published > 0 ? await model.problemsAfterSuccess() : [`neither of two racing packs published: ${
          runs.map((run) => (run.status === 'rejected' ? (run.reason as Error).message : '')).join(' / ')}`];
        if (problems.length > 0) return problems.map((problem) => `${where}: ${problem}`);
        break;
      }
    }
  }
  return [];
}

/** The newest version packs every source file: a record each, no failures (the memory source's reads never fail). */
function holdsEverySourceFile(store: MemoryStore, model: ProtocolModel, files: number): string[] {
  const newest = model.claims().at(-1)!;
  const manifest = JSON.parse(store.objects.get(`versions/${newest.datasetVersion}/manifest.json`)!.data.toString('utf8')) as { records: number };
  return manifest.records === files ? [] : [`${newest.datasetVersion} has ${manifest.records} records, the source ${files} files`];
}

describe('the publishing protocol over random histories', () => {
  test('after every step of 40 random histories the invariants hold', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 14 }), async (steps) => {
      expect(await replay(steps)).toEqual([]);
    }), { seed: 20261126, numRuns: 40 });
  });

  test('the issue\'s reproduction: retention 0, then a longer one, then more packs publish and verify', async () => {
    // GIVEN / WHEN: pack; append, pack --retention 0; append, pack (7 days); the same with 30 days after 8 days
    const problems = await replay([
      { kind: 'pack', retentionDays: 7, clockOffsetDays: 0, full: false },
      { kind: 'append', files: 1 },
      { kind: 'pack', retentionDays: 0, clockOffsetDays: 0, full: false },
      { kind: 'append', files: 1 },
      { kind: 'pack', retentionDays: 7, clockOffsetDays: 0, full: false },
      { kind: 'advance', days: 8 },
      { kind: 'append', files: 1 },
      { kind: 'pack', retentionDays: 30, clockOffsetDays: 10, full: false },
      { kind: 'append', files: 1 },
      { kind: 'pack', retentionDays: 7, clockOffsetDays: -10, full: true },
    ]);
    // THEN
    expect(problems).toEqual([]);
  });
});
