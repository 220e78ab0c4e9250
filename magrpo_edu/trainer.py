"""`MAGRPOTrainer`: the loop around the steps of `magrpo_edu.algorithm`, plus the plumbing a real run needs.

Plumbing only (the algorithm lives in `magrpo_edu.algorithm`: a training step calls
`algorithm.magrpo_step`, steps 2-7, with this trainer's prompts): data order and seeding, one AdamW
per agent, several prompts per step (`config.prompts_per_step`, gradient accumulation) and data
parallel over processes (`magrpo_edu.distributed`, launched with torchrun; its gradient reduction
is magrpo_step's `reduce_gradients` hook), the history of logged metrics, a bounded log of
samples for the notebooks' explorers, callbacks, run tracking (`config.report_to`,
`magrpo_edu.tracking`), a progress bar, evaluation, and checkpoints that resume exactly.

Logged metrics (one plain dict per logged step, averaged over the `logging_steps` steps it covers;
names follow TRL where TRL has one):
  step                      optimiser steps done so far
  reward, reward_std        mean / std of the first turn's joint rewards r^(1..J)
  reward_min, reward_max    min / max of those rewards
  frac_reward_zero_std      share of tree nodes whose J rewards are all equal (no learning signal)
  return                    mean first-turn return R (equals reward when num_turns = 1)
  reward/<component>        mean of each component a reward function reports (e.g. "structure")
  reward/turn_<t>           mean immediate reward at turn t (multi-turn only)
  advantage_std, advantage_abs_max   spread of the first-turn advantages
  loss/<agent>              each agent's loss L_i (with beta > 0 it includes the KL term)
  completions/mean_length/<agent>    mean completion length in tokens (EOS counted)
  completions/clipped_ratio/<agent>  share of completions that hit max_new_tokens without an EOS
  quality/repetition/<agent>         share of repeated word 3-grams in the first turn's completions
                            (`quality.repetition`, averaged over them): every step, pure Python on
                            the texts already sampled, no forward pass
  kl/<agent>, kl            only when config.beta > 0: mean per-token k3 KL(pi_i || pi_ref) over the
                            step's completions, per agent and averaged over agents (TRL's "kl"); it
                            comes from the loss's reference forward, so it costs nothing extra then
  nodes                     tree nodes sampled in the step (1 when single-turn)
  step_time                 seconds per step
With several prompts per step (config.prompts_per_step > 1, or data parallel) a step's record is
the mean of its prompts' records, and every prompt's samples are kept.
Naturalness (mean per-token NLL under the frozen untrained model, `quality.naturalness`) needs a
reference forward over every completion, so it is NOT computed in training steps: `evaluate()`
reports it (eval/naturalness/<agent>, beside eval/repetition/<agent>), and so does every eval
point of a run (eval_history, with config.eval_steps and an eval set).

Checkpoints and resume (`save`, `load`, `load_checkpoint`, `config.save_steps`):
  A checkpoint is a folder: config.json (the MAGRPOConfig), agents/ (peft adapters or full models,
  loadable with from_pretrained), trainer_state.pt (tensors only: trainable weights, AdamW states,
  torch RNG states; loaded with torch.load(weights_only=True), so a crafted file cannot run code)
  and trainer_state.json (step, history, the records pending for the next logged average, eval
  history, samples, Python RNG state, `metadata`). Resuming reproduces the uninterrupted run's
  weights and history exactly: every step re-seeds the RNGs from (seed, step) and the pending
  records travel with the checkpoint.
  `save` is atomic: it writes a temporary folder beside the target and renames it into place; the
  previous checkpoint is moved aside (.<name>.previous) only once the new one is complete and
  deleted after the swap, so a crash at any moment leaves the old or the new checkpoint intact
  (`load_checkpoint` falls back to .<name>.previous when the swap itself was cut short).
  With config.save_steps and checkpoint_dir=..., the trainer saves every save_steps steps and
  after the last step, when the step is completely recorded (after on_log and on_step_end).
  Ctrl-C during `train()` (main thread): the current step is finished, then KeyboardInterrupt is
  raised with the trainer at a step boundary, ready to `save`; a second Ctrl-C stops at once, and
  if that lands inside an optimiser update, `save` refuses (the weights are between two steps).
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import glob
import json
import math
import os
import pickle
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch
from .progress import progress_bar

from . import distributed
from .agents import Agent, has_reference, team_policy
from .algorithm import magrpo_step, rollout
from .config import MAGRPOConfig
from .policy import check_prompt_lengths
from .quality import mean_repetition, token_nll
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


def _format_prompts(formatters, row, index: int, split: str) -> list[str]:
    prompts = []
    for i, fmt in enumerate(formatters):
        try:
            p = fmt(row)
        except Exception as exc:
            raise ValueError(f"formatter {i} ({getattr(fmt, '__name__', fmt)}) failed on {split} row {index} "
                             f"({type(exc).__name__}: {exc}); the row is {str(row)[:200]!r}. Check that every "
                             "row has the fields the formatter reads.") from exc
        if not isinstance(p, str) or not p:
            raise ValueError(f"formatter {i} returned {type(p).__name__} {p!r:.80} for {split} row {index}; "
                             "it must return a non-empty prompt string.")
        prompts.append(p)
    return prompts


class MAGRPOTrainer:
    """Train n agents with MAGRPO on a joint reward.

    agents        list of `Agent` (see `lora_agents`, `separate_agents`, `heterogeneous_agents`)
    reward_fn     joint reward: (completions per agent, row) -> one float per joint action
    formatters    one callable per agent: row -> that agent's prompt
    train_dataset a sequence of rows (dicts)
    checkpoint_dir  where `config.save_steps` checkpoints go (needed when save_steps is set)

    `metadata` (a JSON-able dict, empty by default) is saved with every checkpoint and restored by
    `load_checkpoint`; `magrpo-edu train` keeps its run settings and pre-training evaluation there.
    """

    def __init__(self, agents: Sequence[Agent], reward_fn: Callable, formatters: Sequence[Callable],
                 train_dataset: Sequence[Any], config: Optional[MAGRPOConfig] = None,
                 eval_dataset: Optional[Sequence[Any]] = None, transition: Optional[Callable] = None,
                 callbacks: Sequence[TrainerCallback] = (), checkpoint_dir: str | Path | None = None):
        self.config = config or MAGRPOConfig(num_agents=len(agents))
        c = self.config
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
        if c.beta > 0:
            missing = [a.name for a in agents if not has_reference(a)]
            if missing:
                raise ValueError(f"config.beta={c.beta} needs a frozen reference model for every agent, and agent(s) "
                                 f"{missing} have none: build them with separate_agents/heterogeneous_agents "
                                 "(reference=True) or lora_agents, or set agent.reference = frozen_copy(model).")
        team_policy(agents)  # one policy for the whole team (steps 2 and 6), or a clear error now
        self.agents, self.reward_fn, self.formatters = list(agents), reward_fn, list(formatters)
        self.train_dataset, self.eval_dataset = train_dataset, eval_dataset
        self.transition, self.callbacks = transition, list(callbacks)
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
        self.samples: collections.deque = collections.deque(maxlen=c.sample_log_size)
        self._pending: list[dict] = []
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        self.metadata: dict = {}
        self._torn_step: Optional[int] = None  # set when an interrupt landed inside a step's update
        self._stop_requested = False
        self._check_context()

    def _check_context(self) -> None:
        """The first training prompt plus max_new_tokens must fit each agent's context window, checked
        when the trainer is built with the policy's one context check (`policy.check_prompt_lengths`),
        which the policy runs again on every prompt it samples, later turns included."""
        try:
            prompts = _format_prompts(self.formatters, self.train_dataset[self.row_index(0)], self.row_index(0), "train")
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

    def _seed_prompt(self, prompt: int) -> None:
        # Re-seeding before every prompt makes a resumed run sample exactly what an uninterrupted one
        # would, and a prompt sample the same in any process of a data-parallel run (P = 1: per step).
        s = self.config.seed * 1_000_003 + prompt
        torch.manual_seed(s % 2**64)
        random.seed(s)

    # ------------------------------------------------------------------------------ training
    def train(self) -> list[dict]:
        """Run until `total_steps`; can be called again after an error or to continue a resumed run.

        Ctrl-C (in the main thread) finishes the current step, then raises KeyboardInterrupt with the
        trainer at a step boundary (save it with `save`); a second Ctrl-C stops at once."""

        c = self.config
        bar = progress_bar(total=self.total_steps, initial=self.step, desc="MAGRPO", dynamic_ncols=True,
                   disable=not c.progress or not distributed.is_main_process())
        try:
            with self._graceful_interrupt():
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

    @contextlib.contextmanager
    def _graceful_interrupt(self):
        """While training: the first SIGINT asks to stop after the current step, a second one stops now."""
        self._stop_requested = False
        previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
        if previous is not signal.default_int_handler:
            yield  # not ours to change (a thread, SIGINT ignored, someone else's handler): left exactly as found
            return

        def handler(signum, frame):
            if self._stop_requested:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                raise KeyboardInterrupt
            self._stop_requested = True
            print(f"\nCtrl-C: finishing step {self.step + 1}, then stopping (press Ctrl-C again to stop at once).",
                  file=sys.stderr, flush=True)

        signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)  # exactly what was there before
            self._stop_requested = False

    def _optimizer_steps(self) -> float:
        return sum(float(st["step"]) for o in self.optimizers for st in o.state.values() if "step" in st)

    def training_step(self) -> dict:
        """One MAGRPO step; returns that step's metrics.

        The step is `algorithm.magrpo_step` (steps 2-7) on this process's prompts (`prompt_indices`;
        one, the paper's case), each formatted (step 1) and sampled with the RNG seeded from (seed,
        prompt number) just before its rollout, with the data-parallel sum of the gradients
        (`distributed.all_reduce_gradients`) as its `reduce_gradients` hook. Then store the record
        (the mean over the step's prompts, gathered from every process) and the samples; log
        (on_log) and evaluate when due; on_step_end; save when save_steps is due."""
        c = self.config
        step0 = self.step
        t0 = time.perf_counter()
        opt_steps = self._optimizer_steps()
        try:
            rows = []  # the row index of each of this process's prompts, in order

            def tasks():  # step 1 for each prompt, seeded just before magrpo_step samples it
                for p in self.prompt_indices(step0):
                    idx = self.row_index(p)
                    row = self.train_dataset[idx]
                    prompts = _format_prompts(self.formatters, row, idx, "train")
                    self._seed_prompt(p)
                    rows.append(idx)
                    yield prompts, row

            done = magrpo_step(self.agents, self.optimizers, tasks(), self.reward_fn, c, self.transition,
                               reduce_gradients=distributed.all_reduce_gradients)  # steps 2-7
            self.step += 1
            mine = [(self._metrics(ro, losses, self.step), self._sample(ro, idx, self.step))
                    for (ro, losses), idx in zip(done, rows)]  # (record, sample) per prompt of this process
            done = [pair for part in distributed.gather(mine) for pair in part]  # every prompt, in order
            rec = _mean_record([r for r, _ in done])
            rec["step"] = self.step
            rec["step_time"] = time.perf_counter() - t0
            if c.sample_log_size:
                self.samples.extend(s for _, s in done)
            self._pending.append(rec)
            if self.step % c.logging_steps == 0 or self.step == self.total_steps:
                self._log()
            if c.eval_steps and self.eval_dataset is not None and self.step % c.eval_steps == 0:
                # one process evaluates (it is seeded, so every process would get the same numbers)
                ev = distributed.broadcast(self.evaluate() if distributed.is_main_process() else None)
                self.eval_history.append(dict(step=self.step, **ev))
                self.log_eval(ev)
        except KeyboardInterrupt:
            if self.step != step0 or self._optimizer_steps() != opt_steps:
                self._torn_step = step0 + 1  # weights or records are part-way through this step
            raise
        self._call("on_step_end", rec)
        if c.save_steps and self.checkpoint_dir is not None and (self.step % c.save_steps == 0
                                                                  or self.step == self.total_steps):
            self.save(self.checkpoint_dir)
        return rec

    def _sample(self, ro, idx: int, step: int) -> Optional[dict]:
        if not self.config.sample_log_size:
            return None
        root = ro.root
        return dict(step=step, row_index=idx, prompts=root.prompts, completions=root.completions,
                    table=root.table.tolist(), rewards=root.rewards.tolist(), advantages=root.advantages.tolist(),
                    components={k: v.tolist() for k, v in root.components.items()})

    def _metrics(self, ro, losses, step: int) -> dict:
        """One prompt's record (the step's record is the mean over its prompts; step_time set after)."""
        root = ro.root
        r = root.rewards
        rec: dict[str, float] = dict(step=step, reward=r.mean().item(),
                                     reward_std=r.std().item() if r.numel() > 1 else 0.0,
                                     reward_min=r.min().item(), reward_max=r.max().item(),
                                     frac_reward_zero_std=sum(float(nd.rewards.std() == 0) for nd in ro.nodes()) / len(ro.nodes()),
                                     advantage_std=root.advantages.std().item(),
                                     advantage_abs_max=root.advantages.abs().max().item(),
                                     nodes=float(len(ro.nodes())), step_time=0.0)
        if self.config.num_turns > 1:
            rec["return"] = root.returns.mean().item()
            for t, level in enumerate(ro.levels):
                rec[f"reward/turn_{t + 1}"] = torch.cat([nd.rewards for nd in level]).mean().item()
        else:
            rec["return"] = rec["reward"]
        for k, v in root.components.items():
            rec[f"reward/{k}"] = v.mean().item()
        for i, a in enumerate(self.agents):
            comps = ro.completions[0][i]
            L = comps.lengths().float()
            rec[f"loss/{a.name}"] = losses[i]
            rec[f"completions/mean_length/{a.name}"] = L.mean().item()
            hit_eos = (comps.completion_mask.sum(-1) < comps.completion_ids.shape[1]) | _ends_with_eos(comps, a)
            rec[f"completions/clipped_ratio/{a.name}"] = 1.0 - hit_eos.float().mean().item()
            rec[f"quality/repetition/{a.name}"] = mean_repetition(comps.texts)
        if ro.kl is not None:
            for a, kl in zip(self.agents, ro.kl):
                rec[f"kl/{a.name}"] = kl
            rec["kl"] = sum(ro.kl) / len(ro.kl)
        return rec

    def _log(self) -> None:
        rec = _mean_record(self._pending)
        rec["step"] = self.step
        self._pending = []
        self.history.append(rec)
        self._call("on_log", rec)

    # ------------------------------------------------------------------------------ evaluation
    @torch.no_grad()
    def evaluate(self, dataset: Optional[Sequence[Any]] = None, num_generations: Optional[int] = None,
                 max_rows: Optional[int] = None, seed: int = 1234, progress: bool = False, desc: str = "evaluate") -> dict:
        """Mean joint reward (and components) of the current agents on `dataset` (default: eval set).

        Samples `num_generations` aligned joint actions per row with the training sampling settings
        and scores the FIRST turn only (multi-turn evaluation: `baselines.run_method("magrpo_2turn")`);
        the global RNG is restored afterwards, so evaluating never changes a training run.
        `progress`: a tqdm bar over the rows (the command line shows one; off by default).
        Beside the reward, each agent's text quality (`magrpo_edu.quality`) over all its sampled
        completions: eval/repetition/<agent> (share of repeated word 3-grams) and
        eval/naturalness/<agent> (mean per-token NLL under the frozen untrained model; one extra
        reference forward per row and agent; left out for an agent without a reference).
        """
        data = dataset if dataset is not None else self.eval_dataset
        if data is None:
            raise ValueError("evaluate() needs a dataset: pass one, or give eval_dataset to the trainer.")
        cfg = self.config
        G = num_generations or cfg.num_generations
        rows = list(data)[: max_rows] if max_rows else list(data)
        single = dataclasses.replace(cfg, num_turns=1, joint_mode="aligned", num_generations=max(G, 2), progress=False,
                                     early_termination_threshold=None)
        totals, comps = [], collections.defaultdict(list)
        texts: list[list[str]] = [[] for _ in self.agents]
        nll: list[list[torch.Tensor]] = [[] for _ in self.agents]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            for k, row in enumerate(progress_bar(rows, desc=desc, disable=not progress, leave=True)):
                prompts = _format_prompts(self.formatters, row, k, "eval")
                ro = rollout(self.agents, prompts, row, self.reward_fn, single)
                totals.append(ro.root.rewards)
                for name, v in ro.root.components.items():
                    comps[name].append(v)
                for i, a in enumerate(self.agents):
                    texts[i] += ro.completions[0][i].texts
                    if has_reference(a):
                        nll[i].append(token_nll(a, ro.completions[0][i]))
        out = {"eval/reward": torch.cat(totals).mean().item(), "eval/reward_std": torch.cat(totals).std().item(),
               "eval/rows": len(rows)}
        out.update({f"eval/reward/{k}": torch.cat(v).mean().item() for k, v in comps.items()})
        for i, a in enumerate(self.agents):
            out[f"eval/repetition/{a.name}"] = mean_repetition(texts[i])
            if nll[i]:
                out[f"eval/naturalness/{a.name}"] = torch.cat(nll[i]).mean().item()
        return out

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
    def save(self, directory: str | Path) -> Path:
        """Write a checkpoint atomically: config, agents (peft adapters or full models), optimiser and
        RNG states, history, pending records, samples and `metadata` (layout: module docstring).

        Everything is written to a temporary folder beside `directory` first; only then is the old
        checkpoint moved aside and the new one renamed into place, so a crash at any point leaves
        the old or the new checkpoint complete. `directory` must be new, empty or a checkpoint.
        In a data-parallel run only the main process (rank 0) writes; the others return at once."""
        if not distributed.is_main_process():
            return Path(directory)
        if self._torn_step is not None:
            raise RuntimeError(
                f"not saving: training was interrupted inside step {self._torn_step}'s update, so the agents' weights "
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
            self._write_checkpoint(tmp)
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

    def _write_checkpoint(self, d: Path) -> None:
        (d / "config.json").write_text(json.dumps(self.config.to_dict(), indent=2))
        saved_models = set()
        for a in self.agents:
            if id(a.model) in saved_models:
                continue
            saved_models.add(id(a.model))
            target = d / "agents" if a.adapter else d / "agents" / a.name
            a.model.save_pretrained(target)
            a.tokenizer.save_pretrained(target)
        tensors = dict(agents={a.name: {k: v.detach().cpu().clone() for k, v in a.named_trainable_state().items()}
                               for a in self.agents},
                       optimizers=[o.state_dict() for o in self.optimizers],
                       rng=dict(torch=torch.get_rng_state(),
                                cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None))
        torch.save(tensors, d / "trainer_state.pt")
        version, internal, gauss = random.getstate()
        state = dict(format=2, step=self.step, history=self.history, pending=self._pending,
                     eval_history=self.eval_history, samples=list(self.samples), metadata=self.metadata,
                     python_rng=[version, list(internal), gauss])
        try:
            text = json.dumps(state)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"cannot save the trainer state as JSON ({exc}): history, samples and metadata must hold "
                             "only numbers, strings, lists and dicts.") from exc
        (d / "trainer_state.json").write_text(text)
        for f in d.rglob("*"):
            if f.is_file():
                _fsync(f)

    def load_checkpoint(self, directory: str | Path) -> "MAGRPOTrainer":
        """Restore a checkpoint written by `save` into this trainer (same agents' architecture).

        trainer_state.pt is read with torch.load(weights_only=True): a file holding anything but
        tensors and plain values is refused, never executed. Nothing changes when a check fails."""
        d = find_checkpoint(directory)
        tensors = _load_tensors(d / "trainer_state.pt")
        state = _read_state(d)
        if not isinstance(tensors.get("agents"), dict) or not isinstance(tensors.get("optimizers"), list):
            raise ValueError(f"{d / 'trainer_state.pt'} is not a MAGRPOTrainer checkpoint (no agents/optimizers).")
        for a in self.agents:
            if a.name not in tensors["agents"]:
                raise ValueError(f"checkpoint {d} has no agent named {a.name!r} (it has {sorted(tensors['agents'])}).")
            if tensors["agents"][a.name].keys() != a.named_trainable_state().keys():
                raise ValueError(f"checkpoint {d}: agent {a.name}'s parameters do not match this agent's "
                                 "(different model or adapter settings).")
        if len(tensors["optimizers"]) != len(self.optimizers):
            raise ValueError(f"checkpoint {d} has {len(tensors['optimizers'])} optimiser states for {len(self.optimizers)} agents.")
        for a in self.agents:
            saved = tensors["agents"][a.name]
            with torch.no_grad():
                for k, p in a.named_trainable_state().items():
                    p.copy_(saved[k].to(p.device, p.dtype))
        for o, s in zip(self.optimizers, tensors["optimizers"]):
            o.load_state_dict(s)
        self.step, self.history, self.eval_history = state["step"], state["history"], state["eval_history"]
        self._pending = state.get("pending", [])
        self.metadata = state.get("metadata", {})
        self.samples = collections.deque(state["samples"], maxlen=self.config.sample_log_size)
        self._torn_step = None
        torch.set_rng_state(tensors["rng"]["torch"])
        if tensors["rng"].get("cuda") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(tensors["rng"]["cuda"])
        version, internal, gauss = state["python_rng"]
        random.setstate((version, tuple(internal), gauss))
        return self

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
            config = MAGRPOConfig.from_dict(json.loads((d / "config.json").read_text()))
        if config.save_steps is not None:
            kwargs.setdefault("checkpoint_dir", directory)
        return cls(agents, reward_fn, formatters, train_dataset, config, **kwargs).load_checkpoint(d)


def _mean_record(records: Sequence[dict]) -> dict:
    """Key by key mean of metric records (a key missing from some records: the mean of those that have it).
    Keys in the order of the last record; one record comes back unchanged."""
    keys = records[-1].keys()
    return {k: sum(r[k] for r in records if k in r) / sum(1 for r in records if k in r) for k in keys}


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
    try:
        info["config"] = json.loads((d / "config.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"{d / 'config.json'} is missing: {d} is not a complete checkpoint. Use another checkpoint.") from None
    except ValueError as exc:
        raise ValueError(f"cannot read {d / 'config.json'}: it is not valid JSON ({exc}); the checkpoint is damaged. "
                         "Use another checkpoint.") from None
    info["path"] = d
    return info


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


def _ends_with_eos(comps, agent) -> torch.Tensor:
    # A completion of exactly max_new_tokens tokens may still end with EOS at its last position.
    from .policy import eos_token_ids

    eos = eos_token_ids(agent)
    eos = [eos] if isinstance(eos, int) else list(eos or [])
    last = comps.completion_ids[:, -1]
    return torch.isin(last, torch.tensor(eos, device=last.device)) if eos else torch.zeros_like(last, dtype=torch.bool)
