"""GetObject under one S3 prefix with boto3: timeouts in seconds, transient errors retried, and every
failure naming the object and the operation.

The endpoint is the one the AWS SDKs read from the environment (`AWS_ENDPOINT_URL_S3`, else
`AWS_ENDPOINT_URL`, unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`): botocore reads these only
from 1.31, and Debian 12's is 1.29, so it is passed here. Credentials and region come from boto3's
default chain. Retries are ours, not botocore's: botocore retries a request whose answer did not
start, not a body cut or stalled mid-transfer, which is where a long shard GET fails.

Throttling (SlowDown, a 503) is waited out rather than counted: S3 asks for seconds of back-off
while it scales a prefix, so such answers are tried again until THROTTLE_PATIENCE seconds have passed
(botocore's standard mode waits as long); other transient errors are tried `attempts` times. Every
wait is the same rule as the Node engine's (lambda/io/s3-retry.ts): full jitter, a uniform draw below
min(5 s, 0.1 s × 2^(n-1)) before the n-th retry (AWS's "Exponential Backoff And Jitter").
Every message goes through errors.redact: botocore's name the endpoint URL, credentials and all.
"""
from __future__ import annotations

import os
import random
import socket
import time
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Dict, Optional, TypeVar

from .errors import redact

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
"""Seconds to connect, and between two reads of a body, before the attempt counts as failed."""
DEFAULT_ATTEMPTS = 5
_CHUNK = 1024 * 1024
_THROTTLING_CODES = {"SlowDown", "ServiceUnavailable", "Throttling", "ThrottlingException", "RequestLimitExceeded",
                     "TooManyRequests", "TooManyRequestsException"}
_TRANSIENT_CODES = _THROTTLING_CODES | {"RequestTimeout", "InternalError", "RequestTimeTooSkewed"}
THROTTLE_PATIENCE = 20.0
"""Seconds a GET answered with throttling is tried again before the read fails."""


@dataclass(frozen=True)
class Backoff:
    """How long to wait before a retry, and the clock that bounds throttling: `first` seconds at most
    before the first retry, doubling up to `cap`, each wait a uniform draw below that (full jitter);
    throttled answers tried until `patience` seconds have passed. `clock`, `sleep` and `draw` are
    time.monotonic, time.sleep and random.random: a test passes its own, so that it waits for nothing."""

    first: float = 0.1
    cap: float = 5.0
    patience: float = THROTTLE_PATIENCE
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


def endpoint_from_env(environ: Optional[Dict[str, str]] = None) -> Optional[str]:
    """The S3 endpoint the AWS SDKs configure from the environment; None for the default (AWS)."""
    env = os.environ if environ is None else environ
    if env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() == "true":
        return None
    return env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None


class S3Objects:
    """The objects under `s3://bucket/prefix`, by key relative to the prefix."""

    def __init__(self, bucket: str, prefix: str, *, timeout: float = DEFAULT_TIMEOUT, attempts: int = DEFAULT_ATTEMPTS,
                 backoff: Backoff = DEFAULT_BACKOFF) -> None:
        if timeout <= 0:
            raise ValueError(f"S3 timeout must be more than 0 seconds, got {timeout}")
        if attempts < 1:
            raise ValueError(f"S3 attempts must be at least 1, got {attempts}")
        self.bucket = bucket
        self.prefix = prefix
        self.timeout = timeout
        self.attempts = attempts
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

    def read(self, key: str) -> bytes:
        """The whole object (a manifest, an index)."""
        def get() -> bytes:
            return self._client().get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"].read()
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
        """`attempt()`, tried again after a transient error: throttling until the back-off's patience
        has passed, other errors `attempts` times in all. The errors raised chain no cause: a cause's
        message (botocore's) names the endpoint URL, and a traceback prints it unredacted."""
        backoff = self.backoff
        started = backoff.clock()
        failures = tries = 0
        while True:
            tries += 1
            try:
                return attempt()
            except Exception as error:  # classified below: only transient ones are tried again
                if not _transient(error):
                    raise S3ReadError(f"GetObject {self.uri(key)}: {_describe(error, self.timeout)}", _code(error)) from None
                elapsed = backoff.clock() - started
                if _throttled(error):
                    if elapsed >= backoff.patience:
                        raise S3ReadError(f"GetObject {self.uri(key)}: throttled for {elapsed:.1f} s ({tries} attempts, waited out "
                                          f"for {backoff.patience:g} s at most), last: {_describe(error, self.timeout)}; S3 "
                                          "scales a prefix to more requests per second over minutes: fewer readers at "
                                          "once, or a larger cache, ask less of it") from None
                else:
                    failures += 1
                    if failures >= self.attempts:
                        raise S3ReadError(f"GetObject {self.uri(key)}: failed {failures} times, last: "
                                          f"{_describe(error, self.timeout)} (tried {tries} times in {elapsed:.1f} s)") from None
            backoff.sleep(backoff.wait(tries))


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
    """An answer that asks for fewer requests (SlowDown, a 503): waited out, not counted as a failure."""
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
