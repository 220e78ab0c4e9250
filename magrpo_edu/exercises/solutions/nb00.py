"""Notebook 00: reference solutions and typical mistakes."""
from . import written_again
import math


def group_advantages(rewards):
    mean = sum(rewards) / len(rewards)
    return [r - mean for r in rewards]


def length_ratio_reward(concise, detailed):
    if not concise:
        return 0.0                            # an infinite ratio: exp(-inf)
    ratio = len(detailed) / len(concise)
    distance = 0.0 if 2 <= ratio <= 3 else (2 - ratio if ratio < 2 else ratio - 3)
    return math.exp(-distance)


SOLUTIONS = {"00.group_advantages": group_advantages, "00.length_ratio_reward": length_ratio_reward}

def _in_place(rewards):                       # subtracts the mean inside the caller's list
    m = sum(rewards) / len(rewards)
    for i in range(len(rewards)):
        rewards[i] -= m
    return rewards


def _all_zero(rewards):                       # each reward minus itself: 0 whatever the rewards
    return [x - x for x in rewards]


def _sorts_in_place(rewards):                 # sorts the caller's list, then the right advantages of the sorted list
    rewards.sort()
    m = sum(rewards) / len(rewards)
    return [r - m for r in rewards]


def _in_place_when_alone(r):
    """Right for G > 1; a group of one reward is answered by overwriting that reward with 0 and returning the list."""
    if len(r) == 1:
        r[0] = 0.0
        return r
    return [x - sum(r) / len(r) for x in r]


def _divided_by_G(rewards):                   # r - mean, divided by G once more: the mean already divides the sum
    m = sum(rewards) / len(rewards)
    return [(x - m) / len(rewards) for x in rewards]


def _floor_mean(rewards):                     # the mean with //: rounded down to a whole number (0 for rewards in [0, 1))
    m = sum(rewards) // len(rewards)
    return [x - m for x in rewards]


def _raises_when_alone(rewards):              # a group of one refused, as the library's group_advantages does
    if len(rewards) < 2:
        raise ValueError(f"a group needs at least 2 rewards to compare, got {len(rewards)}")
    mean = sum(rewards) / len(rewards)
    return [r - mean for r in rewards]


def _library_wrapped(rewards):                # the package's own group_advantages, wrapped (G = 1 answered by hand)
    import torch

    from magrpo_edu.algorithm import group_advantages as own
    return [0.0] if len(rewards) == 1 else own(torch.tensor(rewards, dtype=torch.float64)).tolist()


def _library_reward_wrapped(concise, detailed):  # the package's own length_ratio_reward, wrapped
    from magrpo_edu.tasks.writing.reward import length_ratio_reward as own
    return own(concise, detailed)


def _forgot_return(rewards):                  # the advantages computed, never returned: None
    mean = sum(rewards) / len(rewards)
    [r - mean for r in rewards]


def _reward_falls_through(concise, detailed):  # an if/elif chain with no branch for ratio 3 exactly: None there
    if not concise:
        return 0.0
    ratio = len(detailed) / len(concise)
    if 2 <= ratio < 3:
        return 1.0
    elif ratio < 2:
        return math.exp(-(2 - ratio))
    elif ratio > 3:
        return math.exp(-(ratio - 3))


def _reward_not_returned(concise, detailed):  # the reward computed, never returned: None
    if not concise:
        return 0.0
    ratio = len(detailed) / len(concise)
    math.exp(-max(2 - ratio, 0.0, ratio - 3))


