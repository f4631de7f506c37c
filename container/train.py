"""Reference training entry point of cdk-training-io: a torchvision ResNet trained on the packed
shards of a channel, through the PyTorch DataLoader or NVIDIA DALI, on one GPU or many (one process
per GPU, on one host or several). `--loader auto` picks the path that keeps the GPU fed
(shardio/loader_choice.py) and logs why: `cpu` (the workers decode and augment), `hybrid` (the
workers decode, the GPU augments the batch), `gpu` (the GPU decodes with nvJPEG and augments) or
`dali`. Batch n+1 is copied, and for hybrid and gpu augmented, on a CUDA stream of its own while
step n trains (shardio/prefetch.py).

The SageMaker training toolkit runs it (`TrainingCode.reference()`, sagemaker_program=train.py)
with the job's hyperparameters as `--name value`; TrainingJob sizes `num_workers` (and, with the
DALI container, `dali_threads`) for the instance. Per interval, rank 0 prints

    epoch=0 step=100 samples/s=1234.5 data_wait=0.123 loss=2.3456

which TrainingJob's metric definitions publish: a data_wait near 0 means the GPUs never wait for
data; well above 0 means the loader is the bottleneck (more workers, shards, or GPU decoding).
With a validation channel, each epoch ends with `epoch=0 step=500 val_loss=2.3456 val_accuracy=0.4567`.

Checkpoints (shardio/checkpoint.py) go to --checkpoint_dir (/opt/ml/checkpoints, which
CheckpointConfig syncs to S3) every --checkpoint_interval steps, at each epoch's end and on
SIGTERM (a spot interruption or a stop), and a restarted job resumes from the newest. With the
PyTorch loader in File mode it resumes mid-epoch at the exact record (the loader's position is
saved per worker); the DALI and Pipe-mode loaders cannot seek, so they restart the interrupted
epoch from its beginning (the log says so): the records read before the interruption are read again.
A position mid-epoch counts records in the dataset version it was saved on: a job that is not pinned
(--dataset_manifest) reads that version again where its channels hold it (a newer one may have been
published meanwhile); a job that would read another version fails naming both, unless
--on_dataset_change restart_epoch starts the interrupted epoch over on the version it reads.

A record whose image cannot be decoded stops the job with an error that names its shard, index,
input key and dataset version; `--on_bad_record skip` logs and skips such records until a loader
worker has skipped more than --max_bad_ratio of its records in an epoch (shardio/bad_records.py).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import time
from typing import Any, Callable, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchvision
from torch.nn.parallel import DistributedDataParallel

from shardio import PINNED_MANIFEST_ENV, Placement, ShardDirectory, ThroughputMeter, channel_manifest, input_channels
from shardio import interval_line, open_channel
from shardio import placement_from_env, sized_workers, validation_line
from shardio.bad_records import DEFAULT_MAX_BAD_RATIO, FAIL, ON_BAD_RECORD, SKIP
from shardio.checkpoint import CHECKPOINT_DIR, load_checkpoint, newest_checkpoint, newest_loader_position, save_checkpoint
from shardio.dataset import ShardDataset, channel_data_loader, dataset_version_changed, make_data_loader
from shardio.layout import version_manifest_key
from shardio.batch_augment import BatchAugment, GpuJpegDecoder
from shardio.images import CpuDecodeOnly, CpuEvalTransform, CpuTrainTransform, collate_encoded, collate_padded, encoded
from shardio.images import normalize
from shardio.loader_choice import ALIASES, KINDS, LoaderChoice, choose_loader, gpu_demand, requested_kind
from shardio.prefetch import Prefetcher

LOADERS = ("auto", *KINDS, *ALIASES)
DATASET_CHANGES = ("fail", "restart_epoch")
Prepare = Callable[[Any, Any], Tuple[torch.Tensor, torch.Tensor]]


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Train a torchvision ResNet on packed shards")
    parser.add_argument("--arch", default="resnet50", help="a torchvision.models classification model")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max_steps", type=int, default=0, help="stop after this many steps in all (0: every epoch to its end)")
    parser.add_argument("--batch_size", type=int, default=64, help="per process (GPU)")
    parser.add_argument("--lr", type=float, default=0.1, help="for a global batch of 256, scaled linearly")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--weight_decay", type=float, default=1e-4)
    parser.add_argument("--image_size", type=int, default=224)
    parser.add_argument("--num_classes", type=int, default=None, help="default: the dataset manifest's classes")
    parser.add_argument("--loader", choices=LOADERS, default="auto",
                        help="auto: DALI where installed (File-like channel with index files), else the first of "
                             "cpu, hybrid, gpu whose workers keep up with the GPU (the log says why)")
    parser.add_argument("--gpu_samples_per_second", type=float, default=None,
                        help="what this model trains per second on one GPU, for --loader auto (default: ResNet-50's on this GPU)")
    parser.add_argument("--num_workers", type=int, default=None, help="DataLoader workers per process (default: sized)")
    parser.add_argument("--dali_threads", type=int, default=None, help="DALI CPU threads per process (default: sized)")
    parser.add_argument("--channel", default="train")
    parser.add_argument("--index_channel", default=None, help="channel of the index/ prefix (default: 'index' if present)")
    parser.add_argument("--dataset_manifest", default=os.environ.get(PINNED_MANIFEST_ENV),
                        help="the training dataset's version to read: its manifest's key under the dataset root, "
                             f"e.g. versions/v00000002-1a2b3c4d/manifest.json (default: ${PINNED_MANIFEST_ENV}, else the current version)")
    parser.add_argument("--shuffle_buffer", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log_interval", type=int, default=50)
    parser.add_argument("--processes", type=int, default=0, help="processes per host (default: one per GPU, 1 without)")
    parser.add_argument("--amp", type=_boolean, default=True, help="float16 autocast on the GPU")
    parser.add_argument("--master_port", type=int, default=29500)
    parser.add_argument("--input_dir", default=os.environ.get("SM_INPUT_DIR", "/opt/ml/input"))
    parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "/opt/ml/model"))
    parser.add_argument("--validation_channel", default=None, help="evaluated each epoch (default: 'validation' if present; 'none': off)")
    parser.add_argument("--validation_index_channel", default=None,
                        help="the validation dataset's index channel, which holds its manifest in a version's ManifestFile channels "
                             "(default: 'validation_index' if present)")
    parser.add_argument("--checkpoint_dir", default=CHECKPOINT_DIR)
    parser.add_argument("--checkpoint_interval", type=int, default=500, help="steps between checkpoints (0: epoch ends and SIGTERM only)")
    parser.add_argument("--keep_checkpoints", type=int, default=3)
    parser.add_argument("--on_dataset_change", choices=DATASET_CHANGES, default="fail",
                        help="resuming mid-epoch when the channels lack the dataset version the checkpoint was saved on: "
                             "fail, or restart_epoch (read the interrupted epoch again from its start on the version they hold)")
    parser.add_argument("--on_bad_record", choices=ON_BAD_RECORD, default=FAIL,
                        help="a record whose image cannot be decoded: fail (the error names its shard, index, key and dataset "
                             "version), or skip it (logged and counted) until a loader worker skipped more than --max_bad_ratio")
    parser.add_argument("--max_bad_ratio", type=float, default=DEFAULT_MAX_BAD_RATIO,
                        help="with --on_bad_record skip: the fraction of a loader worker's records per epoch it may skip")
    parser.add_argument("--record_log", default=None, help="append the records of each trained batch to <path>.rank-<r> (tests, audits)")
    # The toolkit passes every hyperparameter; the ones this script does not know are not errors.
    args, _unknown = parser.parse_known_args(argv)
    return args


def _boolean(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes")


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    if "LOCAL_RANK" in os.environ:  # started by torchrun: one process per GPU already
        train(args)
        return
    processes = args.processes or max(1, torch.cuda.device_count())
    hosts, host_index = job_hosts(args.input_dir)
    if processes == 1 and len(hosts) == 1:
        train(args)
        return
    context = mp.spawn(_process, args=(args, processes, hosts, host_index), nprocs=processes, join=False)
    # SageMaker signals the toolkit's process tree's root; each training process checkpoints on its own signal.
    signal.signal(signal.SIGTERM, lambda *_: [os.kill(p.pid, signal.SIGTERM) for p in context.processes if p.is_alive()])
    while not context.join():
        pass


def job_hosts(input_dir: str) -> Tuple[List[str], int]:
    """The job's hosts from resourceconfig.json (algo-1, ...) and this one's index; one host outside a job."""
    path = os.path.join(input_dir, "config", "resourceconfig.json")
    if not os.path.exists(path):
        return ["localhost"], 0
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    return list(config["hosts"]), config["hosts"].index(config["current_host"])


def _process(local_rank: int, args: argparse.Namespace, processes: int, hosts: List[str], host_index: int) -> None:
    os.environ.update({
        "RANK": str(host_index * processes + local_rank), "WORLD_SIZE": str(len(hosts) * processes),
        "LOCAL_RANK": str(local_rank), "LOCAL_WORLD_SIZE": str(processes),
        "MASTER_ADDR": hosts[0], "MASTER_PORT": str(args.master_port),
    })
    train(args)


class StopRequest:
    """Set by SIGTERM: the training loop checkpoints after the step it is in and stops."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._request)

    def _request(self, *_: Any) -> None:
        self.requested = True


