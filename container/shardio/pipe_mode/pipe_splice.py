"""The fan-out's splice path (Linux): each record's framing header is read in Python, its data and
CRC move from the channel's FIFO into the consumer's with `os.splice`, inside the kernel, never
copied into this process. What the host does not see it cannot check: the consumers check each
TFRecord's CRCs as they read it, and a RecordIO stream whose shards the host must check whole
(pipe_check.py) takes the copy path instead (pipe_copy.py).
"""
from __future__ import annotations

import os
from typing import Callable, List, Optional

from ..errors import FormatError
from .fifo import FifoReader, FifoWriter
from .pipe_frames import Framing
from ..format.records import SNIFF_BYTES, format_of_head

_FLAGS = getattr(os, "SPLICE_F_MOVE", 0) | getattr(os, "SPLICE_F_NONBLOCK", 0)


def splice_available() -> bool:
    """Whether this system moves bytes between pipes with os.splice (Linux, Python 3.10+)."""
    return hasattr(os, "splice")


def deal_by_splice(source: FifoReader, max_record: int, writers: List[FifoWriter], slot_of: Callable[[int], Optional[int]],
                   dealt: List[int]) -> int:
    """Deals every record of `source` to `writers[slot_of(n)]` (n: the record's number in the
    stream; None: another host's, dropped), adding each to `dealt`; returns the records streamed."""
    head = _read_up_to(source, SNIFF_BYTES)
    if not head:
        return 0
    if len(head) < SNIFF_BYTES:
        raise FormatError(f"{source.path}: {len(head)} bytes are no TFRecord or RecordIO record")
    framing = Framing(format_of_head(head), source.path, max_record)
    discard = os.open(os.devnull, os.O_WRONLY)
    try:
        return _deal(source, framing, head, writers, slot_of, dealt, discard)
    finally:
        os.close(discard)


def _deal(source: FifoReader, framing: Framing, head: bytes, writers: List[FifoWriter], slot_of: Callable[[int], Optional[int]],
          dealt: List[int], discard: int) -> int:
    streamed = offset = 0
    slot: Optional[int] = None
    while True:
        header = head + _read_up_to(source, framing.header_size - len(head))
        head = b""
        if not header and not framing.in_record:
            return streamed
        if len(header) < framing.header_size:
            raise FormatError(f"{source.path}: truncated record header at offset {offset}: {len(header)} of "
                              f"{framing.header_size} bytes")
        if not framing.in_record:
            slot = slot_of(streamed)
        after, ends = framing.part(header, offset)
        if slot is None:
            _splice(source, None, discard, after, offset)
        else:
            writers[slot].write(header)
            _splice(source, writers[slot], writers[slot].fileno(), after, offset)
        offset += len(header) + after
        if ends:
            streamed += 1
            if slot is not None:
                dealt[slot] += 1


def _splice(source: FifoReader, writer: Optional[FifoWriter], target: int, count: int, offset: int) -> None:
    """Moves `count` bytes from the source into `target` (the writer's FIFO; /dev/null for a record
    another host keeps), waiting, with their timeouts, for data in one and room in the other."""
    while count:
        try:
            moved = os.splice(source.fileno(), target, count, flags=_FLAGS)
        except BlockingIOError:
            source.wait()
            if writer is not None:
                writer.wait()
            continue
        except BrokenPipeError:
            raise writer.closed_early() if writer is not None else FormatError(f"{os.devnull} refused a splice") from None
        if moved == 0:
            raise FormatError(f"{source.path}: truncated record at offset {offset}: the stream ended {count} bytes before "
                              "the record's end")
        source.offset += moved
        count -= moved


def _read_up_to(source: FifoReader, count: int) -> bytes:
    """`count` bytes read from the source, fewer where it ends first."""
    buffer = bytearray(count)
    return bytes(buffer[:source.fill(memoryview(buffer))])
