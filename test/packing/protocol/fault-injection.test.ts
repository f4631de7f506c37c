import { VersionLayout } from '../../../lambda/packing/dataset-layout';
import type { PackingSink } from '../../../lambda/io/storage';
import { AfterClaimError } from '../../../lambda/packing/publish';
import { RunFiles } from '../../../lambda/handler-kit/plan-layout';
import type { ShardTask } from '../../../lambda/handler-kit/plan-layout';
import { finalizeShards } from '../../../lambda/shard-finalizer/finalize-shards';
import { packShard } from '../../../lambda/shard-packer/pack-shard';
import { planDataset } from '../../../lambda/shard-planner/plan-dataset';
import { MIB } from '../../../lib/contract/units';
import type { FaultMode, MemorySource } from '../../support/memory-store';
import { FAULT_MODES, MemoryStore } from '../../support/memory-store';
import { addFiles, pack, ProtocolModel, sourceWith } from './protocol-invariants';

/**
 * The publishing protocol under every fault (ARCHITECTURE.md "Publishing protocol"): the real
 * engine's pack, publish, copy and prune, and the Lambda finalizer's, run over an in-memory store
 * that fails, loses the answer of, or crashes the run at each storage call in turn. After each
 * faulted run the invariants hold; then the next run (a new pack, or the Step Functions retry of
 * the finalizer) repairs what was left and publishes, and the root names the newest claim.
 */

/**
 * The issue's reproduction, on the memory store: version 1 (7 days), version 2 pruning version 1
 * (retention 0), then the run under test: version 3 with the retention raised to 30 days, which
 * makes version 1 "kept" again by its age though it was pruned.
 */
async function datasetBeforeThirdPack() {
  const store = new MemoryStore();
  const model = new ProtocolModel(store);
  const source = sourceWith(24, 0, store);
  await pack(store, source, 7);
  model.ranWithRetention(7);
  store.advanceDays(1);
  addFiles(source, 6, 24, store.now);
  await pack(store, source, 0);
  model.ranWithRetention(0);
  store.advanceDays(1);
  addFiles(source, 6, 30, store.now);
  return { store, model, source };
}

const THIRD_RETENTION_DAYS = 30;
/** A fault at each of a run's hundred-odd calls is three runs per call: minutes on a loaded machine, not a hang. */
const FAULT_SWEEP_TIMEOUT_MS = 300_000;

type Dataset = Awaited<ReturnType<typeof datasetBeforeThirdPack>>;

/** The reproduction set up once: each call gives a copy of it to run into a fault (two packs fewer per fault). */
async function copiesOfDatasetBeforeThirdPack(): Promise<() => Dataset> {
  const original = await datasetBeforeThirdPack();
  return () => {
    const store = original.store.copy();
    return { store, model: original.model.copyFor(store), source: original.source.copy() };
  };
}

async function callsOfCleanRun(run: (store: MemoryStore, source: MemorySource) => Promise<unknown>, setUp: () => Promise<Dataset> | Dataset): Promise<string[]> {
  const { store, source } = await setUp();
  store.heal();
  await run(store, source);
  return [...store.calls];
}

describe('the CLI\'s pack under a fault at each storage call', () => {
  const runThird = (store: MemoryStore, source: MemorySource) => pack(store, source, THIRD_RETENTION_DAYS);

  test('a clean run of the reproduction publishes version 3 and keeps the invariants', async () => {
    // GIVEN / WHEN
    const { store, model, source } = await datasetBeforeThirdPack();
    const result = await runThird(store, source);
    model.ranWithRetention(THIRD_RETENTION_DAYS);
    // THEN: the run reused shards (so prune has references to keep) and every invariant holds
    expect(result.manifest.sequence).toBe(3);
    expect(result.manifest.sizing.reusedShards).toBeGreaterThan(0);
    expect(result.manifest.records).toBe(36);
    expect(await model.problemsAfterSuccess()).toEqual([]);
  });

  test.each(FAULT_MODES)('%s at every call: the invariants hold, and the next pack repairs and publishes', async (mode: FaultMode) => {
    const datasetCopy = await copiesOfDatasetBeforeThirdPack();
    const calls = await callsOfCleanRun(runThird, datasetCopy);
    expect(calls.length).toBeGreaterThan(50);
    expect(calls.some((call) => call.startsWith('createIfAbsent published/'))).toBe(true);
    const failures: string[] = [];
    for (let at = 0; at < calls.length; at++) {
      // GIVEN the dataset before the third pack, and a fault at call `at`
      const { store, model, source } = datasetCopy();
      store.injectAt(at, mode);
      // WHEN the third pack runs into it
      const outcome = await runThird(store, source).then(() => 'published', (error: Error) => error.name);
      model.ranWithRetention(THIRD_RETENTION_DAYS);
      // THEN the versions that must be readable are; and the next pack, without faults, finishes the job
      const afterFault = await model.problemsAfterAnyStep();
      const next = await runThird(store, source).catch((error: Error) => error);
      model.ranWithRetention(THIRD_RETENTION_DAYS);
      const afterNext = next instanceof Error ? [`next pack failed: ${next.message}`] : await model.problemsAfterSuccess();
      const newest = model.claims().at(-1);
      const records = newest && JSON.parse(store.objects.get(new VersionLayout(newest.datasetVersion).manifestKey)!.data.toString('utf8')).records;
      if (afterFault.length > 0 || afterNext.length > 0 || records !== 36) {
        failures.push(`${mode} at call ${at} (${calls[at]}, run ${outcome}): ${[...afterFault, ...afterNext, `newest has ${records} records`].join('; ')}`);
      }
    }
    expect(failures).toEqual([]);
  }, FAULT_SWEEP_TIMEOUT_MS);

  test('an error after the claim deletes nothing of the version and says it is published', async () => {
    // GIVEN the reproduction, with the root manifest's copy failing after the claim
    const { store, model, source } = await datasetBeforeThirdPack();
    const calls = await callsOfCleanRun(runThird, datasetBeforeThirdPack);
    const rootCopy = calls.findIndex((call) => call === 'put manifest.json');
    expect(rootCopy).toBeGreaterThan(calls.findIndex((call) => call.startsWith('createIfAbsent published/')));
    store.injectAt(rootCopy, 'fail');
    // WHEN
    const error = await runThird(store, source).catch((e: unknown) => e);
    // THEN
    expect(error).toBeInstanceOf(AfterClaimError);
    expect((error as Error).message).toMatch(/^v00000003-[0-9a-f]{8} is published and current; then copying it to the root failed: SlowDown.*Nothing of v00000003-[0-9a-f]{8} was deleted/);
    expect(await model.problemsAfterAnyStep()).toEqual([]);
    // and the next pack finds the root behind, repairs it first, and is up to date
    const next = await runThird(store, source);
    expect(next).toMatchObject({ upToDate: true, repairedRootCopies: ['manifest.json'] });
    expect(await model.problemsAfterSuccess()).toEqual([]);
  });
});

