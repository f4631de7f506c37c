"""Pipe mode: SageMaker streams a channel's S3 objects, one after the other, through a FIFO per
epoch, `/opt/ml/input/data/<channel>_<epoch>`, created when the previous one has been read to its
end. Concatenated shards are still one valid TFRecord or RecordIO stream (RecordIO records are
padded to 4 bytes), so the stream is read with the shard readers.

A FIFO has one reader. With several consumers on a host (GPU processes × loader workers), one
`PipeFanOut` thread reads the channel's FIFO and deals whole records round-robin into one FIFO per
consumer, named like SageMaker's, so every consumer reads its own with the same code. Every
consumer must read each epoch to its end (the fan-out waits for the slowest one). It reads only
each record's framing header in Python (pipe_frames.py) and moves the rest with os.splice on Linux
(SPLICE: pipe_splice.py), or reads the stream ahead in large pieces and writes each record on in
one write (COPY: pipe_copy.py, pipe_ahead.py) where the host checks shards whole or os.splice is
missing.

What a consumer can rely on (Linux, where FIFOs are polled):
- Every wait has a timeout (`timeout`, DEFAULT_PIPE_TIMEOUT by default) and its TimeoutError names
  what it waited for: an epoch's FIFO to appear, a writer to open it and send data, the consumers
  to open their FIFOs once the first has, a consumer to drain its FIFO. No FIFO is opened, read or
  written in a way that blocks without one. (The fan-out alone waits for an epoch's first consumer
  without one: between epochs the trainer validates and checkpoints, and nobody waits on it.)
- Errors reach the consumers at once: when the fan-out fails (a corrupt stream, a wrong record
  count, a timeout), every consumer's iterator raises FanOutError with the cause, which names the
  stream and the offset, in that epoch and in every later one instead of waiting.
- No changed byte used: where the manifest lists each shard's zlib CRC-32 and the records' own
  CRCs are missing or slow to check (RecordIO; TFRecord without a fast CRC-32C: crc32c.py), each shard of
  the stream is checked whole before any record of it is dealt (pipe_check.py), by the fan-out or
  the lone consumer; otherwise the consumers check each TFRecord's CRCs as they read it.
- No quiet partial epoch: where the whole stream reaches this host (FullyReplicated, or one host)
  and the dataset manifest is known, the records of each epoch are counted against its `records`;
  a consumer of the fan-out checks it got every record dealt to it.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from typing import Any, BinaryIO, Callable, Iterator, List, Optional

from .crc32c import warn_if_slow
from .errors import FormatError, redact
from .fifo import POLL_SECONDS, FifoWriter, open_fifo, open_raw_fifo, open_writers, release_fifos
from .formats import read_records, to_image
from .manifest import DatasetManifest
from .records import MAX_RECORD_BYTES, ImageRecord, record_limit, sniff_format
from .order import Resumed
from .split import Consumer
from .pipe_ahead import PieceReader, ReadAhead
from .pipe_check import ShardSums, WholeShardCheck, whole_shard_sums
from .pipe_copy import deal_by_copy
from .pipe_splice import deal_by_splice, splice_available

DEFAULT_PIPE_TIMEOUT = 600.0
FAILED_NAME = "fan-out.failed"
"""In the fan-out directory, once the fan-out has failed: why, for its consumers to raise."""


class FanOutError(RuntimeError):
    """The fan-out that deals a Pipe-mode channel to this host's consumers failed: the message says
    in which epoch, and why (the cause names the stream and the offset)."""


def pipe_path(directory: str, channel: str, epoch: int) -> str:
    """`<directory>/<channel>_<epoch>`, where SageMaker (or the fan-out) puts an epoch's FIFO."""
    return os.path.join(directory, f"{channel}_{epoch}")


