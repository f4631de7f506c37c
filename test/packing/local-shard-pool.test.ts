import * as fs from 'node:fs';
import * as path from 'node:path';
import { shardFormat } from '../../lambda/packing/formats';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { LocalShardPool } from '../../lambda/packing/parallel/local-shard-pool';
import { planShards } from '../../lambda/packing/planning/plan-shards';
import { writeShard } from '../../lambda/packing/shard-writer';
import { listAll } from '../../lambda/io/storage';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';

const folder = temporaryFolders();

/** 40 files of 0–2999 bytes in two class folders. */
function sourceFolder(): string {
  const dir = folder('pool-source');
  writeFiles(dir, Object.fromEntries(Array.from({ length: 40 }, (_, i) =>
    [`${i % 2 ? 'cat' : 'dog'}/${String(i).padStart(3, '0')}.jpg`, seededBytes(`file-${i}`, (i * 7919) % 3000)])));
  return dir;
}

/** The threads the pool runs on; each test closes its pool, even when it fails. */
const pools: LocalShardPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function poolFor(sourceDir: string, outputDir: string, threads = 2): LocalShardPool {
  const pool = new LocalShardPool({ sourceDir, outputDir, format: 'tfrecord', readConcurrency: 4 }, threads);
  pools.push(pool);
  return pool;
}

/** The pool's worker threads, read through its private field: the tests below stop one on purpose. */
function threadsOf(pool: LocalShardPool): Array<{ terminate(): Promise<number> }> {
  return (pool as unknown as { workers: Array<{ thread: { terminate(): Promise<number> } }> }).workers.map((worker) => worker.thread);
}

describe('LocalShardPool', () => {
  test('stat batches handed over back to back, before any is awaited, each come back in their own order', async () => {
    // GIVEN
    const dir = sourceFolder();
    const pool = poolFor(dir, folder('pool-out'));
    const keys = fs.readdirSync(path.join(dir, 'cat')).map((name) => `cat/${name}`);
    const first = [...keys.slice(0, 12), 'gone.jpg'];
    const second = keys.slice(12);

    // WHEN both are posted from one synchronous stretch, as a folder walk does
    const pending = [pool.statFiles(first), pool.statFiles(second)];
    const [firstStats, secondStats] = await Promise.all(pending);

    // THEN
    const here = new LocalDirectorySource(dir);
    expect(Array.from(firstStats)).toEqual(Array.from(here.stat(first)));
    expect(Array.from(secondStats)).toEqual(Array.from(here.stat(second)));
    expect(firstStats[2 * 12]).toBeNaN();
  });

  test('a listing whose stats run on the pool equals the listing on this thread', async () => {
    // GIVEN
    const dir = sourceFolder();
    const pool = poolFor(dir, folder('pool-out'));
    pool.start();

    // WHEN
    const listed = await listAll(new LocalDirectorySource(dir, { statFiles: pool.statFiles }));

    // THEN
    const here = await listAll(new LocalDirectorySource(dir));
    const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : 1);
    expect(listed.sort(byKey)).toEqual(here.sort(byKey));
  });

  test('writes a shard with the bytes the same shard gets written in this thread', async () => {
    // GIVEN
    const dir = sourceFolder();
    const files = await listAll(new LocalDirectorySource(dir));
    const [shard] = planShards(files, { seed: 3, shardCount: 1 }).shards;
    const pooledDir = folder('pool-out');
    const pool = poolFor(dir, pooledDir);
    const hereDir = folder('here-out');

    // WHEN
    let handled = 0;
    const pooled = await pool.write(shard, 'versions/v00000001-0123abcd/', (_bytes, count) => { handled += count; });
    const here = await writeShard(shard, {
      source: new LocalDirectorySource(dir), sink: new LocalDirectorySink(hereDir), format: shardFormat('tfrecord'), readConcurrency: 4,
    });

    // THEN
    expect(pooled).toEqual(here);
    expect(handled).toBe(40);
    // The pool writes under the version's folder it is given; keys are reported relative to it.
    expect(fs.readFileSync(path.join(pooledDir, 'versions/v00000001-0123abcd', pooled.shard.key))).toEqual(fs.readFileSync(path.join(hereDir, here.shard.key)));
  });

  test('a worker that stops during a task fails that task, naming it, and the next task gets a new worker', async () => {
    // GIVEN a pool of one worker, busy with a stat of many paths
    const dir = sourceFolder();
    const pool = poolFor(dir, folder('pool-out'), 1);
    const many = Array.from({ length: 200_000 }, (_, i) => `missing-${i}`);
    const stat = pool.statFiles(many);
    const [worker] = threadsOf(pool);

    // WHEN it is stopped
    await worker.terminate();

    // THEN
    // Node reports 1 for a worker stopped while running; 0 was seen for one stopped while still starting.
    await expect(stat).rejects.toThrow(/shard worker exited \(code [01]\) while listing the source/);
    const after = await pool.statFiles(['gone.jpg']);
    expect(Array.from(after)).toEqual([NaN, NaN]);
    expect(threadsOf(pool)).toHaveLength(1);
    expect(threadsOf(pool)[0]).not.toBe(worker);
  });

  test('a started worker that stops while idle is replaced by the next task', async () => {
    // GIVEN
    const dir = sourceFolder();
    const pool = poolFor(dir, folder('pool-out'), 2);
    pool.start();
    const [stopped] = threadsOf(pool);

    // WHEN
    await stopped.terminate();
    const stats = await Promise.all([pool.statFiles(['cat/001.jpg']), pool.statFiles(['dog/000.jpg'])]);

    // THEN
    expect(stats.map((s) => s[0])).toEqual([fs.statSync(path.join(dir, 'cat', '001.jpg')).size, 0]);
    expect(threadsOf(pool)).toHaveLength(2);
    expect(threadsOf(pool)).not.toContain(stopped);
  });
});
