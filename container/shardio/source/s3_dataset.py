"""A packed dataset under an S3 prefix, read as a shard directory whose shards are fetched on demand
into a local cache (shard_cache.py), ahead of the reader and in parallel.

Opening fetches the manifest (the root's, the current version, or a pinned version's) and every index
file, which are small; each loader worker then fetches only the shards of its own share of the epoch
(split.py), `shards_ahead` at a time beyond those it reads (order.py OPEN_SHARDS at once). Every shard is checked against the
manifest's size and checksum (its CRC-32C, or its CRC-32 where no fast CRC-32C is installed: shard_crc.py) before it
is renamed into the cache; a second epoch reads the cache.
"""
from __future__ import annotations

import os
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import BinaryIO, Dict, Iterator, List, Optional

from ..contract import MAX_JSON_BYTES
from ..catalog.dataset_files import DatasetFiles, Shard, no_published_version
from .directory import READ_BUFFER, ShardDirectory
from ..catalog.layout import MANIFEST_NAME, checked_version_id, version_manifest_key
from ..catalog.manifest import DatasetManifest, parse_manifest, read_manifest
from ..format.records import ImageRecord
from .s3_objects import DEFAULT_ATTEMPTS, DEFAULT_BACKOFF, DEFAULT_TIMEOUT, Backoff, S3Objects, S3ReadError
from .shard_cache import ShardCache
from ..format.shard_crc import shard_checksum
from ..epoch.order import Resumed, streams_of
from ..epoch.split import Consumer

DEFAULT_SHARDS_AHEAD = 2
"""Shards each reader fetches beyond the one it reads: enough to hide a GET's latency behind decoding."""


def default_cache_dir(bucket: str, prefix: str) -> str:
    """`<temp>/shardio-cache/<bucket>/<prefix>`: one cache per dataset root, shared by its readers."""
    return os.path.join(tempfile.gettempdir(), "shardio-cache", bucket, *[part for part in prefix.split("/") if part])


@dataclass(frozen=True)
class S3Options:
    """How an S3 prefix is read: the cache at `cache_dir` (a folder per dataset under the temporary
    folder by default: `default_cache_dir`) holding `cache_limit` bytes of shards at most (None: no
    limit); each GET waits `timeout` seconds at most between reads and is tried `attempts` times on
    transient errors, then again until `retry_seconds` have passed (None: SHARDIO_S3_RETRY_SECONDS,
    else 60 s), waiting between attempts as `backoff` says (s3_objects.py); each reader fetches
    `shards_ahead` shards beyond those it reads."""

    cache_dir: Optional[str] = None
    cache_limit: Optional[int] = None
    timeout: float = DEFAULT_TIMEOUT
    attempts: int = DEFAULT_ATTEMPTS
    retry_seconds: Optional[float] = None
    shards_ahead: int = DEFAULT_SHARDS_AHEAD
    backoff: Backoff = DEFAULT_BACKOFF

    def __post_init__(self) -> None:
        if self.shards_ahead < 0:
            raise ValueError(f"shards_ahead must be at least 0, got {self.shards_ahead}")


