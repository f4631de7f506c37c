"""Checkpoints of train.py in /opt/ml/checkpoints, the folder SageMaker's CheckpointConfig syncs to
S3 while the job runs and restores before a restarted (spot) job starts.

One checkpoint is the files of one step: `step-<n>.pt` (model, optimizer, scaler, epoch, step; rank
0 writes it) and `step-<n>.rank-<r>.json` (the loader's position of rank r; every rank writes its
own, since each host's folder goes to the same S3 prefix). Each file is written to a temporary name
and renamed, so a file that exists is whole; a step is restored only when its model file and the
loader files of every rank of the job that saved it exist (another rank count may restore it:
`load_checkpoint` gives every rank's position). The newest `keep` steps are kept. A loader position records the
dataset version it counts in (`dataset_version`, shardio/torch/dataset.py): a job resumed mid-epoch must
read that version again (train.py pins it).
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import torch

CHECKPOINT_DIR = "/opt/ml/checkpoints"
_MODEL = re.compile(r"^step-(\d+)\.pt$")


def _model_path(directory: str, step: int) -> str:
    return os.path.join(directory, f"step-{step:09d}.pt")


def _loader_path(directory: str, step: int, rank: int) -> str:
    return os.path.join(directory, f"step-{step:09d}.rank-{rank}.json")


def _replace(path: str, write: Any) -> None:
    temporary = f"{path}.tmp-{os.getpid()}"
    write(temporary)
    os.replace(temporary, path)


def save_checkpoint(directory: str, step: int, rank: int, training: Optional[Dict[str, Any]],
                    loader: Dict[str, Any], keep: int = 3) -> None:
    """Writes this rank's part of the checkpoint of `step` (`training` on rank 0, None elsewhere)."""
    os.makedirs(directory, exist_ok=True)

    def write_loader(path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(loader, handle)
            handle.flush()
            os.fsync(handle.fileno())

    _replace(_loader_path(directory, step, rank), write_loader)
    if training is not None:
        _replace(_model_path(directory, step), lambda path: torch.save(training, path))
        for old in checkpoint_steps(directory)[:-keep] if keep > 0 else []:
            for name in os.listdir(directory):
                if name.startswith(f"step-{old:09d}."):
                    os.remove(os.path.join(directory, name))


def checkpoint_steps(directory: str) -> List[int]:
    """The steps with a model file, oldest first."""
    if not os.path.isdir(directory):
        return []
    return sorted(int(m.group(1)) for m in map(_MODEL.match, os.listdir(directory)) if m)


def newest_checkpoint(directory: str, world_size: int) -> Optional[int]:
    """The newest step whose model file and the loader file of every rank of the job that saved it
    exist (its `world_size`, in rank 0's loader file; `world_size`, this job's, where it has none)."""
    for step in reversed(checkpoint_steps(directory)):
        if os.path.exists(_loader_path(directory, step, 0)):
            saved = _loader_position(directory, step, 0).get("world_size", world_size)
            if all(os.path.exists(_loader_path(directory, step, rank)) for rank in range(saved)):
                return step
    return None


def newest_loader_position(directory: str, world_size: int, rank: int) -> Optional[Tuple[int, Dict[str, Any]]]:
    """The newest complete step and this rank's loader position in it (rank 0's where the job that
    saved it had fewer ranks; the model is not loaded); None when there is none."""
    step = newest_checkpoint(directory, world_size)
    return None if step is None else (step, _own_position(directory, step, rank))


def load_checkpoint(directory: str, step: int, rank: int, device: Any) -> Dict[str, Any]:
    """{"training": what rank 0 saved, "loader": this rank's loader position (rank 0's where the job
    that saved it had fewer ranks), "loaders": every saving rank's, in rank order: what a loader at
    another worker or rank count resumes from}."""
    loaders = [_loader_position(directory, step, saved) for saved in range(_saved_ranks(directory, step))]
    return {"training": torch.load(_model_path(directory, step), map_location=device),
            "loader": _own_position(directory, step, rank), "loaders": loaders}


def _saved_ranks(directory: str, step: int) -> int:
    """The rank count of the job that saved a step: its rank 0's `world_size`, else the files there are."""
    files = 0
    while os.path.exists(_loader_path(directory, step, files)):
        files += 1
    return int(_loader_position(directory, step, 0).get("world_size", files)) if files else 0


def _own_position(directory: str, step: int, rank: int) -> Dict[str, Any]:
    own = _loader_path(directory, step, rank)
    return _loader_position(directory, step, rank if os.path.exists(own) else 0)


def _loader_position(directory: str, step: int, rank: int) -> Dict[str, Any]:
    with open(_loader_path(directory, step, rank), encoding="utf-8") as handle:
        return json.load(handle)
