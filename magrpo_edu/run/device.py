"""A run's device: the default for its model (`default_device`: the embedded models on the CPU, others on CUDA where
it is available), a given one checked (`resolve_device`), and --help's words for it (`DEVICE_DEFAULT`)."""
from __future__ import annotations

import os

import torch

from .. import distributed
from ..config import SettingsError
from ..models import EMBEDDED, is_embedded


DEVICE_DEFAULT = (f"embedded models ({', '.join(EMBEDDED)}): cpu, where they are fastest (their step is bound by per-token "
                  "overhead; measured slower on a GPU); other models: cuda when available")
"""--help's text for the device a run takes when --device is not given (`default_device`)."""


def default_device(model: str | None = None) -> tuple[str, str]:
    """(device, why) for a run given no device. The embedded models (`models.is_embedded`: the registry's
    `EMBEDDED`) train on the CPU even where CUDA is available: a 3M-parameter model's step is bound by
    the per-token overhead of sampling (one small kernel launch after another), not by arithmetic, so a
    GPU gains nothing while the process holds it (the tiny model's training step: 0.74 s on 2 CPU cores
    in the quick start, docs/cli.md; 0.64 s in a CLI run on an H100; step_speed's tiny LoRA step 0.331 s
    on an H200 against 0.180 s on 2 CPU cores: benchmarks/RESULTS_cuda.md, docs/speed.md). Every other model
    (a hub id, a local folder, smollm2-135m) takes cuda when it is available, else the CPU; `model`
    None (not known) takes cuda when available too. Under torchrun an embedded model's processes
    therefore train on the CPU with gloo (`distributed.init`)."""
    cuda = torch.cuda.is_available()
    if model is not None and is_embedded(model):
        why = f"the default for the embedded {model.strip().lower()} model"
        if cuda:
            why += (", though CUDA is available: its step is bound by per-token overhead, a GPU gains little; "
                    "--device cuda to use it anyway")
        return "cpu", why
    if cuda:
        return "cuda", "the default where CUDA is available" + (" for a model that is not embedded" if model else "")
    return "cpu", "CUDA is not available on this machine"


def resolve_device(device: str | None, model: str | None = None) -> tuple[str, str]:
    """(device, why): `device` as given (checked: a device torch knows, CUDA there, the GPU index on this
    machine), or when None the default for `model` (`default_device`: the embedded models cpu, others
    cuda when available); in a torchrun launch a plain "cuda" becomes each process's own GPU
    (cuda:LOCAL_RANK). Raises SettingsError saying what to give instead."""
    if device is None:
        device, why = default_device(model)
    else:
        why = "as given"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise SettingsError(f"--device {device!r} is not a device torch knows ({exc}); use cpu, cuda or cuda:N.") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise SettingsError(f"--device {device}: CUDA is not available on this machine; use --device cpu "
                                "(or leave --device out: the CPU, here).")
        if dev.index is not None and distributed.launched():
            raise SettingsError(f"--device {device}: under torchrun each process takes its own GPU (cuda:LOCAL_RANK); "
                                "give --device cuda.")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise SettingsError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                                f"cuda:0 to cuda:{torch.cuda.device_count() - 1}.")
    local = distributed.local_device(device)  # in a torchrun launch, plain "cuda" is this process's GPU
    if local != device:
        why += ", this torchrun process's own GPU"
    dev = torch.device(local)
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise SettingsError(f"torchrun started more processes on this machine ({os.environ.get('LOCAL_WORLD_SIZE', '?')}) "
                            f"than it has GPUs ({torch.cuda.device_count()}): each process takes its own GPU, so rank "
                            f"{os.environ.get('LOCAL_RANK')} has none. Use --nproc_per_node={torch.cuda.device_count()} "
                            "(or --device cpu for gloo on the CPU).")
    return local, why
