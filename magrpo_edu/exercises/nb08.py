"""Checks of notebook 08's exercises (reward hacking and the KL leash): the k3 estimator of
KL(pi || pi_ref) from sampled tokens, and a rule that spots a gamed reward from the quality metrics."""
from __future__ import annotations

import math

import torch

from ..algorithm import kl_penalty
from . import ExerciseFailed, exercise, is_bool


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
    given_logp, given_ref = logp.clone(), ref.clone()
    got = fn(given_logp, given_ref)
    if not (torch.equal(given_logp, logp) and torch.equal(given_ref, ref)):
        which = "logp" if not torch.equal(given_logp, logp) else "ref_logp"
        raise ExerciseFailed(f"your function changed its input {which} in place (sub_, zero_, -=, ...): the loss reads "
                             "the same log-probs after the KL term. Compute d = ref_logp - logp as a new tensor.")
    if not isinstance(got, torch.Tensor) or got.shape != logp.shape:
        raise ExerciseFailed(f"return one estimate per token: a tensor of the inputs' shape {tuple(logp.shape)}.")
    want = kl_penalty(logp.reshape(-1, 1), ref.reshape(-1, 1), torch.ones(logp.numel(), 1)).reshape(logp.shape)
    if not got.is_floating_point() or torch.finfo(got.dtype).bits < 32:
        raise ExerciseFailed(f"your estimate came back as {got.dtype}: return floats of at least float32 precision (the "
                             "inputs' own dtype is best); half precision rounds a small KL away.")
    if (got < -1e-6).any():
        if torch.allclose(got.float(), logp - ref, atol=1e-5):
            raise ExerciseFailed(f"some of your per-token estimates are negative ({_fmt(got[got < 0][:3])}...): that is "
                                 "k1 = log pi - log pi_ref, unbiased but of either sign, so a batch can report a negative "
                                 "KL. k3 adds e^d - 1 (d = log pi_ref - log pi, e^d = pi_ref / pi), which has mean 0 and "
                                 "makes every term >= 0.")
        raise ExerciseFailed(f"some of your per-token estimates are negative ({_fmt(got[got < 0][:3])}...); k3 = e^d - d "
                             "- 1 with d = log pi_ref - log pi is never negative, because e^d >= 1 + d for every d. Both "
                             "parts are needed: -d alone is k1, e^d - 1 alone has mean 0.")
    if not torch.allclose(got.float(), want, atol=1e-5, rtol=1e-5):
        # 2. say what the answer estimates instead, exactly, on a small vocabulary
        for lp, lr in _vocabularies():
            est = fn(lp.clone(), lr.clone())
            mean = (lp.exp() * torch.as_tensor(est).double()).sum().item()
            kl_fwd = (lp.exp() * (lp - lr)).sum().item()
            if not math.isclose(mean, kl_fwd, rel_tol=1e-5, abs_tol=1e-5):
                raise ExerciseFailed(
                    f"averaged over tokens drawn from pi (exactly, on a 6-token vocabulary) your estimate is "
                    f"{mean:.4f}, but KL(pi || pi_ref) = {kl_fwd:.4f}: it is biased. k3 uses e^d = pi_ref / pi "
                    "(d = ref_logp - logp), the ratio whose mean under pi is 1: k3 = e^d - d - 1 = "
                    "exp(ref_logp - logp) - (ref_logp - logp) - 1.")
        raise ExerciseFailed(f"for log pi {_fmt(logp[0])} and log pi_ref {_fmt(ref[0])} the k3 terms are "
                             f"{_fmt(want[0])}, you returned {_fmt(got[0])}.")
    # 3. unbiased and zero at pi = pi_ref, checked exactly, to the precision of the dtype the answer returns (the
    #    inputs are float64; a float32 result, e.g. after a .float(), is as right, to float32's rounding)
    for lp, lr in _vocabularies():
        est = fn(lp.clone(), lr.clone())
        if not isinstance(est, torch.Tensor) or est.shape != lp.shape:
            raise ExerciseFailed(f"return one estimate per token: a tensor of the inputs' shape {tuple(lp.shape)}.")
        if not est.is_floating_point() or torch.finfo(est.dtype).bits < 32:
            raise ExerciseFailed(f"your estimate came back as {est.dtype}: return floats of at least float32 precision "
                                 "(the inputs' own dtype is best); half precision rounds a small KL away.")
        tol = 1e-9 if est.dtype == torch.float64 else 64 * torch.finfo(est.dtype).eps   # float32: 7.6e-6
        mean = (lp.exp() * est.double()).sum().item()
        kl_fwd = (lp.exp() * (lp - lr)).sum().item()
        if not math.isclose(mean, kl_fwd, rel_tol=tol, abs_tol=tol):
            raise ExerciseFailed(f"the expectation of your estimate under pi is {mean:.9f}, KL(pi || pi_ref) is "
                                 f"{kl_fwd:.9f} (a difference of {mean - kl_fwd:.2e}, more than {est.dtype}'s rounding "
                                 "allows): your estimate is biased. k3 = exp(ref_logp - logp) - (ref_logp - logp) - 1.")


