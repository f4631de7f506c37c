"""ImageNet training augmentation of a whole batch at once, on whichever device holds it: random
resized crop + resize in ONE `torchvision.ops.roi_align` call over a padded batch (one box per
image), the flips in one `torch.where`, normalization in one expression. No per-image kernels:
the GPU decoding path (`GpuJpegDecoder`) and the hybrid path (CPU workers decode only) both end here.

roi_align with `aligned=True` and an adaptive sampling ratio averages ceil(box/output) samples per
output pixel along each axis: bilinear where the crop is enlarged, an area average (antialiasing)
where it is shrunk, like `RandomResizedCrop(antialias=True)`.

The random draws (crop boxes, flips) come from a seeded CPU generator, a few numbers per image, so
a seed gives the same augmentation on the CPU and on a GPU.
"""
from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence, Tuple

import torch
from torchvision.ops import roi_align

from ..epoch.bad_records import BadRecordError
from .images import RATIO, SCALE, EncodedBatch, normalize
_TRIES = 10  # torchvision's RandomResizedCrop: 10 draws, then a central crop


def random_resized_crop_boxes(sizes: torch.Tensor, generator: torch.Generator, scale: Sequence[float] = SCALE,
                              ratio: Sequence[float] = RATIO) -> torch.Tensor:
    """Float (N, 4) boxes x1, y1, x2, y2 in pixels for images of `sizes` (int (N, 2): height, width):
    torchvision's RandomResizedCrop.get_params for all images at once (the first of 10 draws that
    fits, else the central crop with the ratio clamped)."""
    heights, widths = sizes[:, 0:1].double(), sizes[:, 1:2].double()
    count = sizes.shape[0]
    area = heights * widths
    target = area * torch.empty(count, _TRIES, dtype=torch.float64).uniform_(scale[0], scale[1], generator=generator)
    aspect = torch.exp(torch.empty(count, _TRIES, dtype=torch.float64)
                       .uniform_(math.log(ratio[0]), math.log(ratio[1]), generator=generator))
    crop_w = torch.round(torch.sqrt(target * aspect))
    crop_h = torch.round(torch.sqrt(target / aspect))
    fits = (crop_w > 0) & (crop_h > 0) & (crop_w <= widths) & (crop_h <= heights)
    top = torch.floor(torch.rand(count, _TRIES, dtype=torch.float64, generator=generator) * (heights - crop_h + 1))
    left = torch.floor(torch.rand(count, _TRIES, dtype=torch.float64, generator=generator) * (widths - crop_w + 1))

    first = fits.double().argmax(dim=1, keepdim=True)  # the first draw that fits (0 where none does)
    pick = lambda values: values.gather(1, first)  # noqa: E731
    fallback_w, fallback_h = _central_crop(heights, widths, ratio)
    found = fits.any(dim=1, keepdim=True)
    crop_w = torch.where(found, pick(crop_w), fallback_w)
    crop_h = torch.where(found, pick(crop_h), fallback_h)
    top = torch.where(found, pick(top), torch.floor((heights - crop_h) / 2))
    left = torch.where(found, pick(left), torch.floor((widths - crop_w) / 2))
    return torch.cat([left, top, left + crop_w, top + crop_h], dim=1).float()


def _central_crop(heights: torch.Tensor, widths: torch.Tensor, ratio: Sequence[float]) -> Tuple[torch.Tensor, torch.Tensor]:
    in_ratio = widths / heights
    too_narrow, too_wide = in_ratio < min(ratio), in_ratio > max(ratio)
    crop_w = torch.where(too_wide, torch.round(heights * max(ratio)), widths)
    crop_h = torch.where(too_narrow, torch.round(widths / min(ratio)), heights)
    return crop_w, crop_h


