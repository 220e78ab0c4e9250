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


def fixed_and_broken(first: Sequence[Sequence[bool]], second: Sequence[Sequence[bool]]) -> dict:
    """What a second turn did, test by test (`reward.assert_outcomes_many` of the first and the second answers of
    the same joint actions, in the same order): the share of second answers that pass a test their first answer
    failed ("fixed"), the share that fail a test their first answer passed ("broke"), the shares that pass every
    test in each turn, and how many answers ("answers"). An answer can both fix one test and break another.

    >>> fixed_and_broken([[True, False], [True, True], [False, False]], [[True, True], [True, False], [False, False]])
    {'fixed': 0.3333, 'broke': 0.3333, 'pass_all_first': 0.3333, 'pass_all_second': 0.3333, 'answers': 3}
    """
    if len(first) != len(second) or any(len(a) != len(b) for a, b in zip(first, second)):
        raise ValueError("fixed_and_broken: give the first and second turn's outcomes of the same joint actions, "
                         "one list of per-test flags each, in the same order.")
    n = len(first)
    if n == 0:
        raise ValueError("fixed_and_broken: no answers.")
    fixed = sum(any(b and not a for a, b in zip(x, y)) for x, y in zip(first, second))
    broke = sum(any(a and not b for a, b in zip(x, y)) for x, y in zip(first, second))
    full = lambda flags: bool(flags) and all(flags)  # noqa: E731
    return dict(fixed=round(fixed / n, 4), broke=round(broke / n, 4),
                pass_all_first=round(sum(map(full, first)) / n, 4), pass_all_second=round(sum(map(full, second)) / n, 4),
                answers=n)
