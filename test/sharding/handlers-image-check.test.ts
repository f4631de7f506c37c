import type { S3Client } from '@aws-sdk/client-s3';
import { checksImages } from '../../lambda/packing/image-check/record-content';
import { readPlanSettings, readRecordContent, readImagePreprocessing } from '../../lambda/handler-kit/dataset-settings';
import type { ShardTask } from '../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../lambda/handler-kit/plan-layout';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import type { Manifest } from '../../lambda/packing/manifest';
import { finalizeShards } from '../../lambda/shard-finalizer/finalize-shards';
import { packShard } from '../../lambda/shard-packer/pack-shard';
import { planDataset } from '../../lambda/shard-planner/plan-dataset';
import type { S3Fixture } from '../support/s3-fixture';
import { startS3Fixture } from '../support/s3-fixture';
import { createTestBucket, putTestObjects } from '../support/s3-server';
import { temporaryFolders } from '../support/local-files';
import { writeProbeCorpus } from '../packing/image-check/probe-corpus';

/**
 * The Lambda handlers' path with the image check (issue 32), over the S3 test server: the packer
 * reads `RECORD_CONTENT` (and `IMAGE_PREPROCESSING`) as the construct renders them, and every file
 * of the probe corpus the readers could not decode is a listed failure with its reason.
 */

const folder = temporaryFolders();
let fixture: S3Fixture;
let client: S3Client;
let sourceBucket: string;
let datasetBucket: string;
let corpus: Map<string, Buffer>;

beforeAll(async () => {
  fixture = await startS3Fixture();
  client = fixture.client;
  sourceBucket = await createTestBucket(client, 'check-source');
  datasetBucket = await createTestBucket(client, 'check-dataset');
  corpus = writeProbeCorpus(folder('corpus'));
  await putTestObjects(client, sourceBucket, Object.fromEntries([...corpus].map(([name, data]) => [`raw/probe/${name}`, data])), 8);
}, 90_000);

afterAll(() => fixture?.stop());

/** Plan → pack every shard (as the packer handler does, from its environment) → finalize. */
async function runHandlers(prefix: string, environment: Record<string, string>): Promise<Manifest> {
  const env = { SHARD_FORMAT: 'tfrecord', SHARD_COUNT: '2', ...environment };
  const settings = readPlanSettings(env);
  const source = new S3Source({ client, bucket: sourceBucket, prefix: 'raw/' });
  const sink = new S3Sink({ client, bucket: datasetBucket, prefix });
  const plan = await planDataset({ source, sink, destination: { bucket: datasetBucket, prefix }, settings });
  const tasks = JSON.parse((await sink.get(new RunFiles(new VersionLayout(plan.datasetVersion)).tasksKey)).toString('utf8')) as ShardTask[];
  const preprocessing = readImagePreprocessing(env);
  const checkImages = checksImages(readRecordContent(env), preprocessing !== undefined);
  for (const task of tasks) await packShard(task, { source, sink, format: 'tfrecord', readConcurrency: 8, preprocessing, checkImages });
  // allowMissing (the construct's allowMissing): the tests read the failures from the manifest, which a run with failures publishes only then.
  await finalizeShards({ datasetVersion: plan.datasetVersion, shardCount: plan.shardCount, fingerprint: plan.source.fingerprint }, sink, 7, true);
  return JSON.parse((await sink.get(MANIFEST_KEY)).toString('utf8')) as Manifest;
}

const keys = (prefix: string) => [...corpus.keys()].filter((name) => name.startsWith(prefix)).map((name) => `probe/${name}`).sort();

describe('the shard handlers with RECORD_CONTENT', () => {
  test('images: every bad file of the probe corpus is listed with its reason; the valid ones are records', async () => {
    // WHEN
    const manifest = await runHandlers('images/', { RECORD_CONTENT: 'images' });

    // THEN
    expect(manifest.failures.map((failure) => failure.key)).toEqual([...keys('bad-'), ...keys('resize-only-')].sort());
    expect(manifest.records).toBe(keys('ok-').length);
    const reasons = new Map(manifest.failures.map((failure) => [failure.key, failure.reason]));
    expect(reasons.get('probe/bad-cut-with-eoi.jpg')).toMatch(/^truncated jpeg image \(premature end of data/);
    expect(reasons.get('probe/bad-header-bomb.jpg')).toBe('image too large: 16000 x 16000 px, over the limit of 178956970 px');
    expect(reasons.get('probe/bad-page.html')).toBe('not an image (no image format recognised in its bytes)');
  });

  test('images with IMAGE_PREPROCESSING: the same bad files listed, the CMYK JPEG converted', async () => {
    // WHEN
    const manifest = await runHandlers('resized/', { RECORD_CONTENT: 'images', IMAGE_PREPROCESSING: JSON.stringify({ shorterSide: 32 }) });

    // THEN
    expect(manifest.failures.map((failure) => failure.key)).toEqual(keys('bad-'));
    expect(manifest.records).toBe(keys('ok-').length + keys('resize-only-').length);
  });

  test('absent (stacks deployed before the check) or any: every file is a record', async () => {
    // WHEN
    const manifest = await runHandlers('any/', {});

    // THEN
    expect(manifest).toMatchObject({ records: corpus.size, failures: [] });
    expect(() => readRecordContent({ RECORD_CONTENT: 'pictures' })).toThrow("environment variable RECORD_CONTENT must be 'images' or 'any', got 'pictures'");
  });
});
