"""`MAGRPOTrainer`: the loop around the steps of `magrpo_edu.algorithm`, plus the plumbing a real run needs.

Plumbing only (the algorithm lives in `magrpo_edu.algorithm`: a training step calls
`algorithm.magrpo_step`, steps 1-7, with this trainer's rows and seed): data order and seeding, one AdamW
per agent, several prompts per step (`config.prompts_per_step`, gradient accumulation) and data
parallel over processes (`magrpo_edu.distributed`, launched with torchrun; its gradient reduction
is magrpo_step's `reduce_gradients` hook), the history of logged metrics, a bounded log of
samples for the notebooks' explorers, callbacks, run tracking (`config.report_to`,
`magrpo_edu.tracking`), a progress bar, evaluation and its schedule (`config.eval_steps` and
`eval_at`, `evaluation_due`), and checkpoints that resume exactly.

Each step's record (the logged metrics and their glossary) is made in `magrpo_edu.records`;
checkpoints are written and read in `magrpo_edu.checkpoints`.

Checkpoints and resume (`save`, `load`, `load_checkpoint`, `config.save_steps`): resuming reproduces
the uninterrupted run's weights and history exactly (`checkpoints` has the layout).
With config.save_steps and checkpoint_dir=..., the trainer saves every save_steps steps and
after the last step, when the step is completely recorded (after on_log and on_step_end).
Ctrl-C during `train()` (main thread): the current step is finished, then KeyboardInterrupt is
raised with the trainer at a step boundary, ready to `save`; a second Ctrl-C stops at once, and
if that lands inside an optimiser update, `save` refuses (the weights are between two steps).
"""
from __future__ import annotations

import collections
import contextlib
import math
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch
from .progress import progress_bar

from . import distributed
from .agents import Agent, has_reference, team_backend
from .algorithm import format_prompts, magrpo_step
from .checkpoints import find_checkpoint, load_checkpoint, save_checkpoint, saved_config
from .config import MAGRPOConfig
from .evaluation import EVAL_SEED, evaluate_team
from .backends import check_prompt_lengths
from .records import mean_record, prompt_record, sample_record
from .tracking import make_callbacks


class TrainerCallback:
    """Subclass and override what you need; the hooks get the trainer and a plain dict.

    Order within a step: the step's record is stored (in the history or the pending records of the
    next logged average), `on_log` runs when the step logs, the evaluation runs when it is due
    (`on_evaluate`), then `on_step_end`: the step is complete there, so a checkpoint saved in it
    resumes exactly. `on_train_end` runs when `train()` returns or stops."""

    def on_step_end(self, trainer: "MAGRPOTrainer", record: dict) -> None:  # every step, once it is recorded
        pass

    def on_log(self, trainer: "MAGRPOTrainer", record: dict) -> None:  # every logging_steps steps
        pass

    def on_evaluate(self, trainer: "MAGRPOTrainer", metrics: dict) -> None:  # eval_steps evaluations, log_eval
        pass

    def on_train_end(self, trainer: "MAGRPOTrainer") -> None:  # train() finished or stopped
        pass


def _check_arguments(agents, reward_fn, formatters, train_dataset, c: MAGRPOConfig, transition, checkpoint_dir) -> None:
    """What `MAGRPOTrainer` refuses before it builds anything: each mistake named, with what to give instead."""
    if len(agents) != c.num_agents:
        raise ValueError(f"MAGRPOTrainer got {len(agents)} agents but config.num_agents={c.num_agents}.")
    if len(formatters) != c.num_agents:
        raise ValueError(f"MAGRPOTrainer got {len(formatters)} formatters for {c.num_agents} agents; "
                         "give one formatter (row -> prompt) per agent.")
    if not callable(reward_fn):
        raise ValueError(f"reward_fn must be callable, got {type(reward_fn).__name__}.")
    if train_dataset is None or len(train_dataset) == 0:
        raise ValueError("train_dataset is empty: give at least one row.")
    if c.num_turns > 1 and transition is None:
        raise ValueError(f"config.num_turns={c.num_turns} needs transition=..., a function "
                         "(prompts, completions, histories) -> next prompt per agent.")
    if c.save_steps is not None and checkpoint_dir is None:
        raise ValueError(f"config.save_steps={c.save_steps} needs checkpoint_dir=..., the folder to save "
                         "checkpoints into (or set save_steps=None and call trainer.save() yourself).")
    if c.dynamic_sampling and distributed.launch_world_size() > 1:
        raise ValueError(f"config.dynamic_sampling={c.dynamic_sampling} is single-process only: its further problems are "
                         "drawn from the step's seed, so every process would draw the same ones. Set it to 0 for a "
                         "data-parallel launch (torchrun), or train on one process.")
    if c.beta > 0:
        missing = [a.name for a in agents if not has_reference(a)]
        if missing:
            raise ValueError(f"config.beta={c.beta} needs a frozen reference model for every agent, and agent(s) "
                             f"{missing} have none: build them with separate_agents/heterogeneous_agents "
                             "(reference=True) or lora_agents, or set agent.reference = frozen_copy(model).")


