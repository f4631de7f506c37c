"""Which loader path feeds this process (train.py `--loader auto`). Pure Python, so that the rules
are tested anywhere.

- cpu:    the workers decode and augment (`CpuTrainTransform`): the GPU does nothing but train.
- hybrid: the workers only decode; the GPU crops, resizes, flips and normalizes the padded batch.
          Never chosen by auto nor advised by the planner: its workers ship full-size padded uint8
          batches (58 MB for 64 images of ~470 x 638) through shared memory, and it measured slowest
          or second slowest at 4, 8 and 16 vCPUs on an H200 (issue #31). Kept runnable for
          `--loader hybrid`, deprecated, so that the bench can show where it stands.
- gpu:    the workers only read; the GPU decodes (nvJPEG) and augments: for few vCPUs per GPU.
- dali:   NVIDIA DALI, where it is installed and can read the channel.

`choose_loader` is the table's guess (the prior): cpu where its workers keep up with what the GPU
trains, else gpu; DALI where usable. On a GPU, auto then MEASURES (train.py): each usable path runs
the job's own step for a few seconds, in the prior's order, and the fastest wins (`pick`); a path
that keeps up doing no work on the GPU (cpu with no data wait) ends the trial early, since no other
path can beat a GPU that only trains. Per-worker rates differ by machine (lib/contract/decoding-rates.ts
says by how much): no table chooses right everywhere.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

KINDS = ("cpu", "hybrid", "gpu", "dali")
ALIASES = {"pytorch": "cpu", "pytorch-gpu-decode": "gpu"}
"""The names of earlier releases, still accepted."""

CPU_DECODE_AUGMENT_PER_WORKER = 330
"""Samples/s one worker decodes and augments (random resized crop) on JPEGs of DECODE_RATE_SAMPLE_BYTES:
a copy of the decoding-rate table, lib/contract/decoding-rates.ts (its sources there; the planner
reads the same figure, test/planning/decoding-rate-table.test.ts checks the copy)."""
DECODE_RATE_SAMPLE_BYTES = 90_000
"""The mean JPEG size of that figure (the table's DECODE_RATE_SAMPLE_BYTES)."""

GPU_SAMPLES_PER_SECOND = (
    ("H200", 2_330),  # bench/container-gpu's eager ceiling (2,177–2,330, 2026-11-27), the planner's eager figure; compiled: 5,531
    ("H100", 3_284),  # bench/container-gpu's ceiling, ResNet-50 AMP batch 64 (3,284–3,695 on two machines)
    ("A100", 2_470),  # NVIDIA DeepLearningExamples, PyTorch ResNet50 v1.5, 1x A100 80GB, mixed precision
    ("V100", 1_156),  # the same, 1x V100 32GB (1,200 on 16GB)
)
"""What one GPU trains per second (ResNet-50, mixed precision, the eager step) by a part of its name:
the prior of `--loader auto`'s trial, and its choice where nothing is measured."""
UNKNOWN_GPU_SAMPLES_PER_SECOND = 2_000


TRIAL_SECONDS = 72.0
"""--loader_trial_seconds' default on a GPU: 2 % of a one-hour job, shared by the candidates (the
warm-up steps before each, and the step's compilation, which training pays anyway, not counted)."""
TRIAL_WARMUP_STEPS = 10
"""Steps before each candidate's measurement: its workers start, the step compiles, cudnn tunes."""
REUSED = "measured before on this machine, saved with the checkpoint: "
KEEPS_UP = 0.02
"""A data wait at most this fraction of the step time: the loader keeps up."""


@dataclass(frozen=True)
class Trial:
    """One candidate's measurement: samples/s and data wait, or why it could not run."""

    kind: str
    samples_per_second: float = 0.0
    data_wait_fraction: float = 0.0
    error: Optional[str] = None

    def as_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "samples_per_second": round(self.samples_per_second, 1),
                "data_wait_fraction": round(self.data_wait_fraction, 4), "error": self.error}


@dataclass(frozen=True)
class LoaderChoice:
    kind: str
    reason: str
    trials: Tuple[Trial, ...] = field(default=())
    """What was measured for this choice (empty: the table's or as asked)."""


def gpu_demand(device_name: str, given: Optional[float] = None) -> float:
    """Samples/s this GPU consumes: `given` (--gpu_samples_per_second) else the table's figure."""
    if given:
        return float(given)
    for part, rate in GPU_SAMPLES_PER_SECOND:
        if part in device_name:
            return float(rate)
    return float(UNKNOWN_GPU_SAMPLES_PER_SECOND)