def pad_batch(images: Sequence[torch.Tensor], *, gathered: Optional[bool] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """uint8 CHW images of different sizes → (one uint8 NCHW batch, top-left aligned and padded with
    zeros to the largest height and width, int64 (N, 2) heights and widths), on the images' device.

    `gathered` (the default on a GPU): one concatenation and one gather over the packed pixels, a
    handful of kernels whatever the batch size, instead of one copy kernel per image, each of which
    costs the host a launch (64 of them took 1.0 ms of host time on an H200, issue #31). On the
    CPU the copies are cheaper than building the gather's index; both give the same batch."""
    if not images:
        raise ValueError("pad_batch: no images (a batch needs at least one)")
    sizes = torch.tensor([[image.shape[-2], image.shape[-1]] for image in images], dtype=torch.int64)
    height, width = (int(value) for value in sizes.max(dim=0).values)
    if gathered if gathered is not None else images[0].device.type == "cuda":
        return _gathered(images, sizes, height, width), sizes
    batch = torch.zeros(len(images), images[0].shape[0], height, width, dtype=torch.uint8, device=images[0].device)
    for index, image in enumerate(images):
        batch[index, :, :image.shape[-2], :image.shape[-1]].copy_(image)
    return batch, sizes


def _gathered(images: Sequence[torch.Tensor], sizes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """The padded batch as one index_select over every image's pixels packed end to end, a zero
    appended for the padding to point at."""
    device, channels, count = images[0].device, images[0].shape[0], len(images)
    packed = torch.cat([image.reshape(-1) for image in images] + [images[0].new_zeros(1)])
    lengths = sizes[:, 0] * sizes[:, 1] * channels
    # int32 indexes where they fit: half the memory of int64 over N x C x H x W positions.
    dtype = torch.int32 if packed.numel() < 2 ** 31 else torch.int64
    heights, widths, starts = to_device(torch.stack([sizes[:, 0], sizes[:, 1], torch.cumsum(lengths, 0) - lengths]).to(dtype),
                                        device).view(3, count, 1, 1, 1)  # one small copy to the device
    channel = torch.arange(channels, device=device, dtype=dtype).view(1, channels, 1, 1)
    row = torch.arange(height, device=device, dtype=dtype).view(1, 1, height, 1)
    column = torch.arange(width, device=device, dtype=dtype).view(1, 1, 1, width)
    index = (starts + (channel * heights + row) * widths) + column  # one N x C x H x W tensor; the rest are rows
    index.masked_fill_((row >= heights) | (column >= widths), packed.numel() - 1)
    return packed.index_select(0, index.view(-1)).view(count, channels, height, width)


class BatchAugment:
    """(padded uint8 NCHW batch, its (N, 2) sizes) on any device → normalized float NCHW
    (channels-last) `size` × `size` crops: random resized crop, horizontal flip with p=0.5."""

    def __init__(self, size: int, seed: int = 0, generator: Optional[torch.Generator] = None) -> None:
        self.size = size
        self.generator = generator or torch.Generator().manual_seed(seed)

    def __call__(self, batch: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
        if batch.dim() != 4 or batch.shape[0] != sizes.shape[0]:
            raise ValueError(f"BatchAugment: expected an NCHW batch and one size per image, got {tuple(batch.shape)} "
                             f"and {tuple(sizes.shape)}")
        count = batch.shape[0]
        boxes = random_resized_crop_boxes(sizes.cpu(), self.generator)
        flips = torch.rand(count, generator=self.generator) < 0.5
        rois = to_device(torch.cat([torch.arange(count, dtype=torch.float32).unsqueeze(1), boxes], dim=1), batch.device)
        crops = roi_align(batch.float(), rois, output_size=(self.size, self.size), spatial_scale=1.0,
                          sampling_ratio=-1, aligned=True)
        flips = to_device(flips, batch.device).view(count, 1, 1, 1)
        return normalize(torch.where(flips, crops.flip(-1), crops))


JPEG_START = b"\xff\xd8"
"""The first two bytes of every JPEG (SOI): what nvJPEG decodes; any other record (a PNG the pack-time
image check admitted, say) is decoded on the CPU."""

BatchDecode = Callable[[List[torch.Tensor]], List[torch.Tensor]]


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A host tensor on `device` without blocking the calling thread: from pageable memory a copy
    to a GPU waits for the stream's queued work (PyTorch synchronizes it), so small tensors are
    pinned first and copied asynchronously (the pinned block is kept until the copy has run)."""
    if device.type != "cuda" or tensor.device == device:
        return tensor.to(device)
    return (tensor if tensor.is_pinned() else tensor.pin_memory()).to(device, non_blocking=True)


def decode_jpegs(batch: EncodedBatch, device: torch.device, decode_batch: Optional[BatchDecode] = None) -> List[torch.Tensor]:
    """A batch's encoded images → RGB uint8 CHW images on `device`, in order: on a GPU the JPEGs in
    one batched nvJPEG call (torchvision ≥ 0.19 takes a list), any other format (nvJPEG reads JPEG
    only) decoded on the CPU and moved over; on the CPU one decode per image. The images are views
    of the batch's one buffer. `decode_batch` replaces the batched JPEG decode (the tests run the
    split on the CPU). An image that cannot be decoded fails the batch with a `BadRecordError`
    naming its record (the batched decoder does not say which: each JPEG is then tried alone)."""
    from torchvision.io import ImageReadMode, decode_image, decode_jpeg

    images = batch.images()
    if device.type != "cuda" and decode_batch is None:
        return [_decoded(lambda: decode_image(data, mode=ImageReadMode.RGB), batch, index) for index, data in enumerate(images)]

    def nvjpeg(jpegs: List[torch.Tensor]) -> List[torch.Tensor]:
        try:
            return list(decode_jpeg(jpegs, mode=ImageReadMode.RGB, device=device))
        except TypeError:  # torchvision < 0.19: one image per call
            return [decode_jpeg(data, mode=ImageReadMode.RGB, device=device) for data in jpegs]

    is_jpeg = batch.starts_with(JPEG_START)
    jpeg_indexes = [index for index, jpeg in enumerate(is_jpeg) if jpeg]
    decoded: List[Optional[torch.Tensor]] = [None] * len(images)
    if jpeg_indexes:
        try:
            for index, image in zip(jpeg_indexes, (decode_batch or nvjpeg)([images[index] for index in jpeg_indexes])):
                decoded[index] = image
        except RuntimeError as error:
            _name_the_bad_jpeg(batch, images, jpeg_indexes, error)
    for index, jpeg in enumerate(is_jpeg):
        if not jpeg:
            decoded[index] = to_device(_decoded(lambda: decode_image(images[index], mode=ImageReadMode.RGB), batch, index), device)
    return decoded  # type: ignore[return-value]


def _decoded(decode: Callable[[], torch.Tensor], batch: EncodedBatch, index: int) -> torch.Tensor:
    try:
        return decode()
    except RuntimeError as error:
        raise _bad_image(batch, index, error) from error


def _name_the_bad_jpeg(batch: EncodedBatch, images: List[torch.Tensor], jpeg_indexes: List[int], error: RuntimeError) -> None:
    """Raises the batched decode's failure naming the record: the first JPEG of the batch the CPU
    cannot decode either (else the batch's error as it was, the batch named)."""
    from torchvision.io import ImageReadMode, decode_jpeg

    for index in jpeg_indexes:
        try:
            decode_jpeg(images[index], mode=ImageReadMode.RGB)
        except RuntimeError as alone:
            raise _bad_image(batch, index, alone) from error
    raise BadRecordError(f"the batched JPEG decode failed on a batch of {len(batch)} images ({batch.name(jpeg_indexes[0])} "
                         f"first), each of which decodes alone on the CPU: {error}") from error


def _bad_image(batch: EncodedBatch, index: int, error: Exception) -> BadRecordError:
    return BadRecordError(f"{batch.name(index)} cannot be decoded: {error}. The gpu loader decodes a batch at once and "
                          "cannot skip it: repack the dataset without the file, or use --loader cpu with --on_bad_record skip")


class GpuJpegDecoder:
    """An `EncodedBatch` (collate_encoded's) → one normalized float batch on `device`: one batched
    decode (nvJPEG on a GPU), the padding as one gather, then BatchAugment (the same augmentation as
    CpuTrainTransform)."""

    def __init__(self, size: int, device: torch.device, seed: int = 0) -> None:
        self.device = device
        self.augment = BatchAugment(size, seed)

    def __call__(self, batch: EncodedBatch) -> torch.Tensor:
        return self.augment(*pad_batch(decode_jpegs(batch, self.device)))
