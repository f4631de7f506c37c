import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ListedFile } from '../../../lambda/io/storage';
import { EntryFileWriter, readEntryFile } from '../../../lambda/packing/listing/entry-file';
import { ListingCollector } from '../../../lambda/packing/listing/listing-collector';
import { planListing } from '../../../lambda/packing/listing/plan-listing';
import { sourceFingerprint } from '../../../lambda/packing/manifest';
import type { PlanLimits } from '../../../lambda/packing/planning/grouped-plan';
import { compareCodePointOrder } from '../../../lambda/io/key-order';
import { planShards } from '../../../lambda/packing/planning/plan-shards';
import type { PlanOptions } from '../../../lambda/packing/planning/plan-types';
import { temporaryFolders } from '../../support/local-files';
import { KIB, MIB, reordered, uniformFiles } from '../planning/synthetic-files';

const folder = temporaryFolders();

/** Small groups and runs, so that planning from disk shows on listings a test can afford. */
const SMALL: PlanLimits = { groupFiles: 1000, maxAverageShardRecords: 1000 };

function listed(count: number, options: { seed?: number; classes?: number } = {}): ListedFile[] {
  return uniformFiles(count, 1 * KIB, 64 * KIB, options).map((file, i) => ({ ...file, modified: 1_700_000_000_000 + i }));
}

function collect(files: readonly ListedFile[], runFiles: number, batch = 777, onFirstSpill?: () => void): ListingCollector {
  const collector = new ListingCollector(runFiles, folder('listing'), onFirstSpill);
  for (let start = 0; start < files.length; start += batch) collector.add(files.slice(start, start + batch));
  return collector;
}

function byKey(files: readonly ListedFile[]): ListedFile[] {
  return files.slice().sort((a, b) => compareCodePointOrder(a.key, b.key));
}

describe('entry files', () => {
  test('files read back as written: unicode keys, keys longer than the buffer, sizes above 2^32, fractional times', () => {
    // GIVEN
    const file = path.join(folder('entries'), 'entries');
    const files: ListedFile[] = [
      { key: 'cat/0001.jpg', size: 0, modified: 0 },
      { key: 'ünïcødé/𝄞 with spaces.png', size: 2 ** 40 + 3, modified: 1_700_000_000_123.5 },
      { key: `long/${'x'.repeat(5000)}`, size: 7, modified: 1 },
      ...listed(3000),
    ];

    // WHEN
    const writer = new EntryFileWriter(file, 256);
    for (const entry of files) writer.write(entry);
    writer.close();

    // THEN
    expect([...readEntryFile(file, 100)]).toEqual(files);
    expect([...readEntryFile(file, 64 * 1024)]).toEqual(files);
  });

  test('a truncated file fails, naming it', () => {
    // GIVEN
    const file = path.join(folder('entries'), 'truncated');
    const writer = new EntryFileWriter(file, 1024);
    writer.write({ key: 'a/b.jpg', size: 1, modified: 2 });
    writer.close();
    fs.truncateSync(file, fs.statSync(file).size - 3);

    // WHEN / THEN
    expect(() => [...readEntryFile(file, 1024)]).toThrow(`${file}: 24 bytes at the end are not a whole entry`);
  });
});

describe('ListingCollector', () => {
  test('a listing within the run size stays in memory, as listed, until taken', () => {
    // GIVEN
    const files = listed(900);

    // WHEN
    let spills = 0;
    const collector = collect(files, 1000, 777, () => spills++);

    // THEN
    expect(collector.takeInMemory()).toEqual(files);
    expect(collector.takeInMemory()).toEqual([]);
    expect(spills).toBe(0);
    expect(collector.count).toBe(900);
    expect(collector.totalBytes).toBe(files.reduce((sum, file) => sum + file.size, 0));
  });

  test('a larger listing is sorted through runs on disk: every file once, in code-point order, the folder removed after', () => {
    // GIVEN: shuffled, with keys that sort differently by code unit and by code point
    const files = reordered([...listed(10_000), { key: 'z/\uffff.jpg', size: 1, modified: 1 }, { key: 'z/😀.jpg', size: 2, modified: 2 }], 3);

    // WHEN
    let spills = 0;
    const collector = collect(files, 1000, 777, () => spills++);
    const sorted = [...collector.sorted()];
    const scratch = path.dirname(collector.scratchFile('probe'));

    // THEN
    expect(collector.takeInMemory()).toBeUndefined();
    expect(spills).toBe(1);
    expect(sorted).toEqual(byKey(files));
    expect(sorted.slice(-2).map((file) => file.key)).toEqual(['z/\uffff.jpg', 'z/😀.jpg']);
    expect(fs.readdirSync(scratch).filter((name) => name.startsWith('run-')).length).toBe(11);
    collector.dispose();
    expect(fs.existsSync(scratch)).toBe(false);
  });
});

