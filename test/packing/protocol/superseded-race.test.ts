import { VersionLayout } from '../../../lambda/packing/dataset-layout';
import type { PackingSink } from '../../../lambda/io/storage';
import type { PackResult } from '../../../lambda/packing/pack';
import { MemoryStore } from '../../support/memory-store';
import { addFiles, pack, ProtocolModel, sourceWith } from './protocol-invariants';

/**
 * The race: pack A claims version 2; before A has copied it to the root, pack B publishes
 * version 3 from it and, with a retention of 0 days, prunes version 2. A's version was published,
 * then superseded: A reports that, and the version now current, instead of failing on its own
 * manifest being gone.
 */
describe('a version superseded and pruned while its run copies it to the root', () => {
  test('the run reports its version published, then superseded by the newer one, which is current; the dataset stays sound', async () => {
    // GIVEN: version 1, a source for A with new files, and one for B with more
    const store = new MemoryStore();
    const model = new ProtocolModel(store);
    const sourceA = sourceWith(12, 0, store);
    await pack(store, sourceA, 7);
    model.ranWithRetention(7);
    store.advanceDays(1);
    addFiles(sourceA, 3, 12, store.now);
    const sourceB = sourceWith(12, 0, store);
    for (const [key, file] of sourceA.files) sourceB.files.set(key, file);
    addFiles(sourceB, 3, 15, store.now);

    // A's store runs B to its end when A, having claimed, reads its own manifest to copy it to the root
    let runB: Promise<PackResult> | undefined;
    const claimed = (sequence: number) => store.objects.has(`published/${String(sequence).padStart(8, '0')}.json`);
    const base = store.sink();
    const sinkA = new Proxy(base, {
      get(target, property, receiver) {
        if (property !== 'get') return Reflect.get(target, property, receiver) as unknown;
        return async (key: string) => {
          if (!runB && claimed(2) && /^versions\/v00000002-[0-9a-f]{8}\/manifest\.json$/.test(key)) {
            runB = pack(store, sourceB, 0);
            await runB;
            model.ranWithRetention(0);
          }
          return target.get(key);
        };
      },
    }) satisfies PackingSink;

    // WHEN
    const resultA = await pack(store, sourceA, 7, { sink: sinkA });
    model.ranWithRetention(7);

    // THEN: B published version 3 and pruned A's version 2 (the race happened)
    expect(runB).toBeDefined();
    const resultB = await runB!;
    expect(resultB.manifest.sequence).toBe(3);
    expect(resultB.prune?.prunedVersions).toContain(resultA.manifest.datasetVersion);
    expect(store.objects.has(new VersionLayout(resultA.manifest.datasetVersion).manifestKey)).toBe(false);
    // A says its version was published and that B's is current
    expect(resultA.manifest.sequence).toBe(2);
    expect(resultA.upToDate).toBe(false);
    expect(resultA.currentVersion).toBe(resultB.manifest.datasetVersion);
    // and the dataset is sound: the root names version 3, which verifies
    expect(JSON.parse(store.objects.get('manifest.json')!.data.toString('utf8')).datasetVersion).toBe(resultB.manifest.datasetVersion);
    expect(await model.problemsAfterSuccess()).toEqual([]);
  });
});
