"""What issue #37 replaced, kept as the benches' baselines: each is measured in the same run as what
replaced it (bench/loader-cpu/handover.py, bench/container-gpu/bench.py), so the gain is a ratio on
the same machine, never a figure from elsewhere."""
from __future__ import annotations

from typing import Any, Sequence, Tuple

import torch
import torchvision
from torchvision.io import ImageReadMode
from torchvision.transforms import RandomResizedCrop

from shardio.images import RATIO, SCALE
from shardio.records import ImageRecord


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
