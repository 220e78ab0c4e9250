"""Checks of notebook 06's exercises (the variants): TRL's std-scaled advantage and cross mode's credit of each
agent's sample (CoMLRL's sums). The KL leash is notebook 08's."""
from __future__ import annotations

import math

import torch

from ..algorithm import credit_samples, group_advantages, joint_actions
from . import ExerciseFailed, call_answer, exercise, not_a_wrapper, rounded_to


def _fmt(t: torch.Tensor) -> list:
    return [round(x, 4) for x in t.flatten().tolist()]


def _call(fn, what: str, args, hint=lambda exc: ""):
    """The learner's function called on `args`; its exception (but NotImplementedError, the unsolved stub) turned into a
    sentence that names the call."""
    return call_answer(fn, *args, said=lambda exc: f"{what} raised {type(exc).__name__}: {str(exc).rstrip('.')}." + hint(exc))


# The tolerance of the std-scaled check: float32's rounding of the reference passes (about 1e-7), an answer rounded
# to 4 decimals (up to 5e-5 off) does not.
_TOL = dict(atol=1e-5, rtol=1e-5)


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    return torch.allclose(got.float(), want.float(), **_TOL)


def _eps_added(R: torch.Tensor, got: torch.Tensor):
    """The eps the answer added to the sample std, if it reads as (R - mean) / (R.std() + eps) with one eps >= 0 for
    every entry of the group (solved entry by entry, in float64; 0.0 when it is too small to tell from float32's
    rounding); None when the answer is not of that form."""
    R64, got64 = R.double(), got.detach().double()
    centred, std = R64 - R64.mean(), R64.std().item()
    use = (centred.abs() > 1e-6) & (got64.abs() > 1e-12) & torch.isfinite(got64)
    if not bool(use.any()):
        return None
    est = centred[use] / got64[use] - std
    tol = 1e-6 * std + 1e-9                   # float32's rounding of an answer near 1, times the divisor
    if (est.max() - est.min()).item() > 2 * tol or est.mean().item() < -tol:
        return None
    return est.mean().item() if est.mean().item() > tol else 0.0


# The check's groups: all equal (std 0), the notebook's, G = 2 and 6 (a G fixed in the code shows), rewards that barely
# differ (where eps matters), one float64 group (the result keeps R's dtype), a group of 6 with one outlier, whose
# advantage (G - 1) / sqrt(G) = 2.04 is the largest a group of 6 can give (an unasked clip at +-2 shows), and last a
# group of 16 with one outlier, advantage 15 / 4 = 3.75 (a clip at +-3 shows too; the trainer's advantage_clip, 10, is
# wider than any group of 16 can reach, so a .clamp(-10, 10) still passes). After them two near-ties, rewards that
# barely differ but differ (a cut-off `if R.std() <= c: zeros` for a c up to 1e-7 shows): std 2**-12 = 2.4e-4 in
# float32 and std 2**-23 = 1.2e-7 in float64. Their rewards are 0.5 plus a power of 2, so that the mean, the centred
# rewards and the std come out exact in float32 too: an answer that computes a float64 R in float32 and casts back
# still passes.
_STD_CASES = [([0.5, 0.5, 0.5, 0.5], torch.float32), ([0.2, 1.0, 0.6, 0.2], torch.float32),
              ([1.0, 2.0], torch.float32), ([3.0, 0.0, 0.0, 0.0, 0.0, 1.5], torch.float32),
              ([0.7, 0.7, 0.7, 0.71], torch.float32), ([0.1, 0.9, 0.4], torch.float64),
              ([0.0, 0.0, 1.0, 0.0, 0.0, 0.0], torch.float32), ([0.0] * 15 + [1.0], torch.float32),
              ([0.5, 0.5, 0.5, 0.5 + 2 ** -11], torch.float32), ([0.5, 0.5, 0.5, 0.5 + 2 ** -22], torch.float64)]


def _eps_outside(R: torch.Tensor, got: torch.Tensor) -> bool:
    """Whether the answer reads as (R - R.mean()) / R.std() + 1e-4: eps added after the division, not to the std (on a
    group with distinct rewards: on one that agrees it is nan either way)."""
    return bool(R.std() > 0) and _close(got, (R - R.mean()) / R.std() + 1e-4)


def _mean_alone_divided(R: torch.Tensor, got: torch.Tensor) -> bool:
    """Whether the answer reads as R - R.mean() / (R.std() + 1e-4) (or without eps, where the std is not 0): the
    division binds tighter than the subtraction, so only the mean was divided."""
    return _close(got, R - R.mean() / (R.std() + 1e-4)) or (bool(R.std() > 0) and _close(got, R - R.mean() / R.std()))


def _not_finite_said(fn, r, got: torch.Tensor) -> str:
    """The sentence for an answer that is not finite on a group that agrees (std 0): which slip, read off the
    answer on the notebook's group, whose rewards differ (eps outside the brackets, only the mean divided), else that
    TRL adds eps to the std."""
    other = torch.tensor([0.2, 1.0, 0.6, 0.2])
    try:
        again = fn(other.clone())
        ok = isinstance(again, torch.Tensor) and again.shape == other.shape
    except Exception:  # noqa: BLE001 - an answer that crashes on the other group tells nothing here
        ok = False
    if ok and _eps_outside(other, again):
        return (f"for the group {r} (all rewards equal: std 0) you returned {got.tolist()}: you added 1e-4 AFTER "
                "dividing, (R - R.mean()) / R.std() + 1e-4, so the division by a std of 0 comes first. eps belongs to "
                "the divisor: bracket the divisor, / (R.std() + 1e-4), i.e. (R - R.mean()) / (R.std() + 1e-4).")
    if ok and _mean_alone_divided(other, again):
        return (f"for the group {r} (all rewards equal: std 0) you returned {got.tolist()}: only the mean was "
                "divided. R - R.mean() / R.std() reads as R - (R.mean() / R.std()), since / binds tighter than -; "
                "bracket the centring, and add eps = 1e-4 to the std: (R - R.mean()) / (R.std() + 1e-4).")
    return (f"for the group {r} (all rewards equal: std 0) you returned {got.tolist()}: TRL adds "
            "eps = 1e-4 to the std, so such a group gets advantages 0.")


