// Benchmark: `training-io pack` from S3 to S3 against the raw GET ceiling of the same objects on the
// same local S3 server (OpenStack Swift, or s3rver without python3-swift: test/support/s3-server-kind.ts),
// same client settings, same run. Prints the server, objects/s and MB/s of both and the ratio pack/raw (target ≥ 0.8). Not a test:
// run `npm run bench:pack-s3 [-- --objects N --concurrency N]`.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../bin/cli/s3-storage';
import { S3Sink } from '../lambda/packing/io/s3-sink';
import { S3Source } from '../lambda/packing/io/s3-source';
import { packDataset } from '../lambda/packing/pack';
import { createTestBucket, putTestObjects, startS3Server } from '../test/support/s3-server';

const CLASSES = 30;
const MIN_BYTES = 2 * 1024;
const MAX_BYTES = 8 * 1024;
/** What `training-io pack` uses with an S3 side. */
const PACK_PARALLEL_SHARDS = 4;

interface Measurement {
  readonly seconds: number;
  readonly objects: number;
  readonly bytes: number;
  /** CPU time this process spent (user + system), in microseconds. */
  readonly cpuMicros: number;
}

/** GETs every key, `concurrency` at a time, reading each body whole and dropping it. */
async function rawGets(client: S3Client, bucket: string, keys: string[], concurrency: number): Promise<Measurement> {
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      bytes += (await response.Body!.transformToByteArray()).byteLength;
    }
  };
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, objects: keys.length, bytes, cpuMicros: cpuMicros(cpu) };
}

/** `packDataset` from `raw/` to `packed/` with the CLI's S3 settings. */
async function pack(client: S3Client, bucket: string, readConcurrency: number, run: number): Promise<Measurement> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const manifest = await packDataset({
    source: new S3Source({ client, bucket, prefix: 'raw/' }),
    sink: new S3Sink({ client, bucket, prefix: `packed-${run}/` }),
    format: 'tfrecord',
    seed: 0,
    readConcurrency,
    parallelShards: PACK_PARALLEL_SHARDS,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (manifest.failures.length > 0) throw new Error(`pack listed ${manifest.failures.length} failures, e.g. ${manifest.failures[0].key}`);
  return { seconds, objects: manifest.records, bytes: manifest.source.bytes, cpuMicros: cpuMicros(cpu) };
}

/** CPU time of this process (the client side; the server is another process) since `start`. */
function cpuMicros(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

function line(name: string, m: Measurement): string {
  return `${name.padEnd(22)} ${m.seconds.toFixed(2).padStart(7)} s  ${(m.objects / m.seconds).toFixed(0).padStart(6)} objects/s  ` +
    `${(m.bytes / 1e6 / m.seconds).toFixed(2).padStart(6)} MB/s  client CPU ${(m.cpuMicros / m.objects).toFixed(0).padStart(4)} µs/object`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { objects: { type: 'string', default: '3000' }, concurrency: { type: 'string', default: '64' } } });
  const count = Number(values.objects);
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--objects must be a positive whole number, got '${values.objects}'`);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`--concurrency must be a positive whole number, got '${values.concurrency}'`);

  const server = await startS3Server();
  process.stdout.write(`server ${server.name}\n`);
  process.env.AWS_ACCESS_KEY_ID = server.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = server.credentials.secretAccessKey;
  delete process.env.AWS_SESSION_TOKEN;
  const client = createS3Client({ endpointUrl: server.endpoint, region: server.region });
  try {
    const bucket = await createTestBucket(client, 'bench-pack-s3');
    const pool = randomBytes(MAX_BYTES + 4096);
    const objects: Record<string, Buffer> = {};
    let totalBytes = 0;
    for (let i = 0; i < count; i++) {
      const size = MIN_BYTES + pool.readUInt32LE((i * 4) % 4096) % (MAX_BYTES - MIN_BYTES + 1);
      const key = `raw/class-${String(i % CLASSES).padStart(3, '0')}/img-${String(i).padStart(7, '0')}.jpg`;
      objects[key] = pool.subarray(i % 4096, (i % 4096) + size);
      totalBytes += size;
    }
    const uploadStarted = Date.now();
    await putTestObjects(client, bucket, objects, concurrency);
    process.stdout.write(`uploaded ${count} objects, ${(totalBytes / 1e6).toFixed(1)} MB in ${((Date.now() - uploadStarted) / 1000).toFixed(1)} s\n`);
    const keys = Object.keys(objects);

    // Raw before and after the pack, so that neither gains from warming the server's caches first.
    const raw1 = await rawGets(client, bucket, keys, concurrency);
    const packed = await pack(client, bucket, concurrency, 1);
    const raw2 = await rawGets(client, bucket, keys, concurrency);
    const raw = raw1.seconds <= raw2.seconds ? raw1 : raw2;
    process.stdout.write([
      `objects ${count} × 2–8 KB in ${CLASSES} classes; GETs in flight: raw ${concurrency}, pack ${concurrency} per shard × up to ${PACK_PARALLEL_SHARDS} shards`,
      line('raw GET (1st)', raw1),
      line('raw GET (2nd)', raw2),
      line('pack S3 → S3', packed),
      `ratio pack/raw (best raw): ${((packed.objects / packed.seconds) / (raw.objects / raw.seconds)).toFixed(2)}  (target ≥ 0.8)`,
      '',
    ].join('\n'));
  } finally {
    client.destroy();
    await server.stop();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench:pack-s3: ${error.stack ?? error.message}\n`);
  process.exitCode = 1;
});
