"""`magrpo-edu train`: one complete, honest experiment, from the command line or from Python
(`magrpo_edu.run_training(task="tldr", max_steps=300)`).

Four parts, in `run_training`'s order:
  plan_run    (plan.py) checks every setting (the MAGRPOConfig, --eval-rows against the held-out rows, the
              device, the output folder, the checkpoint to resume) without loading a model; a
              mistake raises `SettingsError` and nothing is written;
  build_run   loads the model, builds the agents and the task (tasks/registry.py) and the trainer,
              evaluates the untrained agents and the baselines on held-out rows (or, resuming,
              reads them from the checkpoint);
  train_run   trains with MAGRPO (progress bar); the trainer evaluates once halfway (`plan.halfway`:
              the first trained result, printed at once), then the trained agents are evaluated
              again with the same seed;
  report_run  (report.py) writes to the output folder:
    history.json / history.csv   every logged step's metrics (see magrpo_edu.records for the glossary)
    samples.json                 the last logged groups: prompts, completions, rewards, advantages
    reward.png, agents.png       the curves (components.png too when the reward has levels)
    comparison.png               baselines vs MAGRPO (pass_at_k.png too for coding)
    results.json, results.md     model, settings, wall time, the evaluation untrained / halfway /
                                 trained, the baselines, and the agents' texts before and after on
                                 held-out rows (writing tasks: and one in-distribution row)
    checkpoint/                  the latest checkpoint (every save_steps steps and after the last,
                                 and whenever training stops early); `resume=` continues from it

One quantity, one figure: every comparison-table method draws as many samples per held-out row as the
evaluation (G), and its parallel and magrpo rows ARE the untrained and trained evaluations, their very
samples (`evaluation.row_from_evaluation`), so results.md, reward.png's diamonds and comparison.png give
the same number for the same pair.

Output folder: it is created only when there is something to write; a non-empty one is refused
unless overwrite=True (which removes the earlier run's files listed above, nothing else) or the
run resumes from it. Resume (resume=<folder>): the run's settings are stored in the checkpoint and
must match; the untrained-agent evaluation is read from the checkpoint, and the trained weights and
history come out identical to an uninterrupted run's. Ctrl-C or an error during training saves a
checkpoint and the history so far, says where, and re-raises.
"""
from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .. import distributed
from ..agents import load_lora_agents, lora_agents, separate_agents
from ..checkpoints import checkpoint_info
from ..config import MAGRPOConfig
from ..models import load_model
from ..progress import progress_bar
from ..tasks.registry import Task, get_task
from ..trainer import MAGRPOTrainer, TrainerCallback
from .describe import on_device, describe_plan
from ..evaluation import markdown_table, row_from_evaluation, run_method, untrained_methods
from .device import resolve_device
from .folders import SAVED_RUN_FIELDS, output_files, resume_point
from .plan import SettingsError, check_eval_rows, plan_run, transition_of
from .report import of_max, report_run, write_run_history


class _TrainClock(TrainerCallback):
    """Keeps the training wall time (over all sessions of a resumed run, the trainer's evaluations
    during training left out) in the checkpoint's metadata."""

    def __init__(self, trainer: MAGRPOTrainer):
        self.trainer, self.before, self.t0 = trainer, trainer.metadata.get("train_seconds", 0.0), time.time()

    def seconds(self) -> float:
        """Seconds spent training so far."""
        return self.before + time.time() - self.t0 - self.trainer.eval_seconds

    def on_step_end(self, trainer, record):
        trainer.metadata["train_seconds"] = self.seconds()


class _Announce(TrainerCallback):
    """Prints an evaluation during training (the halfway one) at once: the run's first trained result."""

    def __init__(self, before: Optional[dict]):
        self.before = before

    def on_evaluate(self, trainer, metrics):
        if not 0 < trainer.step < trainer.total_steps:
            return
        was = f" (untrained {self.before['eval/reward']:.3f})" if self.before else ""
        progress_bar.write(f"Step {trainer.step} of {trainer.total_steps}: held-out joint reward {metrics['eval/reward']:.3f}"
                           f"{was} on {metrics['eval/rows']} rows; training goes on.")


def _prepare_out(out_dir: Path, overwrite: bool) -> None:
    """Create the output folder; with overwrite, remove the earlier run's files (`folders.output_files` only)."""
    if overwrite and out_dir.is_dir():
        for name in output_files():
            p = out_dir / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
        for p in out_dir.glob(".checkpoint.*"):  # a save's temporary or previous folder
            shutil.rmtree(p, ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)


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
        write_run_history(trainer, out_dir)
        hist = f"the history so far ({out_dir}/history.json, history.csv, samples.json)"
    except Exception as exc:
        hist = f"no history ({exc})"
    print(f"\n{why} at step {trainer.step} of {total}. Saved {hist}{kept}.", file=sys.stderr, flush=True)


