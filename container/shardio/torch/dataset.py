"""PyTorch: an IterableDataset over a record source and a DataLoader that counts its epochs.

Each DataLoader worker of each rank is one consumer (split.py): no record is read twice in an
epoch and none is skipped. The epoch decides the order (order.py: the canonical order, each
consumer's share of it, its interleaving and shuffle buffer). The loader counts epochs itself:
each pass over it is the next epoch, unless `set_epoch(epoch)` (on the loader or its dataset)
chose one since the last pass. The epoch is kept in shared memory so that persistent workers,
started once, see it change.

Resumption (the shape of MosaicML Streaming's `state_dict(num_samples, from_beginning)` /
`load_state_dict(state)`): a consumer's order is a pure function of the seed, the epoch, the
dataset and the consumer count, so the position in an epoch is the count of records each worker
has handed out (and the bad records it skipped, bad_records.py); `ResumableLoader` counts them per
worker as the batches arrive (position.py). Restored at the same worker and rank count, each worker
skips as many records of its stream before decoding; at another, the counts of every rank's
position are replayed to find the records handed out, and the rest of the epoch is split anew
(elastic resume, as MosaicML's canonical nodes allow). The position records the dataset version it
counts in (the manifest's `datasetVersion`): another version lists other shards in another order,
so a position mid-epoch is restored on the same version only.
"""
from __future__ import annotations

import itertools
import multiprocessing
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from ..catalog.dataset_files import PINNED_MANIFEST_ENV
from ..catalog.layout import version_manifest_key
from ..epoch.bad_records import BadRecordGuard, take_skipped
from ..epoch.options import DEFAULT_SHUFFLE_BUFFER, LoaderOptions
from ..epoch.order import Resumed
from ..epoch.position import Position, Reader, Restore, make_position, restore
from ..epoch.split import consumed_records, consumer_of
from ..epoch.stream import RecordSource, consumer_images
from ..source.environment import INPUT_DIR, placement_from_env, sized_workers
from ..source.location import CHANNEL_SCHEME, Source
from .keywords import loader_options, source_and_options

__all__ = ["DEFAULT_SHUFFLE_BUFFER", "EpochLoader", "ResumableLoader", "ShardDataset", "channel_data_loader", "data_loader",
           "dataset_version_changed", "make_data_loader"]


