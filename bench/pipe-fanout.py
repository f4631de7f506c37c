"""Pipe mode's host fan-out (container/shardio/pipe_mode/pipe.py) against `cat` through one FIFO, in the same run.

A packed TFRecord stream (records of ~59 KB and of ~110 KB, CRCs written natively where the crc32c
module is installed) is fed into a FIFO by `cat`, as SageMaker feeds a channel's, and dealt by a
PipeFanOut (a thread of this process, as in the training process of local rank 0) into 1, 16 and
88 consumer FIFOs (8 GPU processes × 11 loader workers), each drained by `cat`; every path
(splice, copy, copy with each shard checked whole against its CRC-32, and the dealer before #46:
pipe_dealer_before.py) in turn. Floors, same run: `cat` through one FIFO (the issue's floor),
measured again just before each row, and N `cat` pairs each moving 1/N of the bytes through a FIFO
of its own, what this machine does for N consumers with no fan-out at all. Prints GB/s, the
fan-out's CPU seconds per GB and fan-out ÷ floor for each row, run after run, then the ranges.

    /usr/bin/python3 bench/pipe-fanout.py [--megabytes 384 --runs 3 --consumers 1,16,88]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "container"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from shardio.format.crc32c import NATIVE, masked_crc32c  # noqa: E402
from shardio.pipe_mode.pipe import COPY, SPLICE, PipeFanOut, consumer_channel, pipe_path  # noqa: E402
from shardio.pipe_mode.pipe_check import ShardSums  # noqa: E402
from shardio.pipe_mode.pipe_splice import splice_available  # noqa: E402
from shardio.format.records import ShardFormat  # noqa: E402
from pipe_dealer_before import BEFORE, FanOutBefore  # noqa: E402

RECORD_SIZES = {"59 KB": (50_000, 68_000), "110 KB": (95_000, 125_000)}
SHARD_BYTES = 64 * 1024 * 1024
CHECKED = "copy+crc32"


def write_stream(path: str, megabytes: int, sizes: Tuple[int, int], seed: int) -> ShardSums:
    """TFRecord shards of random records, one after the other in `path`; their sums as a manifest lists them."""
    chooser = random.Random(seed)
    noise = os.urandom(sizes[1])
    by_size: Dict[int, Dict[int, str]] = {}
    shard, written, number = bytearray(), 0, 0
    with open(path, "wb") as out:
        while written < megabytes * 1_000_000:
            length = chooser.randint(*sizes)
            start = chooser.randrange(0, sizes[1] - length + 1)
            data = noise[start:start + length]
            length_bytes = struct.pack("<Q", length)
            shard += length_bytes + struct.pack("<I", masked_crc32c(length_bytes)) + data
            shard += struct.pack("<I", masked_crc32c(data) if NATIVE else 0)
            if len(shard) >= SHARD_BYTES or written + len(shard) >= megabytes * 1_000_000:
                by_size.setdefault(len(shard), {})[zlib.crc32(shard)] = f"shard-{number}"
                out.write(shard)
                written += len(shard)
                shard, number = bytearray(), number + 1
    return ShardSums(path, ShardFormat.TFRECORD, by_size, sorted(by_size))


def feed(source: str, fifo: str) -> subprocess.Popen:
    """`cat` writing a file into a FIFO, as SageMaker writes a channel's."""
    return subprocess.Popen(["sh", "-c", 'exec cat "$0" > "$1"', source, fifo])


def drain(fifo: str) -> subprocess.Popen:
    return subprocess.Popen(["cat", fifo], stdout=subprocess.DEVNULL)


