"""How train.py runs its training step (`--precision`, `--compile`), from what the process has: a GPU
or not, its compute capability, bfloat16 support, PyTorch's torch.compile. Pure Python, so that
the rules are tested anywhere, for every GPU generation, on a machine without one.

Precision (auto): bfloat16 without a GradScaler on Ampere and later (compute capability ≥ 8.0: its
range is float32's, no loss scaling, no scaler's host work each step); float16 with the GradScaler
on Volta and Turing (V100 7.0, T4 7.5: no bfloat16 tensor cores); float32 on the CPU.

Compile (auto): on a CUDA GPU with torch.compile (PyTorch ≥ 2), the model is compiled; one process
per host gets mode "reduce-overhead" (CUDA graphs: the whole step replayed with one launch, which
frees the host that eager launching keeps busy; the loader drops the last partial batch so shapes
stay static); several ranks get the default mode (DDP's gradient all-reduce runs between the
compiled graphs, outside any CUDA graph). Eager on the CPU unless asked (`on`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

PRECISIONS = ("auto", "bf16", "fp16", "fp32")
COMPILES = ("auto", "on", "off")
AMPERE = (8, 0)
"""The first compute capability with bfloat16 tensor cores (A100)."""


@dataclass(frozen=True)
class Precision:
    name: str
    """bf16, fp16 or fp32 (no autocast)."""
    scaler: bool
    """Whether the loss is scaled (GradScaler): float16's range needs it, bfloat16's does not."""
    reason: str


@dataclass(frozen=True)
class CompileChoice:
    mode: Optional[str]
    """torch.compile's mode, or None: eager."""
    reason: str

    @property
    def static_shapes(self) -> bool:
        """CUDA graphs replay one shape: the loader must drop a last partial batch."""
        return self.mode == "reduce-overhead"


def choose_precision(requested: str, *, cuda: bool, capability: Optional[Tuple[int, int]] = None,
                     bf16_supported: bool = False, amp: bool = True) -> Precision:
    """`--precision` on this device (`capability` and `bf16_supported` of its GPU; `amp`: the
    earlier --amp flag, whose false means fp32 under auto). Raises ValueError, naming the value and
    what is allowed, for a precision the device cannot run."""
    if requested not in PRECISIONS:
        raise ValueError(f"--precision {requested}: not a precision; use {', '.join(PRECISIONS)}")
    gpu = f"this GPU (compute capability {capability[0]}.{capability[1]})" if capability else "this GPU"
    if requested == "fp32":
        return Precision("fp32", False, "as asked")
    if requested == "fp16":
        if not cuda:
            raise ValueError("--precision fp16 needs a GPU (float16 autocast runs on CUDA); on the CPU use bf16, fp32 or auto")
        return Precision("fp16", True, "as asked, with a GradScaler")
    if requested == "bf16":
        if cuda and not bf16_supported:
            raise ValueError(f"--precision bf16: {gpu} has no bfloat16; use fp16, fp32 or auto")
        return Precision("bf16", False, "as asked" + ("" if cuda else ": CPU autocast"))
    if not cuda:
        return Precision("fp32", False, "no GPU")
    if not amp:
        return Precision("fp32", False, "--amp false")
    if bf16_supported and capability is not None and tuple(capability) >= AMPERE:
        return Precision("bf16", False, f"{gpu} has bfloat16: no GradScaler")
    return Precision("fp16", True, f"{gpu} has no bfloat16 tensor cores: float16 with a GradScaler")


def choose_compile(requested: str, *, cuda: bool, has_compile: bool, torch_version: str, ranks: int = 1) -> CompileChoice:
    """`--compile` here: torch.compile's mode, or eager with the reason."""
    if requested not in COMPILES:
        raise ValueError(f"--compile {requested}: not a choice; use {', '.join(COMPILES)}")
    if requested == "off":
        return CompileChoice(None, "--compile off")
    if not cuda and requested == "auto":
        return CompileChoice(None, "no GPU: eager (--compile on compiles on the CPU too)")
    if not has_compile:
        return CompileChoice(None, f"PyTorch {torch_version} has no torch.compile (PyTorch 2 has): eager")
    if not cuda:
        return CompileChoice("default", "asked for on the CPU: no CUDA graphs")
    if ranks > 1:
        return CompileChoice("default", f"{ranks} ranks: DDP's all-reduce runs between the compiled graphs, no CUDA graphs")
    return CompileChoice("reduce-overhead", "one GPU: CUDA graphs, the last partial batch of an epoch dropped")