MISTAKES = {
    "00.group_advantages": [
        lambda r: list(r),                                                   # the raw rewards: REINFORCE, no baseline
        lambda r: [x - max(r) for x in r],                                   # the best as baseline (MAReMax, notebook 06)
        lambda r: [(x - sum(r) / len(r)) / (max(r) - min(r) or 1.0) for x in r],  # rescaled
        lambda r: [x - sum(r) / (len(r) - 1) for x in r],                    # the wrong count in the mean
        lambda r: [sum(r) / len(r) - x for x in r],                          # the sign flipped
        lambda r: [x - (sum(r) - x) / (len(r) - 1) for x in r],              # leave-one-out (MARLOO): the sample left out
        lambda r: [(x - sum(r) / len(r)) / ((sum((y - sum(r) / len(r)) ** 2 for y in r) / len(r)) ** 0.5 or 1.0)
                   for x in r],                                              # z-scored (divided by the std)
        lambda r: [x - sorted(r)[len(r) // 2] for x in r],                   # the median as baseline
        _divided_by_G,                                                        # r - mean, then divided by G again
        _floor_mean,                                                          # the mean taken with //
        _in_place,                                                            # right values, the rewards overwritten
        lambda r: r if sum(r) == 0 else [x - sum(r) / len(r) for x in r],   # the caller's own list back when it sums to 0
        _in_place_when_alone,                                                 # G = 1: the reward overwritten with 0
        lambda r: [round(x - sum(r) / len(r), 4) for x in r],               # rounded to 4 decimals: close, not equal
        lambda r: sorted(x - sum(r) / len(r) for x in r),                   # right values, sorted: the order lost
        lambda r: [round(x - sum(r) / len(r), 5) for x in r],               # rounded to 5 decimals: inside the tolerance
        lambda r: [round(x - sum(r) / len(r), 6) for x in r],               # rounded to 6 decimals
        lambda r: [round(x - sum(r) / len(r), 7) for x in r],               # rounded to 7 decimals
        _sorts_in_place,                                                      # right values, the caller's list sorted
        lambda r: {i: x - sum(r) / len(r) for i, x in enumerate(r)},        # a dict index -> advantage, not a list
        lambda r: tuple(x - sum(r) / len(r) for x in r),                    # right values, a tuple: not a NEW list
        lambda r: __import__("numpy").asarray(r) - __import__("numpy").mean(r),  # right values, a numpy array
        lambda r: (lambda t: t - t.mean())(__import__("torch").tensor(r, dtype=__import__("torch").float64)),  # a tensor
        lambda r: sum(r) / len(r),                                           # the mean itself: one number, no list
        lambda r: [float(x > sum(r) / len(r)) - float(x < sum(r) / len(r)) for x in r],  # the sign only: +1, 0, -1
        _all_zero,                                                           # every advantage 0
        _library_wrapped,                                                     # the package's group_advantages, wrapped
        lambda r: [max(-10, min(10, x - sum(r) / len(r))) for x in r],      # clamped to [-10, 10]: MAGRPO does not clamp
        lambda r: [round(x - sum(r) / len(r), 8) for x in r],               # rounded to 8 decimals: "unrounded", as in
        #                                                                     00.length_ratio_reward, below float32 noise
        lambda r: [round(x - sum(r) / len(r), 10) for x in r],              # rounded to 10 decimals
        lambda r: [x - (sorted(r)[(len(r) - 1) // 2] + sorted(r)[len(r) // 2]) / 2 for x in r],  # the median as
        #                                                                     baseline, statistics.median's
        lambda r: [x - sum(y for y in r if y) / max(1, sum(1 for y in r if y)) for x in r],  # the mean of the
        #                                                                     NON-ZERO rewards only: zeros left out
        lambda r: (lambda G: [x - sum(r[:G]) / G for x in r])(min(len(r), 8)),  # the mean of the first 8 rewards
        #                                                                     only: G fixed at the quickstart's 8
        lambda r: [x - sum(r) / len(r) + 5e-6 for x in r],                 # a constant 5e-6 added to every advantage
        lambda r: [x - sum(r) / len(r) + 1e-7 for x in r],                 # an epsilon 1e-7 added: below float32's
        #                                                                     noise on some groups, not on exact ones
        lambda r: [x - r[0] for x in r],                                     # the first reward as baseline
        lambda r: [int(x - sum(r) / len(r)) for x in r],                    # int(): the fraction cut off toward 0
        lambda r: [x - sum(y for y in r if y > 0) / max(1, sum(1 for y in r if y > 0)) for x in r],  # the mean of
        #                                                                     the POSITIVE rewards only
        lambda r: [float(f"{x - sum(r) / len(r):.6g}") for x in r],        # rounded to 6 significant digits: hidden
        #                                                                     by float32's tolerance but on exact groups
        lambda r: [float(f"{x - sum(r) / len(r):.7g}") for x in r],        # rounded to 7 significant digits
        lambda r: [x - round(sum(r) / len(r), 6) for x in r],               # the MEAN rounded to 6 decimals
        lambda r: list(r) if len(r) == 1 else [x - sum(r) / len(r) for x in r],  # G = 1: the reward itself, not 0
        lambda r: [] if len(r) == 1 else [x - sum(r) / len(r) for x in r],  # G = 1: no advantage at all
        lambda r: [x - sum(r) / len(r) for x in r] if r else [0.0],      # an empty group: one advantage, [0.0],
        #                                                                     for no reward (its answer is [])
        lambda r: [x - sum(r) / len(r) for x in r] if r else None,       # an empty group answered with None
        _forgot_return,                                                       # no `return`: None on every group
        lambda r: [x - sum(r) / len(r) for x in r] if r else r,          # an empty group: the caller's own list back,
        #                                                                     not a NEW one
        lambda r: None if len(set(r)) == 1 else [x - sum(r) / len(r) for x in r],  # equal rewards: None, no
        #                                                                     `return` on that path
        # (the last two stay last: tests/test_exercises.py's lessons name them by position)
        lambda r: [0.0] * len(r),                                            # every advantage 0, written out
        lambda r: (x - sum(r) / len(r) for x in r),                         # right values, a generator: read once only
    ],
    "00.length_ratio_reward": [
        lambda a, b: math.exp(-abs(len(a) / len(b) - 2.5)) if not 2 <= len(a) / len(b) <= 3 else 1.0,  # ratio upside down
        lambda a, b: 1.0 if 2 <= len(b) / len(a) <= 3 else 0.0,              # no partial credit outside
        lambda a, b: math.exp(-abs(len(b) / len(a) - 2.5)),                  # distance to the middle, not the interval
        lambda a, b: length_ratio_reward(b, a) if a and b else 0.0,          # the ratio upside down, every rule right
        lambda a, b: 0.0 if not a else 1.0 if 2 <= len(b) / len(a) <= 3 else math.exp(
            -(3 - len(b) / len(a) if len(b) / len(a) < 2 else len(b) / len(a) - 2)),  # distance to the FARTHER end
        lambda a, b: 0.0 if not a else math.exp(-max(2 - len(b) / len(a), 0, len(b) / len(a) - 3) ** 2),  # exp(-d^2)
        lambda a, b: 0.0 if not a.split() else math.exp(-max(2 - len(b.split()) / len(a.split()), 0,
                                                             len(b.split()) / len(a.split()) - 3)),  # words, not characters
        lambda a, b: length_ratio_reward(a.replace(" ", ""), b.replace(" ", "")),  # characters without the spaces
        lambda a, b: math.exp(-max(2 - len(b) / len(a), 0, len(b) / len(a) - 3)),  # an empty concise answer: ZeroDivisionError
        lambda a, b: length_ratio_reward(a.strip(), b.strip()),                 # leading/trailing spaces dropped
        lambda a, b: 1.0 if not a and not b else length_ratio_reward(a, b),     # two empty answers "agree"
        lambda a, b: 0.0 if not b else length_ratio_reward(a, b),               # an empty detailed answer paid 0
        lambda a, b: 0.0 if not a.strip() else length_ratio_reward(a, b),       # a concise " " read as empty
        lambda a, b: 0.0 if not a else math.exp(-max(2 - len(b.encode()) / len(a.encode()), 0,
                                                     len(b.encode()) / len(a.encode()) - 3)),  # UTF-8 bytes, not characters
        lambda a, b: 0.0 if not b else (lambda l: 1.0 if 2 <= l <= 3 else math.exp(-max(2 - l, 0, l - 3)))(
            len(a) / len(b)),                                                   # ratio upside down, an empty detailed paid 0
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 else math.exp(-abs(l - 2.5)))(
            len(b) / len(a)),                                                   # distance to the middle 2.5, inside 1
        lambda a, b: 0.0 if not a else (lambda l: math.exp(max(2 - l, 0, l - 3)))(len(b) / len(a)),  # exp(+d)
        lambda a, b: 0.0 if not a else (lambda l: max(0.0, 1 - max(2 - l, 0, l - 3)))(len(b) / len(a)),  # linear decay
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(len(b) // len(a)),  # // not /
        lambda a, b: 0.0 if not a else round(length_ratio_reward(a, b), 6),    # rounded to 6 decimals: inside 1e-6
        lambda a, b: length_ratio_reward(a.replace("\n", ""), b.replace("\n", "")),  # newlines not counted
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            (len(b) - b.count("\n")) / (len(a) - a.count("\n") or 1)),       # newlines subtracted from the lengths
        lambda a, b: length_ratio_reward(a.strip("\n"), b.strip("\n")),      # leading/trailing newlines stripped
        lambda a, b: length_ratio_reward(__import__("re").sub(r"\s+", " ", a),
                                         __import__("re").sub(r"\s+", " ", b)),  # runs of whitespace as one space
        lambda a, b: length_ratio_reward(" ".join(a.split()), " ".join(b.split())),  # whitespace normalised
        lambda a, b: length_ratio_reward(a.replace("\t", "    "), b.replace("\t", "    ")),  # a tab as 4 spaces
        lambda a, b: length_ratio_reward(a.expandtabs(), b.expandtabs()),      # tabs expanded to the tab stops
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if l >= 2 else math.exp(-(2 - l)))(len(b) / len(a)),  # no upper
        #                                                                     edge: 1 for any ratio above 2
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if l <= 3 else math.exp(-(l - 3)))(len(b) / len(a)),  # no lower
        #                                                                     edge: 1 for any ratio below 3
        lambda a, b: length_ratio_reward(__import__("re").sub(r"\n+", "\n", a),
                                         __import__("re").sub(r"\n+", "\n", b)),  # blank lines collapsed
        _library_reward_wrapped,                                              # the package's own reward, wrapped
        lambda a, b: 100 * length_ratio_reward(a, b),                           # the authors' x100 scale
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3) / 2))(len(b) / len(a)),  # exp(-d/2)
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 else math.exp(-abs(l - 2)))(
            len(b) / len(a)),                                                   # the distance always to 2
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 else math.exp(-abs(l - 3)))(
            len(b) / len(a)),                                                   # the distance always to 3
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            round(len(b) / len(a), 1)),                                         # the ratio rounded to 1 decimal
        lambda a, b: length_ratio_reward(a.rstrip(), b.rstrip()),              # trailing spaces/newlines stripped
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 < l < 3 else math.exp(-(2 - l)) if l < 2 else math.exp(
            -(l - 3)))(len(b) / len(a)),                                        # strict bounds: at l = 2 the upper
        #                                                                     side's delta, -1, and a reward of e
        lambda a, b: 0.0 if not a else (lambda c, d: math.exp(-max(2 - len(d) / len(c), 0, len(d) / len(c) - 3)))(
            a.rstrip(), b.rstrip()),                                            # stripped after the empty test: a
        #                                                                     concise " " divides by zero
        lambda a, b: length_ratio_reward(a.replace("\t", ""), b.replace("\t", "")),  # tabs not counted
        lambda a, b: length_ratio_reward(a.replace("\t", ""), b),              # tabs not counted in the concise answer
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            3 * len(b) / (len(a) + len(b))),                                    # a made-up ratio, 3d / (c + d)
        lambda a, b: (lambda l: math.exp(-max(2 - l, 0, l - 3)))(len(b) / (len(a) + 1)),  # len(concise) + 1 against
        #                                                                     dividing by zero
        lambda a, b: round(written_again(length_ratio_reward)(a, b), 8),       # rounded to 8 decimals
        lambda a, b: round(written_again(length_ratio_reward)(a, b), 10),      # rounded to 10 decimals
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 1.9 <= l <= 3.2 else math.exp(-max(2 - l, 0, l - 3)))(
            len(b) / len(a)),                                                   # a margin around [2, 3]
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 - 0.03 <= l <= 3 + 0.03 else math.exp(
            -max(2 - l, 0, l - 3)))(len(b) / len(a)),                           # a small margin, 0.03 on each side
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 + 0.05 else math.exp(-max(2 - l, 0, l - 3)))(
            len(b) / len(a)),                                                   # a margin above 3 only, 0.05
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 - 0.001 <= l <= 3 + 0.001 else math.exp(
            -max(2 - l, 0, l - 3)))(len(b) / len(a)),                           # a margin of 0.001
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            min(len(b) / len(a), 8)),                                           # the ratio capped at 8
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            min(len(b) / len(a), 20)),                                          # the ratio capped at 20
        lambda a, b: (lambda v: 0.0 if v < 0.01 else v)(written_again(length_ratio_reward)(a, b)),  # a small
        #                                                                     reward replaced by 0 (below 0.01)
        lambda a, b: (lambda v: 0.0 if v < 1e-6 else v)(written_again(length_ratio_reward)(a, b)),  # below 1e-6
        lambda a, b: (lambda l: 1.0 if 2 <= l <= 3 else math.exp(-max(2 - l, 0, l - 3)))(
            len(b) / (len(a) + 1e-8)),                                          # an epsilon in the denominator
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 else 2.718 ** -max(2 - l, 0, l - 3))(
            len(b) / len(a)),                                                   # 2.718 typed in for e
        lambda a, b: float(__import__("numpy").float16(written_again(length_ratio_reward)(a, b))),  # float16
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 - 1e-4 <= l <= 3 + 1e-4 else math.exp(
            -max(2 - l, 0, l - 3)))(len(b) / len(a)),                           # a margin of 1e-4
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 or math.isclose(l, 2, rel_tol=1e-4) or math.isclose(
            l, 3, rel_tol=1e-4) else math.exp(-max(2 - l, 0, l - 3)))(len(b) / len(a)),  # edges "isclose", rel_tol 1e-4
        lambda a, b: (lambda v: 0.0 if v < 1e-9 else v)(written_again(length_ratio_reward)(a, b)),  # a small
        #                                                                     reward replaced by 0 (below 1e-9)
        lambda a, b: 0.0 if not a else max(written_again(length_ratio_reward)(a, b), 1e-8),  # a floor at 1e-8
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            round(len(b) / len(a), 6)),                                         # the ratio rounded to 6 decimals:
        #                                                                     the reward moves by less than 1e-6
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            round(len(b) / len(a), 4)),                                         # the ratio rounded to 4 decimals
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 else math.exp(
            -((2 - l) / 2 if l < 2 else (l - 3) / 3)))(len(b) / len(a)),        # a relative distance, divided by the end
        lambda a, b: 0.0 if not a else (lambda l: 1.0 if 2 <= l <= 3 else 0.0 if l == 0 else math.exp(
            -(math.log(2 / l) if l < 2 else math.log(l / 3))))(len(b) / len(a)),  # a distance between logarithms
        lambda a, b: 0.0 if not a else 1 + math.expm1(-max(2 - len(b) / len(a), 0, len(b) / len(a) - 3)),  # through
        #                                                                     1: exp(-37) loses its digits
        _reward_falls_through,                                                # no branch for ratio 3: None there
        _reward_not_returned,                                                 # no `return`: None
        lambda a, b: None if not a else math.exp(-max(2 - len(b) / len(a), 0, len(b) / len(a) - 3)),  # an empty
        #                                                                     concise answer answered with None, not 0
    ],
}

