"""Reference training entry point of cdk-training-io: a torchvision ResNet trained on the packed
shards of a channel, through the PyTorch DataLoader or NVIDIA DALI, on one GPU or many (one process
per GPU, on one host or several). `--loader auto` measures, at the job's start and with the job's
own step, each usable path: `cpu` (the workers decode and augment), `gpu` (the GPU decodes with
nvJPEG and augments) and `dali`; it keeps the fastest, logs the table and saves the choice with the
checkpoint (trainer/loader_choice.py). `hybrid` (the workers decode, the GPU augments the batch) is
deprecated, run only when asked. Batch n+1 is copied, and for hybrid and gpu augmented, on a CUDA
stream of its own while step n trains (trainer/prefetch.py). The step runs in `--precision` (auto:
bf16 from Ampere on, fp16 with a GradScaler before) and, on a GPU with PyTorch 2, compiled
(`--compile`: CUDA graphs on one GPU; eager, saying why, wherever compiling fails)
(trainer/step_choice.py).

The SageMaker training toolkit runs it (`TrainingCode.reference()`, sagemaker_program=train.py)
with the job's hyperparameters as `--name value`; TrainingJob sizes `num_workers` (and, with the
DALI container, `dali_threads`) for the instance. Per interval, rank 0 prints

    epoch=0 step=100 samples/s=1234.5 data_wait=0.123 loss=2.3456

which TrainingJob's metric definitions publish: a data_wait near 0 means the GPUs never wait for
data; well above 0 means the loader is the bottleneck (more workers, shards, or GPU decoding).
With a validation channel, each epoch ends with `epoch=0 step=500 val_loss=2.3456 val_accuracy=0.4567`.

Checkpoints (shardio/torch/checkpoint.py) go to --checkpoint_dir (/opt/ml/checkpoints, which
CheckpointConfig syncs to S3) every --checkpoint_interval steps, at each epoch's end and on
SIGTERM (a spot interruption or a stop), and a restarted job resumes from the newest. With the
PyTorch loader in File mode it resumes mid-epoch at the exact record (the loader's position is
saved per worker); the DALI and Pipe-mode loaders cannot seek, so they restart the interrupted
epoch from its beginning (the log says so): the records read before the interruption are read again.
A position mid-epoch counts records in the dataset version it was saved on: a job that is not pinned
(--dataset_manifest) reads that version again where its channels hold it (a newer one may have been
published meanwhile); a job that would read another version fails naming both, unless
--on_dataset_change restart_epoch starts the interrupted epoch over on the version it reads.

Outside a job, `--data` names the dataset instead of a channel: a folder a pack wrote, a `file://`
URL or an `s3://bucket/prefix/` (`shardio.data_loader`), with `--validation_data` for a
validation set; the checkpoints, resumption and metric lines are the same. On a CPU:

    PYTHONPATH=container python3 container/train.py --data ./packed --arch resnet18 --image_size 64 \
        --checkpoint_dir ./checkpoints --model_dir ./model

A record whose image cannot be decoded stops the job with an error that names its shard, index,
input key and dataset version; `--on_bad_record skip` logs and skips such records until a loader
worker has skipped more than --max_bad_ratio of its records in an epoch (shardio/epoch/bad_records.py).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import os
import signal
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchvision
from torch.nn.parallel import DistributedDataParallel

from shardio import LoaderOptions, Placement, Source, ThroughputMeter, interval_line, validation_line
from shardio.catalog.dataset_files import PINNED_MANIFEST_ENV
from shardio.catalog.layout import version_manifest_key
from shardio.epoch.bad_records import DEFAULT_MAX_BAD_RATIO, FAIL, ON_BAD_RECORD, SKIP
from shardio.epoch.metrics import Interval
from shardio.epoch.position import epoch_start
from shardio.source.channels import channel_manifest
from shardio.source.directory import ShardDirectory
from shardio.source.environment import input_channels, placement_from_env, resource_config, sized_workers
from shardio.source.location import CHANNEL_SCHEME
from shardio.torch.batch_augment import BatchAugment, GpuJpegDecoder
from shardio.torch.checkpoint import CHECKPOINT_DIR, load_checkpoint, newest_checkpoint, newest_loader_position, save_checkpoint
from shardio.torch.dataset import data_loader, dataset_version_changed
from shardio.torch.images import CpuDecodeOnly, CpuEvalTransform, CpuTrainTransform, collate_encoded, collate_padded, encoded
from shardio.torch.images import normalize
from trainer.loader_choice import ALIASES, KINDS, TRIAL_SECONDS, TRIAL_WARMUP_STEPS, LoaderChoice, Trial, choice_record, choose_loader
from trainer.loader_choice import gpu_demand, keeps_up_alone, pick, requested_kind, saved_choice, trial_order, trial_table
from trainer.prefetch import Prefetcher
from trainer.step_choice import COMPILES, PRECISIONS, CompileChoice, Precision, choose_compile, choose_precision

LOADERS = ("auto", *KINDS, *ALIASES)
DATASET_CHANGES = ("fail", "restart_epoch")
Prepare = Callable[[Any, Any], Tuple[torch.Tensor, torch.Tensor]]
COMPILED_PREFIX = "_orig_mod."
"""What torch.compile's wrapper puts before each key of the module's state."""


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argument_parser()
    # The toolkit passes every hyperparameter; the ones this script does not know are not errors.
    args, _unknown = parser.parse_known_args(argv)
    if args.record_log:
        # Checked here: the log is opened at the first batch, after loading and the loader trial.
        folder = os.path.dirname(os.path.abspath(args.record_log))
        if not os.path.isdir(folder):
            parser.error(f"--record_log {args.record_log}: folder {folder} does not exist; create it or give a path in an existing folder")
    return args


def argument_parser() -> argparse.ArgumentParser:
    """train.py's flags, each with its help text."""
    parser = argparse.ArgumentParser(description="Train a torchvision ResNet on packed shards")
    parser.add_argument("--arch", default="resnet50", help="a torchvision.models classification model")
    parser.add_argument("--epochs", type=int, default=1, help="passes over the training dataset")
    parser.add_argument("--max_steps", type=int, default=0, help="stop after this many steps in all (0: every epoch to its end)")
    parser.add_argument("--batch_size", type=int, default=64, help="per process (GPU)")
    parser.add_argument("--lr", type=float, default=0.1, help="for a global batch of 256, scaled linearly")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--weight_decay", type=float, default=1e-4, help="SGD weight decay (L2 penalty)")
    parser.add_argument("--image_size", type=int, default=224, help="side in pixels of the square crops the model trains on")
    parser.add_argument("--num_classes", type=int, default=None, help="default: the dataset manifest's classes")
    parser.add_argument("--loader", choices=LOADERS, default="auto",
                        help="auto: on a GPU each usable path (cpu, gpu; dali where installed) is timed with the job's own "
                             "step and the fastest kept (the log has the table); without a GPU, cpu. hybrid: deprecated, never auto's")
    parser.add_argument("--loader_trial_seconds", type=float, default=None,
                        help=f"--loader auto's measurement, all paths together (default: {TRIAL_SECONDS:.0f} on a GPU, 2 %% of an "
                             "hour; 0 on the CPU); 0: the table's guess, unmeasured")
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="auto: bf16 without a GradScaler on GPUs that have it (Ampere+), fp16 with one on V100/T4, fp32 on the CPU")
    parser.add_argument("--compile", choices=COMPILES, default="auto",
                        help="auto: torch.compile on a GPU with PyTorch >= 2 (CUDA graphs on one GPU); any failure: eager, "
                             "the reason logged; on: also on the CPU; off: eager")
    parser.add_argument("--gpu_samples_per_second", type=float, default=None,
                        help="what this model trains per second on one GPU, for --loader auto (default: ResNet-50's on this GPU)")
    parser.add_argument("--num_workers", type=int, default=None, help="DataLoader workers per process (default: sized)")
    parser.add_argument("--dali_threads", type=int, default=None, help="DALI CPU threads per process (default: sized)")
    parser.add_argument("--data", default=None,
                        help="read the dataset here instead of a job's channel: a folder a pack wrote (or file:// URL) or "
                             "s3://bucket/prefix/, as shardio.data_loader reads it (to run outside SageMaker)")
    parser.add_argument("--validation_data", default=None, help="with --data: a validation dataset, evaluated each epoch")
    parser.add_argument("--channel", default="train", help="the SageMaker input channel of the training dataset")
    parser.add_argument("--index_channel", default=None, help="channel of the index/ prefix (default: 'index' if present)")
    parser.add_argument("--dataset_manifest", default=os.environ.get(PINNED_MANIFEST_ENV),
                        help="the training dataset's version to read: its manifest's key under the dataset root, "
                             f"e.g. versions/v00000002-1a2b3c4d/manifest.json (default: ${PINNED_MANIFEST_ENV}, else the current version)")
    parser.add_argument("--shuffle_buffer", type=int, default=1024,
                        help="records each loader worker shuffles among, on top of the packed order (0: the packed order)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the model's initialisation (plus the rank) and of the record shuffle")
    parser.add_argument("--log_interval", type=int, default=50, help="steps between progress lines (throughput, data wait)")
    parser.add_argument("--processes", type=int, default=0, help="processes per host (default: one per GPU, 1 without)")
    parser.add_argument("--amp", type=_boolean, default=True, help="false: fp32 where --precision is auto (the earlier flag)")
    parser.add_argument("--master_port", type=int, default=29500, help="TCP port of the first host's process group rendezvous")
    parser.add_argument("--input_dir", default=os.environ.get("SM_INPUT_DIR", "/opt/ml/input"),
                        help="SageMaker's input folder: channels and resource config (default: $SM_INPUT_DIR, else /opt/ml/input)")
    parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "/opt/ml/model"),
                        help="where the trained model is saved (default: $SM_MODEL_DIR, else /opt/ml/model)")
    parser.add_argument("--validation_channel", default=None, help="evaluated each epoch (default: 'validation' if present; 'none': off)")
    parser.add_argument("--validation_index_channel", default=None,
                        help="the validation dataset's index channel, which holds its manifest in a version's ManifestFile channels "
                             "(default: 'validation_index' if present)")
    parser.add_argument("--checkpoint_dir", default=CHECKPOINT_DIR,
                        help=f"checkpoints, synced to S3 by SageMaker; a restarted job resumes from the newest (default: {CHECKPOINT_DIR})")
    parser.add_argument("--checkpoint_interval", type=int, default=500, help="steps between checkpoints (0: epoch ends and SIGTERM only)")
    parser.add_argument("--keep_checkpoints", type=int, default=3, help="newest checkpoints kept; older ones are deleted")
    parser.add_argument("--on_dataset_change", choices=DATASET_CHANGES, default="fail",
                        help="resuming mid-epoch when the channels lack the dataset version the checkpoint was saved on: "
                             "fail, or restart_epoch (read the interrupted epoch again from its start on the version they hold)")
    parser.add_argument("--on_bad_record", choices=ON_BAD_RECORD, default=FAIL,
                        help="a record whose image cannot be decoded: fail (the error names its shard, index, key and dataset "
                             "version), or skip it (logged and counted) until a loader worker skipped more than --max_bad_ratio")
    parser.add_argument("--max_bad_ratio", type=float, default=DEFAULT_MAX_BAD_RATIO,
                        help="with --on_bad_record skip: the fraction of a loader worker's records per epoch it may skip")
    parser.add_argument("--check_crc", type=_boolean, default=True,
                        help="false: leave the records' CRCs unchecked (each TFRecord's, each RecordIO shard's)")
    parser.add_argument("--record_log", default=None, help="append the records of each trained batch to <path>.rank-<r> (tests, audits)")
    return parser


