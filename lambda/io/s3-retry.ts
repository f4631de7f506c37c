import { setTimeout as sleep } from 'node:timers/promises';
import { S3_RETRY_RULE, THROTTLING_CODES, TRANSIENT_CODES } from '../../lib/contract/s3-retry-rule';
import { S3NoAnswerError } from './s3-no-answer';
import { redactSecrets } from './redact-secrets';

/**
 * How S3 calls are retried: the rule of lib/contract/s3-retry-rule.ts (S3_RETRY_RULE), which the
 * Python reader follows too. Every retryable error gets `maxAttempts` attempts with exponential
 * backoff and full jitter, and more until `retryBudgetMs` have passed since the first attempt began.
 * The SDK client's own retries (its `maxAttempts`, 3 by default) come on top of these: give the
 * storage classes clients with `maxAttempts: 1` to have one policy only.
 */
export interface S3RetryOptions {
  /** Attempts every retryable failure gets, the first included, whatever the budget (default 6). */
  readonly maxAttempts?: number;
  /** Backoff before the second attempt, doubled for each later one (default 100 ms). */
  readonly baseDelayMs?: number;
  /** Longest backoff (default 5,000 ms). */
  readonly maxDelayMs?: number;
  /**
   * After `maxAttempts`, a retryable error is retried until this long after the first attempt began
   * (default 60,000 ms; 0: the attempts only), 100 attempts at most.
   */
  readonly retryBudgetMs?: number;
  /** Called before each retry, e.g. to count retries in metrics. */
  readonly onRetry?: (retry: S3Retry) => void;
  /** The clock and the waits (default: the real ones); tests pass one whose waits take no time. */
  readonly clock?: RetryClock;
  /** A number in [0, 1) for the jitter (default Math.random). */
  readonly random?: () => number;
}

/** Time as the retries see it. */
export interface RetryClock {
  /** Milliseconds, monotonic. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

const REAL_CLOCK: RetryClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

/** One retry about to happen. */
export interface S3Retry {
  /** The `s3://` address of what the call works on. */
  readonly uri: string;
  /** The attempt that failed (1 for the first). */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

/**
 * A failed S3 call: names the `s3://` address, the S3 error code (or the network error code) and the
 * attempts made; a call that got no answer, the operation and the wait (`s3://b/k: GetObject: no answer within 10 s from …`).
 */
export class S3StorageError extends Error {
  constructor(
    /** The `s3://` address of what the call worked on. */
    public readonly uri: string,
    /** `NoSuchKey`, `SlowDown`, `ECONNRESET`…, or `undefined` when the error had none. */
    public readonly code: string | undefined,
    public readonly attempts: number,
    reason: string,
    cause: unknown,
    /** The HTTP status S3 answered the last attempt with; `undefined` when it did not answer. */
    public readonly status?: number,
  ) {
    super(redactSecrets(`${uri}: ${reason}`), { cause });
    this.name = 'S3StorageError';
  }
}

/** The throttling codes and the service's transient failures: every code the rule retries. */
const RETRIED_CODES: ReadonlySet<string> = new Set([...THROTTLING_CODES, ...TRANSIENT_CODES]);

/** Node's names for a connection refused, reset, cut or timed out (Python's are exception classes: s3-retry-rule.ts). */
const NETWORK_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN',
  'EAI_AGAIN', 'ERR_STREAM_PREMATURE_CLOSE', 'UND_ERR_SOCKET',
]);

interface SdkErrorFields {
  readonly name?: string;
  readonly code?: string;
  readonly Code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly $retryable?: unknown;
}

/** The S3 error code (`NoSuchKey`), else the network error code (`ECONNRESET`), else the error's name. */
export function s3ErrorCode(error: unknown): string | undefined {
  const fields = (error ?? {}) as SdkErrorFields;
  return fields.Code ?? networkErrorCode(error) ?? fields.code ?? fields.name;
}

/**
 * `ECONNRESET` and the like. The SDK turns an error from another realm (a vm context, as under jest)
 * into `Error('AWS SDK error wrapper for TimeoutError: read ECONNRESET')`, keeping only the text:
 * the code is then read from the message.
 */
function networkErrorCode(error: unknown): string | undefined {
  const fields = (error ?? {}) as SdkErrorFields & { message?: string };
  if (fields.code && NETWORK_CODES.has(fields.code)) return fields.code;
  const message = typeof fields.message === 'string' ? fields.message : '';
  const named = /\b(E[A-Z_]{3,}|UND_ERR_SOCKET)\b/.exec(message)?.[1];
  if (named && NETWORK_CODES.has(named)) return named;
  return /socket hang up/.test(message) ? 'ECONNRESET' : undefined;
}

