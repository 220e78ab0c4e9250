"""`magrpo-edu train`: one complete, honest experiment from the command line.

Four parts, in `run_training`'s order:
  plan_run    checks every setting (the MAGRPOConfig, --eval-rows against the held-out rows, the
              device, the output folder, the checkpoint to resume) without loading a model; a
              mistake raises `SettingsError` and nothing is written;
  build_run   loads the model, builds the agents and the task (tasks/registry.py) and the trainer,
              evaluates the untrained agents and the baselines on held-out rows (or, resuming,
              reads them from the checkpoint);
  train_run   trains with MAGRPO (progress bar), evaluating once halfway (`halfway`: the first
              trained result, printed at once), then evaluates again with the same seed;
  report_run  writes to the output folder:
    history.json / history.csv   every logged step's metrics (see magrpo_edu.trainer for the glossary)
    samples.json                 the last logged groups: prompts, completions, rewards, advantages
    reward.png, agents.png       the curves (components.png too when the reward has levels)
    comparison.png               baselines vs MAGRPO (pass_at_k.png too for coding)
    results.json, results.md     model, settings, wall time, the evaluation untrained / halfway /
                                 trained, the baselines, and the agents' texts before and after on
                                 held-out rows (writing tasks: and one in-distribution row)
    checkpoint/                  the latest checkpoint (every save_steps steps and after the last,
                                 and whenever training stops early); `resume=` continues from it

Output folder: it is created only when there is something to write; a non-empty one is refused
unless overwrite=True (which removes the earlier run's files listed above, nothing else) or the
run resumes from it. Resume (resume=<folder>): the run's settings are stored in the checkpoint and
must match; the untrained-agent evaluation is read from the checkpoint, and the trained weights and
history come out identical to an uninterrupted run's. Ctrl-C or an error during training saves a
checkpoint and the history so far, says where, and re-raises.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import platform
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
from .progress import progress_bar

from . import __version__, distributed
from .agents import lora_agents, separate_agents
from .config import AGENT_KINDS, MAGRPOConfig, RunArguments
from .models import EMBEDDED, load_model
from .baselines import markdown_table, run_method, untrained_methods
from .tasks.registry import TASKS, Task, get_task
from .tracking import TrackerNotInstalledError, check_installed
from .trainer import MAGRPOTrainer, TrainerCallback, check_checkpoint, checkpoint_info


class SettingsError(ValueError):
    """A run setting that cannot work, found before training starts; the message says what to change."""


# The files a run writes into its output folder (all that overwrite=True removes).
OUTPUT_FILES = ("history.json", "history.csv", "samples.json", "reward.png", "components.png", "agents.png",
                "pass_at_k.png", "comparison.png", "results.json", "results.md", "checkpoint", "tensorboard")
RUN_FIELDS = tuple(f.name for f in dataclasses.fields(RunArguments))
CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(MAGRPOConfig)
                      if f.name not in ("num_agents", "logging_dir", "num_train_epochs"))
"""The MAGRPOConfig fields a run takes: all but the task's num_agents, the output folder's logging_dir
and num_train_epochs (a run counts max_steps)."""
SAVED_RUN_FIELDS = ("task", "model", "agents", "eval_rows")
"""The RunArguments that decide a run's results, saved in its checkpoint (the config is saved whole)."""
RESUME_FREE = ("progress", "save_steps", "report_to")
"""MAGRPOConfig fields a resumed run may change; every other one must be the run's own."""
DEMO_STEPS = 300
"""max_steps of `magrpo-edu train` when not given: the quick start's run (README)."""


def run_defaults(task: Task, agents: str) -> dict:
    """The MAGRPOConfig values that depend on the task or the agents, used where a run's settings leave
    the field out (every other default is MAGRPOConfig's own): the task's agents, completion budget
    and KL leash, its sampling (`Task.sampling`, else MAGRPOConfig's plain sampling), a learning rate per
    agent kind (a LoRA adapter takes a larger step than a full copy) and the quick demo's step count; for
    LoRA agents, then the task's measured recipe (`Task.lora_recipe`: coding's G, problems per step,
    learning rate and steps)."""
    plain = {f: MAGRPOConfig.__dataclass_fields__[f].default for f in ("temperature", "top_p", "top_k")}
    return dict(num_agents=task.num_agents, max_new_tokens=task.max_new_tokens, beta=task.beta,
                **(plain | task.sampling), learning_rate=2e-3 if agents == "lora" else 5e-4, max_steps=DEMO_STEPS,
                ) | (task.lora_recipe if agents == "lora" else {})


TASK_MODELS = {"coding": "tiny-code", "humaneval": "tiny-code"}
"""The embedded model a task uses when the run names none (RunArguments.model's default, 'tiny', for
every other task): the coding tasks' is `tiny` trained further on helper/main programs
(magrpo_edu/models/tiny-code/README.md)."""


def default_model(task: str) -> str:
    """The model of a run of `task` that names none (`TASK_MODELS`, else RunArguments' default)."""
    return TASK_MODELS.get(task, RunArguments.model)


