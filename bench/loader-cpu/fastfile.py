"""CPU benchmark of the FastFile read pattern (issue 46): the canonical order's 16-record blocks
against whole-shard sequential reads, through a mount whose reads cost a latency each.

On a FastFile channel the shards are an S3 mount: a read that continues the last one is served
from the mount's sequential stream, a read anywhere else is a new range request. The stand-in here
(`LatencyFile`) is a file whose read at another offset than where the last one ended waits
`--latency` first (10, 30 and 100 ms: S3's first-byte latency and worse), read through the
reader's own code path (`ShardDirectory.read_segments`, the blocks read through the handle, as on a
file without preadv). One process reads one epoch of TFRecord shards and decodes every record (a
full PIL decode: a loader worker's work), as:

  whole       each shard read sequentially from its first record to its end (one request a shard)
  blocks      the canonical order (directory.images): 16 records a block, blocks in shuffled order,
              8 shards open at once, each block a request, read when it is reached
  blocks+N    the same, each stream reading N blocks ahead in a thread (blocks.READ_AHEAD_BLOCKS)

and prints each pattern's samples/s ÷ whole's, per latency; --runs rounds alternate the patterns.
Run from the repository root:

    /usr/bin/python3 bench/loader-cpu/fastfile.py [--images 400] [--shards 4] [--runs 3]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from typing import Dict, List

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "container"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from PIL import Image  # noqa: E402

from bench_data import make_dataset, pack  # noqa: E402
from shardio.format import blocks  # noqa: E402
from shardio.epoch.split import Consumer
from shardio.source.directory import ShardDirectory
from shardio.source.directory import READ_BUFFER  # noqa: E402
from shardio.epoch.order import Segment  # noqa: E402


class LatencyFile(io.RawIOBase):
    """A shard file whose read at another offset than where the last one ended waits `latency` first."""

    def __init__(self, path: str, latency: float) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        self._latency = latency
        self._at = 0
        self._streamed_to = -1  # where the mount's current sequential stream is

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._at = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: os.fstat(self._fd).st_size}[whence] + offset
        return self._at

    def tell(self) -> int:
        return self._at

    def readinto(self, buffer) -> int:
        if self._at != self._streamed_to:
            time.sleep(self._latency)  # a new range request
        count = os.preadv(self._fd, [buffer], self._at)
        self._at += count
        self._streamed_to = self._at
        return count

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


class MountedDirectory(ShardDirectory):
    """A ShardDirectory whose shards are read through LatencyFile, as from a FastFile mount."""

    latency = 0.0

    def _open_shard(self, shard: int):
        return io.BufferedReader(LatencyFile(self.shards[shard].path, self.latency), READ_BUFFER)


def decode(image: bytes) -> None:
    with Image.open(io.BytesIO(image)) as opened:
        opened.load()


def epoch(directory: MountedDirectory, pattern: str) -> float:
    """Samples/s of one epoch read in `pattern` and decoded, by the wall clock (the latency is wall time)."""
    started = time.perf_counter()
    records = 0
    if pattern == "whole":
        for shard in range(len(directory.shards)):
            for _position, record in directory.read_segments(shard, [Segment(shard, 0, None)], reuse=True):
                decode(directory.image(record, shard).image)
                records += 1
    else:
        blocks.READ_AHEAD_BLOCKS = int(pattern.partition("+")[2] or 0)
        for image in directory.images(Consumer(0, 1), 0, seed=1):
            decode(image.image)
            records += 1
    return records / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=400)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--latencies", default="10,30,100", help="milliseconds a new range request waits")
    parser.add_argument("--patterns", default="whole,blocks,blocks+1,blocks+2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work-dir", default=os.path.join("/tmp", "cdk-training-io-fastfile"))
    args = parser.parse_args()
    jpegs, shards = os.path.join(args.work_dir, "jpeg"), os.path.join(args.work_dir, "packed-tfrecord")
    make_dataset(jpegs, args.images, args.classes)
    pack(jpegs, shards, "tfrecord", 1, ["--shards", str(args.shards)])
    blocks._PREADV = None  # noqa: SLF001 - the blocks read through the handle: preadv on its descriptor would skip the mount
    directory = MountedDirectory(shards)
    patterns = args.patterns.split(",")
    print(f"FastFile read patterns: {args.images} JPEGs in {len(directory.shards)} TFRecord shards, decoded in one process; "
          f"samples/s ÷ whole-shard reads, {args.runs} runs ({len(os.sched_getaffinity(0))} CPUs, load {os.getloadavg()[0]:.1f})",
          flush=True)
    results: Dict[str, Dict[str, List[float]]] = {}
    for latency in (float(ms) for ms in args.latencies.split(",")):
        MountedDirectory.latency = latency / 1e3
        ratios: Dict[str, List[float]] = {pattern: [] for pattern in patterns if pattern != "whole"}
        for _run in range(args.runs):
            rates = {pattern: epoch(directory, pattern) for pattern in patterns}
            for pattern in ratios:
                ratios[pattern].append(rates[pattern] / rates["whole"])
        results[f"{latency:g} ms"] = ratios
        print(f"  {latency:5g} ms a request: " + "  ".join(
            f"{pattern} {min(values):.2f}–{max(values):.2f}" for pattern, values in ratios.items()), flush=True)
    with open(os.path.join(args.work_dir, "fastfile.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
