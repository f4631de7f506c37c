import * as fs from 'node:fs';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  AbortMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { S3TestServer } from './s3-server';
import { createTestBucket, s3TestClient } from './s3-server';
import type { S3ServerKind } from './s3-server-kind';
import { currentS3ServerKind } from './s3-server-kind';

/**
 * What S3 does, the tests check, and s3rver does not (Swift does all of it): each with the reason a
 * check that needs it is not made on s3rver. Everything else runs against both servers.
 */
const S3RVER_LACKS = {
  ConditionalPut: 's3rver ignores If-None-Match on PUT (it overwrites), so two runs would both publish',
  AbortMultipartUpload: 's3rver has no AbortMultipartUpload (405 MethodNotAllowed)',
  ListMultipartUploads: 's3rver has no ListMultipartUploads (501 NotImplemented)',
  SignatureCheck: 's3rver accepts any signature: a wrong secret key is never refused (403 SignatureDoesNotMatch)',
} as const;

/** An S3 behaviour some test servers lack. */
export type S3Capability = keyof typeof S3RVER_LACKS;

/** The variable naming the file where skipped checks are written (jest's global setup sets it; the teardown sums them up). */
export const S3_SKIPS_VARIABLE = 'CDK_TRAINING_IO_S3_SKIPS';

/** Why `kind` cannot be used to check `capability`, or undefined when it can. */
export function serverLacks(kind: S3ServerKind, capability: S3Capability): string | undefined {
  return kind === 's3rver' ? S3RVER_LACKS[capability] : undefined;
}

/**
 * `test(name, fn)`; on a server without `capability`, a test in its place that checks the server
 * still lacks it, by the probe below, its name saying so and why. Nothing is skipped silently, and
 * if the server ever gains the capability that test fails: then the real one can run there.
 */
export function testWhenServerCan(capability: S3Capability, server: () => S3TestServer, name: string, fn: () => Promise<void>, timeout?: number): void {
  const reason = serverLacks(currentS3ServerKind(), capability);
  if (reason === undefined) {
    test(name, fn, timeout);
    return;
  }
  recordSkip(`test '${name}'`, reason);
  test(`${name} [not checked here: ${reason}; checked instead that the server still lacks ${capability}]`, async () => {
    const client = s3TestClient(server());
    try {
      await expectServerLacks(capability, client, server());
    } finally {
      client.destroy();
    }
  }, timeout);
}

/** Shows, against the running server, that it lacks `capability` as S3RVER_LACKS says. */
async function expectServerLacks(capability: S3Capability, client: S3Client, server: S3TestServer): Promise<void> {
  const bucket = await createTestBucket(client, `lacks-${capability}`);
  switch (capability) {
    case 'ConditionalPut': {
      // The second conditional PUT of an existing key is taken, not refused with 412.
      for (const body of ['first', 'second']) {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'claim', Body: body, IfNoneMatch: '*' }));
      }
      const stored = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'claim' }));
      expect(await stored.Body!.transformToString()).toBe('second');
      return;
    }
    case 'AbortMultipartUpload': {
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'upload' }));
      await expect(client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'upload', UploadId })))
        .rejects.toMatchObject({ $metadata: { httpStatusCode: 405 } });
      return;
    }
    case 'ListMultipartUploads':
      await expect(client.send(new ListMultipartUploadsCommand({ Bucket: bucket })))
        .rejects.toMatchObject({ $metadata: { httpStatusCode: 501 } });
      return;
    case 'SignatureCheck': {
      const wrongKey = s3TestClient({ ...server, credentials: { ...server.credentials, secretAccessKey: 'not-the-secret' } });
      try {
        await expect(wrongKey.send(new ListObjectsV2Command({ Bucket: bucket }))).resolves.toMatchObject({ $metadata: { httpStatusCode: 200 } });
      } finally {
        wrongKey.destroy();
      }
    }
  }
}

/**
 * Runs the checks that need `capability`, or on a server without it records them as skipped (the run
 * ends with the count and the reason), so that the rest of the test still runs there.
 */
export async function whenServerCan(kind: S3ServerKind, capability: S3Capability, checks: () => Promise<void>): Promise<void> {
  const reason = serverLacks(kind, capability);
  if (reason === undefined) {
    await checks();
    return;
  }
  recordSkip(`a check in '${expect.getState().currentTestName}'`, reason);
}

function recordSkip(what: string, reason: string): void {
  const file = process.env[S3_SKIPS_VARIABLE];
  if (file) fs.appendFileSync(file, `${JSON.stringify({ what, reason })}\n`);
}

/** The skips written to `file`, counted by reason: `1 test and 5 checks skipped: <reason>` lines. */
export function summarizeSkips(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  const byReason = new Map<string, { tests: number; checks: number }>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const { what, reason } = JSON.parse(line) as { what: string; reason: string };
    const counts = byReason.get(reason) ?? { tests: 0, checks: 0 };
    if (what.startsWith('test ')) counts.tests++;
    else counts.checks++;
    byReason.set(reason, counts);
  }
  const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return [...byReason].map(([reason, { tests, checks }]) => `${counted(tests, 'test')} and ${counted(checks, 'check')} skipped: ${reason}`);
}