def flag(name: str) -> str:
    """The command-line option of a setting, as people type it (`--max-new-tokens`)."""
    return "--" + name.replace("_", "-")


def write_history(history: list[dict], path: Path) -> None:
    keys = sorted({k for h in history for k in h}, key=lambda k: (k != "step", k))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(history)


def _resume_point(resume: Path, purpose: str = "resume") -> tuple[Path, dict, dict, dict]:
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


def _check_device(device: str | None) -> str:
    """The run's device; in a torchrun launch each process's own GPU (cuda:LOCAL_RANK)."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise SettingsError(f"--device {device!r} is not a device torch knows ({exc}); use cpu, cuda or cuda:N.") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise SettingsError(f"--device {device}: CUDA is not available on this machine; use --device cpu "
                                "(or leave --device out to pick cuda when it is available).")
        if dev.index is not None and distributed.launched():
            raise SettingsError(f"--device {device}: under torchrun each process takes its own GPU (cuda:LOCAL_RANK); "
                                "give --device cuda or leave --device out.")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise SettingsError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                                f"cuda:0 to cuda:{torch.cuda.device_count() - 1}.")
    device = distributed.local_device(device)  # in a torchrun launch, plain "cuda" is this process's GPU
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise SettingsError(f"torchrun started more processes on this machine ({os.environ.get('LOCAL_WORLD_SIZE', '?')}) "
                            f"than it has GPUs ({torch.cuda.device_count()}): each process takes its own GPU, so rank "
                            f"{os.environ.get('LOCAL_RANK')} has none. Use --nproc_per_node={torch.cuda.device_count()} "
                            "(or --device cpu for gloo on the CPU).")
    return device


def next_free(out_dir: Path) -> Path:
    """out_dir itself when it is missing or empty, else the first of out_dir-2, out_dir-3, ... that is."""
    k, p = 1, out_dir
    while p.exists() and (not p.is_dir() or any(p.iterdir())):
        k += 1
        p = out_dir.with_name(f"{out_dir.name}-{k}")
    return p


def _check_out(out_dir: Path, overwrite: bool, resuming: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise SettingsError(f"--out {out_dir} is a file, not a folder; choose another --out.")
    if not resuming and out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        names = sorted(p.name for p in out_dir.iterdir())
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        hint = f", --resume {out_dir} to continue it" if (out_dir / "checkpoint").exists() else ""
        raise SettingsError(f"output folder {out_dir} is not empty (it holds {shown}); pass --overwrite to replace an "
                            f"earlier run's results{hint}, or choose another --out (e.g. --out {next_free(out_dir)}, "
                            "which is free).")
    parent = next((p for p in [out_dir, *out_dir.parents] if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SettingsError(f"cannot write to {parent}, so --out {out_dir} cannot be created; choose another --out.")


def halfway(steps) -> Optional[int]:
    """The step at which `magrpo-edu train` evaluates the agents once during training (`_Halfway`),
    so the first trained result shows in about half the run's time (README's quick start gives
    the timings); None for runs under 4 steps."""
    return steps // 2 if steps >= 4 else None  # steps is checked (an integer >= 1) before this is asked


def _transition(task: Task, turns: int):
    """The run's multi-turn transition (the task's own, e.g. coding's level feedback) when turns > 1, else None."""
    return task.transition() if turns > 1 else None


def _unknown_settings(names: list) -> SettingsError:
    """The error for settings `run_training` does not take, naming the field a familiar alias stands for."""
    aliases = {a.lstrip("-"): f.name for f in dataclasses.fields(MAGRPOConfig) for a in f.metadata.get("aliases", ())}
    hints = [f"{n!r} is {aliases[n]!r} (the command line's -{'-' * (len(n) > 1)}{n} is an alias)"
             for n in names if n in aliases]
    return SettingsError(f"unknown setting(s) {', '.join(map(repr, names))}" + (f": {'; '.join(hints)}" if hints else "")
                         + f". The settings are RunArguments' ({', '.join(RUN_FIELDS)}) and MAGRPOConfig's fields "
                         "(magrpo-edu train --help lists them).")