class ShardDataset(IterableDataset):
    """The image records of a channel for this process, split across its loader workers."""

    def __init__(self, source: RecordSource, options: Optional[LoaderOptions] = None, **keywords: Any) -> None:
        """The records of `source` read as `options` say: its placement, transform, order and
        bad-record policy (a record `transform` cannot decode fails the epoch naming it, or is skipped
        within a budget: epoch/bad_records.py). `ShardDataset(source, seed=1, ...)`, the keyword style
        of 0.1.0, still works with a DeprecationWarning."""
        super().__init__()
        self.options = loader_options("ShardDataset", options, keywords) if keywords else options or LoaderOptions()
        self.source = source
        self.placement = self.options.placement or placement_from_env()
        self.transform = self.options.transform
        self.shuffle_buffer = self.options.shuffle_buffer
        self.seed = self.options.seed
        self._epoch = multiprocessing.RawValue("q", 0)
        self._epoch_chosen = False  # set_epoch since the last pass began
        self._passes = 0
        self._restore: Optional[Restore] = None
        self._resumed: Optional[Resumed] = None

    def load_state_dict(self, state: Restore) -> None:
        """Start epoch `state.epoch` after the records its earlier runs consumed and past those each
        worker had handed out in the current run (`ResumableLoader.load_state_dict` makes it). Call
        before the loader's first iteration: persistent workers copy the dataset when they start."""
        self._restore = state
        self._resumed = None
        if state.runs:
            counts = getattr(self.source, "record_counts", lambda: None)()
            if counts is None:
                raise ValueError("a position saved at another worker or rank count needs every shard's record count "
                                 "(the index files); this source has none")
            self._resumed = consumed_records(counts, self.seed, state.epoch, state.runs, self.shuffle_buffer)
        self.set_epoch(state.epoch)

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next pass reads (otherwise each pass reads the one after the last pass's)."""
        self._epoch.value = epoch
        self._epoch_chosen = True

    def begin_pass(self) -> None:
        """A loader's pass begins (in the training process): the next epoch, unless set_epoch chose one."""
        if self._passes and not self._epoch_chosen:
            self._epoch.value += 1
        self._passes += 1
        self._epoch_chosen = False

    @property
    def epoch(self) -> int:
        return int(self._epoch.value)

    def restored(self, epoch: int) -> Optional[Restore]:
        """The restored position, while its epoch is the one read."""
        return self._restore if self._restore is not None and self._restore.epoch == epoch else None

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        epoch = self.epoch
        restored = self.restored(epoch)
        resumed = self._resumed if restored is not None else None
        records = consumer_images(self.source, self.placement, epoch, seed=self.seed, shuffle_buffer=self.shuffle_buffer,
                                  worker=worker, workers=workers, resumed=resumed)
        skip = restored.yielded[worker] if restored is not None and worker < len(restored.yielded) else 0
        if skip:
            records = itertools.islice(records, skip, None)
        if self.transform is None:
            return records
        part_records = getattr(self.source, "part_records", None)
        consumer = consumer_of(self.placement, worker, workers, self.source.host_sharded)
        expected = None
        if part_records is not None:
            expected = (part_records(consumer, epoch, self.seed, resumed) if resumed is not None
                        else part_records(consumer, epoch, self.seed))
        guard = BadRecordGuard(self.source, on_bad_record=self.options.on_bad_record, max_bad_ratio=self.options.max_bad_ratio,
                               expected=None if expected is None else expected - skip,
                               consumer=f"loader worker {worker} of rank {self.placement.rank} in epoch {epoch}")
        return guard.decode(records, self.transform)


class _TaggedCollate:
    """Runs in the worker: the batch with the id of the worker that made it and the records it took
    (its size, and the bad records skipped while it was made)."""

    def __init__(self, collate_fn: Callable[[list], Any]) -> None:
        self.collate_fn = collate_fn

    def __call__(self, samples: list) -> Tuple[int, int, Any]:
        info = get_worker_info()
        return (info.id if info is not None else 0), len(samples) + take_skipped(), self.collate_fn(samples)


def _default_collate() -> Callable[[list], Any]:
    # torch.utils.data.default_collate is public since PyTorch 1.11.
    from torch.utils.data import _utils

    return getattr(torch.utils.data, "default_collate", _utils.collate.default_collate)


class EpochLoader(DataLoader):
    """A DataLoader over a ShardDataset that counts its epochs: each pass is the next epoch unless
    `set_epoch` (its own or its dataset's) chose one since the last pass began."""

    def set_epoch(self, epoch: int) -> None:
        self.dataset.set_epoch(epoch)  # type: ignore[attr-defined]

    def __iter__(self) -> Any:
        self.dataset.begin_pass()  # type: ignore[attr-defined]
        return super().__iter__()


class ResumableLoader(EpochLoader):
    """An EpochLoader that knows its position in the epoch: the records each of its workers has
    handed to the training loop. `state_dict()` after any batch, and `load_state_dict()` before the
    first, restart the epoch at that batch, at this worker and rank count or another (position.py)."""

    def __init__(self, dataset: "ShardDataset", *args: Any, **kwargs: Any) -> None:
        super().__init__(dataset, *args, **kwargs)
        self.workers = max(1, self.num_workers)
        self._yielded: List[int] = [0] * self.workers

    def __iter__(self) -> Iterator[Any]:
        self.dataset.begin_pass()  # type: ignore[attr-defined]
        restored = self.dataset.restored(self.dataset.epoch)  # type: ignore[attr-defined]
        self._yielded = list(restored.yielded) if restored is not None else [0] * self.workers
        for worker, size, batch in DataLoader.__iter__(self):
            self._yielded[worker] += size
            yield batch

    def _reader(self) -> Reader:
        dataset: ShardDataset = self.dataset  # type: ignore[assignment]
        placement = dataset.placement
        return Reader(rank=placement.rank, world_size=placement.world_size, workers=self.workers, seed=dataset.seed,
                      shuffle_buffer=dataset.shuffle_buffer, dataset_version=dataset.source.dataset_version,
                      host_sharded=dataset.source.host_sharded)

    def state_dict(self, num_samples: Optional[int] = None, from_beginning: bool = True) -> Position:
        """This rank's position after the last batch handed out (position.py). `num_samples`/`from_beginning`
        are MosaicML Streaming's arguments; the per-worker counts kept here are exact, so `num_samples`,
        when given, must agree with this rank's records of the epoch."""
        dataset: ShardDataset = self.dataset  # type: ignore[assignment]
        restored = dataset.restored(dataset.epoch)
        position = make_position(self._reader(), dataset.epoch, self._yielded, restored.runs if restored is not None else [])
        if num_samples is not None and from_beginning and num_samples != sum(self._yielded):
            raise ValueError(f"state_dict: num_samples={num_samples} but the workers handed out {sum(self._yielded)} "
                             "records this epoch")
        return position

    def load_state_dict(self, state: Union[Position, Sequence[Position]]) -> None:
        """Resume at `state`: this rank's position (same worker and rank count), or the list of every
        rank's positions of one checkpoint (any count). Refused, with a ValueError naming what
        changed, on another dataset version, seed, shuffle buffer or ordering algorithm mid-epoch."""
        self.dataset.load_state_dict(restore(state, self._reader(), dataset_version_changed))  # type: ignore[attr-defined]


def dataset_version_changed(saved: Optional[str], reading: Optional[str]) -> str:
    """Why a position saved on one dataset version cannot be restored on another, and what to do."""
    key = version_manifest_key(saved) if saved else None
    pin = (f"Source(..., version=\"{saved}\"); in a job "
           f"{PINNED_MANIFEST_ENV}={key}, or train.py's --dataset_manifest {key}; the pipeline passes the version's own manifest"
           if saved else "the dataset it started on")
    return (f"the loader's position was saved reading dataset version {saved or 'none (no versioned manifest)'} but this "
            f"loader reads {reading or 'none (no versioned manifest)'}: a position counts records in one version's order, "
            "so on another it would read some records twice and others never. Pin the version the job started on "
            f"({pin}), or start the epoch over (do not restore the position)")


def make_data_loader(dataset: ShardDataset, batch_size: int, options: Optional[LoaderOptions] = None, **keywords: Any) -> Any:
    """An EpochLoader for a ShardDataset (a ResumableLoader when `resumable`), as `options` say (the
    dataset's by default): `num_workers` from the job's hyperparameter unless given, persistent workers
    (no re-fork and no refilled shuffle buffers per epoch), `prefetch_factor` batches in flight per
    worker, and page-locked memory where a GPU is (faster, asynchronous copies with
    `tensor.cuda(non_blocking=True)`). The keyword style of 0.1.0 still works, deprecated."""
    input_dir = keywords.pop("input_dir", INPUT_DIR)
    options = loader_options("make_data_loader", options or dataset.options, keywords) if keywords else options or dataset.options
    workers = sized_workers(input_dir) if options.num_workers is None else options.num_workers
    settings: dict = {"persistent_workers": True, "prefetch_factor": options.prefetch_factor} if workers > 0 else {}
    collate_fn = _TaggedCollate(options.collate_fn or _default_collate()) if options.resumable else options.collate_fn
    return (ResumableLoader if options.resumable else EpochLoader)(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        pin_memory=torch.cuda.is_available() if options.pin_memory is None else options.pin_memory,
        collate_fn=collate_fn,
        drop_last=options.drop_last,
        **settings,
    )


def data_loader(source: Union[Source, str], batch_size: int, options: Optional[LoaderOptions] = None, **keywords: Any) -> Any:
    """The readers' front door: the EpochLoader (a ResumableLoader with `options.resumable`) of the
    packed dataset `source` (a Source, or a location string for `Source(location)`), split over this
    process's ranks and loader workers, each pass the next epoch unless `set_epoch(e)` chose one (in
    Pipe mode the epoch names the FIFO: set it every epoch). One worker count serves both the split
    and the DataLoader, so they cannot disagree. `data_loader(location, batch_size, seed=1, ...)`,
    the keyword style of 0.1.0, still works with a DeprecationWarning."""
    if keywords:
        source, options = source_and_options("data_loader", source, options, keywords)
    source = Source(source) if isinstance(source, str) else source
    if not isinstance(source, Source):
        raise TypeError(f"data_loader: source must be a Source or a location string, got {type(source).__name__}")
    options = options or LoaderOptions()
    options = options.replace(num_workers=sized_workers(source.input_dir) if options.num_workers is None else options.num_workers,
                              placement=options.placement or placement_from_env())
    records = source.open(options.placement, options.num_workers)
    if options.samples:
        from .sample_decode import sample_loading  # torchvision's import only where samples are read

        transform, collate_fn = sample_loading(records, options.transform, options.collate_fn)
        options = options.replace(transform=transform, collate_fn=collate_fn)
    return make_data_loader(ShardDataset(records, options), batch_size)


def channel_data_loader(channel: str, batch_size: int, **keywords: Any) -> Any:
    """Deprecated: `data_loader(Source(f"sagemaker://{channel}", ...), batch_size, LoaderOptions(...))`.
    Removed in the next release."""
    source, options = source_and_options("channel_data_loader", f"{CHANNEL_SCHEME}://{channel}", None, keywords)
    return data_loader(source, batch_size, options)
