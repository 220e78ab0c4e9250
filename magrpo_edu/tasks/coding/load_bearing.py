"""Cooperation that cannot be read off the text: is the helper LOAD-BEARING? And the strict coding reward.

The authors' cooperation levels (+0.5 "main calls aux", +1.0 "not a thin wrapper", `reward.py`) read the
main's TEXT: a main that calls `aux`, drops its result and returns its own computation earns them, and an
RL policy finds that (the SmolLM2 coding card: `answer += aux(num)`, then `return sorted(set(words))`).
Whether the helper matters is a fact about the program's behaviour, so it is measured by running it:

    A helper is load-bearing for a joint answer when the main passes FEWER of the problem's tests with
    `aux` replaced by a stub that returns None (`STUB_AUX`).

A stub that raises would also count a call whose result is dropped (the raise alone fails the test); one
that returns None fails only a main that USES what aux returns. Only joint answers that earn the authors'
cooperation level (an extracted aux, a main that calls it without rebinding it, at least one test passed)
are run again, in the same sandbox and with the same asserts; every other answer is not load-bearing and
costs nothing. The cost: one more sandbox run of each cooperating answer (`benchmarks/load_bearing_cost.md`).

`load_bearing_many` (in `reward.py`, which reports it in every training history) measures it (every coding evaluation reports `load_bearing_rate` beside the authors'
`cooperation_rate`: `tasks.coding.coding_metrics`). `strict_coding_joint_reward` is the STRICT variant of the
coding reward: correctness as the authors' (levels 1-3 unchanged), the three cooperation levels paid (or
deducted) only when the helper is load-bearing. It is not the paper's reward: the authors' stays the coding
task's default and stays exact; the strict one is the task `coding-strict` (docs/faithfulness.md, "strict
coding reward").
"""
from __future__ import annotations

from typing import Optional, Sequence

from ...sandbox import SandboxLimits
from .reward import (LEVELS, STUB_AUX, _total, coding_levels_many,  # noqa: F401  (STUB_AUX, load_bearing_many:
                     load_bearing_many)  # this module's API)

COOPERATION_LEVELS = ("calls_aux", "not_thin_wrapper", "aux_result_ignored")
"""The authors' levels that read the main's text for cooperation; the strict reward pays them only for a
load-bearing helper."""


def with_load_bearing(levels: list[dict], auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                      limits: Optional[SandboxLimits] = None) -> list[dict]:
    """`levels` (of the authors' reward, one dict per joint answer) with "load_bearing" (1.0 or 0.0) added in place."""
    for lv, b in zip(levels, load_bearing_many(auxes, mains, rows, levels, limits)):
        lv["load_bearing"] = float(b)
    return levels


def strict_levels_many(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                       limits: Optional[SandboxLimits] = None, single: bool = False) -> list[dict]:
    """The strict coding reward's breakdown of many joint answers: the authors' levels (`coding_levels_many`),
    then, where the helper is not load-bearing, the cooperation levels (`COOPERATION_LEVELS`) set to 0 and
    `total_reward` summed again; "load_bearing" says which. `single=True`: the single-agent variant, unchanged
    (no aux, no cooperation credit)."""
    levels = coding_levels_many(auxes, mains, rows, limits, single=single)
    if single:
        for lv in levels:
            lv["load_bearing"] = 0.0
        return levels
    with_load_bearing(levels, auxes, mains, rows, limits)
    for lv in levels:
        if not lv["load_bearing"]:
            for k in COOPERATION_LEVELS:
                lv[k] = 0.0
            lv["total_reward"] = _total(lv)
    return levels


def strict_coding_joint_reward(completions: Sequence[Sequence[str]], row: dict,
                               limits: Optional[SandboxLimits] = None) -> dict:
    """Trainer-facing STRICT coding reward (not the paper's; `strict_levels_many`): {"total": [...], <level>: [...],
    "load_bearing": [...]} for the J joint actions of one problem."""
    auxes, mains = completions
    levels = strict_levels_many(auxes, mains, [row] * len(auxes), limits)
    out = {"total": [lv["total_reward"] for lv in levels]}
    out.update({k: [lv[k] for lv in levels] for k in (*LEVELS, "load_bearing")})
    return out

