"""GetObject under one S3 prefix with boto3: timeouts in seconds, transient errors retried, and every
failure naming the object and the operation.

The endpoint is the one the AWS SDKs read from the environment (`AWS_ENDPOINT_URL_S3`, else
`AWS_ENDPOINT_URL`, unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`): botocore reads these only
from 1.31, and Debian 12's is 1.29, so it is passed here. Credentials and region come from boto3's
default chain. Retries are ours, not botocore's: botocore retries a request whose answer did not
start, not a body cut or stalled mid-transfer, which is where a long shard GET fails.

Retries follow the rule both languages share (contract.py, from lib/contract/s3-retry-rule.ts): a
transient error (throttling, a 5xx, a connection reset or cut, a timeout, a body that came short or
corrupt) is tried `attempts` times, then again until `retry_seconds` have passed since the first
attempt (60 s by default, SHARDIO_S3_RETRY_SECONDS in the environment), so that a blip of seconds
ends no training job; each wait a uniform draw below min(5 s, 0.1 s × 2^(n-1)) before the n-th retry
(full jitter, AWS's "Exponential Backoff And Jitter").
Every message goes through errors.redact: botocore's name the endpoint URL, credentials and all.
"""
from __future__ import annotations

import os
import random
import socket
import time
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Dict, Optional, TypeVar

from ..contract import S3_RETRY_RULE, S3_RETRY_SECONDS_ENV, THROTTLING_CODES, TRANSIENT_CODES
from ..errors import redact

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
"""Seconds to connect, and between two reads of a body, before the attempt counts as failed."""
DEFAULT_ATTEMPTS = S3_RETRY_RULE["attempts"]
"""Attempts every transient failure gets, whatever the retry budget."""
DEFAULT_RETRY_SECONDS = S3_RETRY_RULE["budgetMs"] / 1000
"""Seconds after its first attempt that a failing GET is still tried again (past DEFAULT_ATTEMPTS)."""
RETRY_SECONDS_ENV = S3_RETRY_SECONDS_ENV
"""The environment variable that sets the retry budget where no `retry_seconds` is given (the CLI reads it too)."""
_CHUNK = 1024 * 1024
_THROTTLING_CODES = frozenset(THROTTLING_CODES)
_TRANSIENT_CODES = _THROTTLING_CODES | frozenset(TRANSIENT_CODES)


@dataclass(frozen=True)
class Backoff:
    """How long to wait before a retry, and the clock that bounds the retries: `first` seconds at most
    before the first retry, doubling up to `cap`, each wait a uniform draw below that (full jitter).
    `clock`, `sleep` and `draw` are time.monotonic, time.sleep and random.random: a test passes its
    own, so that it waits for nothing."""

    first: float = S3_RETRY_RULE["baseDelayMs"] / 1000
    cap: float = S3_RETRY_RULE["maxDelayMs"] / 1000
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    draw: Callable[[], float] = random.random

    def wait(self, retry: int) -> float:
        """The wait before retry `retry` (1 for the first), drawn."""
        return self.draw() * min(self.cap, self.first * 2 ** min(retry - 1, 30))


DEFAULT_BACKOFF = Backoff()


class S3ReadError(OSError):
    """An object that could not be read: the message names its URI, the operation and the cause, with
    any secret a URL of the cause carried redacted (errors.redact)."""

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(redact(message))
        self.code = code
        """S3's error code where S3 answered (NoSuchKey, AccessDenied…); None otherwise."""


class ObjectTooLargeError(S3ReadError):
    """An object larger than its reader accepts (a manifest over the JSON size limit): refused by its
    size before it is read, so that a huge object is neither downloaded nor parsed."""