def train(args: argparse.Namespace) -> None:
    stop = StopRequest()
    placement = placement_from_env()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", placement.local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True
    distributed = placement.world_size > 1
    if distributed:
        dist.init_process_group("nccl" if cuda else "gloo")
    torch.manual_seed(args.seed + placement.rank)

    restart_epoch = read_checkpoint_version(args, placement)
    loader, prepare, description = make_loader(args, placement, device)
    validation = make_validation_loader(args, placement, device)
    model = torchvision.models.__dict__[args.arch](num_classes=num_classes(args))
    model = model.to(device, memory_format=torch.channels_last)
    restored = restore(args, placement, device, model, loader, restart_epoch=restart_epoch)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[device] if cuda else None)
    global_batch = args.batch_size * placement.world_size
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * global_batch / 256, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    trainer = Trainer(model, optimizer, device, amp=args.amp and cuda, ranks=placement.world_size)
    if placement.rank == 0:
        print(f"arch={args.arch} loader={description} batch_size={args.batch_size} ranks={placement.world_size} "
              f"device={device.type}", flush=True)

    first_epoch, step = 0, 0
    if restored is not None:
        first_epoch, step = restored["training"]["epoch"], restored["training"]["step"]
        trainer.load_state_dict(restored["training"])
    checkpoints = Checkpoints(args, placement, trainer, loader)
    started = time.perf_counter()
    for epoch in range(first_epoch, args.epochs):
        # Pipe mode: this job's FIFOs count its own epochs from 0, whatever epoch it resumed at.
        set_epoch(loader, epoch - first_epoch if description.startswith("pipe") else epoch)
        batches = traced(loader, args.record_log, placement.rank) if args.record_log else loader

        def after_step(step: int) -> bool:
            stopping = stop.requested or bool(args.max_steps and step >= args.max_steps)
            if stopping or (args.checkpoint_interval and step % args.checkpoint_interval == 0):
                checkpoints.save(epoch, step)
            return stopping

        step = trainer.epoch(batches, prepare, epoch=epoch, step=step, after_step=after_step,
                             log_interval=args.log_interval, log=placement.rank == 0)
        if stop.requested or (args.max_steps and step >= args.max_steps):
            break
        if distributed:  # ranks may have had a batch more or less: they agree on the step count again
            steps = torch.tensor([step], device=device)
            dist.all_reduce(steps, op=dist.ReduceOp.MAX)
            step = int(steps)
        if validation is not None:
            trainer.validate(validation, prepare_decoded(device), epoch=epoch, step=step, distributed=distributed, log=placement.rank == 0)
        checkpoints.save(epoch + 1, step)
    if stop.requested:
        if placement.rank == 0:
            print(f"stopped by SIGTERM at step={step}, checkpoint saved", flush=True)
        if distributed:
            dist.destroy_process_group()
        return
    if placement.rank == 0:
        print(f"done steps={step} seconds={time.perf_counter() - started:.1f}", flush=True)
        save_model(model, args.model_dir)
    if distributed:
        dist.destroy_process_group()


