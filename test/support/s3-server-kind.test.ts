import type { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { createTestBucket, putTestObjects, s3TestClient, startS3Server } from './s3-server';
import { serverLacks } from './s3-server-capabilities';
import { chooseS3Server, currentS3ServerKind, S3_SERVER_VARIABLE } from './s3-server-kind';

/** Runs `use` with the server variable set to `value` (unset when undefined), then restores it. */
async function withServerVariable<T>(value: string | undefined, use: () => Promise<T>): Promise<T> {
  const saved = process.env[S3_SERVER_VARIABLE];
  if (value === undefined) delete process.env[S3_SERVER_VARIABLE];
  else process.env[S3_SERVER_VARIABLE] = value;
  try {
    return await use();
  } finally {
    if (saved === undefined) delete process.env[S3_SERVER_VARIABLE];
    else process.env[S3_SERVER_VARIABLE] = saved;
  }
}

describe('the test S3 server', () => {
  test(`${S3_SERVER_VARIABLE}=s3rver picks s3rver from npm, naming its version`, async () => {
    const choice = await withServerVariable('s3rver', () => chooseS3Server());
    expect(choice).toEqual({ kind: 's3rver', name: expect.stringMatching(/^s3rver \d+\.\d+\.\d+ \(npm\)$/) });
  });

  test(`a ${S3_SERVER_VARIABLE} value other than swift, s3rver or auto is refused, naming the variable and the value`, async () => {
    await expect(withServerVariable('minio', () => chooseS3Server())).rejects.toThrow(
      `${S3_SERVER_VARIABLE} must be swift, s3rver or auto, got 'minio'`);
  });

  test('jest\'s global setup told the workers which server it picked', () => {
    expect(['swift', 's3rver']).toContain(process.env[S3_SERVER_VARIABLE]);
    expect(currentS3ServerKind()).toBe(process.env[S3_SERVER_VARIABLE]);
  });

  test('Swift lacks nothing the tests check; s3rver lacks abort and the listing of uploads, and says so', () => {
    expect(serverLacks('swift', 'AbortMultipartUpload')).toBeUndefined();
    expect(serverLacks('swift', 'ListMultipartUploads')).toBeUndefined();
    expect(serverLacks('s3rver', 'AbortMultipartUpload')).toMatch(/^s3rver has no AbortMultipartUpload/);
    expect(serverLacks('s3rver', 'ListMultipartUploads')).toMatch(/^s3rver has no ListMultipartUploads/);
  });

  test('s3rver keeps its port and its objects across kill() and restart(), as Swift does', async () => {
    // GIVEN
    const server = await withServerVariable('s3rver', () => startS3Server());
    let client: S3Client | undefined;
    try {
      client = s3TestClient(server);
      const bucket = await createTestBucket(client, 'kind');
      await putTestObjects(client, bucket, { 'a.txt': 'kept' });

      // WHEN
      await server.kill();
      // A client of its own: the other's kept-alive socket would see a reset, not a refusal.
      const probe = s3TestClient(server);
      const refused = await probe.send(new HeadBucketCommand({ Bucket: bucket })).then(() => 'answered', (error: Error) => error.message);
      probe.destroy();
      await server.restart();

      // THEN
      expect(refused).toMatch(/ECONNREFUSED/);
      expect(server.kind).toBe('s3rver');
      const back = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a.txt' }));
      expect(await back.Body!.transformToString()).toBe('kept');
    } finally {
      client?.destroy();
      await server.stop();
    }
  });
});