@contextlib.contextmanager
def _stop_after_the_step(trainer):
    """While `trainer` trains: the first SIGINT asks to stop after the current step, a second one stops now."""
    trainer._stop_requested = False
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if previous is not signal.default_int_handler:
        yield  # not ours to change (a thread, SIGINT ignored, someone else's handler): left exactly as found
        return

    def handler(signum, frame):
        if trainer._stop_requested:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        trainer._stop_requested = True
        print(f"\nCtrl-C: finishing step {trainer.step + 1}, then stopping (press Ctrl-C again to stop at once).",
              file=sys.stderr, flush=True)

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)  # exactly what was there before
        trainer._stop_requested = False


class MAGRPOTrainer:
    """Train n agents with MAGRPO on a joint reward.

    agents        list of `Agent` (see `lora_agents`, `separate_agents`, `heterogeneous_agents`)
    reward_fn     joint reward: (completions per agent, row) -> one float per joint action
    formatters    one callable per agent: row -> that agent's prompt
    train_dataset a sequence of rows (dicts)
    checkpoint_dir  where `config.save_steps` checkpoints go (needed when save_steps is set)
    eval_at       steps after which to evaluate on eval_dataset besides every config.eval_steps (not the last)

    `metadata` (a JSON-able dict, empty by default) is saved with every checkpoint and restored by
    `load_checkpoint`; `magrpo-edu train` keeps its run settings and pre-training evaluation there.
    """

    def __init__(self, agents: Sequence[Agent], reward_fn: Callable, formatters: Sequence[Callable],
                 train_dataset: Sequence[Any], config: Optional[MAGRPOConfig] = None,
                 eval_dataset: Optional[Sequence[Any]] = None, transition: Optional[Callable] = None,
                 callbacks: Sequence[TrainerCallback] = (), checkpoint_dir: str | Path | None = None,
                 eval_at: Sequence[int] = ()):
        self.config = config or MAGRPOConfig(num_agents=len(agents))
        c = self.config
        _check_arguments(agents, reward_fn, formatters, train_dataset, c, transition, checkpoint_dir)
        team_backend(agents)  # one backend for the whole team (steps 2 and 6), or a clear error now
        self.agents, self.reward_fn, self.formatters = list(agents), reward_fn, list(formatters)
        self.train_dataset, self.eval_dataset = train_dataset, eval_dataset
        self.transition, self.callbacks = transition, list(callbacks)
        self.eval_at = frozenset(eval_at)
        if distributed.launched():  # started by torchrun: join the other processes (see magrpo_edu.distributed)
            distributed.init(self.agents[0].device)
        W = distributed.world_size()
        if c.prompts_per_step % W:
            raise ValueError(f"config.prompts_per_step={c.prompts_per_step} is not a multiple of the {W} processes of "
                             f"this data-parallel run: each process takes prompts_per_step / {W} prompts per step, so "
                             f"use prompts_per_step={W * max(1, c.prompts_per_step // W)} (or launch "
                             f"{c.prompts_per_step} processes per prompt count).")
        distributed.broadcast_parameters(self.agents)  # every process starts from rank 0's weights
        if c.trackers and distributed.is_main_process():
            self.callbacks += make_callbacks(c)
        for a in self.agents:  # before AdamW, whose own error ("empty parameter list") names no agent
            if not a.trainable_parameters():
                raise ValueError(f"agent {a.name} has no trainable parameters: every parameter has requires_grad=False "
                                 "(a frozen model, or a peft model whose adapter is not active). Build the team with "
                                 "lora_agents / separate_agents, or unfreeze the parameters to train.")
        self.optimizers = [torch.optim.AdamW(a.trainable_parameters(), lr=c.learning_rate,
                                             weight_decay=c.weight_decay) for a in self.agents]
        self.step = 0
        self.history: list[dict] = []
        self.eval_history: list[dict] = []
        self.eval_seconds = 0.0  # spent in the evaluations during training (`evaluation_due`)
        self.samples: collections.deque = collections.deque(maxlen=c.sample_log_size)
        self.pending_records: list[dict] = []  # steps recorded since the last log (a checkpoint keeps them)
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        self.metadata: dict = {}
        self.torn_step: Optional[int] = None  # set when an interrupt landed inside a step's update (no checkpoint then)
        self._stop_requested = False
        self._check_context()

    def _check_context(self) -> None:
        """The first training prompt plus max_new_tokens must fit each agent's context window, checked
        when the trainer is built with the backends' one context check (`backends.check_prompt_lengths`),
        which the backend runs again on every prompt it samples, later turns included."""
        try:
            prompts = format_prompts(self.formatters, self.train_dataset[self.row_index(0)], f"train row {self.row_index(0)}")
        except Exception:  # train() reports a failing formatter with the row
            return
        for a, p in zip(self.agents, prompts):
            check_prompt_lengths(a, [p], self.config.max_new_tokens)

    # ------------------------------------------------------------------------------ data order
    @property
    def total_steps(self) -> int:
        c = self.config
        if c.max_steps is not None:
            return c.max_steps
        return max(1, math.ceil(c.num_train_epochs * len(self.train_dataset) / c.prompts_per_step))

    def prompt_indices(self, step: int) -> list[int]:
        """The global prompt numbers THIS process trains on in step `step` (0-based): prompts
        step*P ... step*P + P - 1 of the data stream (P = config.prompts_per_step), split evenly and
        in order over the data-parallel processes. One process, P = 1 (the paper): [step]."""
        P, W, r = self.config.prompts_per_step, distributed.world_size(), distributed.rank()
        per = P // W
        return list(range(step * P + r * per, step * P + (r + 1) * per))

    def row_index(self, prompt: int) -> int:
        """Which training row global prompt number `prompt` uses (with one prompt per step, step
        `prompt`'s row): a fresh seeded permutation every epoch."""
        N = len(self.train_dataset)
        epoch, k = divmod(prompt, N)
        # torch takes seeds modulo 2**64 (negative ones too); reducing first keeps big seeds in range
        g = torch.Generator().manual_seed((self.config.seed * 7919 + epoch) % 2**64)
        return int(torch.randperm(N, generator=g)[k])

    def extra_rows(self, step: int):
        """Dynamic sampling's source of further rows in step `step` (0-based; config.dynamic_sampling): a callable
        -> (row index, row), uniform over the training set from a generator seeded by (config.seed, step), so a
        resumed run draws what an uninterrupted one would."""
        N = len(self.train_dataset)
        g = torch.Generator().manual_seed((self.config.seed * 7919 + 104_729 * (step + 1) + 1) % 2**64)

        def draw():
            i = int(torch.randint(N, (1,), generator=g))
            return i, self.train_dataset[i]
        return draw

    def prompt_seed(self, prompt: int) -> int:
        """The seed of global prompt number `prompt`'s sampling: a function of (config.seed, prompt) alone, so a
        resumed run samples exactly what an uninterrupted one would, and a prompt samples the same in any
        process of a data-parallel run."""
        return self.config.seed * 1_000_003 + prompt

    def evaluation_due(self, step: int) -> bool:
        """Whether the trainer evaluates on its eval set after step `step`: every config.eval_steps steps,
        and at the steps of `eval_at` before the last (`magrpo-edu train`: once halfway)."""
        c = self.config
        return bool(c.eval_steps and step % c.eval_steps == 0) or (step in self.eval_at and step < self.total_steps)

    # ------------------------------------------------------------------------------ training
    def train(self) -> list[dict]:
        """Run until `total_steps`; can be called again after an error or to continue a resumed run.

        Ctrl-C (in the main thread) finishes the current step, then raises KeyboardInterrupt with the
        trainer at a step boundary (save it with `save`); a second Ctrl-C stops at once."""

        c = self.config
        bar = progress_bar(total=self.total_steps, initial=self.step, desc="MAGRPO", dynamic_ncols=True,
                   disable=not c.progress or not distributed.is_main_process())
        try:
            with _stop_after_the_step(self):
                while self.step < self.total_steps:
                    rec = self.training_step()
                    bar.update(1)
                    bar.set_postfix(reward=f"{rec['reward']:.3f}", loss=f"{sum(rec[k] for k in rec if k.startswith('loss/')) / c.num_agents:.3f}")
                    # data parallel: every process stops after the same step (Ctrl-C reaches them at different moments)
                    if any(distributed.gather(self._stop_requested)):
                        raise KeyboardInterrupt(f"training stopped by Ctrl-C after step {self.step}")
        finally:
            bar.close()
            self._call("on_train_end")
        return self.history

    def _optimizer_steps(self) -> float:
        return sum(float(st["step"]) for o in self.optimizers for st in o.state.values() if "step" in st)

    def training_step(self) -> dict:
        """One MAGRPO step; returns that step's metrics.

        The step is `algorithm.magrpo_step` (steps 1-7) on this process's rows (`prompt_indices`,
        `row_index`; one, the paper's case), each sampled with the RNG seeded from (seed, prompt
        number) (`prompt_seed`), with the data-parallel sum of the gradients
        (`distributed.all_reduce_gradients`) as its `reduce_gradients` hook. Then store the record
        (the mean over the step's prompts, gathered from every process) and the samples; log
        (on_log) and evaluate when due (`evaluation_due`); on_step_end; save when save_steps is due."""
        c = self.config
        step0 = self.step
        t0 = time.perf_counter()
        opt_steps = self._optimizer_steps()
        try:
            prompts = self.prompt_indices(step0)  # this process's prompts: consecutive numbers, so consecutive seeds
            rows = [self.row_index(p) for p in prompts]
            done = magrpo_step(self.agents, self.optimizers, self.formatters, [self.train_dataset[i] for i in rows],
                               self.reward_fn, c, seed=self.prompt_seed(prompts[0]), transition=self.transition,
                               reduce_gradients=distributed.all_reduce_gradients,
                               where=[f"train row {i}" for i in rows],
                               draw_row=self.extra_rows(step0) if c.dynamic_sampling else None)  # steps 1-7
            rows = [i if ro.drawn_key is None else ro.drawn_key for (ro, _), i in zip(done, rows)]
            self.step += 1
            mine = [(prompt_record(ro, losses, self.agents, c, self.step),
                     sample_record(ro, idx, self.step) if c.sample_log_size else None)
                    for (ro, losses), idx in zip(done, rows)]  # (record, sample) per prompt of this process
            done = [pair for part in distributed.gather(mine) for pair in part]  # every prompt, in order
            rec = mean_record([r for r, _ in done])
            rec["step"] = self.step
            rec["step_time"] = time.perf_counter() - t0
            if c.sample_log_size:
                self.samples.extend(s for _, s in done)
            self.pending_records.append(rec)
            if self.step % c.logging_steps == 0 or self.step == self.total_steps:
                self._log()
            if self.eval_dataset is not None and self.evaluation_due(self.step):
                # one process evaluates (it is seeded, so every process would get the same numbers)
                t_eval = time.perf_counter()
                ev = distributed.broadcast(self.evaluate() if distributed.is_main_process() else None)
                self.eval_seconds += time.perf_counter() - t_eval
                self.eval_history.append(dict(step=self.step, **ev))
                self.log_eval(ev)
        except KeyboardInterrupt:
            if self.step != step0 or self._optimizer_steps() != opt_steps:
                self.torn_step = step0 + 1  # weights or records are part-way through this step
            raise
        self._call("on_step_end", rec)
        if c.save_steps and self.checkpoint_dir is not None and (self.step % c.save_steps == 0
                                                                  or self.step == self.total_steps):
            self.save(self.checkpoint_dir)
        return rec

    def _log(self) -> None:
        rec = mean_record(self.pending_records)
        rec["step"] = self.step
        self.pending_records = []
        self.history.append(rec)
        self._call("on_log", rec)

    # ------------------------------------------------------------------------------ evaluation
    def eval_samples_per_row(self, num_generations: Optional[int] = None) -> int:
        """The joint answers `evaluate` samples per row: `num_generations` (default the config's G), at least 2."""
        return max(num_generations or self.config.num_generations, 2)

    def evaluate(self, dataset: Optional[Sequence[Any]] = None, num_generations: Optional[int] = None,
                 max_rows: Optional[int] = None, seed: int = EVAL_SEED, progress: bool = False, desc: str = "evaluate",
                 return_samples: bool = False):
        """Mean joint reward (and components, each agent's repetition and naturalness) of the current agents on
        `dataset` (default: the eval set; its first `max_rows`): `evaluation.evaluate_team` with this trainer's
        agents, formatters, reward and sampling settings, `eval_samples_per_row(num_generations)` joint answers a row,
        the first turn only. The global RNG is restored afterwards, so evaluating never changes a training run.
        `return_samples=True` returns (metrics, samples) (`evaluate_team` says what samples holds)."""
        data = dataset if dataset is not None else self.eval_dataset
        if data is None:
            raise ValueError("evaluate() needs a dataset: pass one, or give eval_dataset to the trainer.")
        rows = list(data)[: max_rows] if max_rows else list(data)
        return evaluate_team(self.agents, self.formatters, self.reward_fn, rows, self.config,
                             self.eval_samples_per_row(num_generations), seed=seed, progress=progress, desc=desc,
                             return_samples=return_samples)

    def _call(self, hook: str, *args) -> None:
        """Run hook `hook` of every callback that has it: a callback need not subclass TrainerCallback
        (one written before on_evaluate / on_train_end existed, e.g. with on_log only, still works)."""
        for cb in self.callbacks:
            fn = getattr(cb, hook, None)
            if fn is not None:
                fn(self, *args)

    def log_eval(self, metrics: dict) -> None:
        """Hand an evaluation's metrics to the callbacks' `on_evaluate` (the trackers log them at
        the current step). The trainer does it for its own eval_steps evaluations; call it for
        an `evaluate()` of yours that should appear beside the training curves."""
        self._call("on_evaluate", metrics)

    # ------------------------------------------------------------------------------ checkpoints
    def progress_state(self) -> dict:
        """The run's progress apart from weights, optimisers and random generators, as plain JSON values: the step,
        the logged history, the records of steps not yet logged, the evaluations, the logged samples and `metadata`.
        What a checkpoint keeps (`checkpoints.save_checkpoint`); `restore_progress` puts it back."""
        return dict(step=self.step, history=self.history, pending=self.pending_records, eval_history=self.eval_history,
                    samples=list(self.samples), metadata=self.metadata)

    def restore_progress(self, state: dict) -> None:
        """Put back a `progress_state` (from a checkpoint); a step cut short before it is forgotten."""
        self.step, self.history, self.eval_history = state["step"], state["history"], state["eval_history"]
        self.pending_records = state.get("pending", [])
        self.metadata = state.get("metadata", {})
        self.samples = collections.deque(state["samples"], maxlen=self.config.sample_log_size)
        self.torn_step = None

    def save(self, directory: str | Path) -> Path:
        """Write a checkpoint atomically (`checkpoints.save_checkpoint`): config, agents, optimiser and RNG
        states, history, pending records, samples and `metadata`. In a data-parallel run only the main
        process (rank 0) writes. `directory` must be new, empty or a checkpoint."""
        return save_checkpoint(self, directory)

    def load_checkpoint(self, directory: str | Path) -> "MAGRPOTrainer":
        """Restore a checkpoint written by `save` into this trainer (`checkpoints.load_checkpoint`); nothing
        changes when a check fails."""
        return load_checkpoint(self, directory)

    @classmethod
    def load(cls, directory: str | Path, agents: Sequence[Agent], reward_fn: Callable, formatters: Sequence[Callable],
             train_dataset: Sequence[Any], config: Optional[MAGRPOConfig] = None, **kwargs) -> "MAGRPOTrainer":
        """A trainer resumed from `directory` (config read from it unless given); call .train() to go on.

        Agents are code plus weights: pass freshly built agents of the same kind (their trainable
        weights are overwritten from the checkpoint), and the same reward, formatters and data.
        With config.save_steps set and no checkpoint_dir given, it goes on saving into `directory`.
        """
        d = find_checkpoint(directory)
        if config is None:
            config = MAGRPOConfig.from_dict(saved_config(d))
        if config.save_steps is not None:
            kwargs.setdefault("checkpoint_dir", directory)
        return cls(agents, reward_fn, formatters, train_dataset, config, **kwargs).load_checkpoint(d)
