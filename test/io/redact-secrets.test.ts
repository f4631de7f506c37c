import { REDACTED, redactSecrets } from '../../lambda/io/redact-secrets';
import { withS3Retry } from '../../lambda/io/s3-retry';
import { runCli } from '../support/run-cli';

/*
 * Issue 38, point 5: no secret in any message. One redaction (lambda/io/redact-secrets.ts)
 * takes endpoint credentials and presigned query values out of every error that may show a URL.
 */

const PRESIGNED = 'https://bucket.s3.us-east-1.amazonaws.com/shards/part-00000.tfrecord?X-Amz-Algorithm=AWS4-HMAC-SHA256'
  + '&X-Amz-Credential=AKIAEXAMPLE%2F20261128%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261128T000000Z&X-Amz-Expires=900'
  + '&X-Amz-SignedHeaders=host&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLE&X-Amz-Signature=0123456789abcdef';

describe('redactSecrets', () => {
  test.each([
    ['an endpoint\'s user and password', 'connect ECONNREFUSED (endpoint http://admin:hunter2@127.0.0.1:9000/)', `connect ECONNREFUSED (endpoint http://${REDACTED}@127.0.0.1:9000/)`],
    ['a user without a password', 'https://admin@minio.internal:9000', `https://${REDACTED}@minio.internal:9000`],
    ['a password with odd characters', 'http://u:p%40ss:w0rd!@host/x', `http://${REDACTED}@host/x`],
    ['a SigV4 presigned URL\'s credential, token and signature', PRESIGNED,
      'https://bucket.s3.us-east-1.amazonaws.com/shards/part-00000.tfrecord?X-Amz-Algorithm=AWS4-HMAC-SHA256'
      + `&X-Amz-Credential=${REDACTED}&X-Amz-Date=20261128T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Security-Token=${REDACTED}&X-Amz-Signature=${REDACTED}`],
    ['a SigV2 presigned URL', 'GET http://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIAEXAMPLE&Expires=1&Signature=abc%2Bdef failed',
      `GET http://b.s3.amazonaws.com/k?AWSAccessKeyId=${REDACTED}&Expires=1&Signature=${REDACTED} failed`],
  ])('takes out %s', (_, text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });

  test.each([
    ['an s3:// key with an @ in it', 's3://bucket/raw/cat/me@home.jpg: no such object (NoSuchKey)'],
    ['an endpoint without credentials', 'no answer within 10 s from http://127.0.0.1:9000'],
    ['an e-mail address', 'ask data-team@example.com'],
  ])('leaves %s as it is', (_, text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('every error path that shows a URL redacts it', () => {
  test('an S3 error whose message carries a presigned URL and an endpoint\'s password names neither', async () => {
    // GIVEN: a call that fails with what a proxy or an SDK might put in its message
    const failing = () => Promise.reject(Object.assign(new Error(`AccessDenied at ${PRESIGNED} via http://svc:s3cr3t@proxy.internal:3128`), {
      name: 'AccessDenied', Code: 'AccessDenied', $metadata: { httpStatusCode: 403 },
    }));

    // WHEN
    const call = withS3Retry('s3://bucket/shards/part-00000.tfrecord', failing);

    // THEN
    await expect(call).rejects.toMatchObject({ name: 'S3StorageError' });
    const message = await call.catch((error: Error) => error.message);
    expect(message).toContain(`X-Amz-Signature=${REDACTED}`);
    expect(message).toContain(`http://${REDACTED}@proxy.internal:3128`);
    expect(message).not.toMatch(/0123456789abcdef|IQoJb3JpZ2luX2VjEXAMPLE|AKIAEXAMPLE|s3cr3t/);
  });

  test('the CLI prints a refused --endpoint-url without its password', async () => {
    // WHEN
    const run = await runCli('verify', 's3://bucket/dataset/', '--endpoint-url', 'ftp://admin:hunter2@127.0.0.1:9000/');

    // THEN
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--endpoint-url must be an http:// or https:// URL, got 'ftp://${REDACTED}@127.0.0.1:9000/'`);
    expect(run.stderr).not.toContain('hunter2');
  });
});
