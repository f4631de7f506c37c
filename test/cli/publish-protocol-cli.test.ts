import * as fs from 'node:fs';
import * as path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { MANIFEST_KEY, SHARDS_CHANNEL_MANIFEST, VersionLayout } from '../../lambda/packing/dataset-layout';
import { listFiles, temporaryFolders, writeFiles } from '../support/local-files';
import { runCli } from '../support/run-cli';
import type { S3TestServer } from '../support/s3-server';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from '../support/s3-server';

/** The publishing protocol through the real CLI (ARCHITECTURE.md "Publishing protocol"); every fault at every call is in test/packing/protocol/. */

const folder = temporaryFolders();

function datasetVersionAt(outDir: string, key: string): string {
  return (JSON.parse(fs.readFileSync(path.join(outDir, key), 'utf8')) as { datasetVersion: string }).datasetVersion;
}

describe('training-io pack: versions are never lost', () => {
  test('the issue\'s reproduction: after a pack with --retention 0, the next pack publishes a third version and the dataset verifies', async () => {
    // GIVEN
    const src = folder('src');
    const out = folder('out');
    writeFiles(src, { 'a/1.jpg': '1\n' });
    expect((await runCli('pack', '--content', 'any', src, out)).code).toBe(0);
    writeFiles(src, { 'a/2.jpg': '2\n' });
    expect((await runCli('pack', '--content', 'any', src, out, '--retention', '0')).code).toBe(0);
    writeFiles(src, { 'a/3.jpg': '3\n' });
    // WHEN: the default retention counts version 1, pruned by the run before, as within its 7 days
    const third = await runCli('pack', '--content', 'any', src, out);
    // THEN
    expect(third.stderr).not.toMatch(/ENOENT|error/i);
    expect(third.code).toBe(0);
    expect(datasetVersionAt(out, MANIFEST_KEY)).toMatch(/^v00000003-/);
    const verified = await runCli('verify', out);
    expect(verified.stdout).toMatch(/^ok: \d+ shards, 3 records/m);
    expect((await runCli('pack', '--content', 'any', src, out, '--full')).code).toBe(0);
    expect(datasetVersionAt(out, MANIFEST_KEY)).toMatch(/^v00000004-/);
  });

  test('a run that stopped after its claim left the root behind: verify says so, and the next pack repairs it first', async () => {
    // GIVEN two versions, and the root's manifest.json put back to version 1 (what a run that stopped after its claim leaves)
    const src = folder('src');
    const out = folder('out');
    writeFiles(src, { 'a/1.jpg': '1\n', 'b/1.jpg': 'b1\n' });
    await runCli('pack', '--content', 'any', src, out);
    const first = datasetVersionAt(out, MANIFEST_KEY);
    writeFiles(src, { 'a/2.jpg': '2\n' });
    await runCli('pack', '--content', 'any', src, out);
    const second = datasetVersionAt(out, MANIFEST_KEY);
    fs.copyFileSync(path.join(out, new VersionLayout(first).manifestKey), path.join(out, MANIFEST_KEY));

    // WHEN / THEN: verify names the problem and the fix
    const before = await runCli('verify', out);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain(`manifest.json: names version ${first}, but the newest published version is ${second}`);
    expect(before.stdout).toContain('training-io verify --repair');
    // the next pack repairs the root before anything else, then finds the source unchanged
    const rerun = await runCli('pack', '--content', 'any', src, out);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(/repaired\s+manifest\.json: behind the newest claim/);
    expect(rerun.stdout).toContain('already current');
    expect(datasetVersionAt(out, MANIFEST_KEY)).toBe(second);
    expect((await runCli('verify', out)).code).toBe(0);
    expect(listFiles(out).filter((key) => key.startsWith('published/'))).toHaveLength(2);
  });
});

describe('training-io verify --repair on S3: the channel manifests follow manifest.json', () => {
  let server: S3TestServer;
  let client: S3Client;
  let bucket: string;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    server = await startS3Server();
    client = s3TestClient(server);
    bucket = await createTestBucket(client, 'protocol-cli');
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_PROFILE']) saved[name] = process.env[name];
    delete process.env.AWS_PROFILE;
    process.env.AWS_ACCESS_KEY_ID = server.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = server.credentials.secretAccessKey;
  }, 60_000);

  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    client?.destroy();
    await server?.stop();
  });

  const s3 = () => ['--endpoint-url', server.endpoint, '--region', server.region];
  const text = async (key: string) => (await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();

  test('shards.manifest left at version 1 while manifest.json names version 2: verify fails, --repair rewrites it, verify passes', async () => {
    // GIVEN two versions on S3, and the root's shards.manifest put back to version 1's
    await putTestObjects(client, bucket, { 'raw/a/1.jpg': 'a1', 'raw/b/1.jpg': 'b1' });
    expect((await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed/`, ...s3())).code).toBe(0);
    const first = (JSON.parse(await text(`packed/${MANIFEST_KEY}`)) as { datasetVersion: string }).datasetVersion;
    await putTestObjects(client, bucket, { 'raw/a/2.jpg': 'a2' });
    expect((await runCli('pack', '--content', 'any', `s3://${bucket}/raw/`, `s3://${bucket}/packed/`, ...s3())).code).toBe(0);
    const stale = await text(`packed/${new VersionLayout(first).shardsChannelKey}`);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: `packed/${SHARDS_CHANNEL_MANIFEST}`, Body: stale }));

    // WHEN / THEN
    const before = await runCli('verify', `s3://${bucket}/packed/`, ...s3());
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/problem: shards\.manifest: is not the channel manifest of the newest published version v00000002-/);
    const repaired = await runCli('verify', `s3://${bucket}/packed/`, '--repair', ...s3());
    expect(repaired.stdout).toContain('repaired: shards.manifest now name the newest published version');
    expect(repaired.code).toBe(0);
    expect(await text(`packed/${SHARDS_CHANNEL_MANIFEST}`)).not.toBe(stale);
  });
});
