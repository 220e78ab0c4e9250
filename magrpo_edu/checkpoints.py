"""A trainer's checkpoints: writing them atomically, reading them back safely, finding them.

A checkpoint is a folder: config.json (the MAGRPOConfig), agents/ (peft adapters or full models,
loadable with from_pretrained), trainer_state.pt (tensors only: trainable weights, AdamW states,
torch RNG states; loaded with torch.load(weights_only=True), so a crafted file cannot run code)
and trainer_state.json (step, history, the records pending for the next logged average, eval
history, samples, Python RNG state, `metadata`). Resuming reproduces the uninterrupted run's
weights and history exactly: every step re-seeds the RNGs from (seed, step) and the pending
records travel with the checkpoint.

`save_checkpoint` is atomic: it writes a temporary folder beside the target and renames it into
place; the previous checkpoint is moved aside (.<name>.previous) only once the new one is complete
and deleted after the swap, so a crash at any moment leaves the old or the new checkpoint intact
(`find_checkpoint` falls back to .<name>.previous when the swap itself was cut short).
`MAGRPOTrainer.save`, `load_checkpoint` and `load` are these functions on the trainer.
"""
from __future__ import annotations

import glob
import json
import os
import pickle
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

from . import distributed


def save_checkpoint(trainer, directory: str | Path) -> Path:
    """Write `trainer`'s checkpoint atomically: config, agents (peft adapters or full models), optimiser and
    RNG states, history, pending records, samples and `metadata` (layout: this module's docstring).

    Everything is written to a temporary folder beside `directory` first; only then is the old
    checkpoint moved aside and the new one renamed into place, so a crash at any point leaves
    the old or the new checkpoint complete. `directory` must be new, empty or a checkpoint.
    In a data-parallel run only the main process (rank 0) writes; the others return at once."""
    if not distributed.is_main_process():
        return Path(directory)
    if trainer.torn_step is not None:
        raise RuntimeError(
            f"not saving: training was interrupted inside step {trainer.torn_step}'s update, so the agents' weights "
            "are part-way between two steps and a checkpoint would not resume exactly. Resume from the last "
            "checkpoint instead (load_checkpoint also clears this).")
    d = Path(directory)
    if d.exists() and (not d.is_dir() or (any(d.iterdir()) and not _is_checkpoint(d))):
        raise ValueError(f"{d} exists and is not a checkpoint folder; save() replaces the whole folder, so give "
                         "a new or empty folder (or an earlier checkpoint's).")
    d.parent.mkdir(parents=True, exist_ok=True)
    for stale in d.parent.glob(glob.escape(f".{d.name}.tmp-") + "*"):  # left by a save that was killed
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.tmp-", dir=d.parent))
    try:
        _write(trainer, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    previous = _previous_path(d)
    if d.exists():
        if previous.exists():  # d is complete (it only ever arrives by rename), so the older copy can go
            shutil.rmtree(previous)
        os.rename(d, previous)
    os.rename(tmp, d)  # from here on the new checkpoint is in place
    _fsync(d.parent)
    shutil.rmtree(previous, ignore_errors=True)
    return d


def _write(trainer, d: Path) -> None:
    (d / "config.json").write_text(json.dumps(trainer.config.to_dict(), indent=2))
    saved_models = set()
    for a in trainer.agents:
        if id(a.model) in saved_models:
            continue
        saved_models.add(id(a.model))
        target = d / "agents" if a.adapter else d / "agents" / a.name
        a.model.save_pretrained(target)
        a.tokenizer.save_pretrained(target)
    tensors = dict(agents={a.name: {k: v.detach().cpu().clone() for k, v in a.named_trainable_state().items()}
                           for a in trainer.agents},
                   optimizers=[o.state_dict() for o in trainer.optimizers],
                   rng=dict(torch=torch.get_rng_state(),
                            cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None))
    torch.save(tensors, d / "trainer_state.pt")
    version, internal, gauss = random.getstate()
    state = dict(format=2, **trainer.progress_state(), python_rng=[version, list(internal), gauss])
    try:
        text = json.dumps(state)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot save the trainer state as JSON ({exc}): history, samples and metadata must hold "
                         "only numbers, strings, lists and dicts.") from exc
    (d / "trainer_state.json").write_text(text)
    for f in d.rglob("*"):
        if f.is_file():
            _fsync(f)


