"""The fan-out's copy path: the stream comes in large pieces (pipe_ahead.py: read ahead in a thread
of its own, and held back until their shard's whole CRC-32 matched where the host checks shards:
pipe_check.py), and each record goes on to its consumer in one write, sliced from its piece, the
framing headers parsed where they lie. Where os.splice is missing, or the host must see the bytes.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional

from ..errors import FormatError
from .fifo import FifoWriter
from .pipe_frames import Framing
from ..format.records import SNIFF_BYTES, format_of_head

class _Dealer:
    """Where the stream stands between pieces: a header cut by a piece's end, a part still to pass on."""

    def __init__(self, name: str, max_record: int, writers: List[FifoWriter], slot_of: Callable[[int], Optional[int]],
                 dealt: List[int]) -> None:
        self.name, self.max_record, self.writers, self.slot_of, self.dealt = name, max_record, writers, slot_of, dealt
        self.framing: Optional[Framing] = None
        self.carry = b""
        """The start of a header that the last piece cut."""
        self.left = 0
        """Bytes of the current part not yet passed on."""
        self.ends = False
        self.slot: Optional[int] = None
        self.streamed = self.offset = 0

    def deal(self, piece: memoryview) -> None:
        position, size = 0, len(piece)
        while position < size:
            if self.left:
                take = min(self.left, size - position)
                self._write(piece[position:position + take])
                position += take
                self.left -= take
                self._part_done()
                continue
            position = self._header(piece, position)

    def _header(self, piece: memoryview, position: int) -> int:
        """Reads the header at `position` (its start may be in `carry`) and passes on as much of its part as the piece holds."""
        available = len(piece) - position
        if self.framing is None:
            if len(self.carry) + available < SNIFF_BYTES:
                self.carry += bytes(piece[position:])
                return len(piece)
            self.framing = Framing(format_of_head(self.carry + bytes(piece[position:position + SNIFF_BYTES])), self.name,
                                   self.max_record)
        need = self.framing.header_size - len(self.carry)
        if available < need:
            self.carry += bytes(piece[position:])
            return len(piece)
        header = self.carry + bytes(piece[position:position + need]) if self.carry else piece[position:position + need]
        if not self.framing.in_record:
            self.slot = self.slot_of(self.streamed)
        after, self.ends = self.framing.part(header, self.offset)
        self.offset += self.framing.header_size + after
        take = min(after, available - need)
        if self.carry:
            self._write(self.carry)
            self.carry = b""
        self._write(piece[position:position + need + take])  # the header and its part as far as the piece goes: one write
        self.left = after - take
        self._part_done()
        return position + need + take

    def _write(self, data) -> None:
        if self.slot is not None:
            self.writers[self.slot].write(data)

    def _part_done(self) -> None:
        if self.left == 0 and self.ends:
            self.ends = False
            self.streamed += 1
            if self.slot is not None:
                self.dealt[self.slot] += 1

    def finish(self) -> int:
        if self.carry or self.left or (self.framing is not None and self.framing.in_record):
            raise FormatError(f"{self.name}: the stream ended inside the record before offset {self.offset}")
        return self.streamed


def deal_by_copy(pieces: Iterable[memoryview], name: str, max_record: int, writers: List[FifoWriter],
                 slot_of: Callable[[int], Optional[int]], dealt: List[int]) -> int:
    """Deals every record of the stream `name`, in `pieces`, to `writers[slot_of(n)]` (n: the
    record's number in the stream; None: another host's, dropped), adding each to `dealt`; returns
    the records streamed."""
    dealer = _Dealer(name, max_record, writers, slot_of, dealt)
    for piece in pieces:
        dealer.deal(piece)
    return dealer.finish()