def plan_run(**settings) -> dict:
    """Check every setting of `run_training` without loading a model or writing anything; returns the
    resolved plan: the run's `RunArguments`, its `Task`, its `MAGRPOConfig` (`run_defaults` fills what
    depends on the task or the agents), the device, the output folder and the checkpoint to resume.
    The settings are RunArguments' fields and MAGRPOConfig's (`CONFIG_FIELDS`), each with the default
    its dataclass holds. Raises SettingsError naming the setting, the value and what to do."""
    unknown = [k for k in settings if k not in RUN_FIELDS and k not in CONFIG_FIELDS]
    if unknown:
        raise _unknown_settings(unknown)
    given_run = {k: v for k, v in settings.items() if k in RUN_FIELDS}
    given_cfg = {k: v for k, v in settings.items() if k in CONFIG_FIELDS}
    resume, overwrite = given_run.get("resume"), given_run.get("overwrite", False)
    if not isinstance(overwrite, bool):
        raise SettingsError(f"overwrite={overwrite!r} is not allowed: give True or False.")
    for name in ("out", "resume"):
        if given_run.get(name) is not None and not isinstance(given_run[name], (str, os.PathLike)):
            raise SettingsError(f"{flag(name)} {given_run[name]!r} is not a folder path.")
    check_resume_flags(resume, overwrite)
    resume_info = saved_cfg = None
    if resume is not None:
        run_dir, resume_info, saved_run, saved_cfg = _resume_point(Path(resume))
        if given_run.get("out") is not None and Path(given_run["out"]).resolve() != run_dir.resolve():
            raise SettingsError(f"--resume {resume} continues the run in {run_dir} and writes there; leave --out out "
                                f"(or give --out {run_dir}).")
        differ = [f"{flag(k)} {v!r} (the run has {saved_run[k]!r})" for k, v in given_run.items()
                  if k in SAVED_RUN_FIELDS and v != saved_run[k]]
        differ += [f"{flag(k)} {v!r} (the run has {saved_cfg[k]!r})" for k, v in given_cfg.items()
                   if k not in RESUME_FREE and v != saved_cfg[k]]
        if differ:
            raise SettingsError(f"--resume {resume}: the run was started with other settings: {'; '.join(differ)}. "
                                "A resumed run keeps its settings; leave those options out.")
        given_run = {**saved_run, **given_run, "out": str(run_dir)}
    if given_run.get("model") is None:  # no --model: the task's embedded model
        given_run["model"] = default_model(given_run.get("task", RunArguments.task))
    try:
        run = RunArguments(**given_run)
        task = get_task(run.task)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    if run.agents not in AGENT_KINDS:
        raise SettingsError(f"unknown agents {run.agents!r}; choose one of {', '.join(AGENT_KINDS)}.")
    if not isinstance(run.model, str) or not run.model.strip():
        raise SettingsError("--model is empty; give 'tiny', 'smollm2-135m', a hub id or a local path.")
    out_dir = Path(run.out if run.out is not None else f"runs/{run.task}")
    if run.out is None and not overwrite and distributed.launch_rank() == 0:
        out_dir = next_free(out_dir)  # no --out: an earlier run in runs/<task> is kept, this one goes beside it
    if saved_cfg is not None:  # the run's own config; this command line may change only RESUME_FREE fields
        values = {**saved_cfg, "progress": True, **given_cfg}
    else:
        values = {**run_defaults(task, run.agents), **given_cfg}
    try:
        cfg = MAGRPOConfig(**{**values, "logging_dir": str(out_dir / "tensorboard")})
        check_installed(cfg.trackers)
    except (ValueError, TrackerNotInstalledError) as exc:
        raise SettingsError(str(exc)) from None
    if cfg.max_steps is None:
        raise SettingsError("max_steps=None is not allowed here: `magrpo-edu train` counts steps; give --max-steps N.")
    if cfg.num_turns > 1 and task.transition is None:
        with_one = [name for name, other in TASKS.items() if other.transition is not None]
        raise SettingsError(f"--num-turns {cfg.num_turns} needs a transition, and the {run.task} task has none; the "
                            f"package has one for --task {' / '.join(with_one)} (level feedback).")
    W = distributed.launch_world_size()
    if cfg.prompts_per_step % W:
        raise SettingsError(f"--prompts-per-step {cfg.prompts_per_step} with {W} processes (torchrun --nproc_per_node): "
                            f"each process takes prompts-per-step / {W} prompts per step, so give a multiple of {W}, "
                            f"e.g. --prompts-per-step {W}.")
    try:  # the task's data, read and checked before any model loads: a bad file is one line, not a traceback
        task.load("train")
        n_eval = len(task.load("eval"))
    except (ValueError, OSError) as exc:
        raise SettingsError(f"the {run.task} task's data cannot be used: {exc}") from None
    eval_rows = run.eval_rows
    if isinstance(eval_rows, bool) or not isinstance(eval_rows, int) or not 1 <= eval_rows <= n_eval:
        raise SettingsError(f"--eval-rows {eval_rows!r} is not allowed: the {run.task} task has {n_eval} held-out rows, "
                            f"so give a number from 1 to {n_eval}.")
    device = _check_device(run.device)
    if resume_info is not None:
        steps = cfg.max_steps
        if resume_info["step"] > steps:
            raise SettingsError(f"--resume {resume}: its checkpoint is at step {resume_info['step']}, past --max-steps {steps}.")
        if resume_info["step"] == steps:
            raise SettingsError(f"--resume {resume}: that run is finished (all {steps} steps trained; its results are in "
                                f"{out_dir}/results.md). Evaluate its agents again with: magrpo-edu eval --checkpoint {out_dir}")
    if distributed.launch_rank() == 0:  # in a data-parallel launch only rank 0 writes (and rank 0 may already have)
        _check_out(out_dir, overwrite, resume is not None)
    return dict(run=run, task=task, config=cfg, device=device, out_dir=out_dir, resume=resume_info,
                halfway=halfway(cfg.max_steps))


