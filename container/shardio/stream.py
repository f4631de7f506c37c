"""What one consumer reads in one epoch: its part of the records (split.py), through a seeded
shuffle buffer. Pure Python, so that the split is tested without PyTorch; dataset.py wraps it."""
from __future__ import annotations

import random
from typing import Iterable, Iterator, Optional, Protocol, TypeVar

from .records import ImageRecord
from .split import Consumer, Placement, consumer_of

T = TypeVar("T")


class RecordSource(Protocol):
    """Where a channel's records come from: a shard directory or a Pipe-mode channel."""

    host_sharded: bool
    """Each host holds only its own shards (ShardedByS3Key)."""

    dataset_version: Optional[str]
    """The dataset version read (its manifest's `datasetVersion`); None without a versioned manifest."""

    def images(self, consumer: Consumer, epoch: int, seed: int) -> Iterator[ImageRecord]:
        """The image records of `consumer`'s part in `epoch`."""
        ...


def shuffled(items: Iterable[T], buffer_size: int, rng: random.Random) -> Iterator[T]:
    """The items in a random order within a window of `buffer_size`: once the buffer is full each
    new item replaces a randomly chosen one, which is handed out. Memory stays bounded whatever
    the stream's length; the pack-time shuffle already mixed the shards globally.

    While the buffer fills, one random item leaves for every two that come in: a worker whose
    buffer had to fill first read `buffer_size` records at each epoch's start before decoding one
    (all workers at once, the GPU waiting), and with many workers a worker's whole share of a
    small dataset. The buffer still reaches its size, after 2 × `buffer_size` items."""
    buffer: list = []
    for received, item in enumerate(items, 1):
        if len(buffer) < buffer_size:
            buffer.append(item)
            if received % 2 == 0:
                slot = rng.randrange(len(buffer))
                buffer[slot], buffer[-1] = buffer[-1], buffer[slot]
                yield buffer.pop()
            continue
        slot = rng.randrange(buffer_size)
        yield buffer[slot]
        buffer[slot] = item
    rng.shuffle(buffer)
    yield from buffer


def consumer_images(
    source: RecordSource,
    placement: Placement,
    epoch: int,
    *,
    seed: int = 0,
    shuffle_buffer: int = 0,
    worker: int = 0,
    workers: int = 1,
) -> Iterator[ImageRecord]:
    """The records loader worker `worker` (of `workers`, 1 without worker processes) of the process
    at `placement` reads in `epoch`, shuffled with a seed of (seed, epoch, consumer)."""
    consumer = consumer_of(placement, worker, workers, source.host_sharded)
    records = source.images(consumer, epoch, seed)
    if shuffle_buffer <= 1:
        return records
    return shuffled(records, shuffle_buffer, random.Random(f"{seed}/{epoch}/{consumer.index}"))
