import type { S3Client} from '@aws-sdk/client-s3';
import {
  GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand
} from '@aws-sdk/client-s3';
import { crc32c } from '@node-rs/crc32';
import { engineS3Client } from '../../lambda/io/s3-client';
import type { S3RetryOptions } from '../../lambda/io/s3-retry';
import { S3_RETRY_RULE } from '../../lib/contract/s3-retry-rule';
import type { S3SinkOptions } from '../../lambda/io/s3-sink';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import { crc32cBase64 } from '../../lambda/io/s3-checksum';
import { packDataset } from '../../lambda/packing/pack';
import { verifyDataset } from '../../lambda/packing/verify';
import { listAll } from '../../lambda/io/storage';
import type { FaultProxy } from '../support/fault-proxy';
import { seededBytes } from '../support/local-files';
import type { S3Fixture} from '../support/s3-fixture';
import { startS3Fixture } from '../support/s3-fixture';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient } from '../support/s3-server';
import { testWhenServerCan, whenServerCan } from '../support/s3-server-capabilities';

const MIB = 1024 * 1024;
const CLASSES = ['cat', 'dog', 'eel'];
const SOURCE_OBJECTS = 1050;
/** Short backoffs and no time budget: the tests inject many faults and must stay fast (the budget has tests of its own below). */
const FAST_RETRY: S3RetryOptions = { maxAttempts: 6, baseDelayMs: 5, maxDelayMs: 50, retryBudgetMs: 0 };