def _clipped(r, R: torch.Tensor, got: torch.Tensor, want: torch.Tensor):
    """The sentence for an answer that is the right advantages clipped (a .clamp(-c, c), or on one side only)."""
    lo, hi = got.min().item(), got.max().item()
    bounds = ([f"{lo:.4g}"] if want.min().item() < lo - 1e-4 else []) + (
        [f"{hi:.4g}"] if want.max().item() > hi + 1e-4 else [])
    kept = (want >= lo - 1e-4) & (want <= hi + 1e-4)       # the entries a clip leaves alone: one of them, not 0,
    if not bounds or not bool((want[kept].abs() > 1e-3).any()) or not _close(got, want.clamp(lo, hi)):
        return None                                        # shows the scale is right (not a smaller divisor)
    G, top = len(R), want.abs().max().item()
    outlier = (f" (one outlier in a group of G gets (G - 1) / sqrt(G), {(G - 1) / math.sqrt(G):.4g} for G = {G}, "
               "more for a larger G)" if abs(top - (G - 1) / math.sqrt(G)) < 1e-3 else "")
    return (f"for {r} you clipped the advantages at {' and '.join(bounds)}: the right ones run from "
            f"{want.min().item():.4g} to {want.max().item():.4g} here{outlier}. TRL's std scaling clips nothing: "
            "(R - R.mean()) / (R.std() + 1e-4), without .clamp().")


def _centres(R: torch.Tensor) -> list:
    """The baselines other than the group mean a learner may centre on, each with the words that name it."""
    G, total = len(R), R.sum()
    return [(R.median(), "the median (torch's, the lower of the two middle rewards)"),
            (R.quantile(0.5), "the median"),
            (R.max(), "the group's best reward (MAReMax's baseline: every advantage <= 0)"),
            (R.min(), "the group's WORST reward, R.min() (every advantage >= 0)"),
            (total, "the SUM of the rewards, R.sum(), not their mean (the sum divided by G)"),
            ((total - R) / (G - 1), "the mean of the OTHER G - 1 rewards (MARLOO's leave-one-out baseline, "
                                    "which multiplies every advantage by G/(G-1))")]


# A group on which the baselines of _centres all differ (the lower median 0.4, the median 0.55, the max 0.9, the min
# 0.1, the sum 2.1, the leave-one-out means), to tell apart those that coincide on a check's group: on the notebook's
# [0.2, 1.0, 0.6, 0.2] torch's lower median is the min.
_CENTRE_APART = [0.1, 0.9, 0.4, 0.7]


def _wrong_centre(fn, r, R: torch.Tensor, got: torch.Tensor):
    """The sentence for an answer divided by the right std but centred on another baseline than the group mean. Where
    two baselines give this group the same numbers, the answer is asked once more on _CENTRE_APART, and only the one
    that reads there too is named (both, if the answer fails there)."""
    scale = R.std() + 1e-4
    said = [w for b, w in _centres(R)
            if not torch.allclose(torch.as_tensor(b), R.mean()) and _close(got, (R - b) / scale)]
    if len(said) > 1:
        other = torch.tensor(_CENTRE_APART, dtype=R.dtype)
        try:
            again = fn(other.clone())
            ok = isinstance(again, torch.Tensor) and again.shape == other.shape
        except Exception:  # noqa: BLE001 - an answer that crashes on the other group tells nothing here
            ok = False
        if ok:
            there = [w for b, w in _centres(other) if _close(again, (other - b) / (other.std() + 1e-4))]
            said = [w for w in said if w in there] or said
    if not said:
        return None
    on = said[0] if len(said) == 1 else " or on ".join(said[:2]) + " (the same numbers in this group)"
    return (f"for {r} you centred the rewards on {on}; TRL's std scaling, like MAGRPO, subtracts the mean "
            f"of all G rewards, {R.mean().item():.4g} here: (R - R.mean()) / (R.std() + 1e-4).")


def _mean_by_G_minus_1(fn, r, R: torch.Tensor, got: torch.Tensor):
    """The sentence for an answer whose mean divides the sum by G - 1 (len(R) - 1), the sample std's divisor, where
    the mean's is G; confirmed on a group of 5 so that a G - 1 written into the code (3 for the notebook's groups of
    4) is left to _fixed_G."""
    G = len(R)
    if G < 2 or not _close(got, (R - R.sum() / (G - 1)) / (R.std() + 1e-4)):
        return None
    other = torch.tensor([0.2, 1.0, 0.6, 0.2, 0.9], dtype=R.dtype)
    try:
        again = fn(other.clone())
        same = isinstance(again, torch.Tensor) and again.shape == other.shape and _close(
            again, (other - other.sum() / 4) / (other.std() + 1e-4))
    except Exception:  # noqa: BLE001 - an answer that crashes on a group of 5 is not this reading
        same = False
    if not same:
        return None
    return (f"for {r} your mean divides the sum by G - 1 = {G - 1}: that is the SAMPLE std's divisor (inside R.std()); "
            f"the mean divides by G = {G}, R.sum() / len(R) or R.mean(): (R - R.mean()) / (R.std() + 1e-4).")