describe('the Lambda finalizer under a fault at each storage call', () => {
  const SETTINGS = { format: 'tfrecord' as const, seed: 7, labels: 'folder' as const, targetShardBytes: MIB, consumers: 1 };

  /** The reproduction through the handlers' engines: plan and pack shards without faults; the finalizer is what runs into them. */
  async function plannedThirdVersion() {
    const { store, model, source } = await datasetBeforeThirdPack();
    const sink = store.sink();
    const plan = await planDataset({ source, sink, destination: { bucket: 'memory-store', prefix: '' }, settings: SETTINGS });
    const tasks = JSON.parse((await sink.get(new RunFiles(new VersionLayout(plan.datasetVersion)).tasksKey)).toString('utf8')) as ShardTask[];
    for (const task of tasks) await packShard({ ...task }, { source, sink, format: 'tfrecord', readConcurrency: 4 });
    const event = { datasetVersion: plan.datasetVersion, shardCount: plan.shardCount, fingerprint: plan.source.fingerprint };
    return { store, model, source, sink, event };
  }

  const finalize = (sink: PackingSink, event: { datasetVersion: string; shardCount: number; fingerprint: string }) =>
    finalizeShards(event, sink, THIRD_RETENTION_DAYS);

  test.each(FAULT_MODES)('%s at every call: the invariants hold, and the retried finalizer publishes', async (mode: FaultMode) => {
    // The shards planned and packed once; each run below starts from a copy of that store.
    const planned = await plannedThirdVersion();
    const plannedCopy = () => {
      const store = planned.store.copy();
      return { store, model: planned.model.copyFor(store), sink: store.sink(), event: planned.event };
    };
    const clean = plannedCopy();
    await finalize(clean.sink, clean.event);
    const calls = [...clean.store.calls];
    expect(calls.some((call) => call.startsWith('createIfAbsent published/'))).toBe(true);
    const failures: string[] = [];
    for (let at = 0; at < calls.length; at++) {
      // GIVEN packed shards and a fault at the finalizer's call `at`
      const { store, model, sink, event } = plannedCopy();
      store.injectAt(at, mode);
      // WHEN the finalizer runs into it, then Step Functions retries it
      const outcome = await finalize(sink, event).then(() => 'published', (error: Error) => error.name);
      model.ranWithRetention(THIRD_RETENTION_DAYS);
      const afterFault = await model.problemsAfterAnyStep();
      const retry = await finalize(sink, event).catch((error: Error) => error);
      model.ranWithRetention(THIRD_RETENTION_DAYS);
      // THEN
      const afterRetry = retry instanceof Error ? [`retry failed: ${retry.message}`] : await model.problemsAfterSuccess();
      const planLeft = [...store.objects.keys()].filter((key) => key.startsWith('_plan/'));
      if (afterFault.length > 0 || afterRetry.length > 0 || planLeft.length > 0 || model.claims().at(-1)?.datasetVersion !== event.datasetVersion) {
        failures.push(`${mode} at call ${at} (${calls[at]}, run ${outcome}): ${[...afterFault, ...afterRetry, ...planLeft].join('; ')}`);
      }
    }
    expect(failures).toEqual([]);
  }, FAULT_SWEEP_TIMEOUT_MS);
});