/** One SDK call as the client was asked to make it. */
interface CapturedCall {
  readonly command: string;
  readonly input: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/** Records every call the client makes (after serialization, so the HTTP headers too); `refuse` stops them there. */
function captureCalls(client: S3Client, refuse = false): CapturedCall[] {
  const calls: CapturedCall[] = [];
  client.middlewareStack.add((next, context) => async (args) => {
    const request = (args as { request?: { headers?: Record<string, string> } }).request;
    calls.push({ command: context.commandName ?? '', input: { ...(args.input as Record<string, unknown>) }, headers: { ...request?.headers } });
    if (refuse) throw Object.assign(new Error('refused by the test'), { name: 'RefusedByTest' });
    return next(args);
  }, { step: 'build', name: 'captureCallsForTest' });
  return calls;
}

let fixture: S3Fixture;
let server: S3TestServer;
let client: S3Client;
let proxy: FaultProxy;
let proxied: S3Client;
let bucket: string;
const sourceObjects: Record<string, Buffer> = {};

beforeAll(async () => {
  fixture = await startS3Fixture();
  ({ server, client, proxy, proxied } = fixture);
  bucket = await createTestBucket(client, 's3-storage');
  for (let i = 0; i < SOURCE_OBJECTS; i++) {
    const cls = CLASSES[i % CLASSES.length];
    const key = `raw/${cls}/${String(i).padStart(5, '0')}.jpg`;
    sourceObjects[key] = seededBytes(key, 200 + (i * 37) % 1800);
  }
  await putTestObjects(client, bucket, {
    ...sourceObjects,
    // A "folder" marker, as the S3 console creates, and an object outside the prefix.
    'raw/cat/': Buffer.alloc(0),
    'elsewhere/x.jpg': Buffer.from('not in the source'),
  }, 32);
}, 60_000);

afterAll(() => fixture?.stop());

afterEach(() => fixture.reset());

function source(s3: S3Client = client, retry: S3RetryOptions = FAST_RETRY): S3Source {
  return new S3Source({ client: s3, bucket, prefix: 'raw', retry, listPageSize: 100 });
}

function sink(prefix: string, options: Partial<S3SinkOptions> = {}): S3Sink {
  return new S3Sink({ client, bucket, prefix, retry: FAST_RETRY, ...options });
}

async function objectExists(key: string): Promise<boolean> {
  return client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(() => true, () => false);
}

/** No multipart upload is left incomplete under `prefix` (a check skipped where the server cannot list them). */
async function expectNoIncompleteUploads(prefix: string): Promise<void> {
  await whenServerCan(server.kind, 'ListMultipartUploads', async () => {
    const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    expect((listed.Uploads ?? []).map((upload) => upload.Key ?? '')).toEqual([]);
  });
}

async function getBytes(key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

describe('engineS3Client', () => {
  test('makes one attempt per call and leaves checksums to the engine, whatever else it is given', async () => {
    const engine = engineS3Client({ region: 'us-west-2', maxAttempts: 5, requestChecksumCalculation: 'WHEN_SUPPORTED' });
    try {
      expect(await engine.config.maxAttempts()).toBe(1);
      expect(await engine.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED');
      expect(await engine.config.responseChecksumValidation()).toBe('WHEN_REQUIRED');
      expect(await engine.config.region()).toBe('us-west-2');
    } finally {
      engine.destroy();
    }
  });
});

describe('S3Source', () => {
  test('lists every object under the prefix across pages, relative keys, without folder markers', async () => {
    // GIVEN
    const recorded = s3TestClient(server);
    const calls = captureCalls(recorded);
    const listing = new S3Source({ client: recorded, bucket, prefix: 'raw/', listPageSize: 100 });

    // WHEN
    const files = await listAll(listing);

    // THEN
    expect(files.map((f) => f.key).sort()).toEqual(Object.keys(sourceObjects).map((k) => k.slice('raw/'.length)).sort());
    const first = files.find((f) => f.key === 'cat/00000.jpg')!;
    expect(first.size).toBe(sourceObjects['raw/cat/00000.jpg'].length);
    expect(first.modified).toBeGreaterThan(Date.UTC(2020, 0, 1));
    expect(calls.filter((c) => c.command === 'ListObjectsV2Command').length).toBeGreaterThanOrEqual(11);
    expect(listing.uri).toBe(`s3://${bucket}/raw/`);
  });

  test('reads objects byte for byte', async () => {
    const reader = source();
    for (const key of ['cat/00000.jpg', 'dog/00001.jpg', 'eel/01049.jpg']) {
      expect((await reader.read(key)).equals(sourceObjects[`raw/${key}`])).toBe(true);
    }
  });

  test('retries 503 SlowDown bursts and connection resets, then succeeds', async () => {
    // GIVEN
    const reader = source(proxied);
    const faultsBefore = proxy.faults;
    proxy.slowDownNext(3);
    proxy.resetNext(2);

    // WHEN
    const data = await reader.read('dog/00004.jpg');
    const files = await (proxy.slowDownNext(2), listAll(reader));

    // THEN
    expect(data.equals(sourceObjects['raw/dog/00004.jpg'])).toBe(true);
    expect(files).toHaveLength(SOURCE_OBJECTS);
    expect(proxy.faults - faultsBefore).toBe(7);
  });

  test('gives up after the last attempt with an error naming the s3:// key, the attempts and how long they took', async () => {
    // No time budget here: the attempts alone bound the retries (the budget has tests of its own below).
    const reader = source(proxied, { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, retryBudgetMs: 0 });
    proxy.slowDownNext(10);
    await expect(reader.read('cat/00003.jpg')).rejects.toThrow(
      new RegExp(`^s3://${bucket}/raw/cat/00003\\.jpg: SlowDown \\(HTTP 503\\).*after 3 attempts in \\d+\\.\\d s$`));
  });

  describe('a retryable failure is retried for 60 s (the rule in S3_RETRY_RULE), on a clock whose waits take no time', () => {
    /** The default rule, its waits counted on `clock.ms` instead of slept; jitter at its top, so the waits are known. */
    function patientReader() {
      const clock = { ms: 0, now: () => clock.ms, sleep: async (ms: number) => { clock.ms += ms; } };
      const waits: number[] = [];
      const reader = source(proxied, { clock, random: () => 0.999_999, onRetry: (retry) => waits.push(retry.delayMs) });
      return { reader, clock, waits };
    }

    test.each([
      ['a SlowDown burst', (count: number) => proxy.slowDownNext(count)],
      ['a run of connection resets', (count: number) => proxy.resetNext(count)],
    ])('%s past the 6 attempts but within 60 s is waited out, and the read succeeds', async (_, fault) => {
      // GIVEN
      const { reader, clock, waits } = patientReader();
      const faultsBefore = proxy.faults;
      fault(12);

      // WHEN
      const data = await reader.read('dog/00004.jpg');

      // THEN: 13 attempts, the waits doubling from 100 ms up to the 5 s ceiling
      expect(data.equals(sourceObjects['raw/dog/00004.jpg'])).toBe(true);
      expect(proxy.faults - faultsBefore).toBe(12);
      expect(waits).toEqual([99, 199, 399, 799, 1599, 3199, 4999, 4999, 4999, 4999, 4999, 4999]);
      expect(clock.ms).toBeLessThan(S3_RETRY_RULE.budgetMs);
    });

    test('a reset that outlasts 60 s fails with an error saying how many attempts and how long it tried', async () => {
      // GIVEN
      const { reader, clock, waits } = patientReader();
      proxy.resetNext(1_000);

      // WHEN
      const failure = await reader.read('cat/00003.jpg').then(() => undefined, (error: unknown) => error);

      // THEN: the last attempt began 60 s or more after the first (the waits: 99, 199, … 4,999 ms)
      expect(failure).toMatchObject({ name: 'S3StorageError', code: 'ECONNRESET', attempts: 18 });
      expect(waits).toHaveLength(17);
      expect(String((failure as Error).message)).toMatch(new RegExp(`^s3://${bucket}/raw/cat/00003\\.jpg: ECONNRESET.*after 18 attempts in 61\\.3 s$`));
      expect(clock.ms).toBeGreaterThanOrEqual(S3_RETRY_RULE.budgetMs);
      expect(clock.ms - waits[waits.length - 1]).toBeLessThan(S3_RETRY_RULE.budgetMs);
    });

    test('with retryBudgetMs 0, a reset gets the 6 attempts only', async () => {
      // GIVEN
      const clock = { ms: 0, now: () => clock.ms, sleep: async (ms: number) => { clock.ms += ms; } };
      const reader = source(proxied, { clock, retryBudgetMs: 0 });
      proxy.resetNext(10);

      // WHEN
      const read = reader.read('cat/00003.jpg');

      // THEN
      await expect(read).rejects.toMatchObject({ code: 'ECONNRESET', attempts: S3_RETRY_RULE.attempts });
    });
  });

  test('does not retry a missing object, and names it', async () => {
    // GIVEN
    const reader = source(proxied);
    const before = proxy.requests;

    // WHEN
    const read = reader.read('cat/missing.jpg');

    // THEN
    await expect(read).rejects.toThrow(`s3://${bucket}/raw/cat/missing.jpg: no such object (NoSuchKey)`);
    await expect(read).rejects.toMatchObject({ code: 'NoSuchKey', attempts: 1 });
    expect(proxy.requests - before).toBe(1);
  });
});

describe('S3Sink', () => {
  test('stat gives the size and CRC-32C of an object as stored, whole or multipart, and ObjectNotFoundError for none (issue 38: the finalizer\'s check)', async () => {
    // GIVEN: a multipart object and a small one
    const out = sink('stat/');
    const big = seededBytes('stat-big', 17 * MIB + 3);
    const writer = await out.create('shards/big.tfrecord');
    await writer.write([big]);
    await writer.complete();
    await out.put('index/small.idx', Buffer.from('0 10\n'));

    // WHEN
    const stats = await Promise.all([out.stat('shards/big.tfrecord'), out.stat('index/small.idx')]);

    // THEN
    expect(stats).toEqual([
      { bytes: big.length, crc32c: crc32cBase64(crc32c(big)) },
      { bytes: 5, crc32c: crc32cBase64(crc32c(Buffer.from('0 10\n'))) },
    ]);
    await expect(out.stat('shards/none.tfrecord')).rejects.toMatchObject({ name: 'ObjectNotFoundError' });
  });

  test('streams a multipart upload in 8 MiB parts, visible only when complete, with our CRC32C', async () => {
    // GIVEN
    const recorded = s3TestClient(server);
    const calls = captureCalls(recorded);
    const out = new S3Sink({ client: recorded, bucket, prefix: 'mpu/', retry: FAST_RETRY });
    const data = seededBytes('multipart', 20 * MIB + 12345);

    // WHEN
    const writer = await out.create('shards/big.tfrecord');
    for (let offset = 0; offset < data.length; offset += MIB) await writer.write([data.subarray(offset, offset + MIB)]);
    const visibleBefore = await objectExists('mpu/shards/big.tfrecord');
    await writer.complete();

    // THEN
    expect(visibleBefore).toBe(false);
    const back = await out.get('shards/big.tfrecord');
    expect(back.equals(data)).toBe(true);
    const parts = calls.filter((c) => c.command === 'UploadPartCommand');
    expect(parts.map((c) => (c.input.Body as Buffer).length)).toEqual([8 * MIB, 8 * MIB, 4 * MIB + 12345]);
    const completed = calls.find((c) => c.command === 'CompleteMultipartUploadCommand')!;
    expect(completed.input).toMatchObject({ ChecksumType: 'FULL_OBJECT', ChecksumCRC32C: crc32cBase64(crc32c(back)) });
    expect(calls.find((c) => c.command === 'CreateMultipartUploadCommand')!.input).toMatchObject({ ChecksumAlgorithm: 'CRC32C' });
    await expectNoIncompleteUploads('mpu/');
  });

  test('writes an object smaller than a part with one PutObject at complete()', async () => {
    // GIVEN
    const recorded = s3TestClient(server);
    const calls = captureCalls(recorded);
    const out = new S3Sink({ client: recorded, bucket, prefix: 'small/', retry: FAST_RETRY });
    const data = seededBytes('small', 100_000);

    // WHEN
    const writer = await out.create('shards/small.rec');
    await writer.write([data.subarray(0, 60_000), data.subarray(60_000)]);
    const visibleBefore = await objectExists('small/shards/small.rec');
    await writer.complete();

    // THEN
    expect(visibleBefore).toBe(false);
    expect((await getBytes('small/shards/small.rec')).equals(data)).toBe(true);
    expect(calls.map((c) => c.command)).toEqual(['PutObjectCommand']);
    expect(calls[0].headers).toMatchObject({ 'x-amz-checksum-crc32c': crc32cBase64(crc32c(data)) });
  });

  test('copies what it is given: a caller that reuses its buffer after each write still gets its bytes stored', async () => {
    // GIVEN one 3 MiB buffer refilled for every write, as the shard writer reuses its blocks
    const out = sink('reused/');
    const data = seededBytes('reused', 19 * MIB + 777);
    const reused = Buffer.alloc(3 * MIB);

    // WHEN
    const writer = await out.create('shards/reused.rec');
    for (let offset = 0; offset < data.length; offset += reused.length) {
      const filled = data.copy(reused, 0, offset, offset + reused.length);
      await writer.write([reused.subarray(0, filled)]);
    }
    reused.fill(0);
    await writer.complete();

    // THEN
    expect((await out.get('shards/reused.rec')).equals(data)).toBe(true);
  });

  testWhenServerCan('AbortMultipartUpload', () => fixture.server, 'abort leaves no object and no incomplete upload', async () => {
    // GIVEN
    const out = sink('aborted/');
    const writer = await out.create('shards/a.tfrecord');
    await writer.write([seededBytes('aborted', 10 * MIB)]);

    // WHEN
    await writer.abort();

    // THEN
    expect(await objectExists('aborted/shards/a.tfrecord')).toBe(false);
    await expectNoIncompleteUploads('aborted/');
    await expect(writer.write([Buffer.from('more')])).rejects.toThrow(/already completed or aborted/);
  });

  test('put, get, list across pages and delete', async () => {
    // GIVEN
    const out = sink('small-objects/', { listPageSize: 2 });

    // WHEN
    await out.put('index/a.idx', Buffer.from('0 10\n'));
    await out.put('index/b.idx', Buffer.from('10 20\n'));
    await out.put('index/c.idx', Buffer.from('30 5\n'));
    await out.put('manifest.json', Buffer.from('{}'));
    await out.delete('index/b.idx');
    await out.delete('index/never-written.idx');

    // THEN
    expect((await out.get('index/c.idx')).toString()).toBe('30 5\n');
    expect((await out.list('index/')).sort()).toEqual(['index/a.idx', 'index/c.idx']);
    await expect(out.get('index/b.idx')).rejects.toThrow(`s3://${bucket}/small-objects/index/b.idx: no such object`);
  });

  test('a server killed mid-upload fails the write; after a restart an abort and a rerun give the same bytes', async () => {
    // GIVEN
    const data = seededBytes('killed', 18 * MIB);
    const out = sink('killed/', { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } });
    const writer = await out.create('shards/k.tfrecord');
    await writer.write([data.subarray(0, 9 * MIB)]);

    // WHEN
    await server.kill();
    const failed = writer.write([data.subarray(9 * MIB)]).then(() => writer.complete());

    // THEN
    try {
      await expect(failed).rejects.toThrow(new RegExp(`^s3://${bucket}/killed/shards/k\\.tfrecord.*(ECONNREFUSED|ECONNRESET)`));
    } finally {
      await server.restart();
    }
    await whenServerCan(server.kind, 'AbortMultipartUpload', () => writer.abort());
    await expectNoIncompleteUploads('killed/');
    expect(await objectExists('killed/shards/k.tfrecord')).toBe(false);

    const rerun = await out.create('shards/k.tfrecord');
    await rerun.write([data.subarray(0, 9 * MIB)]);
    await rerun.write([data.subarray(9 * MIB)]);
    await rerun.complete();
    expect((await out.get('shards/k.tfrecord')).equals(data)).toBe(true);
  });

  test('uploads parts through SlowDown bursts and resets', async () => {
    // GIVEN
    const out = new S3Sink({ client: proxied, bucket, prefix: 'flaky/', retry: FAST_RETRY, partConcurrency: 2 });
    const data = seededBytes('flaky', 17 * MIB);
    const faultsBefore = proxy.faults;
    const attempts = new Map<string, number>();
    proxy.onRequest((request) => {
      // The first attempt of each odd part meets a SlowDown, its second a reset; the third goes through.
      const part = /partNumber=(\d+)/.exec(request.url)?.[1];
      if (request.method !== 'PUT' || !part || Number(part) % 2 === 0) return;
      const attempt = (attempts.get(part) ?? 0) + 1;
      attempts.set(part, attempt);
      if (attempt === 1) proxy.slowDownNext(1);
      if (attempt === 2) proxy.resetNext(1);
    });

    // WHEN
    const writer = await out.create('shards/f.rec');
    await writer.write([data]);
    await writer.complete();

    // THEN
    expect(Object.fromEntries(attempts)).toEqual({ 1: 3, 3: 3 });
    expect(proxy.faults - faultsBefore).toBe(4);
    expect((await getBytes('flaky/shards/f.rec')).equals(data)).toBe(true);
  });

  test('sends SSE-KMS parameters on CreateMultipartUpload and PutObject when given a key', async () => {
    // GIVEN: a client that records each call and sends none (the test server has no SSE).
    const refusing = s3TestClient(server);
    const calls = captureCalls(refusing, true);
    const out = new S3Sink({ client: refusing, bucket, prefix: 'kms/', kmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/test', retry: FAST_RETRY });
    const expected = { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'arn:aws:kms:us-east-1:111122223333:key/test' };

    // WHEN
    await expect(out.put('manifest.json', Buffer.from('{}'))).rejects.toThrow(/refused by the test/);
    const writer = await out.create('shards/s.tfrecord');
    await writer.write([Buffer.alloc(8 * MIB)]);
    await expect(writer.complete()).rejects.toThrow(/refused by the test/);

    // THEN
    expect(calls.map((c) => c.command)).toEqual(['PutObjectCommand', 'CreateMultipartUploadCommand']);
    for (const call of calls) expect(call.headers).toMatchObject(expected);
    refusing.destroy();
  });

  test('rejects part sizes S3 would refuse', () => {
    expect(() => sink('x/', { partSize: 4 * MIB })).toThrow(/partSize must be between 5 MiB and 5 GiB/);
    expect(() => sink('x/', { partConcurrency: 0 })).toThrow(/partConcurrency must be a positive integer/);
  });
});

describe('packDataset from S3 to S3', () => {
  test('packs every object of the class prefixes into shards that verifyDataset accepts', async () => {
    // GIVEN
    const out = sink('packed/');

    // WHEN
    const { manifest } = await packDataset({ source: source(), sink: out, format: 'tfrecord', seed: 11, shardCount: 4, labels: 'folder' });
    const report = await verifyDataset(out);

    // THEN
    expect(report.problems).toEqual([]);
    expect(manifest.records).toBe(SOURCE_OBJECTS);
    expect(manifest.failures).toEqual([]);
    expect(Object.keys(manifest.labels)).toEqual(CLASSES);
    expect(manifest.source.uri).toBe(`s3://${bucket}/raw/`);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'packed/' }));
    const version = `packed/versions/${manifest.datasetVersion}/`;
    const parts = [0, 1, 2, 3].map((i) => `part-0000${i}-of-00004`);
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual([
      'packed/index.manifest', 'packed/manifest.json', 'packed/published/00000001.json', 'packed/shards.manifest',
      `${version}index.manifest`, ...parts.map((part) => `${version}index/${part}.idx`), `${version}manifest.json`,
      ...parts.map((part) => `${version}members/${part}.jsonl`), `${version}shards.manifest`,
      ...parts.map((part) => `${version}shards/${part}.tfrecord`),
    ]);
    // The ManifestFile channels SageMaker reads: the dataset root as prefix, then the version's keys in shard order.
    expect(JSON.parse((await out.get('shards.manifest')).toString('utf8'))).toEqual([
      { prefix: `s3://${bucket}/packed/` }, ...manifest.shards.map((shard) => shard.key)]);
    expect(JSON.parse((await out.get('index.manifest')).toString('utf8'))).toEqual([
      { prefix: `s3://${bucket}/packed/` }, `versions/${manifest.datasetVersion}/manifest.json`, ...manifest.shards.map((shard) => shard.indexKey)]);
  });

  testWhenServerCan('ConditionalPut', () => fixture.server, 'two packs into one prefix at once: exactly one publishes (If-None-Match on the claim), the other fails, the dataset verifies', async () => {
    // GIVEN
    const out = sink('racing/');

    // WHEN both plan from the same (empty) dataset and race to publish version 1
    const results = await Promise.allSettled([11, 12].map((seed) => packDataset({ source: source(), sink: out, format: 'tfrecord', seed, shardCount: 2 })));

    // THEN
    const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect(String(failed[0].reason)).toMatch(/ConcurrentPublishError: s3:\/\/.*\/racing\/: another run published version v00000001-/);
    expect(await out.list('published/')).toEqual(['published/00000001.json']);
    expect((await verifyDataset(out)).problems).toEqual([]);
    const winner = JSON.parse((await out.get('manifest.json')).toString('utf8')) as { datasetVersion: string };
    expect(new Set((await out.list('versions/')).map((key) => key.split('/')[1]))).toEqual(new Set([winner.datasetVersion]));
  });

  test('lists a vanished object as a failure, not a lost record', async () => {
    // GIVEN: an object listed by the source that is gone when the packer reads it.
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'vanishing/cat/a.jpg', Body: Buffer.from('a') }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'vanishing/cat/b.jpg', Body: Buffer.from('b') }));
    const listing = new S3Source({ client, bucket, prefix: 'vanishing/', retry: FAST_RETRY });
    const files = await listAll(listing);
    await sink('vanishing/').delete('cat/b.jpg');

    // WHEN
    const { manifest } = await packDataset({ source: { uri: listing.uri, list: async function* list() { yield files; }, read: (k) => listing.read(k) },
      sink: sink('vanishing-packed/'), format: 'recordio', seed: 1, shardCount: 1, allowMissing: true });

    // THEN
    expect(manifest.records).toBe(1);
    expect(manifest.failures).toEqual([{ key: 'cat/b.jpg', reason: expect.stringContaining(`s3://${bucket}/vanishing/cat/b.jpg: no such object`) }]);
  });
});
