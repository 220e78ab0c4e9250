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
from tqdm.auto import tqdm

from . import __version__, distributed
from .agents import lora_agents, separate_agents
from .config import AGENT_KINDS, MAGRPOConfig, TrainArguments
from .models import load_model
from .baselines import markdown_table, run_method, untrained_methods
from .tasks.registry import TASKS, Task, get_task
from .tasks.writing import TASK_FIELDS as WRITING_FIELDS, in_distribution_row
from .tracking import TrackerNotInstalledError, check_installed
from .trainer import MAGRPOTrainer, TrainerCallback, check_checkpoint, checkpoint_info


class SettingsError(ValueError):
    """A run setting that cannot work, found before training starts; the message says what to change."""


# The files a run writes into its output folder (all that overwrite=True removes).
OUTPUT_FILES = ("history.json", "history.csv", "samples.json", "reward.png", "components.png", "agents.png",
                "pass_at_k.png", "comparison.png", "results.json", "results.md", "checkpoint", "tensorboard")
# run_training's settings that determine the results, with the command-line option of each.
SETTING_FLAGS = {k: TrainArguments.flag(k) for k in ("task", "model", "agents", "steps", "G", "max_new_tokens", "lr",
                                                     "temperature", "beta", "eval_rows", "seed", "turns", "prompts_per_step")}


def write_history(history: list[dict], path: Path) -> None:
    keys = sorted({k for h in history for k in h}, key=lambda k: (k != "step", k))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(history)


def resume_settings(resume: str | Path) -> dict:
    """The settings (run_training's keyword arguments, plus save_steps) of the run whose output folder
    (or checkpoint folder) is `resume`; raises SettingsError when it holds no magrpo-edu train checkpoint."""
    _, info, run = _resume_point(Path(resume))
    return {**run, "save_steps": info["metadata"].get("save_steps"), "report_to": info["metadata"].get("report_to", "none")}


def _resume_point(resume: Path, purpose: str = "resume") -> tuple[Path, dict, dict]:
    """(output folder, checkpoint info, saved run settings) of a folder to resume (or, purpose="evaluate",
    to evaluate: the errors then speak of evaluating)."""
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
        # runs saved before --beta / --prompts-per-step existed trained without the leash, one prompt per step:
        # every caller (the CLI's resume, plan_run, run_eval) must read that, not today's defaults
        return ckpt.parent, info, {"beta": 0.0, "prompts_per_step": 1, **run}
    if purpose == "evaluate":
        raise SettingsError(f"nothing to evaluate in {resume}: no {resume / 'checkpoint'}/trainer_state.pt. Give the "
                            "output folder of a `magrpo-edu train` run (every run keeps its agents there in checkpoint/; "
                            "runs made before 0.1.1 keep them only with --save-steps or when stopped early).")
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


def run_config(settings: dict, progress: bool = True, save_steps: int | None = None, report_to="none",
               logging_dir: str | None = None) -> MAGRPOConfig:
    """The MAGRPOConfig of a run's settings (a new run's, resolved by plan_run, or a saved run's)."""
    s = settings
    return MAGRPOConfig(num_agents=2, num_generations=s["G"], max_new_tokens=s["max_new_tokens"],
                        temperature=s["temperature"], learning_rate=s["lr"], beta=s["beta"], max_steps=s["steps"],
                        seed=s["seed"], progress=progress, num_turns=s["turns"], save_steps=save_steps,
                        prompts_per_step=s.get("prompts_per_step", 1), report_to=report_to, logging_dir=logging_dir)


def halfway(steps) -> Optional[int]:
    """The step at which `magrpo-edu train` evaluates the agents once during training (`_Halfway`),
    so the first trained result shows in about half the run's time (on 2 CPU cores, the quick
    start's after about 2.5 minutes, README); None for runs under 4 steps."""
    return steps // 2 if steps >= 4 else None  # steps is checked (an integer >= 1) before this is asked


