"""`MAGRPOTrainer`: the loop around `algorithm.magrpo_step`, plus the plumbing a real run needs.

Plumbing only (the algorithm lives in `magrpo_edu.algorithm`): data order, one AdamW per agent,
the history of logged metrics, a bounded log of samples for the notebooks' explorers, callbacks,
a progress bar, evaluation, and checkpoints that resume exactly.

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
  loss/<agent>              each agent's policy loss L_i
  completions/mean_length/<agent>    mean completion length in tokens (EOS counted)
  completions/clipped_ratio/<agent>  share of completions that hit max_new_tokens without an EOS
  nodes                     tree nodes sampled in the step (1 when single-turn)
  step_time                 seconds per step
"""
from __future__ import annotations

import collections
import json
import math
import random
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch

from .agents import Agent
from .algorithm import RewardFunctionError, joint_rewards, magrpo_step, rollout
from .config import MAGRPOConfig


class TrainerCallback:
    """Subclass and override what you need; both hooks get the trainer and a plain dict."""

    def on_step_end(self, trainer: "MAGRPOTrainer", record: dict) -> None:  # every step
        pass

    def on_log(self, trainer: "MAGRPOTrainer", record: dict) -> None:  # every logging_steps steps
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
    """

    def __init__(self, agents: Sequence[Agent], reward_fn: Callable, formatters: Sequence[Callable],
                 train_dataset: Sequence[Any], config: Optional[MAGRPOConfig] = None,
                 eval_dataset: Optional[Sequence[Any]] = None, transition: Optional[Callable] = None,
                 callbacks: Sequence[TrainerCallback] = ()):
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
        self.agents, self.reward_fn, self.formatters = list(agents), reward_fn, list(formatters)
        self.train_dataset, self.eval_dataset = train_dataset, eval_dataset
        self.transition, self.callbacks = transition, list(callbacks)
        self.optimizers = [torch.optim.AdamW(a.trainable_parameters(), lr=c.learning_rate,
                                             weight_decay=c.weight_decay) for a in self.agents]
        for a in self.agents:
            if not a.trainable_parameters():
                raise ValueError(f"agent {a.name} has no trainable parameters.")
        self.step = 0
        self.history: list[dict] = []
        self.eval_history: list[dict] = []
        self.samples: collections.deque = collections.deque(maxlen=c.sample_log_size)
        self._pending: list[dict] = []

    # ------------------------------------------------------------------------------ data order
    @property
    def total_steps(self) -> int:
        c = self.config
        return c.max_steps if c.max_steps is not None else max(1, math.ceil(c.num_train_epochs * len(self.train_dataset)))

    def row_index(self, step: int) -> int:
        """Which training row step `step` uses: a fresh seeded permutation every epoch."""
        N = len(self.train_dataset)
        epoch, k = divmod(step, N)
        g = torch.Generator().manual_seed(self.config.seed * 7919 + epoch)
        return int(torch.randperm(N, generator=g)[k])

    def _seed_step(self, step: int) -> None:
        # Re-seeding every step makes a resumed run sample exactly what an uninterrupted one would.
        s = self.config.seed * 1_000_003 + step
        torch.manual_seed(s)
        random.seed(s)

    # ------------------------------------------------------------------------------ training
    def train(self) -> list[dict]:
        """Run until `total_steps`; can be called again after an error or to continue a resumed run."""
        from tqdm.auto import tqdm

        c = self.config
        bar = tqdm(total=self.total_steps, initial=self.step, desc="MAGRPO", disable=not c.progress, dynamic_ncols=True)
        try:
            while self.step < self.total_steps:
                rec = self.training_step()
                bar.update(1)
                bar.set_postfix(reward=f"{rec['reward']:.3f}", loss=f"{sum(rec[k] for k in rec if k.startswith('loss/')) / c.num_agents:.3f}")
        finally:
            bar.close()
        return self.history

    def training_step(self) -> dict:
        """One MAGRPO step on the next training row; returns that step's metrics."""
        c = self.config
        idx = self.row_index(self.step)
        row = self.train_dataset[idx]
        prompts = _format_prompts(self.formatters, row, idx, "train")
        self._seed_step(self.step)
        t0 = time.perf_counter()
        ro, losses = magrpo_step(self.agents, self.optimizers, prompts, row, self.reward_fn, c, self.transition)
        self.step += 1
        rec = self._metrics(ro, losses, time.perf_counter() - t0)
        if c.sample_log_size:
            root = ro.root
            self.samples.append(dict(step=self.step, row_index=idx, prompts=root.prompts, completions=root.completions,
                                     table=root.table.tolist(), rewards=root.rewards.tolist(),
                                     advantages=root.advantages.tolist(),
                                     components={k: v.tolist() for k, v in root.components.items()}))
        for cb in self.callbacks:
            cb.on_step_end(self, rec)
        self._pending.append(rec)
        if self.step % c.logging_steps == 0 or self.step == self.total_steps:
            self._log()
        if c.eval_steps and self.eval_dataset is not None and self.step % c.eval_steps == 0:
            self.eval_history.append(dict(step=self.step, **self.evaluate()))
        return rec

    def _metrics(self, ro, losses, dt) -> dict:
        root, n = ro.root, len(self.agents)
        r = root.rewards
        rec: dict[str, float] = dict(step=self.step, reward=r.mean().item(),
                                     reward_std=r.std().item() if r.numel() > 1 else 0.0,
                                     reward_min=r.min().item(), reward_max=r.max().item(),
                                     frac_reward_zero_std=sum(float(nd.rewards.std() == 0) for nd in ro.nodes()) / len(ro.nodes()),
                                     advantage_std=root.advantages.std().item(),
                                     advantage_abs_max=root.advantages.abs().max().item(),
                                     nodes=float(len(ro.nodes())), step_time=dt)
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
        return rec

    def _log(self) -> None:
        keys = self._pending[-1].keys()
        rec = {k: sum(p[k] for p in self._pending if k in p) / sum(1 for p in self._pending if k in p) for k in keys}
        rec["step"] = self.step
        self._pending = []
        self.history.append(rec)
        for cb in self.callbacks:
            cb.on_log(self, rec)

    # ------------------------------------------------------------------------------ evaluation
    @torch.no_grad()
    def evaluate(self, dataset: Optional[Sequence[Any]] = None, num_generations: Optional[int] = None,
                 max_rows: Optional[int] = None, seed: int = 1234) -> dict:
        """Mean joint reward (and components) of the current agents on `dataset` (default: eval set).

        Samples `num_generations` aligned joint actions per row with the training sampling settings
        and scores the FIRST turn only (multi-turn evaluation: `baselines.run_method("magrpo_2turn")`);
        the global RNG is restored afterwards, so evaluating never changes a training run.
        """
        data = dataset if dataset is not None else self.eval_dataset
        if data is None:
            raise ValueError("evaluate() needs a dataset: pass one, or give eval_dataset to the trainer.")
        cfg = self.config
        G = num_generations or cfg.num_generations
        rows = list(data)[: max_rows] if max_rows else list(data)
        single = MAGRPOConfig(**{**cfg.to_dict(), "num_turns": 1, "joint_mode": "aligned", "num_generations": max(G, 2),
                                 "progress": False, "early_termination_threshold": None})
        totals, comps = [], collections.defaultdict(list)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            for k, row in enumerate(rows):
                prompts = _format_prompts(self.formatters, row, k, "eval")
                ro = rollout(self.agents, prompts, row, self.reward_fn, single)
                totals.append(ro.root.rewards)
                for name, v in ro.root.components.items():
                    comps[name].append(v)
        out = {"eval/reward": torch.cat(totals).mean().item(), "eval/reward_std": torch.cat(totals).std().item(),
               "eval/rows": len(rows)}
        out.update({f"eval/reward/{k}": torch.cat(v).mean().item() for k, v in comps.items()})
        return out

    # ------------------------------------------------------------------------------ checkpoints
    def save(self, directory: str | Path) -> Path:
        """Write a checkpoint: config, agents (peft adapters or full models), optimiser and RNG states, history."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(self.config.to_dict(), indent=2))
        saved_models = set()
        for a in self.agents:
            if id(a.model) in saved_models:
                continue
            saved_models.add(id(a.model))
            target = d / "agents" if a.adapter else d / "agents" / a.name
            a.model.save_pretrained(target)
            a.tokenizer.save_pretrained(target)
        state = dict(step=self.step, history=self.history, eval_history=self.eval_history, samples=list(self.samples),
                     agents={a.name: {k: v.detach().cpu().clone() for k, v in a.named_trainable_state().items()} for a in self.agents},
                     optimizers=[o.state_dict() for o in self.optimizers],
                     rng=dict(torch=torch.get_rng_state(), python=random.getstate(),
                              cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None))
        torch.save(state, d / "trainer_state.pt")
        return d

    def load_checkpoint(self, directory: str | Path) -> "MAGRPOTrainer":
        """Restore a checkpoint written by `save` into this trainer (same agents' architecture)."""
        d = Path(directory)
        f = d / "trainer_state.pt"
        if not f.exists():
            raise FileNotFoundError(f"{f} not found: is {d} a directory written by MAGRPOTrainer.save()?")
        state = torch.load(f, weights_only=False, map_location="cpu")
        for a in self.agents:
            if a.name not in state["agents"]:
                raise ValueError(f"checkpoint {d} has no agent named {a.name!r} (it has {sorted(state['agents'])}).")
            saved, own = state["agents"][a.name], a.named_trainable_state()
            if saved.keys() != own.keys():
                raise ValueError(f"checkpoint {d}: agent {a.name}'s parameters do not match this agent's "
                                 "(different model or adapter settings).")
            with torch.no_grad():
                for k, p in own.items():
                    p.copy_(saved[k].to(p.device, p.dtype))
        for o, s in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(s)
        self.step, self.history, self.eval_history = state["step"], state["history"], state["eval_history"]
        self.samples = collections.deque(state["samples"], maxlen=self.config.sample_log_size)
        torch.set_rng_state(state["rng"]["torch"])
        random.setstate(state["rng"]["python"])
        return self

    @classmethod
    def load(cls, directory: str | Path, agents: Sequence[Agent], reward_fn: Callable, formatters: Sequence[Callable],
             train_dataset: Sequence[Any], config: Optional[MAGRPOConfig] = None, **kwargs) -> "MAGRPOTrainer":
        """A trainer resumed from `directory` (config read from it unless given); call .train() to go on.

        Agents are code plus weights: pass freshly built agents of the same kind (their trainable
        weights are overwritten from the checkpoint), and the same reward, formatters and data.
        """
        d = Path(directory)
        if config is None:
            config = MAGRPOConfig.from_dict(json.loads((d / "config.json").read_text()))
        return cls(agents, reward_fn, formatters, train_dataset, config, **kwargs).load_checkpoint(d)


def _ends_with_eos(comps, agent) -> torch.Tensor:
    # A completion of exactly max_new_tokens tokens may still end with EOS at its last position.
    from .agents import _eos_ids

    eos = _eos_ids(agent)
    eos = [eos] if isinstance(eos, int) else list(eos or [])
    last = comps.completion_ids[:, -1]
    return torch.isin(last, torch.tensor(eos, device=last.device)) if eos else torch.zeros_like(last, dtype=torch.bool)
