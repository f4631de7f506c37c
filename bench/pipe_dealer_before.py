"""The Pipe fan-out's dealer before issue #46, kept as the bench's baseline (bench/pipe-fanout.py):
every record parsed by the shard readers in Python and written on as bytes, one thread."""
from __future__ import annotations

from typing import BinaryIO, List

from shardio.pipe_mode.fifo import FifoWriter, open_fifo
from shardio.format.formats import read_records
from shardio.pipe_mode.pipe import COPY, PipeFanOut, _check_count
from shardio.format.records import sniff_format

BEFORE = "python (before)"


class _Recorder:
    """Keeps the bytes read through it, so a record can be passed on exactly as it was framed."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._chunks: List[bytes] = []

    def read(self, count: int) -> bytes:
        data = self._stream.read(count)
        self._chunks.append(data)
        return data

    def take(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


class FanOutBefore(PipeFanOut):
    """PipeFanOut with the dealer it had before #46."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["path"] = COPY
        super().__init__(*args, **kwargs)

    def _deal(self, source: str, epoch: int, writers: List[FifoWriter]) -> List[int]:
        dealt = [0] * self.consumers
        slots = self.consumers * self.group_count
        first_slot = self.group_index * self.consumers
        streamed = 0
        with open_fifo(source, self.timeout) as fifo:
            shard_format, stream = sniff_format(fifo, source)
            recorder = _Recorder(stream)
            records = (read_records(shard_format, recorder, source, check_crc=False, max_record=self.max_record)  # type: ignore[arg-type]
                       if shard_format else iter(()))
            for _record in records:
                framed = recorder.take()
                slot = streamed % slots - first_slot
                if 0 <= slot < self.consumers:
                    writers[slot].write(framed)
                    dealt[slot] += 1
                streamed += 1
        _check_count(source, epoch, streamed, self.listed)
        return dealt
