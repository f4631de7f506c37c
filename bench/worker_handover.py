"""How a loader worker hands its batches over, measured the same way by bench/loader-cpu/handover.py
and bench/container-gpu/bench.py: what issue #37 replaced, kept as the baselines (each measured in
the same run as what replaced it, so the gain is a ratio on the same machine), and the loader-alone
measurement (records read, batched and handed over, nothing trained)."""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, NamedTuple, Optional, Sequence, Tuple

import torch
import torchvision
from torchvision.io import ImageReadMode
from torchvision.transforms import RandomResizedCrop

from shardio import LoaderOptions, Placement
from shardio.source.directory import ShardDirectory
from shardio.torch.dataset import ShardDataset, make_data_loader
from shardio.torch.images import RATIO, SCALE, EncodedBatch, collate_encoded, encoded
from shardio.format.records import ImageRecord

HANDOVER_TARGET = 1.6
"""Issue #37: one buffer per batch hands over at least 1.6x the samples/s of the list of tensors
(one worker, the loader alone, the same shards and run)."""
LIST_OF_TENSORS, ONE_BUFFER = "list of tensors (before #37)", "one buffer per batch"


def encoded_tensor(record: ImageRecord) -> Tuple[torch.Tensor, int]:
    """The gpu path's worker transform before: the record's bytes copied into a tensor of their own."""
    return torch.frombuffer(bytearray(record.image), dtype=torch.uint8), record.label


def collate_tensor_list(batch: Sequence[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """The gpu path's collate before: a list of one uint8 tensor per image (each crosses from the
    worker as a shared-memory segment of its own), the labels as one tensor."""
    images, labels, *rest = zip(*batch)
    return (list(images), torch.tensor(labels, dtype=torch.int64), *[list(field) for field in rest])


class FullSizeTrainTransform:
    """The cpu path's worker transform before: the JPEG decoded at full size (torchvision), then
    RandomResizedCrop (antialiased) and the flip on the decoded tensor."""

    def __init__(self, size: int = 224) -> None:
        self.crop = RandomResizedCrop(size, scale=SCALE, ratio=RATIO, antialias=True)

    def __call__(self, record: ImageRecord) -> Tuple[torch.Tensor, int]:
        image = torchvision.io.decode_image(torch.frombuffer(bytearray(record.image), dtype=torch.uint8), mode=ImageReadMode.RGB)
        image = self.crop(image)
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return image, record.label


class LoaderRate(NamedTuple):
    """One loader-alone measurement: samples/s of wall time, and the CPU time each sample took in the
    workers and in this process (the pinning thread included). On a shared machine the wall rate
    follows the load; the CPU time a sample takes does much less, and 1 / the larger of the two is
    what the loader can hand over where it has the cores to itself."""

    samples_per_second: float
    worker_cpu_us: float
    main_cpu_us: float

    @property
    def capacity(self) -> float:
        """Samples/s the loader hands over on idle cores: the slower of its two sides."""
        return 1e6 / max(self.worker_cpu_us, self.main_cpu_us)


def loader_alone(shards: str, transform: Callable, collate: Optional[Callable], batch_size: int,
                 consume: Callable[[Any], int], workers: int = 1, pin_memory: bool = False) -> LoaderRate:
    """One epoch through a loader of `workers` workers after a warm-up batch (the workers started),
    `consume` doing with each batch what the training process does first and returning its sample
    count."""
    options = LoaderOptions(placement=Placement(), transform=transform, seed=0, num_workers=workers, collate_fn=collate,
                            drop_last=True, pin_memory=pin_memory)
    loader = make_data_loader(ShardDataset(ShardDirectory(shards), options), batch_size)
    batches = iter(loader)
    consume(next(batches))
    processes = [_cpu_seconds(worker.pid) for worker in getattr(batches, "_workers", [])]
    started, main_started, samples = time.perf_counter(), time.process_time(), 0
    for batch in batches:
        samples += consume(batch)
    seconds, main_seconds = time.perf_counter() - started, time.process_time() - main_started
    worker_seconds = sum(_cpu_seconds(worker.pid) for worker in getattr(batches, "_workers", [])) - sum(processes)
    del batches, loader
    return LoaderRate(samples / seconds, 1e6 * worker_seconds / samples, 1e6 * main_seconds / samples)


def _cpu_seconds(pid: int) -> float:
    """A process's user + system CPU seconds so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def labels_of(batch: Any) -> int:
    return len(batch[1])


def split_into_views(batch: Any) -> int:
    """What GpuJpegDecoder does first with a batch: the images as views of its buffer."""
    images: EncodedBatch = batch[0]
    images.images()
    return len(batch[1])


def handover_rates(shards: str, batch_size: int, repeats: int, pin_memory: bool = False) -> Dict[str, LoaderRate]:
    """The gpu path's worker → training process handover with ONE worker, the loader alone: the list
    of tensors against one buffer per batch, alternating, the best of `repeats` each (by wall rate;
    a shared machine's least disturbed run)."""
    rows = {LIST_OF_TENSORS: lambda: loader_alone(shards, encoded_tensor, collate_tensor_list, batch_size, labels_of,
                                                  pin_memory=pin_memory),
            ONE_BUFFER: lambda: loader_alone(shards, encoded, collate_encoded, batch_size, split_into_views, pin_memory=pin_memory)}
    return best_of(repeats, rows)


def best_of(repeats: int, rows: Dict[str, Callable[[], Any]]) -> Dict[str, Any]:
    """Each row measured `repeats` times, the rows alternating; the best of each: the highest
    samples/s (a float), or for a LoaderRate the highest wall rate and the least CPU a sample of each
    side, each from its least disturbed run (on a shared machine another process's load inflates
    the CPU time a sample takes too, through the caches and the memory bus, less than the wall)."""
    best: Dict[str, Any] = {}
    for _ in range(repeats):
        for name, run in rows.items():
            result = run()
            best[name] = result if name not in best else _better(best[name], result)
    return best


def _better(kept: Any, result: Any) -> Any:
    if isinstance(result, LoaderRate):
        return LoaderRate(max(kept.samples_per_second, result.samples_per_second), min(kept.worker_cpu_us, result.worker_cpu_us),
                          min(kept.main_cpu_us, result.main_cpu_us))
    return max(kept, result)

