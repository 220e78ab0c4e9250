"""MAGRPO, step by step (Liu et al., arXiv 2508.04652, Algorithm 1 and its multi-turn section).

One training step on one task x (the paper uses one prompt per optimiser step):

    1. prompts    o_i = formatter_i(x)                                     for every agent i
    2. rollout    a_i^(1..G) ~ pi_i( . | o_i)          each agent samples G responses to its own prompt
    3. joint      aligned: (a_1^(g), ..., a_n^(g)), g = 1..G;  cross: every combination (G**n)
    4. reward     r^(j) = R(a^(j), x)                  ONE joint reward per joint action, no per-agent reward
    5. advantage  A^(j) = R^(j) - mean_j' R^(j')        the same group-relative advantage for every agent
    6. loss       L_i = -(1/G) sum_g A^(g) sum_t log pi_i(a_i,t^(g) | o_i, a_i,<t^(g))
                  pi_i: the distribution step 2 sampled from (temperature, top-k, top-p: deviation 12)
                  (+ an optional KL leash, config.beta > 0, off in the paper: deviation 11)
    7. update     one optimiser step per agent

This module reads in that order: step 1 (`format_prompts`, each agent's formatter on the row; `seed_rngs`
seeds the sampling). Step 2 and the log-probs of step 6 run on the team's backend, chosen when the agents were built (`agents.team_backend`;
`magrpo_edu.backends`): `backend.sample` (G responses per agent), `backend.logprobs` (the sums of the
token log-probs) and `backend.reference_logprobs` (the frozen model's, for the KL leash); this module
calls only those three, whichever backend it is. Here come step 3 (`joint_actions`), 4
(`joint_rewards`), 5 (`group_advantages`, `credit_samples`), 6 (`policy_loss`, `kl_penalty`,
`agent_losses`, and its backward pass `accumulate_gradients`); then single-turn MAGRPO, steps 2-5
one after the other (`single_turn_rollout`); then the multi-turn rollout tree; then `magrpo_step`,
steps 1-7 on the step's rows: the step `MAGRPOTrainer.training_step` takes.

Multi-turn (the authors' current design, CoMLRL's rollout tree): a rollout tree. At each node every agent samples G;
each joint action j gets a child node whose prompts come from `transition(...)`; the return is
R_j = r_j + gamma * mean(returns of j's child), R_j = r_j at a leaf; advantages are computed among
siblings; a node's children are not expanded when its siblings' mean reward exceeds
`early_termination_threshold`. A single-turn step is the tree's root alone: `single_turn_rollout`
returns the same `Rollout`, with one node, so steps 6-7 and the trainer take either.

Where we deviate (each one line here; the reasons, the numbers and the rewards' and baselines'
deviations are in docs/faithfulness.md, "The algorithm"):
  1. Padding and everything after the first EOS are masked out of sum_t log pi.
  2. Cross mode credits agent i's sample with the mean advantage of the joint actions that contain it.
  3. Multi-turn is the rollout tree with a transition function, returns discounted with gamma = 0.9 as the
     authors' tree design (the paper credits each turn with its own reward: discount=0, without its per-turn loss
     weights (1.2, 0.8); CoMLRL 1.4.3: discount=1).
  4. Std scaling of advantages is an option, off by default ("group": TRL's; "zscore": CoMLRL's).
  5. Generated code runs in a sandboxed subprocess (tasks/coding/reward.py), never in this process.
  6. The defaults are sized for a laptop CPU (LoRA on one frozen base, small budgets); all are config fields.
  7. The prompts are this project's own short raw strings (each task's prompts.py).
  8. No importance ratio, no clipping, no KL by default: on-policy, one gradient step per batch (TRL differs).
  9. Log-probs are summed over a completion's tokens, not averaged (TRL averages).
 10. Each agent has its own optimiser; agents never see each other's responses during a step.
 11. An optional KL leash, config.beta (k3 estimator, summed over tokens; its gradient is KL(pi_ref || pi_i)'s).
 12. Step 6 scores each token under the distribution step 2 drew it from (temperature, top-k, top-p).
 13. Optional dynamic sampling, config.dynamic_sampling (DAPO's): a flat group is dropped and another problem drawn.
"""
from __future__ import annotations