def _squares_by_G_minus_2(fn, r, R: torch.Tensor, got: torch.Tensor):
    """The sentence for an answer whose variance divides the squares by G - 2 (len(R) - 2) where the sample variance's
    divisor is G - 1; confirmed on a group of 5 (squares by 3) so that a number written into the code (2 for the
    notebook's groups of 4) is left to _fixed_G."""
    G = len(R)
    if G < 3:
        return None

    def by_G_minus_2(X):
        c = X - X.mean()
        return c / ((c ** 2).sum() / (len(X) - 2)).sqrt().add(1e-4)
    if not _close(got, by_G_minus_2(R)):
        return None
    other = torch.tensor([0.2, 1.0, 0.6, 0.2, 0.9], dtype=R.dtype)
    try:
        again = fn(other.clone())
        same = isinstance(again, torch.Tensor) and again.shape == other.shape and _close(again, by_G_minus_2(other))
    except Exception:  # noqa: BLE001 - an answer that crashes on a group of 5 is not this reading
        same = False
    if not same:
        return None
    return (f"for {r} your variance divides the squares by len(R) - 2 = G - 2 = {G - 2}: one too few. You take G from "
            f"the group, right; the SAMPLE variance divides by G - 1 = {G - 1}, len(R) - 1 (one less than G, not two): "
            "(R - R.mean()) / (R.std() + 1e-4).")


def _swapped_std_mean(r, R: torch.Tensor, got: torch.Tensor):
    """The sentence for an answer that unpacks torch.std_mean (or var_mean), which returns (std, mean), as (mean, std):
    the rewards centred on the std and divided by the mean."""
    for unbiased in (True, False):
        s, m = torch.std_mean(R, unbiased=unbiased)
        v = s ** 2
        if _close(got, (R - s) / (m + 1e-4)):
            fn = "std_mean"
        elif _close(got, (R - v) / (m.sqrt() + 1e-4)) or _close(got, (R - v) / (m + 1e-4).sqrt()):
            fn = "var_mean"
        else:
            continue
        first = "std" if fn == "std_mean" else "var"
        return (f"for {r} you centred the rewards on the {'std' if fn == 'std_mean' else 'variance'} and divided by "
                f"the mean: torch.{fn} returns ({first}, mean), in that order, so `mean, {first} = torch.{fn}(R)` "
                f"swaps them. Unpack `{first}, mean = torch.{fn}(R)`, or use R.mean() and R.std(): "
                "(R - R.mean()) / (R.std() + 1e-4).")
    return None


def _prefix_forms(X: torch.Tensor, k: int) -> list:
    """The advantages with the std (and maybe the mean too) of the first k rewards only, X[:k]: (words, tensor)."""
    return [("std", (X - X.mean()) / (X[:k].std() + 1e-4)),
            ("mean and std", (X - X[:k].mean()) / (X[:k].std() + 1e-4))]


def _first_k_only(fn, r, R: torch.Tensor, got: torch.Tensor):
    """The sentence for an answer whose std (or mean and std) is that of the first k < G rewards only, R[:k] (a slice
    written for the notebook's groups of 4); confirmed on a second group of the same size, so that a G written into a
    divisor, which can give the same numbers on one group, is left to _fixed_G."""
    G = len(R)
    hits = [(k, what) for k in range(2, G) for what, form in _prefix_forms(R, k) if _close(got, form)]
    if not hits:
        return None
    other = torch.tensor([(0.61 * i * i + 0.2) % 1.0 for i in range(G)], dtype=R.dtype)   # distinct rewards
    try:
        again = fn(other.clone())
        ok = isinstance(again, torch.Tensor) and again.shape == other.shape
    except Exception:  # noqa: BLE001 - an answer that crashes on the second group is not this reading
        ok = False
    for k, what in hits:
        if ok and _close(again, dict(_prefix_forms(other, k))[what]):
            return (f"for {r}, a group of G = {G}, your {what} {'is' if what == 'std' else 'are'} taken over the first "
                    f"{k} rewards only, R[:{k}]: a slice written for a group of {k}, which leaves the other {G - k} "
                    f"reward{'s' if G - k > 1 else ''} out. Take them over the whole group, R.mean() and R.std(): "
                    "(R - R.mean()) / (R.std() + 1e-4); the trainer's groups hold num_generations rewards, and this "
                    "check tries groups of 2, 3, 4, 6 and 16.")
    return None


def _fixed_G(r, R: torch.Tensor, got: torch.Tensor):
    """The sentence for an answer written for one group size: the sum divided by a fixed G (in the centring, or in the
    mean inside the squares), or the squares by a fixed G - 1, where this group has another G."""
    G = len(R)
    for n in range(2, 9):
        if n == G:
            continue
        m = R.sum() / n
        forms = [(R - m) / (R.std() + 1e-4)]
        for top in (R.mean(), m):                       # the mean the rewards are centred on
            for inner in (R.mean(), m):                 # the mean inside the squares
                for div in (G - 1, n - 1):              # the squares' divisor
                    if top is not m and inner is not m and div != n - 1:
                        continue                        # nothing fixed: the right formula
                    forms.append((R - top) / (((R - inner) ** 2).sum() / div).sqrt().add(1e-4))
        if any(_close(got, f) for f in forms):
            return (f"for {r}, a group of G = {G}, your answer is the one for a group of {n}: a G written into the code "
                    f"(the sum divided by {n}, or the squares by G - 1 = {n - 1}). Take G from the group, len(R), or "
                    "use R.mean() and R.std(): the trainer's groups hold num_generations rewards, and this check tries "
                    "groups of 2, 3, 4, 6 and 16.")
    return None


