"""A Pipe-mode FIFO read ahead in large pieces by a thread of its own, so that reading (and the
whole-shard CRC-32, pipe_check.py, which zlib computes without the GIL) overlaps the dealing."""
from __future__ import annotations

import queue
import threading
from typing import Iterator, List, Optional, Union

from .fifo import POLL_SECONDS, FifoReader
from .handoff import put_unless_stopped
from .pipe_check import WholeShardCheck

CHUNK_BYTES = 1024 * 1024
"""What one read takes: as much as the channel's FIFO holds (SOURCE_PIPE_BYTES), and small enough to still be in
the CPU's cache when it is written on (4 MiB cost 10–30 % more CPU per GB in bench/pipe-fanout.py)."""
_DEPTH = 16
"""Pieces waiting for the caller: with CHUNK_BYTES, at most 16 MiB, and a shard more where shards are
checked whole (while the next is held by its check: at most 2 shards and 16 MiB in memory)."""
_END = object()


class ReadAhead:
    """Reads `source` to its end in a thread that owns it (and closes it), passing each piece
    through `check` where given; `pieces()` yields them in order and raises what the thread raised.
    Leaving the `with` block stops the thread at its next piece."""

    def __init__(self, source: FifoReader, check: Optional[WholeShardCheck] = None) -> None:
        self._source, self._check = source, check
        # Room for a shard released whole, so that the next one is read and checked while it is dealt.
        depth = _DEPTH + (check.most_pieces(CHUNK_BYTES) if check is not None else 0)
        self._queue: "queue.Queue[object]" = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._free: "queue.SimpleQueue[bytearray]" = queue.SimpleQueue()
        """Chunks whose pieces the caller is done with."""
        self._thread = threading.Thread(target=self._run, name=f"pipe-read-ahead {source.path}", daemon=True)

    def __enter__(self) -> "ReadAhead":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()

    def pieces(self) -> Iterator[memoryview]:
        """The stream's pieces in order; each is the caller's until it asks for the next."""
        while True:
            item = self._get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            piece, ends_chunk = item  # type: ignore[misc]
            yield piece
            if ends_chunk:  # read into again: fresh memory costs a page fault per 4 KiB
                self._free.put(piece.obj)

    def _get(self) -> object:
        while True:
            try:
                return self._queue.get(timeout=POLL_SECONDS)
            except queue.Empty:
                # Every read of the thread has a timeout, after which it puts the error here.
                if not self._thread.is_alive() and self._queue.empty():
                    raise RuntimeError(f"the read-ahead of {self._source.path} stopped without a word") from None

    def _run(self) -> None:
        try:
            with self._source:
                self._read()
            self._put(_END)
        except BaseException as error:  # noqa: BLE001 - raised in the caller's thread
            self._put(error)

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                chunk = self._free.get_nowait()
            except queue.Empty:
                chunk = bytearray(CHUNK_BYTES)
            filled = self._source.fill(memoryview(chunk))
            if filled:
                view = memoryview(chunk)[:filled]
                for piece in (self._check.feed(view) if self._check is not None else [(view, True)]):
                    if not self._put(piece):
                        return
            if filled < CHUNK_BYTES:
                break
        if self._check is not None and not self._stop.is_set():
            self._check.finish()

    def _put(self, item: object) -> bool:
        """Queues `item`; False once the caller has stopped."""
        return put_unless_stopped(self._queue, item, self._stop, POLL_SECONDS)


class PieceReader:
    """The pieces as one stream to `read` from: what a lone consumer's record reader takes."""

    def __init__(self, pieces: Iterator[memoryview]) -> None:
        self._pieces = pieces
        self._piece: Union[memoryview, bytes] = b""

    def read(self, count: int) -> bytes:
        parts: List[bytes] = []
        while count:
            if not self._piece:
                self._piece = next(self._pieces, b"")
                if not self._piece:
                    break
            part = self._piece[:count]
            self._piece = self._piece[len(part):]
            parts.append(bytes(part))
            count -= len(part)
        return b"".join(parts)
