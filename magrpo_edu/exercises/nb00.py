"""Checks of notebook 00's exercises: the group-relative advantage and the joint reward of the quickstart."""
from __future__ import annotations

import math

from . import ExerciseFailed, exercise

_GROUPS = [
    [0.2, 1.0, 0.6, 0.2],        # the notebook's own group
    [1.0, 1.0, 1.0, 1.0],        # every joint action equal: nothing to learn, every advantage 0
    [0.0, 1.0],                  # G = 2
    [-3.0, 0.5, 2.5, 4.0, -1.0, 0.0, 7.0, 1.0],  # G = 8, negative rewards
    [0.37, 0.99, 0.05, 0.61],
]


@exercise("00.group_advantages")
def check_group_advantages(fn) -> None:
    """`fn(rewards: list[float]) -> list[float]` must give each joint action its reward minus the group mean."""
    import torch

    from ..algorithm import group_advantages

    for rewards in _GROUPS:
        got = fn(list(rewards))
        want = group_advantages(torch.tensor(rewards)).tolist()
        try:
            got = [float(v) for v in got]
        except TypeError:
            raise ExerciseFailed(f"return one number per joint action (a list), got {got!r}") from None
        if len(got) != len(rewards):
            raise ExerciseFailed(f"for the {len(rewards)} rewards {rewards} return {len(rewards)} advantages, got {len(got)}")
        if any(abs(g - w) > 1e-5 for g, w in zip(got, want)):
            hint = ""
            if len(set(rewards)) == 1:
                hint = " (when every joint action scored the same, none is better than the group: all advantages are 0)"
            elif abs(sum(got)) > 1e-4:
                hint = f" (they sum to {sum(got):.3f}; advantages relative to the group mean always sum to 0)"
            raise ExerciseFailed(f"for rewards {rewards} the advantages are {[round(v, 3) for v in want]}, "
                                 f"you returned {[round(v, 3) for v in got]}{hint}")


_PAIRS = [
    ("abcd", "abcdefghij"),        # ratio 2.5: inside [2, 3]
    ("abcd", "abcdefgh"),          # ratio 2: the edge counts as inside
    ("abcd", "abcd"),              # ratio 1: 1 below the interval
    ("ab", "abcdefghijklmn"),      # ratio 7: 4 above
    ("a" * 10, "b" * 31),          # ratio 3.1
    ("a" * 40, "b" * 10),          # the concise one is the LONGER: ratio 0.25
]


@exercise("00.length_ratio_reward")
def check_length_ratio_reward(fn) -> None:
    """`fn(concise, detailed) -> float`: 1 if chars(detailed)/chars(concise) is in [2, 3], else
    exp(-distance to the interval)."""
    from ..tasks.writing.reward import length_ratio_reward

    for a, b in _PAIRS:
        got, want = fn(a, b), length_ratio_reward(a, b)
        if not isinstance(got, (int, float)) or not math.isfinite(got):
            raise ExerciseFailed(f"return one number (a float), got {got!r}")
        if abs(got - want) > 1e-6:
            ratio = len(b) / len(a)
            raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} (ratio "
                                 f"{ratio:g}) earn {want:.4f}, you returned {got:.4f}: the ratio is chars(detailed) / "
                                 "chars(concise), and outside [2, 3] the reward is exp(-distance to the nearer end)")