def read_checkpoint_version(args: argparse.Namespace, placement: Placement) -> bool:
    """Pins (--dataset_manifest) the dataset version the newest checkpoint's loader position was
    saved on, when the job is not pinned and its channel reads another version by default (every
    rank decides alike: they saved the same version). Where the job is to read another version and
    the position is mid-epoch: fails naming both, or, with --on_dataset_change restart_epoch,
    returns True: the epoch is to start over."""
    newest = newest_loader_position(args.checkpoint_dir, placement.world_size, placement.rank)
    if newest is None:
        return False
    step, position = newest
    saved = position.get("dataset_version")
    index_channel = _index_channel(args, input_channels(args.input_dir))
    current = channel_manifest(args.channel, index_channel=index_channel, manifest=args.dataset_manifest,
                               input_dir=args.input_dir)
    reading = current.dataset_version if current is not None else None
    if saved == reading:
        return False
    if saved and not args.dataset_manifest and _holds(args, index_channel, version_manifest_key(saved)):
        args.dataset_manifest = version_manifest_key(saved)
        if placement.rank == 0:
            print(f"reads dataset version {saved}, the one the checkpoint of step {step} was saved on (the channel's current "
                  f"version is {reading})", flush=True)
        return False
    if not position.get("sample_in_epoch"):
        return False  # an epoch's start (or a loader that cannot seek): no record counted, any version will do
    if args.on_dataset_change == "restart_epoch":
        if placement.rank == 0:
            print(f"the checkpoint of step {step} was saved on dataset version {saved}, this job reads {reading}: "
                  f"epoch {position['epoch']} starts over (--on_dataset_change restart_epoch)", flush=True)
        return True
    saved_key = version_manifest_key(saved) if saved else "it"
    remedy = (f"the job is pinned to {args.dataset_manifest}: pin {saved_key} instead" if args.dataset_manifest else
              f"channel {args.channel} does not hold {saved_key}: mount the dataset root or that version's ManifestFile channels")
    raise ValueError(f"cannot resume from {args.checkpoint_dir} step {step}: {dataset_version_changed(saved, reading)}. "
                     f"Here {remedy}, or pass --on_dataset_change restart_epoch")


