import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../../lambda/io/local-directory';
import { S3Source } from '../../../lambda/io/s3-source';
import { packDataset } from '../../../lambda/packing/pack';
import { datasetObjects, expectSameObjects } from '../../support/dataset-objects';
import { temporaryFolders, writeFiles } from '../../support/local-files';
import type { S3Fixture } from '../../support/s3-fixture';
import { startS3Fixture } from '../../support/s3-fixture';
import { createTestBucket, putTestObjects } from '../../support/s3-server';

const FIXTURES = path.resolve(__dirname, '../../fixtures/images/preprocess');
const folder = temporaryFolders();
let fixture: S3Fixture;

beforeAll(async () => {
  fixture = await startS3Fixture();
}, 60_000);
afterAll(() => fixture?.stop());

describe('preprocessing images read from S3 (the Lambda packer\'s reads: many in flight, a new buffer each)', () => {
  test('gives the shards that the same files give from a local folder (read in place), failures included', async () => {
    // GIVEN: the fixture images, twice over, in a bucket and in a folder
    const files: Record<string, Buffer> = {};
    for (const name of fs.readdirSync(FIXTURES).filter((file) => !/\.(py|js)$/.test(file))) {
      for (const copy of ['a', 'b']) files[`${copy}/${name}`] = fs.readFileSync(path.join(FIXTURES, name));
    }
    const bucket = await createTestBucket(fixture.client, 'preprocess');
    await putTestObjects(fixture.client, bucket, Object.fromEntries(Object.entries(files).map(([key, data]) => [`raw/${key}`, data])));
    const local = folder('src');
    writeFiles(local, files);
    const options = { format: 'tfrecord' as const, seed: 4, shardCount: 3, readConcurrency: 8, preprocessing: { shorterSide: 40, jpegQuality: 80 }, allowMissing: true };

    // WHEN
    const fromS3 = folder('out-s3');
    const s3 = await packDataset({ ...options, source: new S3Source({ client: fixture.client, bucket, prefix: 'raw/' }), sink: new LocalDirectorySink(fromS3) });
    const fromFolder = folder('out-local');
    const folderPack = await packDataset({ ...options, source: new LocalDirectorySource(local), sink: new LocalDirectorySink(fromFolder) });

    // THEN
    expect(s3.manifest.records).toBe(24);
    expect(s3.manifest.failures).toEqual(folderPack.manifest.failures);
    expect(s3.manifest.failures.map((failure) => failure.key)).toEqual(['a/pillow-truncated.jpg', 'a/text-named.jpg', 'b/pillow-truncated.jpg', 'b/text-named.jpg']);
    expectSameObjects(await datasetObjects(new LocalDirectorySink(fromS3)), await datasetObjects(new LocalDirectorySink(fromFolder)));
  });
});
