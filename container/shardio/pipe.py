"""Pipe mode: SageMaker streams a channel's S3 objects, one after the other, through a FIFO per
epoch, `/opt/ml/input/data/<channel>_<epoch>`, created when the previous one has been read to its
end. Concatenated shards are still one valid TFRecord or RecordIO stream (RecordIO records are
padded to 4 bytes), so the stream is read with the shard readers.

A FIFO has one reader. With several consumers on a host (GPU processes × loader workers), one
`PipeFanOut` thread reads the channel's FIFO and deals whole records round-robin into one FIFO per
consumer, named like SageMaker's, so every consumer reads its own with the same code. Every
consumer must read each epoch to its end (the fan-out waits for the slowest one).
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from typing import BinaryIO, Iterator, List, Optional

from .formats import read_records, to_image
from .records import ImageRecord, sniff_format
from .split import Consumer

DEFAULT_PIPE_TIMEOUT = 600.0
_BUFFER = 1024 * 1024
_POLL_SECONDS = 0.05


def pipe_path(directory: str, channel: str, epoch: int) -> str:
    """`<directory>/<channel>_<epoch>`, where SageMaker (or the fan-out) puts an epoch's FIFO."""
    return os.path.join(directory, f"{channel}_{epoch}")


def wait_for_pipe(path: str, timeout: float = DEFAULT_PIPE_TIMEOUT) -> None:
    """Waits until the FIFO exists: the next epoch's appears only after the last one was drained."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"Pipe-mode FIFO {path} did not appear within {timeout:.0f} s")
        time.sleep(_POLL_SECONDS)


class PipeChannel:
    """The image records of one consumer's FIFO, epoch after epoch."""

    def __init__(self, directory: str, name: str, *, timeout: float = DEFAULT_PIPE_TIMEOUT, check_crc: bool = False) -> None:
        self.directory = directory
        self.name = name
        self.timeout = timeout
        self.check_crc = check_crc

    def images(self, epoch: int) -> Iterator[ImageRecord]:
        """Every record of the epoch's FIFO in stream order, read to its end."""
        path = pipe_path(self.directory, self.name, epoch)
        try:
            wait_for_pipe(path, self.timeout)
        except TimeoutError as error:
            raise TimeoutError(f"{error}: each epoch's FIFO can be read once; call set_epoch() before every epoch") from None
        with open(path, "rb", buffering=_BUFFER) as stream:
            shard_format, stream = sniff_format(stream, path)
            if shard_format is None:
                return
            for record in read_records(shard_format, stream, path, check_crc=self.check_crc):
                yield to_image(shard_format, record, path)


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