@exercise("06.std_scaled_advantages")
def check_std_scaled(fn):
    not_a_wrapper(fn, (torch.tensor([0.2, 1.0, 0.6, 0.2]),), "std_scaled_advantages", group_advantages,
                  how="from the formula in the text (R.mean(), R.std())")  # first: the wrapper fails R's dtype below too
    for r, dtype in _STD_CASES:
        R = torch.tensor(r, dtype=dtype)
        want = group_advantages(R, "mean", "group")
        given = R.clone()
        got = _call(fn, f"std_scaled_advantages(torch.tensor({r}))", (given,))
        if not torch.equal(given, R):
            raise ExerciseFailed(f"for the group {r} your function changed the rewards tensor it was given (in place, "
                                 "e.g. R -= R.mean() or R.sub_(...)): the caller still needs the rewards (the trainer "
                                 "logs them). Compute on a new tensor: (R - R.mean()) / (R.std() + 1e-4).")
        if not isinstance(got, torch.Tensor) or got.shape != R.shape:
            raise ExerciseFailed(f"return a tensor of shape {tuple(R.shape)}, one advantage per joint action.")
        if got.dtype != R.dtype:
            raise ExerciseFailed(f"for the group {r} as a {R.dtype} tensor your advantages are {got.dtype}: return them "
                                 "in R's dtype, as torch operations on R do (no .double() or .float(), and no "
                                 "torch.tensor(...) of Python numbers, which is float32 whatever R is). Advantages meet "
                                 "the caller's other tensors of R's dtype, and torch.allclose or @ refuse two dtypes "
                                 "(\"Float did not match Double\").")
        if _close(got, want):
            continue
        said = _swapped_std_mean(r, R, got)
        if said:
            raise ExerciseFailed(said)
        if not torch.isfinite(got).all():
            raise ExerciseFailed(_not_finite_said(fn, r, got))
        if not bool(got.any()) and 0 < R.std().item() < 0.01:
            raise ExerciseFailed(f"for {r} (std {R.std().item():.3g}: the rewards barely differ, but they differ) you "
                                 "returned all zeros, as for a tie: a cut-off such as `if R.std() <= 1e-3: return "
                                 "torch.zeros_like(R)`? A group whose rewards barely differ still gets advantages, "
                                 f"{_fmt(want)} here: keeping them finite is the eps's job, which holds the divisor at "
                                 "1e-4 or more. Only an exact tie (std 0) gives zeros, and "
                                 "(R - R.mean()) / (R.std() + 1e-4) gives those by itself: drop the cut-off.")
        if _eps_outside(R, got):
            raise ExerciseFailed(f"for {r} you added 1e-4 AFTER dividing, (R - R.mean()) / R.std() + 1e-4: every "
                                 "advantage is shifted by 1e-4, and a group that agrees (std 0) gives nan. eps belongs "
                                 "to the divisor: bracket the divisor, / (R.std() + 1e-4), i.e. "
                                 "(R - R.mean()) / (R.std() + 1e-4).")
        if _mean_alone_divided(R, got):
            raise ExerciseFailed(f"for {r} only the mean was divided: R - R.mean() / (R.std() + 1e-4) reads as "
                                 "R - (R.mean() / (R.std() + 1e-4)), since / binds tighter than -. Bracket the "
                                 "centring: (R - R.mean()) / (R.std() + 1e-4).")
        digits = rounded_to(got.float().tolist(), want.tolist(), range(6),
                            close=lambda g, w: math.isfinite(g) and abs(g - w) < 2e-6)
        if digits is not None:
            raise ExerciseFailed(f"for {r} the advantages are {[round(x, 7) for x in want.tolist()]}, you returned "
                                 f"{[round(x, 7) for x in got.float().tolist()]}: you rounded "
                                 f"them to {digits} decimal(s). Return them unrounded; the check compares to 1e-5.")
        for low in (torch.float16, torch.bfloat16):
            if _close(got, want.to(low).to(R.dtype)):
                off = (got.double() - want.double()).abs().max().item()
                raise ExerciseFailed(f"for {r} the advantages are {[round(x, 7) for x in want.tolist()]}, you returned "
                                     f"{[round(x, 7) for x in got.float().tolist()]}: the right ones rounded to "
                                     f"{str(low).split('.')[1]} on the way "
                                     f"({'.half()' if low == torch.float16 else '.bfloat16()'}, "
                                     f".to(torch.{str(low).split('.')[1]}), about {3 if low == torch.float16 else 2} significant digits), up to {off:.2g} "
                                     "off. Compute and return them in R's dtype, without a round trip through a "
                                     "16-bit float; the check compares to 1e-5.")
        said = _clipped(r, R, got, want)
        if said:
            raise ExerciseFailed(said)
        zscore = (R - R.mean()) / R.std(unbiased=False).clamp_min(1e-6)
        if _close(got, zscore):
            raise ExerciseFailed(f"for {r} that is CoMLRL's z-score, (R - mean) / R.std(unbiased=False).clamp_min(1e-6): "
                                 "the population std (1/G), floored at 1e-6. TRL's std scaling divides by the SAMPLE std "
                                 "(1/(G-1), torch's default R.std()) PLUS 1e-4: (R - R.mean()) / (R.std() + 1e-4).")
        pop = (R - R.mean()) / (R.std(unbiased=False) + 1e-4)
        if _close(got, pop):
            raise ExerciseFailed(f"for {r} you divided by the population std (1/G); TRL divides by the SAMPLE std "
                                 "(1/(G-1), torch's default R.std()).")
        if _close(got, (R - R.mean()) / (R.var() + 1e-4).sqrt()):
            raise ExerciseFailed(f"for {r} you added eps to the variance, under the square root; TRL adds it to the std: "
                                 "(R - mean) / (R.std() + 1e-4). It matters for a group whose rewards barely differ.")
        if _close(got, (R - R.mean()) / (R.var(unbiased=False) + 1e-4).sqrt()):
            raise ExerciseFailed(f"for {r} you divided by the square root of the POPULATION variance plus eps, "
                                 "(R.var(unbiased=False) + 1e-4).sqrt() (the squares' mean, 1/G): two slips. TRL divides "
                                 "by the SAMPLE std (1/(G-1), torch's default R.std()) and adds eps = 1e-4 to the std, "
                                 "outside the square root: (R - R.mean()) / (R.std() + 1e-4).")
        G = len(R)
        shrunk = R.std() * (G - 1) / G
        # (only with eps added after the factor: (R.std() + 1e-4) * (G - 1) / G is MARLOO's leave-one-out centring
        # divided by the std plus eps, number for number, which _wrong_centre names)
        if _close(got, (R - R.mean()) / (shrunk + 1e-4)):
            raise ExerciseFailed(f"for {r} your divisor is the sample std times (G - 1)/G = {G - 1}/{G}, "
                                 f"{shrunk.item():.4g} here: (G - 1)/G turns the sample VARIANCE into the population "
                                 "one, not the std (the std's factor would be its square root), and TRL wants neither. "
                                 f"It divides by the SAMPLE std itself, torch's default R.std() = {R.std().item():.4g}, "
                                 "plus 1e-4: (R - R.mean()) / (R.std() + 1e-4).")
        mad = (R - R.mean()).abs().mean()
        if any(_close(got, (R - R.mean()) / (mad + e)) for e in (0.0, 1e-4)):
            raise ExerciseFailed(f"for {r} you divided by the mean absolute deviation, (R - R.mean()).abs().mean() = "
                                 f"{mad.item():.4g}: another spread than the std. TRL divides by the sample standard "
                                 "deviation, the square root of the squared deviations summed and divided by G - 1, "
                                 f"R.std() = {R.std().item():.4g} here, plus 1e-4: (R - R.mean()) / (R.std() + 1e-4).")
        if _close(got, (R - R.mean()) / (R.var() + 1e-4)):
            raise ExerciseFailed(f"for {r} you divided by the variance, R.var() = {R.var().item():.4g}; TRL divides by "
                                 f"the standard deviation, its square root, R.std() = {R.std().item():.4g}: "
                                 "(R - R.mean()) / (R.std() + 1e-4).")
        if (want < 0).any() and _close(got, want.abs()):
            raise ExerciseFailed(f"for {r} you took the absolute value: a reward below the group mean must keep its "
                                 "NEGATIVE advantage (the update makes that joint action less likely); no .abs().")
        if _close(got, (R - R.mean() + 1e-4) / (R.std() + 1e-4)):
            raise ExerciseFailed(f"for {r} you added 1e-4 to the numerator too, (R - R.mean() + 1e-4); eps belongs to "
                                 "the divisor alone, where it keeps a group that agrees (std 0) finite: "
                                 "(R - R.mean()) / (R.std() + 1e-4).")
        said = (_wrong_centre(fn, r, R, got) or _mean_by_G_minus_1(fn, r, R, got)
                or _squares_by_G_minus_2(fn, r, R, got) or _first_k_only(fn, r, R, got) or _fixed_G(r, R, got))
        if said:
            raise ExerciseFailed(said)
        spread = (R.max() - R.min()).item()
        if any(_close(got, (R - R.mean()) / (spread + e)) for e in (0.0, 1e-4)):
            raise ExerciseFailed(f"for {r} you divided by the range, max - min = {spread:.4g}; TRL divides by the sample "
                                 f"standard deviation, R.std() = {R.std().item():.4g} here, plus 1e-4: "
                                 "(R - R.mean()) / (R.std() + 1e-4).")
        if _close(got, R - R.mean()):
            raise ExerciseFailed(f"for {r} you did not divide by the std: you returned the centred rewards, R - R.mean(). "
                                 "TRL's std scaling divides them by the sample std plus 1e-4, "
                                 f"{R.std().item() + 1e-4:.4g} here: (R - R.mean()) / (R.std() + 1e-4).")
        eps = _eps_added(R, got)
        if eps is not None and eps > 0.01:        # no eps anyone picks: the divisor is another spread than the std
            raise ExerciseFailed(f"for {r} you divided the centred rewards by {R.std().item() + eps:.4g}, not by the "
                                 f"sample std plus 1e-4, {R.std().item() + 1e-4:.4g}: (R - R.mean()) / (R.std() + 1e-4).")
        if eps is not None:
            if eps == 0.0:
                raise ExerciseFailed(f"for {r} your divisor is the std with nothing added to it, or with an eps too small "
                                     "to show (1e-8, say); max(std, eps), or a guard for a zero std only, also adds "
                                     "nothing to a group whose std is not 0. TRL ADDS eps = 1e-4 to the std of every "
                                     "group: (R - mean) / (R.std() + 1e-4). It matters for a group whose rewards barely "
                                     "differ.")
            raise ExerciseFailed(f"for {r} you added eps = {eps:.2g} to the std; TRL's (and this check's) is 1e-4: "
                                 "(R - mean) / (R.std() + 1e-4). It matters for a group whose rewards barely differ.")
        if _close(got, R / (R.std() + 1e-4)):
            raise ExerciseFailed(f"for {r} you scaled the rewards without centring them: subtract the group mean "
                                 "first, (R - R.mean()) / (R.std() + 1e-4).")
        if _close(got, -want):
            raise ExerciseFailed(f"for {r} the sign is flipped: R_g minus the mean, so a reward above the mean gets a "
                                 "positive advantage.")
        raise ExerciseFailed(f"for the group {r} the std-scaled advantages are {_fmt(want)}, you returned {_fmt(got)}.")