def wait_for_pipe(path: str, timeout: float = DEFAULT_PIPE_TIMEOUT, check: Callable[[], None] = lambda: None) -> None:
    """Waits until the FIFO exists: the next epoch's appears only after the last one was drained.
    `check` raises when whatever makes the FIFO has failed, ending the wait at once."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"Pipe-mode FIFO {path} did not appear within {timeout:.0f} s")
        time.sleep(POLL_SECONDS)


def whole_stream(host_sharded: bool, host_count: int) -> bool:
    """Whether each host's stream holds every object of the channel, so its record count is the manifest's."""
    return not host_sharded or host_count == 1


def _check_count(stream: str, epoch: int, records: int, listed: Optional[DatasetManifest]) -> None:
    if listed is not None and records != listed.records:
        raise FormatError(f"{stream}: epoch {epoch} streamed {records} records but {listed.path} lists {listed.records}; "
                          "an epoch is never read in part")


def _write_atomically(path: str, text: str) -> None:
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)


def _end_path(fifo: str) -> str:
    """Where the fan-out says how many records it dealt into a FIFO, before it closes it."""
    return f"{fifo}.end"


class PipeChannel:
    """The image records of one consumer's FIFO, epoch after epoch: SageMaker's own, or (`relayed`)
    one a PipeFanOut fills, whose end-of-epoch and failure files are checked."""

    def __init__(self, directory: str, name: str, *, timeout: float = DEFAULT_PIPE_TIMEOUT, check_crc: bool = True,
                 listed: Optional[DatasetManifest] = None, relayed: bool = False, max_record: int = MAX_RECORD_BYTES,
                 sums: Optional[ShardSums] = None, decode_record: Callable[..., Any] = to_image) -> None:
        """`listed`: the manifest whose `records` every epoch of this (whole) stream must hold; None: not checked.
        `max_record`: the largest record length taken for true (`record_limit`).
        `sums`: what each shard of the stream is checked against, whole (`whole_shard_sums`): here where this
        reads SageMaker's FIFO, by the fan-out where `relayed`; the records' own CRCs are then not checked again.
        `decode_record`: what each record is made into (ShardDirectory.decode_record)."""
        self.directory = directory
        self.name = name
        self.timeout = timeout
        self.check_crc = check_crc
        self.listed = listed
        self.relayed = relayed
        self.max_record = max_record
        self.sums = sums
        self.decode_record = decode_record

    def images(self, epoch: int) -> Iterator[ImageRecord]:
        """Every record of the epoch's FIFO in stream order, read to its end and counted."""
        path = pipe_path(self.directory, self.name, epoch)
        try:
            wait_for_pipe(path, self.timeout, self._check_fanout)
        except TimeoutError as error:
            maker = ("local rank 0's fan-out makes it once every consumer has read the epoch before" if self.relayed else
                     "SageMaker makes it once the epoch before was read to its end")
            raise TimeoutError(f"{error}: {maker}; each epoch's FIFO can be read once, so call set_epoch() before every epoch") from None
        read = 0
        check_crc = self.check_crc and self.sums is None
        try:
            with self._stream(path) as fifo:
                shard_format, stream = sniff_format(fifo, path)
                if shard_format is not None:
                    for record in read_records(shard_format, stream, path, check_crc=check_crc, max_record=self.max_record):
                        read += 1
                        yield self.decode_record(shard_format, record, path, shard=path, position=read - 1)
        except (OSError, FormatError):  # a fan-out that failed closes its FIFOs early: its cause is the error to raise
            self._check_fanout()
            raise
        if self.relayed:
            self._check_dealt(path, epoch, read)
        else:
            _check_count(path, epoch, read, self.listed)

    @contextlib.contextmanager
    def _stream(self, path: str) -> Iterator[BinaryIO]:
        """The FIFO to read records from: through the shards' whole check where this reader does it."""
        if self.sums is None or self.relayed:
            with open_fifo(path, self.timeout) as fifo:
                yield fifo
            return
        with ReadAhead(open_raw_fifo(path, self.timeout), WholeShardCheck(self.sums, path, self.max_record)) as ahead:
            yield PieceReader(ahead.pieces())  # type: ignore[misc]

    def _check_fanout(self) -> None:
        if not self.relayed:
            return
        try:
            with open(os.path.join(self.directory, FAILED_NAME), encoding="utf-8") as handle:
                cause = handle.read()
        except FileNotFoundError:
            return
        raise FanOutError(f"the Pipe-mode fan-out into {self.directory} failed: {cause}")

    def _check_dealt(self, path: str, epoch: int, read: int) -> None:
        try:
            with open(_end_path(path), encoding="utf-8") as handle:
                dealt = json.load(handle)["records"]
        except FileNotFoundError:
            self._check_fanout()
            raise FanOutError(f"{path}: ended after {read} records without the fan-out's end of epoch {epoch} "
                              "(did the process of local rank 0 stop?)") from None
        os.remove(_end_path(path))
        if read != dealt:
            raise FormatError(f"{path}: read {read} records of epoch {epoch} but the fan-out dealt {dealt}")


