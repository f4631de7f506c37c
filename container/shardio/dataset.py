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

from .bad_records import DEFAULT_MAX_BAD_RATIO, FAIL, BadRecordGuard, check_policy, take_skipped
from .channels import open_channel
from .dataset_files import PINNED_MANIFEST_ENV
from .environment import INPUT_DIR, placement_from_env, sized_workers
from .layout import version_manifest_key
from .location import open_location
from .s3_dataset import DEFAULT_SHARDS_AHEAD, S3Options
from .s3_objects import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT
from .order import Resumed
from .position import Position, Reader, Restore, make_position, restore
from .records import ImageRecord
from .split import Placement, consumed_records, consumer_of
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
        guard = BadRecordGuard(self.source, on_bad_record=self.on_bad_record, max_bad_ratio=self.max_bad_ratio,
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
    pin = (f"data_loader(..., version=\"{saved}\") or channel_data_loader(..., manifest=\"{key}\"); in a job "
           f"{PINNED_MANIFEST_ENV}={key}, or train.py's --dataset_manifest {key}; the pipeline passes the version's own manifest"
           if saved else "the dataset it started on")
    return (f"the loader's position was saved reading dataset version {saved or 'none (no versioned manifest)'} but this "
            f"loader reads {reading or 'none (no versioned manifest)'}: a position counts records in one version's order, "
            "so on another it would read some records twice and others never. Pin the version the job started on "
            f"({pin}), or start the epoch over (do not restore the position)")


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
    """An EpochLoader for a ShardDataset (a ResumableLoader when `resumable`): `num_workers` from the job's hyperparameter unless given,
    persistent workers (no re-fork and no refilled shuffle buffers per epoch), `prefetch_factor`
    batches in flight per worker, and page-locked memory when a GPU is there (faster, asynchronous
    copies with `tensor.cuda(non_blocking=True)`)."""
    workers = sized_workers(input_dir) if num_workers is None else num_workers
    options: dict = {}
    if workers > 0:
        options = {"persistent_workers": True, "prefetch_factor": prefetch_factor}
    if resumable:
        collate_fn = _TaggedCollate(collate_fn or _default_collate())
    return (ResumableLoader if resumable else EpochLoader)(
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
    check_crc: bool = True,
    samples: bool = False,
) -> Any:
    """The EpochLoader (a ResumableLoader when `resumable`) of a SageMaker channel for this process: each pass is the
    next epoch unless `set_epoch(e)` chose one (in Pipe mode, the epoch names the FIFO: set it every epoch). One
    worker count serves both the split and the DataLoader, so they cannot disagree.
    `manifest` pins the dataset version (see `open_channel`); `on_bad_record` and `max_bad_ratio`: ShardDataset's;
    `check_crc=False` leaves the CRCs unchecked (each TFRecord's, each RecordIO shard's: checked by default);
    `samples`: a multi-part dataset's samples rather than (image, label) records (see `data_loader`)."""
    return _loader(
        lambda where, workers: open_channel(channel, where, workers, index_channel=index_channel, manifest=manifest,
                                            input_dir=input_dir, check_crc=check_crc),
        batch_size, transform=transform, collate_fn=collate_fn, num_workers=num_workers, seed=seed,
        shuffle_buffer=shuffle_buffer, drop_last=drop_last, placement=placement, input_dir=input_dir, resumable=resumable,
        on_bad_record=on_bad_record, max_bad_ratio=max_bad_ratio, samples=samples)


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
    retry_seconds: Optional[float] = None,
    shards_ahead: int = DEFAULT_SHARDS_AHEAD,
    index_channel: Optional[str] = None,
    input_dir: str = INPUT_DIR,
    on_bad_record: str = FAIL,
    max_bad_ratio: float = DEFAULT_MAX_BAD_RATIO,
    check_crc: bool = True,
    samples: bool = False,
) -> Any:
    """The EpochLoader (a ResumableLoader when `resumable`) of the packed dataset at `location`: a
    folder (a path or `file://` URL), `s3://bucket/prefix/` (streamed through a local cache) or
    `sagemaker://<channel>` (location.py), split over this process's ranks and loader workers as
    `channel_data_loader` splits a channel. `version` pins a dataset version by its id; the current
    one by default. An S3 prefix is read as S3Options says (s3_dataset.py): cached at `cache_dir` (a
    folder per dataset under the temporary folder by default), `cache_limit` bytes of shards at most
    (None: no limit); each GET waits `timeout` seconds at most between reads and is tried `attempts`
    times on transient errors (throttling, 5xx, resets, cut bodies), then again until `retry_seconds`
    have passed since its first attempt (None: SHARDIO_S3_RETRY_SECONDS, else 60 s; 0: the attempts
    only; s3_objects.py), and each loader worker fetches `shards_ahead` shards beyond those it reads.
    Every record's CRC is checked as it is read, whatever the source (a RecordIO shard's whole, before
    its first record: shard_crc.py); `check_crc=False` opts out.
    `samples=True` reads a multi-part dataset's samples (samples.py; refused for a dataset without them): each a
    dict of its parts and `__key__`, `__shard__`, `__record__`, `__label__`, decoded by `transform` (by default
    sample_decode.SampleDecoder()) and batched by `collate_fn` (by default collate.collate_samples)."""
    s3 = S3Options(cache_dir=cache_dir, cache_limit=cache_limit, timeout=timeout, attempts=attempts, retry_seconds=retry_seconds,
                   shards_ahead=shards_ahead)
    return _loader(
        lambda where, workers: open_location(location, where, workers, version=version, index_channel=index_channel,
                                             input_dir=input_dir, s3=s3, check_crc=check_crc),
        batch_size, transform=transform, collate_fn=collate_fn, num_workers=num_workers, seed=seed,
        shuffle_buffer=shuffle_buffer, drop_last=drop_last, placement=placement, input_dir=input_dir, resumable=resumable,
        on_bad_record=on_bad_record, max_bad_ratio=max_bad_ratio, samples=samples)


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
    samples: bool = False,
) -> Any:
    """The loader both public builders end in: one worker count for the split and the DataLoader,
    the source `open_source(placement, workers)` opens (in samples mode where `samples`), its dataset and its DataLoader."""
    workers = sized_workers(input_dir) if num_workers is None else num_workers
    placement = placement or placement_from_env()
    source = open_source(placement, workers)
    if samples:
        from .sample_decode import sample_loading  # torchvision's import only where samples are read

        transform, collate_fn = sample_loading(source, transform, collate_fn)
    dataset = ShardDataset(source, placement=placement, transform=transform,
                           shuffle_buffer=shuffle_buffer, seed=seed, on_bad_record=on_bad_record, max_bad_ratio=max_bad_ratio)
    return make_data_loader(dataset, batch_size, num_workers=workers, collate_fn=collate_fn, drop_last=drop_last,
                            input_dir=input_dir, resumable=resumable)
