"""Checks of notebook 08's exercises (reward hacking and the KL leash): the k3 estimator of
KL(pi || pi_ref) from sampled tokens, and a rule that spots a gamed reward from the quality metrics."""
from __future__ import annotations

import math

import torch

from ..algorithm import kl_penalty
from . import ExerciseFailed, exercise


def _fmt(t: torch.Tensor) -> list:
    return [round(x, 4) for x in t.flatten().tolist()]


def _vocabularies():
    """(log pi, log pi_ref) over small vocabularies, in float64: equal, near, far, and one where
    the agent puts almost all its mass on one token (a collapsed, 'hacked' policy)."""
    f64 = dict(dtype=torch.float64)
    ref = torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0], **f64).log_softmax(-1)
    yield ref.clone(), ref
    yield (ref.exp() + torch.tensor([0.05, -0.05, 0.02, -0.02, 0.0, 0.0], **f64)).log(), ref
    yield torch.tensor([-1.0, 0.0, 1.0, 0.0, 1.0, -1.0], **f64).log_softmax(-1), ref
    yield torch.tensor([-3.0, -3.0, -3.0, -3.0, -3.0, 4.0], **f64).log_softmax(-1), ref


@exercise("08.k3_estimator")
def check_k3(fn):
    # 1. per token, on log-probs of sampled tokens (any shape), the k3 value
    g = torch.Generator().manual_seed(8)
    logp = -torch.rand(3, 5, generator=g) * 3 - 0.01
    ref = logp + torch.randn(3, 5, generator=g)
    got = fn(logp.clone(), ref.clone())
    if not isinstance(got, torch.Tensor) or got.shape != logp.shape:
        raise ExerciseFailed(f"return one estimate per token: a tensor of the inputs' shape {tuple(logp.shape)}.")
    want = kl_penalty(logp.reshape(-1, 1), ref.reshape(-1, 1), torch.ones(logp.numel(), 1)).reshape(logp.shape)
    if (got < -1e-6).any():
        raise ExerciseFailed(f"some of your per-token estimates are negative ({_fmt(got[got < 0][:3])}...): that is "
                             "k1 = log pi - log pi_ref, unbiased but of either sign, so a batch can report a negative "
                             "KL. k3 adds r - 1 (r = pi_ref / pi), which has mean 0 and makes every term >= 0.")
    if not torch.allclose(got.float(), want, atol=1e-5, rtol=1e-5):
        # 2. say what the answer estimates instead, exactly, on a small vocabulary
        for lp, lr in _vocabularies():
            est = fn(lp.clone(), lr.clone())
            mean = (lp.exp() * est).sum().item()
            kl_fwd = (lp.exp() * (lp - lr)).sum().item()
            if not math.isclose(mean, kl_fwd, rel_tol=1e-6, abs_tol=1e-9):
                raise ExerciseFailed(
                    f"averaged over tokens drawn from pi (exactly, on a 6-token vocabulary) your estimate is "
                    f"{mean:.4f}, but KL(pi || pi_ref) = {kl_fwd:.4f}: it is biased. k3 uses r = pi_ref / pi, "
                    "the ratio whose mean under pi is 1: k3 = r - log r - 1 = exp(ref - logp) - (ref - logp) - 1.")
        raise ExerciseFailed(f"for log pi {_fmt(logp[0])} and log pi_ref {_fmt(ref[0])} the k3 terms are "
                             f"{_fmt(want[0])}, you returned {_fmt(got[0])}.")
    # 3. unbiased and zero at pi = pi_ref, checked exactly (float64)
    for lp, lr in _vocabularies():
        est = fn(lp.clone(), lr.clone())
        mean = (lp.exp() * est).sum().item()
        kl_fwd = (lp.exp() * (lp - lr)).sum().item()
        if not math.isclose(mean, kl_fwd, rel_tol=1e-6, abs_tol=1e-9):
            raise ExerciseFailed(f"the expectation of your estimate under pi is {mean:.6f}, KL(pi || pi_ref) is "
                                 f"{kl_fwd:.6f}; compute it in the inputs' dtype (float64 here).")


# Held-out table rows (run_method's keys) of untrained and trained agents: (untrained, trained, gamed?)
_UNTRAINED = dict(reward=1.05, naturalness1=0.62, naturalness2=0.60, repetition1=0.004, repetition2=0.010)
_CASES = [
    # stitched fragments: varied words (no repeated 3-gram) far from the base model's language
    (dict(reward=1.45, naturalness1=0.70, naturalness2=4.10, repetition1=0.0, repetition2=0.02), True),
    # the concise agent is the one that drifted
    (dict(reward=1.30, naturalness1=2.20, naturalness2=0.95, repetition1=0.0, repetition2=0.01), True),
    # padding: 'and and and', a repeated phrase, while the NLL barely moved
    (dict(reward=1.40, naturalness1=0.66, naturalness2=1.30, repetition1=0.01, repetition2=0.45), True),
    # learned while staying close to the base model: not gamed
    (dict(reward=1.35, naturalness1=0.79, naturalness2=0.81, repetition1=0.003, repetition2=0.02), False),
    # drifted but the reward did not rise: broken, not gaming the reward
    (dict(reward=0.95, naturalness1=3.00, naturalness2=2.50, repetition1=0.0, repetition2=0.3), False),
    # neither moved
    (dict(reward=1.06, naturalness1=0.61, naturalness2=0.60, repetition1=0.004, repetition2=0.010), False),
]


@exercise("08.spot_the_hack")
def check_spot_the_hack(fn):
    for trained, gamed in _CASES:
        got = fn(dict(_UNTRAINED), dict(trained))
        if not isinstance(got, bool):
            raise ExerciseFailed(f"return True or False (a bool), not {got!r}.")
        if got == gamed:
            continue
        nat = {k: round(trained[f"naturalness{k}"] - _UNTRAINED[f"naturalness{k}"], 2) for k in (1, 2)}
        what = (f"reward {_UNTRAINED['reward']} -> {trained['reward']}, naturalness change per agent {nat}, "
                f"repetition {trained['repetition1']}, {trained['repetition2']}")
        if gamed:
            raise ExerciseFailed(f"{what}: this run gamed the reward (it rose while an agent left the base model's "
                                 "language), you returned False. Look at BOTH agents, and at naturalness as well as "
                                 "repetition: stitched fragments repeat no 3-gram.")
        raise ExerciseFailed(f"{what}: you returned True, but this is not a gamed reward (the reward did not rise by "
                             "more than 0.1, or no agent moved by more than 1 nat/token or repeats itself beyond 0.2).")
