/**
 * How both languages retry S3 (issues 45 and 47): the Node engine (lambda/io/s3-retry.ts) and the
 * Python reader (container/shardio/source/s3_objects.py, through the generated shardio/contract.py).
 *
 * A call that fails with a retryable error (a throttling or transient code below, a 5xx but 501, a
 * 429, a connection reset, cut or timed out, a body that came short) is tried `attempts` times, and
 * then again for as long as `budgetMs` has not passed since its first attempt began, `attemptCeiling`
 * attempts at most: a multi-day training job outlasts a network blip of seconds, and a dead endpoint
 * still fails within about a minute. Before attempt n + 1 the caller waits a uniform draw below
 * min(maxDelayMs, baseDelayMs × 2^(n-1)) ("full jitter", AWS Architecture Blog, "Exponential
 * Backoff And Jitter"). The final error says the attempts made and the seconds they took.
 *
 * Where the languages deliberately differ (the one place that says so): a network failure is
 * recognised by each language's own vocabulary, Node's error codes (`ECONNRESET`…, in s3-retry.ts)
 * and Python's exception classes (botocore's, urllib3's, `ConnectionError`, `socket.timeout`); and
 * the Python reader also retries a shard whose bytes fail the manifest's size or CRC check, which it
 * checks while downloading (the Node engine checks what it writes, not what it reads back).
 */
export const S3_RETRY_RULE = {
  /** Attempts every retryable failure gets, whatever the budget. */
  attempts: 6,
  /** Retries go on until this long after the first attempt began (configurable: `retryBudgetMs`, `retry_seconds`). */
  budgetMs: 60_000,
  /** Attempts at most, should the clock not move or the budget be set far higher: ~25 fill the default budget. */
  attemptCeiling: 100,
  /** The longest wait before the second attempt; doubled for each later one. */
  baseDelayMs: 100,
  /** The longest wait before any attempt. */
  maxDelayMs: 5_000,
} as const;

/**
 * The environment variable that sets the retry budget, in seconds (0: the attempts only), where no
 * option does: read by the Python reader and by the `training-io` CLI; the Lambda handlers follow the
 * rule as it is.
 */
export const S3_RETRY_SECONDS_ENV = 'SHARDIO_S3_RETRY_SECONDS';

/**
 * S3's and the AWS SDKs' codes that ask for less load (a 503 or 429 means the same): retried by the
 * rule, and reported as throttling (the reader's error then says how to ask less of S3).
 */
export const THROTTLING_CODES = [
  'SlowDown', 'Throttling', 'ThrottlingException', 'ThrottledException', 'RequestThrottled', 'RequestThrottledException',
  'TooManyRequests', 'TooManyRequestsException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded',
  'BandwidthLimitExceeded',
] as const;

/**
 * The service's transient failures, retried by the rule besides the throttling codes. A skewed clock
 * (RequestTimeTooSkewed) is among them: the Node SDK corrects its clock offset from the answer's
 * Date before the retry, and a Python host's clock may be corrected meanwhile (NTP).
 */
export const TRANSIENT_CODES = [
  'RequestTimeout', 'RequestTimeoutException', 'InternalError', 'ServiceUnavailable', 'RequestTimeTooSkewed',
] as const;