class PipeFanOut:
    """Reads `<source_dir>/<channel>_<epoch>` and deals its records to `consumers` FIFOs
    `<fanout_dir>/<channel>-<consumer>_<epoch>` (read them with `PipeChannel(fanout_dir,
    consumer_channel(channel, c), relayed=True)`).

    Record k of the stream goes to slot k mod (consumers × groups); a group (host) keeps the slots
    group_index × consumers … + consumers − 1 and skips the others. One group when each host gets
    its own objects (ShardedByS3Key); the host count when every host streams the same objects.
    At each epoch's end it writes, per consumer FIFO, the records dealt into it; when it fails, the
    cause into FAILED_NAME, before it closes the FIFOs, so every consumer raises at once.
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
        listed: Optional[DatasetManifest] = None,
        max_record: int = MAX_RECORD_BYTES,
        sums: Optional[ShardSums] = None,
        path: Optional[str] = None,
    ) -> None:
        """`listed`: the manifest whose `records` every epoch of the (whole) stream must hold; None: not checked.
        `max_record`: the largest record length taken for true (`record_limit`).
        `sums`: what each shard of the stream is checked against, whole, before it is dealt (`whole_shard_sums`); None: not checked.
        `path`: SPLICE or COPY (`fanout_path`'s choice by default)."""
        if consumers < 1 or group_count < 1 or not 0 <= group_index < group_count:
            raise ValueError(f"fan-out needs consumers ≥ 1 and 0 ≤ group_index < group_count, got "
                             f"{consumers}, {group_index}, {group_count}")
        if path not in (None, SPLICE, COPY) or (path == SPLICE and (sums is not None or not splice_available())):
            raise ValueError(f"fan-out path {path!r}: allowed are {SPLICE!r} (Linux, shards not checked whole by the host) "
                             f"and {COPY!r}")
        self.path = path or fanout_path(sums)
        self.sums = sums
        self.source_dir, self.channel, self.fanout_dir = source_dir, channel, fanout_dir
        self.consumers, self.group_index, self.group_count = consumers, group_index, group_count
        self.timeout, self.epochs, self.listed, self.max_record = timeout, epochs, listed, max_record
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
        except BaseException as error:  # noqa: BLE001 - kept for join(); the consumers have been told
            self.error = error
            raise  # and in the log

    def relay_epoch(self, epoch: int) -> int:
        """Relays one epoch; returns the records this group kept."""
        source = pipe_path(self.source_dir, self.channel, epoch)
        targets = [pipe_path(self.fanout_dir, consumer_channel(self.channel, c), epoch) for c in range(self.consumers)]
        writers: List[Optional[FifoWriter]] = [None] * self.consumers
        try:
            wait_for_pipe(source, self.timeout)
            for target in targets:
                os.mkfifo(target)
            # A writer opens once its reader has; with both ends open the name is no longer needed.
            open_writers(targets, self.timeout, writers)
            for target in targets:
                os.unlink(target)
            dealt = self._deal(source, epoch, writers)  # type: ignore[arg-type]
            for target, count in zip(targets, dealt):
                _write_atomically(_end_path(target), json.dumps({"records": count}))
        except BaseException as error:
            _write_atomically(os.path.join(self.fanout_dir, FAILED_NAME),
                              redact(f"channel {self.channel} epoch {epoch}: {type(error).__name__}: {error}"))
            _close(writers)
            release_fifos(targets)
            raise
        _close(writers)
        return sum(dealt)

    def _deal(self, source: str, epoch: int, writers: List[FifoWriter]) -> List[int]:
        dealt = [0] * self.consumers
        slots = self.consumers * self.group_count
        first_slot = self.group_index * self.consumers

        def slot_of(record: int) -> Optional[int]:
            slot = record % slots - first_slot
            return slot if 0 <= slot < self.consumers else None

        fifo = open_raw_fifo(source, self.timeout)
        if self.path == SPLICE:
            with fifo:
                streamed = deal_by_splice(fifo, self.max_record, writers, slot_of, dealt)
        else:
            check = WholeShardCheck(self.sums, source, self.max_record) if self.sums is not None else None
            with ReadAhead(fifo, check) as ahead:
                streamed = deal_by_copy(ahead.pieces(), source, self.max_record, writers, slot_of, dealt)
        _check_count(source, epoch, streamed, self.listed)
        return dealt


SPLICE = "splice"
"""The fan-out moves each record's bytes FIFO to FIFO inside the kernel (pipe_splice.py)."""
COPY = "copy"
"""The fan-out reads the stream ahead in large pieces and writes each record on (pipe_copy.py)."""


def fanout_path(sums: Optional[ShardSums]) -> str:
    """SPLICE where Linux has it and the host need not see the bytes (no shard to check whole), else COPY."""
    return SPLICE if sums is None and splice_available() else COPY


def _close(writers: List[Optional[FifoWriter]]) -> None:
    for writer in writers:
        if writer is not None:
            writer.close()


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
        check_crc: bool = True,
        manifest: Optional[DatasetManifest] = None,
    ) -> None:
        """`manifest`: the dataset's, where the job has it (in the index channel): its version, and
        the record count of a whole stream."""
        self.data_dir, self.channel, self.fanout_dir = data_dir, channel, fanout_dir
        self.local_consumers = local_consumers
        self.host_sharded = host_sharded
        # Every host reads the whole stream unless it gets its own objects, and keeps its share.
        self.total_consumers = local_consumers * (1 if host_sharded else host_count)
        self.timeout, self.check_crc = timeout, check_crc
        self.dataset_version = manifest.dataset_version if manifest is not None else None
        self.manifest = manifest
        self.decode_record: Callable[..., Any] = to_image
        """What each record is made into (ShardDirectory.decode_record)."""
        self.listed = manifest if whole_stream(host_sharded, host_count) else None
        self.sums = whole_shard_sums(manifest, check_crc)
        if check_crc and self.sums is None:  # the consumers check each TFRecord's CRCs: say so where that is in pure Python
            warn_if_slow()
        self.max_record = record_limit(manifest.largest_shard_bytes if manifest is not None else 0)

    def images(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> Iterator[ImageRecord]:
        # The stream's order is SageMaker's (its ShuffleConfig reshuffles the objects every epoch,
        # whole: records stay in their shard's order); the seed only drives the consumer's shuffle
        # buffer. A stream cannot seek, so no position is restored in it.
        if resumed is not None and resumed.consumed is not None:
            raise ValueError(f"channel {self.channel}: a Pipe-mode stream cannot resume mid-epoch")
        if consumer.count != self.total_consumers:
            raise ValueError(f"channel {self.channel}: read by {consumer.count} consumers but opened for {self.total_consumers}; "
                             "open the channel with the DataLoader's num_workers")
        if consumer.count == 1:
            channel = PipeChannel(self.data_dir, self.channel, timeout=self.timeout, check_crc=self.check_crc, listed=self.listed,
                                  max_record=self.max_record, sums=self.sums, decode_record=self.decode_record)
        else:
            name = consumer_channel(self.channel, consumer.index % self.local_consumers)
            channel = PipeChannel(self.fanout_dir, name, timeout=self.timeout, check_crc=self.check_crc, relayed=True,
                                  max_record=self.max_record, sums=self.sums, decode_record=self.decode_record)
        return channel.images(epoch)
