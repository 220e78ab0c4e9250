"""A run's plan: every setting of `magrpo-edu train` (and `eval`) checked before a model loads.

`plan_run` resolves and checks the settings (RunArguments and MAGRPOConfig fields) into the plan that
`experiment.build_run` builds: the MAGRPOConfig (`run_defaults` fills what depends on the task or
the agents), the device (`device.py`), the output folder and the checkpoint to resume (`folders.py`). A mistake raises
`SettingsError` naming the setting, the value and what to do, and nothing is written.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
from pathlib import Path
from typing import Optional

from .. import distributed
from ..config import AGENT_KINDS, MAGRPOConfig, RunArguments, SettingsError
from ..models import KNOWN_NAMES, SMOLLM2_ID
from ..tasks.registry import TASKS, Task, get_task
from ..tracking import TrackerNotInstalledError, check_installed
from .device import resolve_device
from .folders import SAVED_RUN_FIELDS, check_out, check_resume_flags, next_free, resume_point


RUN_FIELDS = tuple(f.name for f in dataclasses.fields(RunArguments))
CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(MAGRPOConfig)
                      if f.name not in ("num_agents", "logging_dir", "num_train_epochs"))
"""The MAGRPOConfig fields a run takes: all but the task's num_agents, the output folder's logging_dir
and num_train_epochs (a run counts max_steps)."""
RESUME_FREE = ("progress", "save_steps", "report_to")
"""MAGRPOConfig fields a resumed run may change; every other one must be the run's own."""
SEPARATE_LEARNING_RATE = 5e-4
"""The learning rate of `--agents separate` (full copies) when not given: a full model takes a smaller step than a
LoRA adapter (MAGRPOConfig's own default, 2e-3, is the LoRA agents')."""


def settings_layers(task: Task, agents: str, model: str | None = None) -> list[tuple[str, dict]]:
    """A run's MAGRPOConfig values below the user's, lowest first, each with where it comes from: one precedence
    order (MAGRPOConfig's own default < the agent kind < the task < the task's LoRA recipe < the recipe measured for
    `model` on this task < what the run gives, which `plan_run` lays on top).

    * the agent kind: full copies (`--agents separate`) take a smaller learning rate (`SEPARATE_LEARNING_RATE`);
      MAGRPOConfig's own defaults (2e-3, 300 steps: the quick start's) are the LoRA agents';
    * the task: its agents, completion budget and KL leash, its sampling (`Task.sampling`, else MAGRPOConfig's
      plain sampling);
    * for LoRA agents, the task's measured recipe (`Task.lora_recipe`: coding's G, problems per step, learning rate
      and steps), then the recipe measured for `model` on this task where it has one (`Task.model_recipes`:
      SmolLM2-135M-Instruct on coding)."""
    recipe = task.recipe_for(model) if agents == "lora" else None
    return [(f"magrpo-edu train's default for --agents {agents}",
             dict(learning_rate=SEPARATE_LEARNING_RATE) if agents == "separate" else {}),
            (f"the {task.name} task", dict(num_agents=task.num_agents, max_new_tokens=task.max_new_tokens, beta=task.beta,
                                          **task.sampling_settings())),
            (f"the {task.name} task's LoRA recipe", dict(task.lora_recipe) if agents == "lora" else {}),
            (f"the {model} recipe on {task.name}" + (f": {recipe.source}" if recipe is not None and recipe.source else ""),
             dict(recipe.config) if recipe is not None else {})]


def run_defaults(task: Task, agents: str, model: str | None = None) -> dict:
    """The MAGRPOConfig values that depend on the task, the agents or the model, used where a run's settings leave
    the field out (every other default is MAGRPOConfig's own): `settings_layers` merged in their order."""
    out: dict = {}
    for _, values in settings_layers(task, agents, model):
        out.update(values)
    return out


