"""The record order before the canonical order (#40), kept for the bench's baseline only: each
consumer reads a contiguous range of the pack-time order, which of the ranges it reads permuted per
epoch, shard by shard in file order (then the same shuffle buffer). Sequential reads, one shard at
a time: the cheapest order there is to read, so the canonical order's cost is measured against it.
"""
from __future__ import annotations

import random
from typing import Iterator, Optional

from shardio.epoch.order import split_segments
from shardio.epoch.split import Consumer, Segment
from shardio.format.records import ImageRecord
from shardio.source.directory import ShardDirectory
from shardio.epoch.order import Resumed


class ContiguousOrder(ShardDirectory):
    """A shard directory read in the order shardio read it before #40."""

    def images(self, consumer: Consumer, epoch: int, seed: int, resumed: Optional[Resumed] = None) -> Iterator[ImageRecord]:
        slots = list(range(consumer.count))
        random.Random(f"{seed}/{epoch}").shuffle(slots)
        counts = self.record_counts() or []
        whole = [Segment(shard, 0, count) for shard, count in enumerate(counts)]
        for segment in split_segments(whole, consumer.count, slots[consumer.index]):
            for position, record in self.read_segments(segment.shard, [segment]):
                yield self.image(record, segment.shard, position)
