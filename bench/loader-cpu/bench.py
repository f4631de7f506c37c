"""CPU benchmark of the training container's loaders, no GPU needed: samples/s per loader worker
for small files, TFRecord shards and RecordIO shards of the same synthetic JPEGs, with each worker
transform, over several worker counts and epochs, against the decode floor measured in the same run.

  transforms   none          the record's bytes only (reading, splitting, shuffling, IPC)
               decode        a full PIL decode (the floor's work, in the workers)
               decode-draft  the hybrid path's CpuDecodeOnly (PIL draft: ≥ the crop's size)
               decode+rrc    the cpu path's CpuTrainTransform (decode, random resized crop, flip)
  floor        the same bytes decoded by PIL in a loop in this process (and decode+rrc likewise):
               what one core does with no loader around it.

Each configuration runs `--epochs` epochs on the same persistent workers; every epoch's rate is
printed (an epoch boundary that costs shows as a slower later epoch) and the ratio of the
per-worker rate to the floor. The shards are packed by the library's own CLI (dist/ when built,
else ts-node: bench/bench_data.py). Run from the repository root, on any machine (the CI runner included):

    /usr/bin/python3 bench/loader-cpu/bench.py [--images 400] [--workers 1,2] [--epochs 2]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
import time
from typing import Any, Callable, Dict, List

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "container"))
sys.path.insert(0, os.path.join(REPO, "bench"))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per worker process, as torchrun sets

import torch  # noqa: E402
from PIL import Image  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from shardio import LoaderOptions, Placement  # noqa: E402
from shardio.epoch.heap import keep_heap
from shardio.epoch.stream import consumer_images
from shardio.format.records import ImageRecord
from shardio.source.directory import ShardDirectory
from shardio.torch.dataset import ShardDataset, make_data_loader  # noqa: E402
from shardio.torch.images import CpuDecodeOnly, CpuTrainTransform  # noqa: E402
from bench_data import make_dataset, pack  # noqa: E402
from folder_dataset import FolderDataset  # noqa: E402
from s3_streaming import LocalS3, cache_bytes  # noqa: E402
from contiguous_order import ContiguousOrder  # noqa: E402

SOURCES = ("files", "tfrecord", "recordio", "s3")
"""s3: the tfrecord dataset streamed from the local S3 test server through a fresh cache (s3_streaming.py)."""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=400)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--shuffle-buffer", type=int, default=1024)
    parser.add_argument("--transforms", default="none,decode,decode-draft,decode+rrc")
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--work-dir", default=os.path.join("/tmp", "cdk-training-io-loader-cpu"))
    parser.add_argument("--shards-ahead", type=int, default=2, help="the s3 source's shards fetched ahead per worker")
    parser.add_argument("--crc-rounds", type=int, default=7, help="rounds of the CRC row (checked and unchecked in turn)")
    parser.add_argument("--shards", type=int, default=0, help="shards per pack (0: the CLI's sizing); the s3 source's "
                        "cache limit is a quarter of the dataset, so more shards than workers × 4 show it")
    return parser.parse_args()


def pil_decode(record: ImageRecord) -> int:
    with Image.open(io.BytesIO(record.image)) as image:
        image.load()
        return image.size[0]


def record_size(record: ImageRecord) -> int:
    return len(record.image)


def transforms() -> Dict[str, Callable[[ImageRecord], Any]]:
    return {"none": record_size, "decode": pil_decode, "decode-draft": CpuDecodeOnly(224),
            "decode+rrc": CpuTrainTransform(224)}


def count(batch: list) -> int:
    """The loader's collate function: only how many samples (the images themselves stay in the worker)."""
    return len(batch)


def loader_of(source: str, path: str, transform: Callable, workers: int, args: argparse.Namespace, s3: Any = None) -> Any:
    if source == "s3":
        cache = os.path.join(args.work_dir, "s3-cache")
        shutil.rmtree(cache, ignore_errors=True)  # epoch 0 cold, every shard fetched
        return s3.loader(transform, workers, args.batch_size, args.shuffle_buffer, count, cache, shards_ahead=args.shards_ahead)
    if source == "files":
        return DataLoader(FolderDataset(path, transform), batch_size=args.batch_size, shuffle=True, num_workers=workers,
                          persistent_workers=True, prefetch_factor=4, collate_fn=count)
    options = LoaderOptions(placement=Placement(), transform=transform, shuffle_buffer=args.shuffle_buffer, seed=0,
                            num_workers=workers, collate_fn=count, pin_memory=False)
    return make_data_loader(ShardDataset(ShardDirectory(path), options), args.batch_size)