class S3ShardDirectory(ShardDirectory):
    """The shards of the dataset at `s3://bucket/prefix`, read as `options` say (a cache, GET limits)."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        *,
        version: Optional[str] = None,
        options: S3Options = S3Options(),
        check_crc: bool = True,
    ) -> None:
        if "@" in bucket:
            # Not echoed (botocore's bucket-name error would): the part before '@' is a user name and password.
            raise ValueError("S3 bucket name with a user name or password before '@' (not shown): S3 credentials come "
                             "from the environment, never from the bucket or the location")
        prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        self.objects = S3Objects(bucket, prefix, timeout=options.timeout, attempts=options.attempts,
                                 retry_seconds=options.retry_seconds, backoff=options.backoff)
        self.cache = ShardCache(options.cache_dir or default_cache_dir(bucket, prefix), options.cache_limit)
        self.cache.remove_orphaned_parts()
        self.shards_ahead = options.shards_ahead
        self._ahead: Optional[_Ahead] = None
        manifest = self._manifest(version)
        self._listed = {shard.key: shard for shard in manifest.shards}  # a fetched shard's size and CRC, by key
        # No member lists: a RecordIO record's input key (bad-record errors) is not worth a GET per shard.
        shards = [Shard(self.cache.path(shard.key), shard.bytes or 0, self._small_file(shard.index_key), shard.records,
                        key=shard.key)
                  for shard in manifest.shards]
        files = DatasetFiles(manifest.format, shards, manifest, self._small_file(manifest.global_index_key))
        self._take(files, False, check_crc)
        # Every shard in the cache came whole and checked against the manifest's checksum (_fetch).
        self._crc_checked = set(range(len(self.shards)))

    def _manifest(self, version: Optional[str]) -> DatasetManifest:
        """The version's manifest, fetched each time for the current version (the root's changes when
        a version is published), from the cache where pinned (a version's manifest never changes)."""
        if version is not None:
            checked_version_id(version)
        key = version_manifest_key(version) if version else MANIFEST_NAME
        if version and os.path.isfile(self.cache.path(key)):
            return read_manifest(self.cache.path(key), version)
        try:
            data = self.objects.read(key, max_bytes=MAX_JSON_BYTES)
        except S3ReadError as error:
            if error.code == "NoSuchKey" and version is None:
                raise FileNotFoundError(no_published_version(self.objects.uri(""))) from None
            raise
        # Checked before anything is cached: a pinned manifest that names another version is cached under no id.
        manifest = parse_manifest(self.objects.uri(key), data, version)
        path = self.cache.put_small(key, data)
        if manifest.dataset_version:
            # Cached under the version's own key, so that the current version's index and shards are
            # named by the version they belong to however the root's manifest changes later.
            path = self.cache.put_small(version_manifest_key(manifest.dataset_version), data)
        # Parsed once; later errors name the cached copy, as a pinned version's read from the cache does.
        return replace(manifest, path=path)

    def _small_file(self, key: Optional[str]) -> Optional[str]:
        """An index file, fetched unless cached (a key names one version's file for good)."""
        if key is None:
            return None
        path = self.cache.path(key)
        if not os.path.isfile(path):
            self.cache.put_small(key, self.objects.read(key))
        return path

    def _fetch(self, key: str, handle: BinaryIO) -> None:
        listed = self._listed[key]
        checksum = shard_checksum(listed.crc32c, listed.crc32)

        def check(size: int, crc: Optional[int]) -> None:
            if listed.bytes is not None and size != listed.bytes:
                raise ValueError(f"received {size} bytes but {self.manifest.path} lists {listed.bytes}")  # type: ignore[union-attr]
            if checksum is not None and crc != checksum.expected:
                raise ValueError(f"received bytes of {checksum.name} {crc:#010x} but {self.manifest.path} lists "  # type: ignore[union-attr]
                                 f"{checksum.expected:#010x}")
        self.objects.download(key, handle, check, checksum=checksum.update if checksum is not None else None)

    def _open_shard(self, shard: int) -> BinaryIO:
        if self._ahead is not None:
            self._ahead.reached(shard)
        key = self.shards[shard].key  # set for every shard of an S3 dataset (its manifest key)
        return self.cache.open(key, self._fetch, buffering=READ_BUFFER, size=self._listed[key].bytes or 0)

    def images(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> Iterator[ImageRecord]:
        """As ShardDirectory.images, with the next `shards_ahead` shards of this share fetched meanwhile
        (each process reads one share at a time: a loader worker, or the process without workers)."""
        self._ahead = _Ahead(self, [stream[0].shard for stream in streams_of(self.share(consumer, epoch, seed, resumed))])
        try:
            yield from super().images(consumer, epoch, seed, resumed)
        finally:
            self._ahead.close()
            self._ahead = None


class _Ahead:
    """Fetches the shards of `order` from the one being read to `shards_ahead` beyond it."""

    def __init__(self, directory: S3ShardDirectory, order: List[int]) -> None:
        self.directory = directory
        self.order = order
        self.positions = {shard: position for position, shard in enumerate(order)}
        self.pool = ThreadPoolExecutor(max_workers=directory.shards_ahead) if directory.shards_ahead else None
        self.pending: Dict[int, Future] = {}

    def reached(self, shard: int) -> None:
        """Reading `shard` now: start the fetches up to `shards_ahead` beyond it, and raise the error of
        its own fetch, if that failed."""
        position = self.positions.get(shard)
        if position is None:
            return
        if self.pool is not None:
            for ahead in range(position + 1, min(len(self.order), position + 1 + self.directory.shards_ahead)):
                if ahead not in self.pending:
                    key = self.directory.shards[self.order[ahead]].key
                    self.pending[ahead] = self.pool.submit(self.directory.cache.fetch, key, self.directory._fetch,
                                                           size=self.directory._listed[key].bytes or 0)
        fetched = self.pending.pop(position, None)
        if fetched is not None:
            fetched.result()

    def close(self) -> None:
        for future in self.pending.values():
            future.cancel()
        if self.pool is not None:
            self.pool.shutdown(wait=False)