def _holds(args: argparse.Namespace, index_channel: Optional[str], manifest_key: str) -> bool:
    """Whether the training channel (or its index channel) holds a version's manifest."""
    try:
        return channel_manifest(args.channel, index_channel=index_channel, manifest=manifest_key, input_dir=args.input_dir) is not None
    except FileNotFoundError:
        return False


def restore(args: argparse.Namespace, placement: Placement, device: torch.device, model: torch.nn.Module,
            loader: Any, *, restart_epoch: bool = False) -> Optional[dict]:
    """Loads the newest complete checkpoint into `model` and `loader` (at the start of its epoch when
    `restart_epoch`); None when there is none."""
    step = newest_checkpoint(args.checkpoint_dir, placement.world_size)
    if step is None:
        return None
    restored = load_checkpoint(args.checkpoint_dir, step, placement.rank, device)
    model.load_state_dict(restored["training"]["model"])
    position = restored["loader"]
    if restart_epoch and position.get("yielded") is not None:
        position = dict(position, yielded=[0] * len(position["yielded"]), sample_in_epoch=0)
    exact = getattr(loader, "resumable", False) and position.get("yielded") is not None
    if exact:
        loader.load_state_dict(position)
    if placement.rank == 0:
        where = (f"at record {position.get('sample_in_epoch', 0)} of epoch {position['epoch']} of this rank" if exact
                 else f"at the start of epoch {position['epoch']}: this loader cannot seek, the epoch is read again")
        print(f"resumed from {args.checkpoint_dir} step={step} {where}", flush=True)
    return restored


class Checkpoints:
    """Saves this rank's part of a checkpoint (rank 0: the model, optimizer and scaler)."""

    def __init__(self, args: argparse.Namespace, placement: Placement, trainer: "Trainer", loader: Any) -> None:
        self.args, self.placement, self.trainer, self.loader = args, placement, trainer, loader

    def save(self, epoch: int, step: int) -> None:
        """`epoch` is the one to resume in: the next one at an epoch's end."""
        if getattr(self.loader, "resumable", False):
            position = self.loader.state_dict()
            if position["epoch"] != epoch:  # an epoch's end: the next one from its start
                position.update(epoch=epoch, yielded=[0] * len(position["yielded"]), sample_in_epoch=0)
        else:  # DALI, Pipe: no position within the epoch
            position = {"epoch": epoch}
        training = self.trainer.state_dict(epoch, step) if self.placement.rank == 0 else None
        save_checkpoint(self.args.checkpoint_dir, step, self.placement.rank, training, position,
                        keep=self.args.keep_checkpoints)