class _Halfway(TrainerCallback):
    """Evaluates the agents once during training, at step `at` (`halfway`), and prints the result at
    once: the run's first trained result. Like every `evaluate`, it forks the RNG, so training goes on
    exactly as without it; the evaluation joins `trainer.eval_history` (saved in checkpoints,
    results.json, results.md's table and reward.png) and the trackers' eval curves."""

    def __init__(self, at: Optional[int], before: Optional[dict], clock: Optional["_TrainClock"] = None):
        self.at, self.before, self.clock = at, before, clock

    def on_step_end(self, trainer, record):
        if self.at is None or not self.at <= trainer.step < trainer.total_steps:
            return
        if any(ev["step"] >= self.at for ev in trainer.eval_history):  # done (also before a resume)
            return
        t0 = time.time()
        ev = trainer.evaluate()
        if self.clock is not None:  # the run's training time leaves this evaluation out
            self.clock.excluded += time.time() - t0
        trainer.eval_history.append(dict(step=trainer.step, **ev))
        trainer.log_eval(ev)
        was = f" (untrained {self.before['eval/reward']:.3f})" if self.before else ""
        progress_bar.write(f"Step {trainer.step} of {trainer.total_steps}: held-out joint reward {ev['eval/reward']:.3f}{was} "
                   f"on {ev['eval/rows']} rows; training goes on.")


class _TrainClock(TrainerCallback):
    """Keeps the training wall time (over all sessions of a resumed run) in the checkpoint's metadata."""

    def __init__(self, before: float):
        self.before, self.t0, self.excluded = before, time.time(), 0.0

    def seconds(self) -> float:
        """Seconds spent training so far (the halfway evaluation excluded)."""
        return self.before + time.time() - self.t0 - self.excluded

    def on_step_end(self, trainer, record):
        trainer.metadata["train_seconds"] = self.seconds()


def _prepare_out(out_dir: Path, overwrite: bool) -> None:
    """Create the output folder; with overwrite, remove the earlier run's files (OUTPUT_FILES only)."""
    if overwrite and out_dir.is_dir():
        for name in OUTPUT_FILES:
            p = out_dir / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
        for p in out_dir.glob(".checkpoint.*"):  # a save's temporary or previous folder
            shutil.rmtree(p, ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)


def _write_history(trainer: MAGRPOTrainer, out_dir: Path) -> None:
    (out_dir / "history.json").write_text(json.dumps(trainer.history, indent=1))
    write_history(trainer.history, out_dir / "history.csv")
    (out_dir / "samples.json").write_text(json.dumps(list(trainer.samples)[-20:], indent=1))


def _save_stopped(trainer: MAGRPOTrainer, out_dir: Path, why: str) -> None:
    """Training stopped early: keep a checkpoint and the history so far, and say where. Never raises
    (the caller re-raises the reason training stopped)."""
    ckpt, total = out_dir / "checkpoint", trainer.total_steps
    try:
        trainer.save(ckpt)
        kept = f" and a checkpoint at step {trainer.step} in {ckpt}/. Continue with: magrpo-edu train --resume {out_dir}"
    except Exception as exc:  # e.g. interrupted inside an update: the last periodic checkpoint stays
        try:
            last = checkpoint_info(ckpt)["step"]
            kept = (f". Not saving step {trainer.step}'s state ({exc}); the checkpoint in {ckpt}/ is at step {last}: "
                    f"continue from it with: magrpo-edu train --resume {out_dir}")
        except (FileNotFoundError, ValueError):
            kept = f". No checkpoint could be saved ({exc})"
    try:
        _write_history(trainer, out_dir)
        hist = f"the history so far ({out_dir}/history.json, history.csv, samples.json)"
    except Exception as exc:
        hist = f"no history ({exc})"
    print(f"\n{why} at step {trainer.step} of {total}. Saved {hist}{kept}.", file=sys.stderr, flush=True)


def build_team(model: str, agents: str, device: str, n: int = 2):
    """(tokenizer, the n agents) of a `magrpo-edu train` run: `train` and `eval` build them alike."""
    base, tok = load_model(model, device=device)
    # LoRA on the attention's q/v projections for the tiny model, where peft's per-layer overhead dominates
    # a step (benchmarks/PROFILE.md, "LoRA targets"); all linear layers for real models.
    targets = ["q_proj", "v_proj"] if model.strip().lower() in EMBEDDED else "all-linear"
    team = lora_agents(base, n, tokenizer=tok, target_modules=targets) if agents == "lora" else separate_agents(base, n, tokenizer=tok)
    return tok, team


