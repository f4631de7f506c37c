"""What SageMaker tells the container, from /opt/ml/input/config (the files exist with or without
the training toolkit, unlike the SM_* variables), and where torchrun-style launchers put a process.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Dict, List, Optional

from ..epoch.split import Placement

INPUT_DIR = "/opt/ml/input"


@dataclass(frozen=True)
class ChannelConfig:
    """One entry of inputdataconfig.json."""

    name: str
    input_mode: str
    """`File` (also for FastFile and file systems) or `Pipe`."""
    host_sharded: bool
    """ShardedByS3Key: each host gets its own objects."""
    shuffled: bool
    """A ShuffleConfig reorders the objects (every epoch in Pipe mode)."""
    record_wrapper: Optional[str]


def _read_json(input_dir: str, name: str) -> dict:
    path = os.path.join(input_dir, "config", name)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def input_channels(input_dir: str = INPUT_DIR) -> Dict[str, ChannelConfig]:
    """The job's channels by name; outside a SageMaker job (no inputdataconfig.json) a
    FileNotFoundError that says how to read a folder or an S3 prefix instead."""
    try:
        listed = _read_json(input_dir, "inputdataconfig.json")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{os.path.join(input_dir, 'config', 'inputdataconfig.json')}: no SageMaker input configuration, so "
            f"{input_dir} is not a SageMaker job's input folder; to read a packed dataset in a folder or under an S3 "
            "prefix, use shardio.torch.dataset.data_loader('/path/to/dataset') or data_loader('s3://bucket/prefix/')") from None
    channels = {}
    for name, config in listed.items():
        channels[name] = ChannelConfig(
            name=name,
            input_mode=config.get("TrainingInputMode", "File"),
            host_sharded=config.get("S3DistributionType") == "ShardedByS3Key",
            shuffled="ShuffleConfig" in config,
            record_wrapper=config.get("RecordWrapperType"),
        )
    return channels


@dataclass(frozen=True)
class ResourceConfig:
    """resourceconfig.json: the job's hosts and this one."""

    hosts: List[str]
    """In order (algo-1, algo-2, ...)."""
    current_host: str
    instance_type: Optional[str]
    """`current_instance_type` (ml.p4d.24xlarge); None where the file has none."""

    @property
    def host_index(self) -> int:
        return self.hosts.index(self.current_host)


def resource_config(input_dir: str = INPUT_DIR) -> Optional[ResourceConfig]:
    """The job's resourceconfig.json; None outside a SageMaker job (no such file): one host."""
    try:
        config = _read_json(input_dir, "resourceconfig.json")
    except FileNotFoundError:
        return None
    return ResourceConfig(hosts=[str(host) for host in config["hosts"]], current_host=str(config["current_host"]),
                          instance_type=config.get("current_instance_type"))


def _job_resource_config(input_dir: str) -> ResourceConfig:
    config = resource_config(input_dir)
    if config is None:
        raise FileNotFoundError(f"{os.path.join(input_dir, 'config', 'resourceconfig.json')}: no SageMaker resource "
                                "configuration, so this is not a SageMaker job")
    return config


def hosts(input_dir: str = INPUT_DIR) -> List[str]:
    """The job's hosts in order (algo-1, algo-2, ...)."""
    return _job_resource_config(input_dir).hosts


def current_host(input_dir: str = INPUT_DIR) -> str:
    return _job_resource_config(input_dir).current_host


def hyperparameter(name: str, default: Optional[str] = None, input_dir: str = INPUT_DIR) -> Optional[str]:
    """A hyperparameter as the job was given it: SM_HP_<NAME> (toolkit), else hyperparameters.json."""
    value = os.environ.get(f"SM_HP_{name.upper()}")
    if value is not None:
        return value
    try:
        value = _read_json(input_dir, "hyperparameters.json").get(name)
    except FileNotFoundError:
        value = None
    return default if value is None else str(value)


# TrainingInstance.sizeDataLoaders' default budget of one loader worker (lib/instances/private/loader-memory.ts):
# its own copy of the dataset object and two prefetched batches.
DEFAULT_MEMORY_PER_WORKER_BYTES = 2 * 2**30


@dataclass(frozen=True)
class LoaderSizing:
    """Loader workers and DALI threads per process."""

    workers: int
    dali_threads: int


def size_loaders(vcpus: int, memory_bytes: int, processes: int,
                 memory_per_worker_bytes: int = DEFAULT_MEMORY_PER_WORKER_BYTES) -> LoaderSizing:
    """TrainingInstance.sizeDataLoaders' rule: vCPUs per process − 1 (the process needs a core), at
    least 1, with the workers also capped so that workers × memory per worker fit in the memory per
    process; DALI threads share the process's memory, so only the CPU rule. 8 processes on 96 vCPUs
    get 11 workers each, not 95."""
    if processes < 1 or processes > vcpus:
        raise ValueError(f"processes per instance must be between 1 and the {vcpus} vCPUs, got {processes}")
    if memory_bytes <= 0 or memory_per_worker_bytes <= 0:
        raise ValueError(f"memory and memory per worker must be more than 0 bytes, got {memory_bytes} and {memory_per_worker_bytes}")
    by_cpu = max(1, vcpus // processes - 1)
    by_memory = max(1, math.floor(memory_bytes / processes / memory_per_worker_bytes))
    return LoaderSizing(workers=min(by_cpu, by_memory), dali_threads=by_cpu)


def _this_machine(environ: Optional[Dict[str, str]] = None) -> LoaderSizing:
    """The rule on this machine, for this process's local world size; refuses to guess what it cannot read."""
    vcpus = os.cpu_count()
    try:
        memory_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        memory_bytes = 0
    if not vcpus or memory_bytes <= 0:
        raise RuntimeError("cannot size the data loaders: this machine's vCPUs or memory are unknown; "
                           "pass num_workers (TrainingJob sets it as a hyperparameter)")
    return size_loaders(vcpus, memory_bytes, placement_from_env(environ).local_world_size)


def sized_workers(input_dir: str = INPUT_DIR) -> int:
    """DataLoader workers per process: the `num_workers` hyperparameter TrainingJob sizes for the
    instance; outside a job, the same rule on this machine (size_loaders)."""
    value = hyperparameter("num_workers", input_dir=input_dir)
    return int(value) if value is not None else _this_machine().workers


def sized_dali_threads(input_dir: str = INPUT_DIR) -> int:
    """DALI CPU threads per process: `dali_threads`, which TrainingJob passes with the DALI
    container, else as many as `num_workers`; outside a job, the CPU half of the same rule on this machine."""
    value = hyperparameter("dali_threads", input_dir=input_dir) or hyperparameter("num_workers", input_dir=input_dir)
    return int(value) if value is not None else _this_machine().dali_threads


def placement_from_env(environ: Optional[Dict[str, str]] = None) -> Placement:
    """This process's place from RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE (torchrun's
    variables, which train.py sets for the processes it starts); one process when unset."""
    env = os.environ if environ is None else environ
    world_size = int(env.get("WORLD_SIZE", "1"))
    return Placement(
        rank=int(env.get("RANK", "0")),
        world_size=world_size,
        local_rank=int(env.get("LOCAL_RANK", "0")),
        local_world_size=int(env.get("LOCAL_WORLD_SIZE", str(world_size))),
    )
