"""PyTorch: an IterableDataset over a record source and a DataLoader factory sized by the job.

Each DataLoader worker of each rank is one consumer (split.py): no record is read twice in an
epoch and none is skipped. Call `set_epoch(epoch)` before each epoch: the epoch picks the part
each consumer reads, seeds the shuffle buffer and, in Pipe mode, names the FIFO to read. It is
kept in shared memory so that persistent workers, started once, see it change.

Resumption (the shape of MosaicML Streaming's `state_dict(num_samples, from_beginning)` /
`load_state_dict(state)`, in a small way): a consumer's order is fixed by (seed, epoch, rank,
worker), so the position in an epoch is the count of records each worker has handed out (and the
bad records it skipped, bad_records.py); `ResumableLoader` counts them per worker as the batches arrive, and a dataset given that state
skips as many records of each worker's stream, before decoding, in that epoch only. The position
records the dataset version it counts in (the manifest's `datasetVersion`): another version lists
other shards in another order, so a position mid-epoch is restored on the same version only.
"""
from __future__ import annotations

import multiprocessing
import itertools
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from .bad_records import DEFAULT_MAX_BAD_RATIO, FAIL, BadRecordGuard, check_policy, take_skipped
from .channels import open_channel
from .dataset_files import PINNED_MANIFEST_ENV
from .environment import INPUT_DIR, placement_from_env, sized_workers
from .layout import version_manifest_key
from .location import open_location
from .s3_dataset import DEFAULT_SHARDS_AHEAD, S3Options
from .s3_objects import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT
from .records import ImageRecord
from .split import Placement, consumer_of
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
        on_bad_record: str = FAIL,
        max_bad_ratio: float = DEFAULT_MAX_BAD_RATIO,
    ) -> None:
        """`on_bad_record`: a record `transform` cannot decode fails the epoch naming it ("fail"), or is
        skipped and logged ("skip") until a loader worker has skipped more than `max_bad_ratio` of its
        records (bad_records.py)."""
        super().__init__()
        check_policy(on_bad_record, max_bad_ratio)
        self.on_bad_record, self.max_bad_ratio = on_bad_record, max_bad_ratio
        self.source = source
        self.placement = placement or placement_from_env()
        self.transform = transform
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self._epoch = multiprocessing.RawValue("q", 0)
        self._resume: Optional[Dict[str, Any]] = None

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Start epoch `state["epoch"]` past the records each worker had handed out (`state["yielded"]`,
        one count per worker, from `ResumableLoader.state_dict`). Call before the loader's first
        iteration: persistent workers copy the dataset when they start."""
        self._resume = dict(state)

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
        skip = self._skipped(worker)
        if skip:
            records = itertools.islice(records, skip, None)
        if self.transform is None:
            return records
        part_records = getattr(self.source, "part_records", None)
        expected = part_records(consumer_of(self.placement, worker, workers, self.source.host_sharded), self.epoch,
                                self.seed) if part_records is not None else None
        guard = BadRecordGuard(self.source, on_bad_record=self.on_bad_record, max_bad_ratio=self.max_bad_ratio,
                               expected=None if expected is None else expected - skip,
                               consumer=f"loader worker {worker} of rank {self.placement.rank} in epoch {self.epoch}")
        return guard.decode(records, self.transform)

    def _skipped(self, worker: int) -> int:
        resume = self._resume
        if resume is None or resume["epoch"] != self.epoch:
            return 0
        yielded = resume["yielded"]
        return yielded[worker] if worker < len(yielded) else 0


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


class ResumableLoader:
    """A DataLoader over a ShardDataset that knows its position in the epoch: the records each of
    its workers has handed to the training loop. `state_dict()` after any batch, and
    `load_state_dict()` before the first, restart the epoch at that batch."""

    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self.dataset: ShardDataset = loader.dataset  # type: ignore[assignment]
        self.workers = max(1, loader.num_workers)
        self._yielded: List[int] = [0] * self.workers

    def set_epoch(self, epoch: int) -> None:
        self.dataset.set_epoch(epoch)

    def __iter__(self) -> Iterator[Any]:
        resume = self.dataset._resume
        if resume is not None and resume["epoch"] == self.dataset.epoch:
            self._yielded = list(resume["yielded"])
        else:
            self._yielded = [0] * self.workers
        for worker, size, batch in self.loader:
            self._yielded[worker] += size
            yield batch

    def state_dict(self, num_samples: Optional[int] = None, from_beginning: bool = True) -> Dict[str, Any]:
        """The position after the last batch handed out. `num_samples`/`from_beginning` are
        MosaicML Streaming's arguments; the per-worker counts kept here are exact, so
        `num_samples`, when given, must agree with them."""
        if num_samples is not None and num_samples != sum(self._yielded) and from_beginning:
            raise ValueError(f"state_dict: num_samples={num_samples} but the workers handed out {sum(self._yielded)} "
                             "records this epoch")
        placement = self.dataset.placement
        return {"epoch": self.dataset.epoch, "yielded": list(self._yielded), "sample_in_epoch": sum(self._yielded),
                "workers": self.workers, "rank": placement.rank, "world_size": placement.world_size,
                "seed": self.dataset.seed, "shuffle_buffer": self.dataset.shuffle_buffer,
                "dataset_version": self.dataset.source.dataset_version}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Resume at `state`, or refuse (ValueError naming what changed) where the split would differ:
        another dataset version mid-epoch, or another worker count, rank, world size, seed or buffer."""
        reading = self.dataset.source.dataset_version
        if sum(state["yielded"]) and state.get("dataset_version") != reading:
            raise ValueError(dataset_version_changed(state.get("dataset_version"), reading))
        placement = self.dataset.placement
        now = {"workers": self.workers, "rank": placement.rank, "world_size": placement.world_size,
               "seed": self.dataset.seed, "shuffle_buffer": self.dataset.shuffle_buffer}
        changed = [f"{key} {state.get(key)} -> {value}" for key, value in now.items() if state.get(key) != value]
        if changed:
            raise ValueError("the loader's position cannot be restored: the record order depends on "
                             + ", ".join(changed))
        self.dataset.load_state_dict({"epoch": state["epoch"], "yielded": state["yielded"]})