/** The HTTP status S3 answered with, if it answered (an `S3StorageError` keeps its last attempt's). */
export function s3ErrorStatus(error: unknown): number | undefined {
  const fields = (error ?? {}) as SdkErrorFields & { readonly status?: number };
  return fields.$metadata?.httpStatusCode ?? (fields.name === 'S3StorageError' ? fields.status : undefined);
}

/** Whether the object or upload is not there (404): retrying cannot help. */
export function isS3NotFound(error: unknown): boolean {
  const code = s3ErrorCode(error);
  return s3ErrorStatus(error) === 404 || code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchUpload';
}

/**
 * Whether the caller may not read or write this object (403 AccessDenied): retrying cannot help.
 * Not a 403 about the credentials (SignatureDoesNotMatch, InvalidAccessKeyId): those say nothing of the object.
 */
export function isS3AccessDenied(error: unknown): boolean {
  const code = s3ErrorCode(error);
  if (code === 'AccessDenied' || code === 'AllAccessDisabled') return true;
  // A HEAD has no body to carry a code: the SDK names the error after the status.
  return s3ErrorStatus(error) === 403 && (code === undefined || code === 'Forbidden' || code === '403');
}

/** Throttling, 5xx but 501, 429, a conditional write's conflict, connection resets and timeouts: worth another attempt after a backoff. */
export function isS3Retryable(error: unknown): boolean {
  if (isS3NotFound(error)) return false;
  const fields = (error ?? {}) as SdkErrorFields;
  const status = s3ErrorStatus(error);
  // 501 NotImplemented is an answer, not an outage; 409 ConditionalRequestConflict asks for a retry.
  if (status === 501 || fields.Code === 'NotImplemented') return false;
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  if (fields.Code === 'ConditionalRequestConflict') return true;
  if (fields.Code && RETRIED_CODES.has(fields.Code)) return true;
  if (fields.name && RETRIED_CODES.has(fields.name)) return true;
  if (networkErrorCode(error)) return true;
  return fields.name === 'TimeoutError' || (fields.$retryable !== undefined && fields.$retryable !== false);
}

/**
 * Runs one S3 call with retries (S3RetryOptions says the rule); anything not retryable (404, 403,
 * bad request) fails at once. The final error is an `S3StorageError` naming `uri`, the attempts and
 * how long they took.
 */
export async function withS3Retry<T>(uri: string, call: () => Promise<T>, options: S3RetryOptions = {}): Promise<T> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? S3_RETRY_RULE.attempts);
  const baseDelayMs = options.baseDelayMs ?? S3_RETRY_RULE.baseDelayMs;
  const maxDelayMs = options.maxDelayMs ?? S3_RETRY_RULE.maxDelayMs;
  const retryBudgetMs = options.retryBudgetMs ?? S3_RETRY_RULE.budgetMs;
  const clock = options.clock ?? REAL_CLOCK;
  const random = options.random ?? Math.random;
  const started = clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const elapsedMs = clock.now() - started;
      const withinBudget = elapsedMs < retryBudgetMs && attempt < S3_RETRY_RULE.attemptCeiling;
      if (!isS3Retryable(error) || (attempt >= maxAttempts && !withinBudget)) throw toStorageError(uri, error, attempt, elapsedMs);
      const delayMs = Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 30)));
      options.onRetry?.({ uri, attempt, delayMs, error });
      await clock.sleep(delayMs);
    }
  }
}

function toStorageError(uri: string, error: unknown, attempts: number, elapsedMs: number): S3StorageError {
  if (error instanceof S3StorageError) return error;
  const code = s3ErrorCode(error);
  const status = s3ErrorStatus(error);
  const message = error instanceof Error ? error.message : String(error);
  const tried = attempts > 1 ? ` after ${attempts} attempts in ${(elapsedMs / 1000).toFixed(1)} s` : '';
  const reason = isS3NotFound(error)
    ? `no such object (${code ?? 'HTTP 404'})`
    : error instanceof S3NoAnswerError
      ? `${message}${tried}`
      : `${code ?? 'error'}${status ? ` (HTTP ${status})` : ''}: ${message}${tried}`;
  return new S3StorageError(uri, code, attempts, reason, error, status);
}