def retry_seconds_from_env(environ: Optional[Dict[str, str]] = None) -> float:
    """The retry budget SHARDIO_S3_RETRY_SECONDS sets (seconds, 0 or more), else DEFAULT_RETRY_SECONDS."""
    text = (os.environ if environ is None else environ).get(RETRY_SECONDS_ENV, "").strip()
    if not text:
        return DEFAULT_RETRY_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"{RETRY_SECONDS_ENV}={text[:40]!r}: must be a number of seconds, 0 or more "
                         f"(0: {DEFAULT_ATTEMPTS} attempts only; default {DEFAULT_RETRY_SECONDS:g})")
    return seconds


def endpoint_from_env(environ: Optional[Dict[str, str]] = None) -> Optional[str]:
    """The S3 endpoint the AWS SDKs configure from the environment; None for the default (AWS)."""
    env = os.environ if environ is None else environ
    if env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() == "true":
        return None
    return env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None


class S3Objects:
    """The objects under `s3://bucket/prefix`, by key relative to the prefix. A failing GET is tried
    `attempts` times, then again until `retry_seconds` have passed since its first attempt (None:
    SHARDIO_S3_RETRY_SECONDS, else 60 s; 0: the attempts only), 100 attempts at most."""

    def __init__(self, bucket: str, prefix: str, *, timeout: float = DEFAULT_TIMEOUT, attempts: int = DEFAULT_ATTEMPTS,
                 retry_seconds: Optional[float] = None, backoff: Backoff = DEFAULT_BACKOFF) -> None:
        if timeout <= 0:
            raise ValueError(f"S3 timeout must be more than 0 seconds, got {timeout}")
        if attempts < 1:
            raise ValueError(f"S3 attempts must be at least 1, got {attempts}")
        if retry_seconds is not None and not 0 <= retry_seconds < float("inf"):
            raise ValueError(f"S3 retry_seconds must be 0 or more, got {retry_seconds}")
        self.bucket = bucket
        self.prefix = prefix
        self.timeout = timeout
        self.attempts = attempts
        self.retry_seconds = retry_seconds_from_env() if retry_seconds is None else retry_seconds
        self.backoff = backoff
        self._client_pid: Optional[int] = None
        self._client_of_pid: Any = None

    def __getstate__(self) -> Dict[str, Any]:
        # Loader workers started by "spawn" (macOS, Windows) get a pickled copy: a client is not picklable.
        return dict(self.__dict__, _client_pid=None, _client_of_pid=None)

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{key}"

    def _client(self) -> Any:
        # One client per process: a DataLoader worker is forked, and a client's connection pool is not
        # fork-safe. boto3 is imported here so that the readers of folders need no boto3.
        if self._client_pid != os.getpid():
            import boto3
            from botocore.config import Config

            endpoint = endpoint_from_env()
            config = Config(connect_timeout=self.timeout, read_timeout=self.timeout, retries={"total_max_attempts": 1},
                            max_pool_connections=32, s3={"addressing_style": "path"} if endpoint else {})
            self._client_of_pid = boto3.session.Session().client("s3", endpoint_url=endpoint, config=config)
            self._client_pid = os.getpid()
        return self._client_of_pid

    def read(self, key: str, max_bytes: Optional[int] = None) -> bytes:
        """The whole object (a manifest, an index); with `max_bytes`, one larger is refused by its
        Content-Length before a byte of its body is read (ObjectTooLargeError, not tried again)."""
        def get() -> bytes:
            answer = self._client().get_object(Bucket=self.bucket, Key=self.prefix + key)
            size = int(answer.get("ContentLength", 0))
            if max_bytes is not None and size > max_bytes:
                answer["Body"].close()
                raise ObjectTooLargeError(f"GetObject {self.uri(key)}: {size / 2 ** 20:.1f} MiB is more than the "
                                          f"{max_bytes / 2 ** 20:g} MiB allowed; refused without reading it")
            return answer["Body"].read()
        return self._retried(key, get)

    def download(self, key: str, handle: BinaryIO, check: Callable[[int, Optional[int]], None], *,
                 checksum: Optional[Callable[[bytes, int], int]] = None) -> None:
        """Writes the object into `handle` (truncated at each attempt), then calls `check(size, crc)`
        with what was received, `crc` the bytes' `checksum` (None without one: the manifest lists none
        to check them against): a check that raises ValueError fails the attempt (a transfer that came
        corrupt or cut), and the last attempt's error is raised."""
        def get() -> None:
            handle.seek(0)
            handle.truncate()
            body = self._client().get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"]
            size, received = 0, 0
            for chunk in body.iter_chunks(_CHUNK):
                handle.write(chunk)
                size += len(chunk)
                if checksum is not None:
                    received = checksum(chunk, received)
            check(size, received if checksum is not None else None)
        self._retried(key, get)

    def _retried(self, key: str, attempt: Callable[[], T]) -> T:
        """`attempt()`, tried again after a transient error (the rule in contract.S3_RETRY_RULE):
        `attempts` times, then until `retry_seconds` have passed, 100 attempts at most. The errors
        raised chain no cause: a cause's message (botocore's) names the endpoint URL, and a traceback
        prints it unredacted."""
        backoff = self.backoff
        started = backoff.clock()
        tries = 0
        while True:
            tries += 1
            try:
                return attempt()
            except ObjectTooLargeError:
                raise
            except Exception as error:  # classified below: only transient ones are tried again
                if not _transient(error):
                    raise S3ReadError(f"GetObject {self.uri(key)}: {_describe(error, self.timeout)}", _code(error)) from None
                elapsed = backoff.clock() - started
                spent = elapsed >= self.retry_seconds or tries >= S3_RETRY_RULE["attemptCeiling"]
                if tries >= self.attempts and spent:
                    raise S3ReadError(self._given_up(key, error, tries, elapsed), _code(error)) from None
            backoff.sleep(backoff.wait(tries))

    def _given_up(self, key: str, error: BaseException, tries: int, elapsed: float) -> str:
        """What the last error of a GET tried `tries` times over `elapsed` seconds says."""
        budget = f"retried for {self.retry_seconds:g} s at most: retry_seconds, {RETRY_SECONDS_ENV}"
        last = _describe(error, self.timeout)
        if _throttled(error):
            return (f"GetObject {self.uri(key)}: throttled for {elapsed:.1f} s ({tries} attempts, {budget}), last: {last}; S3 "
                    "scales a prefix to more requests per second over minutes: fewer readers at once, or a larger cache, "
                    "ask less of it")
        return f"GetObject {self.uri(key)}: failed {tries} times in {elapsed:.1f} s ({budget}), last: {last}"