def _comlrl(R, G, mode):
    """CoMLRL's cross credit as section 3 states it: each sample's SUM of returns, then the advantage among the G sums."""
    grid = R.view(G, G)
    S = torch.stack([grid.sum(1), grid.sum(0)])            # agent 1: its row, agent 2: its column
    return S - (S.mean(1, keepdim=True) if mode == "mean" else S.max(1, keepdim=True).values)


def _loo_max(S: torch.Tensor) -> torch.Tensor:
    """For each of an agent's G sums, the largest of its OTHER G - 1 sums (a leave-one-out max), shape (2, G)."""
    top = S.topk(2, dim=1).values                       # per row: the largest sum and the second largest
    return torch.where(S == top[:, :1], top[:, 1:], top[:, :1])


def _baseline(X: torch.Tensor, mode: str) -> torch.Tensor:
    """Each agent's baseline, taken among its own G sums (dim 1): their mean or their largest, shape (2, 1)."""
    return X.mean(1, keepdim=True) if mode == "mean" else X.max(1, keepdim=True).values


def _grid3(dtype) -> torch.Tensor:
    """The 9 rewards of a G = 3 grid on which the G = 2 look-alikes part: no two of an agent's sums tie, and the
    readings _reads_as confirms (and the right credits) differ pairwise in both modes. A grid whose row and column sums
    without the diagonal add up to the same number at every k would not do: there the sums without the diagonal, minus
    their mean, equal the full sums minus the mean over the agents."""
    return torch.tensor([0.9, 0.1, 0.4, 0.3, 0.0, 0.8, 0.6, 0.7, 0.2], dtype=dtype)