import inspect
import itertools
import numbers
from dataclasses import dataclass, field
import random
from typing import Any, Callable, Mapping, Optional, Sequence

import torch

from .agents import Agent, team_backend
from .backends import Completions, sampling_settings


# ==================================================================================================
# Step 1: prompts
# ==================================================================================================


def format_prompts(formatters: Sequence[Callable], row: Any, where: str = "row") -> list[str]:
    """Step 1: o_i = formatter_i(x), one prompt per agent. `where` names the row in errors ("train row 3")."""
    prompts = []
    for i, fmt in enumerate(formatters):
        try:
            p = fmt(row)
        except Exception as exc:
            raise ValueError(f"formatter {i} ({getattr(fmt, '__name__', fmt)}) failed on {where} "
                             f"({type(exc).__name__}: {exc}); the row is {str(row)[:200]!r}. Check that every "
                             "row has the fields the formatter reads.") from exc
        if not isinstance(p, str) or not p:
            raise ValueError(f"formatter {i} returned {type(p).__name__} {p!r:.80} for {where}; "
                             "it must return a non-empty prompt string.")
        prompts.append(p)
    return prompts


def seed_rngs(seed: int) -> None:
    """Seed torch's and Python's generators, so what step 2 samples depends on `seed` alone."""
    torch.manual_seed(seed % 2**64)  # torch takes seeds modulo 2**64; reducing first keeps big seeds in range
    random.seed(seed)


# ==================================================================================================
# Step 3: joint actions
# ==================================================================================================


def joint_actions(num_agents: int, G: int, mode: str = "aligned") -> torch.Tensor:
    """Step 3: the (J, n) table of joint actions; row j lists which sample of each agent it uses.

    aligned: J = G, row g = (g, g, ..., g)   (the paper)
    cross:   J = G**n, every combination      (later CoMLRL)
    >>> joint_actions(2, 2, "cross").tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    if mode == "aligned":
        return torch.arange(G).unsqueeze(1).repeat(1, num_agents)
    if mode == "cross":
        return torch.tensor(list(itertools.product(range(G), repeat=num_agents)))
    raise ValueError(f"joint_actions: mode={mode!r} is not 'aligned' or 'cross'.")


# ==================================================================================================
# Step 4: the joint reward, and its contract
# ==================================================================================================


class RewardFunctionError(RuntimeError):
    """Step 4's error: a joint reward function broke its contract; the message names the function
    and the joint action."""


def _reward_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _describe(completions: Sequence[Sequence[str]], j: int) -> str:
    parts = [f"agent {i}: {c[j][:80]!r}" for i, c in enumerate(completions)]
    return "; ".join(parts)


def joint_rewards(reward_fn: Callable, completions: Sequence[Sequence[str]], row: Any
                  ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Step 4: call the joint reward once for J joint actions and check what it returns.

    Contract: `reward_fn(completions, row)` gets one list per agent, aligned by joint action
    (completions[i][j] is agent i's part of joint action j), and the dataset row; it returns J
    floats, or a mapping with a "total" list of J floats plus optional per-component lists
    (logged as reward/<name>).

    >>> def longer_second(completions, row):
    ...     return [float(len(b) > len(a)) for a, b in zip(*completions)]
    >>> joint_rewards(longer_second, [["hi", "hello"], ["hey there", "yo"]], row={})[0].tolist()
    [1.0, 0.0]
    """
    name = _reward_name(reward_fn)
    J = len(completions[0])
    try:
        out = reward_fn([list(c) for c in completions], row)
    except Exception as exc:  # find the joint action that breaks it, so the message can name it
        for j in range(J):
            try:
                reward_fn([[c[j]] for c in completions], row)
            except Exception:
                raise RewardFunctionError(
                    f"reward function {name} raised {type(exc).__name__}: {exc} on joint action {j} "
                    f"({_describe(completions, j)}). Nothing was updated in this step; fix the reward "
                    "and call train() again to continue from the last completed step.") from exc
        raise RewardFunctionError(f"reward function {name} raised {type(exc).__name__}: {exc} on the batch of "
                                  f"{J} joint actions (each one alone passes). Nothing was updated in this step.") from exc
    components: dict[str, torch.Tensor] = {}
    if isinstance(out, Mapping):
        if "total" not in out:
            raise RewardFunctionError(f"reward function {name} returned a mapping without a 'total' key "
                                      f"(keys: {sorted(out)}); return J floats or {{'total': [...], ...}}.")
        components = {k: _as_vector(name, v, J, completions, what=f"component {k!r}") for k, v in out.items() if k != "total"}
        out = out["total"]
    return _as_vector(name, out, J, completions, what="total"), components


