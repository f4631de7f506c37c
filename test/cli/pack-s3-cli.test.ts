import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3_RETRY_RULE, S3_RETRY_SECONDS_ENV } from '../../lib/contract/s3-retry-rule';
import type { Manifest} from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { withoutVersionIds } from '../support/dataset-objects';
import type { FaultProxy} from '../support/fault-proxy';
import { startFaultProxy } from '../support/fault-proxy';
import { listFiles, seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';
import { bytesOf, parsedRecords, SAMPLE_PARTS, sampleFiles } from '../support/multi-part-samples';
import { currentInventoryLines, writeInventoryReport } from '../support/s3-inventory-report';
import type { S3TestServer} from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from '../support/s3-server';

const CLASSES = ['cat', 'dog', 'eel'];
const SOURCE_OBJECTS = 60;
/** The variables the CLI's S3 client reads: set for these tests, restored after. */
const AWS_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE'];

const folder = temporaryFolders();
let server: S3TestServer;
let client: S3Client;
let proxy: FaultProxy;
let bucket: string;
/** The source objects, also written to `localSource` with the same modification times as in S3. */
const sourceFiles: Record<string, Buffer> = {};
let localSource: string;
const savedEnvironment: Record<string, string | undefined> = {};

/** `run()` with `variables` set in this process's environment (the CLI runs in process), restored after. */
async function withEnvironment<T>(variables: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  Object.assign(process.env, variables);
  try {
    return await run();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

beforeAll(async () => {
  server = await startS3Server();
  client = s3TestClient(server);
  proxy = await startFaultProxy(server.port);
  bucket = await createTestBucket(client, 'pack-s3-cli');
  for (let i = 0; i < SOURCE_OBJECTS; i++) {
    const key = `${CLASSES[i % CLASSES.length]}/${String(i).padStart(4, '0')}.jpg`;
    sourceFiles[key] = seededBytes(`pack-s3-cli/${key}`, 300 + (i * 53) % 1500);
  }
  await putTestObjects(client, bucket, Object.fromEntries(Object.entries(sourceFiles).map(([key, data]) => [`raw/${key}`, data])), 16);
  // The manifest's source fingerprint covers modification times: the local copy takes S3's.
  localSource = folder('src');
  writeFiles(localSource, sourceFiles);
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'raw/' }));
  for (const object of listed.Contents ?? []) {
    const modified = object.LastModified!;
    fs.utimesSync(path.join(localSource, ...object.Key!.slice('raw/'.length).split('/')), modified, modified);
  }

  for (const name of AWS_VARIABLES) savedEnvironment[name] = process.env[name];
  for (const name of AWS_VARIABLES) delete process.env[name];
  process.env.AWS_ACCESS_KEY_ID = server.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = server.credentials.secretAccessKey;
}, 60_000);

afterAll(async () => {
  for (const name of AWS_VARIABLES) {
    if (savedEnvironment[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnvironment[name];
  }
  client?.destroy();
  await proxy?.close();
  await server?.stop();
});

afterEach(() => proxy.onRequest(undefined));

/** The flags that point the CLI at the test server. */
function s3Flags(endpoint = server.endpoint): string[] {
  return ['--endpoint-url', endpoint, '--region', server.region];
}

async function getObject(key: string): Promise<Buffer> {
  const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await response.Body!.transformToByteArray());
}

/** Every key under `prefix`, relative to it, sorted. */
async function listKeys(prefix: string): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key!.slice(prefix.length)).sort();
}

/** The manifest without `source.uri`, the one field that names where the source was, and without version ids. */
function withoutSourceUri(manifest: Manifest): unknown {
  return withoutVersionIds({ ...manifest, source: { ...manifest.source, uri: undefined } });
}

/** Keys with the version id replaced by `VERSION` → the key: the objects of two runs, paired. */
function byPlace(keys: readonly string[]): Map<string, string> {
  return new Map(keys.map((key) => [key.replace(/v\d{8}-[0-9a-f]{8}/, 'VERSION'), key]));
}

