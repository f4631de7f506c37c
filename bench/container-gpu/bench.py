"""GPU benchmark of the training container's loader paths: ResNet-50 (channels-last, train.py's
--precision auto: bf16 from Ampere on) on one GPU for a fixed number of steps, fed every way
train.py can feed it from the same synthetic JPEGs (~90 KB, ImageNet-like sizes), at several vCPU
counts, each row against the GPU's own (compiled) ceiling measured in the same run:

  ceiling, eager                   the container's Trainer, eager, fed batches already on the GPU
  ceiling, compiled                the same with train.py's --compile auto (torch.compile, CUDA graphs;
                                   eager where it cannot, the reason printed): every row below uses this step
  <row>, loader alone              beside every shard path's row: the same batches made ready on the GPU
                                   (decoded, augmented) as fast as they come, no step: what the path
                                   can feed, so a row below its ceiling says which of the two limits it
  gpu decode+augment alone         GpuJpegDecoder on one batch held on the host, again and again: the
                                   floor of the gpu path's GPU side (nvJPEG, BatchAugment) on this machine
  gpu handover, 1 worker, ...      the gpu path's worker -> training process transfer, loader alone:
                                   a list of tensors (before issue #37) and one buffer per batch
  small files, 1 worker            (at the first vCPU count only, a quarter of --steps: it does not depend on it)
  small files, W workers           cpu path: W = vCPUs − 1 (2 GiB of RAM each at most), as TrainingJob sizes them
  shards, W workers, cpu           TFRecord shards packed by `training-io pack`, decoded and augmented in the workers
  shards, W workers, hybrid        the workers decode only; the GPU crops, resizes, flips, normalizes the batch
  shards, W workers, gpu           the GPU decodes (nvJPEG, one batched call) and augments the batch
  shards, DALI                     where DALI is installed
  shards resized 256, cpu / gpu    shards packed with `training-io pack --resize 256` (skipped, saying why, where
                                   the CLI has no --resize)
  auto -> <kind>                   what train.py's --loader auto picks here by measurement (--trial-seconds over
                                   the usable paths, the table's guess first), then measured as every row is;
                                   compared with the best row over the same shards (the resized rows apart:
                                   auto cannot choose other shards)

--quick (<= 4 minutes on an H200 with the compiled step, for a 15-minute device session): 4,000 JPEGs,
30 steps per row, the compiled ceiling, the shard paths (cpu, gpu) with and without the step, the
gpu floors and the handover rows, and auto; no small files, hybrid, eager ceiling or resized rows.
Every vCPU count runs in a child process pinned with `taskset -c 0-(n-1)`; each prints its rows as
it goes. The parent writes results.json and results.png (samples/s of each row and the ceiling per
vCPU count; needs matplotlib) to --out. The output format is in bench/container-gpu/README.md.

    python3 bench/container-gpu/bench.py [--cpus 4,8,16] [--images 10000] [--steps 100] [--out DIR]
    python3 bench/container-gpu/bench.py --quick       # the rows issue #37 asks for, <= 4 minutes
    python3 bench/container-gpu/bench.py --dry-run     # the data side on the CPU: tiny, resnet18, every row

Needs PyTorch with torchvision ≥ 0.19 (batched nvJPEG decoding) and Node.js with the package built
(or --cli: a built training-io.js) to pack the shards. bench/container-gpu/device.sh runs it on the
GPU machine.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "container"))
sys.path.insert(0, os.path.join(REPO, "bench"))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # as torchrun sets: a thread per core per process otherwise

import torch  # noqa: E402
import torchvision  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from bench_data import make_dataset, pack  # noqa: E402
from worker_handover import HANDOVER_TARGET, LIST_OF_TENSORS, ONE_BUFFER, handover_rates  # noqa: E402
from folder_dataset import FolderDataset  # noqa: E402
from shardio import LoaderOptions, Placement  # noqa: E402
from shardio.format.records import ImageRecord
from shardio.source.directory import ShardDirectory
from shardio.torch.batch_augment import BatchAugment, GpuJpegDecoder  # noqa: E402
from shardio.torch.dataset import ShardDataset, make_data_loader  # noqa: E402
from shardio.torch.images import CpuDecodeOnly, CpuTrainTransform, collate_encoded, collate_padded, encoded, normalize  # noqa: E402
from trainer.loader_choice import CPU_DECODE_AUGMENT_PER_WORKER, choose_loader, gpu_demand, pick, trial_order, trial_table  # noqa: E402
from trainer.prefetch import Prefetcher  # noqa: E402
from train import Trainer, measure_loaders, step_choices  # noqa: E402

GIB = 1024 ** 3
EAGER_CEILING, CEILING = "ceiling, eager", "ceiling, compiled"
LOADER_ALONE = ", loader alone"
"""The suffix of a row measured without the step."""
GPU_FLOOR = "gpu decode+augment alone, one held batch"


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpus", default="4,8,16", help="vCPU counts, comma-separated (those above this machine's are skipped)")
    parser.add_argument("--images", type=int, default=10_000)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=100, help="measured steps per row")
    parser.add_argument("--warmup", type=int, default=20, help="steps run first and not measured (cudnn autotune, worker start)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--trial-seconds", type=float, default=10.0,
                        help="the auto row's measurement, all paths together (train.py's default is 72: 2 %% of an hour)")
    parser.add_argument("--dry-run", action="store_true",
                        help="the data side on the CPU: 48 images, resnet18 on 64-pixel crops, 2 steps per row, --cpus 1,2")
    parser.add_argument("--profile", action="store_true",
                        help="at the first vCPU count, a torch.profiler trace of the gpu path with the step (profile-gpu-<n>.json, "
                             "Chrome/Perfetto format, in --out): where decoding and the step serialize (issue #37)")
    parser.add_argument("--quick", action="store_true",
                        help="<= 4 minutes on an H200: 4,000 images, 30 steps per row, the rows of issue #37 only (see above)")
    parser.add_argument("--cli", default=None, help="a built training-io.js (default: dist/, else ts-node)")
    parser.add_argument("--work-dir", default=os.path.join("/tmp", "cdk-training-io-container-gpu"))
    parser.add_argument("--out", default=None, help="where results.json and results.png go (default: --work-dir)")
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)  # the vCPU count a child measures at
    parser.add_argument("--first", action="store_true", help=argparse.SUPPRESS)  # the child that runs the 1-worker row
    args = parser.parse_args(argv)
    if args.quick:
        args.images, args.steps, args.warmup, args.trial_seconds = min(args.images, 4_000), 30, 10, 6.0
    if args.dry_run:
        args.device, args.images, args.classes, args.steps, args.warmup, args.trial_seconds = "cpu", 48, 4, 2, 1, 1.0
        args.batch_size, args.image_size, args.arch = 8, 64, "resnet18"
        args.cpus = "1,2" if args.cpus == "4,8,16" else args.cpus
        args.work_dir = args.work_dir + "-dry-run"
    args.out = args.out or args.work_dir
    return args


def sized_workers() -> int:
    """TrainingJob's rule for one process: vCPUs − 1, at most one worker per 2 GiB of RAM."""
    cpus = len(os.sched_getaffinity(0))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(1, min(cpus - 1, memory // (2 * GIB)))


class GpuUtilization:
    """Mean GPU utilization sampled by `nvidia-smi` every 250 ms while running (nothing on the CPU)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.samples: List[float] = []
        self.process: Optional[subprocess.Popen] = None

    def __enter__(self) -> "GpuUtilization":
        if self.device.type == "cuda":
            self.process = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", str(self.device.index or 0),
                 "-lms", "250"], stdout=subprocess.PIPE, text=True)
            threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            if line.strip().isdigit():
                self.samples.append(float(line))

    def __exit__(self, *_exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait()

    @property
    def mean(self) -> Optional[float]:
        return sum(self.samples) / len(self.samples) if self.samples else None


def forever(loader: Any) -> Iterator:
    """Batches across epochs, so that a fixed step count never ends on an epoch boundary."""
    epoch = 0
    while True:
        dataset = getattr(loader, "dataset", None)  # the shards' reshuffle per epoch; small files shuffle by themselves
        if hasattr(dataset, "set_epoch"):
            dataset.set_epoch(epoch)
        yield from loader
        epoch += 1


def on_device_batches(args: argparse.Namespace, device: torch.device) -> Iterator:
    """The ceiling's batches: made once on the device, handed out again and again."""
    images = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device).contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, args.classes, (args.batch_size,), device=device)
    while True:
        yield images, labels


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(name: str, batches: Iterable, args: argparse.Namespace, trainer: Trainer, steps: int = 0) -> Dict[str, Any]:
    """`steps` (default --steps) measured after --warmup unmeasured ones, with `trainer`'s step."""
    device = trainer.device
    iterator = iter(batches)
    ready = lambda images, labels: (images, labels)  # noqa: E731 - every row hands over batches ready on the device
    trainer.epoch(iterator, ready, epoch=0, step=0, max_steps=args.warmup, log=False)
    synchronize(device)
    trainer.meter.take()
    with GpuUtilization(device) as utilization:
        trainer.epoch(iterator, ready, epoch=0, step=args.warmup, max_steps=args.warmup + (steps or args.steps), log=False)
        synchronize(device)
        interval = trainer.meter.take()
    if hasattr(iterator, "close"):
        iterator.close()  # ends the prefetching thread; the loader's workers end with the loader
    result = {"row": name, "samples_per_second": interval.samples_per_second, "data_wait_fraction": interval.data_wait_fraction,
              "gpu_utilization": utilization.mean}
    gpu = f"GPU {result['gpu_utilization']:.0f}%" if result["gpu_utilization"] is not None else ""
    print(f"  {name:<36} {result['samples_per_second']:>9.1f} samples/s  data wait {result['data_wait_fraction']:.3f}  {gpu}",
          flush=True)
    return result


