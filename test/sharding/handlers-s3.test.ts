import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { S3Client} from '@aws-sdk/client-s3';
import {
  DeleteObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand
} from '@aws-sdk/client-s3';
import { readTfRecords } from '../../lambda/packing/formats/tfrecord';
import type { S3RetryOptions } from '../../lambda/io/s3-retry';
import { S3Sink } from '../../lambda/io/s3-sink';
import { S3Source } from '../../lambda/io/s3-source';
import type { Manifest} from '../../lambda/packing/manifest';
import { claimSequence, MANIFEST_KEY, PLAN_ROOT, versionOfKey, VersionLayout, versionSequence } from '../../lambda/packing/dataset-layout';
import { datasetObjects, expectSameObjects } from '../support/dataset-objects';
import { verifyDataset } from '../../lambda/packing/verify';
import { finalizeShards } from '../../lambda/shard-finalizer/finalize-shards';
import { MissingFilesError } from '../../lambda/packing/finalize';
import type { ShardPackerEvent, ShardPackerResult } from '../../lambda/shard-packer/contract';
import { packShard } from '../../lambda/shard-packer/pack-shard';
import type { ShardPlannerEvent, ShardPlannerResult } from '../../lambda/shard-planner/contract';
import type { PlanSettings } from '../../lambda/handler-kit/dataset-settings';
import { planDataset } from '../../lambda/shard-planner/plan-dataset';
import type { ShardTask} from '../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../lambda/handler-kit/plan-layout';
import type { FaultProxy, ProxiedRequest } from '../support/fault-proxy';
import { seededBytes } from '../support/local-files';
import type { S3Fixture} from '../support/s3-fixture';
import { startS3Fixture } from '../support/s3-fixture';
import { currentInventoryLines, writeInventoryReport } from '../support/s3-inventory-report';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects } from '../support/s3-server';
import { whenServerCan } from '../support/s3-server-capabilities';

const MIB = 1024 * 1024;
const CLASSES = ['cat', 'dog', 'eel'];
const SOURCE_OBJECTS = 240;
const SOURCE_PREFIX = 'raw/';
/** Small enough that every shard (about 6 MiB each) is a multipart upload of two parts. */
const PART_SIZE = 5 * MIB;
const SETTINGS: PlanSettings = { format: 'tfrecord', seed: 7, labels: 'folder', shardCount: 2, consumers: 1 };
/** Short backoffs: the tests inject many faults and must stay fast. */
const FAST_RETRY: S3RetryOptions = { maxAttempts: 6, baseDelayMs: 5, maxDelayMs: 50, retryBudgetMs: 0 };

let fixture: S3Fixture;
let server: S3TestServer;
let client: S3Client;
let proxy: FaultProxy;
let proxied: S3Client;
let sourceBucket: string;
let datasetBucket: string;

beforeAll(async () => {
  fixture = await startS3Fixture();
  ({ server, client, proxy, proxied } = fixture);
  sourceBucket = await createTestBucket(client, 'shard-source');
  datasetBucket = await createTestBucket(client, 'shard-dataset');
  const objects: Record<string, Buffer> = {};
  for (let i = 0; i < SOURCE_OBJECTS; i++) {
    const key = `${SOURCE_PREFIX}${CLASSES[i % CLASSES.length]}/${String(i).padStart(4, '0')}.jpg`;
    objects[key] = seededBytes(key, 30_000 + (i * 7919) % 40_000);
  }
  await putTestObjects(client, sourceBucket, objects, 32);
}, 90_000);

afterAll(() => fixture?.stop());

afterEach(() => fixture.reset());

function source(s3: S3Client = client, prefix = SOURCE_PREFIX, retry: S3RetryOptions = FAST_RETRY): S3Source {
  return new S3Source({ client: s3, bucket: sourceBucket, prefix, retry, listPageSize: 100 });
}

function dataset(prefix: string, s3: S3Client = client, retry: S3RetryOptions = FAST_RETRY): S3Sink {
  return new S3Sink({ client: s3, bucket: datasetBucket, prefix, retry, partSize: PART_SIZE });
}