describe('training-io pack and verify with S3', () => {
  test('pack S3 to S3 then verify S3: both exit 0, and the summary names the S3 locations', async () => {
    // WHEN
    const packed = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-a/`, ...s3Flags(),
      '--format', 'recordio', '--shards', '3', '--seed', '7');
    const verified = await runCli('verify', `s3://${bucket}/packed-a`, ...s3Flags());

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(new RegExp(`^source {5}s3://${bucket}/raw/$`, 'm'));
    expect(packed.stdout).toMatch(new RegExp(`^output {5}s3://${bucket}/packed-a/$`, 'm'));
    expect(packed.stdout).toMatch(new RegExp(`^ {11}${SOURCE_OBJECTS} files, `, 'm'));
    expect(packed.stdout).toMatch(/^format {5}recordio, seed 7, 3 classes$/m);
    expect(packed.stdout).toMatch(new RegExp(`^records {4}${SOURCE_OBJECTS}$`, 'm'));
    expect(packed.stdout).toMatch(/^failures {3}0$/m);
    const parts = ['part-00000-of-00003', 'part-00001-of-00003', 'part-00002-of-00003'];
    expect([...byPlace(await listKeys('packed-a/')).keys()]).toEqual([
      'index.manifest', MANIFEST_KEY, 'published/00000001.json', 'shards.manifest',
      'versions/VERSION/index.manifest', 'versions/VERSION/index/all.idx', ...parts.map((part) => `versions/VERSION/index/${part}.idx`),
      'versions/VERSION/manifest.json', ...parts.map((part) => `versions/VERSION/members/${part}.jsonl`),
      'versions/VERSION/shards.manifest', ...parts.map((part) => `versions/VERSION/shards/${part}.rec`),
    ]);
    expect(packed.stdout).toMatch(/^version {4}v00000001-[0-9a-f]{8}, published$/m);
    expect(verified).toEqual({
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^ok: 3 shards, ${SOURCE_OBJECTS} records, .* checked in s3://${bucket}/packed-a/, version v00000001-[0-9a-f]{8}\n$`)),
      stderr: expect.stringMatching(/^verifying +0% {2}0\/3 shards.*\nverifying 100% {2}3\/3 shards[^\n]*\n$/),
    });
  });

  test('S3 to S3 writes the same bytes as local to local for the same files and seed, the source URI aside', async () => {
    // GIVEN
    const localOutput = folder('out');

    // WHEN
    const fromS3 = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-same/`, ...s3Flags(), '--shards', '4', '--seed', '11');
    const fromDisk = await runCli('pack', '--content', 'any', localSource, localOutput, '--shards', '4', '--seed', '11');

    // THEN
    expect([fromS3.code, fromDisk.code]).toEqual([0, 0]);
    // The same objects but the ManifestFile channels, which only an S3 dataset has; the claims hold a time.
    const local = byPlace(listFiles(localOutput));
    const s3 = byPlace((await listKeys('packed-same/')).filter((key) => !key.endsWith('.manifest')));
    expect([...s3.keys()]).toEqual([...local.keys()]);
    for (const [place, key] of local) {
      if (place === MANIFEST_KEY || place.endsWith('/manifest.json') || place.startsWith('published/')) continue;
      expect({ place, same: (await getObject(`packed-same/${s3.get(place)}`)).equals(fs.readFileSync(path.join(localOutput, key))) }).toEqual({ place, same: true });
    }
    const s3Manifest = JSON.parse((await getObject(`packed-same/${MANIFEST_KEY}`)).toString('utf8')) as Manifest;
    const localManifest = JSON.parse(fs.readFileSync(path.join(localOutput, MANIFEST_KEY), 'utf8')) as Manifest;
    expect(s3Manifest.source.uri).toBe(`s3://${bucket}/raw/`);
    expect(withoutSourceUri(s3Manifest)).toEqual(withoutSourceUri(localManifest));
  });

  test('through connection resets and SlowDown bursts on listing, reads and writes, pack writes the same bytes as without faults', async () => {
    // GIVEN every fifth request reset and every seventh answered 503 SlowDown, whatever its kind;
    // a request is faulted once at most, so its retry goes through (the retry budget is not the test)
    let seen = 0;
    const faulted = new Set<string>();
    proxy.onRequest((request) => {
      seen++;
      const name = `${request.method} ${request.url}`;
      if (faulted.has(name) || (seen % 5 !== 0 && seen % 7 !== 0)) return;
      faulted.add(name);
      if (seen % 5 === 0) proxy.resetNext(1);
      else proxy.slowDownNext(1);
    });
    const faultsBefore = proxy.faults;

    // WHEN
    const withFaults = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-faults/`, ...s3Flags(proxy.endpoint), '--shards', '3', '--seed', '5');
    proxy.onRequest(undefined);
    const clean = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-no-faults/`, ...s3Flags(), '--shards', '3', '--seed', '5');

    // THEN
    expect([withFaults.code, clean.code]).toEqual([0, 0]);
    expect(proxy.faults - faultsBefore).toBeGreaterThanOrEqual(10);
    const withoutFaults = byPlace(await listKeys('packed-no-faults/'));
    const throughFaults = byPlace(await listKeys('packed-faults/'));
    expect([...throughFaults.keys()]).toEqual([...withoutFaults.keys()]);
    for (const [place, key] of withoutFaults) {
      // Manifests name their version, claims their time: the records are what must not differ.
      if (/manifest|published\//.test(place)) continue;
      expect({ place, same: (await getObject(`packed-faults/${throughFaults.get(place)}`)).equals(await getObject(`packed-no-faults/${key}`)) })
        .toEqual({ place, same: true });
    }
  });

  test('--inventory lists the source from its S3 Inventory report: the same dataset as a listing', async () => {
    // GIVEN a report of the bucket, as S3 Inventory delivers it into the bucket itself
    const folder = `inventory/${bucket}/daily/`;
    const lines = await currentInventoryLines(client, bucket, 'raw/');
    const manifestKey = await writeInventoryReport(client, bucket, { folder, stamp: '2026-11-20T00-00Z', lines });

    // WHEN
    const byFolder = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-inv-a/`, ...s3Flags(), '--inventory', `s3://${bucket}/${folder}`, '--seed', '3');
    const byManifest = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-inv-b/`, ...s3Flags(), '--inventory', `s3://${bucket}/${manifestKey}`, '--seed', '3');
    const listed = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed-inv-c/`, ...s3Flags(), '--seed', '3');

    // THEN
    expect([byFolder.code, byManifest.code, listed.code]).toEqual([0, 0, 0]);
    const manifests = await Promise.all(['a', 'b', 'c'].map(async (run) => JSON.parse((await getObject(`packed-inv-${run}/${MANIFEST_KEY}`)).toString('utf8')) as Manifest));
    expect(withoutVersionIds(manifests[0])).toEqual(withoutVersionIds(manifests[2]));
    expect(withoutVersionIds(manifests[1])).toEqual(withoutVersionIds(manifests[2]));
    expect(manifests[0].records).toBe(SOURCE_OBJECTS);
  });

  test('multi-part samples S3 to S3 (issue 48): the same shard bytes as folder to folder, every part read back by TensorFlow\'s schema; verify is ok', async () => {
    // GIVEN
    const files = { ...sampleFiles(['cat/0001', 'cat/0002', 'dog/0003']), 'dog/0004.jpg': SAMPLE_PARTS.jpg, 'dog/0004.json': '{"cut": ' };
    await putTestObjects(client, bucket, Object.fromEntries(Object.entries(files).map(([key, data]) => [`samples/${key}`, data])));
    const local = folder('samples');
    writeFiles(local, files);
    const localOut = folder('out');

    // WHEN
    const packed = await runCli('pack', `s3://${bucket}/samples/`, `s3://${bucket}/packed-samples/`, ...s3Flags(), '--parts', 'jpg,json', '--allow-missing', '--seed', '5');
    const packedLocally = await runCli('pack', local, localOut, '--parts', 'jpg,json', '--allow-missing', '--seed', '5');
    const verified = await runCli('verify', `s3://${bucket}/packed-samples`, ...s3Flags(), '--allow-missing');

    // THEN
    expect([packed.code, packedLocally.code]).toEqual([0, 0]);
    expect(packed.stdout).toMatch(/^ {11}dog\/0004: part 'json' \(dog\/0004\.json\): not valid JSON/m);
    const manifest = JSON.parse((await getObject(`packed-samples/${MANIFEST_KEY}`)).toString()) as Manifest;
    expect(manifest.sample).toMatchObject({ required: ['jpg', 'json'], imagePart: 'jpg', samples: 4 });
    const shards = new Map(await Promise.all(manifest.shards.map(async (shard) => [shard.key, await getObject(`packed-samples/${shard.key}`)] as const)));
    const records = parsedRecords(manifest, (key) => shards.get(key)!);
    expect(records.map((features) => bytesOf(features['sample/key']).toString()).sort()).toEqual(['cat/0001', 'cat/0002', 'dog/0003']);
    for (const features of records) expect(bytesOf(features['mask.png']).equals(SAMPLE_PARTS.png)).toBe(true);
    const localManifest = JSON.parse(fs.readFileSync(path.join(localOut, MANIFEST_KEY), 'utf8')) as Manifest;
    expect(localManifest.shards.map((shard) => shard.crc32c)).toEqual(manifest.shards.map((shard) => shard.crc32c));
    expect([verified.code, verified.stdout]).toEqual([0, expect.stringMatching(/^ok: 1 shards, 3 records/)]);
  });

  test('pack a local folder to S3, then verify S3', async () => {
    // WHEN
    const packed = await runCli('pack', '--content', 'any', localSource, `s3://${bucket}/from-local/`, ...s3Flags(), '--shards', '2');
    const verified = await runCli('verify', `s3://${bucket}/from-local/`, ...s3Flags());

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(new RegExp(`^records {4}${SOURCE_OBJECTS}$`, 'm'));
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`^ok: 2 shards, ${SOURCE_OBJECTS} records`));
  });

  test('verify against an S3 endpoint that refuses connections says the store could not be read, not that the dataset is incomplete', async () => {
    // GIVEN: a loopback port nothing listens on
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    // WHEN: the attempts only, not the 60 s retry budget (SHARDIO_S3_RETRY_SECONDS=0)
    const verified = await withEnvironment({ [S3_RETRY_SECONDS_ENV]: '0' },
      () => runCli('verify', `s3://${bucket}/packed-a/`, ...s3Flags(`http://127.0.0.1:${port}`)));

    // THEN
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(new RegExp(`^problem: manifest\\.json: cannot be read \\(.*ECONNREFUSED.*127\\.0\\.0\\.1:${port}.*`
      + `after ${S3_RETRY_RULE.attempts} attempts in \\d+\\.\\d s.*\\); the store could not be read`, 'm'));
    expect(verified.stdout).not.toMatch(/incomplete/);
  });

  test.each(['-1', 'soon', 'Infinity'])('SHARDIO_S3_RETRY_SECONDS=%s is a usage error naming the variable and what it takes', async (value) => {
    // WHEN
    const verified = await withEnvironment({ [S3_RETRY_SECONDS_ENV]: value }, () => runCli('verify', `s3://${bucket}/packed-a/`, ...s3Flags()));

    // THEN
    expect(verified.code).toBe(2);
    expect(verified.stderr).toContain(`SHARDIO_S3_RETRY_SECONDS='${value}': must be a number of seconds, 0 or more (0: 6 attempts only; default 60)`);
  });

  test('pack S3 to a local folder, then verify the folder', async () => {
    // GIVEN
    const output = path.join(folder('out'), 'dataset');

    // WHEN
    const packed = await runCli('pack', '--content', 'any', `s3://${bucket}/raw`, output, ...s3Flags(), '--shards', '2');
    const verified = await runCli('verify', output);

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(new RegExp(`^records {4}${SOURCE_OBJECTS}$`, 'm'));
    expect(listFiles(output)).toContainEqual(expect.stringMatching(/^versions\/v00000001-[0-9a-f]{8}\/shards\/part-00001-of-00002\.tfrecord$/));
    expect(verified.code).toBe(0);
  });

  test('an object deleted between the listing and its read publishes nothing (exit 1, named in the summary); with --allow-missing it is a listed failure', async () => {
    // GIVEN: an object that goes as soon as it is read
    const objects = {
      'vanishing/cat/a.jpg': seededBytes('vanishing/a', 700),
      'vanishing/cat/b.jpg': seededBytes('vanishing/b', 800),
      'vanishing/dog/c.jpg': seededBytes('vanishing/c', 900),
    };
    await putTestObjects(client, bucket, objects);
    proxy.onRequest(async (request) => {
      if (request.method === 'GET' && request.url.split('?')[0] === `/${bucket}/vanishing/cat/b.jpg`) {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'vanishing/cat/b.jpg' }));
      }
    });

    // WHEN
    const refused = await runCli('pack', '--content', 'any', `s3://${bucket}/vanishing/`, `s3://${bucket}/vanishing-packed/`, ...s3Flags(proxy.endpoint));

    // THEN: no claim, no manifest, nothing of the run left under the output
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^version {4}v00000001-[0-9a-f]{8} not published: 1 file\(s\) could not be packed; the dataset has no version yet$/m);
    expect(refused.stdout).toMatch(/^failures {3}1\n {11}cat\/b\.jpg: /m);
    expect(refused.stderr).toMatch(/1 file\(s\) could not be packed: nothing was published; pass --allow-missing to publish without them/);
    expect(await listKeys('vanishing-packed/')).toEqual([]);

    // WHEN: the same with --allow-missing
    await putTestObjects(client, bucket, { 'vanishing/cat/b.jpg': objects['vanishing/cat/b.jpg'] });
    const allowed = await runCli('pack', '--content', 'any', `s3://${bucket}/vanishing/`, `s3://${bucket}/vanishing-packed/`, '--allow-missing', ...s3Flags(proxy.endpoint));

    // THEN
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/^version {4}v00000001-[0-9a-f]{8}, published without the 1 file\(s\) that could not be packed \(--allow-missing\)$/m);
    const manifest = JSON.parse((await getObject(`vanishing-packed/${MANIFEST_KEY}`)).toString('utf8')) as Manifest;
    expect(manifest.failures).toEqual([{ key: 'cat/b.jpg', reason: expect.any(String) }]);
    expect(manifest.records).toBe(2);
  });

  describe('bad S3 input exits 2 naming the argument, then where the usage is', () => {
    test.each<[string, () => string[], RegExp]>([
      ['a source URI without a bucket', () => ['pack', 's3://', folder('out')], /source 's3:\/\/' does not name a valid bucket: got ''/],
      ['a source bucket with capitals', () => ['pack', 's3://Raw_Data/x/', folder('out')], /source 's3:\/\/Raw_Data\/x\/' does not name a valid bucket: got 'Raw_Data'/],
      ['an output URI with one slash', () => ['pack', localSource, `s3:/${bucket}/out/`], /output 's3:\/.*\/out\/' is not an S3 URI: write it as s3:\/\/bucket\/prefix\//],
      ['an output URI with an empty segment', () => ['pack', localSource, `s3://${bucket}/a//b/`], /output 's3:\/\/.*\/a\/\/b\/' has an empty path segment/],
      ['an output prefix inside the source prefix', () => ['pack', `s3://${bucket}/raw/`, `s3://${bucket}/raw/packed/`],
        /output prefix 's3:\/\/.*\/raw\/packed\/' is inside the source prefix 's3:\/\/.*\/raw\/'/],
      ['a source prefix inside the output prefix', () => ['pack', `s3://${bucket}/raw/cat/`, `s3://${bucket}/raw/`],
        /source prefix 's3:\/\/.*\/raw\/cat\/' is inside the output prefix 's3:\/\/.*\/raw\/'/],
      ['an output anywhere in a bucket packed whole', () => ['pack', `s3://${bucket}`, `s3://${bucket}/packed/`],
        /output prefix 's3:\/\/.*\/packed\/' is inside the source prefix 's3:\/\/.*\/'/],
      ['--endpoint-url that is not a URL', () => ['pack', `s3://${bucket}/raw/`, folder('out'), '--endpoint-url', 'localhost-9000'],
        /--endpoint-url must be an http:\/\/ or https:\/\/ URL, got 'localhost-9000'/],
      ['a dataset URI to verify without a bucket', () => ['verify', 's3:///packed/'], /dataset 's3:\/\/\/packed\/' does not name a valid bucket/],
      ['--inventory for a local source', () => ['pack', localSource, folder('out'), '--inventory', `s3://${bucket}/inventory/`],
        /--inventory lists an S3 source; the source '.*' is a local folder/],
      ['--inventory that is not an S3 URI', () => ['pack', `s3://${bucket}/raw/`, folder('out'), '--inventory', 'inventory/manifest.json'],
        /--inventory 'inventory\/manifest.json' is not an S3 URI/],
    ])('%s', async (_what, argv, message) => {
      // GIVEN
      const args = argv();

      // WHEN
      const { code, stdout, stderr } = await runCli(...args, ...(args.includes('--endpoint-url') ? [] : s3Flags()));

      // THEN
      expect(code).toBe(2);
      expect(stderr.split('\n')).toEqual([expect.stringMatching(new RegExp(`^training-io: .*${message.source}`)),
        `Run 'training-io ${args[0]} --help' for the usage.`, '']);
      expect(stdout).toBe('');
    });

    test.each([
      ['pack', () => ['pack', `s3://${bucket}/raw/`, folder('out')]],
      ['verify', () => ['verify', `s3://${bucket}/packed-a/`]],
    ])('%s with an S3 location and no region (no --region, AWS_REGION or AWS_DEFAULT_REGION)', async (_command, argv) => {
      // WHEN
      const { code, stderr } = await runCli(...argv(), '--endpoint-url', server.endpoint);

      // THEN
      expect(code).toBe(2);
      expect(stderr).toMatch(/^training-io: an s3:\/\/ location needs a region: pass --region/);
    });

    test('AWS_REGION stands in for --region', async () => {
      // GIVEN
      process.env.AWS_REGION = server.region;

      // WHEN
      try {
        const { code, stdout } = await runCli('verify', `s3://${bucket}/nothing-here/`, '--endpoint-url', server.endpoint);

        // THEN: the bucket was reached, and has no dataset there
        expect(code).toBe(1);
        expect(stdout).toMatch(/^problem: manifest\.json: cannot be read/m);
      } finally {
        delete process.env.AWS_REGION;
      }
    });
  });
});