def _as_vector(name, values, J, completions, what) -> torch.Tensor:
    """The J rewards as a float tensor. Accepted: a list or tuple of real numbers (bools and numpy
    scalars included), a 1-D tensor or array. Refused, with the reason: a string (which would
    otherwise be read character by character: "12" -> [1.0, 2.0]), a set or dict (no order), an
    element that is not a number (e.g. the string "0.5")."""
    expected = f"expected a list (or 1-D tensor) of {J} numbers, one per joint action"
    if isinstance(values, torch.Tensor) or hasattr(values, "__array__") and not isinstance(values, (list, tuple)):
        t = torch.as_tensor(values)
        if t.dim() != 1 or not (t.is_floating_point() or t.dtype in (torch.bool, torch.int8, torch.int16, torch.int32,
                                                                      torch.int64, torch.uint8)):
            raise RewardFunctionError(f"reward function {name} returned a {t.dim()}-D {t.dtype} tensor for its {what}; "
                                      f"{expected}.")
        t = t.detach().to("cpu", torch.float32)
    elif not isinstance(values, (list, tuple)):
        raise RewardFunctionError(f"reward function {name} returned {type(values).__name__} {values!r:.60} for its {what}; "
                                  f"{expected}" + (" (a string is not a list of rewards)." if isinstance(values, (str, bytes))
                                                   else " (a set or mapping has no order)." if isinstance(values, (set, frozenset, Mapping))
                                                   else "."))
    else:
        for j, v in enumerate(values):
            if not (isinstance(v, numbers.Real) or isinstance(v, torch.Tensor) and v.numel() == 1 and not v.dtype.is_complex):
                raise RewardFunctionError(f"reward function {name} returned {type(v).__name__} {v!r:.60} for its {what} at "
                                          f"joint action {j}; every reward must be a number ({expected}).")
        t = torch.tensor([float(v) for v in values], dtype=torch.float32)
    if t.numel() != J:
        raise RewardFunctionError(f"reward function {name} returned {t.numel()} values for its {what}; "
                                  f"expected {J}, one per joint action.")
    bad = (~torch.isfinite(t)).nonzero().flatten().tolist()
    if bad:
        j = bad[0]
        raise RewardFunctionError(f"reward function {name} returned {t[j].item()} (not finite) for its {what} "
                                  f"at joint action {j} ({_describe(completions, j)}).")
    return t


# ==================================================================================================
# Step 5: group-relative advantages, and the credit each agent's sample gets
# ==================================================================================================