function plan(prefix: string, options: { s3?: S3Client; sourcePrefix?: string; force?: boolean } = {}): Promise<ShardPlannerResult> {
  return planDataset({
    source: source(options.s3, options.sourcePrefix),
    sink: dataset(prefix, options.s3),
    destination: { bucket: datasetBucket, prefix },
    settings: SETTINGS,
    force: options.force,
  });
}

/** The task list of the run in progress under `prefix` (the newest version being made). */
async function tasksOf(prefix: string): Promise<ShardTask[]> {
  const tasksKeys = (await dataset(prefix).list(PLAN_ROOT)).filter((key) => key.endsWith('/tasks.json'));
  const newest = tasksKeys.sort((a, b) => versionSequence(a.split('/')[1])! - versionSequence(b.split('/')[1])!).pop()!;
  return JSON.parse((await dataset(prefix).get(newest)).toString('utf8')) as ShardTask[];
}

/** Where a packer writes its shard's result: in its run's folder. */
function resultKey(task: ShardTask): string {
  return new RunFiles(new VersionLayout(versionOfKey(task.membersKey)!)).resultKey(task.shardName);
}

/** `versions/<id>/members/x` → `members/x`: tasks of two runs compare by their place in a version. */
function inVersionFolder(task: ShardTask): ShardTask {
  return { ...task, membersKey: task.membersKey.split('/').slice(2).join('/') };
}

/** One packer invocation, as the Lambda handler makes it (the handler only adds logs and metrics). */
function pack(prefix: string, task: ShardPackerEvent, options: { s3?: S3Client; sourcePrefix?: string; retry?: S3RetryOptions } = {}): Promise<ShardPackerResult> {
  return packShard(task, {
    source: source(options.s3, options.sourcePrefix, options.retry),
    sink: dataset(prefix, options.s3, options.retry),
    format: SETTINGS.format,
    readConcurrency: 16,
  });
}

function finalize(prefix: string, planned: ShardPlannerResult, allowMissing = false) {
  return finalizeShards({ datasetVersion: planned.datasetVersion, shardCount: planned.shardCount, fingerprint: planned.source.fingerprint }, dataset(prefix), 7, allowMissing);
}

/** Plan, pack every shard, finalize: the state machine's run without faults. */
async function runClean(prefix: string, options: { sourcePrefix?: string } = {}) {
  const planned = await plan(prefix, options);
  for (const task of await tasksOf(prefix)) await pack(prefix, task, options);
  return { planned, finalized: await finalize(prefix, planned) };
}

/** Every shard and index object of a dataset, key (relative to the dataset) → bytes. */
function shardObjects(prefix: string): Promise<Map<string, Buffer>> {
  return datasetObjects(dataset(prefix));
}

async function manifestOf(prefix: string): Promise<Manifest> {
  return JSON.parse((await dataset(prefix).get(MANIFEST_KEY)).toString('utf8')) as Manifest;
}

/** No multipart upload is left incomplete under `prefix` (a check skipped where the server cannot list them). */
async function expectNoIncompleteUploads(prefix: string): Promise<void> {
  await whenServerCan(server.kind, 'ListMultipartUploads', async () => {
    const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: datasetBucket, Prefix: prefix }));
    expect((listed.Uploads ?? []).map((upload) => upload.Key ?? '')).toEqual([]);
  });
}

async function objectExists(key: string): Promise<boolean> {
  return client.send(new HeadObjectCommand({ Bucket: datasetBucket, Key: key })).then(() => true, () => false);
}

/** A digest of every record's payload across the dataset's shards: distinct sources give distinct payloads. */
async function recordDigests(prefix: string): Promise<string[]> {
  const digests: string[] = [];
  for (const shard of (await manifestOf(prefix)).shards) {
    for (const record of readTfRecords(await dataset(prefix).get(shard.key))) {
      digests.push(createHash('sha256').update(record.payload).digest('hex'));
    }
  }
  return digests;
}

/** The fault-free run every other run must reproduce byte for byte: made once, on first use. */
let cleanRun: Promise<{ finalized: Awaited<ReturnType<typeof finalize>>; objects: Map<string, Buffer> }> | undefined;
function clean() {
  cleanRun ??= runClean('clean/').then(async ({ finalized }) => ({ finalized, objects: await shardObjects('clean/') }));
  return cleanRun;
}

