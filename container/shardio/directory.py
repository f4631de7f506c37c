"""Shards in a directory: a File-mode channel (downloaded to local storage), a FastFile channel
(S3 mounted read-only, best read sequentially) or an FSx for Lustre channel, all the same to us.

The directory is either the shards/ prefix itself or a packed dataset's root (shards/, index/,
manifest.json). Index files are looked up in `index_dir`, else in the dataset's index/ folder; with
ShardedByS3Key they belong in a separate, FullyReplicated channel (the packer keeps them under
their own prefix so they are never split from their shard's host: ARCHITECTURE.md "Dataset layout").
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

from .errors import FormatError
from .index import merge_recordio_indexes, record_offsets
from .formats import read_records, to_image
from .records import FramedRecord, ImageRecord, ShardFormat, format_of_path
from .split import Consumer, epoch_slot, split_records, split_shards

SHARDS_FOLDER = "shards"
INDEX_FOLDER = "index"
INDEX_EXTENSION = ".idx"
_READ_BUFFER = 1024 * 1024


@dataclass(frozen=True)
class Shard:
    """One shard file and, when present, its index file."""

    path: str
    size: int
    index_path: Optional[str]


class ShardDirectory:
    """The shards of one directory in name order, with random access through their indexes."""

    def __init__(
        self,
        path: str,
        index_dir: Optional[str] = None,
        *,
        host_sharded: bool = False,
        check_crc: bool = False,
    ) -> None:
        shard_dir = os.path.join(path, SHARDS_FOLDER) if os.path.isdir(os.path.join(path, SHARDS_FOLDER)) else path
        if not os.path.isdir(shard_dir):
            raise FileNotFoundError(f"shard directory {shard_dir} does not exist")
        names = sorted(name for name in os.listdir(shard_dir) if format_of_path(name))
        formats = {format_of_path(name) for name in names}
        if len(formats) > 1:
            raise FormatError(f"{shard_dir}: holds both TFRecord and RecordIO shards; keep one dataset per channel")
        if not names:
            raise FileNotFoundError(f"{shard_dir}: no .tfrecord or .rec shards (a ShardedByS3Key host with no shard "
                                    "gets an empty channel: use at least as many shards as instances)")
        self.format: ShardFormat = formats.pop()  # type: ignore[assignment]
        self.check_crc = check_crc
        self.host_sharded = host_sharded
        """Each host holds only its own shards (a ShardedByS3Key channel)."""
        index_dir = index_dir or _default_index_dir(path, shard_dir)
        self.shards: List[Shard] = [
            Shard(os.path.join(shard_dir, name), os.path.getsize(os.path.join(shard_dir, name)), _index_path(index_dir, name))
            for name in names
        ]
        self._offsets: Dict[int, List[int]] = {}

    @property
    def indexed(self) -> bool:
        """Whether every shard has its index: record-level splits and random access need them."""
        return all(shard.index_path for shard in self.shards)

    def offsets(self, shard: int) -> List[int]:
        """The offset of every record of a shard, from its index."""
        if shard not in self._offsets:
            index_path = self.shards[shard].index_path
            if index_path is None:
                raise FileNotFoundError(f"{self.shards[shard].path}: no index file")
            with open(index_path, encoding="ascii") as handle:
                self._offsets[shard] = record_offsets(self.format, handle.read(), index_path)
        return self._offsets[shard]

    def record_counts(self) -> Optional[List[int]]:
        """Records per shard, from the indexes; None when some shard has none."""
        return [len(self.offsets(shard)) for shard in range(len(self.shards))] if self.indexed else None

    def read(self, shard: int, start: int = 0, stop: Optional[int] = None) -> Iterator[FramedRecord]:
        """Records [start, stop) of a shard, read sequentially from the first one's offset."""
        path = self.shards[shard].path
        offset = self.offsets(shard)[start] if start else 0
        limit = None if stop is None else stop - start
        with open(path, "rb", buffering=_READ_BUFFER) as handle:
            handle.seek(offset)
            yield from read_records(self.format, handle, path, offset=offset, limit=limit, check_crc=self.check_crc)

    def record(self, shard: int, position: int) -> FramedRecord:
        """Record `position` of a shard, by its index (random access)."""
        return next(self.read(shard, position, position + 1))

    def image(self, record: FramedRecord, shard: int) -> ImageRecord:
        return to_image(self.format, record, self.shards[shard].path)

    def images(self, consumer: Consumer, epoch: int, seed: int) -> Iterator[ImageRecord]:
        """The image records of a consumer's part for an epoch (see split.py), in file order."""
        slot = epoch_slot(consumer, seed, epoch)
        counts = self.record_counts()
        if counts is None:
            for shard in split_shards(len(self.shards), consumer.count, slot):
                for record in self.read(shard):
                    yield self.image(record, shard)
            return
        for segment in split_records(counts, consumer.count, slot):
            for record in self.read(segment.shard, segment.start, segment.stop):
                yield self.image(record, segment.shard)

    def merged_recordio_index(self) -> str:
        """The one MXNet index over these shards in order, for DALI's mxnet reader."""
        if self.format is not ShardFormat.RECORDIO or not self.indexed:
            raise FormatError("a merged index needs RecordIO shards that all have their index files")
        parts = []
        for shard in self.shards:
            with open(shard.index_path, encoding="ascii") as handle:  # type: ignore[arg-type]
                parts.append((shard.index_path, shard.size, handle.read()))
        return merge_recordio_indexes(parts)  # type: ignore[arg-type]


def _default_index_dir(path: str, shard_dir: str) -> Optional[str]:
    candidate = os.path.join(path if shard_dir != path else os.path.dirname(os.path.abspath(path)), INDEX_FOLDER)
    return candidate if os.path.isdir(candidate) else None


def _index_path(index_dir: Optional[str], shard_name: str) -> Optional[str]:
    if index_dir is None:
        return None
    path = os.path.join(index_dir, os.path.splitext(shard_name)[0] + INDEX_EXTENSION)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: the index of shard {shard_name} is missing from {index_dir}")
    return path
