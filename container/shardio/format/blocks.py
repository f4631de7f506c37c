"""A block of a shard read whole (`read_block`) and parsed in memory (`BlockStream`), its records
handed out as views of it: the canonical order (order.py) reads a shard 16 records at a time, one
read of the block's own size each.

A record then costs one copy out of the page cache (the read) and the parse's copy of its image; a
buffered file would copy each record once more, and refill its whole buffer (1 MiB, more than a
block) at each seek. The readers' own path (`BlockBuffer`) reads every block of a stream into one
buffer, reused from stream to stream within the process: memory allocated afresh for each block
costs the kernel a page fault per 4 KiB on its first touch, as much again as the read.

Each stream reads `READ_AHEAD_BLOCKS` blocks ahead of the one whose records it hands out, in a
thread of its own (`read_blocks`): on a FastFile mount each block is an S3 range request, and its
latency would otherwise stop the reader once a block (bench/loader-cpu/fastfile.py,
docs/performance.md "FastFile"). The order of the records is the same either way.
"""
from __future__ import annotations

import io
import os
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO, Deque, Iterator, List, Optional, Sequence, Tuple, Union

READ_AHEAD_BLOCKS = 2
"""Blocks a stream reads ahead of the one it hands out (0: each when it is reached): chosen by
bench/loader-cpu/fastfile.py, where with 30 ms a range request an epoch read in blocks reaches
0.63–0.72 of whole-shard reads, 0.76–0.88 one block ahead and 0.87–0.91 two ahead (docs/performance.md
"FastFile"). Each costs a block's buffer (16 records, ~1.5 MB of ImageNet JPEGs) per open stream."""
KEPT_BUFFERS = 8 * (READ_AHEAD_BLOCKS + 1)
"""Buffers kept for the next streams once theirs end (order.py OPEN_SHARDS are read at once, each
into READ_AHEAD_BLOCKS + 1 buffers)."""
_free: List[bytearray] = []  # this process's (never pickled with a directory), whatever threads read
_free_lock = threading.Lock()
_PREADV = getattr(os, "preadv", None)


def read_block(handle: BinaryIO, offset: int, size: int, into: Optional[bytearray] = None) -> memoryview:
    """A view of `size` bytes of an open file from `offset`, fewer only at its end, read into `into`
    (at least `size` long; a buffer of their own without it): outside the handle's buffer where the
    system reads at an offset (preadv: Linux, the BSDs), else through it after a seek. Several reads
    where one answers in part (a FUSE mount, FastFile's)."""
    view = memoryview(bytearray(size) if into is None else into)[:size]
    got = 0
    while got < size and (count := _read_into(handle, view[got:], offset + got)):
        got += count
    return view[:got]


def _read_into(handle: BinaryIO, view: memoryview, offset: int) -> int:
    if _PREADV is not None:
        return _PREADV(handle.fileno(), [view], offset)
    handle.seek(offset)
    return handle.readinto(view) or 0  # type: ignore[attr-defined]


class BlockBuffer:
    """The buffer one stream's blocks are read into, each overwriting the last: a record read into it
    is valid until the stream's next block is read. Taken from the process's free buffers and given
    back (`release`) when the stream ends."""

    def __init__(self) -> None:
        self._buffer: Optional[bytearray] = None

    def read(self, handle: BinaryIO, offset: int, size: int) -> memoryview:
        if self._buffer is None or len(self._buffer) < size:
            self.release()
            self._buffer = _take(size)
        return read_block(handle, offset, size, self._buffer)

    def release(self) -> None:
        with _free_lock:
            if self._buffer is not None and len(_free) < KEPT_BUFFERS:
                _free.append(self._buffer)
        self._buffer = None


def _take(size: int) -> bytearray:
    with _free_lock:
        for index, buffer in enumerate(_free):
            if len(buffer) >= size:
                return _free.pop(index)
    return bytearray(size + size // 4)  # room for the stream's larger blocks


def read_blocks(handle: BinaryIO, ranges: Sequence[Optional[Tuple[int, int]]], *, reuse: bool,
                ahead: Optional[int] = None) -> Iterator[Optional[memoryview]]:
    """The block of each (offset, size) of `ranges` in order, `ahead` (READ_AHEAD_BLOCKS) read ahead
    in a thread while the caller uses the last one handed out; None for a None range, which the
    caller reads through `handle` itself: no read is in flight then. With `reuse`, blocks are read
    into ahead + 1 BlockBuffers in turn, so a block's views are valid until the next is asked for."""
    ahead = READ_AHEAD_BLOCKS if ahead is None else ahead
    buffers = [BlockBuffer() for _ in range(ahead + 1)] if reuse else []
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shardio-read-ahead") if ahead else None
    pending: Deque[Future] = deque()

    def read(index: int) -> memoryview:
        offset, size = ranges[index]  # type: ignore[misc]
        return buffers[index % len(buffers)].read(handle, offset, size) if buffers else read_block(handle, offset, size)

    started = 0  # the next range whose read is not under way
    try:
        for index, wanted in enumerate(ranges):
            if wanted is None:
                started = index + 1
                yield None
                continue
            # Never past a range the caller reads itself: its reads and ours would share the handle.
            while pool is not None and started <= index + ahead and started < len(ranges) and ranges[started] is not None:
                pending.append(pool.submit(read, started))
                started += 1
            yield pending.popleft().result() if pending else read(index)
            started = max(started, index + 1)
    finally:
        for future in pending:  # a buffer is not given back while a thread reads into it
            if not future.cancel():
                future.exception()  # waits for the read under way
        if pool is not None:
            pool.shutdown(wait=True)
        for buffer in buffers:
            buffer.release()


class BlockStream:
    """The bytes of a block as a readable, seekable stream (what read_records takes) whose reads are
    views of the block, not copies: a record's payload is a memoryview of it. A read cut short by
    the block's end gives bytes, so that a reader completing a short header by concatenation can."""

    def __init__(self, block: memoryview) -> None:
        self._view = block
        self._at = 0

    def read(self, count: int = -1) -> Union[memoryview, bytes]:
        start = self._at
        end = len(self._view) if count < 0 else min(start + count, len(self._view))
        self._at = end
        view = self._view[start:end]
        return view if end - start == count or count < 0 else bytes(view)

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, position: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: len(self._view)}[whence]
        self._at = max(0, base + position)
        return self._at
