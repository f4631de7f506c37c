/**
 * How long an S3 call may wait on the network before it fails (and is retried, see withS3Retry).
 * Seconds, not minutes: each call is retried up to 6 times, so a server that accepts connections
 * and never answers fails a call after about 6 × 10 s rather than hanging the run or taking many minutes.
 */
export interface S3Timeouts {
  /** To open a connection (default 3,000 ms). */
  readonly connectionTimeoutMs?: number;
  /** Without a byte sent or received on an open connection (default 10,000 ms): a server that accepted and never answers. */
  readonly idleTimeoutMs?: number;
  /** For a whole request and its answer (default 300,000 ms): a server that trickles; a 128 MiB shard upload needs minutes on a slow link. */
  readonly requestTimeoutMs?: number;
}

/**
 * The SDK request handler's options for these timeouts, for the engine's S3 client and the CLI's
 * other AWS clients (bin/cli/aws-clients.ts), which the SDK leaves without any. Options rather than
 * a NodeHttpHandler: the SDK makes its own, and the handlers' bundles need no copy of it. In a file
 * of its own, without the SDK: the CLI loads the S3 client only for s3:// locations.
 */
export function timeoutHandlerOptions(timeouts: S3Timeouts = {}) {
  const resolved = resolveTimeouts(timeouts);
  return {
    connectionTimeout: resolved.connectionTimeoutMs,
    socketTimeout: resolved.idleTimeoutMs,
    requestTimeout: resolved.requestTimeoutMs,
    throwOnRequestTimeout: true,
  };
}

/** The timeouts with their defaults. */
export function resolveTimeouts(timeouts: S3Timeouts): Required<S3Timeouts> {
  return {
    connectionTimeoutMs: timeouts.connectionTimeoutMs ?? 3_000,
    idleTimeoutMs: timeouts.idleTimeoutMs ?? 10_000,
    requestTimeoutMs: timeouts.requestTimeoutMs ?? 300_000,
  };
}