class PipeFanOut:
    """Reads `<source_dir>/<channel>_<epoch>` and deals its records to `consumers` FIFOs
    `<fanout_dir>/<channel>-<consumer>_<epoch>` (read them with `PipeChannel(fanout_dir,
    consumer_channel(channel, c))`).

    Record k of the stream goes to slot k mod (consumers × groups); a group (host) keeps the slots
    group_index × consumers … + consumers − 1 and skips the others. One group when each host gets
    its own objects (ShardedByS3Key); the host count when every host streams the same objects.
    """

    def __init__(
        self,
        source_dir: str,
        channel: str,
        fanout_dir: str,
        consumers: int,
        *,
        group_index: int = 0,
        group_count: int = 1,
        timeout: float = DEFAULT_PIPE_TIMEOUT,
        epochs: Optional[int] = None,
    ) -> None:
        if consumers < 1 or group_count < 1 or not 0 <= group_index < group_count:
            raise ValueError(f"fan-out needs consumers ≥ 1 and 0 ≤ group_index < group_count, got "
                             f"{consumers}, {group_index}, {group_count}")
        self.source_dir, self.channel, self.fanout_dir = source_dir, channel, fanout_dir
        self.consumers, self.group_index, self.group_count = consumers, group_index, group_count
        self.timeout, self.epochs = timeout, epochs
        self.error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, name=f"pipe-fanout-{channel}", daemon=True)

    def start(self) -> "PipeFanOut":
        shutil.rmtree(self.fanout_dir, ignore_errors=True)
        os.makedirs(self.fanout_dir)
        self._thread.start()
        return self

    def join(self, timeout: Optional[float] = None) -> None:
        self._thread.join(timeout)
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        epoch = 0
        try:
            while self.epochs is None or epoch < self.epochs:
                self.relay_epoch(epoch)
                epoch += 1
        except BaseException as error:  # noqa: BLE001 - kept for join(); the thread must not die silently
            self.error = error
            raise

    def relay_epoch(self, epoch: int) -> int:
        """Relays one epoch; returns the records this group kept."""
        source = pipe_path(self.source_dir, self.channel, epoch)
        wait_for_pipe(source, self.timeout)
        targets = [pipe_path(self.fanout_dir, consumer_channel(self.channel, c), epoch) for c in range(self.consumers)]
        for target in targets:
            os.mkfifo(target)
        # Opening a FIFO for writing blocks until its reader opens it; once both ends are open the
        # name is no longer needed.
        writers = [open(target, "wb", buffering=_BUFFER) for target in targets]
        for target in targets:
            os.unlink(target)
        kept = 0
        slots = self.consumers * self.group_count
        first_slot = self.group_index * self.consumers
        try:
            with open(source, "rb", buffering=_BUFFER) as stream:
                shard_format, stream = sniff_format(stream, source)
                recorder = _Recorder(stream)
                records = read_records(shard_format, recorder, source) if shard_format else iter(())  # type: ignore[arg-type]
                for number, _record in enumerate(records):
                    framed = recorder.take()
                    slot = number % slots - first_slot
                    if 0 <= slot < self.consumers:
                        writers[slot].write(framed)
                        kept += 1
        finally:
            for writer in writers:
                writer.close()
        return kept


def consumer_channel(channel: str, consumer: int) -> str:
    """The name of a consumer's FIFOs in the fan-out directory."""
    return f"{channel}-{consumer}"



class PipeSource:
    """A Pipe-mode channel as a record source: the consumer reads SageMaker's FIFO itself when it
    is the only one, else its own FIFO from the fan-out that local rank 0 runs."""

    def __init__(
        self,
        data_dir: str,
        channel: str,
        *,
        local_consumers: int,
        host_sharded: bool,
        host_count: int,
        fanout_dir: str,
        timeout: float = DEFAULT_PIPE_TIMEOUT,
        check_crc: bool = False,
        dataset_version: Optional[str] = None,
    ) -> None:
        self.data_dir, self.channel, self.fanout_dir = data_dir, channel, fanout_dir
        self.dataset_version = dataset_version
        self.local_consumers = local_consumers
        self.host_sharded = host_sharded
        # Every host reads the whole stream unless it gets its own objects, and keeps its share.
        self.total_consumers = local_consumers * (1 if host_sharded else host_count)
        self.timeout, self.check_crc = timeout, check_crc

    def images(self, consumer: Consumer, epoch: int, seed: int) -> Iterator[ImageRecord]:
        # The stream's order is SageMaker's (its ShuffleConfig reshuffles objects every epoch);
        # the seed only drives the consumer's shuffle buffer.
        if consumer.count != self.total_consumers:
            raise ValueError(f"channel {self.channel}: read by {consumer.count} consumers but opened for {self.total_consumers}; "
                             "open the channel with the DataLoader's num_workers")
        if consumer.count == 1:
            channel = PipeChannel(self.data_dir, self.channel, timeout=self.timeout, check_crc=self.check_crc)
        else:
            name = consumer_channel(self.channel, consumer.index % self.local_consumers)
            channel = PipeChannel(self.fanout_dir, name, timeout=self.timeout, check_crc=self.check_crc)
        return channel.images(epoch)