def run_eval(checkpoint: str, eval_rows: int | None = None, samples: int | None = None, device: str | None = None) -> dict:
    """`magrpo-edu eval --checkpoint DIR`: evaluate the agents saved by a `magrpo-edu train` run.

    DIR is the run's output folder or its checkpoint folder; the model, agents, task and sampling
    settings are the run's own. Prints and returns the trainer's evaluation (reward, levels, each
    agent's repetition and naturalness) on the first `eval_rows` held-out rows (default: the run's)
    and the comparison table's "magrpo" row (`samples` joint answers per row; default as `train`).
    Checked before any model loads: a folder without a train checkpoint, or eval_rows out of range,
    raises SettingsError."""
    _, info, run, saved_cfg = _resume_point(Path(checkpoint), purpose="evaluate")
    task = run["task"]
    try:
        t = get_task(task)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    n_eval = len(t.load("eval"))
    rows_n = run["eval_rows"] if eval_rows is None else eval_rows
    if isinstance(rows_n, bool) or not isinstance(rows_n, int) or not 1 <= rows_n <= n_eval:
        raise SettingsError(f"--eval-rows {rows_n!r} is not allowed: the {task} task has {n_eval} held-out rows, "
                            f"so give a number from 1 to {n_eval}.")
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
        raise SettingsError(f"--samples {samples!r} is not allowed: give a whole number >= 1.")
    device = _check_device(device)
    cfg = MAGRPOConfig(**{**saved_cfg, "progress": False, "report_to": "none"})
    tok, team = build_team(run["model"], run["agents"], device, cfg.num_agents)
    reward, formatters, train_rows, eval_set = t.setup(tok)
    rows = eval_set[:rows_n]
    trainer = MAGRPOTrainer(team, reward, formatters, train_rows, cfg, eval_dataset=rows,
                            transition=_transition(t, cfg.num_turns))
    try:
        trainer.load_checkpoint(info["path"])
    except ValueError as exc:
        raise SettingsError(f"cannot evaluate {checkpoint}: {exc}") from None
    ev = trainer.evaluate()
    n = samples if samples is not None else t.table_samples
    row = run_method("magrpo", team, t, rows, formatters, samples=n, max_new_tokens=cfg.max_new_tokens,
                     temperature=cfg.temperature, top_p=cfg.top_p, top_k=cfg.top_k, seed=cfg.seed,
                     ks=tuple(k for k in (1, 5, 10) if k <= n))
    comp = sorted(k for k in ev if k.startswith(("eval/reward/", "eval/repetition/", "eval/naturalness/")))
    print(f"# {task}: the agents of {info['path']} (step {trainer.step} of {cfg.max_steps}; model `{run['model']}`)\n")
    print(f"Trainer's evaluation, {rows_n} held-out rows x {cfg.num_generations} samples: joint reward "
          f"{ev['eval/reward']:.3f}; " + ", ".join(f"{k.split('/', 1)[1]} {ev[k]:.3f}" for k in comp) + "\n")
    print(markdown_table([row]))
    return dict(step=trainer.step, evaluate=ev, table=[row])


def before_after_examples(table, rows, samples: int, task: Task, n: int = 3) -> list[dict]:
    """The first `n` rows' first samples from the untrained (parallel) and trained (magrpo) table rows
    that kept their texts: what results.md shows next to the numbers."""
    by = {r["method"]: r for r in table if "texts" in r}
    if "parallel" not in by or "magrpo" not in by:
        return []
    field = task.prompt_field
    out = []
    for k, row in enumerate(rows[:n]):
        j = k * samples
        out.append(dict(id=str(row.get("id", k)), input=str(row.get(field, "")), before=by["parallel"]["texts"][j],
                        after=by["magrpo"]["texts"][j], reward_before=by["parallel"]["pair_rewards"][j],
                        reward_after=by["magrpo"]["pair_rewards"][j]))
    return out


def run_training(**settings) -> dict:
    """One experiment (module docstring): plan (`plan_run`, every setting checked before any model
    loads), build (`build_run`), train (`train_run`), report (`report_run`). The settings are the
    fields of `config.RunArguments` and `config.MAGRPOConfig` (the command line's options, under the
    same names), e.g. run_training(task="tldr", max_steps=300, out="runs/tldr"); a field left out
    takes its dataclass's default, or `run_defaults`' where it depends on the task or the agents.

    `out` defaults to runs/<task>; `save_steps`: checkpoint every N steps into <out>/checkpoint;
    `resume`: a run folder (or its checkpoint folder) to continue, with the run's own settings (the
    checkpoint keeps them; only progress, save_steps and report_to may change); `overwrite`: replace
    an earlier run's results in `out`; `prompts_per_step`: prompts per optimiser step (over all
    processes when launched with torchrun); `report_to`: "tensorboard" (into <out>/tensorboard),
    "wandb", "trackio" or "none".

    Launched with torchrun (data parallel, magrpo_edu.distributed), every process trains and only
    rank 0 evaluates before and after, writes the output folder and returns the results ({} elsewhere)."""
    plan = plan_run(**settings)
    if distributed.launch_rank() == 0:
        _say(describe_plan(plan))
    run = build_run(plan)
    trained = train_run(run)
    return {} if trained is None else report_run(run, *trained)


def _say(text: str) -> None:
    print(text, flush=True)