describe('ListingCollector: the fingerprint of a listing in key order', () => {
  // Keys whose code-point order differs from their code-unit order: U+FFFF sorts before an emoji.
  const inKeyOrder = () => byKey([...listed(2000), { key: 'z/\uffff.jpg', size: 1, modified: 1 }, { key: 'z/😀.jpg', size: 2, modified: 2 }]);

  test.each([
    ['held in memory', 10_000],
    ['sorted through runs on disk', 500],
  ])('is hashed as the files come, %s: the fingerprint of the sorted listing', (_where, runFiles) => {
    // GIVEN
    const files = inKeyOrder();

    // WHEN
    const collector = collect(files, runFiles);

    // THEN
    expect(files.slice(-2).map((file) => file.key)).toEqual(['z/\uffff.jpg', 'z/😀.jpg']);
    expect(collector.inOrderFingerprint()).toBe(sourceFingerprint(files));
    // Asked again, the same (the hasher is spent once).
    expect(collector.inOrderFingerprint()).toBe(sourceFingerprint(files));
    collector.dispose();
  });

  test('one key out of order leaves the fingerprint to the caller, and the plan still gets the right one', () => {
    // GIVEN: the last two keys swapped
    const files = inKeyOrder();
    files.push(...files.splice(-2, 1));

    // WHEN
    const collector = collect(files, 10_000);

    // THEN
    expect(collector.inOrderFingerprint()).toBeUndefined();
    expect(planListing(collector, { seed: 1, targetShardBytes: 4 * MIB, labels: 'none' }).fingerprint()).toBe(sourceFingerprint(files));
  });
});

describe('planListing', () => {
  const options: PlanOptions = { seed: 42, targetShardBytes: 4 * MIB, consumers: 2 };

  test('from disk, group by group, the plan planShards makes of the same files in memory', () => {
    // GIVEN
    const files = reordered(listed(12_000, { classes: 13 }), 1);
    const expected = planShards(files, options, SMALL);

    // WHEN
    const plan = planListing(collect(files, 1000), options, SMALL);
    const shards = [...plan.groups].flat();

    // THEN
    expect(expected.shards.length).toBeGreaterThan(20);
    expect(plan.shardCount).toBe(expected.shards.length);
    expect(shards).toEqual(expected.shards);
    expect(plan.labelMap).toEqual(expected.labelMap);
    expect([plan.totalFiles, plan.totalBytes]).toEqual([expected.totalFiles, expected.totalBytes]);
    expect(plan.fingerprint()).toBe(sourceFingerprint(files));
  });

  test('with more groups than group files open at once, groups share files: still the same plan', () => {
    // GIVEN: 12 groups, 5 files
    const files = listed(12_000, { classes: 13 });

    // WHEN
    const plan = planListing(collect(files, 1000), options, SMALL, 5);

    // THEN
    expect([...plan.groups].flat()).toEqual(planShards(files, options, SMALL).shards);
  });

  test('groups are planned one at a time, when asked for', () => {
    // GIVEN
    const plan = planListing(collect(listed(12_000), 1000), options, SMALL);

    // WHEN
    const groups = plan.groups[Symbol.iterator]();
    const first = groups.next();

    // THEN
    expect(first.done).toBe(false);
    expect(first.value.length).toBeLessThan(plan.shardCount);
    expect(first.value[0].index).toBe(0);
  });

  test('a listing in memory: planShards\' plan, fingerprinted when asked', () => {
    // GIVEN
    const files = listed(800);

    // WHEN
    const plan = planListing(collect(files, 1000), options, SMALL);

    // THEN
    expect([...plan.groups]).toEqual([planShards(files, options, SMALL).shards]);
    expect(plan.fingerprint()).toBe(sourceFingerprint(files));
  });

  test.each([
    ['a key listed twice', (files: ListedFile[]) => [...files, files[5000]], /key 'class-.*' is listed more than once/],
    ['a file at the root with folder labels', (files: ListedFile[]) => [...files, { key: 'loose.jpg', size: 1, modified: 1 }], /'loose.jpg' is at the root/],
    ['a size that is not a whole number', (files: ListedFile[]) => [...files, { key: 'a/b.jpg', size: 1.5, modified: 1 }], /file 'a\/b.jpg' has size 1.5/],
  ])('from disk, %s fails as in memory', (_what, change, expected) => {
    // GIVEN
    const files = change(listed(6000));

    // WHEN / THEN
    expect(() => planShards(files, options, SMALL)).toThrow(expected);
    expect(() => planListing(collect(files, 1000), options, SMALL)).toThrow(expected);
  });

  test('a file without a key fails as it is collected, naming its place in the listing', () => {
    // GIVEN
    const collector = new ListingCollector(1000, folder('listing'));
    collector.add(listed(3));

    // WHEN / THEN
    expect(() => collector.add([{ key: '', size: 1, modified: 1 }])).toThrow('file 3 of the listing has no key (got "")');
  });
});
