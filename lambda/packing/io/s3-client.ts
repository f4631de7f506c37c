import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { S3Client } from '@aws-sdk/client-s3';

/** How long an S3 call may wait on the network before it fails (and is retried, see withS3Retry). */
export interface S3Timeouts {
  /** To open a connection (default 10,000 ms). */
  readonly connectionTimeoutMs?: number;
  /** Without a byte sent or received on an open connection (default 30,000 ms): a server that accepted and never answers. */
  readonly idleTimeoutMs?: number;
  /** For a whole request and its answer (default 300,000 ms): a server that trickles. */
  readonly requestTimeoutMs?: number;
}

/**
 * The S3 client the engine's sources and sinks are made for, in the Lambda handlers and the CLI
 * alike. One attempt per call: S3Source and S3Sink retry themselves (`withS3Retry`), and SDK
 * retries on top would multiply the attempts. No checksum work by the SDK: the sink hands S3 the
 * CRC32C it computed natively, and the SDK's JavaScript checksums (on requests, and validating
 * responses) would cost more CPU than the small objects they cover. Every call has timeouts: the
 * SDK has none by default, and an endpoint that accepts connections but never answers would hang
 * a run forever. A call that got no answer fails with an error naming the endpoint.
 */
export function engineS3Client(config: S3ClientConfig = {}, timeouts: S3Timeouts = {}): S3Client {
  const resolved = resolveTimeouts(timeouts);
  const client = new S3Client({
    ...config,
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Options rather than a NodeHttpHandler: the SDK makes its own, and the handlers' bundles need no copy of it.
    requestHandler: {
      connectionTimeout: resolved.connectionTimeoutMs,
      socketTimeout: resolved.idleTimeoutMs,
      requestTimeout: resolved.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
  CLIENT_TIMEOUTS.set(client, resolved);
  client.middlewareStack.add((next) => async (args) => {
    try {
      return await next(args);
    } catch (error) {
      throw namingEndpoint(error, (args as { request?: EndpointRequest }).request);
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

function resolveTimeouts(timeouts: S3Timeouts): Required<S3Timeouts> {
  return {
    connectionTimeoutMs: timeouts.connectionTimeoutMs ?? 10_000,
    idleTimeoutMs: timeouts.idleTimeoutMs ?? 30_000,
    requestTimeoutMs: timeouts.requestTimeoutMs ?? 300_000,
  };
}

/** Where a request went: enough to name the endpoint in an error. */
export interface EndpointRequest {
  readonly protocol?: string;
  readonly hostname?: string;
  readonly port?: number;
}

/** Adds the endpoint to the message of an error the server did not answer with (refused, reset, timed out). */
export function namingEndpoint(error: unknown, request: EndpointRequest | undefined): unknown {
  const fields = error as { message?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!request?.hostname || typeof fields?.message !== 'string' || fields.$metadata?.httpStatusCode !== undefined) return error;
  const endpoint = `${request.protocol ?? 'https:'}//${request.hostname}${request.port ? `:${request.port}` : ''}`;
  if (fields.message.includes(endpoint)) return error;
  // Not by name: the SDK calls a reset a TimeoutError too.
  fields.message = /timed out|exceeded the configured|within the configured timeout/.test(fields.message)
    ? `no answer from ${endpoint} in time: ${fields.message}`
    : `${fields.message} (endpoint ${endpoint})`;
  return error;
}