def load_checkpoint(trainer, directory: str | Path) -> Any:
    """Restore a checkpoint written by `save_checkpoint` into `trainer` (same agents' architecture); returns it.

    trainer_state.pt is read with torch.load(weights_only=True): a file holding anything but
    tensors and plain values is refused, never executed. Nothing changes when a check fails."""
    d = find_checkpoint(directory)
    tensors = _load_tensors(d / "trainer_state.pt")
    state = _read_state(d)
    if not isinstance(tensors.get("agents"), dict) or not isinstance(tensors.get("optimizers"), list):
        raise ValueError(f"{d / 'trainer_state.pt'} is not a MAGRPOTrainer checkpoint (no agents/optimizers).")
    for a in trainer.agents:
        if a.name not in tensors["agents"]:
            raise ValueError(f"checkpoint {d} has no agent named {a.name!r} (it has {sorted(tensors['agents'])}).")
        if tensors["agents"][a.name].keys() != a.named_trainable_state().keys():
            raise ValueError(f"checkpoint {d}: agent {a.name}'s parameters do not match this agent's "
                             "(different model or adapter settings).")
    if len(tensors["optimizers"]) != len(trainer.optimizers):
        raise ValueError(f"checkpoint {d} has {len(tensors['optimizers'])} optimiser states for {len(trainer.optimizers)} agents.")
    for a in trainer.agents:
        saved = tensors["agents"][a.name]
        with torch.no_grad():
            for k, p in a.named_trainable_state().items():
                p.copy_(saved[k].to(p.device, p.dtype))
    for o, s in zip(trainer.optimizers, tensors["optimizers"]):
        o.load_state_dict(s)
    trainer.restore_progress(state)
    torch.set_rng_state(tensors["rng"]["torch"])
    if tensors["rng"].get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(tensors["rng"]["cuda"])
    version, internal, gauss = state["python_rng"]
    random.setstate((version, tuple(internal), gauss))
    return trainer


def _previous_path(d: Path) -> Path:
    return d.parent / f".{d.name}.previous"


def _is_checkpoint(d: Path) -> bool:
    return (d / "trainer_state.pt").is_file()


def _fsync(path: Path) -> None:
    """Flush a file (or a folder's entries) to disk, so a power cut cannot reorder the writes."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems (and Windows folders) do not support it
    finally:
        os.close(fd)


def find_checkpoint(directory: str | Path) -> Path:
    """The complete checkpoint folder for `directory`: itself, or the previous checkpoint that
    `save` had moved aside (.<name>.previous) when a crash cut the final swap short."""
    d = Path(directory)
    if _is_checkpoint(d):
        return d
    previous = _previous_path(d)
    if not d.exists() and _is_checkpoint(previous):
        print(f"note: {d} is missing because a save was cut short; using the previous checkpoint {previous}.",
              file=sys.stderr)
        return previous
    raise FileNotFoundError(f"{d / 'trainer_state.pt'} not found: is {d} a folder written by MAGRPOTrainer.save()?")


def checkpoint_info(directory: str | Path) -> dict:
    """What a checkpoint holds apart from tensors: {'path', 'config', 'step', 'history', 'metadata', ...}
    read from its JSON files only (cheap; no weights are loaded)."""
    d = find_checkpoint(directory)
    info = _read_state(d)
    info["config"] = saved_config(d)
    info["path"] = d
    return info


def saved_config(directory: str | Path) -> dict:
    """The MAGRPOConfig fields a checkpoint was written with (its config.json), read alone: a missing or damaged file
    raises ValueError saying so."""
    f = Path(directory) / "config.json"
    try:
        return json.loads(f.read_text())
    except FileNotFoundError:
        raise ValueError(f"{f} is missing: {f.parent} is not a complete checkpoint. Use another checkpoint.") from None
    except ValueError as exc:
        raise ValueError(f"cannot read {f}: it is not valid JSON ({exc}); the checkpoint is damaged. "
                         "Use another checkpoint.") from None


def check_checkpoint(directory: str | Path) -> dict:
    """`checkpoint_info`, and trainer_state.pt opened (memory-mapped, so cheap for any size) to be sure
    it is complete: a damaged file raises ValueError naming it before any model is loaded."""
    info = checkpoint_info(directory)
    _load_tensors(info["path"] / "trainer_state.pt", mmap=True)
    return info


def _load_tensors(f: Path, mmap: bool = False) -> dict:
    try:
        return torch.load(f, weights_only=True, map_location="cpu", mmap=mmap)
    except pickle.UnpicklingError as exc:
        raise ValueError(f"refusing to load {f}: it holds Python objects other than tensors and plain values, and "
                         "loading those could run code hidden in the file. Checkpoints written by MAGRPOTrainer.save() "
                         f"never do; only use checkpoints you or magrpo-edu wrote. ({_first_line(exc)})") from exc
    except (RuntimeError, EOFError, OSError) as exc:
        raise ValueError(f"cannot read {f}: the file is incomplete or corrupt ({_first_line(exc)}). "
                         "Use another checkpoint.") from exc


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type when the message is empty (an empty file's EOFError)."""
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _read_state(d: Path) -> dict:
    """The non-tensor state, trainer_state.json (`_write_checkpoint`)."""
    f = d / "trainer_state.json"
    if f.is_file():
        try:
            state = json.loads(f.read_text())
        except ValueError as exc:
            raise ValueError(f"cannot read {f}: it is not valid JSON ({exc}). Use another checkpoint.") from exc
    else:
        raise ValueError(f"{f} is missing: {d} is not a complete MAGRPOTrainer checkpoint. Use another checkpoint.")
    missing = [k for k in ("step", "history", "eval_history", "samples", "python_rng") if k not in state]
    if missing:
        raise ValueError(f"{f} lacks {missing}: it is not a complete MAGRPOTrainer checkpoint.")
    return state