def dataset_version_changed(saved: Optional[str], reading: Optional[str]) -> str:
    """Why a position saved on one dataset version cannot be restored on another, and what to do."""
    pin = (f"{PINNED_MANIFEST_ENV}={version_manifest_key(saved)} or --dataset_manifest {version_manifest_key(saved)}"
           if saved else "the dataset it started on")
    return (f"the loader's position was saved reading dataset version {saved or 'none (no versioned manifest)'} but this "
            f"loader reads {reading or 'none (no versioned manifest)'}: a position counts records in one version's order, "
            "so on another it would read some records twice and others never. Pin the version the job started on "
            f"({pin}; the pipeline passes the version's own manifest), or start the epoch over (do not restore the position)")


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
    resumable: bool = False,
) -> Any:
    """A DataLoader for a ShardDataset (wrapped in a ResumableLoader when `resumable`): `num_workers` from the job's hyperparameter unless given,
    persistent workers (no re-fork and no refilled shuffle buffers per epoch), `prefetch_factor`
    batches in flight per worker, and page-locked memory when a GPU is there (faster, asynchronous
    copies with `tensor.cuda(non_blocking=True)`)."""
    workers = sized_workers(input_dir) if num_workers is None else num_workers
    options: dict = {}
    if workers > 0:
        options = {"persistent_workers": True, "prefetch_factor": prefetch_factor}
    if resumable:
        collate_fn = _TaggedCollate(collate_fn or _default_collate())
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        pin_memory=torch.cuda.is_available() if pin_memory is None else pin_memory,
        collate_fn=collate_fn,
        drop_last=drop_last,
        **options,
    )
    return ResumableLoader(loader) if resumable else loader


