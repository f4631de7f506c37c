import * as net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Timeouts } from '../../lambda/io/s3-client';
import { engineS3Client, engineS3Timeouts } from '../../lambda/io/s3-client';
import type { S3RetryOptions } from '../../lambda/io/s3-retry';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import type { PackingSink, PackingSource } from '../../lambda/io/storage';
import { isObjectNotFound, listAll } from '../../lambda/io/storage';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { packDataset } from '../../lambda/packing/pack';
import { seededBytes } from '../support/local-files';
import type { S3Fixture} from '../support/s3-fixture';
import { startS3Fixture } from '../support/s3-fixture';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects } from '../support/s3-server';
import { testWhenServerCan } from '../support/s3-server-capabilities';

/** Short backoffs for the reads: their retries run out within the outages the tests make. */
const FAST_RETRY: S3RetryOptions = { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20, retryBudgetMs: 0 };
/** The sink outlasts a restart of the server (about a second), so that only the reads see the outage. */
const PATIENT_RETRY: S3RetryOptions = { maxAttempts: 12, baseDelayMs: 100, maxDelayMs: 2000 };
const FILES = 300;

let fixture: S3Fixture;
let server: S3TestServer;
let bucket: string;
let sinks = 0;

beforeAll(async () => {
  fixture = await startS3Fixture();
  server = fixture.server;
  bucket = await createTestBucket(fixture.client, 'honest-failures');
  const objects: Record<string, Buffer> = {};
  for (let i = 0; i < FILES; i++) objects[`raw/${['cat', 'dog'][i % 2]}/${String(i).padStart(4, '0')}.jpg`] = seededBytes(`f${i}`, 500 + i);
  await putTestObjects(fixture.client, bucket, objects, 16);
}, 60_000);

afterAll(() => fixture?.stop());

afterEach(() => fixture.reset());

/** An engine client (the CLI's and the handlers') for the server, or for another endpoint in front of it. */
function engineClient(endpoint: string, timeouts: S3Timeouts = {}): S3Client {
  return engineS3Client({ endpoint, region: server.region, credentials: server.credentials, forcePathStyle: true }, timeouts);
}

/** Lists through the server directly and reads through `readClient`: the listing is whole, the reads meet the fault. */
function sourceReadingThrough(readClient: S3Client): PackingSource {
  const listing = new S3Source({ client: fixture.client, bucket, prefix: 'raw/', retry: FAST_RETRY });
  const reading = new S3Source({ client: readClient, bucket, prefix: 'raw/', retry: FAST_RETRY });
  return { uri: listing.uri, list: () => listing.list(), read: (key) => reading.read(key) };
}

function freshSink(): PackingSink {
  return new S3Sink({ client: fixture.client, bucket, prefix: `packed-${++sinks}/`, retry: PATIENT_RETRY });
}

async function manifestWritten(sink: PackingSink): Promise<boolean> {
  return sink.get(MANIFEST_KEY).then(() => true, (error: unknown) => {
    if (isObjectNotFound(error)) return false;
    throw error;
  });
}

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('engine S3 timeouts', () => {
  test('are seconds, not minutes, unless a caller sets its own', () => {
    const client = engineS3Client({ region: 'us-east-1' });
    const tuned = engineS3Client({ region: 'us-east-1' }, { idleTimeoutMs: 200 });
    expect(engineS3Timeouts(client)).toEqual({ connectionTimeoutMs: 3_000, idleTimeoutMs: 10_000, requestTimeoutMs: 300_000 });
    expect(engineS3Timeouts(tuned)).toEqual({ connectionTimeoutMs: 3_000, idleTimeoutMs: 200, requestTimeoutMs: 300_000 });
    client.destroy();
    tuned.destroy();
  });
});