def traced(batches: Iterable, path: str, rank: int) -> Iterable:
    """The batches without their record names, which go to `path`.rank-<rank>, one line a batch."""
    with open(f"{path}.rank-{rank}", "a", encoding="utf-8") as log:
        for images, labels, names in batches:
            log.write(" ".join(names) + "\n")
            log.flush()
            yield images, labels


class _Named:
    """A transform that also returns the record's name (--record_log)."""

    def __init__(self, transform: Callable) -> None:
        self.transform = transform

    def __call__(self, record: Any) -> Tuple[Any, Any, str]:
        return (*self.transform(record), record.filename or str(record.record_id))


def num_classes(args: argparse.Namespace) -> int:
    """--num_classes where given, else the training dataset manifest's class count."""
    if args.num_classes is not None:
        return int(args.num_classes)
    index_channel = _index_channel(args, input_channels(args.input_dir))
    manifest = channel_manifest(args.channel, index_channel=index_channel, manifest=args.dataset_manifest,
                                input_dir=args.input_dir)
    if manifest is None:
        raise ValueError(f"--num_classes is not given and channel {args.channel} has no dataset manifest to take it from "
                         f"(looked in the channel{' and ' + index_channel if index_channel else ''}): pass --num_classes")
    if manifest.classes < 1:
        raise ValueError(f"--num_classes is not given and {manifest.path} has no classes (a dataset packed without "
                         "labels): pass --num_classes")
    return manifest.classes


def _index_channel(args: argparse.Namespace, channels: dict) -> Optional[str]:
    return args.index_channel or ("index" if "index" in channels else None)


def make_validation_loader(args: argparse.Namespace, placement: Placement, device: torch.device) -> Optional[Iterable]:
    """The validation channel's batches of this rank, in order, center-cropped; None without one."""
    channels = input_channels(args.input_dir)
    name = args.validation_channel or ("validation" if "validation" in channels else None)
    if name is None or name.lower() == "none":
        return None
    if name not in channels:
        raise ValueError(f"--validation_channel {name}: the job has no such channel (it has {', '.join(sorted(channels))})")
    workers = sized_workers(args.input_dir) if args.num_workers is None else args.num_workers
    index_channel = args.validation_index_channel or ("validation_index" if "validation_index" in channels else None)
    source = open_channel(name, placement, workers, index_channel=index_channel, input_dir=args.input_dir)
    dataset = ShardDataset(source, placement=placement, transform=CpuEvalTransform(args.image_size), shuffle_buffer=0,
                           seed=args.seed, on_bad_record=args.on_bad_record, max_bad_ratio=args.max_bad_ratio)
    return make_data_loader(dataset, args.batch_size, num_workers=workers, input_dir=args.input_dir)


def prepare_decoded(device: torch.device) -> Prepare:
    """For batches decoded on the CPU (the validation loader's, whatever the training loader)."""
    return lambda images, labels: (normalize(images.to(device, non_blocking=True)), labels.to(device, non_blocking=True))


def make_loader(args: argparse.Namespace, placement: Placement, device: torch.device) -> Tuple[Iterable, Prepare, str]:
    """The batches of this process, what turns one into (normalized images, labels) on the device,
    and a description for the log. Every PyTorch path hands over batches already prepared, one
    ahead, by a Prefetcher."""
    channels = input_channels(args.input_dir)
    index_channel = _index_channel(args, channels)
    input_mode = channels[args.channel].input_mode
    workers = sized_workers(args.input_dir) if args.num_workers is None else args.num_workers
    choice = _skippable(_choice(args, input_mode, index_channel, placement, device, workers), args)
    if choice.kind == "dali":
        from shardio.dali import dali_loader

        directory = open_channel(args.channel, placement, 0, index_channel=index_channel, manifest=args.dataset_manifest,
                                 input_dir=args.input_dir)
        loader = dali_loader(directory, args.batch_size, placement=placement, num_threads=args.dali_threads,  # type: ignore[arg-type]
                             seed=args.seed, crop=args.image_size, input_dir=args.input_dir)
        return loader, _prepared, f"dali ({choice.reason})"

    transform, collate, prepare = _path(choice.kind, args, placement, device)
    loader = channel_data_loader(
        args.channel, args.batch_size,
        transform=_Named(transform) if args.record_log else transform, collate_fn=collate,
        index_channel=index_channel, manifest=args.dataset_manifest, num_workers=workers, seed=args.seed,
        shuffle_buffer=args.shuffle_buffer,
        placement=placement, input_dir=args.input_dir, resumable=input_mode != "Pipe",
        on_bad_record=args.on_bad_record, max_bad_ratio=args.max_bad_ratio,
    )
    kind = choice.kind if input_mode != "Pipe" else f"pipe {choice.kind}"
    return Prefetcher(loader, prepare, device), _prepared, f"{kind} workers={workers} ({choice.reason})"


