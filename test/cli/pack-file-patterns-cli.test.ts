import * as fs from 'node:fs';
import * as path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Manifest } from '../../lambda/packing/manifest';
import { MANIFEST_KEY } from '../../lambda/packing/dataset-layout';
import { parseMembers } from '../../lambda/packing/members';
import { seededBytes, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from '../support/s3-server';

// --include and --exclude: globs over the keys below the source, on a folder and on an S3 prefix.

const folder = temporaryFolders();
/** The variables the CLI's S3 client reads: set for these tests, restored after. */
const AWS_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE'];
const savedEnvironment: Record<string, string | undefined> = {};
let server: S3TestServer;
let client: S3Client;
let bucket: string;

/** Two class folders of images, a text file in one, and a stray README.txt at the root. */
function sourceFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = { 'README.txt': Buffer.from('how this dataset was collected'), 'cat/notes.txt': Buffer.from('notes') };
  for (let i = 0; i < 6; i++) files[`${i % 2 === 0 ? 'cat' : 'dog'}/${i}.jpg`] = seededBytes(`patterns/${i}`, 300 + 17 * i);
  return files;
}

function localSource(): string {
  const dir = folder('src');
  writeFiles(dir, sourceFiles());
  return dir;
}

function keysOf(manifest: Manifest, read: (key: string) => string): string[] {
  return manifest.shards.flatMap((shard) => parseMembers(shard.membersKey, Buffer.from(read(shard.membersKey))).map((record) => record.key)).sort();
}

beforeAll(async () => {
  server = await startS3Server();
  client = s3TestClient(server);
  bucket = await createTestBucket(client, 'pack-patterns');
  await putTestObjects(client, bucket, Object.fromEntries(Object.entries(sourceFiles()).map(([key, data]) => [`raw/${key}`, data])), 8);
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
  await server?.stop();
});

describe('training-io pack --include/--exclude', () => {
  test('without them, a stray README.txt at the source root refuses the pack and the error says how to leave it out', async () => {
    // WHEN
    const { code, stderr } = await runCli('pack', '--content', 'any', localSource(), folder('out'));

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(/'README\.txt' is at the root of the source: .*leave it out with an exclude pattern \(--exclude on the CLI\)/);
  });

  test('--exclude README.txt --exclude \'**/*.txt\' packs the images alone, and the summary counts the 2 files left out', async () => {
    // GIVEN
    const output = folder('out');

    // WHEN
    const packed = await runCli('pack', '--content', 'any', localSource(), output, '--exclude', 'README.txt', '--exclude', '**/*.txt');

    // THEN
    expect(packed.stderr).not.toMatch(/training-io:/);
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(/^ {11}6 files, .*; 2 more left out by --include\/--exclude$/m);
    const manifest = JSON.parse(fs.readFileSync(path.join(output, MANIFEST_KEY), 'utf8')) as Manifest;
    expect(keysOf(manifest, (key) => fs.readFileSync(path.join(output, key), 'utf8'))).toEqual(['cat/0.jpg', 'cat/2.jpg', 'cat/4.jpg', 'dog/1.jpg', 'dog/3.jpg', 'dog/5.jpg']);
    expect((await runCli('verify', output)).code).toBe(0);
  });

  test('--include \'cat/**\' --exclude \'**/*.txt\' on an S3 source packs the cat images alone', async () => {
    // WHEN
    const packed = await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed/`, '--include', 'cat/**', '--exclude', '**/*.txt',
      '--endpoint-url', server.endpoint, '--region', server.region);

    // THEN
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(/^ {11}3 files, .*; 5 more left out by --include\/--exclude$/m);
    const read = async (key: string) => (await client.send(new GetObjectCommand({ Bucket: bucket, Key: `packed/${key}` }))).Body!.transformToString();
    const manifest = JSON.parse(await read(MANIFEST_KEY)) as Manifest;
    const members = new Map(await Promise.all(manifest.shards.map(async (shard) => [shard.membersKey, await read(shard.membersKey)] as const)));
    expect(keysOf(manifest, (key) => members.get(key)!)).toEqual(['cat/0.jpg', 'cat/2.jpg', 'cat/4.jpg']);
  });

  test.each([
    [['--exclude', '/README.txt'], /--exclude must be relative to the source root \(no leading '\/'\), got '\/README\.txt'/],
    [['--include', 'cat/[ab'], /--include is not a valid glob, got 'cat\/\[ab': '\[' is not closed by '\]'/],
    [['--include', '{cat,dog/**'], /--include is not a valid glob, got '\{cat,dog\/\*\*': '\{' is not closed by '\}'/],
    [['--include', '!cat/**'], /--include must not start with '!', got '!cat\/\*\*': leave files out with exclude/],
    [['--exclude', '../other/*'], /--exclude must not contain '\.' or '\.\.' folders/],
    [['--exclude', ''], /--exclude must be 1-1024 characters/],
  ])('%j is a usage error naming the flag, the value and what is allowed', async (flags, message) => {
    // WHEN
    const { code, stderr } = await runCli('pack', ...flags, localSource(), folder('out'));

    // THEN
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
