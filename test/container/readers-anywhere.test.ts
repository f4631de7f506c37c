import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalDirectorySink, LocalDirectorySource } from '../../lambda/io/local-directory';
import { packDataset } from '../../lambda/packing/pack';
import type { FaultProxy } from '../support/fault-proxy';
import { startFaultProxy } from '../support/fault-proxy';
import { jpegSourceFolder } from '../support/jpeg-dataset';
import { temporaryFolders } from '../support/local-files';
import type { S3TestServer } from '../support/s3-server';
import { startS3Server } from '../support/s3-server';
import { pythonWith, runPythonChild } from '../support/python-child';

// shardio.dataset.data_loader over a folder, a file:// URL, an S3 prefix of the local S3 server (with
// a fault proxy per fault in front of it) and a SageMaker channel: test/python/reading_anywhere.py.
// The Python tests run in a child process started asynchronously, so that the proxies of this
// process answer them meanwhile.

const PYTHON = pythonWith('torch, torchvision, boto3');
const FILES = 37;
/** test/python/versioned.py derives version 2 from a pack of 5 shards. */
const SHARDS = 5;
/** test/python/shuffle_anywhere.py: the shuffle's quality on 2,000 images in 20 shards. */
const SHUFFLE_FILES = 2000;
const SHUFFLE_SHARDS = 20;


const runPython = (args: string[], env: Record<string, string>) => runPythonChild(PYTHON, args, env);

const folder = temporaryFolders();
let server: S3TestServer;
const proxies: Record<string, FaultProxy> = {};

beforeAll(async () => {
  server = await startS3Server();
  for (const fault of ['slowDown', 'reset', 'hang', 'silent']) proxies[fault] = await startFaultProxy(server.port);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(proxies).map((proxy) => proxy.close()));
  await server?.stop();
});

describe('shardio.dataset.data_loader: a folder, a file:// URL, an S3 prefix, a SageMaker channel', () => {
  test('reads every record once per epoch, resumes, pins versions, keeps its cache whole and under its limit, and outlasts S3 faults', async () => {
    // GIVEN: a pack of real JPEGs, and a proxy per fault: two 503 SlowDowns, two resets, a shard GET held past the reader's timeout, no answer at all
    const source = folder('anywhere-src');
    jpegSourceFolder(source, FILES, ['cat', 'dog', 'fish']);
    const output = folder('anywhere-tfrecord');
    await packDataset({ source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format: 'tfrecord', seed: 3, shardCount: SHARDS });
    const description = path.join(folder('anywhere-packed'), 'packed.json');
    fs.writeFileSync(description, JSON.stringify({ source, tfrecord: output, shards: SHARDS, files: FILES }));
    proxies.slowDown.slowDownNext(2);
    proxies.reset.resetNext(2);
    let held = false;
    proxies.hang.onRequest(async (request) => {
      if (held || request.method !== 'GET' || !request.url.endsWith('.tfrecord')) return;
      held = true;
      await sleep(5_000);
    });
    proxies.silent.neverAnswer();
    const s3 = {
      endpoint: server.endpoint, region: server.region, ...server.credentials,
      faults: Object.fromEntries(Object.entries(proxies).map(([fault, proxy]) => [fault, proxy.endpoint])),
    };

    // WHEN
    const run = await runPython(['-m', 'unittest', '-v', 'reading_anywhere'], { SHARDIO_TEST_PACKED: description, SHARDIO_TEST_S3: JSON.stringify(s3) });

    // THEN
    if (run.status !== 0) throw new Error(`python unittest failed (exit ${run.status}):\n${run.output}`);
    expect(run.output).toMatch(/^Ran \d+ tests? in .*\n\nOK$/m);
    expect(run.output).not.toMatch(/skipped/);
    expect({ slowDowns: proxies.slowDown.faults, resets: proxies.reset.faults, held, silent: proxies.silent.faults })
      .toEqual({ slowDowns: 2, resets: 2, held: true, silent: 2 });
  }, 900_000);

  test('shuffles 2,000 images as the docs state (epochs differ, batch-mates repeat about as under a uniform shuffle), counts its epochs and resumes at another worker or rank count', async () => {
    // GIVEN: 2,000 real JPEGs packed in 20 shards
    const source = folder('shuffle-src');
    jpegSourceFolder(source, SHUFFLE_FILES, ['cat', 'dog', 'fish', 'bird']);
    const output = folder('shuffle-tfrecord');
    await packDataset({ source: new LocalDirectorySource(source), sink: new LocalDirectorySink(output), format: 'tfrecord', seed: 3, shardCount: SHUFFLE_SHARDS });
    const description = path.join(folder('shuffle-packed'), 'packed.json');
    fs.writeFileSync(description, JSON.stringify({ shuffle: output, shuffleFiles: SHUFFLE_FILES }));
    const s3 = { endpoint: server.endpoint, region: server.region, ...server.credentials, faults: {} };

    // WHEN
    const run = await runPython(['-m', 'unittest', '-v', 'shuffle_anywhere'], { SHARDIO_TEST_PACKED: description, SHARDIO_TEST_S3: JSON.stringify(s3) });

    // THEN
    if (run.status !== 0) throw new Error(`python unittest failed (exit ${run.status}):\n${run.output}`);
    expect(run.output).toMatch(/^Ran \d+ tests? in .*\n\nOK$/m);
    expect(run.output).not.toMatch(/skipped/);
    console.log(run.output.split('\n').filter((line) => /share \d+; batch-mates/.test(line)).join('\n'));
  }, 900_000);
});