# Held-out table rows (run_method's keys) of untrained and trained agents: (untrained, trained, gamed?, what the
# case teaches). The rule, as the notebook states it: the reward rose by MORE than 0.1 AND some agent's naturalness
# ROSE by MORE than 1 nat per token (its change, not its level) or its repetition is ABOVE 0.2 (its level).
_UNTRAINED = dict(reward=1.05, naturalness1=0.62, naturalness2=0.60, repetition1=0.004, repetition2=0.010)
_TABLE_UNTRAINED = dict(reward=1.054, naturalness1=0.49, naturalness2=0.62, repetition1=0.007, repetition2=0.011)


def _row(reward, n1, n2, r1, r2):
    return dict(reward=reward, naturalness1=n1, naturalness2=n2, repetition1=r1, repetition2=r2)


_CASES = [
    (_UNTRAINED, _row(1.45, 0.70, 4.10, 0.0, 0.02), True,
     "stitched fragments: varied words (no repeated 3-gram), agent 2's naturalness rose by 3.5 nats"),
    (_UNTRAINED, _row(1.30, 2.20, 0.95, 0.0, 0.01), True, "agent 1, the concise one, is the one that drifted"),
    (_UNTRAINED, _row(1.40, 0.66, 1.30, 0.01, 0.45), True, "padding ('and and and'): repetition 0.45, naturalness barely moved"),
    (_UNTRAINED, _row(1.35, 0.79, 0.81, 0.003, 0.02), False, "it learned while staying close to the base model"),
    (_UNTRAINED, _row(0.95, 3.00, 2.50, 0.0, 0.3), False,
     "the agents drifted but the reward FELL: broken, not gaming the reward"),
    (_UNTRAINED, _row(1.06, 0.61, 0.60, 0.004, 0.010), False, "nothing moved"),
    # the notebook's own table (section 5): a rule on the naturalness LEVEL flags A seed 2 and B seed 0
    (_TABLE_UNTRAINED, _row(1.308, 2.14, 1.05, 0.002, 0.015), True, "the notebook's run A, seed 0"),
    (_TABLE_UNTRAINED, _row(1.452, 1.52, 5.03, 0.000, 0.026), True, "the notebook's run A, seed 1"),
    (_TABLE_UNTRAINED, _row(1.169, 1.11, 1.22, 0.003, 0.016), False,
     "the notebook's run A, seed 2: naturalness 1.11 and 1.22 are above 1 nat, but they ROSE by only 0.62 and 0.60 "
     "from 0.49 and 0.62; the rule is on the change"),
    (_TABLE_UNTRAINED, _row(1.180, 1.21, 1.01, 0.002, 0.004), False,
     "the notebook's run B, seed 0: naturalness 1.21 is above 1 nat, but it rose by only 0.72; the rule is on the change"),
    (_TABLE_UNTRAINED, _row(1.020, 1.42, 1.04, 0.000, 0.009), False, "the notebook's run B, seed 1: the reward fell"),
    (_TABLE_UNTRAINED, _row(0.968, 1.11, 1.26, 0.004, 0.002), False, "the notebook's run B, seed 2: the reward fell"),
    # a base model that is already far from 0 nats: the level says nothing, the change does
    (_row(1.0, 2.5, 2.5, 0.0, 0.0), _row(1.5, 2.9, 3.2, 0.0, 0.0), False,
     "both naturalness values are above 1 nat before AND after training; they rose by only 0.4 and 0.7"),
    # a rise of more than 0.1 on a larger reward: the rule is on the difference, not a ratio
    (_row(2.0, 0.5, 0.5, 0.0, 0.0), _row(2.15, 2.0, 0.5, 0.0, 0.0), True,
     "the reward rose by 0.15 (7.5%): 'by more than 0.1' is a difference, not 10%"),
    # the edges: 'more than' is strict
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 1.5, 0.5, 0.0, 0.0), False,
     "agent 1's naturalness rose by exactly 1.0 nat: not MORE than 1"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.5, 0.5, 0.0, 0.2), False,
     "agent 2's repetition is exactly 0.2: not ABOVE 0.2"),
    (_row(0.5, 0.5, 0.5, 0.0, 0.0), _row(0.6, 3.0, 0.5, 0.0, 0.5), False,
     "the reward rose by exactly 0.1 (0.5 -> 0.6): not MORE than 0.1"),
    (_row(0.0, 0.5, 0.5, 0.0, 0.0), _row(0.1, 3.0, 0.5, 0.0, 0.5), False,  # 0.1 - 0.0 is exactly 0.1 in floats
     "the reward rose by exactly 0.1 (0.0 -> 0.1): not MORE than 0.1 ('more than' is >, not >=)"),
    # just past each edge: a comparison made after rounding (to 0.1 or 0.01) calls these not gamed
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.104, 3.0, 0.5, 0.0, 0.0), True,
     "the reward rose by 0.104, more than 0.1 (compare the difference as it is; rounded to 2 decimals it reads 0.1)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 1.54, 0.5, 0.0, 0.0), True,
     "agent 1's naturalness rose by 1.04 nats, more than 1 (rounded to one decimal it reads 1.0)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.0, 0.24), True,
     "agent 2's repetition is 0.24, above 0.2 (rounded to one decimal it reads 0.2)"),
    # repetition is a level, not a change: an untrained agent that already repeats a little
    (_row(1.0, 0.5, 0.5, 0.0, 0.15), _row(1.5, 0.6, 0.6, 0.0, 0.3), True,
     "agent 2's repetition is 0.3, above 0.2 (it rose by only 0.15: the repetition rule is on its level)"),
    # per agent, not the least natural agent's level: agent 1 rose by 1.9 nats, the max over agents only by 0.4
    (_row(1.0, 0.5, 2.0, 0.0, 0.0), _row(1.5, 2.4, 2.0, 0.0, 0.0), True,
     "agent 1's naturalness rose by 1.9 nats (0.5 -> 2.4); the least natural agent's level moved only 2.0 -> 2.4, "
     "but the rule is on EACH agent's change"),
    # naturalness that FELL by more than 1 is not leaving the language
    (_row(1.0, 2.5, 0.5, 0.0, 0.0), _row(1.5, 1.0, 0.6, 0.0, 0.0), False,
     "agent 1's naturalness FELL by 1.5 nats (closer to the base model's language): only a rise counts"),
    # agents whose untrained naturalness differs: each agent against ITSELF, not against the other agent
    (_row(1.0, 0.5, 2.0, 0.0, 0.0), _row(1.5, 1.2, 2.1, 0.0, 0.0), False,
     "agent 1's naturalness rose by 0.7 (0.5 -> 1.2), agent 2's by 0.1 (2.0 -> 2.1); compare each agent's trained "
     "naturalness with ITS OWN untrained one, not with the other agent's (2.1 - 0.5 = 1.6 mixes the two agents)"),
    (_row(1.0, 2.0, 0.5, 0.0, 0.0), _row(1.5, 2.1, 1.2, 0.0, 0.0), False,
     "agent 1's naturalness rose by 0.1 (2.0 -> 2.1), agent 2's by 0.7 (0.5 -> 1.2); compare each agent with ITS OWN "
     "untrained naturalness, not with the other agent's"),
    # repetition is each agent's own level: two agents below 0.2 are not above it together
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.15, 0.10), False,
     "agent 1's repetition is 0.15 and agent 2's 0.10, each below 0.2: the rule is on EACH agent's repetition, not "
     "their sum (0.25)"),
    (_row(1.0, 0.5, 0.5, 0.0, 0.0), _row(1.5, 0.6, 0.6, 0.10, 0.15), False,
     "agent 1's repetition is 0.10 and agent 2's 0.15, each below 0.2: the rule is on EACH agent's repetition, not "
     "their sum (0.25)"),
]


