"""Seeded random numbers that leave the caller's own as they were (plumbing)."""
from __future__ import annotations

import contextlib
from typing import Iterator

import torch


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Inside: torch's global generators seeded with `seed` (`torch.manual_seed`, which seeds every device's); after:
    the CPU generator and, where CUDA has been initialised, every CUDA device's generator as they were before
    (`torch.random.fork_rng` over them; `devices=[]` alone would leave the CUDA generators reseeded). Evaluations,
    snapshots and the baselines draw under it, so calling them never changes a training run's random numbers."""
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    with torch.random.fork_rng(devices=list(range(torch.cuda.device_count())) if cuda else []):
        torch.manual_seed(seed)
        yield
