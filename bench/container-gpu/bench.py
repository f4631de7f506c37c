"""GPU benchmark of the training container's loaders: ResNet-50 on one GPU for a fixed number of
steps, fed four ways from the same synthetic JPEG dataset (ImageNet-like sizes):

  1. small files, 1 loader worker           (the baseline)
  2. small files, sized workers             (vCPUs − 1, capped at 2 GiB of RAM each, as TrainingJob sizes them)
  3. shards, sized workers                  (TFRecord shards packed by `training-io pack`, shardio.dataset)
  4. shards, GPU decoding                   (DALI where installed, else torchvision's nvJPEG decoder)

For each it prints samples/s, the fraction of step time spent waiting for data, the mean GPU
utilization (nvidia-smi) and the ratios to the first. The practice this library is built on
reports ~3x from workers alone (100 -> 300 images/s, GPU utilization 50% -> 95% on one V100).

Needs a GPU, PyTorch with torchvision >= 0.19 (batched GPU decoding), nvidia-smi, and Node.js with
the package built (`npm ci && npm run build`) to pack the shards. Run from the repository root:

    python3 bench/container-gpu/bench.py [--images 10000] [--steps 200]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "container"))

import torch  # noqa: E402
import torchvision  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from shardio import ImageRecord, Placement, ShardDirectory  # noqa: E402
from shardio.dataset import ShardDataset, make_data_loader  # noqa: E402
from shardio.batch_augment import GpuJpegDecoder  # noqa: E402
from shardio.images import CpuTrainTransform, collate_encoded, encoded, normalize  # noqa: E402
from train import Trainer  # noqa: E402

GIB = 1024 ** 3


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=10_000)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=200, help="measured steps per configuration")
    parser.add_argument("--warmup", type=int, default=30, help="steps run first and not measured (cudnn autotune, worker start)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--workers", type=int, default=0, help="sized workers (default: vCPUs - 1, 2 GiB each at most)")
    parser.add_argument("--work-dir", default=os.path.join("/tmp", "cdk-training-io-container-gpu"))
    return parser.parse_args()


def sized_workers() -> int:
    """TrainingJob's rule for one process: vCPUs − 1, at most one worker per 2 GiB of RAM."""
    cpus = len(os.sched_getaffinity(0))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(1, min(cpus - 1, memory // (2 * GIB)))


def _make_image(job: Tuple[str, int]) -> int:
    """One JPEG of ImageNet-like size and detail: a smooth random field plus noise."""
    path, seed = job
    generator = torch.Generator().manual_seed(seed)
    height = int(torch.randint(250, 481, (1,), generator=generator))
    width = int(torch.randint(300, 641, (1,), generator=generator))
    coarse = torch.rand(1, 3, 8, 8, generator=generator)
    image = torch.nn.functional.interpolate(coarse, size=(height, width), mode="bicubic", align_corners=False)[0]
    image = image + 0.08 * torch.randn(3, height, width, generator=generator)
    pixels = (image.clamp(0, 1) * 255).to(torch.uint8)
    data = torchvision.io.encode_jpeg(pixels, quality=90)
    with open(path, "wb") as handle:
        handle.write(bytes(data.numpy()))
    return len(data)


def make_dataset(folder: str, images: int, classes: int) -> None:
    """`images` JPEGs in `classes` class folders (kept between runs)."""
    # The marker lies beside the folder: the packer takes every file in it for a class member.
    done = f"{folder}.complete"
    if os.path.exists(done):
        return
    jobs = []
    for i in range(images):
        directory = os.path.join(folder, f"class-{i % classes:03d}")
        os.makedirs(directory, exist_ok=True)
        jobs.append((os.path.join(directory, f"{i:07d}.jpg"), i))
    started = time.perf_counter()
    with multiprocessing.Pool() as pool:
        total = sum(pool.imap_unordered(_make_image, jobs, chunksize=64))
    open(done, "w").close()
    print(f"made {images} JPEGs, {total / images / 1e3:.0f} KB on average, in {time.perf_counter() - started:.0f} s", flush=True)


def pack(source: str, output: str, consumers: int) -> None:
    """Shards with the library's own packer (the CLI of `npm run build`)."""
    if os.path.exists(os.path.join(output, "manifest.json")):
        return
    cli = os.path.join(REPO, "dist", "bin", "training-io.js")
    if not os.path.exists(cli):
        raise SystemExit(f"{cli} is missing: run `npm ci && npm run build` first")
    subprocess.run(["node", cli, "pack", source, output, "--format", "tfrecord", "--consumers", str(consumers)], check=True)


class FolderDataset(Dataset):
    """The small-files baseline: one file read per sample, as an image-folder dataset does."""

    def __init__(self, folder: str, transform: Callable[[ImageRecord], Any]) -> None:
        classes = sorted(name for name in os.listdir(folder) if not name.startswith("."))
        self.files = [(os.path.join(folder, c, name), label) for label, c in enumerate(classes)
                      for name in sorted(os.listdir(os.path.join(folder, c)))]
        self.transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> Any:
        path, label = self.files[index]
        with open(path, "rb") as handle:
            return self.transform(ImageRecord(image=handle.read(), label=label))


class GpuUtilization:
    """Mean GPU utilization sampled by `nvidia-smi` every 250 ms while running."""

    def __init__(self, device: int) -> None:
        self.device = device
        self.samples: List[float] = []
        self.process: Optional[subprocess.Popen] = None
        self.reader: Optional[threading.Thread] = None

    def __enter__(self) -> "GpuUtilization":
        self.process = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", str(self.device), "-lms", "250"],
            stdout=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        return self

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            if line.strip().isdigit():
                self.samples.append(float(line))

    def __exit__(self, *_exc: object) -> None:
        self.process.terminate()  # type: ignore[union-attr]
        self.process.wait()  # type: ignore[union-attr]

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples) if self.samples else float("nan")


def forever(loader: Iterable) -> Iterator:
    """Batches across epochs, so that a fixed step count never ends on an epoch boundary."""
    epoch = 0
    while True:
        if hasattr(loader, "dataset") and hasattr(loader.dataset, "set_epoch"):
            loader.dataset.set_epoch(epoch)
        yield from loader
        epoch += 1


def measure(name: str, loader: Iterable, prepare: Callable, args: argparse.Namespace, device: torch.device) -> Dict[str, Any]:
    model = torchvision.models.__dict__[args.arch](num_classes=args.classes).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * args.batch_size / 256, momentum=0.9, weight_decay=1e-4)
    trainer = Trainer(model, optimizer, device, amp=True)
    batches = forever(loader)
    trainer.epoch(batches, prepare, epoch=0, step=0, max_steps=args.warmup, log=False)
    torch.cuda.synchronize()
    trainer.meter.take()
    with GpuUtilization(device.index or 0) as utilization:
        trainer.epoch(batches, prepare, epoch=0, step=args.warmup, max_steps=args.warmup + args.steps, log=False)
        torch.cuda.synchronize()
        interval = trainer.meter.take()
    result = {"config": name, "samples_per_second": interval.samples_per_second,
              "data_wait_fraction": interval.data_wait_fraction, "gpu_utilization": utilization.mean}
    print(f"{name:<44} {result['samples_per_second']:>9.1f} samples/s  data wait {result['data_wait_fraction']:.3f}  "
          f"GPU {result['gpu_utilization']:.0f}%", flush=True)
    return result


