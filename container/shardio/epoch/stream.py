"""What one consumer reads in one epoch: its share of the records (split.py) in its interleaved
order, through a seeded shuffle buffer (order.py). Pure Python, so that the split is tested
without PyTorch; dataset.py wraps it."""
from __future__ import annotations

from typing import Iterator, Optional, Protocol

from .heap import keep_heap
from .order import Resumed, generators, shuffled
from ..format.records import ImageRecord
from .split import Consumer, Placement, consumer_of

__all__ = ["RecordSource", "consumer_images", "shuffled"]


class RecordSource(Protocol):
    """Where a channel's records come from: a shard directory or a Pipe-mode channel."""

    host_sharded: bool
    """Each host holds only its own shards (ShardedByS3Key)."""

    dataset_version: Optional[str]
    """The dataset version read (its manifest's `datasetVersion`); None without a versioned manifest."""

    def images(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> Iterator[ImageRecord]:
        """The image records of `consumer`'s share in `epoch`; `resumed`: what earlier runs of the epoch consumed."""
        ...


def consumer_images(
    source: RecordSource,
    placement: Placement,
    epoch: int,
    *,
    seed: int = 0,
    shuffle_buffer: int = 0,
    worker: int = 0,
    workers: int = 1,
    resumed: Optional[Resumed] = None,
) -> Iterator[ImageRecord]:
    """The records loader worker `worker` (of `workers`, 1 without worker processes) of the process
    at `placement` reads in `epoch`, shuffled with a seed of (seed, epoch, run, consumer); `resumed`:
    what earlier runs of the epoch consumed (a position restored at another worker or rank count)."""
    keep_heap()  # in the process that reads: a loader worker's own
    consumer = consumer_of(placement, worker, workers, source.host_sharded)
    records = source.images(consumer, epoch, seed, resumed) if resumed is not None else source.images(consumer, epoch, seed)
    _interleaving, buffering = generators(seed, epoch, resumed.runs if resumed else 0, consumer.index, consumer.count)
    return shuffled(records, shuffle_buffer, buffering)