def group_advantages(rewards: torch.Tensor, mode: str = "mean", scale: str = "none",
                     clip: Optional[float] = None, eps: float = 1e-4) -> torch.Tensor:
    """Step 5: advantages within each group; the LAST dimension of `rewards` is the group (size G).

    mode  "mean" (MAGRPO):       A_g = R_g - mean_k R_k                      (the paper's Algorithm 1, step 5)
          "none" (MAREINFORCE):  A_g = R_g
          "rloo" (MARLOO):       A_g = R_g - mean_{k != g} R_k = G/(G-1) * (R_g - mean_k R_k)
          "max"  (MAReMax):      A_g = R_g - max_k R_k
    scale "none" (paper);
          "group" (TRL's scale_rewards="group"): A / (sample std of the group's R + eps), eps = 1e-4
                   (refused with mode "none": it would divide the un-centred R by ~0 on equal rewards);
          "zscore" (CoMLRL 1.4.3): (A - mean A) / max(population std of A, 1e-6), after the
                   baseline (it re-centres A, so with "max" or "none" it is not a plain rescaling).
    clip  clamp to [-clip, clip] afterwards (paper-era code: 10).

    >>> group_advantages(torch.tensor([1.0, 2.0, 3.0, 6.0])).tolist()
    [-2.0, -1.0, 0.0, 3.0]
    >>> group_advantages(torch.tensor([1.0, 2.0, 3.0, 6.0]), mode="max").tolist()
    [-5.0, -4.0, -3.0, 0.0]
    """
    r = torch.as_tensor(rewards)
    r = r.to(torch.float64 if r.dtype == torch.float64 else torch.float32)   # float64 kept (exact checks); else float32
    G = r.shape[-1]
    if G < 2:
        raise ValueError(f"group_advantages needs a group of at least 2 rewards on the last dimension, got shape {tuple(r.shape)}.")
    mean = r.mean(dim=-1, keepdim=True)
    if mode == "mean":
        adv = r - mean
    elif mode == "none":
        adv = r.clone()
    elif mode == "rloo":
        adv = (r - mean) * G / (G - 1)
    elif mode == "max":
        adv = r - r.max(dim=-1, keepdim=True).values
    else:
        raise ValueError(f"group_advantages: mode={mode!r} is not one of 'mean', 'none', 'rloo', 'max'.")
    if scale == "group":
        if mode == "none":
            from .config import NONE_WITH_GROUP_SCALE

            raise ValueError(NONE_WITH_GROUP_SCALE)
        adv = adv / (r.std(dim=-1, keepdim=True) + eps)
    elif scale == "zscore":
        adv = (adv - adv.mean(dim=-1, keepdim=True)) / adv.std(dim=-1, unbiased=False, keepdim=True).clamp_min(1e-6)
    elif scale != "none":
        raise ValueError(f"group_advantages: scale={scale!r} is not one of 'none', 'group', 'zscore'.")
    if clip is not None:
        adv = adv.clamp(-clip, clip)
    return adv


def credit_samples(joint_adv: torch.Tensor, table: torch.Tensor, G: int) -> torch.Tensor:
    """Step 5, credit: the (n, G) advantage of each agent's each sample from the (J,) joint-action
    advantages.

    Agent i's sample k gets the MEAN advantage of the joint actions that contain it (deviation 2:
    the reference sums the joint actions' returns and takes advantages among those sums; the two
    are a constant factor apart only for baselines "mean"/"none"/"rloo" without std scaling,
    tests/test_advantages.py shows both cases). In aligned
    mode this is the identity: sample g gets A^(g).
    """
    n = table.shape[1]
    out = torch.zeros(n, G, dtype=joint_adv.dtype)            # in the advantages' dtype (float64 stays float64)
    for i in range(n):
        out[i] = (torch.zeros(G, dtype=joint_adv.dtype).index_add_(0, table[:, i], joint_adv)
                  / torch.bincount(table[:, i], minlength=G))
    return out


# ==================================================================================================
# Step 6: the per-agent loss
# ==================================================================================================


