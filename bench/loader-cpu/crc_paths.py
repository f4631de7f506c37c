"""CPU benchmark of the integrity checks on each CRC path (issue 46): the share of a one-epoch read's
CPU time spent checking, for a packed folder read and decoded (a full PIL decode of every record)
in one process, TFRecord and RecordIO, three ways in the same run:

  fast        the fast CRC-32C found (crc32c, google_crc32c or awscrt): each TFRecord's CRCs as it
              is read, a RecordIO shard's CRC-32C whole
  zlib        those modules hidden (as on a stock SageMaker PyTorch image): each shard's CRC-32,
              from the manifest, checked whole with zlib before its first record (shard_crc.py)
  pure        those modules hidden and the manifest's `crc32` removed (a dataset packed before it):
              the pure-Python CRC-32C, what every reader without the crc32c package did before

Each epoch runs in a child process of its own (the modules must be hidden before shardio looks for
them), the shards in the page cache; the checks' time is the CPU time spent inside them (the
whole-shard check and TFRecord's per-record CRC, timed where the reader calls them), over the
epoch's CPU time. Target: zlib ≤ 5 %. Run from the repository root:

    /usr/bin/python3 bench/loader-cpu/crc_paths.py [--images 200] [--runs 3]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Dict, List

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PATHS = ("fast", "zlib", "pure")
TARGET = 0.05


def parse_args(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work-dir", default=os.path.join("/tmp", "cdk-training-io-crc-paths"))
    parser.add_argument("--child", nargs=2, metavar=("PATH", "DATASET"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def child(path: str, dataset: str) -> None:
    """One epoch of `dataset` on CRC path `path`, in this process: prints its CPU times as JSON."""
    sys.path[:0] = [os.path.join(REPO, "container"), os.path.join(REPO, "test", "python")]
    if path != "fast":
        from support import hide_modules

        hide_modules()
    from PIL import Image

    import shardio.source.directory
    import shardio.format.tfrecord
    from shardio import Placement
    from shardio.epoch.stream import consumer_images
    from shardio.source.directory import ShardDirectory

    spent = [0.0]

    def timed(function):
        def call(*args, **kwargs):
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - started
        return call

    # Where the reader calls the checks: a shard whole, and TFRecord's length and data CRCs.
    shardio.source.directory.check_shard_crc = timed(shardio.source.directory.check_shard_crc)
    shardio.format.tfrecord.masked_crc32c = timed(shardio.format.tfrecord.masked_crc32c)
    records = 0
    started = time.process_time()
    for record in consumer_images(ShardDirectory(dataset), Placement(), 0):
        with Image.open(io.BytesIO(record.image)) as image:
            image.load()
        records += 1
    epoch = time.process_time() - started
    found = sys.modules["shardio.format.crc32c"].NATIVE_MODULE
    print(json.dumps({"records": records, "epoch": epoch, "checks": spent[0], "module": found}))


def without_crc32(dataset: str, copy: str) -> str:
    """A copy of `dataset` whose root manifest lists no shard's `crc32`, as one packed before it."""
    if os.path.exists(copy):
        shutil.rmtree(copy)
    shutil.copytree(dataset, copy)
    path = os.path.join(copy, "manifest.json")
    with open(path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    for shard in manifest["shards"]:
        shard.pop("crc32", None)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle)
    return copy


def packed(args: argparse.Namespace) -> Dict[str, str]:
    """Both formats of the same JPEGs, packed by this checkout's CLI (each shard with its `crc32`)."""
    sys.path.insert(0, os.path.join(REPO, "bench"))
    from bench_data import make_dataset, pack

    jpegs = os.path.join(args.work_dir, "jpeg")
    make_dataset(jpegs, args.images, args.classes)
    datasets = {}
    for fmt in ("tfrecord", "recordio"):
        datasets[fmt] = os.path.join(args.work_dir, f"packed-{fmt}")
        pack(jpegs, datasets[fmt], fmt, 1)
        with open(os.path.join(datasets[fmt], "manifest.json"), encoding="utf-8") as handle:
            if any("crc32" not in shard for shard in json.load(handle)["shards"]):
                raise SystemExit(f"{datasets[fmt]}: its manifest lists no crc32 (packed by an older CLI): remove it to pack again")
    return datasets


def epoch(path: str, dataset: str) -> Dict[str, float]:
    run = subprocess.run([sys.executable, __file__, "--child", path, dataset], capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    args = parse_args(sys.argv[1:])
    if args.child:
        child(*args.child)
        return
    datasets = packed(args)
    print(f"integrity checks' share of a one-epoch read's CPU time ({args.images} JPEGs decoded, one process, "
          f"{len(os.sched_getaffinity(0))} CPUs, load {os.getloadavg()[0]:.1f}; target: zlib ≤ {TARGET:.0%})", flush=True)
    results: Dict[str, Dict[str, List[float]]] = {}
    for fmt, dataset in datasets.items():
        sources = {"fast": dataset, "zlib": dataset, "pure": without_crc32(dataset, f"{dataset}-without-crc32")}
        shares: Dict[str, List[float]] = {path: [] for path in PATHS}
        for run in range(args.runs):
            cells = []
            for path in PATHS:
                measured = epoch(path, sources[path])
                share = measured["checks"] / measured["epoch"]
                shares[path].append(share)
                cells.append(f"{path} {100 * share:5.1f} % ({measured['checks'] * 1e3:6.0f} of {measured['epoch'] * 1e3:6.0f} ms"
                             + (f", {measured['module']})" if path == "fast" else ")"))
            print(f"  {fmt:<9} run {run + 1}: " + "  ".join(cells), flush=True)
        results[fmt] = shares
        low, high = min(shares["zlib"]), max(shares["zlib"])
        print(f"  {fmt:<9} zlib {100 * low:.1f}–{100 * high:.1f} % (target ≤ {TARGET:.0%}: {'met' if high <= TARGET else 'NOT met'}), "
              f"pure {100 * min(shares['pure']):.0f}–{100 * max(shares['pure']):.0f} %, "
              f"fast {100 * min(shares['fast']):.1f}–{100 * max(shares['fast']):.1f} %", flush=True)
    with open(os.path.join(args.work_dir, "crc_paths.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
