"""A multi-part sample's parts decoded by their kind (the manifest's `sample.parts`, samples.py), in the
loader workers: the transform a samples loader applies unless given another (needs torch and torchvision).

- the image part (the manifest's `imagePart`, held in `image/encoded`): a uint8 RGB CHW tensor, decoded
  as the classification path decodes (torchvision's decoder, images.py `CpuEvalTransform`); on the gpu
  path (`encoded_image=True`) left encoded, an `EncodedImage` that the collate puts in one
  `EncodedBatch` for batch_augment.GpuJpegDecoder: the GPU decodes the image part only;
- other image parts (`mask.png`): a uint8 CHW tensor of the file's own channels and values (a palette
  PNG's indices, a grey PNG's one channel: a mask's classes, not colours), 16-bit ones as int32;
- JSON: parsed, within the contract's MAX_JSON_BYTES and MAX_JSON_DEPTH (json_limits.py);
- text: str (UTF-8); bytes: unchanged.
A part that cannot be decoded is a FormatError naming the part, the record, its shard and the sample's
key; in a loader the bad-record policy applies to it as to an image that cannot be decoded (bad_records.py).
"""
from __future__ import annotations

import io
import json
from typing import Any, Callable, Optional, Tuple

import numpy
import torch
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode

from .errors import FormatError, printable
from .images import EncodedImage
from .json_limits import loads
from .samples import KEY, Sample, read_samples


class SampleDecoder:
    """Sample → the same Sample, each part decoded by its kind (see the module); `encoded_image`: the
    image part left encoded for the GPU to decode."""

    def __init__(self, *, encoded_image: bool = False) -> None:
        self.encoded_image = encoded_image

    def __call__(self, sample: Sample) -> Sample:
        description = sample.description
        for part in sample.parts:
            name = part_name(sample, part)
            try:
                if part == description.image_part:
                    sample[part] = EncodedImage(sample[part], name) if self.encoded_image else _rgb(sample[part])
                else:
                    sample[part] = _decode(description.kinds[part], sample[part], name)
            except FormatError:
                raise
            except Exception as error:  # noqa: BLE001 - whatever the decoder raised, the part is named with it
                raise FormatError(f"{name}: cannot be decoded as {description.kinds[part]}: "
                                  f"{type(error).__name__}: {error}") from error
        return sample


def part_name(sample: Sample, part: str) -> str:
    """How an error names a part: the part, its record and shard, and the sample's key."""
    return printable(f"part {part!r} of record {sample.position} of {sample.shard} (sample {sample.get(KEY)})")


def _decode(kind: str, data: bytes, name: str) -> object:
    if kind == "image":
        return _as_stored(data)
    if kind == "json":
        try:
            return loads(name, data)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise FormatError(f"{name}: not JSON ({error})") from None
    if kind == "text":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(f"{name}: text that is not UTF-8 ({error})") from None
    return data


def _rgb(data: bytes) -> torch.Tensor:
    # A bytearray copy: torch.frombuffer warns about (and must not write to) immutable bytes.
    return torchvision.io.decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8), mode=ImageReadMode.RGB)


def _as_stored(data: bytes) -> torch.Tensor:
    """An image part's own channels and values as uint8 CHW (PIL: torchvision turns a palette PNG's
    indices into grey levels); 16-bit images as int32 (PyTorch 1.13 has no uint16), 32-bit float ones as float32."""
    with Image.open(io.BytesIO(data)) as image:
        pixels = numpy.array(image)
    if pixels.dtype == numpy.bool_:
        pixels = pixels.astype(numpy.uint8)
    elif pixels.dtype.kind in "iu" and pixels.dtype.itemsize > 1:
        pixels = pixels.astype(numpy.int32)
    tensor = torch.from_numpy(pixels)
    return tensor.unsqueeze(0) if tensor.dim() == 2 else tensor.permute(2, 0, 1)


def sample_loading(source: Any, transform: Optional[Callable[[Sample], Any]],
                   collate_fn: Optional[Callable[[list], Any]]) -> Tuple[Callable[[Sample], Any], Callable[[list], Any]]:
    """`source` put in samples mode (samples.read_samples), and the transform and collate of a samples loader:
    those given, else a SampleDecoder() and collate.collate_samples."""
    from .collate import collate_samples

    read_samples(source)
    return transform or SampleDecoder(), collate_fn or collate_samples
