"""Batches of samples (samples.py, decoded by sample_decode.py): the samples loader's default collate,
which a user replaces with their own (`collate_fn`), reusing `collate_part` for the entries it keeps.

Parts vary in size from sample to sample (the boxes of a detection sample's JSON, images of their own
sizes), so only what can be stacked is: same-shape tensors become one tensor, encoded images one
EncodedBatch, integers (the labels, the record indexes) one int64 tensor; anything else stays a list.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

import torch

from .dataset import _default_collate
from .images import EncodedImage, encoded_batch


def collate_samples(samples: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Decoded samples → one dict of the same entries (parts, `__key__`, `__shard__`, `__record__`,
    `__label__`), each `collate_part` of its values in sample order; an entry some samples lack (a part
    that is not required) is the list of its values, None where a sample lacks it."""
    names: Dict[str, None] = {}
    for sample in samples:
        names.update(dict.fromkeys(sample))
    batch: Dict[str, Any] = {}
    for name in names:
        values = [sample.get(name) for sample in samples]
        batch[name] = collate_part(values) if all(name in sample for sample in samples) else values
    return batch


def collate_part(values: List[Any]) -> Any:
    """One entry's values → tensors of one shape and dtype: stacked (N, ...); EncodedImages: one
    EncodedBatch (the gpu path); integers: an int64 tensor; anything else (tensors of several shapes,
    parsed JSON, str, bytes): the list itself."""
    if not values:
        return values
    first = values[0]
    if isinstance(first, torch.Tensor):
        if all(isinstance(v, torch.Tensor) and v.shape == first.shape and v.dtype == first.dtype for v in values):
            return _default_collate()(values)  # stacked in shared memory in a worker: no copy to hand it over
        return values
    if isinstance(first, EncodedImage) and all(isinstance(v, EncodedImage) for v in values):
        return encoded_batch(values)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return torch.tensor(values, dtype=torch.int64)
    return values
