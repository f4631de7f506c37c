"""A loader's position in an epoch, as `ResumableLoader.state_dict` saves it, and what restoring one
means: the same worker/rank count continues each worker's share where it stopped; another count
replays every consumer's count to find the records already handed out (split.py
`consumed_records`) and splits the rest of the epoch anew.

A position (one per rank, JSON-safe):
- `order`: the ordering algorithm (order.py ORDER); a mid-epoch position of another is refused.
- `epoch`, `seed`, `shuffle_buffer`, `dataset_version`: what the order depends on.
- `rank`, `world_size`, `workers`: who saved it; `yielded`: the records each of this rank's workers
  handed out in the current run.
- `runs`: the earlier runs of the epoch at other counts (`{"consumers", "yielded"}`, every consumer's
  count), the same in every rank's position.
- `sample_in_epoch`: the records of the epoch behind this position: the earlier runs' and this rank's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from .order import ORDER, Run

Position = Dict[str, Any]


@dataclass(frozen=True)
class Reader:
    """What the restoring loader is: its place, its worker count and its order's inputs."""

    rank: int
    world_size: int
    workers: int
    seed: int
    shuffle_buffer: int
    dataset_version: Optional[str]
    host_sharded: bool


@dataclass(frozen=True)
class Restore:
    """Where the epoch starts again: each of this rank's workers skips `yielded[worker]` records of
    its share (same counts), after the records the `runs` consumed."""

    epoch: int
    yielded: List[int]
    runs: List[Run]


def make_position(reader: Reader, epoch: int, yielded: Sequence[int], runs: Sequence[Run]) -> Position:
    earlier = sum(sum(run.yielded) for run in runs)
    return {"order": ORDER, "epoch": epoch, "yielded": list(yielded), "sample_in_epoch": earlier + sum(yielded),
            "workers": reader.workers, "rank": reader.rank, "world_size": reader.world_size, "seed": reader.seed,
            "shuffle_buffer": reader.shuffle_buffer, "dataset_version": reader.dataset_version,
            "runs": [{"consumers": run.consumers, "yielded": list(run.yielded)} for run in runs]}


def restore(saved: Union[Position, Sequence[Position]], reader: Reader,
            version_changed: Callable[[Optional[str], Optional[str]], str]) -> Restore:
    """The restore `saved` (this rank's position, or every rank's) means for `reader`, or a
    ValueError naming why it cannot be: another order, dataset version, seed or buffer mid-epoch, or
    another worker/rank count without every rank's position."""
    states = [saved] if isinstance(saved, dict) else list(saved)
    if not states:
        raise ValueError("load_state_dict: no position given")
    first = states[0]
    runs = [Run(int(run["consumers"]), tuple(run["yielded"])) for run in first.get("runs", [])]
    mid_epoch = bool(runs) or any(sum(state["yielded"]) for state in states)
    if not mid_epoch:
        return Restore(first["epoch"], [0] * reader.workers, [])
    if first.get("order") != ORDER:
        raise ValueError(f"the loader's position was saved mid-epoch by a shardio whose record order is "
                         f"{first.get('order') or 'the contiguous split before the canonical order'}, not {ORDER}: "
                         "its counts name other records here. Start the epoch over (restore the position with its "
                         "yielded counts set to 0) or resume with the shardio that saved it")
    if first.get("dataset_version") != reader.dataset_version:
        raise ValueError(version_changed(first.get("dataset_version"), reader.dataset_version))
    for key in ("seed", "shuffle_buffer"):
        if first.get(key) != getattr(reader, key):
            raise ValueError(f"the loader's position cannot be restored: the record order depends on {key} "
                             f"{first.get(key)} -> {getattr(reader, key)}")
    for state in states[1:]:
        for key in ("order", "epoch", "seed", "shuffle_buffer", "dataset_version", "workers", "world_size", "runs"):
            if state.get(key) != first.get(key):
                raise ValueError(f"the positions given are not of one checkpoint: {key} {first.get(key)} (rank "
                                 f"{first.get('rank')}) but {state.get(key)} (rank {state.get('rank')})")
    if first["workers"] == reader.workers and first["world_size"] == reader.world_size:
        own = [state for state in states if state["rank"] == reader.rank]
        if not own:
            raise ValueError(f"the positions given are of rank(s) {sorted(state['rank'] for state in states)}, "
                             f"not of this rank {reader.rank}: restore each rank's own position")
        return Restore(first["epoch"], list(own[0]["yielded"]), runs)
    if reader.host_sharded:
        raise ValueError(f"the loader's position was saved at {first['world_size']} rank(s) × {first['workers']} "
                         f"worker(s), this loader has {reader.world_size} × {reader.workers}: with ShardedByS3Key each "
                         "host holds only its own shards, so the epoch cannot be split anew; restore it at the same counts")
    by_rank = {state["rank"]: state for state in states}
    missing = [rank for rank in range(first["world_size"]) if rank not in by_rank]
    if missing:
        raise ValueError(f"the loader's position was saved at {first['world_size']} rank(s) × {first['workers']} "
                         f"worker(s), this loader has {reader.world_size} × {reader.workers}: to split the rest of "
                         f"the epoch anew it needs every rank's position, and rank(s) {missing} are missing "
                         "(pass the list of all ranks' positions to load_state_dict)")
    yielded = tuple(count for rank in range(first["world_size"]) for count in by_rank[rank]["yielded"])
    return Restore(first["epoch"], [0] * reader.workers, runs + [Run(first["world_size"] * first["workers"], yielded)])


def epoch_start(position: Position, epoch: int) -> Position:
    """`position` moved to the start of `epoch`: nothing of it read (at an epoch's end, the next one;
    or an epoch to read again from its start)."""
    return dict(position, epoch=epoch, yielded=[0] * len(position.get("yielded", [])), sample_in_epoch=0, runs=[])
