"""Shards in a directory: a File-mode channel (downloaded to local storage), a FastFile channel
(S3 mounted read-only, best read sequentially) or an FSx for Lustre channel, all the same to us.

Which shards, in which order, and where their index files are, comes from the dataset's manifest
(dataset_files.py `open_dataset`): a dataset root, a version's ManifestFile channels, a dataset
written before versions, or a bare directory of shards. With ShardedByS3Key the index files belong
in a separate, FullyReplicated channel (the packer keeps them under their own prefix so they are
never split from their shard's host: ARCHITECTURE.md "Dataset layout").
"""
from __future__ import annotations

from contextlib import closing
from typing import BinaryIO, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from .dataset_files import DatasetFiles, Shard, open_dataset
from .bad_records import members_key_of
from .blocks import BlockStream, read_blocks
from .errors import FormatError
from .index import merge_recordio_indexes, record_offsets
from .formats import read_records, to_image
from .manifest import DatasetManifest
from .records import FramedRecord, ImageRecord, ShardFormat
from .order import Resumed, generators, interleave, stream_size, streams_of
from .shard_crc import UNCHECKED, Checksum, ShardCheck, check_shard_crc, shard_check, shard_checksum
from .split import Consumer, Segment, consumer_share

READ_BUFFER = 1024 * 1024
"""The buffer a shard is read through to its end: whole records in few system calls (a block
before the end is read in one call of its own size, outside it: blocks.py)."""

__all__ = ["Shard", "ShardDirectory"]


