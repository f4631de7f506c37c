"""How a loader reads its source, as one value: the shuffle, the bad-record policy and the DataLoader's
settings, each declared once here and checked once, where the value is made.

`LoaderOptions(transform=CpuTrainTransform(224), seed=1, on_bad_record="skip", resumable=True)`;
`data_loader(source, batch_size, options)` takes it (torch/dataset.py), and so do ShardDataset and
make_data_loader for a record source of your own. Standard library only, as the rest of the readers
but torch/.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..format.records import ImageRecord
from .bad_records import DEFAULT_MAX_BAD_RATIO, FAIL, check_policy
from .split import Placement

DEFAULT_SHUFFLE_BUFFER = 1024
DEFAULT_PREFETCH_FACTOR = 4


@dataclass(frozen=True)
class LoaderOptions:
    """How the records are read and batched.

    - `transform`: a record (ImageRecord) to a sample; None hands out the records.
    - `collate_fn`: samples to a batch; PyTorch's default_collate by default.
    - `seed`, `shuffle_buffer`: the epoch's order (epoch/order.py: the seed, the epoch and the dataset
      decide it); a shuffle buffer of 0 reads each consumer's share in the canonical order.
    - `on_bad_record`, `max_bad_ratio`: a record `transform` cannot decode fails the epoch naming it
      ("fail"), or is skipped and logged ("skip") until a loader worker has skipped more than
      `max_bad_ratio` of its records in the epoch (epoch/bad_records.py).
    - `num_workers`: DataLoader worker processes per process; None: the job's `num_workers`
      hyperparameter, which TrainingJob sizes for the instance (outside a job, the same rule on this machine).
    - `prefetch_factor`: batches in flight per worker; `pin_memory`: page-locked batches (None: where
      a GPU is); `drop_last`: every batch full.
    - `resumable`: a ResumableLoader, whose `state_dict()` after any batch resumes the epoch there.
    - `placement`: this process's rank among all (None: from RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE).
    - `samples`: a multi-part dataset's samples rather than (image, label) records (refused for a dataset
      without them): each a dict of its parts and `__key__`, `__shard__`, `__record__`, `__label__`, decoded
      by `transform` (by default torch/sample_decode.py's SampleDecoder) and batched by `collate_fn` (by
      default torch/collate.py's collate_samples).
    """

    transform: Optional[Callable[[ImageRecord], Any]] = None
    collate_fn: Optional[Callable[[list], Any]] = None
    seed: int = 0
    shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER
    on_bad_record: str = FAIL
    max_bad_ratio: float = DEFAULT_MAX_BAD_RATIO
    num_workers: Optional[int] = None
    prefetch_factor: int = DEFAULT_PREFETCH_FACTOR
    pin_memory: Optional[bool] = None
    drop_last: bool = False
    resumable: bool = False
    placement: Optional[Placement] = None
    samples: bool = False

    def __post_init__(self) -> None:
        check_policy(self.on_bad_record, self.max_bad_ratio)
        _check_int("seed", self.seed, None)
        _check_int("shuffle_buffer", self.shuffle_buffer, 0)
        _check_int("prefetch_factor", self.prefetch_factor, 1)
        if self.num_workers is not None:
            _check_int("num_workers", self.num_workers, 0)
        for name in ("transform", "collate_fn"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"LoaderOptions: {name} must be callable or None, got {type(value).__name__}")
        for name in ("drop_last", "resumable", "samples") + (("pin_memory",) if self.pin_memory is not None else ()):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"LoaderOptions: {name} must be True or False, got {getattr(self, name)!r}")
        if self.placement is not None and not isinstance(self.placement, Placement):
            raise TypeError(f"LoaderOptions: placement must be a Placement or None, got {type(self.placement).__name__}")

    def replace(self, **changes: Any) -> "LoaderOptions":
        """These options with `changes` (checked as any are)."""
        return dataclasses.replace(self, **changes)


def _check_int(name: str, value: Any, least: Optional[int]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or (least is not None and value < least):
        allowed = "an integer" if least is None else f"an integer of at least {least}"
        raise ValueError(f"LoaderOptions: {name} must be {allowed}, got {value!r}")
