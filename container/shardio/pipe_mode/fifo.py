"""FIFOs opened, read and written without blocking, so that every wait has a timeout that names
the FIFO and what was awaited (a blocking open or read of a FIFO whose other end never comes waits
forever). Linux: a FIFO is polled, and Linux reports one that no writer has opened yet as not
ready (POLLHUP only once a writer has come and gone), so the first wait covers the writer's open.
"""
from __future__ import annotations

import errno
import fcntl
import io
import os
import select
import time
from typing import BinaryIO, List, Optional

_BUFFER = 1024 * 1024
POLL_SECONDS = 0.05
"""How often a wait for a file to appear, or a reader to open a FIFO, looks again."""


class FifoReader(io.RawIOBase):
    """A FIFO opened without blocking and read with a timeout on every wait, the writer's open included."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__()
        self.path, self.timeout, self.offset = path, timeout, 0
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def wait(self) -> None:
        """Until there is data to read or the writer has closed, for at most `timeout` seconds."""
        if not self._poll.poll(self.timeout * 1000):
            waited = "no writer opened it and sent data" if self.offset == 0 else f"no data came after offset {self.offset}"
            raise TimeoutError(f"Pipe-mode FIFO {self.path}: {waited} within {self.timeout:.0f} s")

    def fill(self, view: memoryview) -> int:
        """Reads into all of `view`, less only where the stream ends first; the bytes read."""
        filled = 0
        while filled < len(view):
            count = self.readinto(view[filled:])
            if not count:
                break
            filled += count
        return filled

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self.offset == 0:  # a FIFO no writer has opened yet reads as ended: wait for one first
            self.wait()
        while True:
            try:
                count = os.readv(self._fd, [buffer])
            except BlockingIOError:
                self.wait()
                continue
            self.offset += count
            return count

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


def open_fifo(path: str, timeout: float) -> BinaryIO:
    """A FIFO to read, buffered, whose every wait (for a writer, for data) times out naming it."""
    return io.BufferedReader(FifoReader(path, timeout), _BUFFER)  # type: ignore[return-value]


def open_raw_fifo(path: str, timeout: float) -> FifoReader:
    """A FIFO to read unbuffered (what was read is all that left it: the rest can be spliced on), its
    pipe grown to SOURCE_PIPE_BYTES where the system allows, every wait timing out naming it."""
    reader = FifoReader(path, timeout)
    grow_pipe(reader.fileno(), SOURCE_PIPE_BYTES)
    return reader


SOURCE_PIPE_BYTES = 1024 * 1024
"""A Pipe-mode channel's FIFO, grown from Linux's 64 KiB so that one poll moves more (fs.pipe-max-size: 1 MiB by default)."""


def grow_pipe(fd: int, size: int) -> None:
    """Asks Linux for a pipe buffer of `size` bytes; keeps the one it has where that is refused (over
    fs.pipe-max-size or the user's fs.pipe-user-pages-soft) or the system has no F_SETPIPE_SZ."""
    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setting is None:
        return
    try:
        fcntl.fcntl(fd, setting, size)
    except OSError:
        pass


def open_writers(fifos: List[str], timeout: float, writers: List[Optional["FifoWriter"]]) -> None:
    """Opens each consumer's FIFO for writing, into its slot of `writers`, once its reader has
    opened it. The first reader may come any time (between epochs the trainer validates and
    checkpoints, and nobody waits on the fan-out); once one has, the others must within `timeout`.
    The caller closes the writers, also when this raises (after it has said why)."""
    deadline: Optional[float] = None
    pipe_bytes = consumer_pipe_bytes(len(fifos))
    while None in writers:
        for position, fifo in enumerate(fifos):
            if writers[position] is None:
                fd = _open_for_writing(fifo)
                if fd is not None:
                    grow_pipe(fd, pipe_bytes)
                    writers[position] = FifoWriter(fifo, fd, timeout)
        if deadline is None and any(writers):
            deadline = time.monotonic() + timeout
        if None in writers:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"fan-out FIFO {fifos[writers.index(None)]}: its consumer did not open it within "
                                   f"{timeout:.0f} s of the first one (every consumer reads every epoch to its end, "
                                   "set_epoch() before each)")
            time.sleep(POLL_SECONDS)


CONSUMER_PIPES_BYTES = 16 * 1024 * 1024
"""What the consumers' FIFOs of one fan-out may hold together: below Linux's default per-user soft
limit on pipe buffers (fs.pipe-user-pages-soft, 64 MiB), past which new pipes get 8 KiB."""


def consumer_pipe_bytes(consumers: int) -> int:
    """Each consumer FIFO's buffer: a share of CONSUMER_PIPES_BYTES, from Linux's default 64 KiB up to 1 MiB."""
    return min(SOURCE_PIPE_BYTES, max(64 * 1024, CONSUMER_PIPES_BYTES // max(1, consumers)))


def _open_for_writing(fifo: str) -> Optional[int]:
    """The FIFO opened for writing without blocking; None while no reader has opened it (ENXIO)."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:
        if error.errno != errno.ENXIO:
            raise
        return None


class FifoWriter:
    """A consumer's FIFO, written with a timeout on every wait (its reader may have stopped)."""

    def __init__(self, path: str, fd: int, timeout: float) -> None:
        self.path, self.timeout, self._fd = path, timeout, fd
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLOUT)

    def fileno(self) -> int:
        return self._fd

    def wait(self) -> None:
        """Until the FIFO has room (or its reader has gone), for at most `timeout` seconds."""
        if not self._poll.poll(self.timeout * 1000):
            raise TimeoutError(f"fan-out FIFO {self.path}: its consumer read nothing for {self.timeout:.0f} s")

    def write(self, data) -> None:
        """Writes all of `data` (any bytes-like object)."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                self.wait()
            except BrokenPipeError:
                raise self.closed_early() from None

    def closed_early(self) -> BrokenPipeError:
        return BrokenPipeError(f"fan-out FIFO {self.path}: its consumer closed it before the epoch's end")

    def close(self) -> None:
        os.close(self._fd)


def release_fifos(fifos: List[str]) -> None:
    """Removes the FIFOs not yet unlinked, first opening and closing each for writing where its
    reader waits, which then sees the end of the stream instead of waiting."""
    for fifo in fifos:
        if not os.path.exists(fifo):
            continue
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader: nobody waits on it
            pass
        os.unlink(fifo)
