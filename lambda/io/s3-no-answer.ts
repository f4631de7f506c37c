/** Which wait ran out: opening the connection, a gap without a byte, or the whole request. */
export type UnansweredWait = 'connect' | 'idle' | 'request';

/**
 * An S3 call that got no answer in time: names the operation, how long it waited and the endpoint.
 * Named `TimeoutError`, as the SDK names its own, so that s3-retry.ts retries it as transient and,
 * once the retries run out, the S3StorageError adds the key: `s3://b/k: GetObject: no answer
 * within 10 s from https://…`. Made by the engine's client middleware (s3-client.ts) from the SDK's
 * timeouts, and by the signed GETs (s3-signed-get.ts) from their own.
 */
export class S3NoAnswerError extends Error {
  constructor(
    /** The S3 operation, e.g. `GetObject`. */
    public readonly operation: string,
    public readonly wait: UnansweredWait,
    public readonly waitedMs: number,
    /** `http://127.0.0.1:9000`, `https://bucket.s3.us-east-1.amazonaws.com`. */
    public readonly endpoint: string,
    cause?: unknown,
  ) {
    super(`${operation}: ${WORDS[wait]} within ${seconds(waitedMs)} s from ${endpoint}`, { cause });
    this.name = 'TimeoutError';
  }
}

const WORDS: Record<UnansweredWait, string> = {
  connect: 'no connection',
  idle: 'no answer',
  request: 'no complete answer',
};

/** Seconds to three digits: 10, 300, and a test's 0.2 rather than 0. */
function seconds(ms: number): string {
  return String(Number((ms / 1000).toPrecision(3)));
}

/**
 * Whether a run failed because the store stopped answering (an S3NoAnswerError, or the
 * S3StorageError its retries ended in): cleaning up after it would only wait out the same timeouts
 * again and then hide the cause, so the run leaves its unpublished folder to the next publish's prune.
 */
export function storeDidNotAnswer(error: unknown): boolean {
  const fields = error as { name?: unknown; code?: unknown } | undefined;
  return fields?.name === 'TimeoutError' || fields?.code === 'TimeoutError';
}
