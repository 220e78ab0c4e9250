"""Data parallel MAGRPO with `torch.distributed`: several processes, each on different prompts.

Launch any script or the CLI with `torchrun` (on GPUs `accelerate launch --multi_gpu` starts
processes the same way, through torchrun's launcher, with the same environment variables; only
torchrun on CPU has been tested here):

    torchrun --nproc_per_node=2 -m magrpo_edu.run.cli train --task tldr --steps 4 --prompts-per-step 2

What each process (rank) does in one optimiser step, with P = config.prompts_per_step prompts per
step over all W processes (P must be a multiple of W):
    1. takes its own P / W prompts: global prompts step*P + rank*P/W ... (`MAGRPOTrainer.prompt_indices`),
       each sampled with the RNG seeded from (seed, global prompt index), as one process would;
    2. runs steps 2-6 of MAGRPO on each of them and adds (1/P) * grad L_i to agent i's gradients;
    3. sums every agent's gradients over the processes (`all_reduce_gradients`), so each one holds the
       gradient of the mean loss over all P prompts, and takes the same AdamW step.
So W processes with P/W prompts each compute the same update as ONE process with P prompts per step
(tests/test_distributed.py checks the weights). Only rank 0 writes: checkpoints, history files,
tracking, the progress bar; every rank holds the same history (the records are gathered; only
step_time is each process's own).

The process group is started from torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, ...) the
first time a trainer needs it: backend "nccl" when the agents are on CUDA, "gloo" on CPU.

Where we deviate from PyTorch's DistributedDataParallel (DDP), and why: we do not wrap the model.
DDP all-reduces inside backward, bucket by bucket, and assumes ONE module trained by ONE loss;
MAGRPO has n agents with n optimisers, often as LoRA adapters on one shared base, and a rollout
that calls `generate`, which DDP wrappers do not forward. One explicit all-reduce of each agent's
trainable gradients after the step's backward passes is the same arithmetic, easy to read, and the
gradients of LoRA adapters are small. The CoMLRL reference code has no data parallelism.
"""
from __future__ import annotations

import datetime
import os
from typing import Any, Sequence

import torch
import torch.distributed as dist


def launched() -> bool:
    """True inside a multi-process launch (torchrun / accelerate launch set WORLD_SIZE > 1)."""
    return launch_world_size() > 1


def init(device: torch.device | str | None = None) -> None:
    """Start the process group from torchrun's environment, once; a no-op outside such a launch.

    Backend: nccl when `device` is CUDA (each rank then uses cuda:LOCAL_RANK), gloo otherwise."""
    if not launched() or not dist.is_available() or dist.is_initialized():
        return
    cuda = device is not None and torch.device(device).type == "cuda"
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    # rank 0 evaluates the untrained agents before the first step while the others wait in a collective:
    # allow an hour (nccl's default is 10 minutes) before the wait counts as a hang
    dist.init_process_group(backend="nccl" if cuda else "gloo", timeout=datetime.timedelta(minutes=60))


def launch_rank() -> int:
    """This process's rank as the launcher set it (RANK), readable before the process group starts."""
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def launch_world_size() -> int:
    """The number of processes the launcher started (WORLD_SIZE), readable before the process group starts."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def rank() -> int:
    """This process's index among all processes (0 outside data parallel)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def world_size() -> int:
    """Number of processes training together (1 outside data parallel)."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def is_main_process() -> bool:
    """Rank 0, the process that writes files (checkpoints, history, tracking)."""
    return rank() == 0


def local_device(device: str | None) -> str | None:
    """A rank's own device in a multi-process launch: plain "cuda" becomes cuda:LOCAL_RANK."""
    if device == "cuda" and launched():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    return device


def shutdown() -> None:
    """End the process group (at the end of a data-parallel command); a no-op otherwise."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


BUCKET = 2**24
"""Elements per collective call (64 MB of fp32): full-model agents are reduced in pieces of this size,
so the flat copy a call needs stays small next to the model (DDP's buckets, 25 MB by default, do the same)."""


def _groups(params: Sequence[torch.nn.Parameter]) -> list[list]:
    """Parameters in buckets of one device and dtype and at most BUCKET elements (a larger tensor alone)."""
    by: dict[tuple, list] = {}
    for p in params:
        by.setdefault((p.device, p.dtype), []).append(p)
    buckets = []
    for same in by.values():
        bucket, size = [], 0
        for p in same:
            if bucket and size + p.numel() > BUCKET:
                buckets.append(bucket)
                bucket, size = [], 0
            bucket.append(p)
            size += p.numel()
        buckets.append(bucket)
    return buckets


def broadcast_parameters(agents: Sequence[Any]) -> None:
    """Give every rank rank 0's trainable weights (as DDP does when it wraps a model), so that
    randomly initialised adapters start equal everywhere."""
    if world_size() == 1:
        return
    with torch.no_grad():
        for a in agents:
            for params in _groups(a.trainable_parameters()):
                flat = torch.cat([p.detach().reshape(-1) for p in params])
                dist.broadcast(flat, src=0)
                _unflatten_into(flat, params, lambda p: p.data)


def all_reduce_gradients(agents: Sequence[Any]) -> None:
    """Step 7's data-parallel half: SUM each agent's trainable gradients over the ranks.

    Each rank has already weighted its prompts' losses by 1/P (P = prompts over all ranks), so the
    sum is the gradient of the mean loss over the step's P prompts. One flat tensor per bucket of an
    agent's parameters (one call for a LoRA adapter). A parameter without a gradient on some rank
    counts as 0 there and then gets AdamW's step with the summed gradient, where one process would
    skip it; MAGRPO's losses reach every trainable parameter, so this does not arise in our agents."""
    if world_size() == 1:
        return
    for a in agents:
        for params in _groups(a.trainable_parameters()):
            for p in params:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
            flat = torch.cat([p.grad.reshape(-1) for p in params])
            dist.all_reduce(flat, op=dist.ReduceOp.SUM)
            _unflatten_into(flat, params, lambda p: p.grad)


def _unflatten_into(flat: torch.Tensor, params, target) -> None:
    offset = 0
    for p in params:
        n = p.numel()
        target(p).copy_(flat[offset: offset + n].view_as(p))
        offset += n


def gather(obj: Any) -> list:
    """Every rank's `obj` in rank order (a one-element list outside data parallel)."""
    if world_size() == 1:
        return [obj]
    out: list = [None] * world_size()
    dist.all_gather_object(out, obj)
    return out


def broadcast(obj: Any) -> Any:
    """Rank 0's `obj` on every rank."""
    if world_size() == 1:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]