def config_for(task: str | Task = RunArguments.task, agents: str = RunArguments.agents, model: str | None = None,
               **given) -> MAGRPOConfig:
    """The MAGRPOConfig `magrpo-edu train` would train with, for a Python user who builds the agents and the trainer:
    `settings_layers` of `task` (a registered name or a Task), the agent kind ("lora" or "separate") and `model` (None:
    the task's, `Task.default_model`), in their order, with `given` (MAGRPOConfig fields) on top, checked by MAGRPOConfig.

    >>> config_for("coding", model="smollm2-135m").learning_rate, config_for("tldr", max_steps=20).max_steps
    (0.0003, 20)
    """
    t = task if isinstance(task, Task) else get_task(task)
    if agents not in AGENT_KINDS:
        raise ValueError(f"unknown agents {agents!r}; choose one of {', '.join(AGENT_KINDS)}.")
    unknown = sorted(set(given) - {f.name for f in dataclasses.fields(MAGRPOConfig)})
    if unknown:
        raise ValueError(f"config_for takes MAGRPOConfig's fields; {', '.join(map(repr, unknown))} is not one "
                         "(magrpo-edu train --help lists them).")
    if model is None:
        model = t.default_model(given.get("num_turns", MAGRPOConfig.num_turns))
    return MAGRPOConfig(**{**run_defaults(t, agents, model), **given})


def settings_sources(task: Task, agents: str, model: str | None, given: dict) -> dict:
    """{MAGRPOConfig field: where its value comes from} for the fields a run does not leave at MAGRPOConfig's own
    default: the highest layer of `settings_layers` that sets it, or "given" for the run's own settings."""
    out = {}
    for label, values in settings_layers(task, agents, model):
        out.update(dict.fromkeys(values, label))
    out.update(dict.fromkeys(given, "given"))
    return out


def did_you_mean(value, known) -> str:
    """"; did you mean 'x'?" naming the known name closest to `value` (difflib.get_close_matches,
    case-insensitive), or "" when none is close: what an unknown task, model or choice adds to its error."""
    if not isinstance(value, str):
        return ""
    known = [str(k) for k in known]
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(value.strip().lower(), list(by_lower), n=1, cutoff=0.6)
    return f"; did you mean {by_lower[close[0]]!r}?" if close else ""


def check_model_name(model: str) -> None:
    """Refuse, before any model loads, a --model that `models.load_model` cannot take in any way: not a
    known name (case-insensitive), not an existing file or folder, not shaped like a hub id (owner/name)
    nor like a path; the error names the closest known name. Anything else is left to `load_model`
    (a hub id is looked up only when the model loads)."""
    key = model.strip().lower()
    if key in {k.lower() for k in KNOWN_NAMES} or key == SMOLLM2_ID.lower() or Path(model).expanduser().exists():
        return
    if "/" in model or "\\" in model or model.startswith((".", "~")):  # a hub id (owner/name) or a path
        return
    raise SettingsError(f"unknown model name {model!r}{did_you_mean(model, KNOWN_NAMES) or '.'} The known names are "
                        f"{', '.join(map(repr, KNOWN_NAMES))} (case-insensitive); --model also takes a hub id "
                        "(owner/name, e.g. HuggingFaceTB/SmolLM2-135M-Instruct) or a local folder.")


def flag(name: str) -> str:
    """The command-line option of a setting, as people type it (`--max-new-tokens`)."""
    return "--" + name.replace("_", "-")


def halfway(steps) -> Optional[int]:
    """The step at which `magrpo-edu train` evaluates the agents once during training (the trainer's `eval_at`),
    so the first trained result shows in about half the run's time (README's quick start gives
    the timings); None for runs under 4 steps."""
    return steps // 2 if steps >= 4 else None  # steps is checked (an integer >= 1) before this is asked


