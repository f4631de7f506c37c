"""The classification read path of this checkout's readers against an earlier commit's, in one run: the
same shards (TFRecord and RecordIO, packed once by this checkout's CLI: a one-part dataset packs
byte-identically in both), the same transforms, each side's readers in its own process (the baseline's
`container/` taken with `git archive`), asked for one cached epoch at a time in turn: a pair of epochs
shares the machine's state of the moment. Each epoch is timed in its process's CPU time, with no loader
workers: a reader's per-record cost.

Why not bench.py's loader rows: they time one short epoch in wall time with worker processes, which
moves by up to 2x between runs of the same code on a shared 2-core machine, and separate runs of the two
versions a minute apart differ by as much again: too coarse to read a 5 % criterion from. Here the
figure per row is the median of the pairs' ratios (baseline seconds ÷ this checkout's: > 1 is faster
now), with the middle half of them; and, free of the machine's noise, the Python function calls one
epoch makes per record on each side (cProfile's count), which says whether the path itself grew. Run
from the repository root:

    /usr/bin/python3 bench/loader-cpu/ab.py --baseline daa7d76 [--images 400] [--epochs 41]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from typing import Dict, List

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FORMATS = ("tfrecord", "recordio")
TRANSFORMS = ("none", "decode")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=False, default="daa7d76", help="the git ref whose readers are the baseline")
    parser.add_argument("--images", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=41, help="cached epochs per side and row, in pairs")
    parser.add_argument("--work-dir", default=os.path.join("/tmp", "cdk-training-io-loader-ab"))
    parser.add_argument("--child", nargs=2, metavar=("CONTAINER", "DATASETS"), help=argparse.SUPPRESS)
    return parser.parse_args()


def child(container: str, datasets: Dict[str, str]) -> None:
    """In a fresh process, serving the parent: each line read names a row (`tfrecord none`), and the
    answer is one cached epoch's CPU seconds per record of it, with the readers under `container`. The
    loader is built with whichever API that version has: the front door's LoaderOptions where it
    exists, else the 0.1.0 keywords (the per-record path is what is compared)."""
    sys.path.insert(0, container)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from PIL import Image
    import shardio

    def pil_decode(record) -> int:
        with Image.open(io.BytesIO(record.image)) as image:
            image.load()
            return image.size[0]

    transforms = {"none": lambda record: len(record.image), "decode": pil_decode}
    front_door = hasattr(shardio, "LoaderOptions")
    if front_door:
        from shardio.source.directory import ShardDirectory
        from shardio.torch.dataset import ShardDataset, make_data_loader
    else:
        from shardio import ShardDirectory
        from shardio.dataset import ShardDataset, make_data_loader
    loaders = {}
    for fmt, path in datasets.items():
        for name in TRANSFORMS:
            settings = dict(placement=shardio.Placement(), transform=transforms[name], seed=0, num_workers=0, collate_fn=len,
                            pin_memory=False)
            if front_door:
                loader = make_data_loader(ShardDataset(ShardDirectory(path), shardio.LoaderOptions(**settings)), 32)
            else:
                dataset = ShardDataset(ShardDirectory(path), **{k: settings[k] for k in ("placement", "transform", "seed")})
                loader = make_data_loader(dataset, 32, **{k: settings[k] for k in ("num_workers", "collate_fn", "pin_memory")})
            loaders[f"{fmt} {name}"] = [loader, sum(loader), 0]  # the page cache warm; the records an epoch yields
    print("ready", flush=True)
    for line in sys.stdin:
        # "<row>": one epoch's CPU seconds per record; "calls <row>": its Python function calls per record
        # (cProfile's count: the same whatever the machine's noise).
        counting = line.startswith("calls ")
        row = line.strip()[len("calls "):] if counting else line.strip()
        entry = loaders[row]
        loader, records = entry[0], entry[1]
        entry[2] += 1
        loader.dataset.set_epoch(entry[2])
        profile = cProfile.Profile() if counting else None
        started = time.process_time()
        if profile:
            profile.enable()
        yielded = sum(loader)
        if profile:
            profile.disable()
        elapsed = time.process_time() - started
        if yielded != records:
            raise SystemExit(f"{row}: an epoch yielded another number of records than {records}")
        calls = pstats.Stats(profile).total_calls if profile else 0
        print(json.dumps(calls / records if profile else elapsed / records), flush=True)


class Side:
    """A child process holding one version's loaders, asked for one epoch at a time."""

    def __init__(self, container: str, datasets: Dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-W", "ignore::DeprecationWarning", __file__, "--child", container, json.dumps(datasets)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
        )
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit(f"the readers under {container} did not start")

    def epoch(self, row: str) -> float:
        """One epoch's CPU seconds per record."""
        return self._ask(row)

    def calls(self, row: str) -> float:
        """One epoch's Python function calls per record."""
        return self._ask(f"calls {row}")

    def _ask(self, row: str) -> float:
        self.process.stdin.write(row + "\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def baseline_container(ref: str, work: str) -> str:
    """The baseline's `container/` folder, extracted from git (no checkout of the rest)."""
    target = os.path.join(work, f"baseline-{ref}")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    archive = subprocess.run(["git", "-C", REPO, "archive", ref, "container"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target)
    return os.path.join(target, "container")


def main() -> None:
    args = parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return
    sys.path.insert(0, os.path.join(REPO, "bench"))
    from bench_data import make_dataset, pack

    os.makedirs(args.work_dir, exist_ok=True)
    images = os.path.join(args.work_dir, "images")
    make_dataset(images, args.images, 10)
    datasets = {fmt: os.path.join(args.work_dir, fmt) for fmt in FORMATS}
    for fmt, path in datasets.items():
        refused = pack(images, path, fmt, 1)
        if refused:
            raise SystemExit(f"packing {fmt} failed: {refused}")
    sides = {"baseline": baseline_container(args.baseline, args.work_dir), "this": os.path.join(REPO, "container")}
    print(f"{args.images} images; baseline {args.baseline}; {os.cpu_count()} CPUs, load average "
          + " ".join(f"{value:.2f}" for value in os.getloadavg()), flush=True)
    children = {side: Side(container, datasets) for side, container in sides.items()}
    print("\nrow                 baseline µs/record   this µs/record   ratio (baseline ÷ this; target ≥ 0.95)   middle half of the pairs' ratios"
          "   Python calls/record baseline → this")
    try:
        for row in (f"{fmt} {name}" for fmt in FORMATS for name in TRANSFORMS):
            figures: Dict[str, List[float]] = {side: [] for side in sides}
            for turn in range(args.epochs):
                # Epoch by epoch in turn, which goes first alternating: a pair shares the machine's state of the moment.
                for side in (list(sides) if turn % 2 == 0 else list(reversed(sides))):
                    figures[side].append(children[side].epoch(row))
            ratios = sorted(b / t for b, t in zip(figures["baseline"], figures["this"]))
            quarter = len(ratios) // 4
            print(f"{row:<19} {statistics.median(figures['baseline']) * 1e6:>18.1f} {statistics.median(figures['this']) * 1e6:>16.1f}   "
                  f"{statistics.median(ratios):>10.3f}{'':<31}{ratios[quarter]:.3f}–{ratios[-1 - quarter]:.3f}"
                  f"{'':<22}{children['baseline'].calls(row):.2f} → {children['this'].calls(row):.2f}", flush=True)
    finally:
        for process in children.values():
            process.close()
    print("load average at the end " + " ".join(f"{value:.2f}" for value in os.getloadavg()))


if __name__ == "__main__":
    main()
