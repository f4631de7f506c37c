"""The contract between the TypeScript side and this reader, generated from lib/contract/ by
`npm run contract:python` (scripts/python-contract.mjs): do not edit; change lib/contract/ and
regenerate. test/contract/python-contract.test.ts fails while the two differ.

The layout's names and the version id's shape (layout.py builds the keys from them), the shard and
record ceilings (records.py), the JSON limits (json_limits.py), the multi-part sample's key feature and
part kinds (lib/contract/sample-parts.ts), and the S3 retry rule with its codes
(s3_objects.py): what the rule is,
and where the two languages deliberately differ, is said in lib/contract/s3-retry-rule.ts.
"""


# lib/contract/dataset-layout.ts

DATASET_LAYOUT = {"manifest": "manifest.json", "versions": "versions/", "published": "published/", "plan": "_plan/",
    "shardsChannel": "shards.manifest", "indexChannel": "index.manifest", "shardsFolder": "shards/",
    "indexFolder": "index/", "membersFolder": "members/"}
"""The names of a packed dataset's layout (ARCHITECTURE.md "Dataset layout"): one definition for the
constructs, the packing engine (lambda/packing/dataset-layout.ts builds the keys from these) and,
through the generated container/shardio/contract.py (`npm run contract:python`), the Python reader."""

VERSION_ID_PATTERN = "v([0-9]{8})-([0-9a-f]{8})"
"""A version id, `v<sequence, 8 digits>-<8 random hex digits>` (`v00000002-1a2b3c4d`): the shape as a
regular expression's source, ASCII only in both languages (`[0-9]`, never `\\d`, which matches
other scripts' digits in Python), the sequence in group 1. Match it whole (`^…$`, `fullmatch`)."""

VERSION_SEQUENCE_DIGITS = 8
"""Digits of a version's sequence number, in its id and its claim's key (`published/00000002.json`)."""

# lib/contract/shard-limits.ts

MIN_SHARD_BYTES = 1048576
"""Shards are 1–128 MiB, 64 MiB by default: large enough that per-object costs (S3 requests, FIFO
switches, file opens) vanish, small enough to spread over many readers. One packer Lambda writes
one shard, so the ceiling also bounds a packer's memory and a Pipe-mode FIFO's restart cost
(ARCHITECTURE.md "Record formats")."""

DEFAULT_SHARD_BYTES = 67108864
"""The default target shard size (lib/contract/packing-settings.ts `normalizePackingSettings` applies it to a run)."""

MAX_SHARD_BYTES = 134217728
"""The largest target shard size, and the ceiling of any shard of more than one file."""

# lib/contract/s3-retry-rule.ts

S3_RETRY_RULE = {"attempts": 6, "budgetMs": 60000, "attemptCeiling": 100, "baseDelayMs": 100, "maxDelayMs": 5000}
"""How both languages retry S3 (issues 45 and 47): the Node engine (lambda/io/s3-retry.ts) and the
Python reader (container/shardio/source/s3_objects.py, through the generated shardio/contract.py).

A call that fails with a retryable error (a throttling or transient code below, a 5xx but 501, a
429, a connection reset, cut or timed out, a body that came short) is tried `attempts` times, and
then again for as long as `budgetMs` has not passed since its first attempt began, `attemptCeiling`
attempts at most: a multi-day training job outlasts a network blip of seconds, and a dead endpoint
still fails within about a minute. Before attempt n + 1 the caller waits a uniform draw below
min(maxDelayMs, baseDelayMs × 2^(n-1)) ("full jitter", AWS Architecture Blog, "Exponential
Backoff And Jitter"). The final error says the attempts made and the seconds they took.

Where the languages deliberately differ (the one place that says so): a network failure is
recognised by each language's own vocabulary, Node's error codes (`ECONNRESET`…, in s3-retry.ts)
and Python's exception classes (botocore's, urllib3's, `ConnectionError`, `socket.timeout`); and
the Python reader also retries a shard whose bytes fail the manifest's size or CRC check, which it
checks while downloading (the Node engine checks what it writes, not what it reads back)."""

S3_RETRY_SECONDS_ENV = "SHARDIO_S3_RETRY_SECONDS"
"""The environment variable that sets the retry budget, in seconds (0: the attempts only), where no
option does: read by the Python reader and by the `training-io` CLI; the Lambda handlers follow the
rule as it is."""

THROTTLING_CODES = ("SlowDown", "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottled",
    "RequestThrottledException", "TooManyRequests", "TooManyRequestsException",
    "ProvisionedThroughputExceededException", "RequestLimitExceeded", "BandwidthLimitExceeded")
"""S3's and the AWS SDKs' codes that ask for less load (a 503 or 429 means the same): retried by the
rule, and reported as throttling (the reader's error then says how to ask less of S3)."""

TRANSIENT_CODES = ("RequestTimeout", "RequestTimeoutException", "InternalError", "ServiceUnavailable",
    "RequestTimeTooSkewed")
"""The service's transient failures, retried by the rule besides the throttling codes. A skewed clock
(RequestTimeTooSkewed) is among them: the Node SDK corrects its clock offset from the answer's
Date before the retry, and a Python host's clock may be corrected meanwhile (NTP)."""

# lib/contract/json-limits.ts

MAX_JSON_DEPTH = 64
"""The most nesting a JSON document the engine, the CLI or the readers parse may have. The deepest
they write is 4 (manifest → shards → shard → field); a document 200,000 levels deep would end a
recursive parser (Python's json) in a bare RecursionError instead of an error naming the file."""

MAX_JSON_BYTES = 268435456
"""The largest JSON document parsed: a manifest of 10 million records in 8,000 shards is under 4 MB,
and one of 100,000 shards with its failures far under this. Parsing takes about 5 times a
document's size in memory, so a larger one is refused before it is parsed."""

# lib/contract/sample-parts.ts

SAMPLE_KEY_FEATURE = "sample/key"
"""The feature that holds a multi-part sample's key (the path up to the first dot of the name)."""

PART_KINDS = ("image", "json", "text", "bytes")
"""What a part holds, from its name's last extension: checked at pack time and decoded by the readers accordingly."""

PART_KIND_EXTENSIONS = {"image": ("jpg", "jpeg", "png"), "json": ("json",), "text": ("txt", "text", "cls", "caption")}
"""Extensions (lower case, the last one of a part's name) of each kind; any other is `bytes`."""