def build_team(model: str, agents: str, device: str, n: int = 2, task: Optional[Task] = None):
    """(tokenizer, the n agents) of a `magrpo-edu train` run: `train` and `eval` build them alike. LoRA agents
    start from the adapters of the task's recipe for this model when it has some (`Task.model_recipes`)."""
    base, tok = load_model(model, device=device)
    recipe = task.recipe_for(model) if task is not None and agents == "lora" else None
    if recipe is not None and recipe.start is not None:
        start = list(recipe.start())
        if len(start) != n:
            raise SettingsError(f"the {task.name} task's recipe for {model} starts {len(start)} agents from adapters; "
                                f"this run has {n}.")
        return tok, load_lora_agents(base, start, tokenizer=tok, names=[f"agent_{i}" for i in range(n)])
    # lora_agents' default targets (models.lora_targets): q/v on an embedded model, all linear layers on a real one.
    team = lora_agents(base, n, tokenizer=tok) if agents == "lora" else separate_agents(base, n, tokenizer=tok)
    return tok, team


def run_eval(checkpoint: str, eval_rows: int | None = None, samples: int | None = None, device: str | None = None) -> dict:
    """`magrpo-edu eval --checkpoint DIR`: evaluate the agents saved by a `magrpo-edu train` run.

    DIR is the run's output folder or its checkpoint folder; the model, agents, task and sampling
    settings are the run's own. Prints and returns the trainer's evaluation (reward, levels, each
    agent's repetition and naturalness) on the first `eval_rows` held-out rows (default: the run's)
    and the comparison table's "magrpo" row, built as `train` builds it: from the evaluation's own
    samples (G per row), so its reward is the evaluation's; `samples` other than G draws the row
    apart, that many joint answers per row (its reward then differs by the draw, and says so).
    Checked before any model loads: a folder without a train checkpoint, or eval_rows out of range,
    raises SettingsError."""
    _, info, run, saved_cfg = resume_point(Path(checkpoint), purpose="evaluate")
    task = run["task"]
    try:
        t = get_task(task)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    rows_n = check_eval_rows(t, run["eval_rows"] if eval_rows is None else eval_rows)
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
        raise SettingsError(f"--samples {samples!r} is not allowed: give a whole number >= 1.")
    device, device_why = resolve_device(device, run["model"])  # no --device: the run's model decides (device.default_device)
    cfg = MAGRPOConfig(**{**saved_cfg, "progress": False, "report_to": "none"})
    tok, team = build_team(run["model"], run["agents"], device, cfg.num_agents, t)
    reward, formatters, train_rows, eval_set = t.setup(tok)
    rows = eval_set[:rows_n]
    trainer = MAGRPOTrainer(team, reward, formatters, train_rows, cfg, eval_dataset=rows,
                            transition=transition_of(t, cfg.num_turns, tok))
    try:
        trainer.load_checkpoint(info["path"])
    except ValueError as exc:
        raise SettingsError(f"cannot evaluate {checkpoint}: {exc}") from None
    ev, drawn = trainer.evaluate(return_samples=True)
    G = drawn["per_row"]
    if samples is None or samples == G:  # the table's row from the evaluation's own samples: one figure
        row = row_from_evaluation("magrpo", t, rows, ev, drawn, [a.name for a in team])
        where = f"the comparison table's magrpo row, from the same {rows_n} x {G} samples:"
    else:
        row = run_method("magrpo", team, t, rows, formatters, samples=samples, config=cfg,
                         ks=tuple(k for k in (1, 5, 10) if k <= samples), row_by_row=True)
        where = (f"the comparison table's magrpo row on {rows_n} x {samples} samples of its own (--samples {samples}; "
                 f"its reward differs from the evaluation's by the draw):")
    maxima = t.component_max()
    comp = sorted(k for k in ev if k.startswith(("eval/reward/", "eval/repetition/", "eval/naturalness/")))
    print(f"# {task}: the agents of {info['path']} (step {trainer.step} of {cfg.max_steps}; model `{run['model']}`; "
          f"{on_device(device, device_why)})\n")
    shown = [f"{k.split('/', 1)[1]} {of_max(ev[k], maxima.get(k[12:]) if k.startswith('eval/reward/') else None)}"
             for k in comp]  # each reward component beside the most it earns: "reward/aux_defined 0.400 of 0.4"
    print(f"Trainer's evaluation, {rows_n} held-out rows x {G} samples: joint reward "
          f"{ev['eval/reward']:.3f}; " + ", ".join(shown) + "\n")
    print(where + "\n")
    print(markdown_table([row], maxima))
    return dict(step=trainer.step, evaluate=ev, table=[row])


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


