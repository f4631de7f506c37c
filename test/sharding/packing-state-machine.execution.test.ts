import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { MANIFEST_KEY, VersionLayout } from '../../lambda/packing/dataset-layout';
import { datasetObjects, expectSameObjects } from '../support/dataset-objects';
import { verifyDataset } from '../../lambda/packing/verify';
import type { ShardTask} from '../../lambda/handler-kit/plan-layout';
import { RunFiles } from '../../lambda/handler-kit/plan-layout';
import { sizedJpeg } from '../support/jpeg-dataset';
import { putTestObjects } from '../support/s3-server';
import type { DetachedOutcome, LambdaCall } from '../support/state-machine-runner';
import type { StateMachineRunner } from '../support/state-machine-runner';
import { whenServerCan } from '../support/s3-server-capabilities';
import type { FaultProxy, InFlightWrite } from '../support/fault-proxy';
import { startFaultProxy } from '../support/fault-proxy';
import { bytesOf, parsedRecords, SAMPLE_PARTS, sampleFiles } from '../support/multi-part-samples';
import { PackingExecution } from '../support/packing-execution';

/*
 * The packing state machine of ShardedDataset, executed: the definition synthesized by the
 * construct, run by an ASL interpreter with the bundled planner, packers and finalizer against a
 * local S3 server. The interpreter has no Distributed Map: the harness reads the Map's items from
 * `_plan/tasks.json` in S3 as the S3 JSON ItemReader does (see test/support/state-machine-runner.ts).
 */

const CLASSES = ['cat', 'dog', 'eel'];
const SOURCE_OBJECTS = 60;
const SHARDS = 3;

const harness = PackingExecution.setUp({
  buckets: { source: 'packing-source', dataset: 'packing-dataset' },
  objects: () => {
    const objects: Record<string, Buffer> = {};
    for (let i = 0; i < SOURCE_OBJECTS; i++) {
      const key = `raw/${CLASSES[i % CLASSES.length]}/${String(i).padStart(4, '0')}.jpg`;
      // Real JPEGs (the dataset checks every image by default), 2-8 KB with their comments, as before.
      objects[key] = sizedJpeg(key, 2_000 + (i * 7919) % 6_000);
    }
    return objects;
  },
});

/**
 * The construct's state machine over raw/ (or `sourcePrefix`) of the source bucket, writing under `prefix`, run against the local S3 server
 * (through `proxy` when given: the handlers' S3 calls go through it).
 */
function packing(prefix: string, extra: { sourcePrefix?: string; allowMissing?: boolean; parts?: string[] } = {}, proxy?: FaultProxy): StateMachineRunner {
  return harness.packing({ sourcePrefix: 'raw/', destinationPrefix: prefix, shardCount: SHARDS, seed: 7, ...extra }, proxy);
}

const dataset = (prefix: string) => harness.dataset(prefix);
const manifestOf = (prefix: string) => harness.manifestOf(prefix);

/** Every shard and index object of a dataset, key (relative to the dataset) → bytes. */
function shardObjects(prefix: string): Promise<Map<string, Buffer>> {
  return datasetObjects(dataset(prefix));
}

const PACKED_STATES = ['Plan', 'UpToDate', 'PackShards', ...Array(SHARDS).fill('PackShard'), 'Finalize'];

/** The first packing run, which the others compare with: made once, on first use. */
let firstRun: ReturnType<typeof packFresh> | undefined;
function packFresh() {
  const runner = packing('packed/');
  return runner.run({}).then(async (execution) => ({ runner, execution, objects: await shardObjects('packed/') }));
}

