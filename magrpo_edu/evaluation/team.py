"""The team on held-out rows, as the trainer evaluates it, and a before/after snapshot.

    evaluate_team    G aligned joint answers a row (the training sampling, the first turn only): the mean joint reward,
                     its components and each agent's text quality. The trainer's halfway check and its evaluations
                     before and after training (`MAGRPOTrainer.evaluate`), `magrpo-edu eval`, and the comparison
                     table's parallel and magrpo rows (`protocols.row_from_evaluation` builds them from its samples)
    answer_snapshot  one joint answer a row at a fixed seed, all rows in one batch: a before/after picture
                     (`viz.before_after_report`)

Every function here restores the global RNG afterwards: evaluating never changes a training run.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import time
from typing import Callable, Sequence

import torch

from ..agents import Agent, has_reference, team_backend
from ..algorithm import format_prompts, joint_rewards, rollout
from ..backends import sampling_kwargs, sampling_settings
from ..config import MAGRPOConfig
from ..progress import progress_bar
from ..quality import mean_repetition, token_nll
from ..rng import seeded


EVAL_SEED = 1234
"""The sampling seed of a held-out evaluation (`evaluate_team`, `MAGRPOTrainer.evaluate`): one fixed seed, the same
before, halfway and after training, whatever the run's own seed, so that the agents are what differs."""


def _timed(reward_fn: Callable, spent: list) -> Callable:
    """`reward_fn` that adds its own wall time to spent[0]."""
    @functools.wraps(reward_fn)
    def timed(completions, row):
        t = time.perf_counter()
        try:
            return reward_fn(completions, row)
        finally:
            spent[0] += time.perf_counter() - t
    return timed


@torch.no_grad()
def evaluate_team(agents: Sequence[Agent], formatters: Sequence[Callable], reward_fn: Callable, rows: Sequence[dict],
                  config: MAGRPOConfig, G: int, seed: int = EVAL_SEED, progress: bool = False, desc: str = "evaluate",
                  return_samples: bool = False):
    """Mean joint reward (and components) of `agents` on `rows`: G aligned joint actions per row with `config`'s
    sampling settings, scored on the FIRST turn only (multi-turn evaluation: `evaluation.run_method("magrpo_2turn")`);
    the global RNG is restored afterwards. `progress`: a tqdm bar over the rows.
    Beside the reward, each agent's text quality (`magrpo_edu.quality`) over all its sampled completions:
    eval/repetition/<agent> (share of repeated word 3-grams) and eval/naturalness/<agent> (mean per-token NLL under
    the frozen untrained model; one extra reference forward per row and agent; left out for an agent without a
    reference).

    `return_samples=True` returns (metrics, samples) with the very samples the metrics are means of, so a table can
    reuse them (`evaluation.row_from_evaluation`): samples["texts"][i] = agent i's texts, row-major (row k's at
    k * G ... k * G + G - 1, joint answer j = every agent's j-th text), "rewards" (one per joint answer), "per_row",
    "rows", "tokens" (completion tokens, all agents) and "seconds" (generation wall time: each row's rollout less its
    reward's time). The same random numbers are drawn either way.
    """
    rows = list(rows)
    single = dataclasses.replace(config, num_turns=1, joint_mode="aligned", num_generations=G, progress=False,
                                 early_termination_threshold=None)
    totals, comps = [], collections.defaultdict(list)
    texts: list[list[str]] = [[] for _ in agents]
    nll: list[list[torch.Tensor]] = [[] for _ in agents]
    scoring, gen_seconds, tokens = [0.0], 0.0, 0
    score = _timed(reward_fn, scoring) if return_samples else reward_fn  # "seconds": the generation's time alone
    backend = team_backend(agents)  # looked up once, as a training step does
    with seeded(seed):
        for k, row in enumerate(progress_bar(rows, desc=desc, disable=not progress, leave=True)):
            prompts = format_prompts(formatters, row, f"eval row {k}")
            t0, scoring[0] = time.perf_counter(), 0.0
            ro = rollout(agents, prompts, row, score, single, backend=backend)
            gen_seconds += time.perf_counter() - t0 - scoring[0]
            tokens += sum(int(c.lengths().sum()) for c in ro.completions[0])
            totals.append(ro.root.rewards)
            for name, v in ro.root.components.items():
                comps[name].append(v)
            for i, a in enumerate(agents):
                texts[i] += ro.completions[0][i].texts
                if has_reference(a):
                    nll[i].append(token_nll(a, ro.completions[0][i]))
    out = {"eval/reward": torch.cat(totals).mean().item(), "eval/reward_std": torch.cat(totals).std().item(),
           "eval/rows": len(rows)}
    out.update({f"eval/reward/{k}": torch.cat(v).mean().item() for k, v in comps.items()})
    for i, a in enumerate(agents):
        out[f"eval/repetition/{a.name}"] = mean_repetition(texts[i])
        if nll[i]:
            out[f"eval/naturalness/{a.name}"] = torch.cat(nll[i]).mean().item()
    if return_samples:
        return out, dict(texts=texts, rewards=torch.cat(totals).tolist(), per_row=G, rows=len(rows), tokens=tokens,
                         seconds=gen_seconds)
    return out


def answer_snapshot(agents: Sequence[Agent], formatters: Sequence[Callable], rows: Sequence[dict], reward_fn: Callable,
                    max_new_tokens: int = 48, temperature: float = 1.0, seed: int = 1,
                    config: MAGRPOConfig | None = None) -> tuple[list[list[str]], list[float]]:
    """One joint answer per row (the parallel protocol, a fixed sampling seed, the caller's RNG left
    untouched): each row's answers [agent 1, agent 2, ...] and that joint action's reward
    (`reward_fn(completions, row)`, the trainer's contract). Take one before and one after training
    with the same seed and show them side by side with `viz.before_after_report`. `config`: sample as that
    training config's step 2 does (`sampling_settings(config)`: its tokens, temperature, top-p and top-k), in
    place of `max_new_tokens` and `temperature` (plain sampling, no truncation)."""
    gen = sampling_settings(config) if config is not None else sampling_kwargs(max_new_tokens, temperature)
    with seeded(seed):
        outs = team_backend(agents).sample(agents, [[f(r) for r in rows] for f in formatters], 1, gen)
    texts = [[o.texts[k] for o in outs] for k in range(len(rows))]
    rewards = [joint_rewards(reward_fn, [[t] for t in tk], row)[0].item() for tk, row in zip(texts, rows)]
    return texts, rewards
