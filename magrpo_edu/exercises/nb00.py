"""Checks of notebook 00's exercises: the group-relative advantage and the joint reward of the quickstart."""
from __future__ import annotations

import math
import re
import struct

from . import ExerciseFailed, call_answer, exercise, not_a_wrapper as _not_a_wrapper, \
    not_the_library as _not_the_library, outputs_per_group, plain_number, rounded_to

_GROUPS = [
    [0.2, 1.0, 0.6, 0.2],        # the notebook's own group
    [1.0, 1.0, 1.0, 1.0],        # every joint action equal: nothing to learn, every advantage 0
    [0.0, 1.0],                  # G = 2
    [-3.0, 0.5, 2.5, 4.0, -1.0, 0.0, 7.0, 1.0],  # G = 8, negative rewards
    [0.37, 0.99, 0.05, 0.61],
    [0.1, 0.2, 0.4],             # advantages -0.1333..., -0.0333..., 0.1666...: rounding them shows
    [0.0, 1.0, 1.0, 0.5, 0.25, 0.9, 0.35],  # G = 7, mean 4/7 = 0.571428...: rounding to 7 decimals shows too
    [0.7],                       # G = 1: the mean is the reward itself, its advantage 0
    [-0.5, 0.5, 0.0],            # mean 0: the advantages equal the rewards, yet must be a new list
    [-15.0, 5.0, 25.0, 1.0],     # mean 4, advantages -19, 1, 21, -3: a spread over 20, so a clamp to [-10, 10] shows
    [0.0, 0.0, 1.0, 0.5],        # two zero rewards: the mean of the non-zero ones (0.75) is not sum / (G-1) (0.5)
    # G = 12, more than the quickstart's G = 8: a mean of the first 8 rewards only (rewards[:8], min(G, 8)) shows;
    # mean 5.55 / 12 = 0.4625, of the first 8 0.5125
    [0.9, 0.1, 0.8, 0.3, 0.5, 0.6, 0.2, 0.7, 0.0, 1.0, 0.4, 0.05],
    # exact in float32 (multiples of 2**-10), so compared within 1e-12, and the advantages +-0.49951171875 need 11
    # digits: a rounding to 6 or 7 significant figures (f"{x:.6g}"), which float32's tolerance hides elsewhere, shows
    [1023 / 1024, 0.0],
]


