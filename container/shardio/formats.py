"""One entry per shard format: how to read its records and turn one into an image record."""
from __future__ import annotations

from typing import BinaryIO, Iterator, Optional

from .records import MAX_RECORD_BYTES, FramedRecord, ImageRecord, ShardFormat
from .recordio import read_recordio, recordio_image
from .tfrecord import read_tfrecords, tfrecord_image


def read_records(
    shard_format: ShardFormat,
    stream: BinaryIO,
    name: str,
    *,
    offset: int = 0,
    limit: Optional[int] = None,
    check_crc: bool = True,
    max_record: int = MAX_RECORD_BYTES,
    first: int = 0,
) -> Iterator[FramedRecord]:
    """The records of a stream in `shard_format` (`check_crc` applies to TFRecord, whose records carry
    CRCs: a RecordIO shard's is checked whole, shard_crc.py; `max_record` bounds a record's length
    in a stream, whose end is unknown; `first` is the position of the record at `offset`)."""
    if shard_format is ShardFormat.TFRECORD:
        return read_tfrecords(stream, name, offset=offset, limit=limit, check_crc=check_crc, max_record=max_record,
                              first=first)
    return read_recordio(stream, name, offset=offset, limit=limit, max_record=max_record)


def to_image(shard_format: ShardFormat, record: FramedRecord, name: str, *, shard: Optional[str] = None,
             position: Optional[int] = None) -> ImageRecord:
    """The image and label a record carries, and where it was read (`shard`, `position`: ImageRecord's)."""
    if shard_format is ShardFormat.TFRECORD:
        return tfrecord_image(record, name, shard=shard, position=position)
    return recordio_image(record, name, shard=shard, position=position)