def floor(work: str, stream: str, consumers: int) -> float:
    """Seconds for `consumers` `cat` pairs to move the stream's bytes, 1/consumers each, through a FIFO of their own."""
    parts = []
    size = os.path.getsize(stream)
    with open(stream, "rb") as handle:
        for part in range(consumers):
            path = os.path.join(work, f"part-{part}")
            with open(path, "wb") as out:
                out.write(handle.read(size // consumers if part < consumers - 1 else size))
            parts.append(path)
    fifos = [os.path.join(work, f"floor-{part}") for part in range(consumers)]
    for fifo in fifos:
        os.mkfifo(fifo)
    started = time.perf_counter()
    processes = [drain(fifo) for fifo in fifos] + [feed(part, fifo) for part, fifo in zip(parts, fifos)]
    for process in processes:
        process.wait()
    elapsed = time.perf_counter() - started
    for path in parts + fifos:
        os.remove(path)
    return elapsed


def fan_out(work: str, stream: str, consumers: int, path: str, sums: Optional[ShardSums]) -> Tuple[float, float]:
    """Seconds for the fan-out to deal the stream to `consumers` `cat`s, and its CPU seconds (this process's)."""
    data_dir, fanout_dir = os.path.join(work, "data"), os.path.join(work, "fanout")
    os.makedirs(data_dir)
    os.mkfifo(pipe_path(data_dir, "train", 0))
    targets = [pipe_path(fanout_dir, consumer_channel("train", c), 0) for c in range(consumers)]
    cpu, started = time.process_time(), time.perf_counter()
    if path == BEFORE:
        fanout = FanOutBefore(data_dir, "train", fanout_dir, consumers, timeout=60, epochs=1).start()
    else:
        fanout = PipeFanOut(data_dir, "train", fanout_dir, consumers, timeout=60, epochs=1, path=path, sums=sums).start()
    writer = feed(stream, pipe_path(data_dir, "train", 0))
    while not all(os.path.exists(target) for target in targets):
        time.sleep(0.001)
    readers = [drain(target) for target in targets]
    for process in readers + [writer]:
        process.wait()
    fanout.join(60)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    shutil.rmtree(data_dir)
    shutil.rmtree(fanout_dir)
    return elapsed, cpu


def one_run(work: str, streams: Dict[str, Tuple[str, ShardSums]], counts: List[int], paths: List[str]) -> List[dict]:
    """Every row once; `cat` through one FIFO is measured again just before each row, on a shared machine whose load moves."""
    rows = []
    for label, (stream, sums) in streams.items():
        gigabytes = os.path.getsize(stream) / 1e9
        for consumers in counts:
            own = gigabytes / floor(work, stream, consumers) if consumers > 1 else None
            for path in paths:
                one_fifo = gigabytes / floor(work, stream, 1)
                seconds, cpu = fan_out(work, stream, consumers, COPY if path == CHECKED else path,
                                       sums if path == CHECKED else None)
                rate = gigabytes / seconds
                rows.append({"records": label, "consumers": consumers, "path": path, "rate": rate, "cpu": cpu / gigabytes,
                             "floor": one_fifo, "own": own or one_fifo})
                print(f"  {label:>6} {consumers:>3} consumers {path:<15} {rate:5.2f} GB/s  fan-out CPU {cpu / gigabytes:4.2f} s/GB"
                      f"  ÷ cat through one FIFO ({one_fifo:4.2f} GB/s) {rate / one_fifo:4.2f}"
                      f"  ÷ {consumers} cat pairs ({own or one_fifo:4.2f} GB/s) {rate / (own or one_fifo):4.2f}", flush=True)
    return rows


def summary(rows: List[dict]) -> None:
    print("\nRanges over the runs (min–max, median): GB/s, ÷ cat through one FIFO, ÷ N cat pairs, fan-out CPU s/GB")
    keys = sorted({(r["records"], r["consumers"], r["path"]) for r in rows}, key=lambda k: (list(RECORD_SIZES).index(k[0]), k[1], k[2]))
    for key in keys:
        same = [r for r in rows if (r["records"], r["consumers"], r["path"]) == key]

        def span(values: List[float]) -> str:
            return f"{min(values):.2f}–{max(values):.2f} (median {statistics.median(values):.2f})"

        print(f"  {key[0]:>6} {key[1]:>3} consumers {key[2]:<15} {span([r['rate'] for r in same])} GB/s"
              f"  ÷ one FIFO {span([r['rate'] / r['floor'] for r in same])}  ÷ N pairs {span([r['rate'] / r['own'] for r in same])}"
              f"  CPU {span([r['cpu'] for r in same])} s/GB  (one FIFO {span([r['floor'] for r in same])} GB/s,"
              f" N pairs {span([r['own'] for r in same])} GB/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, default=384, help="the stream's size, per record size")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--consumers", default="1,16,88")
    parser.add_argument("--paths", default=",".join(([SPLICE] if splice_available() else []) + [COPY, CHECKED, BEFORE]))
    args = parser.parse_args()
    counts = [int(count) for count in args.consumers.split(",")]
    paths = args.paths.split(",")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {args.megabytes} MB per stream; "
          f"record CRCs {'native' if NATIVE else 'left 0 (no fast CRC-32C module: nothing here checks them)'}")
    work = tempfile.mkdtemp(prefix="pipe-fanout-")
    try:
        streams: Dict[str, Tuple[str, ShardSums]] = {}
        for index, (label, sizes) in enumerate(RECORD_SIZES.items()):
            path = os.path.join(work, f"stream-{index}.tfrecord")
            streams[label] = (path, write_stream(path, args.megabytes, sizes, seed=index))
        rows = []
        for run in range(args.runs):
            print(f"run {run + 1} (load average {os.getloadavg()[0]:.2f})")
            rows += one_run(work, streams, counts, paths)
        summary(rows)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