def policy_loss(logps: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """Step 6: L_i = -(1/G) sum_g A^(g) * sum_t log pi_i(a_t^(g) | ...), over a node's G samples.

    `logps` (..., G) are the per-completion SUMS of token log-probs; rows of several tree nodes are
    averaged the same way (deviation 3).
    >>> policy_loss(torch.tensor([-1.0, -3.0]), torch.tensor([1.0, -1.0])).item()
    -1.0
    """
    return -(advantages.detach() * logps).mean()


def kl_penalty(logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Step 6's optional leash (deviation 11): the k3 term summed over each completion's tokens,
    (B,), from per-token log-probs (B, C) and the completion mask.

        kl_t = exp(ref_t - logp_t) - (ref_t - logp_t) - 1   (>= 0, TRL's per-token estimator)
        d kl_t / d logp_t = 1 - exp(ref_t - logp_t)

    Over tokens sampled from an untruncated pi (top_k 0, top_p 1), its VALUE is an unbiased estimate
    of KL(pi || pi_ref) (with top-k / top-p, pi is the truncated sampling policy the loss scores, and the mean is
    KL(pi || pi_ref) - (1 - Z) per token, Z = pi_ref's mass on the kept set); its GRADIENT is, in expectation, the gradient of KL(pi_ref || pi), the other direction
    (deviation 11 derives both; they agree only near pi_ref).

    `ref_logp` comes from the frozen reference, without gradient.
    >>> kl_penalty(torch.tensor([[-1.0, -2.0]]), torch.tensor([[-1.0, -2.0]]), torch.ones(1, 2)).tolist()
    [0.0]
    """
    d = ref_logp.detach() - logp
    return ((torch.exp(d) - d - 1) * mask).sum(-1)


def agent_losses(agents: Sequence[Agent], ro: Rollout, beta: float = 0.0, backend=None) -> list[torch.Tensor]:
    """Step 6 for every agent: L_i over every node agent i acted in (one node in a single-turn step;
    one `backend.logprobs` call per level for the whole team).

    beta > 0 adds the KL leash (deviation 11): L_i += beta * (1/G) sum_g sum_t kl_t^(g), with one
    reference forward per agent and level (no gradient), and stores each agent's mean per-token
    KL in `ro.kl`. beta = 0 (the paper) computes exactly `policy_loss` and no reference pass. `backend`: the
    team's backend (`team_backend`), looked up once a step by `magrpo_step`."""
    backend = team_backend(agents) if backend is None else backend
    per_agent: list[list[torch.Tensor]] = [[] for _ in agents]
    kl_sum, kl_tokens = [0.0] * len(agents), [0.0] * len(agents)
    for depth, level in enumerate(ro.levels):
        comps = ro.completions[depth]
        if beta == 0:
            logps = backend.logprobs(agents, comps)  # sum_t log pi_i(a_t | o_i, a_<t), (B_i,)
        else:
            token_logps = backend.logprobs(agents, comps, per_token=True)
            logps = [t.sum(-1) for t in token_logps]
        for i, agent in enumerate(agents):
            adv = torch.cat([nd.sample_advantages[i] for nd in level]).to(agent.device)
            term = policy_loss(logps[i], adv)
            if beta != 0:
                mask = comps[i].completion_mask.to(token_logps[i].device)
                T = (comps[i].sampling or {}).get("temperature", 1.0)  # the reference at the sampling temperature (TRL)
                (ref,) = backend.reference_logprobs([agent], [comps[i]], T)  # log pi_ref per token, no grad
                kl = kl_penalty(token_logps[i], ref, mask)
                term = term + beta * kl.mean()
                kl_sum[i] += kl.detach().sum().item()
                kl_tokens[i] += mask.sum().item()
            per_agent[i].append(term * len(level))
    if beta != 0:
        ro.kl = [s / max(t, 1.0) for s, t in zip(kl_sum, kl_tokens)]
    nodes = sum(len(level) for level in ro.levels)
    return [torch.stack(terms).sum() / nodes for terms in per_agent]


# ==================================================================================================
# Step 6's backward pass (step 7, the optimiser step, closes `magrpo_step`)
# ==================================================================================================


def accumulate_gradients(agents: Sequence[Agent], ro: Rollout, beta: float = 0.0, weight: float = 1.0,
                         backend=None) -> list[float]:
    """The gradients of step 6 for one prompt: adds weight * grad L_i to each agent's gradients and
    returns the losses L_i.

    One backward pass over all losses: the agents' parameters are disjoint, so each agent's
    gradient is exactly the gradient of its own L_i. With several prompts per optimiser step
    (config.prompts_per_step = P; or P prompts over several processes) `magrpo_step` calls it once
    per prompt with weight 1/P, so the accumulated gradient is that of the mean of the prompts'
    losses; each prompt is its own group (its own advantages). weight 1 is the paper."""
    losses = agent_losses(agents, ro, beta, backend)
    torch.autograd.backward(losses if weight == 1 else [loss * weight for loss in losses])
    return [loss.item() for loss in losses]


# ==================================================================================================
# Single-turn MAGRPO (Algorithm 1): steps 2-5 on one task, recorded as a one-node Rollout
# ==================================================================================================


@dataclass
class Node:
    """One group: every agent's prompt and what steps 2-5 made of it. Single-turn MAGRPO has one
    node; the multi-turn tree has one per turn and joint action of the turn before."""

    depth: int
    prompts: list[str]  # one per agent
    histories: list[list[tuple[str, str]]]  # per agent: its own (prompt, completion) pairs so far
    completions: list[list[str]] = field(default_factory=list)  # per agent, its G sampled texts
    table: Optional[torch.Tensor] = None  # (J, n) joint-action table
    rewards: Optional[torch.Tensor] = None  # (J,) immediate joint rewards r
    components: dict = field(default_factory=dict)
    children: dict[int, "Node"] = field(default_factory=dict)  # joint action -> child node
    returns: Optional[torch.Tensor] = None  # (J,) R = r + gamma * mean(child's returns)
    advantages: Optional[torch.Tensor] = None  # (J,) among siblings
    sample_advantages: Optional[torch.Tensor] = None  # (n, G) credit per agent's sample
    terminated_early: bool = False


@dataclass
class Rollout:
    """Everything one training step sampled on one task: the nodes by depth (`levels`; a single
    turn is one level of one node) and each level's Completions (step 2's tokens, scored in step 6)."""

    root: Node
    levels: list[list[Node]]
    completions: list[list[Completions]]  # [level][agent]
    kl: Optional[list[float]] = None  # per agent: mean per-token k3, estimates KL(pi_i || pi_ref); set when beta > 0
    draws: int = 1  # dynamic sampling: problems sampled for this place of the step (the flat ones dropped + this one)
    drawn_key: Any = None  # dynamic sampling: the key `draw_row` gave this rollout's problem (None: the step's own row)

    def nodes(self) -> list[Node]:
        return [n for level in self.levels for n in level]


def sample_and_score(agents: Sequence[Agent], nodes: Sequence[Node], row: Any, reward_fn: Callable, config,
                     backend=None) -> list:
    """Steps 2-4 of Algorithm 1 on every node of one depth (single-turn MAGRPO: the one root node), written onto
    the nodes: each agent samples G answers to each node's prompt, all nodes in one batched call per agent group
    (step 2: a_i^(1..G) ~ pi_i(. | o_i)); the joint-action table (step 3: (J, n)); each joint action's reward
    (step 4: r^(j) = R(a^(j), x)). Returns each agent's `Completions` (step 6 scores their tokens).
    `backend`: the team's backend (`team_backend`), looked up once a step by the caller."""
    n, G = len(agents), config.num_generations
    backend = team_backend(agents) if backend is None else backend
    comps = backend.sample(agents, [[nd.prompts[i] for nd in nodes] for i in range(n)], G, sampling_settings(config),
                          batch_agents=config.batch_agents)  # step 2
    table = joint_actions(n, G, config.joint_mode)  # step 3
    for k, nd in enumerate(nodes):
        nd.completions = [list(comps[i].texts[k * G:(k + 1) * G]) for i in range(n)]
        nd.table = table
        joint = [[nd.completions[i][int(table[j, i])] for j in range(len(table))] for i in range(n)]
        nd.rewards, nd.components = joint_rewards(reward_fn, joint, row)  # step 4
    return comps


def single_turn_rollout(agents: Sequence[Agent], prompts: Sequence[str], row: Any, reward_fn: Callable,
                        config, backend=None) -> Rollout:
    """Steps 2-5 of Algorithm 1 on one task x, given each agent's prompt o_i (step 1): steps 2-4 are
    `sample_and_score` on the root node (the same call the tree makes at each depth), step 5 the group-relative
    advantage of each joint action and the credit to each agent's samples.

    Returns a one-node `Rollout`, the structure the tree builds, so step 6 (`agent_losses`) and
    `magrpo_step` take it as they take a tree.
    """
    n = len(agents)
    if len(prompts) != n:
        raise ValueError(f"rollout got {len(prompts)} prompts for {n} agents; each agent needs its own prompt.")
    root = Node(depth=0, prompts=list(prompts), histories=[[] for _ in range(n)])
    comps = sample_and_score(agents, [root], row, reward_fn, config, backend)  # steps 2-4
    ro = Rollout(root=root, levels=[[root]], completions=[comps])
    assign_advantages(ro, config)  # step 5: one node, no child: returns = rewards, advantages among the J joint actions
    return ro


# ==================================================================================================
# Multi-turn: the rollout tree (the authors' current design)
# ==================================================================================================


def call_transition(transition, prompts, completions, histories, row):
    """The transition's next prompts for one joint action (one per agent), checked: the row is passed where the
    transition takes it; anything but one prompt string per agent raises a clear error."""
    try:
        takes_row = "row" in inspect.signature(transition).parameters
    except (TypeError, ValueError):
        takes_row = False
    nxt = transition(prompts, completions, histories, row=row) if takes_row else transition(prompts, completions, histories)
    if not isinstance(nxt, (list, tuple)) or len(nxt) != len(prompts) or not all(isinstance(p, str) for p in nxt):
        raise ValueError(f"transition {_reward_name(transition)} must return one prompt string per agent "
                         f"({len(prompts)}), got {nxt!r:.200}.")
    return list(nxt)


def rollout_tree(agents: Sequence[Agent], prompts: Sequence[str], row: Any, reward_fn: Callable, config,
                 transition: Optional[Callable] = None, backend=None) -> Rollout:
    """Steps 2-4 on every node of the rollout tree (CoMLRL's design): at each depth `sample_and_score` (every
    node's agents sample G, form joint actions and score them, all nodes of the depth in one batched call per
    agent group); each joint action gets a child node whose prompts come from `transition`, until num_turns or
    early termination. Step 5 is `assign_advantages`.
    """
    n = len(agents)
    if len(prompts) != n:
        raise ValueError(f"rollout got {len(prompts)} prompts for {n} agents; each agent needs its own prompt.")
    if config.num_turns > 1 and transition is None:
        raise ValueError(f"num_turns={config.num_turns} needs a transition(prompts, completions, histories) "
                         "function that builds each agent's next prompt.")
    backend = team_backend(agents) if backend is None else backend
    root = Node(depth=0, prompts=list(prompts), histories=[[] for _ in range(n)])
    levels, comps_per_level = [[root]], []
    for depth in range(config.num_turns):
        level = levels[-1]
        comps_per_level.append(sample_and_score(agents, level, row, reward_fn, config, backend))  # steps 2-4
        nxt: list[Node] = []
        for nd in level:
            if depth + 1 == config.num_turns:
                continue
            thr = config.early_termination_threshold
            if thr is not None and nd.rewards.mean().item() > thr:
                nd.terminated_early = True
                continue
            for j in range(len(nd.table)):
                joint = [nd.completions[i][int(nd.table[j, i])] for i in range(n)]
                hist = [nd.histories[i] + [(nd.prompts[i], joint[i])] for i in range(n)]
                child = Node(depth=depth + 1, prompts=call_transition(transition, nd.prompts, joint, hist, row),
                             histories=hist)
                nd.children[j] = child
                nxt.append(child)
        if not nxt:
            break
        levels.append(nxt)
    return Rollout(root=root, levels=levels, completions=comps_per_level)


def compute_returns(node: Node, discount: float) -> torch.Tensor:
    """Step 5's target on the tree, bottom-up: R_j = r_j + gamma * mean(returns of child j), and
    R_j = r_j where j has no child."""
    R = node.rewards.clone()
    for j, child in node.children.items():
        R[j] = R[j] + discount * compute_returns(child, discount).mean()
    node.returns = R
    return R


def assign_advantages(ro: Rollout, config) -> None:
    """Step 5 at every node of the tree: the returns, advantages among siblings, then credit to each
    agent's samples. On a single-turn rollout (one node, no child) the returns are the rewards."""
    compute_returns(ro.root, config.discount)
    for nd in ro.nodes():
        nd.advantages = group_advantages(nd.returns, config.advantage, config.scale_rewards, config.advantage_clip)
        nd.sample_advantages = credit_samples(nd.advantages, nd.table, config.num_generations)


# ==================================================================================================
# One whole step
# ==================================================================================================


def rollout(agents: Sequence[Agent], prompts: Sequence[str], row: Any, reward_fn: Callable, config,
            transition: Optional[Callable] = None, backend=None) -> Rollout:
    """Steps 2-5 on one task, any number of turns: `single_turn_rollout` when config.num_turns == 1,
    else `rollout_tree` (steps 2-4 at every node) and `assign_advantages` (step 5 at every node; it
    only reads the rewards, so calling it again recomputes the same returns and advantages)."""
    if config.num_turns == 1:
        return single_turn_rollout(agents, prompts, row, reward_fn, config, backend)
    ro = rollout_tree(agents, prompts, row, reward_fn, config, transition, backend)
    assign_advantages(ro, config)
    return ro


def magrpo_step(agents: Sequence[Agent], optimizers: Sequence[torch.optim.Optimizer], formatters: Sequence[Callable],
                rows: Sequence[Any], reward_fn: Callable, config, seed: Optional[int] = None,
                transition: Optional[Callable] = None,
                reduce_gradients: Optional[Callable[[Sequence[Agent]], None]] = None,
                where: Optional[Sequence[str]] = None,
                draw_row: Optional[Callable[[], tuple[Any, Any]]] = None) -> list[tuple[Rollout, list[float]]]:
    """One optimiser step of MAGRPO on the step's rows: steps 1-6 on each row, then step 7. Returns, per
    row, its rollout and the agents' losses.

    `rows`: the dataset rows x of the step; the paper takes one per step:
    `magrpo_step(agents, optimizers, formatters, [row], reward_fn, config)`. For each row: step 1
    (`format_prompts`), then, when `seed` is given, the generators are seeded with seed + k (k: the
    row's place in `rows`) so its samples depend on that alone, then steps 2-5 (`rollout`) and step
    6's backward pass. With config.prompts_per_step = P rows each adds 1/P of its gradients
    (`accumulate_gradients`), so the step follows the mean of their losses. `reduce_gradients(agents)`,
    when given, runs after the last backward pass and before the optimiser steps: data parallel sums
    the gradients over the processes there (`distributed.all_reduce_gradients`; each process then
    passes its P / W rows). `where`: one name per row for errors ("train row 3").

    Dynamic sampling (config.dynamic_sampling = D > 0, with `draw_row`; deviation 13, DAPO's): a row whose J
    joint rewards are all equal has advantages 0, so its rollout is dropped before step 6 (no backward) and
    `draw_row()` -> (key, row) gives another in its place, seeded with seed + k + 1,000,000 x (draws so far in
    the step); at most D extra rows in the whole step. A row still flat when the cap is reached is kept (with
    beta = 0 its gradient is 0). Each kept rollout records `draws` and the `drawn_key` of its row."""
    if reduce_gradients is None and len(rows) != config.prompts_per_step:
        raise ValueError(f"magrpo_step got {len(rows)} rows but config.prompts_per_step={config.prompts_per_step}: each "
                         "row's gradient is weighted 1/prompts_per_step, so give that many rows (or set the config's).")
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)
    backend = team_backend(agents)  # the team's backend (steps 2 and 6), looked up once for the step
    done = []
    extra = getattr(config, "dynamic_sampling", 0) if draw_row is not None else 0
    redrawn = 0
    for k, row in enumerate(rows):
        prompts = format_prompts(formatters, row, where[k] if where is not None else f"row {k} of the step")  # step 1
        if seed is not None:
            seed_rngs(seed + k)
        ro = rollout(agents, prompts, row, reward_fn, config, transition, backend)  # steps 2-5
        draws, key = 1, None
        while redrawn < extra and bool((ro.root.rewards == ro.root.rewards[0]).all()):  # a flat group: draw another
            redrawn += 1
            draws += 1
            key, row = draw_row()
            prompts = format_prompts(formatters, row, f"dynamic-sampling row {key}")
            if seed is not None:
                seed_rngs(seed + k + 1_000_000 * redrawn)
            ro = rollout(agents, prompts, row, reward_fn, config, transition, backend)
        ro.draws, ro.drawn_key = draws, key
        losses = accumulate_gradients(agents, ro, config.beta, 1.0 / config.prompts_per_step, backend)  # step 6, backward
        done.append((ro, losses))
    if reduce_gradients is not None:
        reduce_gradients(agents)  # e.g. the sum over data-parallel processes
    for opt in optimizers:  # step 7: one optimiser step per agent, each on its own loss
        opt.step()
    return done
