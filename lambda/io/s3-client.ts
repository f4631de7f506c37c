import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { S3Client } from '@aws-sdk/client-s3';
import type { UnansweredWait } from './s3-no-answer';
import { S3NoAnswerError } from './s3-no-answer';
import { redactSecrets } from './redact-secrets';
import type { S3Timeouts } from './s3-timeouts';
import { resolveTimeouts, timeoutHandlerOptions } from './s3-timeouts';

export type { S3Timeouts } from './s3-timeouts';

/**
 * The S3 client the engine's sources and sinks are made for, in the Lambda handlers and the CLI
 * alike. One attempt per call: S3Source and S3Sink retry themselves (`withS3Retry`), and SDK
 * retries on top would multiply the attempts. No checksum work by the SDK: the sink hands S3 the
 * CRC32C it computed natively, and the SDK's JavaScript checksums (on requests, and validating
 * responses) would cost more CPU than the small objects they cover. Every call has timeouts: the
 * SDK has none by default, and an endpoint that accepts connections but never answers would hang
 * a run forever. A call that got no answer in time fails with an S3NoAnswerError naming the
 * operation, the wait and the endpoint (retried as transient; the retries' error adds the key).
 */
export function engineS3Client(config: S3ClientConfig = {}, timeouts: S3Timeouts = {}): S3Client {
  const resolved = resolveTimeouts(timeouts);
  const client = new S3Client({
    ...config,
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: timeoutHandlerOptions(resolved),
  });
  CLIENT_TIMEOUTS.set(client, resolved);
  // Inside the SDK's retry step (priority low), so the error is the handler's own, not yet wrapped.
  client.middlewareStack.add((next, context) => async (args) => {
    try {
      return await next(args);
    } catch (error) {
      throw explainUnanswered(error, context.commandName, (args as { request?: EndpointRequest }).request, resolved);
    }
  }, { step: 'finalizeRequest', name: 'namingEndpointOfUnansweredCalls', priority: 'low' });
  return client;
}

/** The timeouts of a client's calls, for the reads that bypass its handler (S3SignedGet). */
const CLIENT_TIMEOUTS = new WeakMap<S3Client, Required<S3Timeouts>>();

/** The timeouts `engineS3Client` gave `client`; the defaults for any other client. */
export function engineS3Timeouts(client: S3Client): Required<S3Timeouts> {
  return CLIENT_TIMEOUTS.get(client) ?? resolveTimeouts({});
}

/** Where a request went: enough to name the endpoint in an error. */
export interface EndpointRequest {
  readonly protocol?: string;
  readonly hostname?: string;
  readonly port?: number;
}

/** `http://127.0.0.1:9000`: where a request went. */
export function endpointOf(request: EndpointRequest & { readonly hostname: string }): string {
  return `${request.protocol ?? 'https:'}//${request.hostname}${request.port ? `:${request.port}` : ''}`;
}

/** Adds the endpoint to the message of an error the server did not answer with (refused, reset). */
export function namingEndpoint(error: unknown, request: EndpointRequest | undefined): unknown {
  const fields = error as { message?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!request?.hostname || typeof fields?.message !== 'string' || fields.$metadata?.httpStatusCode !== undefined) return error;
  const endpoint = endpointOf({ ...request, hostname: request.hostname });
  if (!fields.message.includes(endpoint)) fields.message = redactSecrets(`${fields.message} (endpoint ${endpoint})`);
  return error;
}

/**
 * The SDK's timeout as an S3NoAnswerError (operation, wait, endpoint); any other error that came
 * without an answer with the endpoint added. By the message, not by name: the SDK calls a reset a
 * TimeoutError too, and its three timeouts share that name.
 */
function explainUnanswered(error: unknown, commandName: string | undefined, request: EndpointRequest | undefined,
  timeouts: Required<S3Timeouts>): unknown {
  const message = (error as { message?: unknown } | undefined)?.message;
  const wait = typeof message === 'string' ? sdkTimeoutWait(message) : undefined;
  if (!wait || !request?.hostname) return namingEndpoint(error, request);
  const waitedMs = wait === 'connect' ? timeouts.connectionTimeoutMs : wait === 'idle' ? timeouts.idleTimeoutMs : timeouts.requestTimeoutMs;
  const operation = (commandName ?? 'S3 call').replace(/Command$/, '');
  return new S3NoAnswerError(operation, wait, waitedMs, endpointOf({ ...request, hostname: request.hostname }), error);
}

/** Which of its timeouts @smithy/node-http-handler's message names (pinned by package-lock; checked by test/packing/honest-failures.test.ts). */
function sdkTimeoutWait(message: string): UnansweredWait | undefined {
  if (/did not establish a connection/.test(message)) return 'connect';
  if (/of inactivity/.test(message)) return 'idle';
  if (/requestTimeout/.test(message)) return 'request';
  return undefined;
}