def describe_plan(plan: dict) -> str:
    """What a run will do, in the order it does it: the first thing `magrpo-edu train` prints."""
    r, t, c = plan["run"], plan["task"], plan["config"]
    team = f"{c.num_agents} {'LoRA agents on one frozen' if r.agents == 'lora' else 'full copies of the'} `{r.model}` model"
    if plan["resume"] is not None:
        return (f"magrpo-edu train: resuming {plan['out_dir']} at step {plan['resume']['step']} of {c.max_steps} "
                f"({r.task}, {team}); then the evaluation of the trained agents, plots and results.md there.")
    n_base = len(untrained_methods(t))
    return "\n".join([
        f"magrpo-edu train: task {r.task}, {team}, on {plan['device']}; results go to {plan['out_dir']}/",
        f"  1. evaluate the untrained agents and {n_base} prompt-level baselines on {r.eval_rows} held-out rows",
        f"  2. train {c.max_steps} MAGRPO steps (G = {c.num_generations} samples per agent, {c.max_new_tokens} new tokens)"
        + (f", evaluating the agents once at step {plan['halfway']}" if plan["halfway"] else ""),
        "  3. evaluate the trained agents the same way; write results.md, plots and the agents (checkpoint/)"])


@dataclass
class Run:
    """A built experiment (`build_run`): what `train_run` trains and `report_run` writes about."""

    plan: dict
    task: Task
    team: list
    formatters: list
    rows: list
    """The held-out rows of the evaluation and the comparison table."""
    trainer: MAGRPOTrainer
    before: Optional[dict]
    """The untrained agents' evaluation (None on the data-parallel ranks other than 0)."""
    table: list
    """Comparison table rows so far (the untrained baselines; train_run adds the trained agents')."""
    clock: "_TrainClock"
    resumed_at: list
    main: bool
    """Rank 0 (the only process when not data parallel): it evaluates and writes."""
    created: bool
    t0: float
    in_dist_before: Optional[dict] = None
    """The untrained agents on one in-distribution row (`Run.in_distribution`), for tasks that have one."""
    in_dist_after: Optional[dict] = None
    """The trained agents on the same row."""

    def method(self, name: str, rows: Optional[list] = None, samples: Optional[int] = None) -> dict:
        """One comparison-table row for these agents (`baselines.run_method` with the run's settings), on
        the held-out rows unless `rows` is given."""
        c = self.plan["config"]
        return run_method(name, self.team, self.task, self.rows if rows is None else rows, self.formatters,
                          keep_texts=True, samples=self.task.table_samples if samples is None else samples,
                          max_new_tokens=c.max_new_tokens, temperature=c.temperature, top_p=c.top_p, top_k=c.top_k,
                          seed=c.seed)

    def in_distribution(self, name: str) -> Optional[dict]:
        """The agents' first sample and its joint reward on one new row of the training data's own
        generator (`Task.in_distribution`; the writing tasks), to show beside the held-out rows."""
        if self.task.in_distribution is None:
            return None
        row = self.task.in_distribution()
        r = self.method(name, rows=[row], samples=1)
        return dict(row=row, text=r["texts"][0], reward=r["pair_rewards"][0])


def build_run(plan: dict) -> Run:
    """Build: the model and the agents, the task, the trainer; then the untrained agents' evaluation
    and baselines (or, resuming, the checkpoint and what it recorded), and the output folder."""
    t0 = time.time()
    r, t, cfg = plan["run"], plan["task"], plan["config"]
    out_dir, main = plan["out_dir"], distributed.launch_rank() == 0
    tok, team = build_team(r.model, r.agents, plan["device"], cfg.num_agents)
    reward, formatters, train_rows, eval_set = t.setup(tok)
    rows = eval_set[:r.eval_rows]
    try:
        trainer = MAGRPOTrainer(team, reward, formatters, train_rows, cfg, eval_dataset=rows,
                                transition=_transition(t, cfg.num_turns), checkpoint_dir=out_dir / "checkpoint")
    except ValueError as exc:  # e.g. --max-new-tokens beyond the model's context
        raise SettingsError(str(exc)) from None
    run = Run(plan, t, team, formatters, rows, trainer, None, [], None, [], main, not out_dir.exists(), t0)
    if plan["resume"] is not None:
        try:
            trainer.load_checkpoint(plan["resume"]["path"])
        except ValueError as exc:  # a damaged or mismatched file: one line, exit 2, not a traceback
            raise SettingsError(f"cannot resume {out_dir}: {exc}") from None
        run.before, run.table = trainer.metadata["before"], trainer.metadata["table"]
        run.in_dist_before = trainer.metadata["in_distribution_before"]
        if main:
            print(f"Resuming {out_dir} at step {trainer.step} of {cfg.max_steps}.", file=sys.stderr, flush=True)
    elif main:  # data parallel: rank 0 evaluates the untrained agents, the others go straight to training
        progress = cfg.progress
        run.before = trainer.evaluate(progress=progress, desc="1. untrained agents")
        methods = untrained_methods(t)
        run.table = [run.method(m) for m in progress_bar(methods, desc="1. baselines", disable=not progress)]
        run.in_dist_before = run.in_distribution("parallel")
        if not progress:
            _say(f"Untrained agents and {len(methods)} baselines evaluated ({time.time() - t0:.0f} s so far).")
    run.clock = _TrainClock(trainer.metadata.get("train_seconds", 0.0))
    run.resumed_at = trainer.metadata.get("resumed_at_steps", []) + ([trainer.step] if plan["resume"] is not None else [])
    trainer.metadata = dict(run={k: getattr(r, k) for k in SAVED_RUN_FIELDS}, before=run.before, table=run.table, in_distribution_before=run.in_dist_before,
                            train_seconds=run.clock.seconds(), resumed_at_steps=run.resumed_at)
    trainer.callbacks.append(run.clock)
    if main:  # data parallel: rank 0 evaluates halfway, the others wait for it at the next step's gather in train()
        trainer.callbacks.append(_Halfway(plan["halfway"], run.before, run.clock))
        _prepare_out(out_dir, r.overwrite and plan["resume"] is None)
        if plan["resume"] is None:
            trainer.log_eval(run.before)  # the trackers' eval curves start at the untrained agents (step 0)
    return run


