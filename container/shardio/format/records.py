"""What the shard readers hand out: framed records (bytes and where they lie) and image records."""
from __future__ import annotations

import enum
import io
from dataclasses import dataclass, field
from typing import BinaryIO, Optional, Tuple

from ..contract import MAX_SHARD_BYTES
from ..errors import FormatError


@dataclass(frozen=True)
class FramedRecord:
    """One record as found in a shard or stream."""

    offset: int
    """Offset of the record's first framing byte: what the index files hold."""
    size: int
    """Bytes the record takes, framing and padding included."""
    payload: bytes
    """The record's data: bytes, or a memoryview of the block it was read in (ShardDirectory.read_segments;
    blocks.py), bytes-like either way; `bytes(payload)` for a copy of its own."""


@dataclass(frozen=True)
class ImageRecord:
    """One packed file: its bytes and label, the same whichever format carried it."""

    image: bytes
    """The file's bytes, unchanged (an encoded JPEG, PNG, ...)."""
    label: int
    """Class index from the manifest's label map; -1 for an unlabeled file."""
    filename: Optional[str] = None
    """The source key (TFRecord `image/filename`); None in RecordIO, which does not store it."""
    record_id: Optional[int] = None
    """The global record id (RecordIO IRHeader id); None in TFRecord, which does not store it."""
    shard: Optional[str] = field(default=None, compare=False)
    """Where the record was read: its shard's key under the dataset root (a Pipe-mode FIFO's path);
    errors about the record name it (bad_records.py). Not compared: the same record read through a
    directory or a FIFO is equal."""
    position: Optional[int] = field(default=None, compare=False)
    """The record's index in that shard (in that FIFO's stream), from 0."""


class ShardFormat(enum.Enum):
    """The two shard formats the packer writes, by the extension it gives them."""

    TFRECORD = ".tfrecord"
    RECORDIO = ".rec"

    @property
    def extension(self) -> str:
        return self.value


# RecordIO files start with the magic word; a TFRecord starts with a u64 length whose low half
# would have to be 3.4 GB to look like it, and shards hold records of at most 128 MiB.
_RECORDIO_MAGIC_BYTES = b"\x0a\x23\xd7\xce"


def format_of_path(path: str) -> Optional[ShardFormat]:
    """The format a shard file name says, or None for other files (manifest, indexes, ...)."""
    for shard_format in ShardFormat:
        if path.endswith(shard_format.extension):
            return shard_format
    return None


class _Prefixed:
    """A stream whose first bytes were already read: Pipe-mode FIFOs cannot seek back."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = head
        self._stream = stream

    def read(self, count: int) -> bytes:
        head, self._head = self._head[:count], self._head[count:]
        if len(head) == count:
            return head
        return head + (self._stream.read(count - len(head)) or b"")


SNIFF_BYTES = 4
"""The first bytes of a stream that tell its format (`format_of_head`)."""


def sniff_format(stream: BinaryIO, name: str) -> Tuple[Optional[ShardFormat], BinaryIO]:
    """The format of a stream from its first bytes (None when it is empty), and the stream to read
    from instead of `stream`: the same bytes, the sniffed ones included."""
    head = stream.read(SNIFF_BYTES) or b""
    while 0 < len(head) < SNIFF_BYTES:
        more = stream.read(SNIFF_BYTES - len(head))
        if not more:
            raise FormatError(f"{name}: {len(head)} bytes are no TFRecord or RecordIO record")
        head += more
    if not head:
        return None, stream
    return format_of_head(head), _Prefixed(head, stream)  # type: ignore[return-value]


def format_of_head(head: bytes) -> ShardFormat:
    """The format of a stream whose first 4 bytes are `head`."""
    return ShardFormat.RECORDIO if bytes(head[:4]) == _RECORDIO_MAGIC_BYTES else ShardFormat.TFRECORD


MAX_RECORD_BYTES = MAX_SHARD_BYTES
"""The bound on a length read from a stream, which cannot be compared with what is left of it: a
record lies in one shard, and shards of more than one file are at most MAX_SHARD_BYTES (contract.py,
from lib/contract/shard-limits.ts). A file larger than that is a shard of its own: where the manifest
is known, its largest shard is the bound (`record_limit`)."""


def record_limit(largest_shard_bytes: int = 0) -> int:
    """The largest record a stream may hold: MAX_RECORD_BYTES, or the largest shard where that is more."""
    return max(MAX_RECORD_BYTES, largest_shard_bytes)


def stream_end(stream: BinaryIO, offset: int) -> Optional[int]:
    """The file offset of a seekable stream's end (`offset` being its current position in the file);
    None for a FIFO or pipe, whose length is unknown until it ends."""
    seekable = getattr(stream, "seekable", None)
    if seekable is None or not seekable():
        return None
    position = stream.tell()
    end = stream.seek(0, io.SEEK_END)
    stream.seek(position)
    return offset + end - position


def check_length(length: int, name: str, offset: int, body_offset: int, end: Optional[int], what: str,
                 trailer: int = 0, max_record: int = MAX_RECORD_BYTES) -> None:
    """Refuses a length header before its bytes are read (and allocated): `length` bytes from
    `body_offset` and the `trailer` after them (a CRC, padding) must fit in the file (up to `end`)
    or, in a stream, in `max_record`."""
    if end is not None and body_offset + length + trailer > end:
        raise FormatError(f"{name}: truncated {what} of {length} bytes at offset {offset}: only {end - body_offset} bytes "
                          "follow its header (a cut file, or a corrupt length header)")
    if end is None and length > max_record:
        raise FormatError(f"{name}: {what} length {length} at offset {offset} is more than a record may hold "
                          f"({max_record} bytes, the largest shard): a corrupt length header")


def read_exactly(stream: BinaryIO, count: int, name: str, offset: int, what: str) -> bytes:
    """`count` bytes, or a FormatError naming what was cut short; raw streams may return less per read."""
    data = stream.read(count)
    if data is None:
        data = b""
    if len(data) == count:
        return data
    parts = [data]
    got = len(data)
    while got < count:
        more = stream.read(count - got)
        if not more:
            raise FormatError(f"{name}: truncated {what} at offset {offset}: {got} of {count} bytes")
        parts.append(more)
        got += len(more)
    return b"".join(parts)