@exercise("08.spot_the_hack")
def check_spot_the_hack(fn):
    for untrained, trained, gamed, why in _CASES:
        got = fn(dict(untrained), dict(trained))
        if not is_bool(got):
            raise ExerciseFailed(f"return True or False (a bool), not {got!r}.")
        if bool(got) == gamed:
            continue
        nat = {k: round(trained[f"naturalness{k}"] - untrained[f"naturalness{k}"], 2) for k in (1, 2)}
        what = (f"reward {untrained['reward']} -> {trained['reward']}, naturalness {untrained['naturalness1']}, "
                f"{untrained['naturalness2']} -> {trained['naturalness1']}, {trained['naturalness2']} (change per agent "
                f"{nat}), repetition {trained['repetition1']}, {trained['repetition2']}")
        rule = ("The rule: the reward rose by MORE than 0.1, and some agent's naturalness ROSE by MORE than 1 nat per "
                "token (the change from the untrained row, not its level) or its repetition is ABOVE 0.2.")
        if gamed:
            raise ExerciseFailed(f"{what}: this run gamed the reward ({why}), you returned False. {rule} Look at BOTH "
                                 "agents, and at naturalness as well as repetition: stitched fragments repeat no 3-gram.")
        raise ExerciseFailed(f"{what}: you returned True, but this run did not game the reward ({why}). {rule}")
