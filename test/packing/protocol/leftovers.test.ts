import { HANDLER_TIMEOUT_SECONDS } from '../../../lib/contract/handler-timeout';
import { VersionLayout } from '../../../lambda/packing/dataset-layout';
import { LEFTOVER_MIN_AGE_MS } from '../../../lambda/packing/leftovers';
import { pruneVersions } from '../../../lambda/packing/prune';
import { verifyDataset } from '../../../lambda/packing/verify';
import { MemoryStore } from '../../support/memory-store';
import { addFiles, pack, sourceWith } from './protocol-invariants';

/*
 * Issue 45, point 1: a packer attempt stopped (a Lambda timeout, a Step Functions retry after
 * Lambda.ServiceException) with its shard's write in flight has it land after the finalizer
 * removed the version's unlisted objects: a leftover in a published version's folder. `verify`
 * names it without failing the version; the next publish removes it once it is older than the
 * longest a packer attempt can write (lambda/packing/leftovers.ts), never before.
 */

const MINUTE = 60_000;
const RETENTION_DAYS = 7;

/** Version 1 published, and a shard of a stopped attempt landed in its folder `landedAfterMs` after its claim. */
async function publishedWithLeftover(landedAfterMs: number) {
  const store = new MemoryStore();
  const source = sourceWith(8, 0, store);
  const first = await pack(store, source, RETENTION_DAYS);
  const layout = new VersionLayout(first.manifest.datasetVersion);
  const claimedAt = store.now;
  const leftover = `${layout.prefix}shards/${first.manifest.shards[0].key.split('/').pop()!.split('.')[0]}.5ca1ab1e.tfrecord`;
  store.objects.set(leftover, { data: Buffer.from('a shard written by an attempt that was stopped'), modified: claimedAt + landedAfterMs });
  return { store, source, layout, claimedAt, leftover };
}

describe('leftovers in a published version\'s folder', () => {
  test('the age rule is the packer\'s timeout and the clock margin: 30 minutes', () => {
    expect(HANDLER_TIMEOUT_SECONDS).toBe(15 * 60);
    expect(LEFTOVER_MIN_AGE_MS).toBe(30 * MINUTE);
  });

  test('verify names a leftover without failing the version; a publish keeps it while younger than the age rule and removes it after', async () => {
    // GIVEN
    const { store, source, leftover } = await publishedWithLeftover(0);

    // WHEN / THEN: verify names it, as a leftover, not a problem
    const report = await verifyDataset(store.sink());
    expect(report.problems).toEqual([]);
    expect(report.leftovers).toEqual([leftover]);

    // WHEN: the next publish, 29 minutes later by the store's clock
    store.now += 29 * MINUTE;
    addFiles(source, 2, 8, store.now);
    const young = await pack(store, source, RETENTION_DAYS);
    // THEN: it is still there
    expect(young.prune?.removedLeftovers).toEqual([]);
    expect(store.objects.has(leftover)).toBe(true);

    // WHEN: the one after, 31 minutes after it landed
    store.now += 2 * MINUTE;
    addFiles(source, 2, 10, store.now);
    const old = await pack(store, source, RETENTION_DAYS);
    // THEN: it is gone, and nothing listed went with it
    expect(old.prune?.removedLeftovers).toEqual([leftover]);
    expect(store.objects.has(leftover)).toBe(false);
    expect((await verifyDataset(store.sink())).problems).toEqual([]);
  });

  /*
   * The slowest attempt: invoked at the latest just before its version's Finalize began, so before
   * the claim, and stopped by Lambda HANDLER_TIMEOUT_SECONDS later; its write lands at the claim plus
   * the timeout at the latest, with a LastModified no later than that. Every prune while it may
   * still run (up to that moment) and for the clock margin after finds it younger than the rule.
   */
  test('a write landing at the latest a slow attempt can write is kept by every prune while the attempt may run and for the margin after, and removed by the first one past both', async () => {
    // GIVEN
    const timeoutMs = HANDLER_TIMEOUT_SECONDS * 1000;
    const { store, claimedAt, leftover } = await publishedWithLeftover(timeoutMs);
    const landedAt = claimedAt + timeoutMs;

    // WHEN: prunes at each minute from its landing until the rule allows its removal
    for (let at = landedAt; at < landedAt + LEFTOVER_MIN_AGE_MS; at += MINUTE) {
      const pruned = await pruneVersions(store.sink(), RETENTION_DAYS * 86_400_000, new Date(at));
      // THEN
      expect(pruned.removedLeftovers).toEqual([]);
    }
    expect(store.objects.has(leftover)).toBe(true);
    const pruned = await pruneVersions(store.sink(), RETENTION_DAYS * 86_400_000, new Date(landedAt + LEFTOVER_MIN_AGE_MS));
    expect(pruned.removedLeftovers).toEqual([leftover]);
  });
});

/*
 * Issue 45, point 9: what failed runs left below the newest claim goes at the next run's plan,
 * also when that run publishes nothing (the source is unchanged).
 */
describe('failed runs\' objects below the newest claim', () => {
  test('an up-to-date run removes the folder and working files of a run whose number was taken, and leaves a run in progress alone', async () => {
    // GIVEN: version 1, then objects of a failed run of number 1 (an attempt of it wrote after the prune), and of a run in progress (number 2)
    const store = new MemoryStore();
    const source = sourceWith(8, 0, store);
    await pack(store, source, RETENTION_DAYS);
    const failed = ['versions/v00000001-0badc0de/shards/part-00000-of-00001.1a2b3c4d.tfrecord', 'versions/v00000001-0badc0de/members/part-00000-of-00001.jsonl',
      '_plan/v00000001-0badc0de/tasks.json'];
    const inProgress = ['versions/v00000002-1234abcd/members/part-00000-of-00001.jsonl', '_plan/v00000002-1234abcd/tasks.json'];
    for (const key of [...failed, ...inProgress]) store.objects.set(key, { data: Buffer.from('{}\n'), modified: store.now });

    // WHEN
    const result = await pack(store, source, RETENTION_DAYS);

    // THEN
    expect(result.upToDate).toBe(true);
    for (const key of failed) expect(store.objects.has(key)).toBe(false);
    for (const key of inProgress) expect(store.objects.has(key)).toBe(true);
    expect((await verifyDataset(store.sink())).problems).toEqual([]);
  });
});
