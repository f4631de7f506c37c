"""Image decoding and augmentation for the PyTorch loaders (needs torch and torchvision).

Two places to decode: in the DataLoader workers on the CPU (`CpuTrainTransform`, uint8 batches,
normalized on the GPU after a pinned copy), or on the GPU (`encoded` + `GpuJpegDecoder`, for
when the CPUs cannot keep up: nvJPEG through torchvision, the fallback where DALI is missing).
Both do ImageNet training augmentation: random resized crop, horizontal flip, normalization.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import torch
import torch.nn.functional as F
import torchvision
from torchvision.io import ImageReadMode
from torchvision.transforms import CenterCrop, RandomResizedCrop, Resize

from .imagenet import IMAGENET_MEAN, IMAGENET_STD
from .records import ImageRecord

_SCALE = (0.08, 1.0)
_RATIO = (3 / 4, 4 / 3)


def _bytes_tensor(data: bytes) -> torch.Tensor:
    # A bytearray copy: torch.frombuffer warns about (and must not write to) immutable bytes.
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


class CpuTrainTransform:
    """Record → (uint8 CHW image of size × size, label), decoded in a loader worker."""

    def __init__(self, size: int = 224) -> None:
        self.size = size
        self.crop = RandomResizedCrop(size, scale=_SCALE, ratio=_RATIO, antialias=True)

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


def collate_encoded(batch: Sequence[Tuple[torch.Tensor, int]]) -> Tuple[List[torch.Tensor], torch.Tensor]:
    """Encoded images have different lengths: a list of them, and the labels as one tensor."""
    return [image for image, _ in batch], torch.tensor([label for _, label in batch], dtype=torch.int64)


def normalize(images: torch.Tensor) -> torch.Tensor:
    """uint8 NCHW (on the GPU) → float, ImageNet mean and deviation, channels-last for tensor cores."""
    mean = torch.tensor(IMAGENET_MEAN, device=images.device).view(1, 3, 1, 1) * 255
    std = torch.tensor(IMAGENET_STD, device=images.device).view(1, 3, 1, 1) * 255
    return ((images.float() - mean) / std).contiguous(memory_format=torch.channels_last)


class GpuJpegDecoder:
    """A list of encoded JPEGs → one normalized float batch on `device`, with the same augmentation
    as CpuTrainTransform, decoded by nvJPEG (`torchvision.io.decode_jpeg(device="cuda")`)."""

    def __init__(self, size: int, device: torch.device) -> None:
        self.size = size
        self.device = device

    def __call__(self, images: List[torch.Tensor]) -> torch.Tensor:
        decoded = torchvision.io.decode_jpeg(images, mode=ImageReadMode.RGB, device=self.device)
        crops = []
        for image in decoded:
            top, left, height, width = RandomResizedCrop.get_params(image, list(_SCALE), list(_RATIO))
            crop = image[:, top:top + height, left:left + width].unsqueeze(0).float()
            crop = F.interpolate(crop, size=(self.size, self.size), mode="bilinear", antialias=True, align_corners=False)
            crops.append(crop.flip(-1) if torch.rand(()) < 0.5 else crop)
        return normalize(torch.cat(crops).clamp_(0, 255))
