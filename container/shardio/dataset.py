"""PyTorch: an IterableDataset over a record source and a DataLoader factory sized by the job.

Each DataLoader worker of each rank is one consumer (split.py): no record is read twice in an
epoch and none is skipped. Call `set_epoch(epoch)` before each epoch: the epoch picks the part
each consumer reads, seeds the shuffle buffer and, in Pipe mode, names the FIFO to read. It is
kept in shared memory so that persistent workers, started once, see it change.
"""
from __future__ import annotations

import multiprocessing
from typing import Any, Callable, Iterator, Optional

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from .channels import open_channel
from .environment import INPUT_DIR, placement_from_env, sized_workers
from .records import ImageRecord
from .split import Placement
from .stream import RecordSource, consumer_images

DEFAULT_SHUFFLE_BUFFER = 1024


class ShardDataset(IterableDataset):
    """The image records of a channel for this process, split across its loader workers."""

    def __init__(
        self,
        source: RecordSource,
        *,
        placement: Optional[Placement] = None,
        transform: Optional[Callable[[ImageRecord], Any]] = None,
        shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.source = source
        self.placement = placement or placement_from_env()
        self.transform = transform
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self._epoch = multiprocessing.RawValue("q", 0)

    def set_epoch(self, epoch: int) -> None:
        self._epoch.value = epoch

    @property
    def epoch(self) -> int:
        return int(self._epoch.value)

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        records = consumer_images(self.source, self.placement, self.epoch, seed=self.seed,
                                  shuffle_buffer=self.shuffle_buffer, worker=worker, workers=workers)
        if self.transform is None:
            return records
        return map(self.transform, records)


def make_data_loader(
    dataset: ShardDataset,
    batch_size: int,
    *,
    num_workers: Optional[int] = None,
    prefetch_factor: int = 4,
    pin_memory: Optional[bool] = None,
    collate_fn: Optional[Callable[[list], Any]] = None,
    drop_last: bool = False,
    input_dir: str = INPUT_DIR,
) -> DataLoader:
    """A DataLoader for a ShardDataset: `num_workers` from the job's hyperparameter unless given,
    persistent workers (no re-fork and no refilled shuffle buffers per epoch), `prefetch_factor`
    batches in flight per worker, and page-locked memory when a GPU is there (faster, asynchronous
    copies with `tensor.cuda(non_blocking=True)`)."""
    workers = sized_workers(input_dir) if num_workers is None else num_workers
    options: dict = {}
    if workers > 0:
        options = {"persistent_workers": True, "prefetch_factor": prefetch_factor}
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        pin_memory=torch.cuda.is_available() if pin_memory is None else pin_memory,
        collate_fn=collate_fn,
        drop_last=drop_last,
        **options,
    )


def channel_data_loader(
    channel: str,
    batch_size: int,
    *,
    transform: Optional[Callable[[ImageRecord], Any]] = None,
    collate_fn: Optional[Callable[[list], Any]] = None,
    index_channel: Optional[str] = None,
    num_workers: Optional[int] = None,
    seed: int = 0,
    shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER,
    drop_last: bool = False,
    placement: Optional[Placement] = None,
    input_dir: str = INPUT_DIR,
) -> DataLoader:
    """The DataLoader of a SageMaker channel for this process (`loader.dataset.set_epoch(e)` each
    epoch). One worker count serves both the split and the DataLoader, so they cannot disagree."""
    workers = sized_workers(input_dir) if num_workers is None else num_workers
    placement = placement or placement_from_env()
    source = open_channel(channel, placement, workers, index_channel=index_channel, input_dir=input_dir)
    dataset = ShardDataset(source, placement=placement, transform=transform, shuffle_buffer=shuffle_buffer, seed=seed)
    return make_data_loader(dataset, batch_size, num_workers=workers, collate_fn=collate_fn, drop_last=drop_last,
                            input_dir=input_dir)
