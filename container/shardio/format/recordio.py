"""MXNet RecordIO streams (dmlc-core recordio.h) and im2rec's IRHeader.

Each part: `u32 magic 0xced7230a | u32 (cflag << 29) | length | data | zero pad to 4`. The writer
splits a record where its data holds the magic word at a 4-aligned offset and drops that word
(cflag 1 = first part, 2 = middle, 3 = last): a reader joins the parts with the magic between them.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Optional, Tuple

from ..errors import FormatError
from .records import MAX_RECORD_BYTES, FramedRecord, ImageRecord, check_length, read_exactly, stream_end

RECORDIO_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", RECORDIO_MAGIC)
PART_HEADER = struct.Struct("<II")
LENGTH_MASK = (1 << 29) - 1
WHOLE, FIRST, MIDDLE, LAST = 0, 1, 2, 3

IR_HEADER = struct.Struct("<IfQQ")
"""im2rec's header: flag (number of extra float labels), label, id, id2 (always 0)."""


@dataclass(frozen=True)
class IRHeader:
    flag: int
    label: float
    id: int
    id2: int


def read_recordio(
    stream: BinaryIO,
    name: str,
    *,
    offset: int = 0,
    limit: Optional[int] = None,
    max_record: int = MAX_RECORD_BYTES,
) -> Iterator[FramedRecord]:
    """The records of a RecordIO stream from its current position (`offset` in the file) to its end,
    or `limit` records; each record's offset is that of its first part's magic word. A part length
    that cannot be right (past the file's end; in a stream, past `max_record`) is a FormatError."""
    end = stream_end(stream, offset)
    count = 0
    while limit is None or count < limit:
        record_offset = offset
        parts = []
        while True:
            header = stream.read(PART_HEADER.size)
            if not header and not parts:
                return
            if len(header) < PART_HEADER.size:
                header += read_exactly(stream, PART_HEADER.size - len(header), name, offset, "RecordIO part header")
            magic, lrecord = PART_HEADER.unpack(header)
            if magic != RECORDIO_MAGIC:
                raise FormatError(f"{name}: expected the RecordIO magic word at offset {offset}, got 0x{magic:08x}")
            cflag, length = lrecord >> 29, lrecord & LENGTH_MASK
            expected = (WHOLE, FIRST) if not parts else (MIDDLE, LAST)
            if cflag not in expected:
                raise FormatError(f"{name}: RecordIO part with cflag {cflag} at offset {offset}, expected one of {expected}")
            padded = (length + 3) & ~3
            check_length(length, name, offset, offset + PART_HEADER.size, end, "RecordIO part", trailer=padded - length,
                         max_record=max_record)
            data = read_exactly(stream, padded, name, offset, f"RecordIO part of {length} bytes")
            parts.append(data[:length] if padded != length else data)
            offset += PART_HEADER.size + padded
            if cflag in (WHOLE, LAST):
                break
        payload = parts[0] if len(parts) == 1 else _MAGIC_BYTES.join(parts)
        yield FramedRecord(offset=record_offset, size=offset - record_offset, payload=payload)
        count += 1


def unpack_ir_header(payload: bytes, where: str) -> Tuple[IRHeader, Tuple[float, ...], bytes]:
    """The header, the extra labels (`flag` float32s after the header) and the data after them."""
    if len(payload) < IR_HEADER.size:
        raise FormatError(f"{where}: {len(payload)} bytes is too short for an IRHeader ({IR_HEADER.size})")
    header = IRHeader(*IR_HEADER.unpack_from(payload))
    end = IR_HEADER.size + 4 * header.flag
    if len(payload) < end:
        raise FormatError(f"{where}: IRHeader announces {header.flag} labels but the record has {len(payload)} bytes")
    labels = struct.unpack_from(f"<{header.flag}f", payload, IR_HEADER.size)
    return header, labels, payload[end:]


def recordio_image(record: FramedRecord, name: str, *, shard: Optional[str] = None, position: Optional[int] = None) -> ImageRecord:
    """The image record of an im2rec record as the packer writes it (flag 0, one float label);
    `shard` and `position` say where it was read (ImageRecord's)."""
    where = f"{name} at offset {record.offset}"
    header, _labels, image = unpack_ir_header(record.payload, where)
    if header.flag != 0:
        raise FormatError(f"{where}: {header.flag} labels per record; ImageRecord takes one (use unpack_ir_header)")
    if not header.label.is_integer():
        raise FormatError(f"{where}: label {header.label} is not a class index")
    # bytes of its own: a payload read in a block is a view of it (blocks.py), which the image must not keep.
    return ImageRecord(image=bytes(image), label=int(header.label), record_id=header.id, shard=shard, position=position)
