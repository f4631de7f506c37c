import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/packing/io/local-directory';
import type { PackingSource } from '../../lambda/packing/io/storage';
import { packDataset } from '../../lambda/packing/pack';
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
    const { manifest } = await packDataset({ source, sink: new LocalDirectorySink(folder('out')), format: 'tfrecord', seed: 1, shardCount: 1 });

    // THEN
    expect(manifest.records).toBe(2);
    expect(manifest.failures).toEqual([{
      key: 'cat/huge.bin',
      reason: `${MAX_SHARD_BYTES + 1} bytes (128.0 MiB) is over the 128 MiB shard limit: a shard holds whole files, so this one cannot be packed; `
        + 'split or shrink it, or leave it out of the source',
    }]);
    expect(read.sort()).toEqual(['cat/1.jpg', 'dog/2.jpg']);
  });
});