@dataclass(kw_only=True)
class Run:
    """A built experiment (`build_run`): what `train_run` trains and `report_run` writes about."""

    plan: dict
    task: Task
    team: list
    formatters: list
    rows: list
    """The held-out rows of the evaluation and the comparison table."""
    trainer: MAGRPOTrainer
    main: bool
    """Rank 0 (the only process when not data parallel): it evaluates and writes."""
    created: bool
    """The output folder did not exist before this run (an error before the first step removes it again)."""
    t0: float
    before: Optional[dict] = None
    """The untrained agents' evaluation (None on the data-parallel ranks other than 0)."""
    table: list = field(default_factory=list)
    """Comparison table rows so far (the untrained baselines; train_run adds the trained agents')."""
    clock: Optional["_TrainClock"] = None
    resumed_at: list = field(default_factory=list)
    in_dist_before: Optional[dict] = None
    """The untrained agents on one in-distribution row (`Run.in_distribution`), for tasks that have one."""
    in_dist_after: Optional[dict] = None
    """The trained agents on the same row."""

    @property
    def samples(self) -> int:
        """Joint answers per held-out row of the evaluation, and so of every comparison-table row."""
        return self.trainer.eval_samples_per_row()

    def method(self, name: str, rows: Optional[list] = None, samples: Optional[int] = None) -> dict:
        """One comparison-table row for these agents (`evaluation.run_method` with the run's settings, one
        row's samples per generate call as the evaluation draws them), on the held-out rows unless `rows`
        is given, with as many samples per row as the evaluation unless `samples` is given."""
        c = self.plan["config"]
        return run_method(name, self.team, self.task, self.rows if rows is None else rows, self.formatters,
                          keep_texts=True, samples=self.samples if samples is None else samples, config=c,
                          row_by_row=True)

    def evaluated(self, name: str, metrics: dict, samples: dict) -> dict:
        """The comparison-table row `name` (parallel: the untrained agents; magrpo: the trained ones) from
        an evaluation's own samples (`evaluation.row_from_evaluation`): its reward is the evaluation's."""
        return row_from_evaluation(name, self.task, self.rows, metrics, samples, [a.name for a in self.team],
                                   keep_texts=True)

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
    tok, team = build_team(r.model, r.agents, plan["device"], cfg.num_agents, t)
    reward, formatters, train_rows, eval_set = t.setup(tok)
    rows = eval_set[:r.eval_rows]
    try:
        trainer = MAGRPOTrainer(team, reward, formatters, train_rows, cfg, eval_dataset=rows,
                                transition=transition_of(t, cfg.num_turns, tok), checkpoint_dir=out_dir / "checkpoint",
                                eval_at=[plan["halfway"]] if plan["halfway"] else [])
    except ValueError as exc:  # e.g. --max-new-tokens beyond the model's context
        raise SettingsError(str(exc)) from None
    run = Run(plan=plan, task=t, team=team, formatters=formatters, rows=rows, trainer=trainer, main=main,
              created=not out_dir.exists(), t0=t0)
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
        run.before, drawn = trainer.evaluate(progress=progress, desc="1. untrained agents", return_samples=True)
        methods = untrained_methods(t)  # "parallel" is the untrained agents' evaluation itself: one figure, not two
        run.table = [run.evaluated(m, run.before, drawn) if m == "parallel" else run.method(m)
                     for m in progress_bar(methods, desc="1. baselines", disable=not progress)]
        run.in_dist_before = run.in_distribution("parallel")
        if not progress:
            _say(f"Untrained agents and {len(methods)} baselines evaluated ({time.time() - t0:.0f} s so far).")
    run.clock = _TrainClock(trainer)
    run.resumed_at = trainer.metadata.get("resumed_at_steps", []) + ([trainer.step] if plan["resume"] is not None else [])
    trainer.metadata = dict(run={k: getattr(r, k) for k in SAVED_RUN_FIELDS}, before=run.before, table=run.table, in_distribution_before=run.in_dist_before,
                            train_seconds=run.clock.seconds(), resumed_at_steps=run.resumed_at)
    trainer.callbacks.append(run.clock)
    if main:  # data parallel: rank 0 writes
        trainer.callbacks.append(_Announce(run.before))
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
        after, drawn = trainer.evaluate(progress=progress, desc="3. trained agents", return_samples=True)
        trainer.log_eval(after)
        table = list(run.table) + [run.evaluated("magrpo", after, drawn)]  # the trained agents' evaluation itself
        if run.task.transition is not None and run.plan["config"].num_turns > 1:  # trained to answer feedback:
            table.append(run.method("magrpo_2turn"))  # the second-turn row only for a multi-turn run
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
