"""What the trainer records of a step: the metrics of each prompt, their mean, the samples kept.

The logged metrics (one plain dict per logged step, averaged over the `logging_steps` steps it covers;
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
  dynamic/draws, dynamic/dropped  only with config.dynamic_sampling: problems sampled per kept problem, and
                            the flat ones dropped (frac_reward_zero_std is that of the KEPT groups)
  step_time                 seconds per step
With several prompts per step (config.prompts_per_step > 1, or data parallel) a step's record is
the mean of its prompts' records, and every prompt's samples are kept.
Naturalness (mean per-token NLL under the frozen untrained model, `quality.naturalness`) needs a
reference forward over every completion, so it is NOT computed in training steps: `evaluate()`
reports it (eval/naturalness/<agent>, beside eval/repetition/<agent>), and so does every eval
point of a run (eval_history, with config.eval_steps and an eval set).
"""
from __future__ import annotations

from typing import Sequence

import torch

from .backends import eos_token_ids
from .quality import mean_repetition


def prompt_record(ro, losses, agents, config, step: int) -> dict:
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
    if config.num_turns > 1:
        rec["return"] = root.returns.mean().item()
        for t, level in enumerate(ro.levels):
            rec[f"reward/turn_{t + 1}"] = torch.cat([nd.rewards for nd in level]).mean().item()
    else:
        rec["return"] = rec["reward"]
    for k, v in root.components.items():
        rec[f"reward/{k}"] = v.mean().item()
    for i, a in enumerate(agents):
        comps = ro.completions[0][i]
        L = comps.lengths().float()
        rec[f"loss/{a.name}"] = losses[i]
        rec[f"completions/mean_length/{a.name}"] = L.mean().item()
        hit_eos = (comps.completion_mask.sum(-1) < comps.completion_ids.shape[1]) | _ends_with_eos(comps, a)
        rec[f"completions/clipped_ratio/{a.name}"] = 1.0 - hit_eos.float().mean().item()
        rec[f"quality/repetition/{a.name}"] = mean_repetition(comps.texts)
    if getattr(config, "dynamic_sampling", 0):
        rec["dynamic/draws"] = float(ro.draws)
        rec["dynamic/dropped"] = float(ro.draws - 1)
    if ro.kl is not None:
        for a, kl in zip(agents, ro.kl):
            rec[f"kl/{a.name}"] = kl
        rec["kl"] = sum(ro.kl) / len(ro.kl)
    return rec


def sample_record(ro, idx: int, step: int) -> dict:
    """One prompt's samples as the trainer keeps them (`trainer.samples`, the explorers' input): the root
    node's prompts, completions, joint-action table, rewards, advantages and reward components."""
    root = ro.root
    return dict(step=step, row_index=idx, prompts=root.prompts, completions=root.completions,
                table=root.table.tolist(), rewards=root.rewards.tolist(), advantages=root.advantages.tolist(),
                components={k: v.tolist() for k, v in root.components.items()})


def mean_record(records: Sequence[dict]) -> dict:
    """Key by key mean of metric records (a key missing from some records: the mean of those that have it).
    Keys in the order of the last record; one record comes back unchanged."""
    keys = records[-1].keys()
    return {k: sum(r[k] for r in records if k in r) / sum(1 for r in records if k in r) for k in keys}


def _ends_with_eos(comps, agent) -> torch.Tensor:
    # A completion of exactly max_new_tokens tokens may still end with EOS at its last position.
    eos = eos_token_ids(agent)
    eos = [eos] if isinstance(eos, int) else list(eos or [])
    last = comps.completion_ids[:, -1]
    return torch.isin(last, torch.tensor(eos, device=last.device)) if eos else torch.zeros_like(last, dtype=torch.bool)
