"""What a set of joint answers earned, level by level, and where it is lost gate by gate: the notebooks' and
experiments' reading of the coding reward (`level_shares`, `gate_shares`). Nothing here changes a reward.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ...sandbox import SandboxLimits
from .reward import coding_levels_many


LEVEL_SHARES = ("aux_defined", "main_defined", "syntax", "tests_any", "tests_all", "calls_aux", "not_thin_wrapper")
"""The levels `level_shares` counts: a sample earns one when its part of the reward is > 0 (tests_any:
at least one test passed; tests_all: every test passed)."""


def level_shares(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict], G: int = 4,
                 limits: Optional[SandboxLimits] = None) -> dict:
    """What a set of joint answers earned, level by level (`LEVEL_SHARES`): the share of samples earning
    each level, the mean reward, and the share of groups of G consecutive samples (one row's group) whose
    rewards are all equal: MAGRPO's advantage is 0 in such a group, so nothing is learned from it."""
    lv = coding_levels_many(auxes, mains, rows, limits)
    n = len(lv)
    if n == 0 or n % G:
        raise ValueError(f"level_shares needs groups of G = {G} consecutive samples; got {n} samples.")
    def earns(v: dict, level: str) -> bool:
        if level == "tests_any":
            return v["passed"] > 0
        if level == "tests_all":
            return v["total_asserts"] > 0 and v["passed"] == v["total_asserts"]
        return v[level] > 0

    out = {k: sum(earns(v, k) for v in lv) / n for k in LEVEL_SHARES}
    out["reward"] = sum(v["total_reward"] for v in lv) / n
    groups = [[v["total_reward"] for v in lv[i:i + G]] for i in range(0, n, G)]
    out["zero_variance_groups"] = sum(max(g) - min(g) < 1e-9 for g in groups) / len(groups)
    out["groups"], out["samples"] = len(groups), n
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


GATES = (("entry point defined (with a return)", "main_defined", None), ("parses", "syntax", "main_defined"),
         (">= 1 test passes", "tests_any", "syntax"), ("main calls aux (bonus +0.5)", "calls_aux", "tests_any"),
         ("not a thin wrapper (bonus +1.0)", "not_thin_wrapper", "calls_aux"))
"""The reward's chain of gates, in order, as (name, level in `LEVEL_SHARES`, the level before it): a joint
answer that fails one earns none of the levels after it."""


def gate_shares(shares: dict) -> list[tuple[str, float, Optional[float]]]:
    """Where a set of answers is lost, gate by gate: per `GATES` entry, (name, the share of all answers that
    pass it, the share among those that passed the gate before, None for the first), from `level_shares`'s
    output (or a mean of several)."""
    return [(name, shares[k], None if prev is None else shares[k] / max(shares[prev], 1e-9)) for name, k, prev in GATES]
