"""How the records are divided among the consumers: every (rank, loader worker) pair reads a
disjoint part, and together they read everything once.

With ShardedByS3Key each host holds only its own shards, so the consumers are the host's
(local ranks × workers); otherwise every host sees every shard and the consumers are the job's
(ranks × workers). A consumer's share is a contiguous range of the epoch's canonical order
(order.py), which the seed, the epoch and the dataset alone decide: given record counts (from the
index files) by record, so the parts differ by at most one record whatever the shard count;
without them whole shards, dealt round-robin from the epoch's shard order.

`consumer_share` is the one place a share is decided: the readers, the bad-record budget and the
replay of a saved position (`consumed_records`) all take it from here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from .order import Resumed, Run, Segment, consumer_order, remaining_order, shard_order, split_segments

__all__ = ["Consumer", "Placement", "Segment", "consumer_of", "consumer_share", "consumed_records"]


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


def consumer_share(counts: Optional[Sequence[int]], shard_count: int, consumer: Consumer, seed: int, epoch: int,
                   resumed: Optional[Resumed] = None) -> List[Segment]:
    """What `consumer` reads in `epoch`, in order: its range of the canonical order by record where
    the shards' record `counts` are known (less what `resumed` says earlier runs consumed), else
    whole shards (stop None)."""
    consumed = resumed.consumed if resumed is not None else None
    if counts is None:
        if consumed is not None:
            raise ValueError("a position saved at another worker or rank count needs every shard's record count "
                             "(the index files): this dataset has shards without one")
        return [Segment(shard, 0, None) for shard in shard_order(shard_count, seed, epoch)[consumer.index::consumer.count]]
    return split_segments(remaining_order(counts, seed, epoch, consumed), consumer.count, consumer.index)


def consumed_records(counts: Sequence[int], seed: int, epoch: int, runs: Sequence[Run], shuffle_buffer: int) -> Resumed:
    """Where an epoch resumes after `runs`: the records their consumers handed out, replayed from the
    counts alone (each consumer's order is a pure function of its share and its seeds)."""
    resumed = Resumed()
    for number, run in enumerate(runs):
        # The run's shares are split from what was left when it started: its own records are marked in a copy.
        consumed = [bytearray(count) for count in counts] if resumed.consumed is None else [bytearray(flags) for flags in resumed.consumed]
        # One order for all of the run's consumers: what was left when it started, split among them.
        left = remaining_order(counts, seed, epoch, resumed.consumed)
        for index, count in enumerate(run.yielded):
            share = split_segments(left, run.consumers, index)
            taken = 0
            for shard, position in consumer_order(share, seed, epoch, number, index, run.consumers, shuffle_buffer):
                if taken == count:
                    break
                consumed[shard][position] = 1
                taken += 1
            if taken < count:
                raise ValueError(f"the position says consumer {index} of {run.consumers} handed out {count} records in "
                                 f"epoch {epoch}, but its share holds {taken}")
        resumed = Resumed(number + 1, consumed)
    return resumed