def _prepared(images: Any, labels: Any) -> Tuple[Any, Any]:
    return images, labels


def _path(kind: str, args: argparse.Namespace, placement: Placement, device: torch.device) -> Tuple[Callable, Optional[Callable], Prepare]:
    """(the workers' transform, their collate function, what makes a batch ready on the device) of a path."""
    labels_to = lambda labels: labels.to(device, non_blocking=True)  # noqa: E731
    seed = args.seed + placement.rank
    if kind == "gpu":
        decode = GpuJpegDecoder(args.image_size, device, seed)
        return encoded, collate_encoded, lambda images, labels: (decode(images), labels_to(labels))
    if kind == "hybrid":
        augment = BatchAugment(args.image_size, seed)
        return (CpuDecodeOnly(args.image_size), collate_padded,
                lambda images, labels: (augment(images[0].to(device, non_blocking=True), images[1]), labels_to(labels)))
    return CpuTrainTransform(args.image_size), None, prepare_decoded(device)


def _choice(args: argparse.Namespace, input_mode: str, index_channel: Optional[str], placement: Placement,
            device: torch.device, workers: int) -> LoaderChoice:
    """The loader asked for (DALI without a GPU is an error), or for auto the one that keeps the GPU fed."""
    kind = requested_kind(args.loader)
    if kind != "auto":
        if kind == "dali" and device.type != "cuda":
            raise ValueError(f"--loader {args.loader} needs a GPU; without one use auto, cpu, hybrid or gpu")
        on_cpu = "; no GPU: its batch step runs on the CPU" if kind in ("hybrid", "gpu") and device.type != "cuda" else ""
        return LoaderChoice(kind, f"as asked{on_cpu}")
    cuda = device.type == "cuda"
    return choose_loader(
        has_gpu=cuda, workers=workers,
        dali_usable=cuda and _dali_usable(args, input_mode, index_channel, placement),
        demand=gpu_demand(torch.cuda.get_device_name(device) if cuda else "", args.gpu_samples_per_second),
    )


def _skippable(choice: LoaderChoice, args: argparse.Namespace) -> LoaderChoice:
    """With --on_bad_record skip, a path whose workers decode: gpu and dali decode a batch at once on
    the device, where one bad record fails the batch (auto falls back to hybrid; asked for, an error)."""
    if args.on_bad_record != SKIP or choice.kind not in ("gpu", "dali"):
        return choice
    if requested_kind(args.loader) != "auto":
        raise ValueError(f"--loader {args.loader} decodes on the GPU, a batch at once, so a bad record cannot be skipped: "
                         "with --on_bad_record skip use --loader cpu, hybrid or auto")
    return LoaderChoice("hybrid", f"--on_bad_record skip: the workers decode, so that bad records can be skipped "
                                  f"(auto would have chosen {choice.kind}: {choice.reason})")


def _dali_usable(args: argparse.Namespace, input_mode: str, index_channel: Optional[str], placement: Placement) -> bool:
    """DALI is installed and can read the channel: files (not Pipe) with their indexes."""
    if input_mode == "Pipe" or importlib.util.find_spec("nvidia") is None or importlib.util.find_spec("nvidia.dali") is None:
        return False
    source = open_channel(args.channel, placement, 0, index_channel=index_channel, manifest=args.dataset_manifest,
                          input_dir=args.input_dir)
    return isinstance(source, ShardDirectory) and source.indexed


def set_epoch(loader: Any, epoch: int) -> None:
    """Every loader reshuffles per epoch; a DataLoader through its dataset."""
    (loader.set_epoch if hasattr(loader, "set_epoch") else loader.dataset.set_epoch)(epoch)