def train_run(run: Run) -> Optional[tuple[dict, list, float]]:
    """Train, then evaluate the trained agents: (after, the full comparison table, training seconds);
    None on data-parallel ranks other than 0. Stopping in either part (Ctrl-C, an error) keeps what was
    trained: a checkpoint and the history so far are saved, and the reason is re-raised."""
    trainer, out_dir, start_step = run.trainer, run.plan["out_dir"], run.trainer.step
    try:
        trainer.train()
        if not run.main:
            return None
        train_s = run.clock.seconds()
        if run.plan["config"].save_steps is None:  # every finished run keeps its agents: `magrpo-edu eval --checkpoint` needs them
            trainer.save(out_dir / "checkpoint")
        progress = run.plan["config"].progress
        after = trainer.evaluate(progress=progress, desc="3. trained agents")
        trainer.log_eval(after)
        finals = ["magrpo"] + (["magrpo_2turn"] if run.task.transition is not None else [])  # + a second turn (coding: feedback)
        table = list(run.table) + [run.method(m) for m in progress_bar(finals, desc="3. comparison table", disable=not progress)]
        run.in_dist_after = run.in_distribution("magrpo") if run.in_dist_before is not None else None
    except KeyboardInterrupt:
        if run.main:
            _save_stopped(trainer, out_dir, "Interrupted (Ctrl-C)")
        raise
    except Exception as exc:
        if not run.main:
            raise
        if trainer.step > start_step:  # keep the progress made
            _save_stopped(trainer, out_dir, f"Stopped by an error ({type(exc).__name__})")
        elif run.created and out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()
        raise
    return after, table, train_s


