"""Which loader path feeds this process (train.py `--loader auto`), from what it has: a GPU or not,
its vCPUs, DALI installed, and what its GPU consumes. Pure Python, so that the rule is tested anywhere.

- cpu:    the workers decode and augment (`CpuTrainTransform`): the GPU does nothing but train.
- hybrid: the workers only decode (about 3.9x the images per core); the GPU crops, resizes, flips
          and normalizes the batch in a few kernels.
- gpu:    the workers only read; the GPU decodes (nvJPEG) and augments: for few vCPUs per GPU.
- dali:   NVIDIA DALI, first choice where it is installed and can read the channel.
The first of cpu, hybrid, gpu whose workers keep up with the GPU wins: each leaves more of the GPU
to training than the next.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

KINDS = ("cpu", "hybrid", "gpu", "dali")
ALIASES = {"pytorch": "cpu", "pytorch-gpu-decode": "gpu"}
"""The names of earlier releases, still accepted."""

CPU_DECODE_AUGMENT_PER_WORKER = 330
"""Samples/s one worker decodes and augments (random resized crop) on ~90 KB JPEGs: 314–350 measured
on the H100 machine's CPUs with one worker (bench/container-gpu, 2026-11)."""
CPU_DECODE_ONLY_PER_WORKER = 1_284
"""Samples/s one core decodes alone on the same JPEGs (bench/loader-cpu's decode-only floor there)."""

GPU_SAMPLES_PER_SECOND = (
    ("H100", 3_284),  # bench/container-gpu's ceiling, ResNet-50 AMP batch 64 (3,284–3,695 on two machines)
    ("A100", 2_470),  # NVIDIA DeepLearningExamples, PyTorch ResNet50 v1.5, 1x A100 80GB, mixed precision
    ("V100", 1_156),  # the same, 1x V100 32GB (1,200 on 16GB)
)
"""What one GPU trains per second (ResNet-50, mixed precision) by a part of its name."""
UNKNOWN_GPU_SAMPLES_PER_SECOND = 2_000


@dataclass(frozen=True)
class LoaderChoice:
    kind: str
    reason: str


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
    decoding_only = max(1, workers) * CPU_DECODE_ONLY_PER_WORKER
    if decoding_only >= demand:
        return LoaderChoice("hybrid", f"{workers} workers decode and augment ~{decoding:.0f} samples/s, less than the "
                                      f"GPU's ~{demand:.0f}; decoding alone they make ~{decoding_only:.0f}: the GPU augments")
    return LoaderChoice("gpu", f"{workers} workers decode only ~{decoding_only:.0f} samples/s, less than the GPU's "
                               f"~{demand:.0f}: the GPU decodes (nvJPEG) and augments")


def requested_kind(name: str) -> str:
    """--loader's value as one of KINDS or 'auto' (an earlier name is mapped)."""
    kind = ALIASES.get(name, name)
    if kind != "auto" and kind not in KINDS:
        raise ValueError(f"--loader {name}: not a loader; use auto, {', '.join(KINDS)}")
    return kind