def main() -> None:
    args = parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a GPU")
    device = torch.device("cuda", 0)
    torch.backends.cudnn.benchmark = True
    workers = args.workers or sized_workers()
    jpegs, shards = os.path.join(args.work_dir, "jpeg"), os.path.join(args.work_dir, "packed")
    make_dataset(jpegs, args.images, args.classes)
    pack(jpegs, shards, workers)
    directory = ShardDirectory(shards)
    transform = CpuTrainTransform(224)
    on_gpu = lambda images, labels: (normalize(images.to(device, non_blocking=True)), labels.to(device, non_blocking=True))  # noqa: E731

    def files_loader(count: int) -> DataLoader:
        return DataLoader(FolderDataset(jpegs, transform), batch_size=args.batch_size, shuffle=True, num_workers=count,
                          pin_memory=True, persistent_workers=True, prefetch_factor=4, drop_last=True)

    def shards_loader(transform_: Callable, collate: Optional[Callable] = None) -> DataLoader:
        dataset = ShardDataset(directory, placement=Placement(), transform=transform_, seed=0)
        return make_data_loader(dataset, args.batch_size, num_workers=workers, collate_fn=collate, drop_last=True)

    print(f"{args.arch}, batch {args.batch_size}, {args.steps} steps after {args.warmup} warm-up steps, "
          f"{torch.cuda.get_device_name(device)}, {len(os.sched_getaffinity(0))} vCPUs, sized workers {workers}", flush=True)
    results = [
        measure("small files, 1 worker", files_loader(1), on_gpu, args, device),
        measure(f"small files, {workers} workers", files_loader(workers), on_gpu, args, device),
        measure(f"shards, {workers} workers", shards_loader(transform), on_gpu, args, device),
    ]
    if importlib.util.find_spec("nvidia") and importlib.util.find_spec("nvidia.dali"):
        from shardio.dali import dali_loader
        loader = dali_loader(directory, args.batch_size, placement=Placement(), num_threads=workers, device_id=0)
        results.append(measure(f"shards, DALI GPU decoding, {workers} threads", loader, lambda i, l: (i, l), args, device))
    else:
        decode = GpuJpegDecoder(224, device)
        results.append(measure(f"shards, nvJPEG GPU decoding, {workers} workers", shards_loader(encoded, collate_encoded),
                               lambda images, labels: (decode(images), labels.to(device, non_blocking=True)), args, device))

    baseline = results[0]["samples_per_second"]
    print("\nratio to small files, 1 worker:")
    for result in results:
        result["ratio"] = result["samples_per_second"] / baseline
        print(f"  {result['config']:<44} {result['ratio']:.2f}x   GPU {result['gpu_utilization']:.0f}%")
    print("practice: ~3x from workers alone (100 -> 300 images/s, GPU 50% -> 95% on one V100)")
    with open(os.path.join(args.work_dir, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