def _transient(error: BaseException) -> bool:
    """Worth another attempt: a 5xx or throttling answer, a reset or cut connection, a timeout, a body
    that came corrupt or short."""
    from botocore.exceptions import ClientError, HTTPClientError, IncompleteReadError
    from botocore.exceptions import ConnectionError as EndpointError
    from urllib3.exceptions import HTTPError

    if isinstance(error, ClientError):
        response = error.response
        status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        return status >= 500 or response.get("Error", {}).get("Code") in _TRANSIENT_CODES
    return isinstance(error, (HTTPClientError, EndpointError, IncompleteReadError, HTTPError, ConnectionError, socket.timeout,
                              ValueError))


def _code(error: BaseException) -> Optional[str]:
    response = getattr(error, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None


def _throttled(error: BaseException) -> bool:
    """An answer that asks for fewer requests (a throttling code of the contract, a 429 or 503): its error says so."""
    from botocore.exceptions import ClientError

    if not isinstance(error, ClientError):
        return False
    response = error.response
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return status in (429, 503) or response.get("Error", {}).get("Code") in _THROTTLING_CODES


def _describe(error: BaseException, timeout: float) -> str:
    text = f"{type(error).__name__}: {redact(str(error))}"
    if isinstance(error, (socket.timeout, TimeoutError)) or "timeout" in type(error).__name__.lower() or "timed out" in str(error):
        text += f" (no answer within the timeout of {timeout:g} s)"
    return text
