"""A local folder of whole, checked shards, shared by every process reading one dataset, kept under a
byte limit by evicting the least recently used.

A shard is written to `<key>.part-<pid>-<random>` and renamed to `<key>` only once its size and
CRC-32C are the manifest's and its bytes are on disk (fsync): a process killed mid-download leaves a
part file, never a shard that reads as whole, and the next process to open the cache removes the
parts of processes that are gone. The time a shard was last read is its modification time (set on
each use), so the processes sharing the cache agree on which is least recent. A shard unlinked while
another process reads it stays readable to that process (POSIX), so eviction never cuts a read.

The limit counts the downloads in flight: a part file's name announces the shard's size
(`.part-<pid>-<random>-<bytes>`), and before its first byte is fetched the least recently used whole
shards are evicted until the whole shards and every announced download fit in the limit. So the
cache holds at most `limit` bytes on disk, unless the downloads in flight alone need more (a limit
below the largest shard, or below the shards the readers fetch at once): then no whole shard is
kept beside them but the one each reader holds open.
"""
from __future__ import annotations

import os
import secrets
from typing import BinaryIO, Callable, List, Optional, Tuple

from ..format.records import format_of_path

_PART = ".part-"


class ShardCache:
    """Shards by their key under `root`; `limit` bytes of whole shards at most (None: no limit), and
    past it only the shard just fetched."""

    def __init__(self, root: str, limit: Optional[int] = None) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"cache_limit must be at least 0 bytes (or None for no limit), got {limit}")
        self.root = root
        self.limit = limit
        os.makedirs(root, exist_ok=True)

    def path(self, key: str) -> str:
        return os.path.join(self.root, *key.split("/"))

    def open(self, key: str, fetch: Callable[[str, BinaryIO], None], buffering: int = -1, *, size: int = 0) -> BinaryIO:
        """The cached shard `key`, opened for reading; fetched first where it is not here. `fetch(key,
        handle)` writes the whole, checked shard into `handle` or raises; `size` is the shard's size
        (0 where unknown), made room for before the fetch starts."""
        path = self.path(key)
        try:
            handle = open(path, "rb", buffering=buffering)  # noqa: SIM115 - the caller closes it
        except FileNotFoundError:
            return self._fetched(key, fetch, buffering, size)  # type: ignore[return-value]
        _touch(path)
        return handle

    def fetch(self, key: str, fetch: Callable[[str, BinaryIO], None], *, size: int = 0) -> None:
        """Puts shard `key` (of `size` bytes) into the cache unless it is there (fetching ahead of the reader)."""
        path = self.path(key)
        if os.path.exists(path):
            _touch(path)
            return
        self._fetched(key, fetch, None, size)

    def _fetched(self, key: str, fetch: Callable[[str, BinaryIO], None], buffering: Optional[int], size: int) -> Optional[BinaryIO]:
        """Fetches shard `key` into a part file that announces its `size`, once room is made for it,
        renames it whole into the cache and evicts past the limit; with `buffering`, returns it opened
        for reading, opened before the rename so that no other reader's eviction can take it from
        under this one."""
        path = self.path(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        part = f"{path}{_PART}{os.getpid()}-{secrets.token_hex(4)}-{size}"
        reading = None
        try:
            with open(part, "wb") as handle:
                # Announced (the part exists) before room is made: of two downloads starting at once,
                # the later one to look sees both.
                self.evict(keep=path)
                fetch(key, handle)
                handle.flush()
                os.fsync(handle.fileno())
            if buffering is not None:
                reading = open(part, "rb", buffering=buffering)  # noqa: SIM115 - the caller closes it
            os.replace(part, path)
        except BaseException:
            if reading is not None:
                reading.close()
            raise
        finally:
            if os.path.exists(part):
                os.remove(part)
        self.evict(keep=path)
        return reading

    def put_small(self, key: str, data: bytes) -> str:
        """Writes a small file (a manifest, an index) atomically; never evicted. Returns its path."""
        path = self.path(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        part = f"{path}{_PART}{os.getpid()}-{secrets.token_hex(4)}"
        with open(part, "wb") as handle:
            handle.write(data)
        os.replace(part, path)
        return path

    def shard_files(self) -> List[Tuple[float, int, str]]:
        """(last use, bytes, path) of every whole shard in the cache."""
        return self._shards_and_downloads()[0]

    def _shards_and_downloads(self) -> Tuple[List[Tuple[float, int, str]], int]:
        """The whole shards (as shard_files), and the bytes the downloads in flight take or will take
        (each part file's announced size, or its size on disk where that is more)."""
        found, downloading = [], 0
        for folder, _dirs, names in os.walk(self.root):
            for name in names:
                shard_name, is_part, tail = name.partition(_PART)
                if not format_of_path(shard_name):
                    continue
                path = os.path.join(folder, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:  # evicted, renamed or removed by another process meanwhile
                    continue
                if is_part:
                    announced = tail.rsplit("-", 1)[-1] if tail.count("-") >= 2 else "0"
                    downloading += max(stat.st_size, int(announced) if announced.isdigit() else 0)
                else:
                    found.append((stat.st_mtime, stat.st_size, path))
        return found, downloading

    def evict(self, keep: Optional[str] = None) -> None:
        """Removes the least recently used shards until they and the downloads in flight fit in the
        limit, sparing `keep`."""
        if self.limit is None:
            return
        files, downloading = self._shards_and_downloads()
        files.sort()
        total = sum(size for _, size, _ in files) + downloading
        for _, size, path in files:
            if total <= self.limit:
                return
            if path == keep:
                continue
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
            total -= size

    def remove_orphaned_parts(self) -> List[str]:
        """Removes the part files of processes that no longer run (killed mid-download); returns them."""
        removed = []
        for folder, _dirs, names in os.walk(self.root):
            for name in names:
                if _PART not in name:
                    continue
                pid = name.rsplit(_PART, 1)[1].split("-", 1)[0]
                if pid.isdigit() and not _running(int(pid)):
                    try:
                        os.remove(os.path.join(folder, name))
                        removed.append(os.path.join(folder, name))
                    except FileNotFoundError:
                        pass
        return removed


def _touch(path: str) -> None:
    try:
        os.utime(path)
    except FileNotFoundError:  # evicted meanwhile: the open handle still reads it
        pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