describe('ShardedDataset state machine, executed against a local S3 server', () => {
  test('packs a fresh source: plan, one packer per item of the run\'s tasks.json, finalize; the dataset verifies', async () => {
    // WHEN
    firstRun ??= packFresh();
    const { execution, objects } = await firstRun;

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED', states: PACKED_STATES, retries: [] });
    const manifest = await manifestOf('packed/');
    const version = new VersionLayout(manifest.datasetVersion);
    expect(execution.output.plan).toMatchObject({
      upToDate: false, datasetVersion: version.id, tasksBucket: harness.datasetBucket, tasksKey: `packed/${new RunFiles(version).tasksKey}`, shardCount: SHARDS, classes: 3,
      source: { objects: SOURCE_OBJECTS, fingerprint: manifest.source.fingerprint },
    });
    expect(execution.output.dataset).toEqual({
      datasetVersion: version.id, currentVersion: version.id, versionManifestKey: version.manifestKey, prunedVersions: 0,
      manifestKey: MANIFEST_KEY, shards: SHARDS, records: SOURCE_OBJECTS, failures: 0, bytes: manifest.shards.reduce((sum, s) => sum + s.bytes, 0),
    });
    // The run's working files went when the version was published; the packers got the items the planner wrote.
    expect(await dataset('packed/').list('_plan/')).toEqual([]);
    const tasks: ShardTask[] = manifest.shards.map((shard, shardIndex) => ({ shardIndex, shardName: shard.key.split('/').pop()!.split('.')[0], membersKey: shard.membersKey }));
    expect(execution.lambdaCalls.filter((c) => c.handler === 'shard-packer').map((c) => c.event)).toEqual(tasks);
    expect(execution.lambdaCalls.find((c) => c.handler === 'shard-finalizer')!.event)
      .toEqual({ datasetVersion: version.id, shardCount: SHARDS, fingerprint: manifest.source.fingerprint });
    expect([...objects.keys()].filter((key) => key.startsWith('shards/'))).toHaveLength(SHARDS);
    expect(manifest.shards.map((s) => s.records).reduce((a, b) => a + b)).toBe(SOURCE_OBJECTS);
    expect((await verifyDataset(dataset('packed/'))).problems).toEqual([]);
  });

  test('a second run of an unchanged source ends after planning, as already packed, writing nothing', async () => {
    // GIVEN
    firstRun ??= packFresh();
    const { runner } = await firstRun;
    const manifestBefore = await dataset('packed/').get(MANIFEST_KEY);

    // WHEN
    const execution = await runner.run({}, { executionName: 'execution-2' });

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED', states: ['Plan', 'UpToDate', 'AlreadyPacked'] });
    expect(execution.output).toEqual({ plan: expect.objectContaining({ upToDate: true, shardCount: 0, reusedShards: SHARDS }) });
    expect(execution.lambdaCalls.map((c) => c.handler)).toEqual(['shard-planner']);
    expect((await dataset('packed/').get(MANIFEST_KEY)).equals(manifestBefore)).toBe(true);
  });

  test('{"force": true} packs an unchanged source again into a new version, with the same bytes', async () => {
    // GIVEN
    firstRun ??= packFresh();
    const { runner, objects } = await firstRun;

    // WHEN
    const execution = await runner.run({ force: true }, { executionName: 'execution-3' });

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED', states: PACKED_STATES });
    expect(execution.lambdaCalls[0].event).toEqual({ force: true });
    expect(execution.output.dataset.datasetVersion).toMatch(/^v00000002-/);
    expectSameObjects(await shardObjects('packed/'), objects);
  });

  test('an invalid input fails the planner, naming the field, before anything is written', async () => {
    // WHEN
    const execution = await packing('invalid/').run({ force: 'yes' });

    // THEN
    expect(execution).toMatchObject({ status: 'FAILED', error: 'HandlerInputError', states: ['Plan'] });
    expect(JSON.parse(execution.cause!).errorMessage).toBe('shard-planner: event field \'force\' must be true or false when given, got "yes"');
    expect(await dataset('invalid/').list('')).toEqual([]);
  });

  test.each([
    ['throttled by Lambda', 'Lambda.TooManyRequestsException'],
    ['crashed', 'Error'],
  ])('a packer %s on its first invocation is retried by the Retry policy, and the run packs the same bytes', async (_, errorName) => {
    // GIVEN
    firstRun ??= packFresh();
    const { objects } = await firstRun;
    const prefix = `retried-${errorName.toLowerCase().replace(/\W/g, '-')}/`;

    // WHEN
    const execution = await packing(prefix).run({}, {
      failLambda: (call) => (call.handler === 'shard-packer' && call.event.shardIndex === 1 && call.attempt === 1
        ? Object.assign(new Error('injected'), { name: errorName }) : undefined),
    });

    // THEN
    expect(execution).toMatchObject({ status: 'SUCCEEDED', retries: [`PackShard: ${errorName}`] });
    expect(execution.lambdaCalls.filter((c) => c.handler === 'shard-packer' && c.event.shardIndex === 1)).toHaveLength(2);
    expect(execution.output.dataset).toMatchObject({ shards: SHARDS, records: SOURCE_OBJECTS, failures: 0 });
    expectSameObjects(await shardObjects(prefix), objects);
  });

  test('a packer failing on every attempt fails the Map after its retries, and no manifest is written', async () => {
    // WHEN
    const execution = await packing('failing/').run({}, {
      failLambda: (call) => (call.handler === 'shard-packer' && call.event.shardIndex === 0 ? new Error('injected') : undefined),
    });

    // THEN
    expect(execution).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
    expect(execution.retries).toEqual(Array(3).fill('PackShard: Error'));
    expect(execution.states).not.toContain('Finalize');
    expect(await dataset('failing/').list(MANIFEST_KEY)).toEqual([]);
    expect(await dataset('failing/').list('published/')).toEqual([]);
  });

  test('an object that cannot be packed fails Finalize with MissingFilesError naming it: nothing published, the version before stays current; allowMissing publishes', async () => {
    // GIVEN: version 1 of a source, then a run that repacks it while one of its objects is deleted after the plan
    const objects: Record<string, Buffer> = {};
    for (let i = 0; i < 12; i++) objects[`some/${CLASSES[i % 3]}/${i}.jpg`] = sizedJpeg(`some-${i}`, 1_500 + i);
    await putTestObjects(harness.client, harness.sourceBucket, objects);
    expect(await packing('missing/', { sourcePrefix: 'some/' }).run({}, { executionName: 'missing-1' })).toMatchObject({ status: 'SUCCEEDED' });
    const first = await manifestOf('missing/');
    const deleteAfterPlan = async (call: { handler: string; attempt: number; event: { shardIndex?: number } }) => {
      if (call.handler === 'shard-packer' && call.event.shardIndex === 0 && call.attempt === 1) {
        await harness.client.send(new DeleteObjectCommand({ Bucket: harness.sourceBucket, Key: 'some/dog/4.jpg' }));
      }
      return undefined;
    };

    // WHEN
    const refused = await packing('missing/', { sourcePrefix: 'some/' }).run({ force: true }, { executionName: 'missing-2', failLambda: deleteAfterPlan });

    // THEN: the execution fails at Finalize (not retried) naming the object, and readers still get version 1
    expect(refused).toMatchObject({ status: 'FAILED', error: 'MissingFilesError', states: PACKED_STATES, retries: [] });
    expect(JSON.parse(refused.cause!).errorMessage).toMatch(new RegExp(`^not publishing v00000002-[0-9a-f]{8}: 1 file\\(s\\) could not be packed \\(dog/4\\.jpg: .*some/dog/4\\.jpg.*\\); ${first.datasetVersion} stays current`));
    expect(await manifestOf('missing/')).toEqual(first);
    expect(await dataset('missing/').list('published/')).toEqual(['published/00000001.json']);
    expect((await verifyDataset(dataset('missing/'))).problems).toEqual([]);

    // WHEN: the same run with allowMissing
    await putTestObjects(harness.client, harness.sourceBucket, { 'some/dog/4.jpg': objects['some/dog/4.jpg'] });
    const allowed = await packing('missing/', { sourcePrefix: 'some/', allowMissing: true })
      .run({ force: true }, { executionName: 'missing-3', failLambda: deleteAfterPlan });

    // THEN: version 2 is published without it, and lists it
    expect(allowed).toMatchObject({ status: 'SUCCEEDED', states: PACKED_STATES });
    expect(allowed.output.dataset).toMatchObject({ datasetVersion: expect.stringMatching(/^v00000002-/), records: 11, failures: 1 });
    const second = await manifestOf('missing/');
    expect(second).toMatchObject({ sequence: 2, records: 11, failures: [{ key: 'dog/4.jpg', reason: expect.stringContaining('some/dog/4.jpg') }] });
  });

  /*
   * Issue 38: Step Functions retries a packer after Lambda.ServiceException while the first attempt
   * still runs; a source object of its shard changes in between. The late attempt must never change
   * a published version: each attempt writes keys of its own, the first result stands, and the
   * finalizer checks the shard it names.
   */
  test.each([
    ['after the version was published: it removes what it wrote and fails', 'afterPublish'],
    ['after its retry, before Finalize: it adopts the retry\'s result and removes what it wrote', 'beforeFinalize'],
  ] as const)('a packer attempt whose answer was lost runs on while its retry packs the shard, with its source changed in between; it ends %s, and the published version\'s bytes are unchanged', async (_, when) => {
    // GIVEN: a source of its own, and the dataset an undisturbed run packs from it
    const sourcePrefix = `late-${when}/`;
    const original: Record<string, Buffer> = {};
    for (let i = 0; i < 12; i++) original[`${sourcePrefix}${CLASSES[i % 3]}/${i}.jpg`] = sizedJpeg(`late-${i}`, 1_500 + 97 * i);
    await putTestObjects(harness.client, harness.sourceBucket, original);
    expect(await packing(`reference-${when}/`, { sourcePrefix }).run({})).toMatchObject({ status: 'SUCCEEDED' });
    const reference = await shardObjects(`reference-${when}/`);
    const changeSource = () => putTestObjects(harness.client, harness.sourceBucket, Object.fromEntries(Object.keys(original).map((key, i) => [key, sizedJpeg(`changed-${i}`, 3_000 + 31 * i)])));
    let startLate!: () => void;
    const lateStarts = new Promise<void>((resolve) => {
      startLate = resolve;
    });
    let lateEnded!: (outcome: DetachedOutcome) => void;
    const lateOutcome = new Promise<DetachedOutcome>((resolve) => {
      lateEnded = resolve;
    });
    const prefix = `late-${when}/`;

    // WHEN: shard 0's first attempt is detached; it runs once the source has changed, at the point the case names
    const execution = await packing(prefix, { sourcePrefix }).run({}, {
      detachLambda: (call) => (call.handler === 'shard-packer' && call.event.shardIndex === 0 && call.attempt === 1
        ? { error: Object.assign(new Error('injected: the answer was lost'), { name: 'Lambda.ServiceException' }), start: lateStarts, ended: lateEnded }
        : undefined),
      failLambda: async (call) => {
        if (when === 'beforeFinalize' && call.handler === 'shard-finalizer') {
          await changeSource();
          startLate();
          await lateOutcome;
        }
        return undefined;
      },
    });
    expect(execution).toMatchObject({ status: 'SUCCEEDED', retries: ['PackShard: Lambda.ServiceException'] });
    const manifest = await manifestOf(prefix);
    const published = await datasetObjects(dataset(prefix));
    if (when === 'afterPublish') {
      await changeSource();
      startLate();
    }
    const late = await lateOutcome;
    expect(execution.detached).toHaveLength(1);

    // THEN: the published version is the undisturbed run's, byte for byte, and the late attempt ended as the case says
    expectSameObjects(await shardObjects(prefix), published);
    expect(await manifestOf(prefix)).toEqual(manifest);
    if (when === 'afterPublish') {
      expectSameObjects(published, reference);
      expect(late.error).toMatchObject({ name: 'LateAttemptError' });
    } else {
      // Before Finalize the first result stands only where results are created if absent: a server without conditional PUTs
      // lets the late attempt's replace it, and then the finalizer publishes the late shard, whole and checked.
      await whenServerCan(harness.server.kind, 'ConditionalPut', async () => {
        expectSameObjects(published, reference);
        expect(late).toMatchObject({ result: { shard: manifest.shards[0] } });
      });
    }
    const layout = new VersionLayout(manifest.datasetVersion);
    const listed = manifest.shards.flatMap((shard) => [shard.key, shard.indexKey]);
    expect((await dataset(prefix).list(`${layout.prefix}shards/`)).concat(await dataset(prefix).list(`${layout.prefix}index/`)).sort()).toEqual([...listed].sort());
    expect(await dataset(prefix).list('_plan/')).toEqual([]);
    expect((await verifyDataset(dataset(prefix))).problems).toEqual([]);
  }, 60_000);

  /*
   * Issue 45, point 1: a packer attempt stopped (its Lambda timed out, or Step Functions retried it
   * after Lambda.ServiceException) while its shard's PUT was in flight; the PUT lands after the
   * finalizer removed the version's unlisted objects. The version stays sound (verify: ok, the shard
   * named as a leftover), and the next run, 31 minutes later by the store's clock, removes it.
   */
  test('a packer attempt stopped with its shard PUT in flight: verify is ok naming the leftover, and the next run leaves no object under the version that its manifest does not list', async () => {
    // GIVEN: shard 0's first attempt loses its answer and runs on, unseen; its shard PUT is held, and only then its retry runs
    const proxy = await startFaultProxy(harness.server.port);
    const prefix = 'stopped-in-flight/';
    const runner = packing(prefix, {}, proxy);
    let shardPut: InFlightWrite | undefined;
    const shard0Put = (request: { method: string; url: string }) => request.method === 'PUT' && /\/shards\/part-00000-of-\d+\.[0-9a-f]{8}\.tfrecord$/.test(request.url.split('?', 1)[0]);
    const shard0 = (call: LambdaCall, attempt: number) => call.handler === 'shard-packer' && call.event.shardIndex === 0 && call.attempt === attempt;

    // WHEN: the execution runs to its end with that PUT held, then the PUT lands
    const execution = await runner.run({}, {
      executionName: 'stopped-1',
      detachLambda: (call) => {
        if (!shard0(call, 1)) return undefined;
        shardPut = proxy.holdInFlight(shard0Put);
        return { error: Object.assign(new Error('injected: the answer was lost'), { name: 'Lambda.ServiceException' }), start: Promise.resolve() };
      },
      failLambda: async (call) => {
        if (shard0(call, 2)) await shardPut!.reached;
        return undefined;
      },
    });
    expect(execution).toMatchObject({ status: 'SUCCEEDED', retries: ['PackShard: Lambda.ServiceException'] });
    await shardPut!.land();
    const stopped = await execution.detached[0];
    const manifest = await manifestOf(prefix);
    const layout = new VersionLayout(manifest.datasetVersion);
    const listed = manifest.shards.flatMap((shard) => [shard.key, shard.indexKey]).sort();
    const inFolder = async () => [...await dataset(prefix).list(`${layout.prefix}shards/`), ...await dataset(prefix).list(`${layout.prefix}index/`)].sort();

    // THEN: the stopped attempt did nothing after its PUT; its shard is in the published version's folder; verify is ok and names it
    expect(stopped.error?.message).toMatch(/AccessDenied/);
    const leftover = (await inFolder()).filter((key) => !listed.includes(key));
    expect(leftover).toEqual([expect.stringMatching(/shards\/part-00000-of-\d+\.[0-9a-f]{8}\.tfrecord$/)]);
    const report = await verifyDataset(dataset(prefix));
    expect(report.problems).toEqual([]);
    expect(report.leftovers).toEqual(leftover);

    // WHEN: the next run, 31 minutes later by the store's clock
    proxy.advanceClock(31 * 60_000);
    const next = await runner.run({ force: true }, { executionName: 'stopped-2' });

    // THEN: the first version's folder holds exactly what its manifest lists, and both versions verify with no leftover
    expect(next).toMatchObject({ status: 'SUCCEEDED' });
    expect(await inFolder()).toEqual(listed);
    for (const version of [layout.id, undefined]) {
      expect(await verifyDataset(dataset(prefix), { version })).toMatchObject({ problems: [], leftovers: [] });
    }
  }, 60_000);

  test('the answer to a packer\'s result PUT is lost: its retry finds the result its own, and the execution publishes a version that verifies', async () => {
    // GIVEN
    const proxy = await startFaultProxy(harness.server.port);
    const prefix = 'lost-result-answer/';
    proxy.loseAnswerOf((request) => request.method === 'PUT' && /\/_plan\/v\d{8}-[0-9a-f]{8}\/results\/part-00001-of-\d+\.json$/.test(request.url.split('?', 1)[0]));

    // WHEN
    const execution = await packing(prefix, {}, proxy).run({});

    // THEN
    expect(proxy.faults).toBe(1);
    expect(execution).toMatchObject({ status: 'SUCCEEDED', states: PACKED_STATES, retries: [] });
    expect(execution.output.dataset).toMatchObject({ shards: SHARDS, records: SOURCE_OBJECTS, failures: 0 });
    expect(await verifyDataset(dataset(prefix))).toMatchObject({ problems: [], leftovers: [] });
    expect(await dataset(prefix).list('_plan/')).toEqual([]);
  }, 60_000);

  test('multi-part samples (issue 48): one record per sample holding every part, read by TensorFlow\'s schema; a sample missing a part, bad JSON and a bad image are listed failures', async () => {
    // GIVEN
    const keys = ['cat/0001', 'cat/0002', 'dog/0003', 'dog/0004'];
    await putTestObjects(harness.client, harness.sourceBucket, Object.fromEntries(Object.entries({
      ...sampleFiles([...keys, 'dog/bad-json', 'dog/bad-mask']),
      'dog/bad-json.json': Buffer.from('{"boxes": [1'),
      'dog/bad-mask.mask.png': Buffer.from('not a png'),
      'dog/no-mask.jpg': SAMPLE_PARTS.jpg, 'dog/no-mask.json': SAMPLE_PARTS.json('dog/no-mask'),
    }).map(([key, data]) => [`parts/${key}`, data])));

    // WHEN
    const strict = await packing('multipart-strict/', { sourcePrefix: 'parts/' }).run({});
    const execution = await packing('multipart/', { sourcePrefix: 'parts/', allowMissing: true, parts: ['jpg', 'json', 'mask.png'] }).run({});

    // THEN
    expect(strict).toMatchObject({ status: 'FAILED', error: 'MissingFilesError' });
    expect(execution).toMatchObject({ status: 'SUCCEEDED', states: PACKED_STATES });
    const manifest = await manifestOf('multipart/');
    expect(manifest.sample).toEqual({
      parts: [{ name: 'jpg', kind: 'image' }, { name: 'json', kind: 'json' }, { name: 'mask.png', kind: 'image' }],
      required: ['jpg', 'json', 'mask.png'], imagePart: 'jpg', samples: 7,
    });
    expect(manifest.failures).toEqual([
      { key: 'dog/bad-json', reason: expect.stringMatching(/^part 'json' \(dog\/bad-json\.json\): not valid JSON/) },
      { key: 'dog/bad-mask', reason: "part 'mask.png' (dog/bad-mask.mask.png): not an image (no image format recognised in its bytes)" },
      { key: 'dog/no-mask', reason: expect.stringMatching(/^sample lacks part 'mask\.png' \(required: jpg, json, mask\.png;/) },
    ]);
    expect([manifest.records, manifest.source.objects]).toEqual([4, 20]);
    const shards = new Map(await Promise.all(manifest.shards.map(async (shard) => [shard.key, await dataset('multipart/').get(shard.key)] as const)));
    const parsed = parsedRecords(manifest, (key) => shards.get(key)!);
    expect(parsed.map((features) => bytesOf(features['sample/key']).toString()).sort()).toEqual(keys);
    for (const features of parsed) {
      const key = bytesOf(features['sample/key']).toString();
      expect(bytesOf(features['image/encoded']).equals(SAMPLE_PARTS.jpg)).toBe(true);
      expect(bytesOf(features['mask.png']).equals(SAMPLE_PARTS.png)).toBe(true);
      expect(JSON.parse(bytesOf(features.json).toString())).toMatchObject({ key });
      expect(Number(features['image/class/label'].int64List!.value[0])).toBe(key.startsWith('cat/') ? 0 : 1);
    }
  }, 240_000);
});
