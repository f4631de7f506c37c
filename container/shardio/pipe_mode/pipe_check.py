"""Each shard of a Pipe-mode stream checked whole, by the host, before any record of it is used.

SageMaker concatenates a channel's objects in an order of its own (ShuffleConfig reshuffles it), and
says nothing of where one ends. The manifest lists each shard's size and zlib CRC-32 (`crc32`, which
the standard library computes at GB/s): the shard that starts the stream is the one whose size and
CRC-32 match its first bytes, found by computing the CRC-32 once over the bytes as they come,
looking at each listed size. Its bytes are held back until they match, so a flipped byte anywhere
is refused, naming the shard, before a record of it is dealt; the next shard starts where it ends.

Used where the per-record checks are missing or slow: RecordIO records carry no CRC, and TFRecord's
CRC-32C is checked in pure Python (about 10 MB/s per process) without a fast CRC-32C (crc32c.py); otherwise
the consumers check every TFRecord's CRCs as they read it. Manifests packed before `crc32` existed
leave the stream to those checks alone (RecordIO: unchecked).
"""
from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..format.crc32c import NATIVE
from ..errors import FormatError
from ..catalog.manifest import DatasetManifest
from .pipe_frames import record_ends
from ..format.records import ShardFormat

_NAMED_AT_MOST = 3
_OPT_OUT = "; check_crc=False (train.py --check_crc false) reads it anyway"


@dataclass(frozen=True)
class ShardSums:
    """The size and CRC-32 of every shard a manifest lists, by which a stream's shards are found."""

    listed_in: str
    """The manifest's path: errors name it."""
    shard_format: ShardFormat
    by_size: Dict[int, Dict[int, str]]
    """Size → CRC-32 → the shard's key."""
    sizes: List[int]
    """The sizes, ascending."""


def whole_shard_sums(manifest: Optional[DatasetManifest], check_crc: bool) -> Optional[ShardSums]:
    """What a Pipe-mode host checks each shard of its stream against, whole, or None where it checks
    nothing: CRCs not checked (check_crc), no manifest, one without every shard's `crc32` and `bytes`,
    or TFRecord records whose CRC-32C the consumers check natively. One rule for the fan-out and its
    consumers: a consumer skips the per-record CRC-32C of what the host checked whole."""
    if not check_crc or manifest is None or (manifest.format is ShardFormat.TFRECORD and NATIVE):
        return None
    if any(shard.crc32 is None or shard.bytes is None for shard in manifest.shards):
        return None
    by_size: Dict[int, Dict[int, str]] = {}
    for shard in manifest.shards:
        if shard.bytes:  # an empty object streams nothing
            by_size.setdefault(shard.bytes, {})[shard.crc32] = shard.key  # type: ignore[index]
    return ShardSums(manifest.path, manifest.format, by_size, sorted(by_size))


class WholeShardCheck:
    """Feeds the stream `name` through its shards' sums: `feed` returns the bytes of every shard
    that has matched, in order, and holds back the rest; `finish` at the stream's end."""

    def __init__(self, sums: ShardSums, name: str, max_record: int) -> None:
        self.sums, self.name, self.max_record = sums, name, max_record
        self._held: List[List] = []
        """[view, start, end]: the bytes held back, in as many pieces as the views they came in."""
        self._size = self._crc = self._start = 0

    def feed(self, view: memoryview) -> List[Tuple[memoryview, bool]]:
        """The pieces released, each with whether it ends the view it came in."""
        released: List[Tuple[memoryview, bool]] = []
        position = 0
        while position < len(view):
            index = bisect.bisect_right(self.sums.sizes, self._size)
            if index == len(self.sums.sizes):
                raise self._refused()
            take = min(self.sums.sizes[index] - self._size, len(view) - position)
            self._crc = zlib.crc32(view[position:position + take], self._crc)
            if self._held and self._held[-1][0] is view:
                self._held[-1][2] += take
            else:
                self._held.append([view, position, position + take])
            self._size += take
            position += take
            if self._crc in self.sums.by_size.get(self._size, ()):
                released.extend((held[start:end], end == len(held)) for held, start, end in self._held)
                self._start += self._size
                self._held, self._size, self._crc = [], 0, 0
        return released

    def most_pieces(self, chunk_bytes: int) -> int:
        """The most pieces `feed` returns at once, fed views of `chunk_bytes`: the largest shard's, and one more."""
        return -(-self.sums.sizes[-1] // chunk_bytes) + 1 if self.sums.sizes else 1

    def finish(self) -> None:
        if self._held:
            raise self._refused()

    def _refused(self) -> FormatError:
        data = b"".join(held[start:end] for held, start, end in self._held)
        ends = set(record_ends(data, self.sums.shard_format, self.name, self.max_record))
        named = [f"{key} lists {size} bytes of CRC-32 {crc:#010x}, the stream's {size} bytes there have "
                 f"{zlib.crc32(data[:size]):#010x}"
                 for size in self.sums.sizes if size in ends for crc, key in self.sums.by_size[size].items()]
        what = (f"a shard changed after packing: {'; '.join(named[:_NAMED_AT_MOST])}" if named else
                f"{len(data)} bytes with no listed shard's size at a record's end (a corrupt record header, or an object "
                "the manifest does not list)")
        return FormatError(f"{self.name}: the bytes from offset {self._start} match no shard that {self.sums.listed_in} "
                           f"lists by size and CRC-32: {what} (Pipe mode checks each shard whole before any record of it is "
                           f"used){_OPT_OUT}")