def run_epochs(loader: Any, epochs: int) -> List[Dict[str, float]]:
    rates = []
    for epoch in range(epochs):
        if hasattr(loader.dataset, "set_epoch"):
            loader.dataset.set_epoch(epoch)
        started = time.perf_counter()
        first = None
        samples = 0
        for size in loader:
            if first is None:
                first = time.perf_counter() - started
            samples += size
        seconds = time.perf_counter() - started
        rates.append({"samples": samples, "seconds": seconds, "samples_per_second": samples / seconds,
                      "first_batch_seconds": first or 0.0})
    return rates


def floor(records: List[ImageRecord], transform: Callable[[ImageRecord], Any]) -> float:
    """Samples/s of `transform` over the records in a loop in this process: one core, no loader, the
    allocator set as the loader workers set theirs (epoch/heap.py), so the floor stays the ceiling."""
    keep_heap()
    torch.set_num_threads(1)
    transform(records[0])  # warm
    started = time.perf_counter()
    for record in records:
        transform(record)
    return len(records) / (time.perf_counter() - started)


def main() -> None:
    args = parse_args()
    worker_counts = [int(w) for w in args.workers.split(",")]
    jpegs = os.path.join(args.work_dir, "jpeg")
    make_dataset(jpegs, args.images, args.classes)
    paths = {"files": jpegs}
    for fmt in ("tfrecord", "recordio"):
        paths[fmt] = os.path.join(args.work_dir, f"packed-{fmt}" + (f"-{args.shards}" if args.shards else ""))
        pack(jpegs, paths[fmt], fmt, max(worker_counts), ["--shards", str(args.shards)] if args.shards else [])
    sources = args.sources.split(",")
    s3 = LocalS3(paths["tfrecord"], args.work_dir) if "s3" in sources else None
    paths["s3"] = s3.uri if s3 else ""
    records = []
    for root, _dirs, names in os.walk(jpegs):
        for name in sorted(names):
            with open(os.path.join(root, name), "rb") as handle:
                records.append(ImageRecord(image=handle.read(), label=0))
    mean_kb = sum(len(r.image) for r in records) / len(records) / 1e3
    load = os.getloadavg()
    print(f"{len(records)} JPEGs, {mean_kb:.0f} KB on average; {os.cpu_count()} CPUs, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; torch {torch.__version__}", flush=True)

    chosen = {name: t for name, t in transforms().items() if name in args.transforms.split(",")}
    floors = {"decode": floor(records, pil_decode), "decode+rrc": floor(records, CpuTrainTransform(224)),
              "decode-draft": floor(records, CpuDecodeOnly(224))}
    for name, rate in floors.items():
        print(f"floor {name:<13} {rate:8.0f} samples/s on one core in a loop", flush=True)

    results: List[Dict[str, Any]] = []
    print(f"\n{'source':<9} {'transform':<13} {'workers':>7} " + " ".join(f"{'epoch ' + str(e):>10}" for e in range(args.epochs))
          + f" {'per worker':>10} {'/ floor':>7} {'1st batch':>9}", flush=True)
    for name, transform in chosen.items():
        for workers in worker_counts:
            for source in sources:
                loader = loader_of(source, paths[source], transform, workers, args, s3)
                epochs = run_epochs(loader, args.epochs)
                del loader
                steady = epochs[-1]["samples_per_second"]
                per_worker = steady / workers
                ratio = per_worker / floors[name] if name in floors else float("nan")
                results.append({"source": source, "transform": name, "workers": workers, "epochs": epochs,
                                "per_worker": per_worker, "ratio_to_floor": ratio})
                print(f"{source:<9} {name:<13} {workers:>7} " + " ".join(f"{e['samples_per_second']:10.0f}" for e in epochs)
                      + f" {per_worker:10.0f} {ratio:7.2f} {epochs[-1]['first_batch_seconds']:8.2f}s", flush=True)

    print("\nshards / files (last epoch, same transform and workers):")
    by_key = {(r["source"], r["transform"], r["workers"]): r for r in results}
    for (source, name, workers), result in by_key.items():
        files = by_key.get(("files", name, workers))
        if source != "files" and files:
            print(f"  {source:<9} {name:<13} {workers} workers  {result['per_worker'] / files['per_worker']:.2f}x")
    if "tfrecord" in sources:
        shuffle_row(paths["tfrecord"], chosen, args)
    if s3 is not None:
        print("\ns3 / tfrecord folder, per epoch (same transform and workers; epoch 0 cold, later epochs from the cache):")
        for (source, name, workers), result in by_key.items():
            folder = by_key.get(("tfrecord", name, workers))
            if source == "s3" and folder:
                ratios = [e["samples_per_second"] / f["samples_per_second"] for e, f in zip(result["epochs"], folder["epochs"])]
                print(f"  {name:<13} {workers} workers  " + "  ".join(f"epoch {e} {r:.2f}" for e, r in enumerate(ratios)))
        get_floor_row(s3, len(records), by_key, worker_counts, args.shards_ahead)
        cache_limit_row(s3, paths["tfrecord"], chosen, worker_counts, args)
        s3.close()
    crc_row(paths, chosen, args.crc_rounds)
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    with open(os.path.join(args.work_dir, "results.json"), "w", encoding="utf-8") as handle:
        json.dump({"floors": floors, "results": results, "images": len(records), "mean_kb": mean_kb}, handle, indent=2)


