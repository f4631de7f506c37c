import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Timeouts } from '../../lambda/io/s3-client';
import { engineS3Client } from '../../lambda/io/s3-client';
import type { S3RetryOptions } from '../../lambda/io/s3-retry';
import { RANGE_BYTES } from '../../lambda/io/s3-signed-get';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import type { PackingSource } from '../../lambda/io/storage';
import { isObjectNotFound, listAll } from '../../lambda/io/storage';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { packDataset } from '../../lambda/packing/pack';
import { seededBytes } from '../support/local-files';
import type { S3Fixture } from '../support/s3-fixture';
import { startS3Fixture } from '../support/s3-fixture';
import { createTestBucket, putTestObjects } from '../support/s3-server';
import { testWhenServerCan } from '../support/s3-server-capabilities';

// No time budget for throttling: the attempts alone bound the retries (s3-storage.test.ts tests the budget).
const FAST_RETRY: S3RetryOptions = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, retryBudgetMs: 0 };
/** Keys the SDK encodes in the path: spaces, `+`, `!'()*`, non-ASCII, a folder. */
const OBJECTS: Record<string, Buffer> = {
  'raw/cat/plain.jpg': seededBytes('plain', 5_000),
  'raw/cat/a b+c!\'()*.jpg': seededBytes('odd', 3_000),
  'raw/dog/üñí çødé.jpg': seededBytes('unicode', 70_000),
  'raw/dog/empty.jpg': Buffer.alloc(0),
};
/** Three ranges, the last one short. */
const LARGE_KEY = 'large/blob.bin';
const LARGE = seededBytes('large', 2 * RANGE_BYTES + 12_345);

let fixture: S3Fixture;
let bucket: string;
const clients: S3Client[] = [];

beforeAll(async () => {
  fixture = await startS3Fixture();
  bucket = await createTestBucket(fixture.client, 'signed-get');
  await putTestObjects(fixture.client, bucket, { ...OBJECTS, [LARGE_KEY]: LARGE }, 8);
}, 60_000);

afterEach(() => fixture.reset());

afterAll(async () => {
  for (const client of clients) client.destroy();
  await fixture?.stop();
});

/** An engine client (the CLI's and the handlers') through the fault proxy, path style as the test server needs. */
function engineClient(options: { credentials?: S3Client['config']['credentials']; timeouts?: S3Timeouts } = {}): S3Client {
  const { server, proxy } = fixture;
  const client = engineS3Client({ endpoint: proxy.endpoint, region: server.region, credentials: options.credentials ?? server.credentials, forcePathStyle: true }, options.timeouts);
  clients.push(client);
  return client;
}

function source(client: S3Client, prefix = ''): S3Source {
  return new S3Source({ client, bucket, prefix, retry: FAST_RETRY });
}

/** GETs of objects (not listings) the proxy saw, with their Range header. */
function recordGets(): Array<{ url: string; range: string | undefined }> {
  const gets: Array<{ url: string; range: string | undefined }> = [];
  fixture.proxy.onRequest((request) => {
    if (request.method === 'GET' && !request.url.includes('list-type')) gets.push({ url: request.url, range: request.headers.range as string | undefined });
  });
  return gets;
}

