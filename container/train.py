"""Reference training entry point of cdk-training-io: a torchvision ResNet trained on the packed
shards of a channel, through the PyTorch DataLoader (decoding in its workers, or on the GPU) or
NVIDIA DALI, on one GPU or many (one process per GPU, on one host or several).

The SageMaker training toolkit runs it (`TrainingCode.reference()`, sagemaker_program=train.py)
with the job's hyperparameters as `--name value`; TrainingJob sizes `num_workers` (and, with the
DALI container, `dali_threads`) for the instance. Per interval, rank 0 prints

    epoch=0 step=100 samples/s=1234.5 data_wait=0.123 loss=2.3456

which TrainingJob's metric definitions publish: a data_wait near 0 means the GPUs never wait for
data; well above 0 means the loader is the bottleneck (more workers, shards, or GPU decoding).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import time
from typing import Any, Callable, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchvision
from torch.nn.parallel import DistributedDataParallel

from shardio import Placement, ShardDirectory, ThroughputMeter, input_channels, interval_line, open_channel
from shardio import placement_from_env, sized_workers
from shardio.dataset import channel_data_loader
from shardio.images import CpuTrainTransform, GpuJpegDecoder, collate_encoded, encoded, normalize

LOADERS = ("auto", "pytorch", "pytorch-gpu-decode", "dali")
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
    parser.add_argument("--num_classes", type=int, default=1000)
    parser.add_argument("--loader", choices=LOADERS, default="auto",
                        help="auto: DALI where installed (File-like channel with index files), else pytorch")
    parser.add_argument("--num_workers", type=int, default=None, help="DataLoader workers per process (default: sized)")
    parser.add_argument("--dali_threads", type=int, default=None, help="DALI CPU threads per process (default: sized)")
    parser.add_argument("--channel", default="train")
    parser.add_argument("--index_channel", default=None, help="channel of the index/ prefix (default: 'index' if present)")
    parser.add_argument("--shuffle_buffer", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log_interval", type=int, default=50)
    parser.add_argument("--processes", type=int, default=0, help="processes per host (default: one per GPU, 1 without)")
    parser.add_argument("--amp", type=_boolean, default=True, help="float16 autocast on the GPU")
    parser.add_argument("--master_port", type=int, default=29500)
    parser.add_argument("--input_dir", default=os.environ.get("SM_INPUT_DIR", "/opt/ml/input"))
    parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "/opt/ml/model"))
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
    mp.spawn(_process, args=(args, processes, hosts, host_index), nprocs=processes)


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


def train(args: argparse.Namespace) -> None:
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

    loader, prepare, description = make_loader(args, placement, device)
    model = torchvision.models.__dict__[args.arch](num_classes=args.num_classes)
    model = model.to(device, memory_format=torch.channels_last)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[device] if cuda else None)
    global_batch = args.batch_size * placement.world_size
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * global_batch / 256, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    trainer = Trainer(model, optimizer, device, amp=args.amp and cuda, ranks=placement.world_size)
    if placement.rank == 0:
        print(f"arch={args.arch} loader={description} batch_size={args.batch_size} ranks={placement.world_size} "
              f"device={device.type}", flush=True)

    started, step = time.perf_counter(), 0
    for epoch in range(args.epochs):
        set_epoch(loader, epoch)
        step = trainer.epoch(loader, prepare, epoch=epoch, step=step, max_steps=args.max_steps,
                             log_interval=args.log_interval, log=placement.rank == 0)
        if args.max_steps and step >= args.max_steps:
            break
    if placement.rank == 0:
        print(f"done steps={step} seconds={time.perf_counter() - started:.1f}", flush=True)
        save_model(model, args.model_dir)
    if distributed:
        dist.destroy_process_group()


def make_loader(args: argparse.Namespace, placement: Placement, device: torch.device) -> Tuple[Iterable, Prepare, str]:
    """The batches of this process, what turns one into (normalized images, labels) on the device,
    and a description for the log."""
    channels = input_channels(args.input_dir)
    index_channel = args.index_channel or ("index" if "index" in channels else None)
    kind = args.loader
    if kind in ("auto", "dali"):
        kind = _dali_or_pytorch(args, channels[args.channel].input_mode, index_channel, placement, device)
    if kind == "dali":
        from shardio.dali import dali_loader

        directory = open_channel(args.channel, placement, 0, index_channel=index_channel, input_dir=args.input_dir)
        loader = dali_loader(directory, args.batch_size, placement=placement, num_threads=args.dali_threads,  # type: ignore[arg-type]
                             seed=args.seed, crop=args.image_size, input_dir=args.input_dir)
        return loader, lambda images, labels: (images, labels), "dali"

    workers = sized_workers(args.input_dir) if args.num_workers is None else args.num_workers
    gpu_decode = kind == "pytorch-gpu-decode"
    if gpu_decode and device.type != "cuda":
        raise ValueError("--loader pytorch-gpu-decode needs a GPU")
    loader = channel_data_loader(
        args.channel, args.batch_size,
        transform=encoded if gpu_decode else CpuTrainTransform(args.image_size),
        collate_fn=collate_encoded if gpu_decode else None,
        index_channel=index_channel, num_workers=workers, seed=args.seed, shuffle_buffer=args.shuffle_buffer,
        placement=placement, input_dir=args.input_dir,
    )
    if gpu_decode:
        decode = GpuJpegDecoder(args.image_size, device)
        return loader, lambda images, labels: (decode(images), labels.to(device, non_blocking=True)), f"{kind} workers={workers}"
    return loader, lambda images, labels: (
        normalize(images.to(device, non_blocking=True)), labels.to(device, non_blocking=True)), f"{kind} workers={workers}"


def _dali_or_pytorch(args: argparse.Namespace, input_mode: str, index_channel: Optional[str], placement: Placement,
                     device: torch.device) -> str:
    """DALI when asked or, for auto, where it can run: installed, a GPU, files with their indexes."""
    if args.loader == "dali":
        return "dali"
    if device.type != "cuda" or input_mode == "Pipe" or importlib.util.find_spec("nvidia") is None \
            or importlib.util.find_spec("nvidia.dali") is None:
        return "pytorch"
    source = open_channel(args.channel, placement, 0, index_channel=index_channel, input_dir=args.input_dir)
    return "dali" if isinstance(source, ShardDirectory) and source.indexed else "pytorch"


def set_epoch(loader: Any, epoch: int) -> None:
    """Both loaders reshuffle per epoch; a DataLoader through its dataset."""
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
              log_interval: int = 50, log: bool = True) -> int:
        """Trains on every batch (or up to `max_steps` steps in all); returns the step count reached."""
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
        return step

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
