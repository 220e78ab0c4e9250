"""The precision a model is loaded in.

Precision: with no `dtype`, a model is loaded in its checkpoint's own precision on a GPU, and on a
CPU in bfloat16 only where the CPU computes it (AVX512_BF16 or AMX); elsewhere (AVX2-only CPUs: most
laptops and many cloud machines) torch emulates bfloat16 about 18x slower than float32 (one SmolLM2
forward+backward on 4 x 112 tokens: 96 s vs 5.3 s), so the weights are loaded in float32.
`choose_dtype(device)` says which and why; an explicit `dtype=torch.bfloat16` on such a CPU is
honoured with a warning.
"""
from __future__ import annotations

from typing import Any

import torch


def cpu_computes_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (oneDNN's check: AVX512_BF16 or AMX).
    Where it does not, torch still accepts bfloat16 tensors but emulates the arithmetic, slowly."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # a torch build without oneDNN: treat as emulated
        return False


def choose_dtype(device: str | torch.device | None = None) -> tuple[torch.dtype, str]:
    """(dtype, why): the precision to load weights in on `device` when memory allows either.

    GPU: bfloat16 where the GPU supports it (half the memory, full speed), else float32.
    CPU: bfloat16 only where the CPU computes it natively (`cpu_computes_bf16`); otherwise float32,
    since emulated bfloat16 costs far more time than it saves memory.
    >>> choose_dtype("cpu")[0] in (torch.float32, torch.bfloat16)
    True
    """
    dev = torch.device(device) if device is not None else torch.device("cpu")
    if dev.type == "cuda":
        if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            return torch.bfloat16, "bfloat16: this GPU computes it natively (half the memory of float32)"
        return torch.float32, "float32: this GPU has no native bfloat16"
    if dev.type == "cpu":
        if cpu_computes_bf16():
            return torch.bfloat16, "bfloat16: this CPU computes it natively (AVX512_BF16/AMX), half the memory of float32"
        return torch.float32, ("float32: this CPU has no native bfloat16 (AVX2 only), where torch emulates it "
                               "about 18x slower than float32")
    return torch.float32, f"float32: the safe choice on {dev.type}"


def load_dtype(dtype: Any, device: str | torch.device | None) -> Any:
    """The dtype `load_model` passes to transformers: an explicit one as given (with a warning for
    bfloat16 on a CPU that emulates it); None -> the checkpoint's own ("auto") on a GPU or a
    bf16-capable CPU, float32 on any other CPU."""
    on_cpu = device is None or torch.device(device).type == "cpu"
    if dtype is None:
        return "auto" if not on_cpu or cpu_computes_bf16() else torch.float32
    if on_cpu and dtype in (torch.bfloat16, "bfloat16") and not cpu_computes_bf16():
        import warnings

        warnings.warn("bfloat16 weights on a CPU without native bfloat16 (AVX2 only): torch emulates it, about 18x "
                      "slower than float32 for training. Leave dtype unset (float32 here) unless memory forces bf16; "
                      "magrpo_edu.models.choose_dtype(device) picks for this machine.", stacklevel=3)
    return dtype
