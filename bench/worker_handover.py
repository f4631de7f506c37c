"""How a loader worker hands its batches over, measured the same way by bench/loader-cpu/handover.py
and bench/container-gpu/bench.py: what issue #37 replaced, kept as the baselines (each measured in
the same run as what replaced it, so the gain is a ratio on the same machine), and the loader-alone
measurement (records read, batched and handed over, nothing trained)."""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import torch
import torchvision
from torchvision.io import ImageReadMode
from torchvision.transforms import RandomResizedCrop

from shardio import Placement, ShardDirectory
from shardio.dataset import ShardDataset, make_data_loader
from shardio.images import RATIO, SCALE, EncodedBatch, collate_encoded, encoded
from shardio.records import ImageRecord

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


def loader_alone(shards: str, transform: Callable, collate: Optional[Callable], batch_size: int,
                 consume: Callable[[Any], int], workers: int = 1, pin_memory: bool = False) -> float:
    """Samples/s of one epoch through a loader of `workers` workers after a warm-up batch (the
    workers started), `consume` doing with each batch what the training process does first and
    returning its sample count."""
    dataset = ShardDataset(ShardDirectory(shards), placement=Placement(), transform=transform, seed=0)
    loader = make_data_loader(dataset, batch_size, num_workers=workers, collate_fn=collate, drop_last=True, pin_memory=pin_memory)
    batches = iter(loader)
    consume(next(batches))
    started, samples = time.perf_counter(), 0
    for batch in batches:
        samples += consume(batch)
    rate = samples / (time.perf_counter() - started)
    del batches, loader
    return rate


def labels_of(batch: Any) -> int:
    return len(batch[1])


def split_into_views(batch: Any) -> int:
    """What GpuJpegDecoder does first with a batch: the images as views of its buffer."""
    images: EncodedBatch = batch[0]
    images.images()
    return len(batch[1])


def handover_rates(shards: str, batch_size: int, repeats: int, pin_memory: bool = False) -> Dict[str, float]:
    """The gpu path's worker → training process handover with ONE worker, the loader alone: the list
    of tensors against one buffer per batch, alternating, the best of `repeats` each (a shared
    machine's least disturbed run)."""
    rows = {LIST_OF_TENSORS: lambda: loader_alone(shards, encoded_tensor, collate_tensor_list, batch_size, labels_of,
                                                  pin_memory=pin_memory),
            ONE_BUFFER: lambda: loader_alone(shards, encoded, collate_encoded, batch_size, split_into_views, pin_memory=pin_memory)}
    return best_of(repeats, rows)


def best_of(repeats: int, rows: Dict[str, Callable[[], float]]) -> Dict[str, float]:
    """Each row measured `repeats` times, the rows alternating; the best of each."""
    best: Dict[str, float] = {}
    for _ in range(repeats):
        for name, run in rows.items():
            best[name] = max(best.get(name, 0.0), run())
    return best
