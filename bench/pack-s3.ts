// Benchmark: `training-io pack` from S3 to S3 against the GET ceiling of the same objects on the same
// local S3 server (OpenStack Swift, or s3rver without python3-swift: test/support/s3-server-kind.ts),
// in one run: signed GETs (the engine's read path, S3SignedGet, with nothing else), the SDK's
// GetObject, signed GETs whose bytes are written back as one object (a copy: the least a packer
// must do, reading and writing every byte, on a server that shares this machine's CPUs), `packDataset`
// in this process, and the `training-io pack` CLI as a child process (its start included), each at the
// packer's read concurrency. Prints objects/s, MB/s and client CPU per object of each (medians of
// --runs), and the ratios to signed GETs (target: pack ≥ 0.8) and to the copy; then the CPU
// of the CLI packing one class folder alone, which is mostly its fixed cost (its start). Not a test:
// run `npm run bench:pack-s3 [-- --objects N --large-objects N --concurrency N --runs N]`.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../bin/cli/s3-storage';
import { signedGetFor } from '../lambda/io/s3-signed-get';
import { S3Sink } from '../lambda/io/s3-sink';
import { S3Source } from '../lambda/io/s3-source';
import { packDataset } from '../lambda/packing/pack';
import { createTestBucket, putTestObjects, startS3Server } from '../test/support/s3-server';

const CLASSES = 30;
/** What `training-io pack` uses with an S3 side. */
const PACK_PARALLEL_SHARDS = 4;
const CLI = path.join(__dirname, '..', 'bin', 'training-io.js');

interface ObjectSet {
  readonly name: string;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly count: number;
}

interface Measurement {
  readonly seconds: number;
  readonly objects: number;
  readonly bytes: number;
  /** CPU time of the client (user + system), in microseconds. */
  readonly cpuMicros: number;
}

type Way = 'signed GET' | 'SDK GetObject' | 'signed GET → PUT' | 'pack (in process)' | 'pack CLI (process)';
const WAYS: Way[] = ['signed GET', 'SDK GetObject', 'signed GET → PUT', 'pack (in process)', 'pack CLI (process)'];

/** Bytes gathered before each write of the copy, as the shard writer's output block. */
const COPY_BLOCK_BYTES = 4 * 1024 * 1024;

/** Runs `get` for every key, `concurrency` at a time. */
async function gets(keys: string[], concurrency: number, get: (key: string) => Promise<number>): Promise<Measurement> {
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < keys.length) {
      const got = await get(keys[next++]);
      bytes += got;
    }
  };
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { seconds: elapsed(started), objects: keys.length, bytes, cpuMicros: cpuMicros(cpu) };
}

/**
 * Signed GETs of every key whose bytes go, in the order they arrive, into one multipart upload
 * through the engine's S3 sink (4 MiB blocks, the sink's part size and parts in flight): what
 * copying the objects costs, without planning, framing or indexes.
 */
async function copy(client: S3Client, bucket: string, keys: string[], concurrency: number, run: number): Promise<Measurement> {
  const signed = signedGetFor(client);
  const sink = new S3Sink({ client, bucket, prefix: `copied-${run}/` });
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const writer = await sink.create('all.bin');
  let block: Buffer[] = [];
  let blockBytes = 0;
  let writing = Promise.resolve();
  const measured = await gets(keys, concurrency, async (key) => {
    const data = await signed.read(bucket, key, undefined, undefined);
    block.push(data);
    blockBytes += data.length;
    if (blockBytes >= COPY_BLOCK_BYTES) {
      const full = Buffer.concat(block);
      block = [];
      blockBytes = 0;
      writing = writing.then(() => writer.write([full]));
      await writing;
    }
    return data.length;
  });
  await writing;
  if (blockBytes > 0) await writer.write([Buffer.concat(block)]);
  await writer.complete();
  return { ...measured, seconds: elapsed(started), cpuMicros: cpuMicros(cpu) };
}

async function sdkGetObject(client: S3Client, bucket: string, key: string): Promise<number> {
  const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await response.Body!.transformToByteArray()).byteLength;
}