def _reads_as(fn, R: torch.Tensor, G: int, mode: str, got: torch.Tensor, form) -> bool:
    """Whether the answer is form(grid, mode), grid = R.view(G, G), a reading of one slip.

    At G = 2 an agent has only two sums and the grid only two off-diagonal cells, so slips that differ at a larger G give
    the same numbers there (the baseline over the agents and the sums without their diagonal; the smallest sum and the
    second largest; the lost axis and the baseline over the agents). There the answer is asked once more, on a grid of
    G = 3, and the slip is named only when it reads as such there too (a crash at G = 3 is not that slip)."""
    if not torch.allclose(got, form(R.view(G, G), mode), atol=1e-5):
        return False
    if G != 2:
        return True
    R3 = _grid3(R.dtype)
    try:
        again = fn(R3.clone(), 3, mode)
        return isinstance(again, torch.Tensor) and tuple(again.shape) == (2, 3) and torch.allclose(
            again.to(R3.dtype), form(R3.view(3, 3), mode), atol=1e-5)
    except Exception:  # noqa: BLE001 - a crash at G = 3 is another slip (the lost axis raises there), not this one
        return False


def _sums(grid: torch.Tensor) -> torch.Tensor:
    return torch.stack([grid.sum(1), grid.sum(0)])


def _over_agents_form(grid, mode):
    """The baseline taken over the two agents (dim 0, for each sample index) instead of over the G samples (dim 1)."""
    S = _sums(grid)
    return S - (S.mean(0, keepdim=True) if mode == "mean" else S.max(0, keepdim=True).values)


def _off_diagonal_form(grid, mode):
    """Each sample's sum without its aligned pair grid[k, k] (its G - 1 cross pairs only), then the right baseline."""
    S = torch.stack([grid.sum(1) - grid.diagonal(), grid.sum(0) - grid.diagonal()])
    return S - _baseline(S, mode)


def _smallest_form(grid, mode):
    """'max' read as the smallest of the agent's G sums."""
    S = _sums(grid)
    return S - S.min(1, keepdim=True).values


def _second_form(grid, mode):
    """'max' read as the SECOND largest of the agent's G sums (S.sort(1).values[:, -2:-1], topk(2)'s second)."""
    S = _sums(grid)
    return S - S.topk(2, dim=1).values[:, 1:]


def _package_on_the_sums(fn, mode: str):
    """The sentence for an answer that sums first and hands only the baseline to the package: every call of
    `group_advantages` it makes, on the G = 3 grid _grid3, gets the sums (both agents' (2, G) sums, or one
    agent's G), and it calls no `credit_samples`. None otherwise (not_a_wrapper then says its general sentence), or when
    a profiler is already set (left alone)."""
    import sys

    if sys.getprofile() is not None:
        return None
    R = _grid3(torch.float32)
    S = _sums(R.view(3, 3))
    given, other = [], []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code is group_advantages.__code__:
            given.append(frame.f_locals.get("rewards"))
        elif event == "call" and frame.f_code is credit_samples.__code__:
            other.append(frame.f_code)
    sys.setprofile(watch)
    try:
        fn(R.clone(), 3, mode)
    except Exception:  # noqa: BLE001 - only the calls matter here
        pass
    finally:
        sys.setprofile(None)

    def is_sums(x) -> bool:
        try:
            x = torch.as_tensor(x).detach().float()
        except Exception:  # noqa: BLE001 - not a tensor of numbers: not the sums
            return False
        return any(x.shape == s.shape and torch.allclose(x, s, atol=1e-5) for s in (S, S[0], S[1]))
    if not given or other or not all(is_sums(x) for x in given):
        return None
    return ("your function sums first, then takes the baseline among each agent's G sums: that is how CoMLRL "
            "computes it, and the idea is right. But the baseline comes from the package's own `group_advantages`, called on the "
            "sums, and the exercise asks for it without `group_advantages`: it passes by construction and teaches "
            "nothing. Write the baseline by hand on S, the (2, G) sums: S - S.mean(1, keepdim=True) for 'mean', "
            "S - S.max(1, keepdim=True).values for 'max'.")


