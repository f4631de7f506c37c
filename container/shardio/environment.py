"""What SageMaker tells the container, from /opt/ml/input/config (the files exist with or without
the training toolkit, unlike the SM_* variables), and where torchrun-style launchers put a process.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Dict, List, Optional

from .split import Placement

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
    """The job's channels by name."""
    channels = {}
    for name, config in _read_json(input_dir, "inputdataconfig.json").items():
        channels[name] = ChannelConfig(
            name=name,
            input_mode=config.get("TrainingInputMode", "File"),
            host_sharded=config.get("S3DistributionType") == "ShardedByS3Key",
            shuffled="ShuffleConfig" in config,
            record_wrapper=config.get("RecordWrapperType"),
        )
    return channels


def hosts(input_dir: str = INPUT_DIR) -> List[str]:
    """The job's hosts in order (algo-1, algo-2, ...)."""
    return list(_read_json(input_dir, "resourceconfig.json")["hosts"])


def current_host(input_dir: str = INPUT_DIR) -> str:
    return str(_read_json(input_dir, "resourceconfig.json")["current_host"])


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


def sized_workers(input_dir: str = INPUT_DIR) -> int:
    """DataLoader workers per process: the `num_workers` hyperparameter TrainingJob sizes for the
    instance (vCPUs per process − 1, capped by memory); outside a job, this machine's CPUs − 1."""
    value = hyperparameter("num_workers", input_dir=input_dir)
    return int(value) if value is not None else max(1, (os.cpu_count() or 2) - 1)


def sized_dali_threads(input_dir: str = INPUT_DIR) -> int:
    """DALI CPU threads per process: `dali_threads`, which TrainingJob passes with the DALI
    container (the CPU rule without the memory cap: threads share memory), else as many as workers."""
    value = hyperparameter("dali_threads", input_dir=input_dir)
    return int(value) if value is not None else max(1, sized_workers(input_dir))


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