VARIANTS = {
    "00.group_advantages": [
        lambda r: (lambda t: (t - t.mean()).tolist())(__import__("torch").tensor(r, dtype=__import__("torch").float64)),
        lambda r: [x - m for m in [sum(r) / len(r)] for x in r],
        lambda r: (__import__("numpy").asarray(r) - __import__("numpy").mean(r)).tolist(),  # numpy's float64 mean
        #                                                                     (pairwise sum), converted to a list
        lambda r: [x - math.fsum(r) / len(r) for x in r],                   # an exactly rounded sum: float64 still
        lambda r: (lambda t: (t - t.mean()).tolist())(__import__("torch").tensor(r)),  # float32: noise, not rounding
        lambda r: (lambda a: [float(v) for v in a - a.mean()])(__import__("numpy").asarray(r, dtype="float32")),
        #                                                                     numpy float32: the trainer's precision
        lambda r: (__import__("numpy").asarray(r, dtype="float32") - __import__("numpy").mean(r)).tolist(),  # float32
        #                                                                     rewards, a float64 mean
        lambda r: [x - sum(r) / len(r) for x in r] if r else [],         # an empty group guarded: [] (a new list)
        lambda r: [x - m for m in [sum(r) / len(r) if r else 0.0] for x in r],  # the mean taken as 0 when empty
        _raises_when_alone,                                                   # a group of one: a ValueError, as the
        #                                                                     library's group_advantages raises
    ],
    "00.length_ratio_reward": [
        lambda a, b: 0.0 if not a else math.exp(-max(2 - len(b) / len(a), 0.0, len(b) / len(a) - 3)),  # one max
        lambda a, b: 0.0 if not a else 1.0 if 2 < len(b) / len(a) < 3 else math.exp(
            -min(abs(len(b) / len(a) - 2), abs(len(b) / len(a) - 3))),     # strict bounds: the edges score exp(0) = 1 anyway
        lambda a, b: __import__("numpy").float32(written_again(length_ratio_reward)(a, b)),  # a numpy float is a number too
        lambda a, b: __import__("numpy").float64(written_again(length_ratio_reward)(a, b)),
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            sum(1 for _ in b) / sum(1 for _ in a)),                             # characters counted one by one
        lambda a, b: 0.0 if not a else (lambda l: math.exp(-max(2 - l, 0, l - 3)))(
            len(list(b)) / len(list(a))),                                       # newlines and tabs in the list too
        lambda a, b: 0.0 if not a else 1.0 if 2 * len(a) <= len(b) <= 3 * len(a) else math.exp(
            -max(2 - len(b) / len(a), 0, len(b) / len(a) - 3)),                 # the band tested in whole numbers
    ],
}
