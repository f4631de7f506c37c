"""What the DataLoader workers do to each record (needs torch and torchvision), for three paths:

- cpu: decode and augment in the workers (`CpuTrainTransform`, uint8 crops, normalized on the
  device after a pinned copy);
- hybrid: decode only in the workers (`CpuDecodeOnly`, about twice the images per core), crop,
  resize, flip and normalize the padded batch on the device (`collate_padded` + batch_augment.py);
- gpu: hand over the encoded bytes (`encoded` + `collate_encoded`); batch_augment.GpuJpegDecoder
  decodes them with nvJPEG and augments the batch.
All do ImageNet training augmentation: random resized crop, horizontal flip, normalization.
"""
from __future__ import annotations

import io
from typing import Any, List, Sequence, Tuple

import numpy
import torch
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode
from torchvision.transforms import CenterCrop, RandomResizedCrop, Resize

from .imagenet import IMAGENET_MEAN, IMAGENET_STD
from .records import ImageRecord

SCALE = (0.08, 1.0)
RATIO = (3 / 4, 4 / 3)


def _bytes_tensor(data: bytes) -> torch.Tensor:
    # A bytearray copy: torch.frombuffer warns about (and must not write to) immutable bytes.
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


class CpuTrainTransform:
    """Record → (uint8 CHW image of size × size, label), decoded in a loader worker."""

    def __init__(self, size: int = 224) -> None:
        self.size = size
        self.crop = RandomResizedCrop(size, scale=SCALE, ratio=RATIO, antialias=True)

    def __call__(self, record: ImageRecord) -> Tuple[torch.Tensor, int]:
        image = torchvision.io.decode_image(_bytes_tensor(record.image), mode=ImageReadMode.RGB)
        image = self.crop(image)
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return image, record.label


class CpuEvalTransform:
    """Record → (uint8 CHW image, label) for evaluation: resize the short side to size × 256/224,
    center crop, no randomness."""

    def __init__(self, size: int = 224) -> None:
        self.resize = Resize(size * 256 // 224, antialias=True)
        self.crop = CenterCrop(size)

    def __call__(self, record: ImageRecord) -> Tuple[torch.Tensor, int]:
        image = torchvision.io.decode_image(_bytes_tensor(record.image), mode=ImageReadMode.RGB)
        return self.crop(self.resize(image)), record.label


def encoded(record: ImageRecord) -> Tuple[torch.Tensor, int]:
    """Record → (its encoded bytes as a uint8 tensor, label): decoding is left to the GPU."""
    return _bytes_tensor(record.image), record.label


def collate_encoded(batch: Sequence[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """Encoded images have different lengths: (a list of them, the labels as one tensor, then a
    list of each further field: the record names with --record_log)."""
    images, labels, *rest = zip(*batch)
    return (list(images), torch.tensor(labels, dtype=torch.int64), *[list(field) for field in rest])


class CpuDecodeOnly:
    """Record → (uint8 CHW image, label), decoded and nothing else: the hybrid path's worker half.
    PIL's `draft` lets the JPEG decoder skip detail by 1/2, 1/4 or 1/8 while both sides stay at
    least `min_size` (the crop size), which makes big images cheaper to decode and to ship."""

    def __init__(self, min_size: int = 224) -> None:
        self.min_size = min_size

    def __call__(self, record: ImageRecord) -> Tuple[torch.Tensor, int]:
        with Image.open(io.BytesIO(record.image)) as image:
            image.draft("RGB", (self.min_size, self.min_size))
            pixels = torch.from_numpy(numpy.array(image.convert("RGB")))  # a writable copy: torch wants one
        return pixels.permute(2, 0, 1), record.label


def collate_padded(batch: Sequence[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """Decoded images of different sizes → ((uint8 NCHW padded to the largest, int64 (N, 2) sizes),
    labels, then a list of each further field), for the device's BatchAugment."""
    from .batch_augment import pad_batch

    images, labels, *rest = zip(*batch)
    return (pad_batch(images), torch.tensor(labels, dtype=torch.int64), *[list(field) for field in rest])


def normalize(images: torch.Tensor) -> torch.Tensor:
    """uint8 (or float 0–255) NCHW on the device → float, ImageNet mean and deviation, channels-last
    for tensor cores."""
    mean = torch.tensor(IMAGENET_MEAN, device=images.device).view(1, 3, 1, 1) * 255
    std = torch.tensor(IMAGENET_STD, device=images.device).view(1, 3, 1, 1) * 255
    return ((images.float() - mean) / std).contiguous(memory_format=torch.channels_last)
