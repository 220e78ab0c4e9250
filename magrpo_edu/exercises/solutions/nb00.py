"""Notebook 00: reference solutions and typical mistakes."""
import math


def group_advantages(rewards):
    mean = sum(rewards) / len(rewards)
    return [r - mean for r in rewards]


def length_ratio_reward(concise, detailed):
    ratio = len(detailed) / len(concise)
    distance = 0.0 if 2 <= ratio <= 3 else (2 - ratio if ratio < 2 else ratio - 3)
    return math.exp(-distance)


SOLUTIONS = {"00.group_advantages": group_advantages, "00.length_ratio_reward": length_ratio_reward}

MISTAKES = {
    "00.group_advantages": [
        lambda r: list(r),                                                   # the raw rewards: REINFORCE, no baseline
        lambda r: [x - max(r) for x in r],                                   # the best as baseline (MAReMax, notebook 06)
        lambda r: [(x - sum(r) / len(r)) / (max(r) - min(r) or 1.0) for x in r],  # rescaled
        lambda r: [x - sum(r) / (len(r) - 1) for x in r],                    # the wrong count in the mean
    ],
    "00.length_ratio_reward": [
        lambda a, b: math.exp(-abs(len(a) / len(b) - 2.5)) if not 2 <= len(a) / len(b) <= 3 else 1.0,  # ratio upside down
        lambda a, b: 1.0 if 2 <= len(b) / len(a) <= 3 else 0.0,              # no partial credit outside
        lambda a, b: math.exp(-abs(len(b) / len(a) - 2.5)),                  # distance to the middle, not the interval
    ],
}