def shuffle_row(dataset: str, chosen: Dict[str, Callable], args: argparse.Namespace) -> None:
    """A cached epoch's samples/s with the canonical order (shards and blocks reshuffled, 8 shards
    interleaved, then the buffer) ÷ the order before it (contiguous ranges read sequentially, then the
    same buffer: contiguous_order.py), on the TFRecord folder once a first epoch has cached it. In
    this process (no loader workers: the order's cost is a reader's, whatever their count), the two
    in turn, 5 epochs each; the best of each by wall time and by this process's CPU time (samples per
    CPU second: what a dedicated core gives, steady on a machine others share)."""
    print("\ncanonical order / contiguous order (#40), a cached epoch, no workers (best of 5 each, in turn):")
    for name, transform in chosen.items():
        loaders = {}
        for kind, directory in (("contiguous", ContiguousOrder(dataset)), ("canonical", ShardDirectory(dataset))):
            options = LoaderOptions(placement=Placement(), transform=transform, shuffle_buffer=args.shuffle_buffer, seed=0,
                                    num_workers=0, collate_fn=count, pin_memory=False)
            loaders[kind] = make_data_loader(ShardDataset(directory, options), args.batch_size)
            sum(loaders[kind])  # the page cache warm
        wall = {kind: 0.0 for kind in loaders}
        cpu = {kind: 0.0 for kind in loaders}
        for _ in range(5):
            for kind, loader in loaders.items():
                started, cpu_started = time.perf_counter(), time.process_time()
                samples = sum(loader)  # each pass the next epoch
                wall[kind] = max(wall[kind], samples / (time.perf_counter() - started))
                cpu[kind] = max(cpu[kind], samples / (time.process_time() - cpu_started))
        print(f"  {name:<13} contiguous {wall['contiguous']:8.0f} samples/s {cpu['contiguous']:8.0f} per CPU s   canonical "
              f"{wall['canonical']:8.0f} samples/s {cpu['canonical']:8.0f} per CPU s   ratio {wall['canonical'] / wall['contiguous']:.3f} "
              f"wall, {cpu['canonical'] / cpu['contiguous']:.3f} CPU (target ≥ 0.95)", flush=True)


