"""Where the records of a Pipe-mode stream end, from their framing headers alone: what the fan-out
needs to deal whole records without reading their bytes (pipe_splice.py, pipe_copy.py).

A record is one part (TFRecord: `u64 length | u32 crc(length)`, then the data and its u32 CRC) or
several (RecordIO: `u32 magic | u32 cflag << 29 | length`, then the data padded to 4; a record the
writer split holds a first part, middle ones and a last one: recordio.py).
"""
from __future__ import annotations

from typing import List, Tuple

from ..errors import FormatError
from ..format.records import ShardFormat, check_length
from ..format.recordio import FIRST, LAST, LENGTH_MASK, MIDDLE, PART_HEADER, RECORDIO_MAGIC, WHOLE
from ..format.tfrecord import FOOTER_SIZE, HEADER_SIZE

_TFRECORD_LENGTH_BYTES = 8


class Framing:
    """Reads a stream's part headers in order: each says how many bytes follow it and whether the
    record ends with that part. A header that cannot be right is a FormatError naming the offset."""

    def __init__(self, shard_format: ShardFormat, name: str, max_record: int) -> None:
        self.shard_format, self.name, self.max_record = shard_format, name, max_record
        self.header_size = HEADER_SIZE if shard_format is ShardFormat.TFRECORD else PART_HEADER.size
        self.in_record = False
        """Whether a record has begun (a RecordIO first part) and not ended."""

    def part(self, header, offset: int) -> Tuple[int, bool]:
        """The bytes that follow the header at `offset` (data, CRC, padding) and whether they end the record."""
        if self.shard_format is ShardFormat.TFRECORD:
            length = int.from_bytes(header[:_TFRECORD_LENGTH_BYTES], "little")
            check_length(length, self.name, offset, offset + HEADER_SIZE, None, "TFRecord", trailer=FOOTER_SIZE,
                         max_record=self.max_record)
            return length + FOOTER_SIZE, True
        magic, lrecord = PART_HEADER.unpack(header)
        if magic != RECORDIO_MAGIC:
            raise FormatError(f"{self.name}: expected the RecordIO magic word at offset {offset}, got 0x{magic:08x}")
        cflag, length = lrecord >> 29, lrecord & LENGTH_MASK
        expected = (MIDDLE, LAST) if self.in_record else (WHOLE, FIRST)
        if cflag not in expected:
            raise FormatError(f"{self.name}: RecordIO part with cflag {cflag} at offset {offset}, expected one of {expected}")
        padded = (length + 3) & ~3
        check_length(length, self.name, offset, offset + PART_HEADER.size, None, "RecordIO part", trailer=padded - length,
                     max_record=self.max_record)
        self.in_record = cflag in (FIRST, MIDDLE)
        return padded, not self.in_record


def record_ends(data, shard_format: ShardFormat, name: str, max_record: int) -> List[int]:
    """The offsets in `data` where a record ends, up to the first header that cannot be right."""
    framing = Framing(shard_format, name, max_record)
    ends, offset = [], 0
    try:
        while offset + framing.header_size <= len(data):
            after, ends_record = framing.part(data[offset:offset + framing.header_size], offset)
            offset += framing.header_size + after
            if ends_record and offset <= len(data):
                ends.append(offset)
    except FormatError:
        pass
    return ends