describe('signed GETs of the S3 source', () => {
  test('read every object byte for byte, whatever its key, over the client\'s path-style endpoint', async () => {
    // GIVEN
    const reader = source(engineClient());
    const gets = recordGets();

    // WHEN
    const read = await Promise.all(Object.keys(OBJECTS).map((key) => reader.read(key)));

    // THEN
    expect(read).toEqual(Object.values(OBJECTS));
    expect(gets.map((get) => get.url).sort()).toEqual(Object.keys(OBJECTS)
      .map((key) => `/${bucket}/${key.split('/').map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/')}`).sort());
    expect(gets.every((get) => get.range === undefined)).toBe(true);
  });

  test('read a member larger than a range in ranges, into one buffer', async () => {
    // GIVEN
    const reader = source(engineClient());
    const gets = recordGets();

    // WHEN
    const read = await reader.read(LARGE_KEY, LARGE.length);

    // THEN
    expect(read.equals(LARGE)).toBe(true);
    expect(gets.map((get) => get.range).sort()).toEqual([
      `bytes=0-${RANGE_BYTES - 1}`, `bytes=${RANGE_BYTES}-${2 * RANGE_BYTES - 1}`, `bytes=${2 * RANGE_BYTES}-${3 * RANGE_BYTES - 1}`,
    ].sort());
  });

  test('read a large object whole when its size was not listed', async () => {
    // GIVEN
    const reader = source(engineClient());
    const gets = recordGets();

    // WHEN
    const read = await reader.read(LARGE_KEY);

    // THEN
    expect(read.equals(LARGE)).toBe(true);
    expect(gets).toEqual([{ url: `/${bucket}/${LARGE_KEY}`, range: undefined }]);
  });

  test('a member that is missing (404) or forbidden (403 AccessDenied) is a listed failure, asked once', async () => {
    // GIVEN: one object gone after listing, one the server denies.
    const client = engineClient();
    const listed = [...await listAll(source(client, 'raw/')),
      { key: 'cat/gone.jpg', size: 10, modified: 0 }];
    const reading = source(client, 'raw/');
    const input: PackingSource = { uri: reading.uri, list: async function* () { yield listed; }, read: (key, size) => reading.read(key, size) };
    const gets: string[] = [];
    fixture.proxy.onRequest((request) => {
      if (request.method !== 'GET') return;
      gets.push(request.url);
      if (request.url.endsWith('/plain.jpg')) fixture.proxy.denyNext(1);
    });

    // WHEN
    const { manifest } = await packDataset({ source: input, sink: new S3Sink({ client: fixture.client, bucket, prefix: 'packed-failures/' }), format: 'tfrecord', seed: 1, shardCount: 1, allowMissing: true });

    // THEN
    expect(manifest.failures.map((failure) => failure.key).sort()).toEqual(['cat/gone.jpg', 'cat/plain.jpg']);
    expect(manifest.failures.find((failure) => failure.key === 'cat/plain.jpg')!.reason).toMatch(/AccessDenied/);
    expect(manifest.failures.find((failure) => failure.key === 'cat/gone.jpg')!.reason).toMatch(/NoSuchKey|HTTP 404|NotFound/);
    expect(manifest.records).toBe(Object.keys(OBJECTS).length - 1);
    expect(gets.filter((url) => url.endsWith('/plain.jpg') || url.endsWith('/gone.jpg')).sort())
      .toEqual([`/${bucket}/raw/cat/gone.jpg`, `/${bucket}/raw/cat/plain.jpg`]);
  });

  test('503 SlowDown and resets are retried, then the read succeeds', async () => {
    // GIVEN
    const reader = source(engineClient());
    fixture.proxy.resetNext(1);
    fixture.proxy.slowDownNext(1);

    // WHEN
    const read = await reader.read('raw/cat/plain.jpg');

    // THEN
    expect(read.equals(OBJECTS['raw/cat/plain.jpg'])).toBe(true);
    expect(fixture.proxy.faults).toBeGreaterThanOrEqual(2);
  });

  test('503 SlowDown that outlasts the retries fails the shard and the run: nothing listed, no manifest', async () => {
    // GIVEN
    const client = engineClient();
    const sink = new S3Sink({ client: fixture.client, bucket, prefix: 'packed-throttled/' });
    const listing = source(fixture.client, 'raw/');
    const reading = source(client, 'raw/');
    const input: PackingSource = { uri: listing.uri, list: () => listing.list(), read: (key, size) => reading.read(key, size) };
    fixture.proxy.slowDownNext(1_000);

    // WHEN
    const packing = packDataset({ source: input, sink, format: 'tfrecord', seed: 2, shardCount: 1, readConcurrency: 1 });

    // THEN
    await expect(packing).rejects.toThrow(/SlowDown \(HTTP 503\).*after 3 attempts/);
    expect(await sink.get(MANIFEST_KEY).then(() => true, (error: unknown) => !isObjectNotFound(error))).toBe(false);
  });

  testWhenServerCan('SignatureCheck', () => fixture.server, 'credentials come from the client\'s provider per request: a change shows in the next GET', async () => {
    // GIVEN: expiring credentials, which the SDK asks its provider for again before each use; the test changes them.
    const { accessKeyId, secretAccessKey } = fixture.server.credentials;
    let secret = secretAccessKey;
    let asked = 0;
    const reader = source(engineClient({
      credentials: async () => {
        asked++;
        return { accessKeyId, secretAccessKey: secret, expiration: new Date(Date.now() + 60_000) };
      },
    }));

    // WHEN: right, then wrong, then right again.
    const first = await reader.read('raw/cat/plain.jpg');
    secret = 'not-the-secret';
    const second = reader.read('raw/cat/plain.jpg');
    await expect(second).rejects.toThrow(/HTTP 403/);
    secret = secretAccessKey;
    const third = await reader.read('raw/cat/plain.jpg');

    // THEN
    expect(first.equals(OBJECTS['raw/cat/plain.jpg'])).toBe(true);
    expect(third.equals(OBJECTS['raw/cat/plain.jpg'])).toBe(true);
    expect(asked).toBeGreaterThanOrEqual(3);
  });

  test('a server that never answers: the read times out, naming the operation, the object, the wait and the endpoint', async () => {
    // GIVEN
    fixture.proxy.neverAnswer();
    const reader = source(engineClient({ timeouts: { idleTimeoutMs: 200 } }));

    // WHEN
    const reading = reader.read('raw/cat/plain.jpg');

    // THEN
    await expect(reading).rejects.toThrow(`/raw/cat/plain.jpg: GetObject: no answer within 0.2 s from ${fixture.proxy.endpoint} after`);
  }, 30_000);
});