def choose_loader(*, has_gpu: bool, workers: int, dali_usable: bool, demand: float) -> LoaderChoice:
    """The path for `--loader auto`, with the reason train.py logs."""
    if not has_gpu:
        return LoaderChoice("cpu", "no GPU: the workers decode and augment")
    if dali_usable:
        return LoaderChoice("dali", "NVIDIA DALI is installed and the channel has index files")
    decoding = max(1, workers) * CPU_DECODE_AUGMENT_PER_WORKER
    if decoding >= demand:
        return LoaderChoice("cpu", f"{workers} workers decode and augment ~{decoding:.0f} samples/s, "
                                   f"enough for the GPU's ~{demand:.0f}")
    return LoaderChoice("gpu", f"{workers} workers decode and augment ~{decoding:.0f} samples/s, less than the GPU's "
                               f"~{demand:.0f}: the GPU decodes (nvJPEG) and augments")


def trial_order(prior: str, usable: Sequence[str]) -> List[str]:
    """The usable paths to measure, the prior's pick first, then KINDS' order (hybrid never)."""
    kinds = [kind for kind in KINDS if kind in usable and kind != "hybrid"]
    return sorted(kinds, key=lambda kind: (kind != prior, KINDS.index(kind)))


def keeps_up_alone(trial: Trial) -> bool:
    """The cpu path with (almost) no data wait: the GPU only trains and never waits, so no other
    path can be faster; the trial ends there."""
    return trial.kind == "cpu" and trial.error is None and trial.samples_per_second > 0 and trial.data_wait_fraction <= KEEPS_UP


def pick(trials: Sequence[Trial]) -> LoaderChoice:
    """The fastest measured path, with why it won. Raises RuntimeError naming each path's failure
    where none ran."""
    ran = [trial for trial in trials if trial.error is None and trial.samples_per_second > 0]
    if not ran:
        raise RuntimeError("--loader auto: no loader path could run: "
                           + "; ".join(f"{trial.kind}: {trial.error or 'no step measured'}" for trial in trials))
    best = max(ran, key=lambda trial: trial.samples_per_second)
    others = [trial for trial in ran if trial is not best]
    if keeps_up_alone(best) and not others:
        why = (f"cpu keeps the GPU fed doing no work on it (data wait {best.data_wait_fraction:.3f} <= {KEEPS_UP}): "
               "no other path can be faster, none other measured")
    elif others:
        runner_up = max(others, key=lambda trial: trial.samples_per_second)
        why = (f"{best.samples_per_second / runner_up.samples_per_second:.2f}x {runner_up.kind}'s "
               f"{runner_up.samples_per_second:.0f} samples/s (data wait {runner_up.data_wait_fraction:.3f})")
    else:
        why = "the only path that ran"
    failed = [f"{trial.kind} failed: {trial.error}" for trial in trials if trial.error is not None]
    reason = (f"measured: {best.kind} {best.samples_per_second:.0f} samples/s (data wait {best.data_wait_fraction:.3f}), "
              + why + "".join(f"; {line}" for line in failed))
    return LoaderChoice(best.kind, reason, tuple(trials))


def trial_table(trials: Sequence[Trial], winner: str) -> List[str]:
    """The log's table of every candidate, the winner marked."""
    lines = [f"{'loader':<8} {'samples/s':>10} {'data wait':>10}"]
    for trial in trials:
        if trial.error is not None:
            lines.append(f"{trial.kind:<8} {'-':>10} {'-':>10}  failed: {trial.error}")
        else:
            mark = "  <- chosen" if trial.kind == winner else ""
            lines.append(f"{trial.kind:<8} {trial.samples_per_second:>10.1f} {trial.data_wait_fraction:>10.3f}{mark}")
    return lines


def saved_choice(position: Optional[Dict[str, Any]], machine: Dict[str, Any]) -> Optional[LoaderChoice]:
    """The choice a checkpoint's loader position recorded (train.py saves it as `loader_choice`),
    where it was measured on the same machine (instance type, GPU, workers, ranks, model, batch);
    None otherwise: measure again."""
    record = (position or {}).get("loader_choice")
    if not record or record.get("machine") != machine:
        return None
    trials = tuple(Trial(t["kind"], t["samples_per_second"], t["data_wait_fraction"], t.get("error")) for t in record["trials"])
    return LoaderChoice(record["kind"], REUSED + record["reason"], trials)


def choice_record(choice: LoaderChoice, machine: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """What a checkpoint keeps of a measured choice (None for one that was not measured)."""
    if not choice.trials:
        return None
    return {"kind": choice.kind, "reason": choice.reason.removeprefix(REUSED), "machine": machine, "trials": [trial.as_dict() for trial in choice.trials]}


def requested_kind(name: str) -> str:
    """--loader's value as one of KINDS or 'auto' (an earlier name is mapped)."""
    kind = ALIASES.get(name, name)
    if kind != "auto" and kind not in KINDS:
        raise ValueError(f"--loader {name}: not a loader; use auto, {', '.join(KINDS)}")
    return kind