def crc_row(paths: Dict[str, str], chosen: Dict[str, Callable], rounds: int) -> None:
    """What checking CRCs costs (check_crc, on by default): an epoch with them ÷ the same epoch
    without, in this process (no loader workers: the reader's own time, nothing to hide it), the
    shards in the page cache, in CPU seconds of this process (a shared machine's other work moves
    wall time by more than the checks cost). Checked and unchecked epochs alternate `rounds` times; each side's
    fastest is kept (the least disturbed by the machine's other work). "first" is a new directory's
    first epoch (a RecordIO shard's whole CRC is checked then, once per process: shard_crc.py),
    "cached" its next epoch (TFRecord's records are checked in every epoch)."""
    print("\nCRC checks (check_crc=True ÷ False, CPU time of one process, shards in the page cache; fastest of "
          f"{rounds} rounds each; cost = 1 - ratio, target ≤ 3 % of a cached epoch):")
    for fmt in ("tfrecord", "recordio"):
        added: Dict[str, float] = {}
        without: Dict[str, float] = {}
        for name, transform in chosen.items():
            best: Dict[Any, float] = {}
            for _ in range(rounds):
                for check in (True, False):
                    directory = ShardDirectory(paths[fmt], check_crc=check)
                    for epoch, label in ((0, "first"), (1, "cached")):
                        started = time.process_time()
                        for record in consumer_images(directory, Placement(), epoch):
                            transform(record)
                        seconds = time.process_time() - started
                        best[(check, label)] = min(best.get((check, label), seconds), seconds)
            cells = []
            for label in ("first", "cached"):
                ratio = best[(False, label)] / best[(True, label)]  # rate with ÷ rate without
                cells.append(f"{label} epoch {ratio:.3f} (cost {100 * (1 - ratio):+.1f} %, {best[(True, label)] * 1e3:.1f} ms "
                             f"vs {best[(False, label)] * 1e3:.1f} ms)")
            print(f"  {fmt:<9} {name:<13} " + "  ".join(cells), flush=True)
            added[name] = best[(True, "cached")] - best[(False, "cached")]
            without[name] = best[(False, "cached")]
        if "none" in added:
            # The checks' own time (the bytes-only epoch's difference: the least noisy) over each transform's
            # epoch: the ratio of a decoding epoch moves by more than the checks cost on a busy machine.
            print(f"  {fmt:<9} the checks' own time (none: {added['none'] * 1e3:.1f} ms a cached epoch) ÷ a cached epoch without: "
                  + ", ".join(f"{name} {100 * added['none'] / seconds:.1f} %" for name, seconds in without.items()), flush=True)


def get_floor_row(s3: LocalS3, record_count: int, by_key: Dict[Any, Dict[str, Any]], worker_counts: List[int],
                  shards_ahead: int) -> None:
    """The floors of the cold epoch: the server's own GET rate for the dataset's shards, as many GETs at
    once as the readers keep (workers × shards ahead), in samples/s, ÷ the folder's epoch-0 rate (below
    1: no reader reaches the folder's rate from this server); and, since the server shares this
    machine's cores, the rate left when the GETs' CPU (server and client) is added to the folder's
    work spread over every core, ÷ the folder's rate (real S3 spends none of the machine's CPU)."""
    cores = os.cpu_count() or 1
    for workers in worker_counts:
        threads = max(1, workers) * max(1, shards_ahead)
        fetched, seconds, cpu = s3.get_floor(threads)
        ceiling = record_count / seconds
        rows = []
        for (source, name, count), result in by_key.items():
            if source == "tfrecord" and count == workers:
                rate = result["epochs"][0]["samples_per_second"]
                shared = record_count / (record_count / rate + cpu / cores)
                rows.append(f"{name}: GETs ÷ folder {ceiling / rate:.2f}, with their CPU on these cores ÷ folder {shared / rate:.2f}")
        print(f"s3 GET floor, {threads} GETs at once: {fetched / seconds / 1e6:.1f} MB/s, {ceiling:.0f} samples/s, "
              f"{cpu:.2f} CPU s (server + client); " + "; ".join(rows), flush=True)


def cache_limit_row(s3: LocalS3, dataset: str, chosen: Dict[str, Callable], worker_counts: List[int],
                    args: argparse.Namespace) -> None:
    """Bytes on disk in the cache after 3 epochs with cache_limit = ¼ of the dataset, against the
    limit (the downloads in flight count, shard_cache.py), or the largest shard where that is more."""
    with open(os.path.join(dataset, "manifest.json"), encoding="utf-8") as handle:
        sizes = [shard["bytes"] for shard in json.load(handle)["shards"]]
    limit = sum(sizes) // 4
    workers = max(worker_counts)
    cache = os.path.join(args.work_dir, "s3-cache-limited")
    shutil.rmtree(cache, ignore_errors=True)
    loader = s3.loader(next(iter(chosen.values())), workers, args.batch_size, args.shuffle_buffer, count, cache, cache_limit=limit)
    samples = 0
    for epoch in range(3):
        loader.dataset.set_epoch(epoch)
        samples += sum(loader)
    held = cache_bytes(cache)
    bound = max(limit, max(sizes))  # downloads in flight count: none is left at the end, and the last shard read is kept
    print(f"\ncache_limit {limit} B (¼ of {sum(sizes)} B in {len(sizes)} shards), {workers} workers, 3 epochs, {samples} samples: "
          f"{held['shards']} B of shards + {held['parts']} B of parts on disk (+ {held['other']} B of manifests and indexes); "
          f"bound max(limit, largest shard) = {bound} B: {'within' if held['shards'] + held['parts'] <= bound else 'OVER'}")


if __name__ == "__main__":
    main()
