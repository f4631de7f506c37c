"""TFRecord streams: `u64 length | u32 masked crc(length) | data | u32 masked crc(data)`, no header.

Both CRCs are checked by default, natively (crc32c.py): a byte changed on a disk, in a channel or a
FIFO is refused naming the record rather than trained on. `check_crc=False` leaves them unchecked
(the documented opt-out: data_loader's `check_crc`, train.py's --check_crc false).
"""
from __future__ import annotations

import struct
from typing import BinaryIO, Iterator, Optional

from .crc32c import masked_crc32c
from ..errors import FormatError
from .example import image_features, parse_example
from .records import MAX_RECORD_BYTES, FramedRecord, ImageRecord, check_length, read_exactly, stream_end

HEADER_SIZE = 12
FOOTER_SIZE = 4
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
_OPT_OUT = "; check_crc=False (train.py --check_crc false) reads it anyway"


def read_tfrecords(
    stream: BinaryIO,
    name: str,
    *,
    offset: int = 0,
    limit: Optional[int] = None,
    check_crc: bool = True,
    max_record: int = MAX_RECORD_BYTES,
    first: int = 0,
) -> Iterator[FramedRecord]:
    """The records of a TFRecord stream, from its current position to its end.

    `offset` is where that position lies in the file, so that the offsets reported are the file's
    (for an index-based start), and `first` the position of the record there (errors name it);
    `limit` stops after that many records. A length header that cannot be right (past the file's
    end; in a stream, past `max_record`) or, with `check_crc`, a length or data that does not match
    its CRC is a FormatError.
    """
    end = stream_end(stream, offset)
    count = 0
    while limit is None or count < limit:
        header = stream.read(HEADER_SIZE)
        if not header:
            return
        if len(header) < HEADER_SIZE:
            header += read_exactly(stream, HEADER_SIZE - len(header), name, offset, "TFRecord header")
        length, length_crc = _HEADER.unpack(header)
        if check_crc and masked_crc32c(header[:8]) != length_crc:
            hint = " (is this a TFRecord file?)" if offset == 0 else ""
            raise FormatError(f"{name}: record {first + count} at offset {offset}: its length does not match its CRC-32C, "
                              f"a corrupted TFRecord{hint}{_OPT_OUT}")
        check_length(length, name, offset, offset + HEADER_SIZE, end, "TFRecord", trailer=FOOTER_SIZE, max_record=max_record)
        data = read_exactly(stream, length, name, offset, f"TFRecord of {length} bytes")
        (data_crc,) = _FOOTER.unpack(read_exactly(stream, FOOTER_SIZE, name, offset, "TFRecord footer"))
        if check_crc and masked_crc32c(data) != data_crc:
            raise FormatError(f"{name}: record {first + count} at offset {offset}: its {length} bytes do not match their "
                              f"CRC-32C, a corrupted TFRecord (a byte changed after packing){_OPT_OUT}")
        size = HEADER_SIZE + length + FOOTER_SIZE
        yield FramedRecord(offset=offset, size=size, payload=data)
        offset += size
        count += 1


def tfrecord_image(record: FramedRecord, name: str, *, shard: Optional[str] = None, position: Optional[int] = None) -> ImageRecord:
    """The image record of a tf.train.Example as the packer writes it (ARCHITECTURE.md "Record formats");
    `shard` and `position` say where it was read (ImageRecord's)."""
    fields = image_features(record.payload, _IMAGE, _LABEL, _FILENAME)
    if fields is not None:
        image, label, filename = fields
        return ImageRecord(image=image, label=-1 if label is None else label,
                           filename=filename.decode("utf-8") if filename is not None else None, shard=shard, position=position)
    where = f"{name} at offset {record.offset}"
    features = parse_example(record.payload, where)
    image = single_feature(features, "image/encoded", bytes, where)
    label = single_feature(features, "image/class/label", int, where, default=-1)
    filename = single_feature(features, "image/filename", bytes, where, default=None)
    return ImageRecord(image=image, label=label, filename=filename.decode("utf-8") if filename is not None else None,
                       shard=shard, position=position)


_IMAGE, _LABEL, _FILENAME = b"image/encoded", b"image/class/label", b"image/filename"
_MISSING = object()


def single_feature(features: dict, key: str, kind: type, where: str, default: object = _MISSING):
    """The one value of a feature; `default` when it is absent (an error when there is none). The image
    records' and the multi-part samples' (samples.py) one rule."""
    values = features.get(key)
    if values is None and default is not _MISSING:
        return default
    if not values or len(values) != 1 or not isinstance(values[0], kind):
        found = "no value" if not values else f"{len(values)} value(s) of type {type(values[0]).__name__}"
        raise FormatError(f"{where}: expected one {kind.__name__} value in {key}, got {found}")
    return values[0]