def _boolean(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes")


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    if "LOCAL_RANK" in os.environ:  # started by torchrun: one process per GPU already
        train(args)
        return
    processes = args.processes or max(1, torch.cuda.device_count())
    config = resource_config(args.input_dir)
    hosts, host_index = (config.hosts, config.host_index) if config else (["localhost"], 0)
    if processes == 1 and len(hosts) == 1:
        train(args)
        return
    context = mp.spawn(_process, args=(args, processes, hosts, host_index), nprocs=processes, join=False)
    # SageMaker signals the toolkit's process tree's root; each training process checkpoints on its own signal.
    signal.signal(signal.SIGTERM, lambda *_: [os.kill(p.pid, signal.SIGTERM) for p in context.processes if p.is_alive()])
    while not context.join():
        pass


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
    precision, compiled = step_choices(args, device, placement.world_size)
    model = torchvision.models.__dict__[args.arch](num_classes=num_classes(args))
    model = model.to(device, memory_format=torch.channels_last)
    # DDP broadcasts rank 0's weights; restore() then loads the same checkpoint on every rank.
    trained = DistributedDataParallel(model, device_ids=[device] if cuda else None) if distributed else model
    global_batch = args.batch_size * placement.world_size
    optimizer = torch.optim.SGD(trained.parameters(), lr=args.lr * global_batch / 256, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    say = (lambda line: print(line, flush=True)) if placement.rank == 0 else (lambda line: None)
    trainer = Trainer(trained, optimizer, device, precision=precision, compiled=compiled, ranks=placement.world_size, log=say)
    say(f"precision={precision.name} ({precision.reason}) compile={compiled.mode or 'off'} ({compiled.reason})")
    choice = loader_choice(args, placement, device, trainer, compiled)
    loader, prepare, description = make_loader(args, placement, device, choice, drop_last=compiled.static_shapes)
    validation = make_validation_loader(args, placement, device)
    restored = restore(args, placement, device, model, loader, restart_epoch=restart_epoch)
    if placement.rank == 0:
        print(f"arch={args.arch} loader={description} batch_size={args.batch_size} ranks={placement.world_size} "
              f"device={device.type}", flush=True)

    first_epoch, step = 0, 0
    if restored is not None:
        first_epoch, step = restored["training"]["epoch"], restored["training"]["step"]
        trainer.load_state_dict(restored["training"])
    checkpoints = Checkpoints(args, placement, trainer, loader, choice_record(choice, machine(args, placement, device)))
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
        save_model(trained, args.model_dir)
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
    current = training_manifest(args, args.dataset_manifest)
    reading = current.dataset_version if current is not None else None
    if saved == reading:
        return False
    if saved and not args.dataset_manifest and _holds(args, version_manifest_key(saved)):
        args.dataset_manifest = version_manifest_key(saved)
        if placement.rank == 0:
            print(f"reads dataset version {saved}, the one the checkpoint of step {step} was saved on (the "
                  f"{'dataset' if args.data else 'channel'}'s current version is {reading})", flush=True)
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
              f"--data {args.data} does not hold {saved_key}" if args.data else
              f"channel {args.channel} does not hold {saved_key}: mount the dataset root or that version's ManifestFile channels")
    raise ValueError(f"cannot resume from {args.checkpoint_dir} step {step}: {dataset_version_changed(saved, reading)}. "
                     f"Here {remedy}, or pass --on_dataset_change restart_epoch")


def _holds(args: argparse.Namespace, manifest_key: str) -> bool:
    """Whether the training data (the channel or its index channel, or --data) holds a version's manifest."""
    try:
        return training_manifest(args, manifest_key) is not None
    except FileNotFoundError:
        return False


def training_manifest(args: argparse.Namespace, manifest_key: Optional[str]) -> Optional[Any]:
    """The manifest of the training dataset (the version `manifest_key` names, else the current one):
    --data's, else the training channel's (or its index channel's); None where there is none."""
    if args.data:
        return getattr(training_source(args, manifest_key).open(placement_from_env(), 0), "manifest", None)
    return channel_manifest(args.channel, index_channel=_index_channel(args), manifest=manifest_key, input_dir=args.input_dir)


def training_source(args: argparse.Namespace, manifest_key: Optional[str]) -> Source:
    """The training dataset, the version `manifest_key` names (else the current one): --data, else the
    training channel with its index channel."""
    location = args.data or f"{CHANNEL_SCHEME}://{args.channel}"
    return Source(location, manifest=manifest_key, index_channel=_index_channel(args), input_dir=args.input_dir,
                  check_crc=args.check_crc)


def restore(args: argparse.Namespace, placement: Placement, device: torch.device, model: torch.nn.Module,
            loader: Any, *, restart_epoch: bool = False) -> Optional[dict]:
    """Loads the newest complete checkpoint into `model` and `loader` (at the start of its epoch when
    `restart_epoch`); None when there is none."""
    step = newest_checkpoint(args.checkpoint_dir, placement.world_size)
    if step is None:
        return None
    restored = load_checkpoint(args.checkpoint_dir, step, placement.rank, device)
    model.load_state_dict(plain_state_dict(restored["training"]["model"]))  # saved compiled or not
    position, positions = restored["loader"], restored["loaders"]
    if restart_epoch and position.get("yielded") is not None:
        position, positions = epoch_start(position, position["epoch"]), [epoch_start(p, p["epoch"]) for p in positions]
    exact = getattr(loader, "resumable", False) and position.get("yielded") is not None
    if exact:  # every rank's position: the loader takes its own, or splits the epoch's rest anew at another count
        loader.load_state_dict(positions)
    if placement.rank == 0:
        where = (f"at record {position.get('sample_in_epoch', 0)} of epoch {position['epoch']} of this rank" if exact
                 else f"at the start of epoch {position['epoch']}: this loader cannot seek, the epoch is read again")
        print(f"resumed from {args.checkpoint_dir} step={step} {where}", flush=True)
    return restored


class Checkpoints:
    """Saves this rank's part of a checkpoint (rank 0: the model, optimizer and scaler)."""

    def __init__(self, args: argparse.Namespace, placement: Placement, trainer: "Trainer", loader: Any,
                 loader_choice: Optional[dict] = None) -> None:
        self.args, self.placement, self.trainer, self.loader = args, placement, trainer, loader
        self.loader_choice = loader_choice
        """--loader auto's measured choice, kept with each position: a restart on this machine reuses it."""

    def save(self, epoch: int, step: int) -> None:
        """`epoch` is the one to resume in: the next one at an epoch's end."""
        if getattr(self.loader, "resumable", False):
            position = self.loader.state_dict()
            if position["epoch"] != epoch:  # an epoch's end: the next one from its start
                position = epoch_start(position, epoch)
        else:  # DALI, Pipe: no position within the epoch
            position = {"epoch": epoch}
        if self.loader_choice is not None:
            position["loader_choice"] = self.loader_choice
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
    manifest = training_manifest(args, args.dataset_manifest)
    if manifest is None:
        index_channel = _index_channel(args)
        where = (f"--data {args.data} has no dataset manifest to take it from" if args.data else
                 f"channel {args.channel} has no dataset manifest to take it from (looked in the channel"
                 f"{' and ' + index_channel if index_channel else ''})")
        raise ValueError(f"--num_classes is not given and {where}: pass --num_classes")
    if manifest.classes < 1:
        raise ValueError(f"--num_classes is not given and {manifest.path} has no classes (a dataset packed without "
                         "labels): pass --num_classes")
    return manifest.classes


def _index_channel(args: argparse.Namespace) -> Optional[str]:
    """The training channel's index channel; none with --data."""
    if args.data:
        return None
    return args.index_channel or ("index" if "index" in input_channels(args.input_dir) else None)


def _input_mode(args: argparse.Namespace) -> str:
    """The training channel's input mode; --data is read as files."""
    return "File" if args.data else input_channels(args.input_dir)[args.channel].input_mode


def make_validation_loader(args: argparse.Namespace, placement: Placement, device: torch.device) -> Optional[Iterable]:
    """The validation channel's (or --validation_data's) batches of this rank, in order, center-cropped; None without one."""
    options = LoaderOptions(transform=CpuEvalTransform(args.image_size), num_workers=args.num_workers, seed=args.seed,
                            shuffle_buffer=0, placement=placement, on_bad_record=args.on_bad_record,
                            max_bad_ratio=args.max_bad_ratio)
    if args.data:
        if not args.validation_data:
            return None
        return data_loader(Source(args.validation_data, input_dir=args.input_dir, check_crc=args.check_crc), args.batch_size, options)
    channels = input_channels(args.input_dir)
    name = args.validation_channel or ("validation" if "validation" in channels else None)
    if name is None or name.lower() == "none":
        return None
    if name not in channels:
        raise ValueError(f"--validation_channel {name}: the job has no such channel (it has {', '.join(sorted(channels))})")
    index_channel = args.validation_index_channel or ("validation_index" if "validation_index" in channels else None)
    source = Source(f"{CHANNEL_SCHEME}://{name}", index_channel=index_channel, input_dir=args.input_dir, check_crc=args.check_crc)
    return data_loader(source, args.batch_size, options)


def prepare_decoded(device: torch.device) -> Prepare:
    """For batches decoded on the CPU (the validation loader's, whatever the training loader)."""
    return lambda images, labels: (normalize(images.to(device, non_blocking=True)), labels.to(device, non_blocking=True))


def make_loader(args: argparse.Namespace, placement: Placement, device: torch.device, choice: LoaderChoice, *,
                drop_last: bool = False) -> Tuple[Iterable, Prepare, str]:
    """The batches of this process on the path `choice` names, what turns one into (normalized
    images, labels) on the device, and a description for the log. Every PyTorch path hands over
    batches already prepared, one ahead, by a Prefetcher. `drop_last`: every batch full (the
    static shapes CUDA graphs replay)."""
    input_mode = _input_mode(args)
    workers = _workers(args)
    if choice.kind == "dali":
        from shardio.dali import dali_loader

        directory = training_source(args, args.dataset_manifest).open(placement, 0)
        loader = dali_loader(directory, args.batch_size, placement=placement, num_threads=args.dali_threads,  # type: ignore[arg-type]
                             seed=args.seed, crop=args.image_size, input_dir=args.input_dir)
        return loader, _prepared, f"dali ({choice.reason})"

    transform, collate, prepare = _path(choice.kind, args, placement, device)
    options = LoaderOptions(
        transform=_Named(transform) if args.record_log else transform, collate_fn=collate, num_workers=workers, seed=args.seed,
        shuffle_buffer=args.shuffle_buffer, drop_last=drop_last, placement=placement, resumable=input_mode != "Pipe",
        on_bad_record=args.on_bad_record, max_bad_ratio=args.max_bad_ratio,
    )
    loader = data_loader(training_source(args, args.dataset_manifest), args.batch_size, options)
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


def _workers(args: argparse.Namespace) -> int:
    return sized_workers(args.input_dir) if args.num_workers is None else args.num_workers


def step_choices(args: argparse.Namespace, device: torch.device, ranks: int) -> Tuple[Precision, CompileChoice]:
    """--precision and --compile on this device (trainer/step_choice.py has the rules)."""
    cuda = device.type == "cuda"
    precision = choose_precision(
        args.precision, cuda=cuda, capability=torch.cuda.get_device_capability(device) if cuda else None,
        bf16_supported=cuda and torch.cuda.is_bf16_supported(), amp=args.amp)
    compiled = choose_compile(args.compile, cuda=cuda, has_compile=hasattr(torch, "compile"), torch_version=torch.__version__,
                              ranks=ranks)
    return precision, compiled


def machine(args: argparse.Namespace, placement: Placement, device: torch.device) -> Dict[str, Any]:
    """What a measured loader choice holds for: a restart that differs in any of these measures again."""
    config = resource_config(args.input_dir)
    instance_type = config.instance_type if config else None
    return {"instance_type": instance_type or os.environ.get("SM_CURRENT_INSTANCE_TYPE"),
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "workers": _workers(args), "ranks": placement.world_size, "arch": args.arch, "batch_size": args.batch_size,
            "image_size": args.image_size, "precision": args.precision, "compile": args.compile}


def loader_choice(args: argparse.Namespace, placement: Placement, device: torch.device, trainer: "Trainer",
                  compiled: CompileChoice) -> LoaderChoice:
    """The loader asked for (DALI without a GPU is an error); for auto the table's guess, then, on a
    GPU (or with --loader_trial_seconds), each usable path measured with the job's own step, unless
    a checkpoint of this machine has the measured choice already."""
    index_channel = _index_channel(args)
    input_mode = _input_mode(args)
    cuda = device.type == "cuda"
    kind = requested_kind(args.loader)
    if kind != "auto":
        if args.on_bad_record == SKIP and kind in ("gpu", "dali"):
            raise ValueError(f"--loader {args.loader} decodes on the GPU, a batch at once, so a bad record cannot be skipped: "
                             "with --on_bad_record skip use --loader cpu, hybrid or auto")
        if kind == "dali" and not cuda:
            raise ValueError(f"--loader {args.loader} needs a GPU; without one use auto, cpu, hybrid or gpu")
        on_cpu = "; no GPU: its batch step runs on the CPU" if kind in ("hybrid", "gpu") and not cuda else ""
        deprecated = "; deprecated: never faster than cpu or gpu where measured (docs/gpu-loaders.md)" if kind == "hybrid" else ""
        return LoaderChoice(kind, f"as asked{on_cpu}{deprecated}")
    dali = cuda and _dali_usable(args, input_mode, index_channel, placement)
    workers = _workers(args)
    prior = choose_loader(has_gpu=cuda, workers=workers, dali_usable=dali,
                          demand=gpu_demand(torch.cuda.get_device_name(device) if cuda else "", args.gpu_samples_per_second))
    if args.on_bad_record == SKIP:  # gpu and dali decode a batch at once: one bad record fails it, unnamed
        guess = "" if prior.kind == "cpu" else f" (the table's guess was {prior.kind}: {prior.reason})"
        return LoaderChoice("cpu", f"--on_bad_record skip: the workers decode, so that bad records can be skipped{guess}")
    seconds = args.loader_trial_seconds if args.loader_trial_seconds is not None else (TRIAL_SECONDS if cuda else 0.0)
    if seconds <= 0:
        return prior
    if input_mode == "Pipe":
        return LoaderChoice(prior.kind, f"{prior.reason}; not measured: a Pipe-mode FIFO is read once")
    newest = newest_loader_position(args.checkpoint_dir, placement.world_size, placement.rank)
    reused = saved_choice(newest[1] if newest else None, machine(args, placement, device))
    if reused is not None:
        return reused
    order = trial_order(prior.kind, ["cpu", "gpu"] + (["dali"] if dali else []))
    say = trainer.log
    say(f"loader auto: measuring {', '.join(order)} for {seconds:.0f} s in all after {TRIAL_WARMUP_STEPS} steps each "
        f"(the table's guess: {prior.kind}, {prior.reason})")
    started = time.perf_counter()
    trials = measure_loaders(
        trainer, order, seconds / len(order), ranks=placement.world_size,
        make=lambda kind: make_loader(args, placement, device, LoaderChoice(kind, "measured"), drop_last=compiled.static_shapes)[:2])
    choice = pick(trials)
    for line in trial_table(trials, choice.kind):
        say(f"loader auto: {line}")
    say(f"loader auto: {choice.kind} in {time.perf_counter() - started:.1f} s ({choice.reason})")
    return choice


def measure_loaders(trainer: "Trainer", order: List[str], seconds: float, *, make: Callable[[str], Tuple[Iterable, Prepare]],
                    ranks: int = 1, warmup: int = TRIAL_WARMUP_STEPS) -> List[Trial]:
    """Each path of `order` (its loader and prepare from `make(kind)`) timed for `seconds` after
    `warmup` steps with the trainer's own step, until one keeps up doing no work on the GPU; the
    model, optimizer, scaler and random state are put back after (bench/container-gpu runs it too).
    With several ranks a path that fails on one rank only leaves the others waiting in its step's
    collectives, as any failed step would."""
    distributed, device = ranks > 1, trainer.device
    snapshot = _snapshot(trainer)
    trials: List[Trial] = []
    try:
        for kind in order:
            try:
                loader, prepare = make(kind)
                batches = _endless(loader)
                try:
                    interval = trainer.measure(batches, prepare, warmup=warmup, seconds=seconds,
                                               agree=lambda stop: _agree(stop, device) if distributed else stop)
                finally:
                    batches.close()  # ends the prefetching thread
                trial = _agreed(Trial(kind, interval.samples_per_second * ranks, interval.data_wait_fraction), device, distributed)
            except Exception as error:  # noqa: BLE001 - one path that cannot run here is not a failed job
                trial = Trial(kind, error=f"{type(error).__name__}: {error}")
            trials.append(trial)
            if keeps_up_alone(trial):
                break
    finally:
        _put_back(trainer, snapshot)
    return trials


def _endless(loader: Any) -> Any:
    """(images, labels) across epochs (a record's name, with --record_log, left out); closing it
    closes the loader's iterator (a Prefetcher's ends its thread)."""
    while True:
        batches = iter(loader)
        try:
            for images, labels, *_ in batches:
                yield images, labels
        finally:
            if hasattr(batches, "close"):
                batches.close()


def _agree(stop: bool, device: torch.device) -> bool:
    """Every rank stops when one does: DDP's steps are collective."""
    flag = torch.tensor([1.0 if stop else 0.0], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def _agreed(trial: Trial, device: torch.device, distributed: bool) -> Trial:
    """Every rank's trial as the slowest rank's: all ranks then pick the same path."""
    if not distributed:
        return trial
    figures = torch.tensor([-trial.samples_per_second, trial.data_wait_fraction], device=device, dtype=torch.float64)
    dist.all_reduce(figures, op=dist.ReduceOp.MAX)
    return Trial(trial.kind, -float(figures[0]), float(figures[1]))


def _snapshot(trainer: "Trainer") -> Dict[str, Any]:
    model = trainer.model.module if isinstance(trainer.model, DistributedDataParallel) else trainer.model
    return {"model": copy.deepcopy(model.state_dict()), "optimizer": copy.deepcopy(trainer.optimizer.state_dict()),
            "scaler": trainer.scaler.state_dict(), "rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}


def _put_back(trainer: "Trainer", snapshot: Dict[str, Any]) -> None:
    """The trainer as before the trial: its weights copied in place (a CUDA graph keeps their addresses)."""
    model = trainer.model.module if isinstance(trainer.model, DistributedDataParallel) else trainer.model
    model.load_state_dict(snapshot["model"])
    trainer.optimizer.load_state_dict(snapshot["optimizer"])
    if snapshot["scaler"]:
        trainer.scaler.load_state_dict(snapshot["scaler"])
    torch.set_rng_state(snapshot["rng"])
    if snapshot["cuda_rng"] is not None:
        torch.cuda.set_rng_state_all(snapshot["cuda_rng"])


def _dali_usable(args: argparse.Namespace, input_mode: str, index_channel: Optional[str], placement: Placement) -> bool:
    """DALI is installed and can read the channel: files (not Pipe) with their indexes."""
    if input_mode == "Pipe" or importlib.util.find_spec("nvidia") is None or importlib.util.find_spec("nvidia.dali") is None:
        return False
    # DALI reads local files: a folder or a channel's, not an S3 prefix streamed through the cache.
    source = training_source(args, args.dataset_manifest).open(placement, 0)
    return type(source) is ShardDirectory and source.indexed


def set_epoch(loader: Any, epoch: int) -> None:
    """Every loader reshuffles per epoch; a DataLoader through its dataset."""
    (loader.set_epoch if hasattr(loader, "set_epoch") else loader.dataset.set_epoch)(epoch)


class Trainer:
    """Training steps with the time spent waiting for each batch measured, in the chosen precision,
    through the compiled model where there is one (any failure of the compiled step, at its first
    call or later, falls back to eager for the rest of the job, saying why)."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, device: torch.device, *,
                 amp: bool = False, precision: Optional[Precision] = None, compiled: Optional[CompileChoice] = None,
                 ranks: int = 1, log: Callable[[str], None] = lambda line: print(line, flush=True),
                 compiler: Optional[Callable[..., Any]] = None) -> None:
        self.model, self.optimizer, self.device, self.ranks, self.log = model, optimizer, device, ranks, log
        # `amp` is the earlier flag: float16 with a GradScaler, as before --precision.
        self.precision = precision or (Precision("fp16", True, "--amp") if amp else Precision("fp32", False, "no amp"))
        self.criterion = torch.nn.CrossEntropyLoss(ignore_index=-1)  # -1: an unlabeled file
        self.scaler = _grad_scaler(self.precision.scaler)
        self.meter = ThroughputMeter()
        self.forward: Callable[..., torch.Tensor] = model
        self.compile_mode = compiled.mode if compiled is not None else None
        self._compiling = False
        if self.compile_mode is not None:
            self._compile(self.compile_mode, compiler or getattr(torch, "compile", None))

    def _compile(self, mode: str, compiler: Optional[Callable[..., Any]]) -> None:
        try:  # torch.compile is lazy: most failures come at the first call, handled in step()
            if compiler is None:
                raise RuntimeError(f"PyTorch {torch.__version__} has no torch.compile")
            self.forward = compiler(self.model, mode=mode)
            self._compiling = True
        except Exception as error:  # noqa: BLE001 - never a failed job: eager instead, with the reason
            self._fall_back(error)

    def _fall_back(self, error: BaseException) -> None:
        self.forward, self.compile_mode, self._compiling = self.model, None, False
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        self.log(f"compile: the compiled step failed ({type(error).__name__}: {reason[:300]}): eager from here on")

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

    def measure(self, batches: Iterable, prepare: Prepare, *, warmup: int, seconds: float,
                agree: Callable[[bool], bool] = lambda stop: stop) -> Interval:
        """Samples/s and data wait of `seconds` of steps after `warmup` unmeasured ones (compilation,
        cudnn's autotuning, the loader's workers starting). `agree` makes every rank stop at the same
        step (DDP's steps are collective). The steps train the model: the caller restores it."""
        started: List[float] = []

        def after_step(step: int) -> bool:
            if step == warmup:
                synchronize(self.device)
                self.meter.take()
                started.append(time.perf_counter())
                return False
            return bool(started) and agree(time.perf_counter() - started[0] >= seconds)

        self.epoch(batches, prepare, epoch=0, step=0, after_step=after_step, log=False)
        synchronize(self.device)
        return self.meter.take()

    def validate(self, batches: Iterable, prepare: Prepare, *, epoch: int, step: int, distributed: bool,
                 log: bool = True) -> Tuple[float, float]:
        """Loss and accuracy over every rank's part of the validation set (unlabeled records left out)."""
        model = self.model.module if isinstance(self.model, DistributedDataParallel) else self.model
        model.eval()
        totals = torch.zeros(3, device=self.device, dtype=torch.float64)  # loss sum, correct, labeled
        with torch.no_grad():
            for images, labels in batches:
                images, labels = prepare(images, labels)
                with self._autocast():
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
        """The format of every release: the eager module's own keys (never a compiled wrapper's
        `_orig_mod.` ones), so a checkpoint loads with --compile on or off."""
        model = self.model.module if isinstance(self.model, DistributedDataParallel) else self.model
        return {"model": plain_state_dict(model.state_dict()), "optimizer": self.optimizer.state_dict(),
                "scaler": self.scaler.state_dict(), "epoch": epoch, "step": step}

    def load_state_dict(self, state: dict) -> None:
        """The optimizer and scaler (the model is loaded by restore()). A scaler saved disabled (bf16,
        fp32) is empty: an fp16 job starts its scale afresh."""
        self.optimizer.load_state_dict(state["optimizer"])
        if state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])

    def step(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.forward is self.model:
            return self._step(self.model, images, labels)
        started = time.perf_counter()
        try:
            if self.compile_mode == "reduce-overhead" and _MARK_CUDA_GRAPH_STEP is not None:
                _MARK_CUDA_GRAPH_STEP()  # a new step: the last one's graph outputs have been read
            loss = self._step(self.forward, images, labels)
            if self._compiling:
                synchronize(self.device)
        except Exception as error:  # noqa: BLE001 - eager instead, the reason logged: never a failed job
            self._fall_back(error)
            self.optimizer.zero_grad(set_to_none=True)
            return self._step(self.model, images, labels)
        if self._compiling:
            self._compiling = False
            self.log(f"compile: torch.compile(mode={self.compile_mode}) compiled the step in {time.perf_counter() - started:.1f} s")
        return loss

    def _step(self, forward: Callable[..., torch.Tensor], images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        with self._autocast():
            loss = self.criterion(forward(images), labels)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()

    def _autocast(self) -> Any:
        if self.precision.name == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=torch.bfloat16 if self.precision.name == "bf16" else torch.float16)

    def report(self, epoch: int, step: int, loss: float) -> None:
        # Rank 0's rate times the ranks: they step together, and no collective call here (one that
        # a rank which ran out of data would not join).
        interval = self.meter.take()
        print(interval_line(epoch, step, interval.samples_per_second * self.ranks, interval.data_wait_fraction, loss),
              flush=True)


_MARK_CUDA_GRAPH_STEP = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
"""torch.compiler.cudagraph_mark_step_begin where this PyTorch has it (2.1 on)."""


def plain_state_dict(state: dict) -> dict:
    """A model's state with a compiled wrapper's `_orig_mod.` prefix taken out of every key."""
    return type(state)((key.replace(COMPILED_PREFIX, ""), value) for key, value in state.items())


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


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
