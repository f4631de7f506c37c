import { VersionLayout } from '../../../lambda/packing/dataset-layout';
import { MemoryStore } from '../../support/memory-store';
import { addFiles, pack, sourceWith } from './protocol-invariants';

/*
 * Issue 38, point 8: a finalizer whose clean-up failed after its claim, or a packer attempt that
 * wrote its result after that clean-up, leaves `_plan/<version>/` behind. The next run's prune
 * removes the working files of every number a claim has taken, published or not; a run in progress
 * (a number no claim has yet) keeps its own.
 */
describe('working files left under _plan/', () => {
  test('the next pack removes those of every claimed number, and leaves those of a number not yet claimed', async () => {
    // GIVEN: version 1 published, with working files left of it, of an abandoned run of number 1 and of a run in progress (number 2)
    const store = new MemoryStore();
    const source = sourceWith(8, 0, store);
    const first = await pack(store, source, 7);
    const published = new VersionLayout(first.manifest.datasetVersion);
    const left = [`${published.planPrefix}results/part-00000-of-00001.json`, '_plan/v00000001-0badc0de/tasks.json'];
    const inProgress = '_plan/v00000003-1234abcd/plan.json';
    for (const key of [...left, inProgress]) store.objects.set(key, { data: Buffer.from('{}\n'), modified: store.now });
    addFiles(source, 2, 8, store.now);

    // WHEN: the next pack publishes version 2 and prunes
    await pack(store, source, 7);

    // THEN
    expect([...store.objects.keys()].filter((key) => key.startsWith('_plan/'))).toEqual([inProgress]);
  });
});
