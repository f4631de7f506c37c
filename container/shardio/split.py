"""How the records are divided among the consumers: every (rank, loader worker) pair reads a
disjoint part, and together they read everything once.

With ShardedByS3Key each host holds only its own shards, so the consumers are the host's
(local ranks × workers); otherwise every host sees every shard and the consumers are the job's
(ranks × workers). Given record counts (from the index files) the split is by record, so the
parts differ by at most one record whatever the shard count; without them it is by whole shard.
Which part a consumer takes changes every epoch (a seeded permutation every consumer computes
alike), so batches mix differently while the parts stay disjoint.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import List, Optional, Sequence


@dataclass(frozen=True)
class Consumer:
    """One reader of the records: `index` among `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"consumer index must be in [0, count) and count at least 1, got {self.index} of {self.count}")


@dataclass(frozen=True)
class Placement:
    """Where this training process runs: its rank among all processes and on its host."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1

    @property
    def host_index(self) -> int:
        return self.rank // self.local_world_size

    @property
    def host_count(self) -> int:
        return self.world_size // self.local_world_size


def consumer_of(placement: Placement, worker: int, workers: int, host_sharded: bool) -> Consumer:
    """The consumer a loader worker of a process is. `workers` is 1 without worker processes."""
    if host_sharded:
        return Consumer(placement.local_rank * workers + worker, placement.local_world_size * workers)
    return Consumer(placement.rank * workers + worker, placement.world_size * workers)


@dataclass(frozen=True)
class Segment:
    """Records [start, stop) of the shard at `shard` in the shard list; `stop` None: to the shard's
    end (a whole shard whose record count is unknown)."""

    shard: int
    start: int
    stop: Optional[int]


def epoch_slot(consumer: Consumer, seed: int, epoch: int) -> int:
    """The part a consumer reads in an epoch: a permutation of the parts, the same for all consumers."""
    slots = list(range(consumer.count))
    random.Random(f"{seed}/{epoch}").shuffle(slots)
    return slots[consumer.index]


def split_records(counts: Sequence[int], consumers: int, slot: int) -> List[Segment]:
    """Part `slot` of `consumers` contiguous, near-equal ranges over the records of all shards in order."""
    total = sum(counts)
    first, end = total * slot // consumers, total * (slot + 1) // consumers
    segments = []
    shard_start = 0
    for shard, count in enumerate(counts):
        start, stop = max(first, shard_start), min(end, shard_start + count)
        if start < stop:
            segments.append(Segment(shard, start - shard_start, stop - shard_start))
        shard_start += count
    return segments


def split_shards(shard_count: int, consumers: int, slot: int) -> List[int]:
    """Part `slot` of the shards dealt round-robin: whole shards, when record counts are unknown."""
    return list(range(slot, shard_count, consumers))


def consumer_share(counts: Optional[Sequence[int]], shard_count: int, consumer: Consumer, seed: int, epoch: int) -> List[Segment]:
    """What `consumer` reads in `epoch`, in order: by record where the shards' record `counts` are
    known, else whole shards (stop None). The one place a consumer's share is decided: the readers
    and the bad-record budget (`part_records`) both take it from here."""
    slot = epoch_slot(consumer, seed, epoch)
    if counts is None:
        return [Segment(shard, 0, None) for shard in split_shards(shard_count, consumer.count, slot)]
    return split_records(counts, consumer.count, slot)
