"""What the DataLoader workers do to each record (needs torch and torchvision), for three paths:

- cpu: decode and augment in the workers (`CpuTrainTransform`, uint8 crops, normalized on the
  device after a pinned copy);
- hybrid: decode only in the workers (`CpuDecodeOnly`, about twice the images per core), crop,
  resize, flip and normalize the padded batch on the device (`collate_padded` + batch_augment.py);
- gpu: hand over the encoded bytes (`encoded` + `collate_encoded`: one buffer per batch,
  `EncodedBatch`); batch_augment.GpuJpegDecoder decodes them with nvJPEG and augments the batch.
All do ImageNet training augmentation: random resized crop, horizontal flip, normalization.
"""
from __future__ import annotations

import ctypes
import functools
import io
import math
import os
import sys
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import numpy
import torch
import torch.utils.data
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode
from torchvision.transforms import CenterCrop, RandomResizedCrop, Resize
from torchvision.transforms.functional import resized_crop

from .imagenet import IMAGENET_MEAN, IMAGENET_STD
from .records import ImageRecord

SCALE = (0.08, 1.0)
RATIO = (3 / 4, 4 / 3)


def _bytes_tensor(data: bytes) -> torch.Tensor:
    # A bytearray copy: torch.frombuffer warns about (and must not write to) immutable bytes.
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


class CpuTrainTransform:
    """Record → (uint8 CHW image of size × size, label), decoded in a loader worker.

    The crop is drawn first (torchvision's RandomResizedCrop.get_params, from the header's size),
    then the JPEG is decoded no larger than the crop needs: where the crop keeps at least size × size
    pixels at 1/2, 1/4 or 1/8 of the image's scale, libjpeg's DCT scaling (PIL's `draft`) decodes at
    that scale and PIL resizes the box in uint8; else torchvision decodes the full image as before
    (1.05 ms of CPU a ~90 KB JPEG against PIL's 1.26 on the machine of issue #37) and resizes the
    crop only (uint8 throughout where torchvision resizes uint8 natively, PyTorch ≥ 2.1). Entropy
    decoding reads every byte whatever the scale, so the gain grows with the image's size over the
    crop's: ~90 KB ImageNet-size JPEGs rarely allow a scale (bench/loader-cpu/handover.py measures both)."""

    def __init__(self, size: int = 224) -> None:
        self.size = size

    def __call__(self, record: ImageRecord) -> Tuple[torch.Tensor, int]:
        with Image.open(io.BytesIO(record.image)) as image:
            top, left, height, width = RandomResizedCrop.get_params(image, list(SCALE), list(RATIO))
            scale = _dct_scale(min(width, height), self.size) if image.format == "JPEG" else 1
            if scale > 1:
                crop = _scaled_crop(image, scale, (left, top, left + width, top + height), self.size)
        if scale == 1:
            pixels = torchvision.io.decode_image(_bytes_tensor(record.image), mode=ImageReadMode.RGB)
            crop = resized_crop(pixels, top, left, height, width, [self.size, self.size], antialias=True)
        if torch.rand(()) < 0.5:
            crop = crop.flip(-1)
        return crop, record.label


