import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { engineS3Client } from '../../lambda/io/s3-client';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import { packDataset } from '../../lambda/packing/pack';
import { seededBytes } from './local-files';
import type { S3TestServer } from './s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from './s3-server';
import { testWhenServerCan } from './s3-server-capabilities';

// The test server must stay usable under the load the tests put on it: on one machine, Swift's
// proxy once error-limited its only object server after three packs raced, and answered 503 to
// every object request for a minute (test/support/s3-server/swift_s3_server.py, the proxy's settings).

const FILES = 1200;

let server: S3TestServer;
let client: S3Client;
let bucket: string;

beforeAll(async () => {
  server = await startS3Server();
  client = s3TestClient(server);
  bucket = await createTestBucket(client, 'under-load');
  const objects: Record<string, Buffer> = {};
  for (let i = 0; i < FILES; i++) objects[`raw/${['ant', 'bee', 'cat'][i % 3]}/${String(i).padStart(5, '0')}.jpg`] = seededBytes(`load${i}`, 2000 + (i * 37) % 2000);
  await putTestObjects(client, bucket, objects, 16);
}, 180_000);

afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

/** A conditional create (`If-None-Match: *`): `created`, or the S3 error code it got. */
function createOnce(key: string, body: string): Promise<string> {
  return client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, IfNoneMatch: '*' }))
    .then(() => 'created', (error: { name?: string }) => error.name ?? 'error');
}

testWhenServerCan('ConditionalPut', () => server, 'three packs race for one claim: one publishes, and the server still answers every kind of request at once', async () => {
  // GIVEN three packs of the same source into one prefix, each with its own engine client (as three CLI runs would be)
  const clients = [1, 2, 3].map(() => engineS3Client({ endpoint: server.endpoint, region: server.region, credentials: server.credentials, forcePathStyle: true }));

  // WHEN they race to publish version 1
  const results = await Promise.allSettled(clients.map((engine, i) => packDataset({
    source: new S3Source({ client: engine, bucket, prefix: 'raw/' }),
    sink: new S3Sink({ client: engine, bucket, prefix: 'packed/' }),
    format: 'tfrecord', seed: i + 1, targetShardBytes: 1024 * 1024,
  })));
  clients.forEach((engine) => engine.destroy());

  // THEN one run publishes, the others lose the race (not a 503), and the server answers reads,
  // writes and three racing conditional creates of one key right away
  expect(results.map((result) => result.status === 'fulfilled' ? 'published' : String(result.reason).replace(/:.*/s, '')).sort())
    .toEqual(['ConcurrentPublishError', 'ConcurrentPublishError', 'published']);
  const read = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'raw/ant/00000.jpg' }));
  expect(Buffer.from(await read.Body!.transformToByteArray()).equals(seededBytes('load0', 2000))).toBe(true);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'after/plain', Body: 'x' }));
  expect((await Promise.all([1, 2, 3].map((i) => createOnce('after/claim.json', `run ${i}`)))).sort())
    .toEqual(['PreconditionFailed', 'PreconditionFailed', 'created']);
}, 300_000);
