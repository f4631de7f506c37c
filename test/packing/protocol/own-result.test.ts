import { VersionLayout } from '../../../lambda/packing/dataset-layout';
import type { ShardTask } from '../../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../../lambda/handler-kit/plan-layout';
import { verifyDataset } from '../../../lambda/packing/verify';
import { finalizeShards } from '../../../lambda/shard-finalizer/finalize-shards';
import { packShard } from '../../../lambda/shard-packer/pack-shard';
import { planDataset } from '../../../lambda/shard-planner/plan-dataset';
import { MIB } from '../../../lib/contract/units';
import { MemoryStore } from '../../support/memory-store';
import { sourceWith } from './protocol-invariants';

/*
 * Issue 45, point 2: the answer to a packer's create-if-absent of its result is lost and the sink's
 * retry finds the object there (S3: 412). The result found is this attempt's own (it names the
 * attempt's own shard key): the attempt keeps its shard and index and returns it, and the version
 * is published from it.
 */
const SETTINGS = { format: 'tfrecord' as const, seed: 7, labels: 'folder' as const, targetShardBytes: MIB, consumers: 1 };

async function planned() {
  const store = new MemoryStore();
  const source = sourceWith(12, 0, store);
  const sink = store.sink();
  const plan = await planDataset({ source, sink, destination: { bucket: 'memory-store', prefix: '' }, settings: SETTINGS });
  const run = new RunFiles(new VersionLayout(plan.datasetVersion));
  const tasks = JSON.parse((await sink.get(run.tasksKey)).toString('utf8')) as ShardTask[];
  return { store, source, sink, plan, run, tasks };
}

describe('a packer whose result create lost its answer', () => {
  test('recognises the result found as its own, keeps its objects, and the finalizer publishes the version', async () => {
    // GIVEN: a planned version, and the call at which shard 0's packer creates its result
    const clean = await planned();
    clean.store.heal();
    await packShard(clean.tasks[0], { source: clean.source, sink: clean.sink, format: 'tfrecord', readConcurrency: 4 });
    const resultCall = clean.store.calls.findIndex((call) => call === `createIfAbsent ${clean.run.resultKey(clean.tasks[0].shardName)}`);
    expect(resultCall).toBeGreaterThan(0);
    const { store, source, sink, plan, run, tasks } = await planned();
    store.injectAt(resultCall, 'lost-answer-retried');

    // WHEN
    const results = [];
    for (const task of tasks) results.push(await packShard(task, { source, sink, format: 'tfrecord', readConcurrency: 4 }));
    const event = { datasetVersion: plan.datasetVersion, shardCount: plan.shardCount, fingerprint: plan.source.fingerprint };
    const published = await finalizeShards(event, sink, 7);

    // THEN: the first packer answered its own shard, whose objects are there, and the version is published with it
    expect(store.calls[resultCall]).toBe(`createIfAbsent ${run.resultKey(tasks[0].shardName)}`);
    expect(store.objects.has(results[0].shard.key)).toBe(true);
    expect(store.objects.has(results[0].shard.indexKey)).toBe(true);
    expect(published).toMatchObject({ datasetVersion: plan.datasetVersion, shards: tasks.length });
    expect((await verifyDataset(sink)).problems).toEqual([]);
  });
});