def trainers(args: argparse.Namespace, device: torch.device) -> Tuple[Trainer, Trainer]:
    """(eager, compiled) Trainers over one model and optimizer, in train.py's --precision auto and
    --compile auto (the compiled one is eager where train.py's would be, saying why)."""
    options = argparse.Namespace(precision="auto", compile="auto", amp=True)
    precision, compiled = step_choices(options, device, ranks=1)
    print(f"precision={precision.name} ({precision.reason}) compile={compiled.mode or 'off'} ({compiled.reason})", flush=True)
    model = torchvision.models.__dict__[args.arch](num_classes=args.classes).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * args.batch_size / 256, momentum=0.9, weight_decay=1e-4)
    say = lambda line: print(f"  {line}", flush=True)  # noqa: E731
    return (Trainer(model, optimizer, device, precision=precision, log=say),
            Trainer(model, optimizer, device, precision=precision, compiled=compiled, log=say))


def child(args: argparse.Namespace) -> None:
    """The rows at one vCPU count (this process is pinned to them)."""
    device = torch.device(args.device, 0) if args.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    workers = sized_workers()
    jpegs, shards, resized = (os.path.join(args.work_dir, name) for name in ("jpeg", "packed", "packed-256"))
    size = args.image_size
    to_device = lambda labels: labels.to(device, non_blocking=True)  # noqa: E731
    cpu_ready = lambda images, labels: (normalize(images.to(device, non_blocking=True)), to_device(labels))  # noqa: E731
    decode = GpuJpegDecoder(size, device, seed=0)
    gpu_ready = lambda images, labels: (decode(images), to_device(labels))  # noqa: E731
    augment = BatchAugment(size, seed=0)
    hybrid_ready = lambda images, labels: (augment(images[0].to(device, non_blocking=True), images[1]), to_device(labels))  # noqa: E731

    def files(count: int) -> Prefetcher:
        loader = DataLoader(FolderDataset(jpegs, CpuTrainTransform(size)), batch_size=args.batch_size, shuffle=True,
                            num_workers=count, pin_memory=device.type == "cuda", persistent_workers=True, prefetch_factor=4,
                            drop_last=True)
        return Prefetcher(loader, cpu_ready, device)

    def shard_rows(root: str, transform: Callable, collate: Optional[Callable], ready: Callable) -> Prefetcher:
        options = LoaderOptions(placement=Placement(), transform=transform, seed=0, num_workers=workers, collate_fn=collate,
                                drop_last=True, pin_memory=device.type == "cuda")
        loader = make_data_loader(ShardDataset(ShardDirectory(root), options), args.batch_size)
        return Prefetcher(loader, ready, device)

    paths = {"cpu": lambda: shard_rows(shards, CpuTrainTransform(size), None, cpu_ready),
             "gpu": lambda: shard_rows(shards, encoded, collate_encoded, gpu_ready)}
    dali = device.type == "cuda" and importlib.util.find_spec("nvidia") and importlib.util.find_spec("nvidia.dali")
    if dali:
        from shardio.dali import dali_loader

        paths["dali"] = lambda: dali_loader(ShardDirectory(shards), args.batch_size, placement=Placement(), num_threads=workers,
                                            device_id=0)

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"\n{args.child} vCPUs ({workers} workers), {name}, {args.arch}, batch {args.batch_size}, "
          f"{args.steps} steps after {args.warmup}{', quick' if args.quick else ''}", flush=True)
    eager, compiled = trainers(args, device)
    rows: List[Dict[str, Any]] = []
    if not args.quick:
        rows.append(measure(EAGER_CEILING, on_device_batches(args, device), args, eager))
    rows.append(measure(CEILING, on_device_batches(args, device), args, compiled))
    if not args.quick:
        if args.first:
            rows.append(measure("small files, 1 worker", forever(files(1)), args, compiled, steps=max(1, args.steps // 4)))
        rows.append(measure(f"small files, {workers} workers", forever(files(workers)), args, compiled))
    shard_paths: List[Tuple[str, Callable[[], Any]]] = [(f"shards, {workers} workers, cpu", paths["cpu"])]
    if not args.quick:
        shard_paths.append((f"shards, {workers} workers, hybrid", lambda: shard_rows(shards, CpuDecodeOnly(size), collate_padded, hybrid_ready)))
    shard_paths.append((f"shards, {workers} workers, gpu", paths["gpu"]))
    if dali:
        shard_paths.append((f"shards, DALI, {workers} threads", paths["dali"]))
    if not args.quick and os.path.exists(os.path.join(resized, "manifest.json")):
        shard_paths.append((f"shards resized 256, {workers} workers, cpu", lambda: shard_rows(resized, CpuTrainTransform(size), None, cpu_ready)))
        shard_paths.append((f"shards resized 256, {workers} workers, gpu", lambda: shard_rows(resized, encoded, collate_encoded, gpu_ready)))
    for label, make in shard_paths:
        rows.append(measure(label, forever(make()), args, compiled))
        rows.append(loader_alone(label + LOADER_ALONE, forever(make()), args, device))
    rows.append(gpu_floor(shards, decode, args, device))
    if args.first:
        rows.extend(handover_rows(shards, args, device))
        if args.profile:
            profile(f"shards, {workers} workers, gpu", forever(paths["gpu"]()), args, compiled)
    rows.append(auto_row(args, compiled, paths, workers, name))
    ceiling = next(row for row in rows if row["row"] == CEILING)["samples_per_second"]
    for row in rows:
        row["fraction_of_ceiling"] = row["samples_per_second"] / ceiling
        if row["row"] == f"shards, {workers} workers, cpu{LOADER_ALONE}":  # what a worker decodes, over the table's figure
            row["per_worker"] = row["samples_per_second"] / workers
            row["per_worker_over_table"] = row["per_worker"] / CPU_DECODE_AUGMENT_PER_WORKER
    with open(os.path.join(args.out, f"cpus-{args.child}.json"), "w", encoding="utf-8") as handle:
        json.dump({"cpus": args.child, "workers": workers, "device": name, "rows": rows}, handle, indent=2)
    os._exit(0)  # persistent loader workers and prefetch threads end with the process


def profile(name: str, batches: Iterable, args: argparse.Namespace, trainer: Trainer) -> None:
    """A torch.profiler trace of --warmup unrecorded then 10 recorded steps of `batches` with the step:
    each thread's host time (the prefetching thread's decode beside the training thread's step) and
    each stream's kernels, to find where they serialize (a device-wide sync, the GIL, a blocking copy)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as profiled

    iterator = iter(batches)
    ready = lambda images, labels: (images, labels)  # noqa: E731
    trainer.epoch(iterator, ready, epoch=0, step=0, max_steps=args.warmup, log=False)
    synchronize(trainer.device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if trainer.device.type == "cuda" else [])
    with profiled(activities=activities, with_stack=False) as recorded:
        trainer.epoch(iterator, ready, epoch=0, step=args.warmup, max_steps=args.warmup + 10, log=False)
        synchronize(trainer.device)
    if hasattr(iterator, "close"):
        iterator.close()
    path = os.path.join(args.out, f"profile-gpu-{args.child}.json")
    recorded.export_chrome_trace(path)
    print(f"  profile of {name}, 10 steps: {path}", flush=True)
    print(recorded.key_averages().table(sort_by="self_cpu_time_total", row_limit=15), flush=True)


def loader_alone(name: str, batches: Iterable, args: argparse.Namespace, device: torch.device) -> Dict[str, Any]:
    """Samples/s of a path's batches made ready on the device with no step: --warmup batches first,
    then --steps timed (the device synchronized at both ends)."""
    iterator = iter(batches)
    for _ in range(args.warmup):
        next(iterator)
    synchronize(device)
    started, samples = time.perf_counter(), 0
    for _ in range(args.steps):
        samples += len(next(iterator)[1])
    synchronize(device)
    rate = samples / (time.perf_counter() - started)
    if hasattr(iterator, "close"):
        iterator.close()
    print(f"  {name:<48} {rate:>9.1f} samples/s", flush=True)
    return {"row": name, "samples_per_second": rate}


def gpu_floor(shards: str, decode: GpuJpegDecoder, args: argparse.Namespace, device: torch.device) -> Dict[str, Any]:
    """The gpu path's device side alone: one batch of the shards' JPEGs held on the host (pinned on a
    GPU), decoded and augmented again and again."""
    dataset = ShardDataset(ShardDirectory(shards), LoaderOptions(placement=Placement(), transform=encoded, seed=0))
    held, _ = collate_encoded([item for _, item in zip(range(args.batch_size), iter(dataset))])
    if device.type == "cuda":
        held = held.pin_memory()
    for _ in range(args.warmup):
        decode(held)
    synchronize(device)
    started = time.perf_counter()
    for _ in range(args.steps):
        decode(held)
    synchronize(device)
    rate = args.steps * len(held) / (time.perf_counter() - started)
    print(f"  {GPU_FLOOR:<48} {rate:>9.1f} samples/s", flush=True)
    return {"row": GPU_FLOOR, "samples_per_second": rate}


def handover_rows(shards: str, args: argparse.Namespace, device: torch.device) -> List[Dict[str, Any]]:
    """The gpu path's worker -> training process transfer with one worker, loader alone, before and
    after issue #37 (bench/worker_handover.py, as bench/loader-cpu/handover.py measures it)."""
    rates = handover_rates(shards, args.batch_size, repeats=1 if args.quick or args.dry_run else 2, pin_memory=device.type == "cuda")
    rows = [{"row": f"gpu handover, 1 worker, {form}{LOADER_ALONE}", "samples_per_second": rate.samples_per_second,
             "worker_cpu_us": rate.worker_cpu_us, "main_cpu_us": rate.main_cpu_us} for form, rate in rates.items()]
    ratio = rates[ONE_BUFFER].samples_per_second / rates[LIST_OF_TENSORS].samples_per_second
    rows[-1]["over_list_of_tensors"] = ratio
    for row in rows:
        print(f"  {row['row']:<48} {row['samples_per_second']:>9.1f} samples/s", flush=True)
    main = rates[LIST_OF_TENSORS].main_cpu_us / rates[ONE_BUFFER].main_cpu_us
    rows[-1]["training_process_cpu_ratio"] = main
    print(f"  one buffer / list of tensors: {ratio:.2f}x (issue #37's target: >= {HANDOVER_TARGET}x); the training process "
          f"spends {main:.2f}x less CPU a sample ({rates[ONE_BUFFER].main_cpu_us:.0f} us)", flush=True)
    return rows


def auto_row(args: argparse.Namespace, trainer: Trainer, paths: Dict[str, Callable[[], Any]], workers: int,
             device_name: str) -> Dict[str, Any]:
    """train.py's --loader auto here: the table's guess first, each usable path measured for its
    share of --trial-seconds with the compiled step, the fastest kept; then that path's row."""
    cuda = trainer.device.type == "cuda"
    prior = choose_loader(has_gpu=cuda, workers=workers, dali_usable="dali" in paths, demand=gpu_demand(device_name if cuda else ""))
    order = trial_order(prior.kind, list(paths))
    started = time.perf_counter()
    ready = lambda images, labels: (images, labels)  # noqa: E731
    trials = measure_loaders(trainer, order, args.trial_seconds / len(order), make=lambda kind: (paths[kind](), ready),
                             warmup=args.warmup)
    choice = pick(trials)
    print(f"  auto: {choice.kind} in {time.perf_counter() - started:.1f} s ({choice.reason})", flush=True)
    for line in trial_table(trials, choice.kind):
        print(f"    {line}", flush=True)
    row = measure(f"auto -> {choice.kind}", forever(paths[choice.kind]()), args, trainer)
    row.update(trial_seconds=time.perf_counter() - started, trials=[trial.as_dict() for trial in trials], prior=prior.kind)
    return row


def main() -> None:
    args = parse_args()
    if args.child:
        child(args)
        return
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no GPU here: run with --dry-run (or --device cpu) to check the data side")
    os.makedirs(args.out, exist_ok=True)
    started = time.perf_counter()
    available = len(os.sched_getaffinity(0))
    counts = [int(c) for c in args.cpus.split(",")]
    for count in counts:
        if count > available:
            print(f"{count} vCPUs: skipped, this machine has {available}", flush=True)
    counts = [c for c in counts if c <= available]
    jpegs = os.path.join(args.work_dir, "jpeg")
    make_dataset(jpegs, args.images, args.classes)
    consumers = max(1, max(counts) - 1)
    pack(jpegs, os.path.join(args.work_dir, "packed"), "tfrecord", consumers, cli=args.cli)
    skipped = "not measured with --quick" if args.quick else pack(jpegs, os.path.join(args.work_dir, "packed-256"), "tfrecord", consumers,
                                                 ["--resize", "256"], cli=args.cli)
    if skipped:
        print(f"shards resized 256: skipped ({skipped})", flush=True)
    print(f"data ready in {time.perf_counter() - started:.0f} s", flush=True)

    results = []
    for index, count in enumerate(counts):
        command = ["taskset", "-c", f"0-{count - 1}", sys.executable, os.path.abspath(__file__), *sys.argv[1:],
                   "--child", str(count), "--out", args.out, *(["--first"] if index == 0 else [])]
        subprocess.run(command, check=True)
        with open(os.path.join(args.out, f"cpus-{count}.json"), encoding="utf-8") as handle:
            results.append(json.load(handle))
    summary = {"arch": args.arch, "batch_size": args.batch_size, "steps": args.steps, "images": args.images, "quick": args.quick,
               "resized_row_skipped": skipped, "seconds": time.perf_counter() - started, "runs": results,
               "targets": [targets(run) for run in results]}
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print_table(results)
    chart(results, os.path.join(args.out, "results.png"))
    print(f"done in {time.perf_counter() - started:.0f} s: {args.out}/results.json", flush=True)


TARGETS = "issue #37's targets: gpu path / compiled ceiling >= 0.85 (4 vCPUs), 0.90 (8); best row >= 0.95 (16); " \
    "gpu loader alone >= 1.1x the ceiling (4); auto >= 0.95 of the best row over the same shards; handover >= 1.6x"


def targets(run: Dict[str, Any]) -> Dict[str, Any]:
    """Issue #37's measures of one vCPU count: the gpu path's row and its loader alone over the
    compiled ceiling, the best row over the shards auto chooses among (and, apart, over the resized
    shards), auto over that best row, the handover ratio where measured."""
    rows = {row["row"]: row for row in run["rows"]}
    steps = [row for row in run["rows"] if not row["row"].endswith(LOADER_ALONE) and row["row"] not in (CEILING, EAGER_CEILING, GPU_FLOOR)]
    same_shards = [row for row in steps if row["row"].startswith("shards, ")]
    resized = [row for row in steps if row["row"].startswith("shards resized")]
    best = max(same_shards, key=lambda row: row["samples_per_second"])
    auto = next(row for row in steps if row["row"].startswith("auto"))
    gpu = f"shards, {run['workers']} workers, gpu"
    measures: Dict[str, Any] = {
        "cpus": run["cpus"],
        "gpu_over_ceiling": rows[gpu]["fraction_of_ceiling"],
        "gpu_loader_alone_over_ceiling": rows[gpu + LOADER_ALONE]["fraction_of_ceiling"],
        "best_row": best["row"], "best_fraction_of_ceiling": best["fraction_of_ceiling"],
        "auto_over_best_same_shards": auto["samples_per_second"] / best["samples_per_second"],
    }
    if EAGER_CEILING in rows:
        measures["compiled_over_eager"] = rows[CEILING]["samples_per_second"] / rows[EAGER_CEILING]["samples_per_second"]
    if resized:
        best_resized = max(resized, key=lambda row: row["samples_per_second"])
        measures.update(best_resized_row=best_resized["row"], best_resized_fraction_of_ceiling=best_resized["fraction_of_ceiling"])
    handover = [row["over_list_of_tensors"] for row in run["rows"] if "over_list_of_tensors" in row]
    if handover:
        measures["handover_over_list_of_tensors"] = handover[0]
    return measures


def print_table(results: List[Dict[str, Any]]) -> None:
    """Per vCPU count, each path's row with the step beside its loader-alone row, as fractions of
    the compiled ceiling; then the floors and issue #37's measures."""
    print("\nfraction of the compiled ceiling measured in the same run (samples/s): with the step | loader alone")
    for run in results:
        print(f"{run['cpus']} vCPUs, {run['workers']} workers, {run['device']}:")
        rows = {row["row"]: row for row in run["rows"]}
        for row in run["rows"]:
            if row["row"].endswith(LOADER_ALONE) and row["row"][:-len(LOADER_ALONE)] in rows:
                continue  # printed beside its row with the step
            line = f"  {row['row']:<48} {row['fraction_of_ceiling']:6.2f}  ({row['samples_per_second']:.0f})"
            alone = rows.get(row["row"] + LOADER_ALONE)
            if alone is not None:
                line += f"  | {alone['fraction_of_ceiling']:6.2f}  ({alone['samples_per_second']:.0f})"
                if "per_worker" in alone:
                    line += (f"  [{alone['per_worker']:.0f} per worker, {alone['per_worker_over_table']:.2f}x the decoding-rate "
                             f"table's {CPU_DECODE_AUGMENT_PER_WORKER}]")
            print(line)
    print(f"\n{TARGETS}")
    for run in results:
        measures = targets(run)
        line = (f"  {run['cpus']:>2} vCPUs: gpu {measures['gpu_over_ceiling']:.2f}, gpu loader alone "
                f"{measures['gpu_loader_alone_over_ceiling']:.2f}, best {measures['best_row']} {measures['best_fraction_of_ceiling']:.2f}, "
                f"auto / best over the same shards {measures['auto_over_best_same_shards']:.2f}")
        if "best_resized_row" in measures:
            line += f"; apart: {measures['best_resized_row']} {measures['best_resized_fraction_of_ceiling']:.2f}"
        if "compiled_over_eager" in measures:
            line += f"; compiled / eager {measures['compiled_over_eager']:.2f}"
        if "handover_over_list_of_tensors" in measures:
            line += f"; handover {measures['handover_over_list_of_tensors']:.2f}x"
        print(line)


def chart(results: List[Dict[str, Any]], path: str) -> None:
    """Samples/s of each row (bars) per vCPU count, the ceiling as a line over each group."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: results.png not drawn", flush=True)
        return
    def bars(run: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [row for row in run["rows"] if row["row"] not in (CEILING, EAGER_CEILING)]

    kinds = []
    for run in results:
        for row in bars(run):
            kind = _kind(row["row"])
            if kind not in kinds:
                kinds.append(kind)
    figure, axes = plt.subplots(figsize=(max(8, 2 + 1.6 * len(results) * len(kinds) / 3), 5))
    width = 0.8 / max(1, len(kinds))
    labelled = set()
    for group, run in enumerate(results):
        rows = {_kind(row["row"]): row for row in bars(run)}
        for slot, kind in enumerate(kinds):
            if kind in rows:
                axes.bar(group + slot * width, rows[kind]["samples_per_second"], width, color=f"C{slot}",
                         label=None if kind in labelled else kind)
                labelled.add(kind)
        ceilings = {row["row"]: row["samples_per_second"] for row in run["rows"] if row["row"] in (CEILING, EAGER_CEILING)}
        axes.hlines(ceilings[CEILING], group - width / 2, group + 0.8 - width / 2, colors="black", linestyles="dashed",
                    label="GPU ceiling, compiled step (same run)" if group == 0 else None)
        if EAGER_CEILING in ceilings:
            axes.hlines(ceilings[EAGER_CEILING], group - width / 2, group + 0.8 - width / 2, colors="grey", linestyles="dotted",
                        label="ceiling, eager step" if group == 0 else None)
    axes.set_xticks([group + 0.4 - width / 2 for group in range(len(results))])
    axes.set_xticklabels([f"{run['cpus']} vCPUs ({run['workers']} workers)" for run in results])
    axes.set_ylabel("samples/s")
    axes.set_title(f"Loader paths against the ceiling of the same run, {results[0]['device']}")
    axes.legend(fontsize="small", loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    print(f"chart: {path}", flush=True)


def _kind(row: str) -> str:
    """A row's name without its worker count (auto without its pick): the same bar colour at every vCPU count."""
    if row.startswith("auto"):
        return "auto"
    return ", ".join(part for part in row.split(", ") if not part.endswith(("workers", "worker", "threads"))) + \
        (", 1 worker" if row.endswith(", 1 worker") else "")


if __name__ == "__main__":
    main()