def transition_of(task: Task, turns: int, tokenizer=None):
    """The run's multi-turn transition (the task's own, e.g. coding's level feedback, in the form the
    agents' `tokenizer` reads) when turns > 1, else None."""
    return task.transition_for(tokenizer) if turns > 1 else None


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
    depends on the task, the agents or the model; "sources" says where each value that is not MAGRPOConfig's own
    default came from, `settings_sources`), the device and why (`resolve_device`: with no device, the
    embedded models take the CPU, others CUDA when available), the output folder and the checkpoint to resume.
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
        run_dir, resume_info, saved_run, saved_cfg = resume_point(Path(resume))
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
    task_name = given_run.get("task", RunArguments.task)
    if isinstance(task_name, str) and task_name not in TASKS:
        raise SettingsError(f"unknown task {task_name!r}{did_you_mean(task_name, TASKS) or '.'} The registered tasks are "
                            f"{', '.join(TASKS)} (add one with magrpo_edu.tasks.registry.register).")
    try:
        task = get_task(task_name)
        if given_run.get("model") is None:  # no --model: the task's own (its multi-turn model for --num-turns > 1)
            given_run["model"] = task.default_model(given_cfg.get("num_turns", MAGRPOConfig.num_turns))
        run = RunArguments(**given_run)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    if run.agents not in AGENT_KINDS:
        raise SettingsError(f"unknown agents {run.agents!r}; choose one of {', '.join(AGENT_KINDS)}.")
    if not isinstance(run.model, str) or not run.model.strip():
        raise SettingsError("--model is empty; give 'tiny', 'smollm2-135m', a hub id or a local path.")
    check_model_name(run.model)
    out_dir = Path(run.out if run.out is not None else f"runs/{run.task}")
    if run.out is None and not overwrite and distributed.launch_rank() == 0:
        out_dir = next_free(out_dir)  # no --out: an earlier run in runs/<task> is kept, this one goes beside it
    if saved_cfg is not None:  # the run's own config; this command line may change only RESUME_FREE fields
        values = {**saved_cfg, "progress": True, **given_cfg}
        sources = dict.fromkeys(saved_cfg, f"the run being resumed ({resume})") | dict.fromkeys(given_cfg, "given")
    else:
        values = {**run_defaults(task, run.agents, run.model), **given_cfg}
        sources = settings_sources(task, run.agents, run.model, given_cfg)
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
    if cfg.dynamic_sampling and W > 1:
        raise SettingsError(f"--dynamic-sampling {cfg.dynamic_sampling} with {W} processes (torchrun): dynamic sampling is "
                            "single-process only (every process would draw the same further problems); leave it out "
                            "or launch one process.")
    if cfg.prompts_per_step % W:
        raise SettingsError(f"--prompts-per-step {cfg.prompts_per_step} with {W} processes (torchrun --nproc_per_node): "
                            f"each process takes prompts-per-step / {W} prompts per step, so give a multiple of {W}, "
                            f"e.g. --prompts-per-step {W}.")
    try:  # the task's data, read and checked before any model loads: a bad file is one line, not a traceback
        task.load("train")
    except (ValueError, OSError) as exc:
        raise SettingsError(f"the {run.task} task's data cannot be used: {exc}") from None
    check_eval_rows(task, run.eval_rows)
    device, device_why = resolve_device(run.device, run.model)
    if resume_info is not None:
        steps = cfg.max_steps
        if resume_info["step"] > steps:
            raise SettingsError(f"--resume {resume}: its checkpoint is at step {resume_info['step']}, past --max-steps {steps}.")
        if resume_info["step"] == steps:
            raise SettingsError(f"--resume {resume}: that run is finished (all {steps} steps trained; its results are in "
                                f"{out_dir}/results.md). Evaluate its agents again with: magrpo-edu eval --checkpoint {out_dir}. "
                                "A resumed run keeps its --max-steps, so to train for more steps start a new run with "
                                f"--steps N and --out {next_free(out_dir)}.")
    if distributed.launch_rank() == 0:  # in a data-parallel launch only rank 0 writes (and rank 0 may already have)
        check_out(out_dir, overwrite, resume is not None)
    return dict(run=run, task=task, config=cfg, device=device, device_why=device_why, out_dir=out_dir,
                resume=resume_info, halfway=halfway(cfg.max_steps), sources=sources)


def check_eval_rows(task, eval_rows) -> int:
    """`eval_rows` checked against the task's held-out set (read here, before any model loads): a whole number from 1
    to the number of held-out rows, else SettingsError naming the range. Returns it. `train` and `eval` both check so."""
    try:
        n_eval = len(task.load("eval"))
    except (ValueError, OSError) as exc:
        raise SettingsError(f"the {task.name} task's data cannot be used: {exc}") from None
    if isinstance(eval_rows, bool) or not isinstance(eval_rows, int) or not 1 <= eval_rows <= n_eval:
        raise SettingsError(f"--eval-rows {eval_rows!r} is not allowed: the {task.name} task has {n_eval} held-out rows, "
                            f"so give a number from 1 to {n_eval}.")
    return eval_rows