class Trainer:
    """Training steps with the time spent waiting for each batch measured."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, device: torch.device, *,
                 amp: bool, ranks: int = 1) -> None:
        self.model, self.optimizer, self.device, self.amp, self.ranks = model, optimizer, device, amp, ranks
        self.criterion = torch.nn.CrossEntropyLoss(ignore_index=-1)  # -1: an unlabeled file
        self.scaler = _grad_scaler(amp)
        self.meter = ThroughputMeter()

    def epoch(self, batches: Iterable, prepare: Prepare, *, epoch: int, step: int, max_steps: int = 0,
              after_step: Optional[Callable[[int], bool]] = None, log_interval: int = 50, log: bool = True) -> int:
        """Trains on every batch (or up to `max_steps` steps in all, or until `after_step(step)`
        returns True); returns the step count reached."""
        self.model.train()
        self.meter.take()  # the interval starts with the epoch
        loss_sum, losses = torch.zeros((), device=self.device), 0
        # Ranks may get a batch more or less (the split is by record): DDP's join lets the ranks that
        # ran out shadow the others' collective calls instead of hanging.
        uneven = self.model.join() if isinstance(self.model, DistributedDataParallel) else contextlib.nullcontext()
        iterator = iter(batches)
        with uneven:
            while not (max_steps and step >= max_steps):
                waiting = time.perf_counter()
                try:
                    images, labels = next(iterator)
                except StopIteration:
                    break
                waited = time.perf_counter() - waiting
                images, labels = prepare(images, labels)
                loss_sum += self.step(images, labels)
                losses += 1
                step += 1
                self.meter.add(len(labels), waited)
                if log and step % log_interval == 0:
                    self.report(epoch, step, float(loss_sum) / losses)
                    loss_sum, losses = torch.zeros((), device=self.device), 0
                if after_step is not None and after_step(step):
                    break
        return step

    def validate(self, batches: Iterable, prepare: Prepare, *, epoch: int, step: int, distributed: bool,
                 log: bool = True) -> Tuple[float, float]:
        """Loss and accuracy over every rank's part of the validation set (unlabeled records left out)."""
        model = self.model.module if isinstance(self.model, DistributedDataParallel) else self.model
        model.eval()
        totals = torch.zeros(3, device=self.device, dtype=torch.float64)  # loss sum, correct, labeled
        with torch.no_grad():
            for images, labels in batches:
                images, labels = prepare(images, labels)
                with torch.autocast("cuda", dtype=torch.float16) if self.amp else contextlib.nullcontext():
                    logits = model(images)
                labeled = labels >= 0
                totals[0] += torch.nn.functional.cross_entropy(logits.float(), labels, ignore_index=-1, reduction="sum")
                totals[1] += (logits.argmax(1)[labeled] == labels[labeled]).sum()
                totals[2] += labeled.sum()
        if distributed:
            dist.all_reduce(totals)
        count = max(1.0, float(totals[2]))
        loss, accuracy = float(totals[0]) / count, float(totals[1]) / count
        if log:
            print(validation_line(epoch, step, loss, accuracy), flush=True)
        return loss, accuracy

    def state_dict(self, epoch: int, step: int) -> dict:
        model = self.model.module if isinstance(self.model, DistributedDataParallel) else self.model
        return {"model": model.state_dict(), "optimizer": self.optimizer.state_dict(), "scaler": self.scaler.state_dict(),
                "epoch": epoch, "step": step}

    def load_state_dict(self, state: dict) -> None:
        """The optimizer and scaler (the model is loaded before DDP wraps it)."""
        self.optimizer.load_state_dict(state["optimizer"])
        self.scaler.load_state_dict(state["scaler"])

    def step(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cuda", dtype=torch.float16) if self.amp else contextlib.nullcontext():
            loss = self.criterion(self.model(images), labels)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()

    def report(self, epoch: int, step: int, loss: float) -> None:
        # Rank 0's rate times the ranks: they step together, and no collective call here (one that
        # a rank which ran out of data would not join).
        interval = self.meter.take()
        print(interval_line(epoch, step, interval.samples_per_second * self.ranks, interval.data_wait_fraction, loss),
              flush=True)


def _grad_scaler(enabled: bool) -> Any:
    # torch.amp.GradScaler("cuda") since PyTorch 2.3, where torch.cuda.amp's is deprecated.
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


def save_model(model: torch.nn.Module, model_dir: str) -> None:
    """The weights to /opt/ml/model, which SageMaker uploads as model.tar.gz."""
    if isinstance(model, DistributedDataParallel):
        model = model.module
    os.makedirs(model_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(model_dir, "model.pt"))


if __name__ == "__main__":
    main()
