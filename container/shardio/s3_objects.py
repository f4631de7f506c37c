"""GetObject under one S3 prefix with boto3: timeouts in seconds, transient errors retried, and every
failure naming the object and the operation.

The endpoint is the one the AWS SDKs read from the environment (`AWS_ENDPOINT_URL_S3`, else
`AWS_ENDPOINT_URL`, unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`): botocore reads these only
from 1.31, and Debian 12's is 1.29, so it is passed here. Credentials and region come from boto3's
default chain. Retries are ours, not botocore's: botocore retries a request whose answer did not
start, not a body cut or stalled mid-transfer, which is where a long shard GET fails.
"""
from __future__ import annotations

import os
import random
import socket
import time
from typing import Any, BinaryIO, Callable, Dict, Optional, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
"""Seconds to connect, and between two reads of a body, before the attempt counts as failed."""
DEFAULT_ATTEMPTS = 5
_CHUNK = 1024 * 1024
_TRANSIENT_CODES = {"SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling",
                    "ThrottlingException", "RequestTimeTooSkewed"}


class S3ReadError(OSError):
    """An object that could not be read: the message names its URI, the operation and the cause."""


def endpoint_from_env(environ: Optional[Dict[str, str]] = None) -> Optional[str]:
    """The S3 endpoint the AWS SDKs configure from the environment; None for the default (AWS)."""
    env = os.environ if environ is None else environ
    if env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() == "true":
        return None
    return env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None


class S3Objects:
    """The objects under `s3://bucket/prefix`, by key relative to the prefix."""

    def __init__(self, bucket: str, prefix: str, *, timeout: float = DEFAULT_TIMEOUT, attempts: int = DEFAULT_ATTEMPTS) -> None:
        if timeout <= 0:
            raise ValueError(f"S3 timeout must be more than 0 seconds, got {timeout}")
        if attempts < 1:
            raise ValueError(f"S3 attempts must be at least 1, got {attempts}")
        self.bucket = bucket
        self.prefix = prefix
        self.timeout = timeout
        self.attempts = attempts
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

    def download(self, key: str, handle: BinaryIO, check: Callable[[int, Optional[int]], None], *, crc: bool = True) -> None:
        """Writes the object into `handle` (truncated at each attempt), then calls `check(size, crc32c)`
        with what was received (the CRC-32C None without `crc`: the manifest lists none to check it
        against): a check that raises ValueError fails the attempt (a transfer that came corrupt or
        cut), and the last attempt's error is raised."""
        from .crc32c import crc32c

        def get() -> None:
            handle.seek(0)
            handle.truncate()
            body = self._client().get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"]
            size, received = 0, 0
            for chunk in body.iter_chunks(_CHUNK):
                handle.write(chunk)
                size += len(chunk)
                if crc:
                    received = crc32c(chunk, received)
            check(size, received if crc else None)
        self._retried(key, get)

    def _retried(self, key: str, attempt: Callable[[], T]) -> T:
        last: Optional[BaseException] = None
        for number in range(1, self.attempts + 1):
            try:
                return attempt()
            except Exception as error:  # classified below: only transient ones are tried again
                if not _transient(error):
                    raise S3ReadError(f"GetObject {self.uri(key)}: {_describe(error, self.timeout)}") from error
                last = error
            if number < self.attempts:
                time.sleep(min(5.0, 0.1 * 2 ** (number - 1)) * (0.5 + random.random()))
        raise S3ReadError(f"GetObject {self.uri(key)}: failed {self.attempts} times, last: {_describe(last, self.timeout)}") from last


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


def _describe(error: Optional[BaseException], timeout: float) -> str:
    if error is None:
        return "no attempt made"
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, (socket.timeout, TimeoutError)) or "timeout" in type(error).__name__.lower() or "timed out" in str(error):
        text += f" (no answer within the timeout of {timeout:g} s)"
    return text