@exercise("06.comlrl_credit")
def check_comlrl_credit(fn):
    for mode in ("mean", "max"):       # both: an answer may hand only one mode to the package
        said = _package_on_the_sums(fn, mode)
        if said:
            raise ExerciseFailed(said)
        not_a_wrapper(fn, (torch.tensor([0.2, 1.0, 0.6, 0.2]), 2, mode), "comlrl_credit", group_advantages,
                      credit_samples, how="from the sums (R.view(G, G), each agent's G sums, minus their mean or max), "
                                          "for 'mean' and for 'max'")
    g = torch.Generator().manual_seed(5)
    for G in (2, 3, 4):
        for R in (torch.rand(G * G, generator=g), torch.tensor([float(k % 3 == 0) for k in range(G * G)]),
                  torch.rand(G * G, generator=g, dtype=torch.float64)):       # R's dtype is kept
            R[1] += 1.0        # an asymmetric grid, so that swapping the agents shows
            for mode in ("mean", "max"):
                want = _comlrl(R, G, mode)
                given = R.clone()
                got = _call(fn, f"comlrl_credit(R, G={G}, mode={mode!r}) with R of {G * G} rewards", (given, G, mode),
                            lambda exc, G=G: (" A size mismatch in a broadcast: the baseline of each agent's G "
                                              "sums, S.max(1).values or S.mean(1) WITHOUT keepdim=True, has shape "
                                              "(2,), which lines up with the G columns of the (2, G) sums, not with "
                                              "their 2 rows. Keep the axis: S.max(1, keepdim=True).values or "
                                              "S.mean(1, keepdim=True), a (2, 1) column (or [:, None])."
                                              if "must match the size" in str(exc) else
                                              f" R holds G * G = {G * G} rewards here (G = {G}): use the G you are "
                                              "given, R.view(G, G), not a number from the notebook (its grid has G = 3)."
                                              if isinstance(exc, IndexError) or "shape" in str(exc)
                                              or "size" in str(exc) else ""))
                if not torch.equal(given, R):
                    raise ExerciseFailed("your function changed the rewards R it was given (an in-place operation on R "
                                         "or on a view of it, R.view(G, G) -= ...): the cell below reuses R, and a caller "
                                         "still needs the rewards it passed. Compute new tensors: grid = R.view(G, G), then "
                                         "grid - ..., not grid -= ....")
                if not isinstance(got, torch.Tensor) or tuple(got.shape) != (2, G):
                    shape = (f" (got a tensor of shape {tuple(got.shape)}"
                             + (": the transpose, one row per sample; stack the two agents' credits as ROWS, "
                                "torch.stack([agent 1's, agent 2's]), not with dim=1)" if tuple(got.shape) == (G, 2)
                                else ")") if isinstance(got, torch.Tensor) else f" (got a {type(got).__name__})")
                    raise ExerciseFailed(f"return a (2, G) = (2, {G}) tensor: row i holds agent i's G credits" + shape
                                         + ".")
                if got.dtype != R.dtype:
                    raise ExerciseFailed(f"for a {R.dtype} R your credits are {got.dtype}: return them in R's dtype. "
                                         "Compute them from R itself (no .double() or .float(), and no torch.zeros(2, G) "
                                         "or torch.tensor(...) of Python numbers, which are float32 whatever R is; "
                                         "torch.zeros(2, G, dtype=R.dtype) keeps it); the cell below compares your "
                                         "credits with the package's by torch.allclose, which refuses two dtypes.")
                if torch.allclose(got, want, atol=1e-5):
                    continue
                grid = R.view(G, G)
                S = torch.stack([grid.sum(1), grid.sum(0)])
                table = joint_actions(2, G, "cross")
                ours = credit_samples(group_advantages(R, mode), table, G)
                hint = ""
                if G == 2 and torch.allclose(got, want.T, atol=1e-5):
                    # at G = 2 the transpose has the right shape: (G, 2) = (2, G)
                    hint = (" You returned the TRANSPOSE, one row per sample and one column per agent (a (G, 2) "
                            "tensor, the same shape only because G = 2 here): row i must hold agent i's G credits; "
                            "stack the two agents' credits as rows, torch.stack([agent 1's, agent 2's]), not with "
                            "dim=1, and without .T.")
                elif torch.allclose(got, want.flip(0), atol=1e-5):
                    hint = (" Your rows are swapped: R.view(G, G)[k1, k2] is the pair (agent 1's k1, agent 2's k2), so "
                            "agent 1's sum runs over a ROW, agent 2's over a COLUMN.")
                elif torch.allclose(got, -want, atol=1e-5):
                    hint = (" The sign is flipped (baseline minus sum): the credit is S_i(g) minus the baseline, so a "
                            "sample whose sum is above the mean gets a positive credit (with 'max', every credit is <= 0 "
                            "and the best sample's is 0).")
                elif (digits := rounded_to(got.detach().double().flatten().tolist(), want.double().flatten().tolist(),
                                           range(6), close=lambda a, b: math.isfinite(a) and abs(a - b) < 2e-6)) is not None:
                    hint = (f" You rounded them to {digits} decimal(s): return them unrounded; the check compares to "
                            "1e-5.")
                elif torch.allclose(got, ours, atol=1e-5) or torch.allclose(got, want / G, atol=1e-5):
                    hint = (" That is the package's credit (the MEAN of a sample's joint advantages); CoMLRL SUMS the "
                            "returns of a sample's G joint actions, then takes the advantage among the G sums.")
                elif G > 2 and torch.allclose(got, want / (G - 1), atol=1e-5):
                    hint = (f" Yours is the credit divided by G - 1 = {G - 1}: you divided the sums by G - 1 (a sample "
                            "variance's divisor, or a mean of the others). CoMLRL's credit takes the SUMS as they are: "
                            "each agent's G sums, S = torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)]), minus "
                            "their mean (or max), with no division.")
                elif torch.allclose(got, want / G ** 2, atol=1e-5):
                    hint = (f" Yours is the credit divided by G * G = {G * G}: you divided the sums by the size of the "
                            "grid (a mean over all G * G rewards). CoMLRL's credit takes the SUMS as they are: each "
                            "agent's G sums, S = torch.stack([R.view(G, G).sum(1), R.view(G, G).sum(0)]), minus their "
                            "mean (or max), with no division.")
                elif mode == "max" and torch.allclose(got, S - R.max(), atol=1e-5):
                    hint = (f" Your baseline is the largest SINGLE reward, R.max() = {R.max().item():.4g}; 'max' "
                            "subtracts the largest of the agent's G SUMS (each sum adds G rewards): "
                            "S.max(1, keepdim=True).values.")
                elif mode == "mean" and torch.allclose(got, S - R.mean(), atol=1e-5):
                    hint = (f" Your baseline is the mean of the G * G single rewards, R.mean() = {R.mean().item():.4g}; "
                            "'mean' subtracts the mean of the agent's G SUMS, which is G times that (each sum adds G "
                            f"rewards): {G} * R.mean() = {G * R.mean().item():.4g} here, S.mean(1, keepdim=True).")
                elif mode == "mean" and torch.allclose(got, S - S.sum(1, keepdim=True) / (G - 1), atol=1e-5):
                    hint = (f" Your baseline divides the sum of the G sums by G - 1 = {G - 1}; their mean divides it by "
                            f"G = {G}: S.mean(1, keepdim=True), or S.sum(1, keepdim=True) / G.")
                elif torch.allclose(got, G * ours, atol=1e-5):
                    hint = (" You summed the package's advantages, whose baseline is one over all G*G single rewards "
                            "(for 'max': the best single reward); CoMLRL's baseline is taken among the G SUMS (for "
                            "'max': the best sum).")
                elif mode == "max" and torch.allclose(got, S - S.mean(1, keepdim=True), atol=1e-5):
                    # before the one-baseline hint: both agents' sums total the whole grid, so S.mean() is each
                    # agent's own mean too (for 'mean', one global mean is right)
                    hint = " Read `mode`: 'max' subtracts the largest of the agent's G sums (MAReMax), 'mean' their mean."
                elif mode == "max" and torch.allclose(got, S - S.max(), atol=1e-5):
                    hint = " One baseline for both agents: each agent's baseline is taken among ITS OWN G sums."
                elif torch.allclose(got, S, atol=1e-5):
                    hint = " No baseline: subtract the mean (or the max) of the agent's G sums."
                elif mode == "max" and _reads_as(fn, R, G, mode, got, _smallest_form):
                    hint = (" You subtracted the SMALLEST of the agent's G sums; 'max' subtracts the LARGEST (MAReMax), "
                            "so every credit is <= 0 and the best sample's is 0.")
                elif mode == "max" and _reads_as(fn, R, G, mode, got, _second_form):
                    hint = (" Your baseline is the SECOND largest of the agent's G sums (S.sort(1).values[:, -2:-1], "
                            "or topk(2)'s second), so the best sample gets a positive credit; 'max' subtracts the "
                            "LARGEST sum: S.max(1, keepdim=True).values (or S.sort(1).values[:, -1:]), so every credit "
                            "is <= 0 and the best sample's is 0.")
                elif _reads_as(fn, R, G, mode, got, _over_agents_form):
                    hint = (f" You took the baseline over the two AGENTS, dim 0 (S.{mode}(0, ...): for each sample index "
                            "the " + ("mean" if mode == "mean" else "larger") + " of agent 1's and agent 2's sums), not "
                            "over the agent's own G samples, dim 1. S = torch.stack([...]) is (2, G), one row per agent: "
                            + ("S.mean(1, keepdim=True)." if mode == "mean" else "S.max(1, keepdim=True).values."))
                elif _reads_as(fn, R, G, mode, got, _off_diagonal_form):
                    hint = (" You left the diagonal out of each sum (M.sum(1) - M.diag()): sample k's sum skipped its "
                            "aligned pair R.view(G, G)[k, k]. Cross mode sums ALL G joint actions that contain the "
                            "sample, the pair with the partner's sample k included: its whole row for agent 1, "
                            "R.view(G, G).sum(1), its whole column for agent 2, R.view(G, G).sum(0).")
                elif mode == "max" and torch.allclose(got, S - _loo_max(S), atol=1e-5):
                    hint = (" Your baseline for each sample is the largest of the OTHER G - 1 sums (a leave-one-out "
                            "max), so the best sample gets a positive credit; 'max' subtracts the largest of all G sums, "
                            "the sample's own included: S.max(1, keepdim=True).values, so every credit is <= 0 and the "
                            "best sample's is 0.")
                elif mode == "max" and G == 2 and torch.allclose(got, S - S.max(1).values, atol=1e-5):
                    hint = (" Your baseline lost its axis: S.max(1).values, without keepdim=True, has shape (2,) and "
                            "broadcasts along the G columns, not the 2 rows; at G = 2 the shapes happen to fit, so "
                            "nothing raised (at G = 3 it raises a size mismatch). Use S.max(1, keepdim=True).values, "
                            "a (2, 1) column (or [:, None]).")
                elif mode == "mean" and torch.allclose(got, want * G / (G - 1), atol=1e-5):
                    hint = (f" Yours is G/(G-1) = {G}/{G - 1} times the credit: you subtracted the mean of the OTHER "
                            "G - 1 sums (a leave-one-out baseline, MARLOO's); 'mean' subtracts the mean of all G sums, "
                            "the sample's own included.")
                elif torch.allclose(got, torch.stack([want[0], want[0]]), atol=1e-5) or torch.allclose(
                        got, torch.stack([want[1], want[1]]), atol=1e-5):
                    hint = (" Both rows are one agent's credit: agent 1's sample k1 sums ROW k1, R.view(G, G).sum(1), "
                            "and agent 2's sample k2 sums COLUMN k2, R.view(G, G).sum(0).")
                elif any(torch.allclose(got, (lambda d: torch.stack([d, d]) - (d.mean() if mode == "mean" else d.max()))(
                        k * grid.diagonal()), atol=1e-5) for k in (1, G)):
                    hint = (" You used only the diagonal, the G aligned joint actions; cross mode sums ALL G joint "
                            "actions holding the sample: its row (agent 1) or its column (agent 2).")
                elif any(torch.allclose(got, c / sd, atol=1e-5)
                         for c in (want, S - S.mean(1, keepdim=True))
                         for sd in (S.std(1, keepdim=True), S.std(1, keepdim=True) + 1e-4,
                                    S.std(1, keepdim=True, unbiased=False),
                                    S.std(1, keepdim=True, unbiased=False) + 1e-4,
                                    S.std(1, keepdim=True, unbiased=False).clamp_min(1e-6))):
                    hint = (" You divided by the std of the agent's G sums (a z-score, as CoMLRL 1.4.3 can); the "
                            "exercise's credit is unscaled: S_i(g) minus the mean (or the max) of the G sums.")
                raise ExerciseFailed(f"for G = {G}, mode {mode!r} and rewards {_fmt(grid)} (row k1, column k2) the "
                                     f"credits are {_fmt(want)}, you returned {_fmt(got)}: for each agent, sum the "
                                     "rewards of the G joint actions each of its samples is in, then subtract the "
                                     f"{'mean' if mode == 'mean' else 'largest'} of those G sums." + hint)