def _transition(task: Task, turns: int):
    """The run's multi-turn transition (the task's own, e.g. coding's level feedback) when turns > 1, else None."""
    return task.transition() if turns > 1 else None


def plan_run(**settings) -> dict:
    """Check every setting of `run_training` (the fields of `config.TrainArguments`, which holds their
    defaults) without loading a model or writing anything; returns the resolved plan (settings,
    MAGRPOConfig, device, output folder, checkpoint to resume).
    Raises SettingsError naming the setting, the value and what to do."""
    a = TrainArguments(**settings)
    task, model, agents, steps, G, max_new_tokens, lr, temperature, beta, eval_rows, seed, device, out, progress, turns, \
        save_steps, resume, overwrite, prompts_per_step, report_to = (
            a.task, a.model, a.agents, a.steps, a.G, a.max_new_tokens, a.lr, a.temperature, a.beta, a.eval_rows, a.seed,
            a.device, a.out, a.progress, a.turns, a.save_steps, a.resume, a.overwrite, a.prompts_per_step, a.report_to)
    try:
        t = get_task(task)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    if agents not in AGENT_KINDS:
        raise SettingsError(f"unknown agents {agents!r}; choose one of {', '.join(AGENT_KINDS)}.")
    if not isinstance(model, str) or not model.strip():
        raise SettingsError("--model is empty; give 'tiny', 'smollm2-135m', a hub id or a local path.")
    if isinstance(turns, int) and turns > 1 and t.transition is None:
        with_one = [name for name, other in TASKS.items() if other.transition is not None]
        raise SettingsError(f"--turns {turns} needs a transition, and the {task} task has none; the package has one for "
                            f"--task {' / '.join(with_one)} (level feedback).")
    settings = dict(task=task, model=model, agents=agents, steps=steps, G=G,
                    max_new_tokens=t.max_new_tokens if max_new_tokens is None else max_new_tokens,
                    lr=lr if lr is not None else (2e-3 if agents == "lora" else 5e-4), temperature=temperature,
                    beta=t.beta if beta is None else beta, eval_rows=eval_rows, seed=seed, turns=turns,
                    prompts_per_step=prompts_per_step)
    out_dir = Path(out if out is not None else f"runs/{task}")
    if out is None and resume is None and not overwrite and distributed.launch_rank() == 0:
        out_dir = next_free(out_dir)  # no --out: an earlier run in runs/<task> is kept, this one goes beside it
    try:
        cfg = run_config(settings, progress=progress, save_steps=save_steps, report_to=report_to,
                         logging_dir=str(out_dir / "tensorboard"))
        check_installed(cfg.trackers)
    except (ValueError, TrackerNotInstalledError) as exc:
        raise SettingsError(str(exc)) from None
    W = distributed.launch_world_size()
    if prompts_per_step % W:
        raise SettingsError(f"--prompts-per-step {prompts_per_step} with {W} processes (torchrun --nproc_per_node): "
                            f"each process takes prompts-per-step / {W} prompts per step, so give a multiple of {W}, "
                            f"e.g. --prompts-per-step {W}.")
    try:  # the task's data, read and checked before any model loads: a bad file is one line, not a traceback
        t.load("train")
        n_eval = len(t.load("eval"))
    except (ValueError, OSError) as exc:
        raise SettingsError(f"the {task} task's data cannot be used: {exc}") from None
    if isinstance(eval_rows, bool) or not isinstance(eval_rows, int) or not 1 <= eval_rows <= n_eval:
        raise SettingsError(f"--eval-rows {eval_rows!r} is not allowed: the {task} task has {n_eval} held-out rows, "
                            f"so give a number from 1 to {n_eval}.")
    device = _check_device(device)
    resume_info = None
    if resume is not None:
        check_resume_flags(resume, overwrite)
        run_dir, resume_info, saved = _resume_point(Path(resume))
        if out is not None and Path(out).resolve() != run_dir.resolve():
            raise SettingsError(f"--resume {resume} continues the run in {run_dir} and writes there; leave --out out "
                                f"(or give --out {run_dir}).")
        out, out_dir = str(run_dir), run_dir
        cfg = dataclasses.replace(cfg, logging_dir=str(out_dir / "tensorboard"))
        differ = [f"{SETTING_FLAGS[k]} {settings[k]!r} (the run has {saved.get(k)!r})" for k in SETTING_FLAGS
                  if settings[k] != saved.get(k)]
        if differ:
            raise SettingsError(f"--resume {resume}: the run was started with other settings: {'; '.join(differ)}. "
                                "A resumed run keeps its settings; leave those options out.")
        if resume_info["step"] > steps:
            raise SettingsError(f"--resume {resume}: its checkpoint is at step {resume_info['step']}, past --steps {steps}.")
        if resume_info["step"] == steps:
            raise SettingsError(f"--resume {resume}: that run is finished (all {steps} steps trained; its results are in "
                                f"{run_dir}/results.md). Evaluate its agents again with: magrpo-edu eval --checkpoint {run_dir}")
    if distributed.launch_rank() == 0:  # in a data-parallel launch only rank 0 writes (and rank 0 may already have)
        _check_out(out_dir, overwrite, resume is not None)
    return dict(settings=settings, save_steps=save_steps, config=cfg, device=device, out_dir=out_dir,
                progress=progress, overwrite=overwrite, resume=resume_info, halfway=halfway(steps))


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
        tqdm.write(f"Step {trainer.step} of {trainer.total_steps}: held-out joint reward {ev['eval/reward']:.3f}{was} "
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


def build_team(model: str, agents: str, device: str):
    """(tokenizer, the two agents) of a `magrpo-edu train` run: `train` and `eval` build them alike."""
    base, tok = load_model(model, device=device)
    # LoRA on the attention's q/v projections for the tiny model, where peft's per-layer overhead dominates
    # a step (benchmarks/PROFILE.md, "LoRA targets"); all linear layers for real models.
    targets = ["q_proj", "v_proj"] if model == "tiny" else "all-linear"
    team = lora_agents(base, 2, tokenizer=tok, target_modules=targets) if agents == "lora" else separate_agents(base, 2, tokenizer=tok)
    return tok, team


def run_eval(checkpoint: str, eval_rows: int | None = None, samples: int | None = None, device: str | None = None) -> dict:
    """`magrpo-edu eval --checkpoint DIR`: evaluate the agents saved by a `magrpo-edu train` run.

    DIR is the run's output folder or its checkpoint folder; the model, agents, task and sampling
    settings are the run's own. Prints and returns the trainer's evaluation (reward, levels, each
    agent's repetition and naturalness) on the first `eval_rows` held-out rows (default: the run's)
    and the comparison table's "magrpo" row (`samples` joint answers per row; default as `train`).
    Checked before any model loads: a folder without a train checkpoint, or eval_rows out of range,
    raises SettingsError."""
    _, info, run = _resume_point(Path(checkpoint), purpose="evaluate")
    task = run["task"]
    t = get_task(task)
    n_eval = len(t.load("eval"))
    rows_n = run["eval_rows"] if eval_rows is None else eval_rows
    if isinstance(rows_n, bool) or not isinstance(rows_n, int) or not 1 <= rows_n <= n_eval:
        raise SettingsError(f"--eval-rows {rows_n!r} is not allowed: the {task} task has {n_eval} held-out rows, "
                            f"so give a number from 1 to {n_eval}.")
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
        raise SettingsError(f"--samples {samples!r} is not allowed: give a whole number >= 1.")
    device = _check_device(device)
    tok, team = build_team(run["model"], run["agents"], device)
    reward, formatters, train_rows, eval_set = t.setup(tok)
    cfg = run_config(run, progress=False)
    rows = eval_set[:rows_n]
    trainer = MAGRPOTrainer(team, reward, formatters, train_rows, cfg, eval_dataset=rows,
                            transition=_transition(t, run["turns"]))
    try:
        trainer.load_checkpoint(info["path"])
    except ValueError as exc:
        raise SettingsError(f"cannot evaluate {checkpoint}: {exc}") from None
    ev = trainer.evaluate()
    n = samples if samples is not None else t.table_samples
    row = run_method("magrpo", team, formatters, rows, t.levels, t.prompt_task, t.max_reward, samples=n,
                     max_new_tokens=run["max_new_tokens"], temperature=run["temperature"], seed=run["seed"],
                     ks=tuple(k for k in (1, 5, 10) if k <= n))
    comp = sorted(k for k in ev if k.startswith(("eval/reward/", "eval/repetition/", "eval/naturalness/")))
    print(f"# {task}: the agents of {info['path']} (step {trainer.step} of {run['steps']}; model `{run['model']}`)\n")
    print(f"Trainer's evaluation, {rows_n} held-out rows x {cfg.num_generations} samples: joint reward "
          f"{ev['eval/reward']:.3f}; " + ", ".join(f"{k.split('/', 1)[1]} {ev[k]:.3f}" for k in comp) + "\n")
    print(markdown_table([row]))
    return dict(step=trainer.step, evaluate=ev, table=[row])


def before_after_examples(table, rows, samples: int, prompt_task: str, n: int = 3) -> list[dict]:
    """The first `n` rows' first samples from the untrained (parallel) and trained (magrpo) table rows
    that kept their texts: what results.md shows next to the numbers."""
    by = {r["method"]: r for r in table if "texts" in r}
    if "parallel" not in by or "magrpo" not in by:
        return []
    field = get_task(prompt_task).prompt_field
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
    fields of `config.TrainArguments` (the command line's options, with their defaults there), e.g.
    run_training(task="tldr", steps=300, out="runs/tldr").

    `out` defaults to runs/<task>; `save_steps`: checkpoint every N steps into <out>/checkpoint;
    `resume`: a run folder (or its checkpoint folder) to continue, with the same settings
    (`resume_settings` reads them); `overwrite`: replace an earlier run's results in `out`;
    `prompts_per_step`: prompts per optimiser step (over all processes when launched with torchrun);
    `report_to`: "tensorboard" (into <out>/tensorboard), "wandb", "trackio" or "none".

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
    s, t = plan["settings"], get_task(plan["settings"]["task"])
    team = f"2 {'LoRA agents on one frozen' if s['agents'] == 'lora' else 'full copies of the'} `{s['model']}` model"
    if plan["resume"] is not None:
        return (f"magrpo-edu train: resuming {plan['out_dir']} at step {plan['resume']['step']} of {s['steps']} "
                f"({s['task']}, {team}); then the evaluation of the trained agents, plots and results.md there.")
    n_base = len(untrained_methods(t.prompt_task))
    return "\n".join([
        f"magrpo-edu train: task {s['task']}, {team}, on {plan['device']}; results go to {plan['out_dir']}/",
        f"  1. evaluate the untrained agents and {n_base} prompt-level baselines on {s['eval_rows']} held-out rows",
        f"  2. train {s['steps']} MAGRPO steps (G = {s['G']} samples per agent, {s['max_new_tokens']} new tokens)"
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
    """The untrained agents on one in-distribution row (`Run.in_distribution`), writing tasks only."""
    in_dist_after: Optional[dict] = None
    """The trained agents on the same row."""

    def method(self, name: str, rows: Optional[list] = None, samples: Optional[int] = None) -> dict:
        """One comparison-table row for these agents (`baselines.run_method` with the run's settings), on
        the held-out rows unless `rows` is given."""
        t, s = self.task, self.plan["settings"]
        return run_method(name, self.team, self.formatters, self.rows if rows is None else rows, t.levels,
                          t.prompt_task, t.max_reward, keep_texts=True,
                          samples=t.table_samples if samples is None else samples,
                          max_new_tokens=s["max_new_tokens"], temperature=s["temperature"], seed=s["seed"])

    def in_distribution(self, name: str) -> Optional[dict]:
        """Writing tasks: the agents' first sample and its joint reward on one new row of the training
        data's own generator (`tasks.writing.in_distribution_row`), to show beside the held-out rows."""
        if self.task.prompt_task not in WRITING_FIELDS:
            return None
        row = in_distribution_row(self.task.prompt_task)
        r = self.method(name, rows=[row], samples=1)
        return dict(row=row, text=r["texts"][0], reward=r["pair_rewards"][0])


def build_run(plan: dict) -> Run:
    """Build: the model and the agents, the task, the trainer; then the untrained agents' evaluation
    and baselines (or, resuming, the checkpoint and what it recorded), and the output folder."""
    t0 = time.time()
    s, out_dir, main = plan["settings"], plan["out_dir"], distributed.launch_rank() == 0
    tok, team = build_team(s["model"], s["agents"], plan["device"])
    t = get_task(s["task"])
    reward, formatters, train_rows, eval_set = t.setup(tok)
    rows = eval_set[:s["eval_rows"]]
    try:
        trainer = MAGRPOTrainer(team, reward, formatters, train_rows, plan["config"], eval_dataset=rows,
                                transition=_transition(t, s["turns"]), checkpoint_dir=out_dir / "checkpoint")
    except ValueError as exc:  # e.g. --max-new-tokens beyond the model's context
        raise SettingsError(str(exc)) from None
    run = Run(plan, t, team, formatters, rows, trainer, None, [], None, [], main, not out_dir.exists(), t0)
    if plan["resume"] is not None:
        try:
            trainer.load_checkpoint(plan["resume"]["path"])
        except ValueError as exc:  # a damaged or mismatched file: one line, exit 2, not a traceback
            raise SettingsError(f"cannot resume {out_dir}: {exc}") from None
        run.before, run.table = trainer.metadata["before"], trainer.metadata["table"]
        run.in_dist_before = trainer.metadata.get("in_distribution_before")  # None in runs saved before it existed
        if main:
            print(f"Resuming {out_dir} at step {trainer.step} of {s['steps']}.", file=sys.stderr, flush=True)
    elif main:  # data parallel: rank 0 evaluates the untrained agents, the others go straight to training
        progress = plan["progress"]
        run.before = trainer.evaluate(progress=progress, desc="1. untrained agents")
        methods = untrained_methods(t.prompt_task)
        run.table = [run.method(m) for m in tqdm(methods, desc="1. baselines", disable=not progress)]
        run.in_dist_before = run.in_distribution("parallel")
        if not progress:
            _say(f"Untrained agents and {len(methods)} baselines evaluated ({time.time() - t0:.0f} s so far).")
    run.clock = _TrainClock(trainer.metadata.get("train_seconds", 0.0))
    run.resumed_at = trainer.metadata.get("resumed_at_steps", []) + ([trainer.step] if plan["resume"] is not None else [])
    trainer.metadata = dict(run={**s}, save_steps=plan["save_steps"], report_to=plan["config"].report_to,
                            before=run.before, table=run.table, in_distribution_before=run.in_dist_before,
                            train_seconds=run.clock.seconds(), resumed_at_steps=run.resumed_at)
    trainer.callbacks.append(run.clock)
    if main:  # data parallel: rank 0 evaluates halfway, the others wait for it at the next step's gather in train()
        trainer.callbacks.append(_Halfway(plan["halfway"], run.before, run.clock))
        _prepare_out(out_dir, plan["overwrite"] and plan["resume"] is None)
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
        if run.plan["save_steps"] is None:  # every finished run keeps its agents: `magrpo-edu eval --checkpoint` needs them
            trainer.save(out_dir / "checkpoint")
        after = trainer.evaluate(progress=run.plan["progress"], desc="3. trained agents")
        trainer.log_eval(after)
        finals = ["magrpo"] + (["magrpo_2turn"] if run.task.prompt_task == "coding" else [])  # coding: + a feedback turn
        table = list(run.table) + [run.method(m) for m in tqdm(finals, desc="3. comparison table", disable=not run.plan["progress"])]
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

    plan, s, t, trainer, team = run.plan, run.plan["settings"], run.task, run.trainer, run.team
    task, out_dir, before, prompt_task = s["task"], plan["out_dir"], run.before, t.prompt_task
    G, steps, lr, max_new_tokens, seed = s["G"], s["steps"], s["lr"], s["max_new_tokens"], s["seed"]
    prompts_per_step, samples = s["prompts_per_step"], t.table_samples
    _write_history(trainer, out_dir)
    during = [ev for ev in trainer.eval_history if ev["step"] < trainer.step]  # the halfway evaluation
    evals = [dict(before, step=0)] + during + [dict(after, step=trainer.step)]  # held-out: untrained, halfway, trained
    for name, fig in (("reward", viz.plot_rewards(trainer.history, title=f"{task}: joint reward per step", evals=evals)),
                      ("components", viz.plot_components(trainer.history)), ("agents", viz.plot_agents(trainer.history))):
        if fig is None:  # e.g. no reward components: no empty figure
            continue
        fig.savefig(out_dir / f"{name}.png", dpi=100)
        matplotlib.pyplot.close(fig)
    if prompt_task == "coding":
        fig = viz.plot_pass_at_k(table, title="coding: PassOrNot@k (solid) and Accuracy@k (dashed), held-out families")
        fig.savefig(out_dir / "pass_at_k.png", dpi=100)
        matplotlib.pyplot.close(fig)
    metric = "pass_or_not@1" if prompt_task == "coding" else "normalised"
    fig = viz.plot_comparison(table, metric, title=f"{task}: baselines vs MAGRPO ({metric})")
    fig.savefig(out_dir / "comparison.png", dpi=100)
    matplotlib.pyplot.close(fig)
    first = trainer.history[: max(1, len(trainer.history) // 10)]
    last = trainer.history[-max(1, len(trainer.history) // 10):]
    examples = before_after_examples(table, run.rows, samples, prompt_task)
    table = [{k: v for k, v in row.items() if k not in ("texts", "pair_rewards")} for row in table]
    in_dist = None  # writing tasks: one row of the training data's own world, beside the held-out ones
    if run.in_dist_before is not None and run.in_dist_after is not None:
        b, a = run.in_dist_before, run.in_dist_after
        in_dist = dict(id=b["row"]["id"], input=b["row"][t.prompt_field], before=b["text"], after=a["text"],
                       reward_before=b["reward"], reward_after=a["reward"])
    results = dict(task=task, model=s["model"], agents=s["agents"], steps=steps, num_generations=G, max_new_tokens=max_new_tokens,
                   learning_rate=lr, beta=plan["settings"]["beta"], prompts_per_step=prompts_per_step,
                   processes=distributed.world_size(), seed=seed, device=plan["device"], save_steps=plan["save_steps"],
                   resumed_at_steps=run.resumed_at, train_seconds=round(train_s, 1),
                   total_seconds=round(time.time() - run.t0, 1), eval_rows=before["eval/rows"],
                   eval_before=before, eval_after=after, comparison=table, examples=examples,
                   train_reward_first_10pct=sum(h["reward"] for h in first) / len(first),
                   train_reward_last_10pct=sum(h["reward"] for h in last) / len(last),
                   in_distribution_example=in_dist, eval_during_training=trainer.eval_history,
                   versions=dict(magrpo_edu=__version__, torch=torch.__version__, python=platform.python_version()))
    (out_dir / "results.json").write_text(json.dumps(results, indent=2))
    comp = sorted(k for k in after if k.startswith("eval/reward/"))
    lines = [f"# {task}: MAGRPO on `{s['model']}` ({s['agents']} agents)", "",
             f"{steps} steps, G={G}, lr={lr}, beta={plan['settings']['beta']}, {max_new_tokens} new tokens, seed {seed}, {plan['device']}"
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
    if s["model"] == "tiny" and prompt_task != "coding":
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
        shown.append((f"In distribution, for comparison: a new {prompt_task} row from the training data's own generator "
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