def _scaled_crop(image: Image.Image, scale: int, box: Tuple[int, int, int, int], size: int) -> torch.Tensor:
    """The box of a JPEG decoded at 1/`scale` (PIL's `draft`) and resized to size × size in one
    antialiased uint8 resize, the box kept in fractional pixels at that scale (rounded, it would move
    the crop by up to scale / 2 pixels)."""
    full_width, full_height = image.size
    image.draft("RGB", (full_width // scale, full_height // scale))  # the largest scale keeping at least this
    x_scale, y_scale = image.size[0] / full_width, image.size[1] / full_height  # libjpeg rounds a scaled side up
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    left, top, right, bottom = box
    crop = rgb.resize((size, size), Image.BILINEAR, box=(left * x_scale, top * y_scale, right * x_scale, bottom * y_scale))
    return torch.from_numpy(numpy.array(crop)).permute(2, 0, 1)


def _dct_scale(crop_side: int, size: int) -> int:
    """The largest of libjpeg's DCT scalings PIL's `draft` offers (1/8, 1/4, 1/2) that keeps a crop
    side of `crop_side` pixels at least `size`; 1 where none does."""
    return next((scale for scale in (8, 4, 2) if crop_side // scale >= size), 1)


class CpuEvalTransform:
    """Record → (uint8 CHW image, label) for evaluation: resize the short side to size × 256/224,
    center crop, no randomness."""

    def __init__(self, size: int = 224) -> None:
        self.resize = Resize(size * 256 // 224, antialias=True)
        self.crop = CenterCrop(size)

    def __call__(self, record: ImageRecord) -> Tuple[torch.Tensor, int]:
        image = torchvision.io.decode_image(_bytes_tensor(record.image), mode=ImageReadMode.RGB)
        return self.crop(self.resize(image)), record.label


class EncodedImage(NamedTuple):
    """A record's encoded bytes as `encoded` hands them to the collate: the bytes themselves (the
    batch's buffer is their one copy) and the record's name for errors."""

    data: bytes
    name: str


def record_name(record: ImageRecord) -> str:
    """How an error about a record decoded after the workers names it: its input key (or record id),
    its shard and its index there."""
    where = f"record {record.position} of {record.shard}" if record.shard is not None else "a record"
    key = record.filename or (str(record.record_id) if record.record_id is not None else "unknown")
    return f"{where} (input {key})"


def encoded(record: ImageRecord) -> Tuple[EncodedImage, int]:
    """Record → (its encoded bytes with its name, label): decoding is left to the GPU."""
    return EncodedImage(record.image, record_name(record)), record.label


class EncodedBatch:
    """A batch of encoded images as ONE uint8 tensor, their bytes end to end, with the offsets where
    each starts (and the end): what crosses from a loader worker to the training process. One tensor
    is one shared-memory segment (a list of 64 tensors was 64, and capped the gpu path near 2,000
    samples/s whatever the vCPUs, issue #37), one pinned copy on the way to the GPU, and the images
    are views of it (`images()`), made without copying."""

    def __init__(self, data: torch.Tensor, offsets: torch.Tensor, names: Optional[Sequence[str]] = None) -> None:
        if data.dtype != torch.uint8 or data.dim() != 1:
            raise ValueError(f"EncodedBatch: data must be a 1-D uint8 tensor, got {data.dtype} of shape {tuple(data.shape)}")
        if offsets.dim() != 1 or offsets.numel() < 1 or int(offsets[-1]) != data.numel():
            raise ValueError(f"EncodedBatch: offsets must run from 0 to the data's {data.numel()} bytes, got "
                             f"{offsets.tolist()[:3]}... ({offsets.numel()} of them)")
        if names is not None and len(names) != offsets.numel() - 1:
            raise ValueError(f"EncodedBatch: {len(names)} names for {offsets.numel() - 1} images")
        self.data, self.offsets, self.names = data, offsets, None if names is None else list(names)

    def __len__(self) -> int:
        return self.offsets.numel() - 1

    @property
    def lengths(self) -> torch.Tensor:
        return self.offsets[1:] - self.offsets[:-1]

    def images(self) -> List[torch.Tensor]:
        """Each image's bytes, in order: views of `data` (no copy; pinned where `data` is)."""
        return list(torch.split(self.data, self.lengths.tolist()))

    def starts_with(self, magic: bytes) -> List[bool]:
        """Which images start with `magic`, read from the buffer at once (not one small read per image)."""
        data, starts, lengths = self.data.numpy(), self.offsets[:-1].numpy(), self.lengths.numpy()
        found = lengths >= len(magic)
        for index, byte in enumerate(magic):
            found[found] = data[starts[found] + index] == byte
        return found.tolist()

    def name(self, index: int) -> str:
        """The image's record name where the batch carries them, else its place in the batch."""
        return self.names[index] if self.names is not None else f"image {index} of the batch"

    def __reduce__(self) -> Any:
        # The offsets travel inline, as numbers: a tensor of their own would be a second shared-memory
        # segment, each of which costs the receiving process a round trip to the worker (issue #37).
        return _rebuild_encoded_batch, (self.data, self.offsets.tolist(), self.names)

    def pin_memory(self) -> "EncodedBatch":
        """The DataLoader's pinning thread calls this (pin_memory=True): the bytes go to the GPU, so
        they are pinned, in one copy; the offsets stay on the host."""
        return EncodedBatch(self.data.pin_memory(), self.offsets, self.names)


def _rebuild_encoded_batch(data: torch.Tensor, offsets: List[int], names: Optional[List[str]]) -> EncodedBatch:
    return EncodedBatch(data, torch.tensor(offsets, dtype=torch.int64), names)


def collate_encoded(batch: Sequence[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """Samples (encoded image, label, *further fields) → (EncodedBatch of the images in order, the
    labels as one tensor, then a list of each further field: the record names with --record_log).
    An image is an `EncodedImage` (`encoded`'s: its name travels with the batch), bytes or a 1-D
    uint8 tensor; its bytes are copied once, into the batch's buffer."""
    images, labels, *rest = zip(*batch)
    return (encoded_batch(images), torch.tensor(labels, dtype=torch.int64), *[list(field) for field in rest])


def encoded_batch(images: Sequence[Any]) -> EncodedBatch:
    """Encoded images (`EncodedImage`s, bytes or 1-D uint8 tensors) → one EncodedBatch, their bytes
    copied once, into its buffer; the names travel where every image is an EncodedImage."""
    lengths = [len(image.data if isinstance(image, EncodedImage) else image) for image in images]
    offsets = torch.zeros(len(images) + 1, dtype=torch.int64)
    torch.cumsum(torch.tensor(lengths, dtype=torch.int64), 0, out=offsets[1:])
    data = _batch_buffer(int(offsets[-1]))
    buffer = memoryview(data.numpy())
    for image, start, length in zip(images, offsets.tolist(), lengths):
        payload = image.data if isinstance(image, EncodedImage) else image
        buffer[start:start + length] = payload.numpy() if isinstance(payload, torch.Tensor) else payload
    names = [image.name for image in images] if all(isinstance(image, EncodedImage) for image in images) else None
    return EncodedBatch(data, offsets, names)


def _batch_buffer(size: int) -> torch.Tensor:
    """`size` bytes for a batch; in a loader worker, in shared memory already (as default_collate
    does), so that handing the batch over does not copy it again."""
    if size == 0 or torch.utils.data.get_worker_info() is None:
        return torch.empty(size, dtype=torch.uint8)
    storage_class = getattr(torch, "UntypedStorage", None)
    if storage_class is None or not hasattr(storage_class, "_new_shared"):  # a PyTorch without it: moved there, one copy more
        return torch.empty(size, dtype=torch.uint8).share_memory_()
    data = torch.empty(0, dtype=torch.uint8).set_(storage_class._new_shared(size))
    _populate(data)
    return data


def _populate(data: torch.Tensor) -> None:
    """Maps the pages of a new shared-memory buffer in one call (Linux 5.14's MADV_POPULATE_WRITE)
    rather than one page fault each as the batch is copied in: a fresh segment's faults were most of
    a worker's cost a sample after the records' parsing (~6 ms a batch of 64 ~90 KB images, 1 ms
    less populated; issue #37). Where the call is missing (another OS, an older kernel), the faults
    happen as before."""
    madvise = _madvise()
    if madvise is None or data.numel() == 0:
        return
    page = _PAGE_SIZE
    start = data.data_ptr() - data.data_ptr() % page
    madvise(start, data.data_ptr() + data.numel() - start, _MADV_POPULATE_WRITE)  # a failure leaves the faults to come


_MADV_POPULATE_WRITE = 23  # linux/mman.h
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@functools.lru_cache(maxsize=None)
def _madvise() -> Optional[Any]:
    if not sys.platform.startswith("linux"):
        return None
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


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
    mean, std = _mean_and_std(images.device)
    return ((images.float() - mean) / std).contiguous(memory_format=torch.channels_last)


@functools.lru_cache(maxsize=None)
def _mean_and_std(device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """Made once per device: a tensor made from a list on a GPU is a blocking copy, which would stall
    the prefetching thread at every batch (issue #37)."""
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1) * 255
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1) * 255
    return mean.to(device), std.to(device)