describe('a store that cannot be reached fails the run, never the files', () => {
  test('connection refused on every read: the pack rejects naming the endpoint, no file is listed as lost, no manifest', async () => {
    // GIVEN
    const port = await closedPort();
    const refused = engineClient(`http://127.0.0.1:${port}`);
    const sink = freshSink();

    // WHEN
    const packing = packDataset({ source: sourceReadingThrough(refused), sink, format: 'tfrecord', seed: 1, shardCount: 2 });

    // THEN
    await expect(packing).rejects.toThrow(new RegExp(`ECONNREFUSED.*127\\.0\\.0\\.1:${port}`));
    expect(await manifestWritten(sink)).toBe(false);
    refused.destroy();
  });

  test('a server restarted in the middle of the reads: the pack rejects, no file is listed as lost, no manifest', async () => {
    // GIVEN: the 60th read kills the server, which comes back a second later; the sink's retries outlast that.
    const proxied = engineClient(fixture.proxy.endpoint);
    const sink = freshSink();
    let reads = 0;
    let restarted: Promise<void> | undefined;
    fixture.proxy.onRequest(async (request) => {
      if (request.method !== 'GET' || request.url.includes('list-type') || ++reads !== 60) return;
      await server.kill();
      restarted = sleep(1000).then(() => server.restart());
    });

    // WHEN
    const packing = packDataset({ source: sourceReadingThrough(proxied), sink, format: 'recordio', seed: 2, shardCount: 1, readConcurrency: 4 });

    // THEN
    await expect(packing).rejects.toThrow(/ECONNRESET/);
    await restarted;
    expect(reads).toBeGreaterThanOrEqual(60);
    expect(await manifestWritten(sink)).toBe(false);
    proxied.destroy();
  }, 30_000);

  test('a server that accepts connections and never answers: the pack fails naming the read, its key and the wait, no manifest', async () => {
    // GIVEN: the reads go to a server that takes every request and never answers; the client waits 0.2 s at a time.
    fixture.proxy.neverAnswer();
    const silent = engineClient(fixture.proxy.endpoint, { idleTimeoutMs: 200 });
    const sink = freshSink();

    // WHEN
    const packing = packDataset({ source: sourceReadingThrough(silent), sink, format: 'tfrecord', seed: 3, shardCount: 1, readConcurrency: 2 });

    // THEN: the source's object, the operation and the wait, after the retries (FAST_RETRY's 4 attempts).
    await expect(packing).rejects.toThrow(new RegExp(
      `^s3://${bucket}/raw/(cat|dog)/\\d{4}\\.jpg: GetObject: no answer within 0\\.2 s from ${escape(fixture.proxy.endpoint)} after 4 attempts in \\d+\\.\\d s$`));
    expect(fixture.proxy.faults).toBeGreaterThanOrEqual(4);
    expect(await manifestWritten(sink)).toBe(false);
    silent.destroy();
  }, 30_000);

  test('a store that stops answering mid-run: the error names the read that got no answer, not a clean-up after it', async () => {
    // GIVEN: one client for the reads and the dataset, through the proxy; it goes silent at the first read
    const proxied = engineClient(fixture.proxy.endpoint, { idleTimeoutMs: 200 });
    const sink = new S3Sink({ client: proxied, bucket, prefix: `packed-${++sinks}/`, retry: FAST_RETRY });
    const reads = sourceReadingThrough(proxied);
    const source: PackingSource = { uri: reads.uri, list: () => reads.list(), read: (key) => {
      fixture.proxy.neverAnswer();
      return reads.read(key);
    } };

    // WHEN
    const packing = packDataset({ source, sink, format: 'tfrecord', seed: 3, shardCount: 1, readConcurrency: 2 });

    // THEN: the source's read and its wait; the run did not go on to wait out a clean-up and name that instead
    await expect(packing).rejects.toThrow(new RegExp(`^s3://${bucket}/raw/(cat|dog)/\\d{4}\\.jpg: GetObject: no answer within 0\\.2 s`));
    proxied.destroy();
  }, 30_000);

  test('a listing that gets no answer names the SDK operation, the prefix and the wait', async () => {
    // GIVEN
    fixture.proxy.neverAnswer();
    const silent = engineClient(fixture.proxy.endpoint, { idleTimeoutMs: 200 });
    const listing = new S3Source({ client: silent, bucket, prefix: 'raw/', retry: FAST_RETRY });

    // WHEN
    const listed = listAll(listing);

    // THEN
    await expect(listed).rejects.toThrow(`s3://${bucket}/raw/: ListObjectsV2: no answer within 0.2 s from ${fixture.proxy.endpoint} after 4 attempts in `);
    silent.destroy();
  }, 30_000);

  testWhenServerCan('SignatureCheck', () => fixture.server, 'credentials the server refuses (403 SignatureDoesNotMatch) fail the run rather than listing every file', async () => {
    // GIVEN
    const wrongKey = engineS3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true,
      credentials: { accessKeyId: server.credentials.accessKeyId, secretAccessKey: 'not-the-secret' } });
    const sink = freshSink();

    // WHEN
    const packing = packDataset({ source: sourceReadingThrough(wrongKey), sink, format: 'tfrecord', seed: 4, shardCount: 1 });

    // THEN
    await expect(packing).rejects.toThrow(/HTTP 403/);
    expect(await manifestWritten(sink)).toBe(false);
    wrongKey.destroy();
  });

  test('a missing object is still a listed failure, read through an engine client', async () => {
    // GIVEN: a listing that names an object which is not there.
    const source = sourceReadingThrough(engineClient(server.endpoint));
    const files = await listAll(source);
    const sink = freshSink();

    // WHEN
    const { manifest } = await packDataset({
      source: { ...source, list: async function* list() { yield [...files, { key: 'cat/gone.jpg', size: 10, modified: 0 }]; } },
      sink, format: 'tfrecord', seed: 5, shardCount: 1, allowMissing: true,
    });

    // THEN
    expect(manifest.failures).toEqual([{ key: 'cat/gone.jpg', reason: expect.stringContaining('no such object') }]);
    expect(manifest.records).toBe(FILES);
  });
});
