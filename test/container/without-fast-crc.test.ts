import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import type { ShardFormatName } from '../../lambda/packing/formats/shard-format';
import { packDataset } from '../../lambda/packing/pack';
import { jpegSourceFolder } from '../support/jpeg-dataset';
import { temporaryFolders } from '../support/local-files';
import type { S3TestServer } from '../support/s3-server';
import { startS3Server } from '../support/s3-server';
import { pythonWith, runPythonChild } from '../support/python-child';

// The readers where no fast CRC-32C is installed (issue 46): test/python/without_fast_crc.py hides
// the crc32c, google_crc32c and awscrt modules before importing shardio, then reads shards this
// run packs (both formats) from a folder, through DALI's wiring and from the local S3 server.

const PYTHON = pythonWith('boto3');
const FORMATS: ShardFormatName[] = ['tfrecord', 'recordio'];
const FILES = 37;
const SHARDS = 5;

const folder = temporaryFolders();
let server: S3TestServer;

beforeAll(async () => {
  server = await startS3Server();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('shardio without a fast CRC-32C: each shard checked whole by its CRC-32', () => {
  test('refuses a flipped byte naming the shard on a folder, DALI and the S3 cache, TFRecord and RecordIO, with no byte checked in pure Python', async () => {
    // GIVEN: a pack of real JPEGs in both formats, and the S3 server
    const source = folder('crc-src');
    jpegSourceFolder(source, FILES, ['cat', 'dog', 'fish']);
    const packed: Record<string, string | number> = { source, shards: SHARDS, files: FILES };
    for (const format of FORMATS) {
      const output = folder(`crc-${format}`);
      await packDataset({ source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format, seed: 3, shardCount: SHARDS });
      packed[format] = output;
    }
    const description = path.join(folder('crc-packed'), 'packed.json');
    fs.writeFileSync(description, JSON.stringify(packed));
    const s3 = { endpoint: server.endpoint, region: server.region, ...server.credentials };

    // WHEN
    const run = await runPythonChild(PYTHON, ['-m', 'unittest', '-v', 'without_fast_crc'],
      { SHARDIO_TEST_PACKED: description, SHARDIO_TEST_S3: JSON.stringify(s3) });

    // THEN
    if (run.status !== 0) throw new Error(`python unittest failed (exit ${run.status}):\n${run.output}`);
    expect(run.output).toMatch(/^Ran 7 tests in .*\n\nOK$/m);
    expect(run.output).not.toMatch(/skipped/);
  }, 600_000);
});
