"""A run's output folder: what a run writes there (`output_files`), the checks before it is used (`check_out`: not a
file, not an earlier run's unless overwritten, writable), the next free name (`next_free`), and the checkpoint a run
resumes or evaluates (`resume_point`: the saved run settings, `SAVED_RUN_FIELDS`, and the config)."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..checkpoints import check_checkpoint
from ..config import MAGRPOConfig, SettingsError
from ..tasks.registry import TASKS


# The files every run writes into its output folder (with a task's own, `output_files`: all that overwrite=True removes).
OUTPUT_FILES = ("history.json", "history.csv", "samples.json", "reward.png", "components.png", "agents.png",
                "comparison.png", "results.json", "results.md", "checkpoint", "tensorboard")


def output_files() -> tuple[str, ...]:
    """What overwrite=True removes from an output folder: `OUTPUT_FILES` and every registered task's own report files
    (`Task.report_files`; an earlier run in the folder may have been another task's)."""
    return OUTPUT_FILES + tuple(dict.fromkeys(f for t in TASKS.values() for f in t.report_files))


SAVED_RUN_FIELDS = ("task", "model", "agents", "eval_rows")
"""The RunArguments that decide a run's results, saved in its checkpoint (the config is saved whole)."""


def resume_point(resume: Path, purpose: str = "resume") -> tuple[Path, dict, dict, dict]:
    """(output folder, checkpoint info, saved RunArguments fields, saved MAGRPOConfig fields) of a
    folder to resume (or, purpose="evaluate", to evaluate: the errors then speak of evaluating)."""
    candidates = [resume] if resume.name == "checkpoint" else [resume / "checkpoint"]  # a run folder or its checkpoint
    for ckpt in candidates:
        try:
            info = check_checkpoint(ckpt)
        except FileNotFoundError:
            continue
        except ValueError as exc:  # there, but damaged: say which file, not "nothing to resume"
            raise SettingsError(f"cannot {purpose} {resume}: {exc}") from None
        run = info.get("metadata", {}).get("run")
        if not isinstance(run, dict):
            raise SettingsError(f"{info['path']} is a trainer checkpoint but not one written by `magrpo-edu train` "
                                f"(no run settings in it); {purpose} it in Python with MAGRPOTrainer.load.")
        if sorted(run) != sorted(SAVED_RUN_FIELDS):
            raise SettingsError(f"cannot {purpose} {resume}: its checkpoint was written by an earlier magrpo-edu, "
                                f"whose run settings had other names ({', '.join(sorted(run))}); start a new run.")
        try:
            config = MAGRPOConfig.from_dict(info["config"])
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"cannot {purpose} {resume}: {info['path']}/config.json does not hold a valid "
                                f"MAGRPOConfig ({exc}).") from None
        return ckpt.parent, info, dict(run), dataclasses.asdict(config)
    if purpose == "evaluate":
        raise SettingsError(f"nothing to evaluate in {resume}: no {resume / 'checkpoint'}/trainer_state.pt. Give the "
                            "output folder of a `magrpo-edu train` run (every finished run keeps its agents there in "
                            "checkpoint/).")
    raise SettingsError(f"nothing to resume in {resume}: no {resume / 'checkpoint'}/trainer_state.pt. Checkpoints are "
                        "written after the last step, every --save-steps steps and when training stops early (Ctrl-C "
                        "or an error).")


def check_resume_flags(resume, overwrite: bool) -> None:
    if resume is not None and overwrite:
        raise SettingsError("--overwrite and --resume contradict each other: --resume continues the run in its "
                            "folder, --overwrite starts a new one there; give one of them.")


def next_free(out_dir: Path) -> Path:
    """out_dir itself when it is missing or empty, else the first of out_dir-2, out_dir-3, ... that is."""
    k, p = 1, out_dir
    while p.exists() and (not p.is_dir() or any(p.iterdir())):
        k += 1
        p = out_dir.with_name(f"{out_dir.name}-{k}")
    return p


def resume_hint(out_dir: Path) -> tuple[str, str]:
    """What the "not empty" error adds about the run in out_dir (beside --overwrite, and at its end):
    `--resume` only where it works (a run stopped before its last step); a finished run cannot be resumed
    (a resumed run keeps its --max-steps), so for it the way to evaluate it again."""
    try:
        _, info, _, cfg = resume_point(out_dir)
    except SettingsError:  # a damaged or foreign checkpoint: --resume would refuse it too
        return "", ""
    if cfg.get("max_steps") is not None and info["step"] < cfg["max_steps"]:
        return f", --resume {out_dir} to continue it (its checkpoint is at step {info['step']} of {cfg['max_steps']})", ""
    return "", (f" It holds a finished run ({info['step']} steps), which cannot be resumed; magrpo-edu eval "
                f"--checkpoint {out_dir} evaluates its agents again.")


def check_out(out_dir: Path, overwrite: bool, resuming: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise SettingsError(f"--out {out_dir} is a file, not a folder; choose another --out.")
    if not resuming and out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        names = sorted(p.name for p in out_dir.iterdir())
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        hint, finished = resume_hint(out_dir) if (out_dir / "checkpoint").exists() else ("", "")
        raise SettingsError(f"output folder {out_dir} is not empty (it holds {shown}); pass --overwrite to replace an "
                            f"earlier run's results{hint}, or choose another --out (e.g. --out {next_free(out_dir)}, "
                            f"which is free).{finished}")
    parent = next((p for p in [out_dir, *out_dir.parents] if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SettingsError(f"cannot write to {parent}, so --out {out_dir} cannot be created; choose another --out.")