describe('shard handlers: plan → pack → finalize against a local S3 server', () => {
  test('a clean run packs every object into multipart shards whose manifest totals match, and verifies', async () => {
    // WHEN
    const { finalized, objects } = await clean();

    // THEN
    expect(finalized).toMatchObject({ manifestKey: MANIFEST_KEY, shards: 2, records: SOURCE_OBJECTS, failures: 0 });
    const manifest = await manifestOf('clean/');
    expect(manifest.source).toMatchObject({ uri: `s3://${sourceBucket}/${SOURCE_PREFIX}`, objects: SOURCE_OBJECTS });
    expect(manifest.shards.every((shard) => shard.bytes > PART_SIZE)).toBe(true);
    expect([...objects.keys()]).toEqual([
      'index/part-00000-of-00002.idx', 'index/part-00001-of-00002.idx',
      'shards/part-00000-of-00002.tfrecord', 'shards/part-00001-of-00002.tfrecord',
    ]);
    const report = await verifyDataset(dataset('clean/'));
    expect(report.problems).toEqual([]);
    expect(report.recordsChecked).toBe(SOURCE_OBJECTS);
    expect(new Set(await recordDigests('clean/')).size).toBe(SOURCE_OBJECTS);
    await expectNoIncompleteUploads('clean/');
  });

  test('a packer invoked twice at once for the same shard: each writes keys of its own, both return the first result; a third after publishing removes what it wrote and fails', async () => {
    // GIVEN: the Map times out on shard 0 and starts it again while the first invocation still runs.
    const { objects: expected } = await clean();
    const planned = await plan('twice/');
    const [first, second] = await tasksOf('twice/');

    // WHEN
    const [a, b] = await Promise.all([pack('twice/', first), pack('twice/', first), pack('twice/', second)]);
    const finalized = await finalize('twice/', planned);
    const afterFinalize = await shardObjects('twice/');
    // A late third invocation, after the finalizer published the version.
    const late = await pack('twice/', first).then(() => undefined, (error: unknown) => error);

    // THEN
    // Both return the result created first (only if absent: a server without conditional PUTs lets the second replace it).
    await whenServerCan(server.kind, 'ConditionalPut', async () => expect(b).toEqual(a));
    expect(a.shard.key).toMatch(new RegExp(`/shards/${first.shardName}\\.[0-9a-f]{8}\\.tfrecord$`));
    expect(late).toMatchObject({ name: 'LateAttemptError', message: expect.stringContaining(`shard ${first.shardName}: ${planned.datasetVersion} was published`) });
    expect(await dataset('twice/').list('_plan/')).toEqual([]);
    expect(finalized).toMatchObject({ shards: 2, records: SOURCE_OBJECTS, failures: 0 });
    expectSameObjects(afterFinalize, expected);
    expectSameObjects(await shardObjects('twice/'), expected);
    // Only the adopted attempt's objects are in the version's folder: the loser's and the late one's were removed.
    const manifest = await manifestOf('twice/');
    const version = new VersionLayout(manifest.datasetVersion);
    expect([...await dataset('twice/').list(`${version.prefix}shards/`), ...await dataset('twice/').list(`${version.prefix}index/`)].sort())
      .toEqual(manifest.shards.flatMap((shard) => [shard.key, shard.indexKey]).sort());
    expect((await verifyDataset(dataset('twice/'))).problems).toEqual([]);
    const ids = await recordDigests('twice/');
    expect(ids).toHaveLength(SOURCE_OBJECTS);
    expect(new Set(ids).size).toBe(SOURCE_OBJECTS);
    await expectNoIncompleteUploads('twice/');
    expect(await finalize('twice/', planned)).toEqual(finalized);
  });

  test('SlowDown bursts and connection resets on GETs and part uploads leave the shards byte-identical', async () => {
    // GIVEN
    const { objects: expected } = await clean();
    const planned = await plan('faults/');
    const faultsBefore = proxy.faults;
    let sourceGets = 0;
    const partAttempts = new Map<string, number>();
    proxy.onRequest((request: ProxiedRequest) => {
      // Each fault is queued by the request it hits: none is left for a request the test did not choose.
      if (request.method === 'GET' && request.url.startsWith(`/${sourceBucket}/${SOURCE_PREFIX}`)) {
        // In every 120 GETs, a burst of 4 SlowDowns and one of 3 resets: even the retries of a single
        // stuck read meet no more than 4 faults in a row, within its 6 attempts.
        const position = sourceGets++ % 120;
        if (position >= 10 && position < 14) proxy.slowDownNext(1);
        if (position >= 70 && position < 73) proxy.resetNext(1);
        return;
      }
      // The first attempt of each part meets a SlowDown, the second a reset; the third goes through.
      const part = /[?&]partNumber=(\d+)/.exec(request.url)?.[1];
      if (request.method !== 'PUT' || !part) return;
      const id = `${request.url.split('?')[0]}#${part}`;
      const attempt = (partAttempts.get(id) ?? 0) + 1;
      partAttempts.set(id, attempt);
      if (attempt === 1) proxy.slowDownNext(1);
      if (attempt === 2) proxy.resetNext(1);
    });

    // WHEN
    const packed = [];
    for (const task of await tasksOf('faults/')) packed.push(await pack('faults/', task, { s3: proxied }));
    proxy.onRequest(undefined);
    const finalized = await finalize('faults/', planned);

    // THEN
    expect(packed.map((result) => result.failureCount)).toEqual([0, 0]);
    expect(partAttempts.size).toBe(4);
    expect([...partAttempts.values()].every((attempts) => attempts === 3)).toBe(true);
    expect(sourceGets).toBeGreaterThan(SOURCE_OBJECTS);
    expect(proxy.faults - faultsBefore).toBeGreaterThanOrEqual(2 * (4 + 3) + 4 * 2);
    expect(finalized).toMatchObject({ shards: 2, records: SOURCE_OBJECTS, failures: 0 });
    expectSameObjects(await shardObjects('faults/'), expected);
    expect((await verifyDataset(dataset('faults/'))).problems).toEqual([]);
    await expectNoIncompleteUploads('faults/');
  });

  test('a server killed during a packer\'s multipart upload fails it without a partial object; its retry completes the dataset', async () => {
    // GIVEN: the server dies when the first part of shard 0 is sent, and is back when the packer aborts the upload.
    const { objects: expected } = await clean();
    const planned = await plan('killed/');
    const [first, second] = await tasksOf('killed/');
    const shardKey = `killed/versions/${planned.datasetVersion}/shards/${first.shardName}\\.[0-9a-f]{8}\\.tfrecord`;
    let state = 'up' as 'up' | 'killed' | 'restarted';
    const sent: string[] = [];
    proxy.onRequest(async (request) => {
      if (state === 'up' && request.method === 'PUT' && request.url.includes('partNumber=')) {
        state = 'killed';
        await server.kill();
      } else if (state === 'killed' && request.method === 'DELETE' && request.url.includes('uploadId=')) {
        sent.push('abort');
        await server.restart();
        state = 'restarted';
      }
    });

    // WHEN
    let failed: unknown;
    try {
      failed = await pack('killed/', first, { s3: proxied, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, retryBudgetMs: 0 } })
        .then(() => undefined, (error: unknown) => error);
    } finally {
      proxy.onRequest(undefined);
      if (state === 'killed') await server.restart();
    }

    // THEN: the invocation failed, naming the shard, and left nothing a reader could take for a shard.
    expect(state).toBe('restarted');
    expect(sent).toEqual(['abort']);
    expect(String(failed)).toMatch(new RegExp(`s3://${datasetBucket}/${shardKey}.*(ECONNREFUSED|ECONNRESET)`));
    expect((await dataset('killed/').list('versions/')).filter((key) => key.includes('/shards/'))).toEqual([]);
    expect(await objectExists(`killed/${resultKey(first)}`)).toBe(false);
    await expectNoIncompleteUploads('killed/');
    await expect(finalize('killed/', planned)).rejects.toThrow(/has no result at _plan\/v\d{8}-[0-9a-f]{8}\/results\//);
    expect((await dataset('killed/').list('published/')).map(claimSequence)).toEqual([]);

    // WHEN: the Map retries the failed packer.
    await pack('killed/', first);
    await pack('killed/', second);
    const finalized = await finalize('killed/', planned);

    // THEN
    expect(finalized).toMatchObject({ shards: 2, records: SOURCE_OBJECTS, failures: 0 });
    expectSameObjects(await shardObjects('killed/'), expected);
    expect((await verifyDataset(dataset('killed/'))).problems).toEqual([]);
    await expectNoIncompleteUploads('killed/');
  });

  test('an object deleted between plan and pack is a failure: the finalizer publishes nothing, naming it; allowed to, it publishes the version listing it', async () => {
    // GIVEN
    const objects: Record<string, Buffer> = {};
    for (let i = 0; i < 12; i++) objects[`gone/${CLASSES[i % 3]}/${i}.jpg`] = seededBytes(`gone-${i}`, 1000 + i);
    await putTestObjects(client, sourceBucket, objects);
    const planned = await plan('deleted/', { sourcePrefix: 'gone/' });
    await client.send(new DeleteObjectCommand({ Bucket: sourceBucket, Key: 'gone/dog/4.jpg' }));

    // WHEN
    const packed = [];
    for (const task of await tasksOf('deleted/')) packed.push(await pack('deleted/', task, { sourcePrefix: 'gone/' }));
    const refused = await finalize('deleted/', planned).catch((error: unknown) => error);

    // THEN: nothing published, the error names the object
    expect(refused).toBeInstanceOf(MissingFilesError);
    expect((refused as Error).message).toMatch(/^not publishing v00000001-[0-9a-f]{8}: 1 file\(s\) could not be packed \(dog\/4\.jpg: .*gone\/dog\/4\.jpg.*\); the dataset has no published version yet/);
    expect(await dataset('deleted/').list('published/')).toEqual([]);
    expect(await dataset('deleted/').list(MANIFEST_KEY)).toEqual([]);

    // WHEN: the same finalizer call, allowed to publish without it
    const finalized = await finalize('deleted/', planned, true);

    // THEN
    expect(packed.reduce((sum, result) => sum + result.failureCount, 0)).toBe(1);
    expect(finalized).toMatchObject({ shards: 2, records: 11, failures: 1 });
    const manifest = await manifestOf('deleted/');
    expect(manifest.source.objects).toBe(12);
    expect(manifest.failures).toEqual([{ key: 'dog/4.jpg', reason: expect.stringMatching(/gone\/dog\/4\.jpg/) }]);
    expect((await verifyDataset(dataset('deleted/'))).problems).toEqual([]);
  });

  test('planning again over an unchanged source is up to date and writes nothing', async () => {
    // GIVEN
    await clean();
    const manifestBefore = await dataset('clean/').get(MANIFEST_KEY);
    const writes: string[] = [];
    proxy.onRequest((request) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') writes.push(`${request.method} ${request.url}`);
    });

    // WHEN
    const rerun = await plan('clean/', { s3: proxied });

    // THEN
    expect(rerun).toMatchObject({ upToDate: true, shardCount: 0, reusedShards: 2, source: { objects: SOURCE_OBJECTS } });
    expect(writes).toEqual([]);
    expect((await dataset('clean/').get(MANIFEST_KEY)).equals(manifestBefore)).toBe(true);
  });
});

