import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { packDataset } from '../../lambda/packing/pack';
import type { FaultProxy } from '../support/fault-proxy';
import { startFaultProxy } from '../support/fault-proxy';
import { jpegSourceFolder } from '../support/jpeg-dataset';
import { temporaryFolders } from '../support/local-files';
import type { S3TestServer } from '../support/s3-server';
import { startS3Server } from '../support/s3-server';
import { pythonWith, runPythonChild } from '../support/python-child';

// The S3 reader of container/shardio on the local S3 server (issues 38 and 45): a manifest's names that
// lead out of the cache, throttling through a fault proxy, a network blip that cuts half the shard
// GETs for 5 s, an endpoint's password, the cache's limit with downloads in flight, a prefix with no
// published version: test/python/reader_safety_s3.py. The
// Python tests run in a child process started asynchronously, so that the proxies answer meanwhile.

const PYTHON = pythonWith('torch, boto3');
const FILES = 37;
const SHARDS = 6;
/** reader_safety_s3.THROTTLED_GETS: more SlowDowns in a row than the 6 attempts before the retry budget. */
const THROTTLED_GETS = 12;
/** How long the blip lasts, from the first shard GET through the "blip" proxy. */
const BLIP_MS = 5_000;


const runPython = (args: string[], env: Record<string, string>) => runPythonChild(PYTHON, args, env);

const folder = temporaryFolders();
let server: S3TestServer;
const proxies: Record<string, FaultProxy> = {};

beforeAll(async () => {
  server = await startS3Server();
  for (const fault of ['throttled', 'throttledForever', 'blip']) proxies[fault] = await startFaultProxy(server.port);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(proxies).map((proxy) => proxy.close()));
  await server?.stop();
});

describe('shardio S3 reader: names, throttling, secrets, cache limit, unpublished prefixes', () => {
  test('refuses a manifest that leads out of its cache, retries for 60 s, outlasts a 5 s blip, redacts the endpoint, keeps its cache under the limit', async () => {
    // GIVEN: a pack of real JPEGs; a proxy that answers 12 SlowDowns then passes, one that always answers
    // SlowDown, and one that cuts half the shard GETs for 5 s
    const source = folder('safety-src');
    jpegSourceFolder(source, FILES, ['cat', 'dog', 'fish']);
    const output = folder('safety-tfrecord');
    await packDataset({ source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format: 'tfrecord', seed: 3, shardCount: SHARDS });
    const description = path.join(folder('safety-packed'), 'packed.json');
    fs.writeFileSync(description, JSON.stringify({ source, tfrecord: output, shards: SHARDS, files: FILES }));
    proxies.throttled.slowDownNext(THROTTLED_GETS);
    proxies.throttledForever.slowDownNext(1_000_000);
    const blip = blipOfHalfTheShards();
    const s3 = {
      endpoint: server.endpoint, region: server.region, ...server.credentials,
      faults: Object.fromEntries(Object.entries(proxies).map(([fault, proxy]) => [fault, proxy.endpoint])),
    };

    // WHEN
    const run = await runPython(['-m', 'unittest', '-v', 'reader_safety_s3'], { SHARDIO_TEST_PACKED: description, SHARDIO_TEST_S3: JSON.stringify(s3) });

    // THEN
    if (run.status !== 0) throw new Error(`python unittest failed (exit ${run.status}):\n${run.output}`);
    expect(run.output).toMatch(/^Ran \d+ tests? in .*\n\nOK$/m);
    expect(run.output).not.toMatch(/skipped/);
    expect(proxies.throttled.faults).toBe(THROTTLED_GETS);
    expect(proxies.throttledForever.faults).toBeGreaterThan(5);
    // reader_safety_s3 checks that every record came once and a GET got past the 6 attempts; here, that the blip cut half the shards.
    expect(blip.cutShards.size).toBe(SHARDS / 2);
    expect(proxies.blip.faults).toBeGreaterThan(6);
  }, 600_000);
});

/**
 * For BLIP_MS from the first shard GET, cuts every GET of every other shard in the order of their
 * first GETs (the first, third, fifth…): half the shards, each answer's body cut halfway. The first
 * shard's GETs are all cut for the whole blip, longer than the 6 attempts' backoffs (≤ 3.1 s) last.
 */
function blipOfHalfTheShards(): { cutShards: Set<string> } {
  const seen: string[] = [];
  const cutShards = new Set<string>();
  let started: number | undefined;
  proxies.blip.cutAnswers((request) => {
    const shard = /\/shards\/(part-\d+-of-\d+)\./.exec(request.url)?.[1];
    if (request.method !== 'GET' || shard === undefined) return false;
    started ??= Date.now();
    if (!seen.includes(shard)) seen.push(shard);
    const cut = Date.now() - started < BLIP_MS && seen.indexOf(shard) % 2 === 0;
    if (cut) cutShards.add(shard);
    return cut;
  });
  return { cutShards };
}
