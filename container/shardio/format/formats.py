"""One entry per shard format: how to read its records and turn one into an image record."""
from __future__ import annotations

from typing import Any, BinaryIO, Iterator, Optional

from .records import FramedRecord, ImageRecord, ShardFormat
from .recordio import read_recordio, recordio_image
from .tfrecord import read_tfrecords, tfrecord_image


def read_records(shard_format: ShardFormat, stream: BinaryIO, name: str, **framing: Any) -> Iterator[FramedRecord]:
    """The records of a stream in `shard_format`. `framing` is read_tfrecords' keywords, whose
    defaults are said there once (`offset`, `limit`, `check_crc`, `max_record`, `first`); a RecordIO
    stream takes `offset`, `limit` and `max_record`: its records carry no CRC (a RecordIO shard's is
    checked whole, shard_crc.py) and its errors name offsets, so `check_crc` and `first` do not apply."""
    if shard_format is ShardFormat.TFRECORD:
        return read_tfrecords(stream, name, **framing)
    framing.pop("check_crc", None)
    framing.pop("first", None)
    return read_recordio(stream, name, **framing)


def to_image(shard_format: ShardFormat, record: FramedRecord, name: str, *, shard: Optional[str] = None,
             position: Optional[int] = None) -> ImageRecord:
    """The image and label a record carries, and where it was read (`shard`, `position`: ImageRecord's)."""
    if shard_format is ShardFormat.TFRECORD:
        return tfrecord_image(record, name, shard=shard, position=position)
    return recordio_image(record, name, shard=shard, position=position)
