import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import type { PackingSource } from '../../lambda/io/storage';
import { packDataset } from '../../lambda/packing/pack';
import { VersionLayout } from '../../lambda/packing/dataset-layout';
import { verifyDataset } from '../../lambda/packing/verify';
import { MAX_SHARD_BYTES } from '../../lib/contract/shard-limits';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';

const folder = temporaryFolders();

describe('a file over the shard limit', () => {
  test.each(['in place (readInto, local files)', 'with read-ahead (read, as S3 reads)'])('is a listed failure and never read, reading %s', async (how) => {
    // GIVEN: a sparse file one byte over the limit among small ones, and a source that records its reads
    const dir = folder('src');
    writeFiles(dir, { 'cat/1.jpg': seededBytes('over/1', 600), 'dog/2.jpg': seededBytes('over/2', 800) });
    fs.writeFileSync(path.join(dir, 'cat', 'huge.bin'), '');
    fs.truncateSync(path.join(dir, 'cat', 'huge.bin'), MAX_SHARD_BYTES + 1);
    const local = new LocalDirectorySource(dir);
    const read: string[] = [];
    const source: PackingSource = {
      uri: local.uri,
      list: () => local.list(),
      read: (key) => {
        read.push(key);
        return local.read(key);
      },
      ...(how.startsWith('in place') ? {
        readInto: (key: string, size: number, scratch: Parameters<NonNullable<PackingSource['readInto']>>[2]) => {
          read.push(key);
          return local.readInto(key, size, scratch);
        },
      } : {}),
    };

    // WHEN
    const { manifest } = await packDataset({ source, sink: new LocalDirectorySink(folder('out')), format: 'tfrecord', seed: 1, shardCount: 1, allowMissing: true });

    // THEN
    expect(manifest.records).toBe(2);
    expect(manifest.failures).toEqual([{
      key: 'cat/huge.bin',
      reason: `${MAX_SHARD_BYTES + 1} bytes (128.0 MiB) is over the 128 MiB shard limit: a shard holds whole files, so this one cannot be packed; `
        + 'split or shrink it, or leave it out of the source',
    }]);
    expect(read.sort()).toEqual(['cat/1.jpg', 'dog/2.jpg']);
  });

  test.each(['tfrecord', 'recordio'] as const)('leaves no empty shard (%s): the one it was planned into is left out of the manifest and deleted; the dataset verifies', async (format) => {
    // GIVEN: the file over the limit planned alone into a shard of its own
    const dir = folder('src');
    writeFiles(dir, { 'cat/1.jpg': seededBytes('alone/1', 600), 'dog/2.jpg': seededBytes('alone/2', 800) });
    fs.writeFileSync(path.join(dir, 'cat', 'huge.bin'), '');
    fs.truncateSync(path.join(dir, 'cat', 'huge.bin'), MAX_SHARD_BYTES + 1);
    const out = folder('out');
    const sink = new LocalDirectorySink(out);

    // WHEN
    const { manifest } = await packDataset({ source: new LocalDirectorySource(dir), sink, format, seed: 1, allowMissing: true });

    // THEN: every shard listed holds records, and no shard, index or member list of the version is left unlisted
    expect(manifest.failures.map((failure) => failure.key)).toEqual(['cat/huge.bin']);
    expect(manifest.records).toBe(2);
    expect(manifest.shards.length).toBeGreaterThan(0);
    expect(manifest.shards.filter((shard) => shard.records === 0 || shard.bytes === 0)).toEqual([]);
    const layout = new VersionLayout(manifest.datasetVersion);
    const listed = manifest.shards.flatMap((shard) => [shard.key, shard.indexKey, shard.membersKey]);
    const written = (await sink.list(layout.prefix)).filter((key) => /\/(shards|index|members)\/part-/.test(key));
    expect(written.sort()).toEqual(listed.sort());
    expect((await verifyDataset(sink)).problems).toEqual([]);
  });
});