/** `packDataset` from `<set>/` to a fresh prefix with the CLI's S3 settings. */
async function pack(client: S3Client, bucket: string, set: string, readConcurrency: number, run: number): Promise<Measurement> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const { manifest } = await packDataset({
    source: new S3Source({ client, bucket, prefix: `${set}/` }),
    sink: new S3Sink({ client, bucket, prefix: `packed-${set}-${run}/` }),
    format: 'tfrecord',
    seed: 0,
    readConcurrency,
    parallelShards: PACK_PARALLEL_SHARDS,
  });
  const seconds = elapsed(started);
  if (manifest.failures.length > 0) throw new Error(`pack listed ${manifest.failures.length} failures, e.g. ${manifest.failures[0].key}`);
  return { seconds, objects: manifest.records, bytes: manifest.source.bytes, cpuMicros: cpuMicros(cpu) };
}

/** What one `training-io pack` child packs: a prefix of the bucket, and its objects and bytes. */
interface CliRun {
  readonly prefix: string;
  readonly objects: number;
  readonly bytes: number;
  readonly extraArgs?: string;
}

/** `training-io pack` as a child process; its CPU from bash's `times` (the children's user and system time). */
async function packCli(endpoint: string, region: string, bucket: string, what: CliRun, readConcurrency: number, run: number): Promise<Measurement> {
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} pack --content any s3://${bucket}/${what.prefix}/ s3://${bucket}/cli-${what.prefix}-${run}/ `
    + `--endpoint-url ${endpoint} --region ${region} --concurrency ${readConcurrency} ${what.extraArgs ?? ''} >/dev/null; status=$?; times; exit $status`;
  const started = process.hrtime.bigint();
  const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => { out += text; });
  child.stderr.setEncoding('utf8').on('data', (text: string) => { err = (err + text).slice(-4000); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = elapsed(started);
  if (code !== 0) throw new Error(`training-io pack exited with ${code}: ${err}`);
  // `times` prints the shell's line, then its children's: `0m1.234s 0m0.123s`.
  const children = out.trim().split('\n').pop()!.match(/(\d+)m([\d.]+)s/g)!.map((t) => {
    const [, minutes, secs] = /(\d+)m([\d.]+)s/.exec(t)!;
    return Number(minutes) * 60 + Number(secs);
  });
  return { seconds, objects: what.objects, bytes: what.bytes, cpuMicros: (children[0] + children[1]) * 1e6 };
}

function elapsed(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** CPU time of this process (the client side; the server is another process) since `start`. */
function cpuMicros(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface Summary {
  readonly objectsPerSecond: number;
  readonly megabytesPerSecond: number;
  readonly cpuMsPerObject: number;
}

function summarize(runs: Measurement[]): Summary {
  return {
    objectsPerSecond: median(runs.map((m) => m.objects / m.seconds)),
    megabytesPerSecond: median(runs.map((m) => m.bytes / 1e6 / m.seconds)),
    cpuMsPerObject: median(runs.map((m) => m.cpuMicros / 1000 / m.objects)),
  };
}

function wholeNumber(name: string, value: string | undefined): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`--${name} must be a positive whole number, got '${value}'`);
  return number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'objects': { type: 'string', default: '3000' },
      'large-objects': { type: 'string', default: '600' },
      'concurrency': { type: 'string', default: '64' },
      'runs': { type: 'string', default: '3' },
    },
  });
  const concurrency = wholeNumber('concurrency', values.concurrency);
  const runs = wholeNumber('runs', values.runs);
  const sets: ObjectSet[] = [
    { name: 'small', minBytes: 2 * 1024, maxBytes: 8 * 1024, count: wholeNumber('objects', values.objects) },
    { name: 'large', minBytes: 100 * 1024, maxBytes: 200 * 1024, count: wholeNumber('large-objects', values['large-objects']) },
  ];

  const server = await startS3Server();
  process.stdout.write(`server ${server.name}; GETs in flight: ${concurrency} (pack: ${concurrency} per shard × up to ${PACK_PARALLEL_SHARDS} shards); medians of ${runs} runs\n`);
  process.env.AWS_ACCESS_KEY_ID = server.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = server.credentials.secretAccessKey;
  delete process.env.AWS_SESSION_TOKEN;
  const client = createS3Client({ endpointUrl: server.endpoint, region: server.region });
  try {
    const bucket = await createTestBucket(client, 'bench-pack-s3');
    for (const set of sets) {
      const pool = randomBytes(set.maxBytes + 4096);
      const objects: Record<string, Buffer> = {};
      let totalBytes = 0;
      for (let i = 0; i < set.count; i++) {
        const size = set.minBytes + pool.readUInt32LE((i * 4) % 4096) % (set.maxBytes - set.minBytes + 1);
        const key = `${set.name}/class-${String(i % CLASSES).padStart(3, '0')}/img-${String(i).padStart(7, '0')}.jpg`;
        objects[key] = pool.subarray(i % 4096, (i % 4096) + size);
        totalBytes += size;
      }
      await putTestObjects(client, bucket, objects, concurrency);
      const keys = Object.keys(objects);
      const signed = signedGetFor(client);
      const measured = new Map<Way, Measurement[]>(WAYS.map((way) => [way, []]));
      for (let run = 0; run < runs; run++) {
        // Each run in another order, so that no way always gains from caches the one before warmed.
        const order = WAYS.map((_, i) => WAYS[(i + run) % WAYS.length]);
        for (const way of order) {
          const m = way === 'signed GET' ? await gets(keys, concurrency, async (key) => (await signed.read(bucket, key, undefined, undefined)).length)
            : way === 'SDK GetObject' ? await gets(keys, concurrency, (key) => sdkGetObject(client, bucket, key))
              : way === 'signed GET → PUT' ? await copy(client, bucket, keys, concurrency, run)
              : way === 'pack (in process)' ? await pack(client, bucket, set.name, concurrency, run)
                : await packCli(server.endpoint, server.region, bucket, { prefix: set.name, objects: set.count, bytes: totalBytes }, concurrency, run);
          measured.get(way)!.push(m);
        }
      }
      const ceiling = summarize(measured.get('signed GET')!);
      const copied = summarize(measured.get('signed GET → PUT')!);
      process.stdout.write(`\n${set.count} objects × ${set.minBytes / 1024}–${set.maxBytes / 1024} KB (${(totalBytes / 1e6).toFixed(1)} MB) in ${CLASSES} classes\n`);
      process.stdout.write(`${'way'.padEnd(20)} ${'objects/s'.padStart(9)} ${'MB/s'.padStart(7)} ${'CPU ms/object'.padStart(13)}  ÷ signed GET  ÷ copy (objects/s)\n`);
      for (const way of WAYS) {
        const s = summarize(measured.get(way)!);
        process.stdout.write(`${way.padEnd(20)} ${s.objectsPerSecond.toFixed(0).padStart(9)} ${s.megabytesPerSecond.toFixed(1).padStart(7)} `
          + `${s.cpuMsPerObject.toFixed(3).padStart(13)}  ${(s.objectsPerSecond / ceiling.objectsPerSecond).toFixed(2).padStart(12)}  `
          + `${(s.objectsPerSecond / copied.objectsPerSecond).toFixed(2).padStart(6)}\n`);
      }
      // The CLI's fixed cost apart: one class folder packed alone, its start included.
      const folder = `${set.name}/class-000`;
      const inFolder = keys.filter((key) => key.startsWith(`${folder}/`));
      const small: Measurement[] = [];
      for (let run = 0; run < runs; run++) {
        small.push(await packCli(server.endpoint, server.region, bucket,
          { prefix: folder, objects: inFolder.length, bytes: inFolder.reduce((sum, key) => sum + objects[key].length, 0), extraArgs: '--labels none' },
          concurrency, run));
      }
      process.stdout.write(`pack CLI of ${inFolder.length} objects (one class folder): ${(median(small.map((m) => m.cpuMicros)) / 1e6).toFixed(2)} s of CPU in all `
        + '(its start, the listing and one shard)\n');
    }
    process.stdout.write('\ntargets: pack ÷ signed GET ≥ 0.8; pack CLI CPU per 5 KB object (process start included) ≤ 0.4 ms\n');
  } finally {
    client.destroy();
    await server.stop();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench:pack-s3: ${error.stack ?? error.message}\n`);
  process.exitCode = 1;
});