def report_run(run: Run, after: dict, table: list, train_s: float) -> dict:
    """Report: history, samples, plots, results.json and results.md (with the agents' texts before and
    after) into the output folder; prints results.md and returns the results."""
    import matplotlib

    matplotlib.use("Agg")
    from . import viz

    plan, r, c, t, trainer, team = run.plan, run.plan["run"], run.plan["config"], run.task, run.trainer, run.team
    task, out_dir, before = r.task, plan["out_dir"], run.before
    G, steps, lr, max_new_tokens, seed = c.num_generations, c.max_steps, c.learning_rate, c.max_new_tokens, c.seed
    prompts_per_step, samples = c.prompts_per_step, t.table_samples
    _write_history(trainer, out_dir)
    during = [ev for ev in trainer.eval_history if ev["step"] < trainer.step]  # the halfway evaluation
    evals = [dict(before, step=0)] + during + [dict(after, step=trainer.step)]  # held-out: untrained, halfway, trained
    for name, fig in (("reward", viz.plot_rewards(trainer.history, title=f"{task}: joint reward per step", evals=evals)),
                      ("components", viz.plot_components(trainer.history)), ("agents", viz.plot_agents(trainer.history))):
        if fig is None:  # e.g. no reward components: no empty figure
            continue
        fig.savefig(out_dir / f"{name}.png", dpi=100)
        matplotlib.pyplot.close(fig)
    if any(k.startswith("pass_or_not@") for k in table[0]):  # coding's table metrics
        fig = viz.plot_pass_at_k(table, title=f"{task}: PassOrNot@k (solid) and Accuracy@k (dashed), held-out rows")
        fig.savefig(out_dir / "pass_at_k.png", dpi=100)
        matplotlib.pyplot.close(fig)
    metric = t.headline
    fig = viz.plot_comparison(table, metric, title=f"{task}: baselines vs MAGRPO ({metric})")
    fig.savefig(out_dir / "comparison.png", dpi=100)
    matplotlib.pyplot.close(fig)
    first = trainer.history[: max(1, len(trainer.history) // 10)]
    last = trainer.history[-max(1, len(trainer.history) // 10):]
    examples = before_after_examples(table, run.rows, samples, t)
    table = [{k: v for k, v in row.items() if k not in ("texts", "pair_rewards")} for row in table]
    in_dist = None  # tasks with Task.in_distribution (writing): one row of the training data's own world, beside the held-out ones
    if run.in_dist_before is not None and run.in_dist_after is not None:
        b, a = run.in_dist_before, run.in_dist_after
        in_dist = dict(id=b["row"]["id"], input=b["row"][t.prompt_field], before=b["text"], after=a["text"],
                       reward_before=b["reward"], reward_after=a["reward"])
    results = dict(task=task, model=r.model, agents=r.agents, steps=steps, num_generations=G, max_new_tokens=max_new_tokens,
                   learning_rate=lr, beta=c.beta, prompts_per_step=prompts_per_step,
                   processes=distributed.world_size(), seed=seed, device=plan["device"], save_steps=c.save_steps,
                   resumed_at_steps=run.resumed_at, train_seconds=round(train_s, 1),
                   total_seconds=round(time.time() - run.t0, 1), eval_rows=before["eval/rows"],
                   eval_before=before, eval_after=after, comparison=table, examples=examples,
                   train_reward_first_10pct=sum(h["reward"] for h in first) / len(first),
                   train_reward_last_10pct=sum(h["reward"] for h in last) / len(last),
                   in_distribution_example=in_dist, eval_during_training=trainer.eval_history,
                   versions=dict(magrpo_edu=__version__, torch=torch.__version__, python=platform.python_version()))
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    comp = sorted(k for k in after if k.startswith("eval/reward/"))
    lines = [f"# {task}: MAGRPO on `{r.model}` ({r.agents} agents)", "",
             f"{steps} steps, G={G}, lr={lr}, beta={c.beta}, {max_new_tokens} new tokens, seed {seed}, {plan['device']}"
             + (f", {prompts_per_step} prompts per step" if prompts_per_step > 1 else "")
             + (f" over {distributed.world_size()} processes" if distributed.world_size() > 1 else "") + "; "
             f"training took {train_s:.0f} s. Evaluated on {before['eval/rows']} held-out rows, "
             f"{G} joint samples each, same sampling seed before and after.", "",
             "| | mean joint reward |" + "".join(f" {k.split('/')[-1]} |" for k in comp),
             "|---|---|" + "---|" * len(comp),
             f"| untrained | {before['eval/reward']:.3f} |" + "".join(f" {before[k]:.3f} |" for k in comp)]
    lines += [f"| MAGRPO, step {ev['step']} | {ev['eval/reward']:.3f} |" + "".join(f" {ev.get(k, float('nan')):.3f} |" for k in comp)
              for ev in during]
    lines += [f"| MAGRPO, step {trainer.step} | {after['eval/reward']:.3f} |" + "".join(f" {after[k]:.3f} |" for k in comp)]
    lines += ["", "Text quality of the same samples (`magrpo_edu.quality`): repetition = share of repeated word 3-grams; "
              "naturalness = mean per-token NLL under the untrained model (lower = closer to its language; a gamed "
              "text such as `w w w` scores several nats more).", "",
              "| | " + " | ".join(f"{m} {a.name}" for m in ("repetition", "naturalness") for a in team) + " |",
              "|---|" + "---|" * (2 * len(team))]
    for label, ev in (("untrained", before), ("MAGRPO", after)):
        lines.append(f"| {label} | " + " | ".join(f"{ev[f'eval/{m}/{a.name}']:.3f}" if f"eval/{m}/{a.name}" in ev else "-"
                                                  for m in ("repetition", "naturalness") for a in team) + " |")
    lines += ["", f"## Baselines vs MAGRPO ({len(run.rows)} held-out rows x {samples} samples)", "", markdown_table(table)]
    lines += ["", "## Before and after: the agents' texts on held-out rows", "",
              "The untrained agents (parallel protocol) and the trained ones (magrpo) on the same rows, first sample "
              "each. Read them next to the numbers: a reward can rise while the texts get worse.", ""]
    if r.model == "tiny" and t.in_distribution is not None:  # the writing tasks
        what = t.prompt_field  # post / abstract
        lines += ["**What the embedded tiny model can and cannot do.** It is a 3M-parameter model pretrained on a "
                  f"small synthetic world (`magrpo_edu/models/tiny/README.md`). On these held-out, hand-written {what}s "
                  f"its texts are sentences from its own world, mostly unrelated to the {what}: read the reward gain "
                  "above as the agents learning what the joint reward pays for (lengths, structure, words), not "
                  "summarisation."
                  + (f" Compare with the last example, a new {what} from its own world." if in_dist is not None else "")
                  + " For real summaries of real posts see the SmolLM2-135M run "
                  "(notebook 07, `magrpo_edu/models/smollm2_tldr/README.md`).", ""]
    shown = [(f"{ex['id']}: joint reward", ex) for ex in examples]
    if in_dist is not None:
        shown.append(("In distribution, for comparison: a new row from the training data's own generator "
                       "(not a training row), joint reward", in_dist))
    for heading, ex in shown:
        lines += [f"### {heading} {ex['reward_before']:.2f} -> {ex['reward_after']:.2f}", "",
                  "> " + ex["input"][:300].replace("\n", " ") + (" [...]" if len(ex["input"]) > 300 else ""), ""]
        for i, (b, a) in enumerate(zip(ex["before"], ex["after"])):
            lines += [f"{team[i].name} before:", "", "```text", b.strip() or "(empty)", "```",
                      f"{team[i].name} after:", "", "```text", a.strip() or "(empty)", "```", ""]
    (out_dir / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nWrote history, samples, plots and results to {out_dir}/")
    return results