class ShardDirectory:
    """The shards of a channel in the manifest's order (name order without one), with random access
    through their indexes. `manifest` pins a version: its manifest's key under the dataset root."""

    def __init__(
        self,
        path: str,
        index_dir: Optional[str] = None,
        *,
        manifest: Optional[str] = None,
        host_sharded: bool = False,
        check_crc: bool = True,
    ) -> None:
        self._take(open_dataset(path, index_dir, manifest=manifest, host_sharded=host_sharded), host_sharded, check_crc)

    def _take(self, files: DatasetFiles, host_sharded: bool, check_crc: bool) -> None:
        """Reads `files` (what open_dataset found, or a subclass's own listing)."""
        self.format: ShardFormat = files.format
        self.shards: List[Shard] = files.shards
        self.manifest: Optional[DatasetManifest] = files.manifest
        """The manifest the shards were taken from; None for a bare directory of shards."""
        self.global_index_path: Optional[str] = files.global_index_path
        self.check_crc = check_crc
        """Check what can be checked as it is read: each TFRecord's CRCs or each shard whole (shard_crc.py)."""
        self._crc_checked: Set[int] = set()
        """The shards this process checked whole (or that were checked as they were fetched)."""
        self.host_sharded = host_sharded
        """Each host holds only its own shards (a ShardedByS3Key channel)."""
        self._offsets: Dict[int, List[int]] = {}
        self._listed_crc: Dict[str, Tuple[Optional[int], Optional[int]]] = {
            entry.key: (entry.crc32c, entry.crc32) for entry in self.manifest.shards} if self.manifest else {}
        """Each shard's CRC-32C and CRC-32 as the manifest lists them, by key."""

    @property
    def dataset_version(self) -> Optional[str]:
        """The version read (the manifest's `datasetVersion`); None without a versioned manifest."""
        return self.manifest.dataset_version if self.manifest is not None else None

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
                offsets = record_offsets(self.format, handle.read(), index_path)
            listed = self.shards[shard].records
            if listed is not None and listed != len(offsets):
                raise FormatError(f"{index_path}: indexes {len(offsets)} records but {self.manifest.path} "  # type: ignore[union-attr]
                                  f"lists {listed} for {self.shards[shard].path}")
            self._offsets[shard] = offsets
        return self._offsets[shard]

    def record_counts(self) -> Optional[List[int]]:
        """Records per shard, from the indexes; None when some shard has none."""
        return [len(self.offsets(shard)) for shard in range(len(self.shards))] if self.indexed else None

    def expected_records(self, shard: int) -> Optional[int]:
        """The records a shard holds by its index (which must agree with the manifest), else by the
        manifest; None for a bare shard without an index."""
        return len(self.offsets(shard)) if self.shards[shard].index_path else self.shards[shard].records

    def read(self, shard: int, start: int = 0, stop: Optional[int] = None) -> Iterator[FramedRecord]:
        """Records [start, stop) of a shard, read sequentially from the first one's offset (see `read_segments`)."""
        return (record for _position, record in self.read_segments(shard, [Segment(shard, start, stop)]))

    def read_segments(self, shard: int, segments: Sequence[Segment], *, reuse: bool = False) -> Iterator[Tuple[int, FramedRecord]]:
        """(position, record) of every record of `segments` of a shard, in their order, through one open
        file. A segment that runs to the shard's end is read sequentially from its first record; any
        other (a block of the canonical order) in one read of its own size, its records' payloads
        views of it (blocks.py), the next blocks read ahead meanwhile (`read_blocks`): with `reuse`, of
        buffers that later blocks overwrite, so that a record is valid only until the next is asked
        for (`images`, which keeps an ImageRecord of each, bytes of its own). Where the shard's record
        count is known, fewer records than a segment lists (a shard cut at a record boundary frames
        whole records), or more when read to its end, is a FormatError."""
        expected = self.expected_records(shard)
        path = self.shards[shard].path
        with self._open_shard(shard) as handle:
            check = self.shard_check(shard)
            if check.whole is not None and shard not in self._crc_checked:
                self._check_whole(shard, handle, check.whole)
            offsets = self.offsets(shard) if self.shards[shard].index_path else [0]
            ends = [segment.stop is None or segment.stop == expected for segment in segments]
            ranges = [None if to_end else (offsets[segment.start], offsets[segment.stop] - offsets[segment.start])  # type: ignore[index]
                      for segment, to_end in zip(segments, ends)]
            with closing(read_blocks(handle, ranges, reuse=reuse)) as blocks:
                for segment, to_end, block in zip(segments, ends, blocks):
                    start, stop = segment.start, segment.stop
                    offset = offsets[start] if start else 0
                    stream: BinaryIO
                    if block is None:
                        handle.seek(offset)
                        stream = handle
                    else:
                        stream = BlockStream(block)  # type: ignore[assignment]
                    read = 0
                    for record in read_records(self.format, stream, path, offset=offset, check_crc=check.records, first=start,
                                               limit=None if to_end or stop is None else stop - start):
                        yield start + read, record
                        read += 1
                    wanted = expected if to_end else stop
                    if wanted is not None and read != wanted - start:
                        self._miscounted(shard, expected)

    def _miscounted(self, shard: int, expected: Optional[int]) -> None:
        # Counted again from the start, so the error gives the shard's true count.
        found = sum(1 for _ in self._records(shard, 0, None))
        shard_file = self.shards[shard]
        listing = f"its index {shard_file.index_path}" if shard_file.index_path else getattr(self.manifest, "path", "")
        raise FormatError(f"{shard_file.path}: holds {found} records but {listing} lists {expected} "
                          "(the shard was cut or changed after packing)")

    def _records(self, shard: int, start: int, limit: Optional[int]) -> Iterator[FramedRecord]:
        path = self.shards[shard].path
        offset = self.offsets(shard)[start] if start else 0
        with self._open_shard(shard) as handle:
            handle.seek(offset)
            yield from read_records(self.format, handle, path, offset=offset, limit=limit, check_crc=self.shard_check(shard).records,
                                    first=start)

    def shard_check(self, shard: int) -> ShardCheck:
        """How a shard is checked as it is read (shard_crc.py): from the checksums its manifest lists."""
        if not self.check_crc:
            return UNCHECKED
        return shard_check(self.format, *self._listed_checksums(shard))

    def check_every_shard(self) -> None:
        """Every shard whole against its manifest's checksum (shard_crc.py `shard_checksum`), for a
        reader that reads the files natively and checks no CRC of its own (DALI's): a byte changed
        anywhere is refused naming the shard before any record is read. Nothing with check_crc=False."""
        if not self.check_crc:
            return
        for shard in range(len(self.shards)):
            checksum = shard_checksum(*self._listed_checksums(shard))
            if checksum is not None and shard not in self._crc_checked:
                with self._open_shard(shard) as handle:
                    self._check_whole(shard, handle, checksum)

    def _listed_checksums(self, shard: int) -> Tuple[Optional[int], Optional[int]]:
        """The shard's CRC-32C and CRC-32 as its manifest lists them (None: not listed)."""
        return self._listed_crc.get(self.shards[shard].key or "", (None, None))

    def _check_whole(self, shard: int, handle: BinaryIO, checksum: Checksum) -> None:
        """A shard against its manifest's checksum, once per process (shard_crc.py)."""
        check_shard_crc(handle, f"{self.shards[shard].path} (shard {self.shards[shard].key})", checksum,
                        getattr(self.manifest, "path", ""))
        self._crc_checked.add(shard)

    def _open_shard(self, shard: int) -> BinaryIO:
        """The shard's bytes, opened for reading (a subclass fetches them first: S3ShardDirectory)."""
        return open(self.shards[shard].path, "rb", buffering=READ_BUFFER)

    def record(self, shard: int, position: int) -> FramedRecord:
        """Record `position` of a shard, by its index (random access)."""
        return next(self.read(shard, position, position + 1))

    decode_record = staticmethod(to_image)
    """What `images` makes of each record: its ImageRecord, or a Sample where samples.read_samples set it."""

    def image(self, record: FramedRecord, shard: int, position: Optional[int] = None) -> ImageRecord:
        """The image record (or Sample: `decode_record`) of a record of a shard, `position` being its index in the shard."""
        shard_file = self.shards[shard]
        return self.decode_record(self.format, record, shard_file.path, shard=shard_file.key or shard_file.path, position=position)

    def share(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> List[Segment]:
        """The segments a consumer reads in an epoch, in the canonical order (split.py `consumer_share`)."""
        return consumer_share(self.record_counts(), len(self.shards), consumer, seed, epoch, resumed)

    def images(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> Iterator[ImageRecord]:
        """The image records of a consumer's share of an epoch (split.py), its shards read `OPEN_SHARDS`
        at a time and interleaved at random (order.py `interleave`); `resumed`: where the epoch resumes."""
        interleaving, _buffering = generators(seed, epoch, resumed.runs if resumed else 0, consumer.index, consumer.count)
        streams = [(stream_size(stream), self._stream_images(stream)) for stream in streams_of(self.share(consumer, epoch, seed, resumed))]
        return interleave(streams, interleaving)

    def _stream_images(self, stream: Sequence[Segment]) -> Iterator[ImageRecord]:
        shard = stream[0].shard
        for position, record in self.read_segments(shard, stream, reuse=True):
            yield self.image(record, shard, position)

    def part_records(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> Optional[int]:
        """The records `images` hands a consumer in an epoch; None where a shard's count is unknown."""
        counts = [self.expected_records(segment.shard) if segment.stop is None else segment.stop - segment.start
                  for segment in self.share(consumer, epoch, seed, resumed)]
        return None if None in counts else sum(counts)  # type: ignore[arg-type]

    def member_key(self, shard_key: str, record_id: int) -> Optional[str]:
        """The input key of record `record_id` of a shard, from its member list where the channel
        holds it (RecordIO records carry only their id); None where it cannot be told."""
        for shard in self.shards:
            if shard_key in (shard.key, shard.path) and shard.members_path:
                return members_key_of(shard.members_path, record_id)
        return None

    def merged_recordio_index(self) -> str:
        """The one MXNet index over these shards in order, for DALI's mxnet reader."""
        if self.format is not ShardFormat.RECORDIO or not self.indexed:
            raise FormatError("a merged index needs RecordIO shards that all have their index files")
        parts = []
        for shard in self.shards:
            with open(shard.index_path, encoding="ascii") as handle:  # type: ignore[arg-type]
                parts.append((shard.index_path, shard.size, handle.read()))
        return merge_recordio_indexes(parts)  # type: ignore[arg-type]