def channel_data_loader(
    channel: str,
    batch_size: int,
    *,
    transform: Optional[Callable[[ImageRecord], Any]] = None,
    collate_fn: Optional[Callable[[list], Any]] = None,
    index_channel: Optional[str] = None,
    manifest: Optional[str] = None,
    num_workers: Optional[int] = None,
    seed: int = 0,
    shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER,
    drop_last: bool = False,
    placement: Optional[Placement] = None,
    input_dir: str = INPUT_DIR,
    resumable: bool = False,
    on_bad_record: str = FAIL,
    max_bad_ratio: float = DEFAULT_MAX_BAD_RATIO,
) -> Any:
    """The DataLoader (a ResumableLoader when `resumable`) of a SageMaker channel for this process (`loader.dataset.set_epoch(e)` each
    epoch). One worker count serves both the split and the DataLoader, so they cannot disagree.
    `manifest` pins the dataset version (see `open_channel`); `on_bad_record` and `max_bad_ratio`: ShardDataset's."""
    return _loader(
        lambda where, workers: open_channel(channel, where, workers, index_channel=index_channel, manifest=manifest,
                                            input_dir=input_dir),
        batch_size, transform=transform, collate_fn=collate_fn, num_workers=num_workers, seed=seed,
        shuffle_buffer=shuffle_buffer, drop_last=drop_last, placement=placement, input_dir=input_dir, resumable=resumable,
        on_bad_record=on_bad_record, max_bad_ratio=max_bad_ratio)


def data_loader(
    location: str,
    batch_size: int,
    *,
    transform: Optional[Callable[[ImageRecord], Any]] = None,
    collate_fn: Optional[Callable[[list], Any]] = None,
    version: Optional[str] = None,
    num_workers: Optional[int] = None,
    seed: int = 0,
    shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER,
    drop_last: bool = False,
    placement: Optional[Placement] = None,
    resumable: bool = False,
    cache_dir: Optional[str] = None,
    cache_limit: Optional[int] = None,
    timeout: float = DEFAULT_TIMEOUT,
    attempts: int = DEFAULT_ATTEMPTS,
    shards_ahead: int = DEFAULT_SHARDS_AHEAD,
    index_channel: Optional[str] = None,
    input_dir: str = INPUT_DIR,
    on_bad_record: str = FAIL,
    max_bad_ratio: float = DEFAULT_MAX_BAD_RATIO,
) -> Any:
    """The DataLoader (a ResumableLoader when `resumable`) of the packed dataset at `location`: a
    folder (a path or `file://` URL), `s3://bucket/prefix/` (streamed through a local cache) or
    `sagemaker://<channel>` (location.py), split over this process's ranks and loader workers as
    `channel_data_loader` splits a channel. `version` pins a dataset version by its id; the current
    one by default. An S3 prefix is read as S3Options says (s3_dataset.py): cached at `cache_dir` (a
    folder per dataset under the temporary folder by default), `cache_limit` bytes of shards at most
    (None: no limit); each GET waits `timeout` seconds at most between reads and is tried `attempts`
    times on transient errors, and each loader worker fetches `shards_ahead` shards beyond the one it reads."""
    s3 = S3Options(cache_dir=cache_dir, cache_limit=cache_limit, timeout=timeout, attempts=attempts, shards_ahead=shards_ahead)
    return _loader(
        lambda where, workers: open_location(location, where, workers, version=version, index_channel=index_channel,
                                             input_dir=input_dir, s3=s3),
        batch_size, transform=transform, collate_fn=collate_fn, num_workers=num_workers, seed=seed,
        shuffle_buffer=shuffle_buffer, drop_last=drop_last, placement=placement, input_dir=input_dir, resumable=resumable,
        on_bad_record=on_bad_record, max_bad_ratio=max_bad_ratio)


def _loader(
    open_source: Callable[[Placement, int], RecordSource],
    batch_size: int,
    *,
    transform: Optional[Callable[[ImageRecord], Any]],
    collate_fn: Optional[Callable[[list], Any]],
    num_workers: Optional[int],
    seed: int,
    shuffle_buffer: int,
    drop_last: bool,
    placement: Optional[Placement],
    input_dir: str,
    resumable: bool,
    on_bad_record: str,
    max_bad_ratio: float,
) -> Any:
    """The loader both public builders end in: one worker count for the split and the DataLoader,
    the source `open_source(placement, workers)` opens, its dataset and its DataLoader."""
    workers = sized_workers(input_dir) if num_workers is None else num_workers
    placement = placement or placement_from_env()
    dataset = ShardDataset(open_source(placement, workers), placement=placement, transform=transform,
                           shuffle_buffer=shuffle_buffer, seed=seed, on_bad_record=on_bad_record, max_bad_ratio=max_bad_ratio)
    return make_data_loader(dataset, batch_size, num_workers=workers, collate_fn=collate_fn, drop_last=drop_last,
                            input_dir=input_dir, resumable=resumable)
