"""The record order of an epoch: canonical (the seed, the epoch and the dataset alone decide it), then
each consumer's share of it, then the order a consumer hands its share out in.

1. Canonical order (`canonical_order`): the shards in a seeded random order, each cut into blocks of
   `BLOCK` records (whole, sequential reads) whose order within the shard is shuffled too; both
   change every epoch. This is MosaicML Streaming's canonical order with one canonical node: it
   does not depend on how many ranks or loader workers read it.
2. A consumer's share (`split_segments`): a contiguous, near-equal range of that sequence by record,
   so each consumer reads few shards, whole blocks at a time.
3. A consumer's order (`consumer_order`): `OPEN_SHARDS` of its shards open at once, the next record
   taken from one of them at random (weighted by the records each has left, so they end together),
   then the shuffle buffer (`shuffled`) as the last mix.

Every step is a pure function of record ids and seeded generators, so the records a consumer has
handed out are known from its count alone (split.py `consumed_records`): a position saved at one
worker/rank count is resumed at another by removing them from the canonical order and splitting the
rest anew (`Resumed`).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Segment:
    """Records [start, stop) of the shard at `shard` in the shard list; `stop` None: to the shard's
    end (a whole shard whose record count is unknown)."""

    shard: int
    start: int
    stop: Optional[int]

ORDER = "canonical-blocks-1"
"""The name of this algorithm, kept in a loader's position: a position counted in another order
(another shardio version's) cannot be resumed mid-epoch."""
BLOCK = 16
"""Records per block: the unit a shard's order is shuffled in and read in (one seek, then a
sequential read)."""
OPEN_SHARDS = 8
"""Shards a consumer reads at once, its records interleaved at random."""
_END = object()


def canonical_order(counts: Sequence[int], seed: int, epoch: int) -> List[Segment]:
    """The epoch's blocks in order: shards permuted, each shard's blocks permuted (seeded by seed and
    epoch). Every record of every shard once."""
    rng = random.Random(f"{seed}/{epoch}/canonical")
    shards = list(range(len(counts)))
    rng.shuffle(shards)
    blocks: List[Segment] = []
    for shard in shards:
        own = [Segment(shard, start, min(start + BLOCK, counts[shard])) for start in range(0, counts[shard], BLOCK)]
        rng.shuffle(own)
        blocks += own
    return blocks


def shard_order(shard_count: int, seed: int, epoch: int) -> List[int]:
    """The epoch's shard order where record counts are unknown (shards without indexes): whole shards."""
    shards = list(range(shard_count))
    random.Random(f"{seed}/{epoch}/canonical").shuffle(shards)
    return shards


def split_segments(segments: Sequence[Segment], consumers: int, slot: int) -> List[Segment]:
    """Part `slot` of `consumers` contiguous, near-equal ranges by record over `segments` in order
    (sizes differ by at most one record; a segment on a boundary is cut in two)."""
    total = sum(segment.stop - segment.start for segment in segments)  # type: ignore[operator]
    first, end = total * slot // consumers, total * (slot + 1) // consumers
    part: List[Segment] = []
    at = 0
    for segment in segments:
        size = segment.stop - segment.start  # type: ignore[operator]
        start, stop = max(first, at), min(end, at + size)
        if start < stop:
            part.append(Segment(segment.shard, segment.start + start - at, segment.start + stop - at))
        at += size
        if at >= end:
            break
    return part


def streams_of(share: Sequence[Segment]) -> List[List[Segment]]:
    """The share's segments grouped by shard, in order: one stream (an open shard) each."""
    streams: List[List[Segment]] = []
    for segment in share:
        if streams and streams[-1][0].shard == segment.shard:
            streams[-1].append(segment)
        else:
            streams.append([segment])
    return streams


def stream_size(stream: Sequence[Segment]) -> Optional[int]:
    """The records of a stream; None where a segment runs to a shard's end of unknown count."""
    if any(segment.stop is None for segment in stream):
        return None
    return sum(segment.stop - segment.start for segment in stream)  # type: ignore[operator]


def interleave(streams: Sequence[Tuple[Optional[int], Iterable[T]]], rng: random.Random, width: Optional[int] = None) -> Iterator[T]:
    """The items of `streams` ((size or None, items) each), `width` (OPEN_SHARDS) streams open at
    once, in order: each next item from an open stream drawn at random, weighted by the items it has
    left (all alike where a size is unknown). A stream of known size is read one item past its last,
    so that its reader's end-of-shard checks run."""
    pending = iter(streams)
    sizes: List[int] = []  # items left per open stream; -1: unknown
    items: List[Iterator[T]] = []
    width = OPEN_SHARDS if width is None else width
    weighted = True

    def open_next() -> None:
        nonlocal weighted
        entry = next(pending, None)
        if entry is not None:
            sizes.append(-1 if entry[0] is None else entry[0])
            items.append(iter(entry[1]))
            weighted = weighted and entry[0] is not None

    for _ in range(width):
        open_next()
    total = sum(sizes)
    draw = rng.random
    while items:
        if weighted:
            point = int(draw() * total)
            chosen = 0
            while point >= sizes[chosen]:
                point -= sizes[chosen]
                chosen += 1
        else:
            chosen = int(draw() * len(items))
        item = next(items[chosen], _END)
        if item is not _END and sizes[chosen] != -1:
            sizes[chosen] -= 1
            total -= 1
        if item is _END or sizes[chosen] == 0:
            if item is not _END:
                next(items[chosen], None)  # past its last item: the reader's end-of-shard checks run
            del sizes[chosen], items[chosen]
            open_next()
            total = sum(sizes)
            if item is _END:  # a stream of unknown size ended (one of known size short: its reader raised)
                continue
        yield item  # type: ignore[misc]


def shuffled(items: Iterable[T], buffer_size: int, rng: random.Random) -> Iterator[T]:
    """The items in a random order within a window of `buffer_size`: once the buffer is full each
    new item replaces a randomly chosen one, which is handed out. Memory stays bounded whatever
    the stream's length.

    While the buffer fills, one random item leaves for every two that come in: a worker whose
    buffer had to fill first read `buffer_size` records at each epoch's start before decoding one
    (all workers at once, the GPU waiting), and with many workers a worker's whole share of a
    small dataset. The buffer still reaches its size, after 2 × `buffer_size` items."""
    if buffer_size <= 1:
        yield from items
        return
    buffer: list = []
    draw = rng.random  # int(random() * n): a third of randrange's cost, per record
    for received, item in enumerate(items, 1):
        if len(buffer) < buffer_size:
            buffer.append(item)
            if received % 2 == 0:
                slot = int(draw() * len(buffer))
                buffer[slot], buffer[-1] = buffer[-1], buffer[slot]
                yield buffer.pop()
            continue
        slot = int(draw() * buffer_size)
        yield buffer[slot]
        buffer[slot] = item
    rng.shuffle(buffer)
    yield from buffer


@dataclass(frozen=True)
class Run:
    """An uninterrupted stretch of an epoch at one consumer count: the records each consumer (by
    index) handed out in it."""

    consumers: int
    yielded: Tuple[int, ...]


@dataclass
class Resumed:
    """Where an epoch resumes: after `runs` earlier runs, whose records (`consumed`, a 0/1 flag per
    record of each shard) are left out of the canonical order before it is split."""

    runs: int = 0
    consumed: Optional[List[bytearray]] = field(default=None, repr=False)


def generators(seed: int, epoch: int, runs: int, index: int, count: int) -> Tuple[random.Random, random.Random]:
    """The interleaving and shuffle-buffer generators of consumer `index` of `count` in run `runs` of an epoch."""
    key = f"{seed}/{epoch}/{runs}/{index}/{count}"
    return random.Random(f"{key}/interleave"), random.Random(f"{key}/buffer")


def remaining_order(counts: Sequence[int], seed: int, epoch: int, consumed: Optional[List[bytearray]]) -> List[Segment]:
    """The canonical order less the consumed records (each block cut into its unread ranges)."""
    blocks = canonical_order(counts, seed, epoch)
    if consumed is None:
        return blocks
    left: List[Segment] = []
    for block in blocks:
        flags = consumed[block.shard]
        start = None
        for position in range(block.start, block.stop):  # type: ignore[arg-type]
            if flags[position]:
                if start is not None:
                    left.append(Segment(block.shard, start, position))
                    start = None
            elif start is None:
                start = position
        if start is not None:
            left.append(Segment(block.shard, start, block.stop))
    return left


def consumer_order(share: Sequence[Segment], seed: int, epoch: int, runs: int, index: int, count: int,
                   shuffle_buffer: int) -> Iterator[Tuple[int, int]]:
    """The (shard, position) ids consumer `index` of `count` hands out, in order, without reading a
    record: what ShardDirectory.images and the shuffle buffer do to the records themselves."""
    interleaving, buffering = generators(seed, epoch, runs, index, count)
    streams = [(stream_size(stream), ((segment.shard, position) for segment in stream
                                      for position in range(segment.start, segment.stop)))  # type: ignore[arg-type]
               for stream in streams_of(share)]
    return shuffled(interleave(streams, interleaving), shuffle_buffer, buffering)