/** The SDK's own settings, read by `new S3Client({})`: nothing in a handler knows of the test. */
function sdkEnvironment(): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_S3: server.endpoint,
    AWS_REGION: server.region,
    AWS_ACCESS_KEY_ID: server.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.credentials.secretAccessKey,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_METRICS_NAMESPACE: 'test',
  };
}

/** Loads a handler's bundle (`lambda/dist/<name>/index.js`) with `environment` set, runs `use`, then restores the environment. */
async function withBundledHandler<E, R>(name: string, environment: Record<string, string>,
  use: (handler: (event: E) => Promise<R>) => Promise<void>): Promise<void> {
  const bundle = path.join(__dirname, '..', '..', 'lambda', 'dist', name, 'index.js');
  const saved = Object.fromEntries(Object.keys(environment).map((variable) => [variable, process.env[variable]]));
  Object.assign(process.env, environment);
  try {
    let handler!: (event: E) => Promise<R>;
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- isolateModules takes a synchronous function: a fresh bundle
      handler = (require(bundle) as { handler: typeof handler }).handler;
    });
    await use(handler);
  } finally {
    for (const [variable, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[variable];
      else process.env[variable] = value;
    }
  }
}

describe('bundled handlers against a local S3 server', () => {
  test('the packer packs each shard from its environment, with the endpoint from AWS_ENDPOINT_URL_S3', async () => {
    // GIVEN
    const { objects: expected } = await clean();
    const planned = await plan('bundled/');
    const environment = {
      SOURCE_BUCKET: sourceBucket,
      SOURCE_PREFIX,
      DESTINATION_BUCKET: datasetBucket,
      DESTINATION_PREFIX: 'bundled/',
      SHARD_FORMAT: SETTINGS.format,
      READ_CONCURRENCY: '16',
      ...sdkEnvironment(),
    };

    // WHEN
    const results: ShardPackerResult[] = [];
    await withBundledHandler<ShardPackerEvent, ShardPackerResult>('shard-packer', environment, async (handler) => {
      for (const task of await tasksOf('bundled/')) results.push(await handler(task));
    });

    // THEN
    expect(results.map((result) => result.failureCount)).toEqual([0, 0]);
    expect(await finalize('bundled/', planned)).toMatchObject({ shards: 2, records: SOURCE_OBJECTS, failures: 0 });
    expectSameObjects(await shardObjects('bundled/'), expected);
    expect((await verifyDataset(dataset('bundled/'))).problems).toEqual([]);
  });

  test('the planner lists the source from the S3 Inventory report its environment names, and plans what a listing plans', async () => {
    // GIVEN a report of the source bucket delivered to the dataset bucket
    const folder = `inventory/${sourceBucket}/daily/`;
    const lines = await currentInventoryLines(client, sourceBucket, '');
    await writeInventoryReport(client, datasetBucket, { folder, stamp: '2026-11-20T00-00Z', lines, sourceBucket });
    const listed = await plan('listed/');
    const environment = {
      SOURCE_BUCKET: sourceBucket,
      SOURCE_PREFIX,
      DESTINATION_BUCKET: datasetBucket,
      DESTINATION_PREFIX: 'inventoried/',
      SHARD_FORMAT: SETTINGS.format,
      SHUFFLE_SEED: String(SETTINGS.seed),
      SHARD_COUNT: String(SETTINGS.shardCount),
      INVENTORY_BUCKET: datasetBucket,
      INVENTORY_KEY: folder,
      ...sdkEnvironment(),
    };

    // WHEN
    let result: ShardPlannerResult | undefined;
    await withBundledHandler<ShardPlannerEvent, ShardPlannerResult>('shard-planner', environment, async (handler) => {
      result = await handler({});
    });

    // THEN
    expect(result).toEqual({ ...listed, datasetVersion: result!.datasetVersion, tasksKey: `inventoried/_plan/${result!.datasetVersion}/tasks.json` });
    expect((await tasksOf('inventoried/')).map(inVersionFolder)).toEqual((await tasksOf('listed/')).map(inVersionFolder));
  });

  test('the bundled planner leaves out what SOURCE_FILE_PATTERNS excludes or does not include (picomatch is in the bundle)', async () => {
    // GIVEN cat and dog, less the dogs 0001, 0004 and 0007
    const environment = {
      SOURCE_BUCKET: sourceBucket,
      SOURCE_PREFIX,
      DESTINATION_BUCKET: datasetBucket,
      DESTINATION_PREFIX: 'filtered/',
      SHARD_FORMAT: SETTINGS.format,
      SHUFFLE_SEED: String(SETTINGS.seed),
      SHARD_COUNT: String(SETTINGS.shardCount),
      SOURCE_FILE_PATTERNS: JSON.stringify({ include: ['cat/**', 'dog/**'], exclude: ['dog/000*.jpg'] }),
      ...sdkEnvironment(),
    };

    // WHEN
    let result: ShardPlannerResult | undefined;
    await withBundledHandler<ShardPlannerEvent, ShardPlannerResult>('shard-planner', environment, async (handler) => {
      result = await handler({});
    });

    // THEN
    expect(result!.source.objects).toBe(2 * SOURCE_OBJECTS / CLASSES.length - 3);
    expect(result!.classes).toBe(2);
  });
});