def _f32(x: float) -> float:
    """x rounded to the nearest float32 (what torch.tensor(rewards) or np.float32 holds of it)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _exact_in_float32(rewards) -> bool:
    """Whether the advantages of this group come out EXACT in float32 too, in any order of summation: every reward a
    multiple of 2**-10 below 2**10 in size (so every partial sum is one as well, exact in float32's 24 bits), and the
    mean and each advantage float32 numbers. On such a group any answer, float32 or float64, is exact."""
    if any(r * 1024 != int(r * 1024) for r in rewards) or sum(abs(r) for r in rewards) >= 1024:
        return False
    mean = sum(rewards) / len(rewards)
    return all(_f32(v) == v for v in [mean, *(r - mean for r in rewards)])


def _tolerance(rewards) -> float:
    """How far an advantage may lie from r - mean(r) (computed in float64) on this group.

    Float64 in another order (numpy's pairwise sum, math.fsum, torch float64) lands within 1e-12. Float32 (torch's
    default dtype, which the trainer uses too) is accepted: its noise, at most about (G + 3) float32 roundings of the
    largest reward, is bounded by (G + 4) * 2**-23 * max|r|. But on a group exact in float32 (whole numbers, halves,
    quarters) float32 is exact too, so there any difference is refused: a constant added to every advantage
    (+1e-7, an epsilon) shows there, however small."""
    scale = max(1.0, max(abs(r) for r in rewards))
    if _exact_in_float32(rewards):
        return 1e-12 * scale
    return max(1e-12 * scale, (len(rewards) + 4) * 2 ** -23 * max(abs(r) for r in rewards))


def _offset_of(fn, rewards, got, want) -> float | None:
    """The constant c when the answer is r - mean(r) + c, the same c on this group and on every other group where it
    answers, up to the noise _tolerance lets through (float32's, computed before or after adding c); c not 0. None
    otherwise."""
    if not got or not all(math.isfinite(g) for g in got):
        return None
    here = _tolerance(rewards)
    c = got[0] - want[0]
    same = lambda out, ws, tol: all(abs((g - w) - c) <= here + tol + 1e-3 * abs(c)  # noqa: E731
                                    for g, w in zip(out, ws))
    if abs(c) <= here or not same(got, want, here):
        return None
    for x, out in zip(_GROUPS, _outputs(fn)):
        m = sum(x) / len(x)
        if out is not None and not same(out, [r - m for r in x], _tolerance(x)):
            return None
    return c


def _part_mean_used(fn, rewards, got) -> tuple[str, int] | None:
    """("first" or "last", k) when the answer subtracts the mean of only the first (or last) k rewards, k < G here,
    and the same of min(k, G) rewards on every other group where it answers (a group size fixed at k: rewards[:8],
    min(len(rewards), 8)); None otherwise."""
    parts = {"first": lambda x, k: x[:k], "last": lambda x, k: x[-k:]}
    for k in range(1, len(rewards)):
        for where, part in parts.items():
            def subtracted(x, k=k, part=part):
                p = part(x, min(k, len(x)))
                return [r - sum(p) / len(p) for r in x]
            if any(not math.isfinite(g) or abs(g - w) > 1e-9 for g, w in zip(got, subtracted(rewards))):
                continue
            if all(out is None or all(abs(g - w) <= 1e-9 for g, w in zip(out, subtracted(x)))
                   for x, out in zip(_GROUPS, _outputs(fn))):
                return where, k
    return None


def _rounded_places(fn):
    """The number of decimals the answer rounds to, read off EVERY group of the check (one group alone can agree with
    fewer places: -0.135 is -0.135 rounded to 3, 4 or 5); None when no single count explains all of them."""
    outs = _outputs(fn)
    if any(out is None for out in outs):      # the answer fails on a group, or gives no list of the right length: no count
        return None
    wants = [r - sum(rewards) / len(rewards) for rewards in _GROUPS for r in rewards]
    return rounded_to([g for out in outs for g in out], wants, range(11), close=lambda g, w: abs(g - w) <= 1e-12)


def _outputs(fn):
    """The answer's advantages for every group of the check (None for a group where it fails or is no list of
    numbers of the right length)."""
    return outputs_per_group(fn, _GROUPS, list, lambda out, rewards: (lambda v: v if len(v) == len(rewards) else None)(
        [float(x) for x in out]))


# Medians a learner may take for the mean: (how it is written, the median of a group).
_MEDIANS = [
    ("sorted(rewards)[G // 2], the upper middle", lambda r: sorted(r)[len(r) // 2]),
    ("sorted(rewards)[(G - 1) // 2], the lower middle", lambda r: sorted(r)[(len(r) - 1) // 2]),
    ("statistics.median(rewards)", lambda r: (sorted(r)[(len(r) - 1) // 2] + sorted(r)[len(r) // 2]) / 2),
]


def _median_used(fn):
    """(how it is written, the median) of the one median of _MEDIANS the answer subtracts on EVERY group where it
    answers (and on one group at least where median and mean differ); None otherwise."""
    outs = _outputs(fn)
    for what, median in _MEDIANS:
        told = False
        for rewards, out in zip(_GROUPS, outs):
            if out is None:
                continue
            if any(not math.isfinite(g) or abs(g - (r - median(rewards))) > 1e-6 for g, r in zip(out, rewards)):
                break
            told = told or abs(median(rewards) - sum(rewards) / len(rewards)) > 1e-6
        else:
            if told:
                return what, median
    return None


def _nonzero_mean(rewards, keep=lambda r: r != 0) -> float | None:
    """The mean of the rewards that `keep` keeps only (a learner's slip: the NON-ZERO ones, or the positive ones);
    None when it keeps none."""
    nonzero = [r for r in rewards if keep(r)]
    return sum(nonzero) / len(nonzero) if nonzero else None


def _nonzero_mean_used(fn, keep=lambda r: r != 0) -> bool:
    """Whether the answer subtracts the mean of the non-zero rewards (or of those `keep` keeps: the positive ones) on
    EVERY group where it answers, and on one group at least where that differs from both the mean and sum / (G-1) (a
    group with two zero rewards: with one, the non-zero count is G-1)."""
    told = False
    for rewards, out in zip(_GROUPS, _outputs(fn)):
        m = _nonzero_mean(rewards, keep)
        if out is None or m is None:
            continue
        if any(not math.isfinite(g) or abs(g - (r - m)) > 1e-6 for g, r in zip(out, rewards)):
            return False
        G = len(rewards)
        told = told or (abs(m - sum(rewards) / G) > 1e-6 and G > 1 and abs(m - sum(rewards) / (G - 1)) > 1e-6)
    return told


# Ways to make an advantage a whole number: (how it is written, what it does to a float).
_WHOLES = [("int(...), which cuts the fraction off toward 0", lambda v: float(int(v))),
           ("round(...), to the nearest whole number", lambda v: float(round(v))),
           ("math.floor(...), which rounds down", lambda v: float(math.floor(v)))]


def _made_whole(fn):
    """(how it is written, the function) of the one way of _WHOLES the answer applies to each r - mean(r), on EVERY
    group where it answers (and on one group at least where it changes an advantage); None otherwise."""
    outs = _outputs(fn)
    for what, cut in _WHOLES:
        told = False
        for rewards, out in zip(_GROUPS, outs):
            if out is None:
                continue
            wants = [r - sum(rewards) / len(rewards) for r in rewards]
            if any(not math.isfinite(g) or abs(g - cut(w)) > 1e-9 for g, w in zip(out, wants)):
                break
            told = told or any(cut(w) != w for w in wants)
        else:
            if told:
                return what, cut
    return None


def _whole_mean(rewards) -> list[float]:
    """Each reward minus the mean taken with //, rounded down to a whole number (a learner's slip)."""
    return [r - sum(rewards) // len(rewards) for r in rewards]


def _std(rewards, ddof: int) -> float:
    m = sum(rewards) / len(rewards)
    return (sum((r - m) ** 2 for r in rewards) / (len(rewards) - ddof)) ** 0.5 if len(rewards) > ddof else 0.0


# Factors a learner may scale r - mean(r) by, each with what it is: named only when it explains every group.
_SCALES = [
    (lambda r: 1 / len(r), "divided them by G, the group size: the mean already divides the SUM by G; the advantage "
     "is r - mean(r) itself, not divided again"),
    (lambda r: 1 / (len(r) - 1) if len(r) > 1 else None, "divided them by G-1: the advantage is r - mean(r) itself, "
     "not divided by anything"),
    (lambda r: len(r), "multiplied them by G, the group size: the advantage is r - mean(r) itself"),
    (lambda r: 1 / _std(r, 0) if _std(r, 0) else None, "divided them by the std (z-scores): MAGRPO does not divide "
     "by the std; A = r - mean(r), nothing else"),
    (lambda r: 1 / _std(r, 1) if _std(r, 1) else None, "divided them by the sample std: MAGRPO does not divide "
     "by the std; A = r - mean(r), nothing else"),
    (lambda r: 1 / (max(r) - min(r)) if max(r) > min(r) else None, "divided them by the range, max - min: MAGRPO "
     "does not rescale; A = r - mean(r), nothing else"),
]


def _scaled_by(fn) -> str | None:
    """What the answer scaled r - mean(r) by, when one factor of _SCALES explains every group; None otherwise."""
    outs = _outputs(fn)
    for factor, what in _SCALES:
        seen = False
        for rewards, out in zip(_GROUPS, outs):
            m = sum(rewards) / len(rewards)
            k = factor(rewards)
            if out is None or k is None or len(set(rewards)) == 1:
                continue
            if not all(math.isfinite(g) and abs(g - (r - m) * k) <= 1e-6 for g, r in zip(out, rewards)):
                break
            seen = True
        else:
            if seen:
                return what
    return None


def _clamped_to(fn, got, want) -> float | None:
    """The bound b when the answer is r - mean(r) clamped to [-b, b] on this group and on every other group where it
    answers (b below the largest advantage here, so the clamp shows); None otherwise."""
    if not got or not all(math.isfinite(g) for g in got):
        return None
    b = max(abs(g) for g in got)
    clamp = lambda xs: [max(-b, min(b, x)) for x in xs]  # noqa: E731
    if not 0 < b < max(abs(w) for w in want) - 1e-6 or any(abs(g - c) > 1e-6 for g, c in zip(got, clamp(want))):
        return None
    for rewards, out in zip(_GROUPS, _outputs(fn)):
        m = sum(rewards) / len(rewards)
        if out is not None and any(abs(g - c) > 1e-6 for g, c in zip(out, clamp([r - m for r in rewards]))):
            return None
    return b


def _significant_digits(fn) -> int | None:
    """The number of significant digits (1 to 16) the answer rounds every advantage to (float(f"{x:.6g}")), read off
    EVERY group of the check; None when no single count explains all of them."""
    outs = _outputs(fn)
    if any(out is None for out in outs):
        return None
    wants = [r - sum(rewards) / len(rewards) for rewards in _GROUPS for r in rewards]
    got = [g for out in outs for g in out]
    return next((k for k in range(1, 17) if all(abs(g - float(f"{w:.{k}g}")) <= 1e-12 for g, w in zip(got, wants))),
                None)


# Ways to round a number: (how it is written, the rounding of x) for k decimals, then for k significant digits.
_ROUNDINGS = [*((f"to {k} decimal{'' if k == 1 else 's'}, round(..., {k})", lambda x, k=k: round(x, k))
                for k in range(11)),
              *((f"to {k} significant digit{'' if k == 1 else 's'}, f\"{{...:.{k}g}}\"",
                 lambda x, k=k: float(f"{x:.{k}g}")) for k in range(1, 17))]


def _mean_rounded(fn) -> str | None:
    """How the answer rounds the MEAN before subtracting it (one way of _ROUNDINGS), when r - rounded(mean(r)) explains
    EVERY group and differs from the advantages on one group at least; None otherwise."""
    outs = _outputs(fn)
    if any(out is None for out in outs):
        return None
    for what, rounding in _ROUNDINGS:
        told = False
        for rewards, out in zip(_GROUPS, outs):
            m = sum(rewards) / len(rewards)
            if any(abs(g - (r - rounding(m))) > 1e-12 for g, r in zip(out, rewards)):
                break
            told = told or rounding(m) != m
        else:
            if told:
                return what
    return None


def _rounded_words(k, fn=None) -> str:
    if k is not None:
        return f"you rounded them to {k} decimal{'' if k == 1 else 's'}"
    if fn is not None and (how := _mean_rounded(fn)) is not None:
        return f"you rounded the MEAN {how}, before subtracting it"
    if fn is not None and (n := _significant_digits(fn)) is not None:
        return (f"you rounded them to {n} significant digit{'' if n == 1 else 's'} (f\"{{x:.{n}g}}\", "
                f"np.format_float_positional(x, precision={n}, fractional=False) or the like)")
    return "you rounded them"


def _rewards_words(G: int) -> str:
    """"the 3 rewards", "the 1 reward": a group's size in words."""
    return f"the {G} reward{'' if G == 1 else 's'}"


def _advantages_words(G: int) -> str:
    return f"{G} advantage{'' if G == 1 else 's'}"


def _numbers(xs) -> str:
    """A list of numbers shown with enough digits to tell a value from its rounding to 7 decimals."""
    return str([float(f"{v:.10g}") if math.isfinite(v) else v for v in xs])


@exercise("00.group_advantages")
def check_group_advantages(fn) -> None:
    """`fn(rewards: list[float]) -> list[float]` must give each joint action its reward minus the group mean."""
    from collections.abc import Mapping, Set

    from ..algorithm import group_advantages

    _not_the_library(fn, "group_advantages", group_advantages)
    # a wrapper (magrpo_edu.group_advantages(torch.tensor(rewards)).tolist(), a G = 1 case aside) passes by construction
    _not_a_wrapper(fn, ([0.2, 1.0, 0.6, 0.2],), "group_advantages", group_advantages,
                   how="from the rule in the text (the mean, sum(rewards) / len(rewards), subtracted from each reward)")
    for rewards in _GROUPS:
        mean = sum(rewards) / len(rewards)
        want = [r - mean for r in rewards]        # in float64, before the learner's function sees the list
        given = list(rewards)
        if len(rewards) == 1:
            # A group of one reward: the notebook's rule gives [0.0] (the reward minus itself), and the library's own
            # group_advantages raises a ValueError (a group needs 2 rewards to compare): either answer is accepted.
            try:
                got = call_answer(fn, given, said=lambda e: "")
            except ExerciseFailed:
                continue
        else:
            got = call_answer(fn, given, said=lambda e, rewards=rewards: (
                f"for the rewards {list(rewards)} your function raised {type(e).__name__}: {e}. It should return one "
                "advantage per reward for any group of two rewards or more (a group of one may return [0.0] or "
                "raise a ValueError)."))
        if got is None:
            said = f"for {_rewards_words(len(rewards))} {list(rewards)} your function returned None"
            if any(out is not None for out in _outputs(fn)):     # a list on other groups: one path returns nothing
                raise ExerciseFailed(f"{said}, and a list on other groups: a path of your function ends without a "
                                     "`return` (an if/else whose branch for this group returns nothing, an `else "
                                     "None`, a bare `return`). The rule has no special case: every group's advantages "
                                     "are [r - mean for r in rewards], so `return` that list on every path.")
            raise ExerciseFailed(f"{said}: did you forget `return`? A function that ends without a `return` (or with a "
                                 "bare `return`) gives None. End it with `return` and the NEW list of advantages, "
                                 "`return [r - mean for r in rewards]`.")
        if got is given:
            raise ExerciseFailed(f"for the rewards {list(rewards)} your function returned the very list it was given "
                                 "(changed or not): the caller's rewards and the advantages would be one object, so "
                                 "writing one overwrites the other. Build and return a NEW list, [r - mean for r in "
                                 "rewards].")
        if given != list(rewards):
            how = "reordered it" if sorted(given) == sorted(rewards) else "overwrote its values"
            raise ExerciseFailed(f"your function changed the list it was given: the rewards {list(rewards)} are now "
                                 f"{given} after your call, it {how}. The trainer's logged rewards would be changed. "
                                 "Leave the list as it is (no rewards.sort(), rewards[i] = ..., rewards[:] = ...): "
                                 "build and return a NEW list, in the order of the rewards.")
        if isinstance(got, (Mapping, Set, str, bytes)):
            raise ExerciseFailed(f"return a list of numbers, one per joint action in the order of the rewards "
                                 f"([... for r in rewards]); you returned a {type(got).__name__}"
                                 + (" (its keys are not the advantages, and the trainer reads the advantages by "
                                    "position)" if isinstance(got, Mapping) else "") + ".")
        if isinstance(plain_number(got), (int, float)) and not isinstance(got, bool):
            number = plain_number(got)
            what = (f"the group's mean reward, {number:.6g}: that is the baseline, and the advantages are each reward "
                    "minus it" if math.isclose(number, mean, abs_tol=1e-9) else f"one number, {number:.6g}")
            raise ExerciseFailed(f"for {_rewards_words(len(rewards))} {list(rewards)} return a list of "
                                 f"{_advantages_words(len(rewards))}, one per joint action in the order of the "
                                 f"rewards; you returned {what}. "
                                 "Build the list, [r - mean for r in rewards].")
        if not hasattr(got, "__len__"):
            raise ExerciseFailed(f"return a list of numbers, one per joint action; you returned a {type(got).__name__}, "
                                 "which can be read only once (a generator is empty the second time the trainer reads "
                                 "it): wrap it in list(...) or write a list comprehension [... for x in rewards]")
        if not isinstance(got, list):
            what = type(got).__name__
            kind = ("a numpy array" if type(got).__module__.startswith("numpy") else
                    "a torch tensor" if type(got).__module__.startswith("torch") else f"a {what}")
            raise ExerciseFailed(f"you returned {kind} ({what}), and the exercise asks for a list of Python floats, "
                                 "one advantage per joint action in the order of the rewards: the text says \"return a "
                                 "new list\" and the stub says -> list[float]. "
                                 + (f"Convert it at the end with .tolist(), which gives a list of Python floats "
                                    f"(list(...) would give a list of {'numpy' if kind == 'a numpy array' else 'torch'} "
                                    "scalars), or build the list directly, [r - mean for r in rewards]."
                                    if kind != f"a {what}" else
                                    "Wrap it in list(...), or build the list directly, [r - mean for r in rewards]."))
        try:
            got = [float(v) for v in got]
        except (TypeError, ValueError):
            raise ExerciseFailed(f"return a list of numbers, one per joint action, got {got!r}") from None
        if len(got) != len(rewards):
            if len(rewards) == 1:
                raise ExerciseFailed(f"for the 1 reward {rewards} return 1 advantage, [0.0], got {len(got)}: a group of "
                                     "one, its reward minus itself (the mean) is 0 (or raise a ValueError, as the "
                                     "library's group_advantages does: one reward has nothing to be compared with)")
            raise ExerciseFailed(f"for {_rewards_words(len(rewards))} {rewards} return "
                                 f"{_advantages_words(len(rewards))}, got {len(got)}")
        # Within the tolerance (float32 noise passes) but not equal: rounded to 5-10 decimals, which the text forbids
        # ("unrounded"), as 00.length_ratio_reward does. float32 noise (about 1e-8 relative) never lands within 1e-12
        # of a rounded value, and float64 computed in another order is within 1e-12 of the advantage itself.
        within = all(math.isfinite(g) and abs(g - w) <= 1e-5 for g, w in zip(got, want))
        exact = within and all(abs(g - w) <= 1e-12 * max(1.0, abs(w)) for g, w in zip(got, want))
        if within and not exact and rounded_to(got, want, range(11),
                                               close=lambda g, w: abs(g - w) <= 1e-12) is not None:
            raise ExerciseFailed(f"for rewards {rewards} the advantages are {_numbers(want)}, you returned "
                                 f"{_numbers(got)} (close but not equal: "
                                 f"{_rounded_words(_rounded_places(fn), fn)}; do not round, return r - mean(r) "
                                 "as computed, the notebook compares them with the trainer's own advantages)")
        # Beyond float64 noise, and beyond float32's too where float32 has any (_tolerance): a constant added to every
        # advantage, even 1e-7, is refused on the groups that float32 computes exactly.
        tol = _tolerance(rewards)
        if any(not math.isfinite(g) or abs(g - w) > tol for g, w in zip(got, want)):
            G = len(rewards)
            close = lambda xs: all(math.isfinite(g) and abs(g - x) < 1e-5 for g, x in zip(got, xs))
            hint = ""
            if (c := _offset_of(fn, rewards, got, want)) is not None:
                hint = (f" (you added {c:.3g} to every advantage, on every group: they sum to {sum(got):.3g} here, "
                        "where advantages relative to the group mean sum to 0. A = r - mean(r), nothing added: no "
                        "epsilon, no shift, however small)")
            elif (part := _part_mean_used(fn, rewards, got)) is not None:
                where, k = part
                used, cut = (rewards[:k], f"[:{k}]") if where == "first" else (rewards[-k:], f"[-{k}:]")
                took = (f"you subtracted the {where} reward, rewards[{0 if where == 'first' else -1}] = {used[0]:g}, "
                        "from every reward" if k == 1 else f"you took the mean of the {where} {k} rewards only, "
                        f"rewards{cut}, {sum(used):g} / {k} = {sum(used) / k:.6g}")
                hint = (f" ({took}: this group has G = {G} rewards, and the "
                        f"baseline is the mean of ALL of them, sum(rewards) / len(rewards) = {sum(rewards):g} / {G} = "
                        f"{sum(rewards) / G:.6g}"
                        + (f". G is len(rewards), whatever the group's size, not a fixed {k}" if k > 1 else "")
                        + (" (the quickstart's num_generations)" if k == 8 else "") + ")")
            elif within:     # within 1e-5, beyond float32's noise: no shape of the hints below is that close
                off = max(abs(g - w) for g, w in zip(got, want))
                hint = (f" (close but not equal, off by up to {off:.2g}: "
                        + ("on this group float32 and float64 both give the advantages exactly" if tol < 1e-9 else
                           f"more than float32's rounding explains here (at most {tol:.1g})")
                        + ". Return r - mean(r) as computed, in Python floats: do not round, add or rescale anything)")
            elif G == 1:
                hint = (f" (a group of one: its reward minus itself (the mean, {rewards[0]:g}) is 0, so the answer is "
                        "[0.0]; or raise a ValueError, as the library's group_advantages does: one reward has "
                        "nothing to be compared with)")
            elif len(set(rewards)) == 1:
                hint = " (when every joint action scored the same, none is better than the group: all advantages are 0)"
            elif (whole := _made_whole(fn)) is not None:
                what, cut = whole
                w = next((w for w in want if cut(w) != w), want[0])
                hint = (f" (you made each advantage a whole number with {what}: {w:.6g} became {cut(w):g}. An "
                        "advantage is a fraction, the reward minus the mean, r - mean(r): keep it a float, with no "
                        "int(), round() or math.floor() around it)")
            elif all(g == 0 for g in got):
                hint = (" (every advantage you returned is 0, but these rewards differ: some joint actions beat the group "
                        "and some fall short. A = r - mean(r): the mean of ALL G rewards, sum(rewards) / len(rewards), "
                        "subtracted from each reward; a reward minus itself is 0 whatever the rewards)")
            elif all(g == (w > 0) - (w < 0) for g, w in zip(got, want)):
                hint = (" (you kept only the SIGN of each advantage, +1 above the mean, -1 below, 0 on it: the size "
                        "counts too, A = r - mean(r), so a joint action far above the group is pushed harder than one "
                        "just above it)")
            elif close([-w for w in want]):
                hint = " (the sign is flipped: reward minus mean, so a joint action above the mean gets a positive advantage)"
            elif (b := _clamped_to(fn, got, want)) is not None:
                hint = (f" (you clamped them to [-{b:g}, {b:g}]: the advantage is reward minus the mean, nothing "
                        f"else: here {max(want, key=abs):g}. (The trainer clips advantages at +-10 by default, "
                        "MAGRPOConfig.advantage_clip, paper-era code; it never binds for rewards in [0, 1]. That is a "
                        "setting of the trainer, not part of the formula asked for.) Drop the max/min)")
            elif _nonzero_mean_used(fn):
                nonzero = [r for r in rewards if r != 0]
                hint = (f" (you took the mean of the NON-ZERO rewards only, {sum(nonzero):g} / {len(nonzero)} = "
                        f"{sum(nonzero) / len(nonzero):.6g}: a reward of 0 is a reward too, a joint action that scored "
                        f"nothing, and it counts in the mean. The mean of all G = {G} rewards is sum(rewards) / "
                        f"len(rewards) = {sum(rewards):g} / {G} = {sum(rewards) / G:.6g}, zeros included: no filter "
                        "on the values)")
            elif _nonzero_mean_used(fn, keep=lambda r: r > 0):
                positive = [r for r in rewards if r > 0]
                hint = (f" (you took the mean of the POSITIVE rewards only, {sum(positive):g} / {len(positive)} = "
                        f"{sum(positive) / len(positive):.6g}: a reward of 0 or below is a reward too, a joint action "
                        f"that scored little, and it counts in the mean. The mean of all G = {G} rewards is "
                        f"sum(rewards) / len(rewards) = {sum(rewards):g} / {G} = {sum(rewards) / G:.6g}: no filter on "
                        "the values)")
            elif G > 1 and close([r - sum(rewards) / (G - 1) for r in rewards]) and all(
                    o is None or len(x) < 2 or all(abs(g - (r - sum(x) / (len(x) - 1))) < 1e-5 for g, r in zip(o, x))
                    for x, o in zip(_GROUPS, _outputs(fn))):     # on every group, not on [0, 1] alone
                hint = (f" (you divided the sum by G-1 = {G - 1}: the mean of the G = {G} rewards is sum(rewards) / G "
                        f"= {sum(rewards):g} / {G} = {sum(rewards) / G:.6g}, not {sum(rewards):g} / {G - 1} = "
                        f"{sum(rewards) / (G - 1):.6g}; divide by len(rewards). G-1 belongs to the leave-one-out "
                        "baseline of notebook 01, which also leaves the sample's own reward out of the sum)")
            elif close([w * G / (G - 1) for w in want]):
                hint = (f" (that is the leave-one-out baseline, the mean of the OTHER G-1 rewards, G/(G-1) = {G}/{G - 1} "
                        "times the answer; MAGRPO subtracts the mean of all G rewards, the sample's own included)")
            elif close([r - max(rewards) for r in rewards]) and all(
                    o is None or all(abs(g - (r - max(x))) < 1e-5 for g, r in zip(o, x))
                    for x, o in zip(_GROUPS, _outputs(fn))):
                hint = (f" (you subtracted the group's BEST reward, max(rewards) = {max(rewards):g}: that is MAReMax's "
                        "baseline (notebook 06), which leaves every advantage <= 0; MAGRPO subtracts the MEAN of all G "
                        "rewards, sum(rewards) / len(rewards), so that the advantages sum to 0)")
            elif (med := _median_used(fn)) is not None:
                what, of = med
                hint = (f" (you subtracted the MEDIAN of the rewards ({what}), {of(rewards):g} here, not their mean, "
                        f"{sum(rewards):g} / {G} = {sum(rewards) / G:.6g}: the median ignores how far the best and "
                        "worst joint actions lie, and the advantages then do not sum to 0. MAGRPO's baseline is the "
                        "MEAN of all G rewards, sum(rewards) / len(rewards))")
            elif all(math.isfinite(g) for g in got) and all(abs(g - w) < 1e-5
                                                             for g, w in zip(sorted(got), sorted(want))):
                hint = (" (the same values in another order: keep the order of the rewards, advantage i belongs to "
                        "reward i, joint action i; do not sort them)")
            elif rounded_to(got, want, close=lambda g, w: math.isfinite(g) and abs(g - w) < 1e-5) is not None:
                hint = (f" (close but not equal: {_rounded_words(_rounded_places(fn), fn)}; do not round, "
                        "return r - mean(r) as computed, the notebook compares them with the trainer's own advantages)")
            elif close(_whole_mean(rewards)) and all(o is None or all(abs(g - w) < 1e-5
                                                                      for g, w in zip(o, _whole_mean(x)))
                                                     for x, o in zip(_GROUPS, _outputs(fn))):
                hint = (f" (you took the mean with // (floor division), which rounds it down to a whole number: "
                        f"sum(rewards) // len(rewards) = {sum(rewards) // G:g}, but the mean is {sum(rewards):g} / {G} "
                        f"= {sum(rewards) / G:.6g}; divide with /)")
            elif all(math.isfinite(g) and abs(g - w) <= 1e-2 for g, w in zip(got, want)):
                hint = (" (close but not equal: do not round, neither the mean nor the advantages, and compute in "
                        "full float precision: A = r - mean(r) exactly)")
            elif abs(sum(got)) > 1e-4:
                hint = f" (they sum to {sum(got):.3f}; advantages relative to the group mean always sum to 0)"
            elif (what := _scaled_by(fn)) is not None:
                hint = f" (they sum to 0 as they should, but are rescaled: you {what})"
            else:
                hint = (" (they sum to 0 as they should, but are rescaled: MAGRPO does not divide or multiply them by "
                        "anything, the std, the range or G; A = r - mean(r), nothing else)")
            shown = [round(v, 6) if math.isfinite(v) else v for v in got]
            if shown == [round(v, 6) for v in want]:     # a difference below 1e-6 (+1e-7): shown with more digits
                raise ExerciseFailed(f"for rewards {rewards} the advantages are {_numbers(want)}, you returned "
                                     f"{_numbers(got)}{hint}")
            raise ExerciseFailed(f"for rewards {rewards} the advantages are {[round(v, 6) for v in want]}, "
                                 f"you returned {shown}{hint}")
    _check_empty_group(fn)


def _check_empty_group(fn) -> None:
    """An EMPTY group, rewards = []: no rewards, no advantages, so [] (a new list); raising is accepted too (a
    ZeroDivisionError of sum(rewards) / len(rewards), or a ValueError as the library's group_advantages raises, as
    for a group of one). [0.0], None or anything else is refused."""
    import warnings

    given: list = []
    with warnings.catch_warnings():    # numpy's "Mean of empty slice": the check's probe, not the learner's run
        warnings.simplefilter("ignore")
        try:
            got = call_answer(fn, given, said=lambda e: "")
        except ExerciseFailed:         # it raised: accepted, as the library raises
            return
    about = ("no rewards, no advantages: return [] ([r - mean for r in rewards] gives it), or let it raise (the "
             "mean, 0 / 0, raises ZeroDivisionError; the library's group_advantages raises a ValueError): either is "
             "accepted")
    if got is None:
        raise ExerciseFailed(f"for an empty group, rewards = [], your function returned None (a bare `return`, an "
                             f"`else None`, or no `return` on that path): {about}.")
    if got is given:
        raise ExerciseFailed("for an empty group, rewards = [], your function returned the very list it was given "
                             "(`if not rewards: return rewards`): the caller's rewards and the advantages would be one "
                             "object, so appending to one changes the other. Return a NEW empty list, `return []`.")
    if isinstance(got, list) and len(got) == 0:
        return
    try:
        values = [float(v) for v in got]
    except (TypeError, ValueError):
        values = None
    if isinstance(got, list) and values is not None and len(values) > 0 and all(v == 0 for v in values):
        raise ExerciseFailed(f"for an empty group, rewards = [], your function returned {got!r}: "
                             f"{_advantages_words(len(got))} for no reward. There is one advantage per reward, so "
                             "none here: return [] ([r - mean for r in rewards] gives it, with no guard), or let it "
                             "raise (the mean, 0 / 0, raises ZeroDivisionError; the library's group_advantages raises "
                             "a ValueError): either is accepted.")
    raise ExerciseFailed(f"for an empty group, rewards = [], your function returned {got!r} "
                         f"({type(got).__name__}): {about}.")


_PAIRS = [
    ("abcd", "abcdefghij"),        # ratio 2.5: inside [2, 3]
    ("a b c d", "abcdefghijklmn"),  # 7 and 14 characters, spaces included: ratio 2 (4 and 14 without spaces: 3.5)
    ("one two three", "four five six seven eight nine ten eleven"),  # 13 and 41 characters: 3.15; 3 and 8 words: 2.67
    ("abcd", "abcdefgh"),          # ratio 2: the edge counts as inside
    ("abcd", "abcd"),              # ratio 1: 1 below the interval
    ("ab", "abcdefghijklmn"),      # ratio 7: 4 above
    ("a" * 10, "b" * 31),          # ratio 3.1
    ("a" * 40, "b" * 10),          # the concise one is the LONGER: ratio 0.25
    ("", "abc"),                   # an empty concise answer: the ratio is infinite, the reward 0
    (" abc", " abcdefghijk"),      # as the model writes them, each starting with a space: 4 and 12 characters, ratio 3
    #                                (stripped, 3 and 11: 3.67, reward 0.51)
    ("abc", ""),                   # an empty DETAILED answer: ratio 0, 2 below the interval, reward exp(-2)
    ("", ""),                      # both empty: the concise one is empty, reward 0
    (" ", "abc"),                  # a concise answer of one space is NOT empty: 1 character, ratio 3, reward 1
    ("Résumé", "Le résumé détaillé."),  # 6 and 19 characters: ratio 3.17, reward 0.85 (8 and 23 UTF-8
    #                                     bytes: 2.875, reward 1): an accented letter is ONE character, len of the text
    # Newlines, tabs and runs of spaces are characters too. A real concise answer of the quickstart's model (69
    # characters, 3 newlines, a run of 4 spaces) against a 207-character detailed one: ratio 3.0, on the edge, so
    # any character left out of the concise answer (newlines dropped or stripped, whitespace collapsed) lowers the
    # reward; then tabs in the concise answer (expanded to spaces, its ratio falls below 2), and newlines, tabs, a
    # blank line and a double space in the detailed one (ratio 6.56: every character left out or added changes the
    # reward).
    (' I cannot to stayjoin."""\ndef has_letter(word):\n    return len(word)\n',
     " I cannot sleep more than four hours a night. For example, i know I am not perfect either. Overall, i want to "
     "know should I see a doctor. In fact, last week it got really bad. Because of this, Please advise."),
    ("\tfor w in words:\n\t\tprint(w)\n", "Loop over the words and print each one on its own line."),  # 28, 55
    ("In short:", "Details:\n\n\t- one point,\n\t- another  point,\n\t- a third one.\n"),            # 9, 59
    # Just outside both edges, so that a margin on the band (2 - 0.01 <= ratio <= 3 + 0.01, down to 0.001) shows
    ("a" * 100, "b" * 199), ("a" * 100, "b" * 301), ("a" * 1000, "b" * 1999), ("a" * 1000, "b" * 3001),
    # ratio 21, far above the band: reward exp(-18) = 1.5e-8, tiny but not 0, so a cap on the ratio (min(ratio, 20))
    # or a small reward replaced by 0 (0.0 if reward < 1e-6) shows; compared RELATIVELY (_off), not within 1e-6
    ("ab", "b" * 42),
    # 1e-4 outside each edge (ratios 1.9999 and 3.0001), so that a margin below 1e-3 shows too (2 - 1e-4 <= ratio,
    # math.isclose(ratio, 2, rel_tol=1e-4))
    ("a" * 10000, "b" * 19999), ("a" * 10000, "b" * 30001),
    # ratio 40: reward exp(-37) = 8.5e-17, so that a small reward zeroed or floored far below 1e-8 shows
    # (0.0 if reward < 1e-9, max(reward, 1e-8))
    ("ab", "b" * 80),
]


def _bytes_reward(a: str, b: str) -> float:
    """The reward with every length counted in UTF-8 bytes (len(text.encode())), not in characters."""
    from ..tasks.writing.reward import length_ratio_reward

    return length_ratio_reward(a.encode(), b.encode())


def _ratio_of(a: str, b: str, seen) -> float | None:
    """The ratio of the two texts as a misreading `seen` (str -> str) counts them; None where its concise is empty."""
    return len(seen(b)) / len(seen(a)) if seen(a) else None


def _nearer(l: float) -> float:
    return max(2 - l, 0.0, l - 3)


# Ways to misread the ratio: (name, ratio of a pair or None where that reading is undefined).
_RATIOS = [
    ("chars", lambda a, b: len(b) / len(a) if a else None),
    ("upside down", lambda a, b: len(a) / len(b) if b else None),
    ("words", lambda a, b: len(b.split()) / len(a.split()) if a.split() else None),
    ("floor", lambda a, b: len(b) // len(a) if a else None),
    ("no spaces", lambda a, b: len(b.replace(" ", "")) / len(a.replace(" ", "")) if a.replace(" ", "") else None),
    ("stripped", lambda a, b: len(b.strip()) / len(a.strip()) if a.strip() else None),
    ("no newlines", lambda a, b: _ratio_of(a, b, lambda s: s.replace("\n", ""))),
    ("newlines stripped", lambda a, b: _ratio_of(a, b, lambda s: s.strip("\n"))),
    ("whitespace collapsed", lambda a, b: _ratio_of(a, b, lambda s: re.sub(r"\s+", " ", s))),
    ("spaces collapsed", lambda a, b: _ratio_of(a, b, lambda s: re.sub(" +", " ", s))),
    ("blank lines collapsed", lambda a, b: _ratio_of(a, b, lambda s: re.sub(r"\n+", "\n", s))),
    ("no tabs", lambda a, b: _ratio_of(a, b, lambda s: s.replace("\t", ""))),
    ("plus one", lambda a, b: len(b) / (len(a) + 1)),
    ("both plus one", lambda a, b: (len(b) + 1) / (len(a) + 1)),
    ("tabs as 4 spaces", lambda a, b: _ratio_of(a, b, lambda s: s.replace("\t", "    "))),
    ("tabs expanded", lambda a, b: _ratio_of(a, b, lambda s: s.expandtabs())),
    *((f"rounded {k}", lambda a, b, k=k: round(len(b) / len(a), k) if a else None) for k in range(4)),
]
_WHITESPACE = "newlines and tabs are characters too: len of the text as it is"
def _relative_reward(l: float, lo: str, hi: str) -> float:
    """The reward with a RELATIVE distance: below 2, (2 - l) divided by 2 (lo "end") or by l (lo "ratio"); above 3,
    (l - 3) divided by 3 (hi "end") or by l (hi "ratio")."""
    if 2 <= l <= 3:
        return 1.0
    if l < 2:
        return math.exp(-(2 - l) / 2) if lo == "end" else math.exp(-(2 - l) / l) if l > 0 else 0.0
    return math.exp(-(l - 3) / (3 if hi == "end" else l))


# Ways to misread the reward of a ratio l: (name, reward).
_SHAPES = [
    ("right", lambda l: math.exp(-_nearer(l))),
    ("middle", lambda l: 1.0 if 2 <= l <= 3 else math.exp(-abs(l - 2.5))),
    ("middle everywhere", lambda l: math.exp(-abs(l - 2.5))),
    ("farther", lambda l: 1.0 if 2 <= l <= 3 else math.exp(-max(abs(l - 2), abs(l - 3)))),
    ("exp(+d)", lambda l: math.exp(_nearer(l))),
    ("linear", lambda l: max(0.0, 1.0 - _nearer(l))),
    ("linear unclipped", lambda l: 1.0 - _nearer(l)),
    ("squared", lambda l: math.exp(-_nearer(l) ** 2)),
    ("step", lambda l: 1.0 if 2 <= l <= 3 else 0.0),
    ("no upper edge", lambda l: 1.0 if l >= 2 else math.exp(-(2 - l))),
    ("no lower edge", lambda l: 1.0 if l <= 3 else math.exp(-(l - 3))),
    ("half", lambda l: math.exp(-_nearer(l) / 2)),
    ("to 2", lambda l: 1.0 if 2 <= l <= 3 else math.exp(-abs(l - 2))),
    ("to 3", lambda l: 1.0 if 2 <= l <= 3 else math.exp(-abs(l - 3))),
    ("to 2 everywhere", lambda l: math.exp(-abs(l - 2))),
    ("to 3 everywhere", lambda l: math.exp(-abs(l - 3))),
    # a distance made relative, divided by the end it is measured to (or by the ratio), on each side
    *((f"relative {lo} {hi}", lambda l, lo=lo, hi=hi: _relative_reward(l, lo, hi))
      for lo in ("end", "ratio") for hi in ("end", "ratio")),
    # the distance between logarithms, log(2 / l) below, log(l / 3) above: exp of it is l / 2 below, 3 / l above
    ("log", lambda l: 1.0 if 2 <= l <= 3 else l / 2 if l < 2 else 3 / l),
]


def _pair_outputs(fn) -> list:
    """fn's reward for every pair of _PAIRS (None where it fails or gives no finite number)."""
    outs = []
    for x, y in _PAIRS:
        try:
            v = plain_number(fn(x, y))
        except Exception:  # noqa: BLE001  the learner's function may fail on another pair: no evidence there
            v = None
        outs.append(v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None)
    return outs


def _scale_of(fn) -> float | None:
    """The factor k when fn gives k times the reward on EVERY pair where it answers (k not 1); None otherwise."""
    from ..tasks.writing.reward import length_ratio_reward

    pairs = [(v, length_ratio_reward(x, y)) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if v is not None]
    ks = [v / w for v, w in pairs if w > 1e-9]
    if not ks or abs(ks[0] - 1) <= 1e-6 or abs(ks[0]) <= 1e-6:
        return None
    k = ks[0]
    return k if all(abs(v - k * w) <= 1e-6 * max(1.0, abs(k)) for v, w in pairs) else None


def _misreading(fn, a: str, b: str, got: float):
    """The (ratio, shape) misreading that gives `got` on the pair (a, b) and agrees with fn on every other pair
    where that reading is defined; None when no single misreading explains the answer."""
    outs = _pair_outputs(fn)
    for rname, ratio in _RATIOS:
        for sname, shape in _SHAPES:
            if (rname, sname) == ("chars", "right"):
                continue
            l = ratio(a, b)
            if l is None or abs(shape(l) - got) > 1e-6:
                continue
            # the pairs with an empty answer are left out: a guard for them (if not concise ...) is no evidence
            if all(v is None or not x or not y or ratio(x, y) is None or abs(shape(ratio(x, y)) - v) <= 1e-6
                   for (x, y), v in zip(_PAIRS, outs)):
                return rname, sname
    return None


def _misreading_hint(rname: str, sname: str, a: str, b: str) -> str:
    ratio = len(b) / len(a)
    parts = []
    if rname == "upside down":
        parts.append(f"your ratio is upside down, chars(concise) / chars(detailed) = {len(a)}/{len(b)} = "
                     f"{len(a) / len(b):.4g}; the ratio is chars(detailed) / chars(concise) = {len(b)}/{len(a)} = "
                     f"{ratio:.4g} (the detailed answer should be 2 to 3 times LONGER than the concise one)")
    elif rname == "words":
        parts.append(f"you counted words ({len(a.split())} and {len(b.split())} words, ratio "
                     f"{len(b.split()) / len(a.split()):.4g}), not characters ({len(a)} and {len(b)} characters, "
                     f"ratio {ratio:.4g}): characters are len of the text, spaces included, no .split()")
    elif rname == "floor":
        parts.append(f"you divided with //, which rounds the ratio down to a whole number: {len(b)} // {len(a)} = "
                     f"{len(b) // len(a)}, but the ratio is {len(b)} / {len(a)} = {ratio:.4g}; divide with /")
    elif rname == "no spaces":
        parts.append(f"you left the spaces out ({len(a.replace(' ', ''))} and {len(b.replace(' ', ''))} characters "
                     "without them); every character counts, spaces too: len of the text as it is")
    elif rname == "stripped":
        parts.append(f"you stripped the leading/trailing spaces ({len(a.strip())} and {len(b.strip())} characters "
                     "after .strip()); they count too: len of the text as it is, the model's answers start with one")
    elif rname in ("no newlines", "newlines stripped"):
        parts.append(f"you left out newlines ({a.count(chr(10))} in the concise answer, {b.count(chr(10))} in the "
                     f"detailed one: {len(a)} and {len(b)} characters as written); {_WHITESPACE}")
    elif rname in ("whitespace collapsed", "spaces collapsed", "blank lines collapsed"):
        parts.append(f"you collapsed runs of spaces (or newlines, tabs) into one; every one counts ({len(a)} "
                     f"and {len(b)} characters as written): {_WHITESPACE}")
    elif rname.startswith("rounded "):
        k = int(rname.split()[1])
        parts.append(f"you rounded the ratio to {k} decimal{'' if k == 1 else 's'}: {len(b)}/{len(a)} = {ratio:.6g}, "
                     f"which you made {round(ratio, k):g}; use the ratio as computed, unrounded (round nothing, "
                     "neither the ratio nor the reward)")
    elif rname == "no tabs":
        parts.append(f"you left out tabs ({a.count(chr(9))} in the concise answer, {b.count(chr(9))} in the detailed "
                     f"one: {len(a)} and {len(b)} characters as written); {_WHITESPACE}")
    elif rname in ("plus one", "both plus one"):
        top = "(len(detailed) + 1)" if rname == "both plus one" else "len(detailed)"
        num = len(b) + (rname == "both plus one")
        parts.append(f"you added 1 to the concise answer's length{' and to the detailed one' if num > len(b) else ''}, "
                     f"{top} / (len(concise) + 1) = {num}/{len(a) + 1} = {num / (len(a) + 1):.4g}, a guard against "
                     f"dividing by zero perhaps; the ratio is len(detailed) / len(concise) = {len(b)}/{len(a)} = "
                     f"{ratio:.4g}, nothing added. Guard the empty concise answer on its own: `if not concise: "
                     "return 0.0` (its ratio is infinite, its reward 0)")
    elif rname in ("tabs as 4 spaces", "tabs expanded"):
        parts.append(f"you expanded tabs into spaces; a tab is ONE character ({len(a)} and {len(b)} characters as "
                     f"written): {_WHITESPACE}")
    nearer = "δ is the distance from the ratio to the NEARER end of [2, 3], 2 - ratio below 2, ratio - 3 above 3"
    if sname in ("middle", "middle everywhere"):
        parts.append("you measured the distance to the middle of [2, 3], |ratio - 2.5|"
                     + (", and inside [2, 3] the reward is 1, not exp(-|ratio - 2.5|)" if sname == "middle everywhere"
                        else "") + f"; {nearer}")
    elif sname == "farther":
        parts.append(f"you measured the distance to the FARTHER end of [2, 3] (ratio - 2 above 3, 3 - ratio below 2); "
                     f"{nearer}")
    elif sname == "exp(+d)":
        parts.append("the exponent's sign is flipped: exp(+d) is above 1 and grows as the ratio moves away from "
                     "[2, 3]; the reward is exp(-δ), at most 1")
    elif sname in ("linear", "linear unclipped"):
        parts.append("your reward falls in a straight line, 1 - δ; outside [2, 3] it is exp(-δ), 1 at the edge, "
                     "then decaying smoothly without ever reaching 0")
    elif sname == "half":
        parts.append("you halved the distance, exp(-δ/2); the reward is exp(-δ), δ itself, with no divisor (notebook "
                     "01's word-count reward, exp(-d/5), is another reward)")
    elif sname in ("to 2", "to 3", "to 2 everywhere", "to 3 everywhere"):
        end, other = sname[3], "3" if sname[3] == "2" else "2"
        side = "above 3" if end == "2" else "below 2"
        parts.append(f"you measured the distance always to {end}, |ratio - {end}|, so {side} it runs to the FARTHER "
                     f"end" + (", and inside [2, 3] the reward is 1, not exp(-|ratio - " + end + "|)"
                               if sname.endswith("everywhere") else "")
                     + f"; {nearer}: {other} is the nearer end on that side")
    elif sname.startswith("relative "):
        lo, hi = sname.split()[1:]
        below = "(2 - ratio) / " + ("2" if lo == "end" else "ratio")
        above = "(ratio - 3) / " + ("3" if hi == "end" else "ratio")
        parts.append(f"you made the distance relative, δ = {below} below 2 and {above} above 3; δ is the ABSOLUTE "
                     f"distance from the ratio to the nearer end of [2, 3], 2 - ratio below, ratio - 3 above, divided "
                     f"by nothing (here {_nearer(ratio):.4g}, exp(-δ) = {math.exp(-_nearer(ratio)):.4f})")
    elif sname == "log":
        parts.append(f"you measured the distance between logarithms, δ = log(2 / ratio) below 2 and log(ratio / 3) "
                     f"above 3 (a reward of ratio / 2 or 3 / ratio); δ is the ABSOLUTE distance from the ratio to the "
                     f"nearer end of [2, 3], 2 - ratio below, ratio - 3 above, no logarithm (here {_nearer(ratio):.4g}, "
                     f"exp(-δ) = {math.exp(-_nearer(ratio)):.4f})")
    elif sname == "squared":
        parts.append("you squared the distance, exp(-δ**2); the reward is exp(-δ)")
    elif sname == "no upper edge":
        parts.append("your reward stays 1 above 3: the band [2, 3] has an UPPER edge too, and a detailed answer "
                     "more than 3 times as long earns exp(-(ratio - 3)); test 2 <= ratio <= 3, with a case for each "
                     "side")
    elif sname == "no lower edge":
        parts.append("your reward stays 1 below 2: the band [2, 3] has a LOWER edge too, and a detailed answer "
                     "less than 2 times as long earns exp(-(2 - ratio)); test 2 <= ratio <= 3, with a case for each "
                     "side")
    elif sname == "step":
        parts.append(f"outside [2, 3] you gave 0; the reward there is exp(-δ), partial credit that shrinks as the "
                     f"ratio moves away ({nearer})")
    return "; and ".join(parts)


_STRIPS = [(".strip()", str.strip), (".rstrip()", str.rstrip), (".lstrip()", str.lstrip)]


def _stripped_with(fn) -> str | None:
    """The str method (".strip()", ".rstrip()", ".lstrip()") the answer applies to both texts before counting, when the
    reward of the stripped texts (0 where the stripped concise answer is empty) explains every pair where it answers;
    None otherwise."""
    from ..tasks.writing.reward import length_ratio_reward

    outs = _pair_outputs(fn)
    for how, strip in _STRIPS:
        wants = [length_ratio_reward(strip(x), strip(y)) for x, y in _PAIRS]
        if any(v is not None for v in outs) and all(v is None or abs(v - w) <= 1e-6 for v, w in zip(outs, wants)):
            return how
    return None


def _rounded_close(g: float, w: float) -> bool:
    """Whether the answer g is the rounded reward w: within 1e-12 of it, or 0 exactly where the rounding gives 0 (a tiny
    reward such as exp(-37) = 8.5e-17, computed with another error, is no rounding to 0 decimals)."""
    return abs(g - w) <= 1e-12 if w else g == 0


def _through_one(fn) -> bool:
    """Whether the answer is the reward computed through 1 (1 + math.expm1(-δ), 1 - (1 - exp(-δ))): within a few
    float64 steps of 1 (4.5e-16) of the reward on every pair where it answers, and off, relatively, on a tiny reward."""
    from ..tasks.writing.reward import length_ratio_reward

    pairs = [(v, length_ratio_reward(x, y)) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if v is not None]
    return (any(_off(v, w) for v, w in pairs) and all(v != 0 for v, w in pairs if _off(v, w))   # 0: zeroed, told apart
            and all(abs(v - w) <= 4.5e-16 for v, w in pairs))


def _reward_rounded_places(fn) -> int | None:
    """The number of decimals (0 to 10) the answer rounds the reward to, read off EVERY pair where it answers (one pair
    alone can agree with fewer places); None when no single count explains all of them."""
    from ..tasks.writing.reward import length_ratio_reward

    pairs = [(v, length_ratio_reward(x, y)) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if v is not None]
    if not pairs:
        return None
    return rounded_to([v for v, _ in pairs], [w for _, w in pairs], range(11), close=_rounded_close)


def _not_a_band(fn) -> bool:
    """True when NO reading "l = len(detailed) / len(concise); 1 on a band [lo, hi] (a margin around [2, 3] or not),
    exp(-distance to one interval) outside it" explains the answer on every pair with a concise answer: its ratio is
    then computed another way (characters left out, a made-up formula), not its bounds. False when one does, or when
    the answer gives 0 or more than 1 outside the band (another shape, told elsewhere)."""
    pts = [(len(y) / len(x), v) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if x and v is not None]
    ones = [l for l, v in pts if abs(v - 1) <= 1e-9]
    lo, hi = min(ones + [2.0]), max(ones + [3.0])
    rest = [(l, v) for l, v in pts if abs(v - 1) > 1e-9]
    if any(lo <= l <= hi for l, _ in rest):
        return True           # less than 1 between two ratios that earn 1: no band of l
    if any(not 0 < v < 1 for _, v in rest):
        return False
    below = [l - math.log(v) for l, v in rest if l < lo]      # exp(-(edge - l)): the lower edge each pair implies
    above = [l + math.log(v) for l, v in rest if l > hi]      # exp(-(l - edge)): the upper edge
    return any(max(edges) - min(edges) > 1e-6 for edges in (below, above) if edges)


def _off(got: float, want: float) -> bool:
    """Whether the answer's reward is wrong: off by more than 1e-6, or by more than 1e-6 of the reward itself where the
    reward is below 1 (exp(-18) = 1.5e-8 is not 0). A numpy float32 (about 6e-8 relative) passes."""
    return abs(got - want) > 1e-6 * (want if want > 0 else 1.0)


def _shown(want: float, got: float) -> tuple[str, str]:
    """The reward and the answer as a message shows them: to 4 decimals, or to 10 significant digits where 4 decimals
    would not tell them apart (0.8574 against 0.8574) or would show a tiny reward as 0.0000."""
    if abs(got - want) < 1e-4 or 0 < abs(want) < 1e-4 or 0 < abs(got) < 1e-4:
        return f"{want:.10g}", f"{got:.10g}"
    return f"{want:.4f}", f"{got:.4f}"


def _denominator_epsilon(fn) -> float | None:
    """eps (0 < eps < 0.5) when the answer divides by len(concise) + eps, a guard against dividing by zero, on every
    pair with a concise answer where it answers (read off the first pair at or below 2 that earns less than 1; the
    edge pairs, ratio exactly 2, then fall just below the band); None otherwise."""
    outs = _pair_outputs(fn)
    pts = [(len(x), len(y), v) for (x, y), v in zip(_PAIRS, outs) if x and v is not None]
    shape = lambda l: math.exp(-_nearer(l))  # noqa: E731
    for c, d, v in pts:
        if d and d / c <= 2 and 0 < v < 1:
            implied = 2 + math.log(v)       # the ratio the answer used: exp(-(2 - implied)) = v
            if implied <= 0:
                return None
            eps = d / implied - c
            break
    else:
        return None
    if not 1e-15 < eps < 0.5:
        return None
    if all(abs(v - shape(d / (c + eps))) <= 1e-12 + 1e-9 * eps for c, d, v in pts):
        return eps
    return None


def _ratio_rounded_places(fn) -> int | None:
    """The number of decimals k (0 to 15) when the answer is the reward of the ratio rounded to k decimals,
    exp(-δ(round(ratio, k))), on every pair with a concise answer where it answers (within 1e-12 of the reward, float64
    noise: a float32 answer never fits), and the rounding changes the reward on one pair at least; None otherwise."""
    shape = lambda l: math.exp(-_nearer(l))  # noqa: E731
    pts = [(len(y) / len(x), v) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if x and v is not None]
    fits = lambda v, w: abs(v - w) <= 1e-12 * max(abs(w), 1e-300)  # noqa: E731
    for k in range(16):
        if (any(not fits(shape(round(l, k)), shape(l)) for l, _ in pts)
                and all(fits(v, shape(round(l, k))) for l, v in pts)):
            return k
    return None


def _capped_at(fn) -> float | None:
    """The cap C when the answer caps the ratio, min(ratio, C) (or δ at C - 3), on every pair with a concise answer
    where it answers, and the cap binds on one pair at least; None otherwise."""
    pts = [(len(y) / len(x), v) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if x and v is not None]
    caps = [3 - math.log(v) for l, v in pts if l > 3 and 0 < v < 1 and l - (3 - math.log(v)) > 1e-6]
    if not caps or max(caps) - min(caps) > 1e-6:
        return None
    C = caps[0]
    if all(not _off(v, math.exp(-_nearer(min(l, C)))) for l, v in pts):
        return C
    return None


def _zeroed_below(fn) -> float | None:
    """The largest reward the answer gives 0 instead of, when it gives 0 on the pairs with the smallest rewards, the
    reward itself on every other pair where it answers, and a reward below 1 (exp(-δ), partial credit) on one pair at
    least (an `if reward < t: return 0.0`); None otherwise."""
    from ..tasks.writing.reward import length_ratio_reward

    zeroed, kept = [], []
    for (x, y), v in zip(_PAIRS, _pair_outputs(fn)):
        if v is None or not x:
            continue
        w = length_ratio_reward(x, y)
        if not _off(v, w):
            kept.append(w)
        elif v == 0 and w > 0:
            zeroed.append(w)
        else:
            return None
    if zeroed and any(w < 1 for w in kept) and max(zeroed) < min(kept):
        return max(zeroed)
    return None


def _base_of(fn) -> float | None:
    """The base b when the answer is b ** -δ with b near e but not e (2.718, 2.72, 2.7: e typed in), on every pair with
    a concise answer where it answers; None otherwise."""
    pts = [(_nearer(len(y) / len(x)), v) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if x and v is not None]
    far = [(d, v) for d, v in pts if d > 0.1 and 0 < v < 1]
    if not far:
        return None
    b = math.exp(-math.log(far[0][1]) / far[0][0])
    if not 1e-9 < abs(b - math.e) < 0.3:
        return None
    return b if all(abs(v - b ** -d) <= 1e-9 * max(v, 1e-300) + 1e-15 for d, v in pts) else None


def _half_precision(fn) -> bool:
    """Whether the answer is the reward stored in float16 (np.float16, torch.half) on every pair where it answers,
    and differs from the reward on one pair at least."""
    from ..tasks.writing.reward import length_ratio_reward

    half = lambda v: struct.unpack("e", struct.pack("e", v))[0]  # noqa: E731
    pairs = [(v, length_ratio_reward(x, y)) for (x, y), v in zip(_PAIRS, _pair_outputs(fn)) if v is not None]
    return any(v != w for v, w in pairs) and all(v == half(w) for v, w in pairs)


def _none_returned(fn, a: str, b: str) -> str:
    """What a None returned for the pair (a, b) says: the input named, and, from the pairs where fn returns None
    too, whether `return` is missing altogether, the empty concise answer's guard returns nothing, or an if/elif chain
    falls through at some ratios."""
    nones = []
    for x, y in _PAIRS:
        try:
            if fn(x, y) is None:
                nones.append((x, y))
        except Exception:  # noqa: BLE001  the learner's function may fail on another pair: no evidence there
            pass
    if not a:
        where = f"an empty concise answer and a detailed one of {len(b)} characters (ratio infinite)"
    else:
        where = (f"a concise answer of {len(a)} characters and a detailed one of {len(b)} (ratio {len(b)}/{len(a)} "
                 f"= {len(b) / len(a):g})")
    said = f"for {where} your function returned None"
    if all((x, y) in nones for x, y in _PAIRS if x):      # None on every pair with a concise answer
        return (f"{said}, as on every pair of the check: did you forget `return`? A function that ends "
                "without a `return` gives None: end it with `return` and the reward, a float.")
    if not a:
        return (f"{said} (a bare `return`, an `else None`): an empty concise answer earns 0 (its ratio is infinite, "
                "exp(-inf) = 0): `if not concise: return 0.0`.")
    ratios = sorted({len(y) / len(x) for x, y in nones if x})
    return (f"{said}, and a number on other pairs: a path of your function ends without a `return` at ratio"
            f"{'' if len(ratios) == 1 else 's'} {', '.join(f'{r:g}' for r in ratios)}: an if/elif chain that falls "
            "through (`2 <= ratio < 3`, `ratio < 2`, `ratio > 3` leave out ratio 3 exactly), or a bare `return`. "
            "Make every case end in `return`: 1.0 for 2 <= ratio <= 3 (both edges included), exp(-(2 - ratio)) "
            "below, exp(-(ratio - 3)) above; a final `else:` leaves no gap.")


def _ratio_crash(e: Exception, a: str, b: str) -> str:
    """What a crash of length_ratio_reward(a, b) says: a division by zero is explained, anything else quoted."""
    if isinstance(e, ZeroDivisionError) and a and not a.strip():
        return (f"a concise answer of {len(a)} space(s), {a!r}, made your function divide by zero: it is not empty "
                f"(len({a!r}) = {len(a)}), so you stripped the texts (.strip(), .rstrip(), .split()) before counting: "
                "characters are counted as written, spaces and newlines at the ends too. Take len of the texts as "
                f"they are: here the ratio is {len(b)} / {len(a)} = {len(b) / len(a):g}.")
    if isinstance(e, ZeroDivisionError) and a:
        return (f"an empty detailed answer made your function divide by zero: the ratio is "
                f"chars(detailed) / chars(concise) = 0 / {len(a)} = 0, 2 below [2, 3], so the reward "
                "is exp(-2); divide by the CONCISE answer's length.")
    if isinstance(e, ZeroDivisionError):
        return (f"an empty concise answer with a detailed one of {len(b)} characters made your function "
                "divide by zero: the ratio is infinite there, infinitely far from [2, 3], so the reward "
                "is exp(-inf) = 0; return 0.0 for an empty concise answer.")
    return (f"for the concise answer {a!r} and the detailed answer {b!r} your function raised "
            f"{type(e).__name__}: {e}. It should return the reward, a float, for any two "
            "texts, empty ones included.")


@exercise("00.length_ratio_reward")
def check_length_ratio_reward(fn) -> None:
    """`fn(concise, detailed) -> float`: 1 if chars(detailed)/chars(concise) is in [2, 3], else
    exp(-distance to the interval)."""
    from ..tasks.writing.reward import length_ratio_reward

    _not_the_library(fn, "length_ratio_reward", length_ratio_reward)
    _not_a_wrapper(fn, ("abcd", "abcdefghij"), "length_ratio_reward", length_ratio_reward,
                   how="from the rule in the text (the ratio len(detailed) / len(concise), then exp(-distance to [2, 3]))")
    for a, b in _PAIRS:
        want = length_ratio_reward(a, b)
        got = call_answer(fn, a, b, said=lambda e, a=a, b=b: _ratio_crash(e, a, b))
        got = plain_number(got)   # a numpy float (np.float32) is a number too
        if got is None:
            raise ExerciseFailed(_none_returned(fn, a, b))
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got):
            raise ExerciseFailed(f"return one number (a float), got {got!r}")
        # an epsilon in the denominator, len(detailed) / (len(concise) + 1e-8): the edge, ratio 2, falls just below
        # the band (inside the 1e-6 tolerance for a small epsilon, so looked for first)
        if got != want and (eps := _denominator_epsilon(fn)) is not None:
            w, g = _shown(want, got)
            ratio = len(b) / len(a) if a else math.inf
            raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} (ratio "
                                 f"{ratio:g}) earn {w}, you returned {g}: you divide by len(concise) + {eps:.3g}, an "
                                 "epsilon added to the denominator to avoid a division by zero perhaps. It makes "
                                 f"every ratio a hair smaller: {len(b)} / ({len(a)} + {eps:.3g}) falls just below "
                                 f"{ratio:g}" + (", out of the band, where 2 itself is in it" if ratio == 2 else "")
                                 + ". Divide by len(concise) itself, and guard the empty concise answer on its own, "
                                 "`if not concise: return 0.0` (its ratio is infinite, its reward 0), not with an "
                                 "epsilon.")
        # the RATIO rounded (round(len(detailed) / len(concise), 6)): refused at any number of decimals that changes
        # the reward, inside the 1e-6 tolerance too
        if got != want and (k := _ratio_rounded_places(fn)) is not None:
            w, g = _shown(want, got)
            ratio = len(b) / len(a)
            raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} have the "
                                 f"ratio {len(b)}/{len(a)} = {ratio!r} and earn {w}, you returned {g}: you rounded "
                                 f"the ratio to {k} decimal{'' if k == 1 else 's'}, {round(ratio, k)!r}, on every "
                                 "pair (round(len(detailed) / len(concise), ...)). Use the ratio as computed, "
                                 "unrounded (round nothing, neither the ratio nor the reward).")
        # rounded to up to 10 decimals (inside the 1e-6 tolerance from 7 on), refused as 00.group_advantages does:
        # the text says "unrounded"; a numpy float32 (about 1e-8 relative) never lands within 1e-12 of a rounding
        if 1e-12 < abs(got - want) <= 1e-6 and got != int(got) and (
                k := rounded_to(got, want, range(11), close=_rounded_close)) is not None:
            raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} earn "
                                 f"{want!r}; you returned {got!r}, the reward rounded to "
                                 f"{_reward_rounded_places(fn) or k} decimal(s). Do not round: return the reward as "
                                 "computed, unrounded, as the text says and as the library's reward does.")
        if _off(got, want):
            w, g = _shown(want, got)
            if not a:
                raise ExerciseFailed(f"an empty concise answer earns 0 (the ratio is infinite), you returned {g}")
            if not a.strip() and (how := _stripped_with(fn)) is not None:
                raise ExerciseFailed(f"a concise answer of {len(a)} space(s), {a!r}, and a detailed one of {len(b)} "
                                     f"characters earn {w} (ratio {len(b) / len(a):g}), you returned "
                                     f"{g}: you stripped the texts ({how}): characters are counted as written, "
                                     "spaces and newlines at the ends too (the model's answers start with a space, and "
                                     f"often end with a newline). {a!r} is 1 character, not an empty text: take len of "
                                     f"each text as it is, no {how} first.")
            if not a.strip():
                raise ExerciseFailed(f"a concise answer of {len(a)} space(s), {a!r}, is not empty: its characters count "
                                     f"like any others (len({a!r}) = {len(a)}), so with a detailed answer of {len(b)} "
                                     f"characters the ratio is {len(b) / len(a):g} and the reward {w}; you "
                                     f"returned {g}. Only an EMPTY concise answer (len 0) earns 0: test `not "
                                     "concise`, not `not concise.strip()`.")
            if not b and got == 0:
                raise ExerciseFailed(f"an empty DETAILED answer with a concise one of {len(a)} characters earns "
                                     f"exp(-2) = {w}, you returned 0: the ratio is 0 / {len(a)} = 0, 2 below "
                                     "[2, 3], so the reward is exp(-2). Only an empty CONCISE answer earns 0 (its "
                                     "ratio is infinite).")
            if not (a + b).isascii() and abs(got - _bytes_reward(a, b)) <= 1e-6:
                raise ExerciseFailed(f"for {a!r} and {b!r} you counted bytes, not characters: {len(a)} and {len(b)} "
                                     f"characters (ratio {len(b) / len(a):.3f}, reward {w}), but "
                                     f"{len(a.encode())} and {len(b.encode())} UTF-8 bytes (len(text.encode())), "
                                     f"which gave your {g}. An accented letter such as 'é' is one character and "
                                     "two bytes: characters are len(text), on the str itself.")
            ratio = len(b) / len(a)
            pair = f"a concise answer of {len(a)} characters and a detailed one of {len(b)} (ratio {ratio:g})"
            if got != int(got) and (k := rounded_to(got, want, range(2, 8), close=_rounded_close)) is not None:
                raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} earn "
                                     f"{want!r}; you returned {got!r}, the reward rounded to "
                                     f"{_reward_rounded_places(fn) or k} decimal(s). Do not round: return the reward "
                                     "as computed, unrounded, as the text says and as the library's reward does.")
            if abs(got - 100 * want) <= 1e-4 and (k := _scale_of(fn)) is not None and abs(k - 100) <= 1e-6:
                raise ExerciseFailed(f"{pair} "
                                     f"earn {w}, you returned {g}: you multiplied the reward "
                                     "by 100, on every pair. The authors' quick-demo code scales this same shape x100, "
                                     "but the reward of the text, the library's length_ratio_reward that the trainer "
                                     "logs and the notebook compares yours with, is unscaled: 1 inside [2, 3], "
                                     "exp(-δ) outside, never above 1. Drop the factor 100.")
            if (k := _scale_of(fn)) is not None and abs(got - k * want) <= 1e-6 * max(1.0, abs(k)):
                raise ExerciseFailed(f"{pair} "
                                     f"earn {w}, you returned {g}: {k:.6g} times the reward, "
                                     "on every pair. The reward is unscaled: 1 inside [2, 3], exp(-δ) outside, "
                                     "never above 1. Drop the factor.")
            if (found := _misreading(fn, a, b, got)) is not None:
                raise ExerciseFailed(f"{pair} "
                                     f"earn {w}, you returned {g}: "
                                     f"{_misreading_hint(*found, a, b)}.")
            if _through_one(fn):
                raise ExerciseFailed(f"{pair} "
                                     f"earn exp(-{_nearer(ratio):g}) = {w}, you returned {g}: off by less "
                                     "than 1e-15, but this reward is tiny, and your function computes it through 1 "
                                     "(1 + math.expm1(-δ), 1 - (1 - math.exp(-δ)), ...): a float next to 1 keeps "
                                     "only about 16 decimals, so the digits of a reward this small are lost. Return "
                                     "math.exp(-δ) itself.")
            if (C := _capped_at(fn)) is not None:
                floor = math.exp(-(C - 3))
                if math.isclose(floor, float(f"{floor:.1g}"), rel_tol=1e-9):   # a round floor: max(reward, 1e-8)
                    how = (f"you floored the reward at {floor:.3g}, max(reward, {floor:.3g}) (the same as capping the "
                           f"ratio at {C:.4g}, or δ at {C - 3:.4g})")
                else:
                    how = (f"you capped the ratio at {C:.4g} (min(ratio, {C:.4g}), or δ at {C - 3:.4g}, or a floor "
                           f"on the reward, max(reward, {floor:.3g}))")
                raise ExerciseFailed(f"{pair} "
                                     f"earn exp(-{_nearer(ratio):g}) = {w}, you returned {g} = "
                                     f"exp(-{_nearer(min(ratio, C)):.4g}): {how}. The reward has no floor: δ is the "
                                     "whole distance from the ratio to [2, 3], however far, and exp(-δ) keeps "
                                     "shrinking as the detailed answer grows. No min(...) or cap on the ratio or on δ, "
                                     "no max(...) on the reward.")
            if (t := _zeroed_below(fn)) is not None:
                raise ExerciseFailed(f"{pair} "
                                     f"earn exp(-{_nearer(ratio):g}) = {w}, you returned 0: you replaced a "
                                     f"small reward by 0 (over the pairs of the check, every reward up to {t:.3g} became "
                                     "0: an `if reward < ...: return 0.0`, a threshold). exp(-δ) is never 0: it shrinks toward 0 as the ratio moves "
                                     "away from [2, 3], and stays above it; return it as computed, however small. "
                                     "Only an EMPTY concise answer earns 0.")
            if (base := _base_of(fn)) is not None:
                raise ExerciseFailed(f"{pair} "
                                     f"earn exp(-δ) = {w}, you returned {g} = {base:.6g} ** -δ: the base "
                                     f"is e = {math.e!r}, not {base:.6g}. Use math.exp(-δ) (or math.e ** -δ), not a "
                                     "typed-in approximation of e.")
            if _half_precision(fn):
                raise ExerciseFailed(f"{pair} "
                                     f"earn {w}, you returned {g}: the reward stored in half precision "
                                     "(float16: np.float16, torch.half), which keeps about 3 significant digits. "
                                     "Return it as a Python float, float(...) of a float64 (float32 is close enough).")
            if got > 1 + 1e-9:
                edge = ""
                if ratio in (2, 3) and abs(got - math.exp(abs(ratio - (5 - ratio)))) <= 1e-6:
                    other = 5 - ratio
                    edge = (f" At the edge, ratio = {ratio:g}, your function took the branch of the other side, δ = "
                            + (f"ratio - 3 = {ratio - 3:g}" if ratio == 2 else f"2 - ratio = {2 - ratio:g}")
                            + f", measured to {other:g}, the FARTHER end: a strict test, 2 < ratio < 3, followed by "
                            "an `else` that assumes the other side. The band includes its edges, 2 <= ratio <= 3 "
                            "(reward 1); below it δ = 2 - ratio, above it δ = ratio - 3, or max(2 - ratio, 0, ratio - 3) "
                            "everywhere.")
                raise ExerciseFailed(f"{pair} "
                                     f"earn {w}, you returned {g}: a reward above 1 is "
                                     f"impossible: exp(-δ) <= 1, since δ, a distance, is >= 0; your {g} is "
                                     f"exp({math.log(got):.4g}), a δ of {-math.log(got):.4g}, below 0.{edge}")
            # (a concise answer that holds tabs or newlines: the sentence below names them, the likelier slip)
            if got == 1.0 and not 2 <= ratio <= 3 and not ("\t" in a or "\n" in a) and _not_a_band(fn):
                raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} have the "
                                     f"ratio {len(b)}/{len(a)} = {ratio:.4f}, outside [2, 3], and earn exp(-δ) = "
                                     f"{w}; you returned 1.0. Your bounds are not the slip: over all the pairs "
                                     "of the check, no band of len(detailed) / len(concise) (with a margin or not) "
                                     "gives 1 exactly where your function does and exp(-distance) elsewhere, so your "
                                     "ratio is computed differently. Compute it as l = len(detailed) / len(concise), "
                                     "characters as written (spaces, tabs and newlines each count as one; nothing "
                                     "left out, replaced or added, no other formula), then 1 for 2 <= l <= 3 and "
                                     "exp(-δ) outside.")
            if got == 1.0 and not 2 <= ratio <= 3:
                ws = [f"{a.count(c)} {n}{'' if a.count(c) == 1 else 's'}" for c, n in (("\t", "tab"), ("\n", "newline"))
                      if c in a]
                raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} have the "
                                     f"ratio {ratio:.4f}, outside [2, 3], and earn exp(-δ) = {w}; you returned "
                                     "1.0. The band is exactly [2, 3]: test 2 <= ratio <= 3, with no margin."
                                     + (f" If your test is that already, your ratio is not {len(b)}/{len(a)}: this "
                                        f"concise answer holds {' and '.join(ws)}, and each is one character "
                                        f"({_WHITESPACE})." if ws else ""))
            words = f"; {len(a.split())} and {len(b.split())} words" if " " in a + b else ""
            squeezed = (lambda t: t.strip(), lambda t: "".join(t.split()), lambda t: " ".join(t.split()),
                        lambda t: t.replace("\n", "").replace("\t", ""), lambda t: t.replace("\n", " ").replace("\t", " "))
            spaces_dropped = any(x(a) and abs(got - length_ratio_reward(x(a), x(b))) <= 1e-6 for x in squeezed)
            raise ExerciseFailed(f"a concise answer of {len(a)} characters and a detailed one of {len(b)} (ratio "
                                 f"{ratio:g}{words}) earn {w}, you returned {g}: the ratio is "
                                 "chars(detailed) / chars(concise), every character counted (spaces too, len of the "
                                 "text), and outside [2, 3] the reward is exp(-δ), δ the distance from the ratio to the "
                                 "NEARER end of [2, 3] (2 - ratio below, ratio - 3 above)"
                                 + (". A leading or trailing space counts too: the model's answers start with one"
                                    if a != a.strip(" ") or b != b.strip(" ") else "")
                                 + (f"; {_WHITESPACE} (no .strip(), .split(), .replace(...) or re.sub(...) first)"
                                    if spaces_dropped else ""))
