"""Checks of notebook 03's exercises (the TL;DR reward): the length-ratio level L2, the coherence
score T with the authors' substring matching, and a repetition guard on the TL;DR reward (it zeroes padding by one
repeated phrase; notebook 03's Limits show trained texts that game the reward with varied fragments all the same)."""
from __future__ import annotations

import math
import numbers
import re

from ..quality import repetition
from ..tasks.writing.reward import (coherence_T, ramp_level, tldr_joint_reward, tldr_length_level, tldr_levels,
                                    transition_categories)
from . import (ExerciseFailed, call_answer, exercise, is_bool, not_a_wrapper, not_the_library, plain_number,
               rounded_to, runs_the_library)


def _t_of(text: str) -> float:
    """T with the phrases matched in the text as written, not lower-cased (a learner's slip)."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    k = sum(any(p in text for p in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _unpunctuated(text: str, by: str) -> str:
    """The lower-cased text with its punctuation removed (by = "") or made a space (by = " "): a learner's slip."""
    return re.sub(r"[^\w\s]", by, text.lower())


# The package's own advice for a one-pair call of the joint reward (reward.per_agent_texts), and what the check says in
# its place: the joint reward returns a dict of lists, so the call alone is no number
_JOINT_ADVICE = "tldr_joint_reward([[c1], [c2]]), or tldr_levels(c1, c2)"
_JOINT_CALL = ("tldr_joint_reward([[c1], [c2]])[\"total\"][0] (it returns a dict of lists, one value per joint "
               "action), or tldr_levels(c1, c2)[\"total\"]")


def _raised(exc: BaseException) -> str:
    """A crash of the learner's answer as the check quotes it, "TypeError: ...": its message with no final period (the
    check's own sentence follows), the joint reward's one-pair call written with the ["total"][0] it needs."""
    return f"{type(exc).__name__}: {str(exc).rstrip().rstrip('.').replace(_JOINT_ADVICE, _JOINT_CALL)}"


# Just past the band's edges, by far less than the notebook's 1.0999 and 5.0001: a band with a margin (a tolerance such
# as `r <= 5.0 + 1e-6`) pays a number there, where scoring stops
_MARGIN_PROBES = (5.0 + 5e-10, 1.1 - 5e-10)
# the ratios the check calls the answer on, in this order (then 2.0 once more, to see whether it calls the library)
_RATIOS = (0.5, 1.0999, 1.1, 1.35, 1.6, 2.4, 3.2, 4.1, 5.0, 5.0001, 7.0, 1.23, 1.47, 3.5, 4.55, 4.91,
           1.55, 1.59, 3.21, 3.3) + _MARGIN_PROBES
# One tolerance for reading the learner's ramp as a straight line and its ends (_flipped_ramps, _ramp_line_said): the
# check's own, a value within it of L2 is right
_LINE_TOL = 1e-9

# A ramp written with its sign flipped: (the ramp's ratios, the slip's value there, the sentence that names it)
_RAMP_SLIPS = [
    (lambda r: 1.1 <= r < 1.6, lambda r: 1 - (r - 1.1) / 0.5,
     "your lower ramp falls; it rises from 0 at 1.1 to 1 at 1.6, (ℓ - 1.1) / 0.5, where you wrote "
     "1 - (ℓ - 1.1) / 0.5 (1 at 1.1, 0 at 1.6)."),
    (lambda r: 3.2 < r <= 5.0, lambda r: (r - 3.2) / 1.8,
     "your upper ramp rises; it falls from 1 at 3.2 to 0 at 5.0, 1 - (ℓ - 3.2) / 1.8, where you wrote "
     "(ℓ - 3.2) / 1.8 (0 at 3.2, 1 at 5.0)."),
]


def _what(v) -> str:
    """The learner's answer of the wrong type, said: its kind and (shortened) repr."""
    text = repr(v) if len(repr(v)) <= 60 else repr(v)[:57] + "..."
    lib = type(v).__module__.split(".")[0]
    if is_bool(v):
        return f"a truth value, {text}"
    if isinstance(v, str):
        return f"a str, {text} (the number's text)"
    if lib in ("numpy", "torch") and hasattr(v, "shape"):
        kind = "numpy array" if lib == "numpy" else "torch tensor"
        shape = tuple(v.shape)
        return f"{'a 0-d ' + kind if shape == () else f'a {kind} of shape {shape}'}, {text}"
    if isinstance(v, (tuple, list)):
        return f"a {type(v).__name__} of {len(v)} item{'s' if len(v) != 1 else ''}, {text}"
    return f"a {type(v).__name__}, {text}"


def _held(v):
    """The one number an answer of the wrong type holds (a numeric str, a one-item tuple, list, array or tensor), as a
    float; None when it holds none, or more than one."""
    try:
        if isinstance(v, str):
            x = float(v)
        elif isinstance(v, (tuple, list)):
            x = v[0] if len(v) == 1 else None
        elif type(v).__module__.split(".")[0] == "numpy" and getattr(v, "size", None) == 1:
            x = v.item()
        elif type(v).__module__.split(".")[0] == "torch" and callable(getattr(v, "numel", None)) and v.numel() == 1:
            x = v.item()
        else:
            return None
    except Exception:  # noqa: BLE001 - a text that is no number, an odd container: it holds no number
        return None
    x = plain_number(x)
    return float(x) if isinstance(x, numbers.Real) and not is_bool(x) else None


def _no_float(v, want, needs: str):
    """The sentence for an answer of the wrong type (after plain_number: a str, a tuple, a numpy array or torch tensor,
    0-d included, a truth value), with what it should be (`needs`) and how to get there; None for a Python int or
    float, or None (those are judged by value). The rest of the notebook averages the values (statistics.mean takes
    no array and no tensor), so one shared message, whatever the value inside."""
    if v is None or (isinstance(v, (int, float)) and not is_bool(v)):
        return None
    held = _held(v)
    right = (f" It holds the right value, {want:.10g}, but in the wrong type." if held is not None and want is not None
             and math.isclose(held, want, abs_tol=1e-9) else "")
    lib = type(v).__module__.split(".")[0]
    if is_bool(v):
        how = "a truth value is a yes/no, not a level"
    elif isinstance(v, str):
        how = "return the number itself, not its text (no f-string or format() around it)"
    elif isinstance(v, (tuple, list)):
        how = (f"return the number itself, not a {type(v).__name__} holding it (a trailing comma, `return x,`, makes a "
               "tuple)")
    elif lib in ("numpy", "torch"):
        how = ("compute it in Python floats (if/else, min, max), or convert the one number with float(...); the rest "
               "of the notebook averages these values with statistics.mean, which takes no array or tensor")
    else:
        how = "float(...)"
    return f"you returned {_what(v)}.{right} {needs}: {how}."


# The two ramps: (its ratios, its name, where it is 0, where it is 1, its line as the text writes it)
_RAMPS = [(_RAMP_SLIPS[0][0], "lower", 1.1, 1.6, "(ℓ - 1.1) / 0.5"),
          (_RAMP_SLIPS[1][0], "upper", 5.0, 3.2, "1 - (ℓ - 3.2) / 1.8")]


def _at(x: float, other: float | None = None) -> str:
    """A ratio as the text writes it: 5.0, 5.2, 1.75 (4 significant digits, one decimal at least); with `other` (the
    value it is compared with), as many digits as it takes to write the two differently (1.599975, not 1.6); rounding
    noise around 0 (3.5e-16) is written 0.0."""
    x = 0.0 if abs(x) < 1e-12 else x
    for digits in range(4, 18):
        t = f"{x:.{digits}g}"
        if other is None or t != f"{other:.{digits}g}":
            break
    return t if "." in t or "e" in t else t + ".0"


def _ramp_line_said(name: str, zero: float, one: float, line: str, a: float, b: float) -> str:
    """The sentence for a ramp the learner wrote as the straight line a ℓ + b that is not the text's: where it reaches
    0 and 1 (the text's: `zero`, `one`), or that it runs the wrong way, or (both ends within _LINE_TOL of the text's)
    that its slope is a hair off."""
    rises = one > zero
    right = (f"it {'rises from 0 at ' if rises else 'falls from 1 at '}{_at(min(zero, one))} to "
             f"{'1' if rises else '0'} at {_at(max(zero, one))}, {line}")
    at0, at1 = -b / a, (1 - b) / a
    if (a > 0) != rises:
        return (f"your {name} ramp {'falls' if rises else 'rises'}, from {'1' if rises else '0'} at "
                f"{_at(min(at0, at1))} to {'0' if rises else '1'} at {_at(max(at0, at1))}; {right}.")
    width, yours = abs(one - zero), 1 / abs(a)
    off = sorted(((at, should, level) for at, should, level in ((at0, zero, 0), (at1, one, 1))
                  if not math.isclose(at, should, abs_tol=_LINE_TOL)), key=lambda t: t[1])
    if not off:                        # both ends within the tolerance, the values off it: the slope is a hair off
        slope = 1 / width if rises else -1 / width
        return (f"your {name} ramp is a straight line whose slope is {_at(a, slope)}, not {_at(slope)} "
                f"({'1 / ' if rises else '-1 / '}{_at(width)}): it {'rises' if rises else 'falls'} by 1 over a width "
                f"of {_at(yours, width)}, not {_at(width)}. Its ends are within {_LINE_TOL:g} of the text's, but on "
                f"the way its values leave the text's line by more than that; {right}. Write the text's numbers as "
                "they are, no approximation of them.")
    if len(off) == 1:
        (at, should, level), = off
        where = f"reaches {level} at {_at(at, should)}, not {_at(should)}"
    else:
        where = (f"reaches {off[0][2]} at {_at(off[0][0], off[0][1])} and {off[1][2]} at "
                 f"{_at(off[1][0], off[1][1])}, not at {_at(off[0][1])} and {_at(off[1][1])}")
    span = ("" if math.isclose(width, yours, abs_tol=_LINE_TOL) else
            f" Your straight line {'rises' if rises else 'falls'} by 1 over a width of {_at(yours, width)}, not "
            f"{_at(one if rises else zero)} - {_at(zero if rises else one)} = {_at(width)}.")
    return f"your {name} ramp {where}: {right}.{span}"


def _level_at(fn, x, seen: dict):
    """The learner's level at the ratio x as a plain real number, None when it crashed there or gave no number; each
    ratio is asked once (`seen` keeps what it returned)."""
    if x not in seen:
        try:
            seen[x] = fn(x)
        except Exception:  # noqa: BLE001 - the learner's function may fail elsewhere: no evidence there
            seen[x] = None
    v = plain_number(seen[x])
    return v if isinstance(v, numbers.Real) and not is_bool(v) else None


def _ramp_line(fn, k: int, seen: dict):
    """The learner's ramp k (0 lower, 1 upper) read at every ratio of the check on it: "flip" for the text's ramp with
    its sign flipped; (a, b) for a straight line a ℓ + b, at all of them or at those below 1 with 1 at the others,
    where the line is above 1 (a ramp capped at the plateau's 1, reached early, at least 3 ratios on the line); None
    when no such line explains it (a rounded value, a smoothstep, a plateau moved with the text's line kept), or it
    crashed there. The ratios not met yet are asked for now (a crash there is no evidence)."""
    on, slip, _ = _RAMP_SLIPS[k]
    xs = sorted(x for x in _RATIOS if on(x))
    vs = [_level_at(fn, x, seen) for x in xs]
    if any(v is None for v in vs):
        return None
    if all(math.isclose(v, slip(x), abs_tol=_LINE_TOL) for x, v in zip(xs, vs)):
        return "flip"
    pts = [(x, v) for x, v in zip(xs, vs) if not math.isclose(v, 1.0, abs_tol=_LINE_TOL)]
    if len(pts) < 3:
        return None
    a = (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
    b = pts[0][1] - a * pts[0][0]
    if a == 0 or not all(math.isclose(v, a * x + b, abs_tol=_LINE_TOL) for x, v in pts):
        return None
    if not all(a * x + b >= 1 - _LINE_TOL for x, v in zip(xs, vs) if (x, v) not in pts):
        return None                                     # a 1 the line does not reach there: no cap, no line
    if all(math.isclose(v, tldr_length_level(x), abs_tol=_LINE_TOL) for x, v in pts):
        return None                                     # the text's own line: right here
    return a, b


def _ramp_said(fn, k: int, seen: dict):
    """The sentence for the learner's ramp k when it is another straight line than the text's (_ramp_line); None when
    it is none."""
    line = _ramp_line(fn, k, seen)
    if line is None:
        return None
    if line == "flip":
        return _RAMP_SLIPS[k][2]
    _, name, zero, one, text = _RAMPS[k]
    return _ramp_line_said(name, zero, one, text, *line)


def _flipped_ramps(fn, r, got, seen: dict) -> list:
    """The sentences of the ramps the learner wrote as another straight line (the sign flipped, or the wrong ends),
    the one at ℓ = r first; [] unless the ramp at r is one. A ramp counts only when the answer is ONE straight line at
    EVERY ratio of the check on that ramp, or below 1 there and capped at 1 (_ramp_line: a rounded value, a smoothstep,
    a moved plateau is none)."""
    if is_bool(got) or not isinstance(got, numbers.Real):    # no number: no line to read (the caller refuses it)
        return []
    here = [k for k, (on, _, _) in enumerate(_RAMP_SLIPS) if on(r)]
    first = _ramp_said(fn, here[0], seen) if here else None
    if first is None:
        return []
    return [first] + [why for k in range(len(_RAMP_SLIPS)) if k not in here and (why := _ramp_said(fn, k, seen))
                      is not None]


def _plateau_cut_said(fn, r, got, seen: dict):
    """At a ratio of the plateau [1.6, 3.2] where the learner pays less than 1: the sentence when that value is on the
    learner's own ramp line (_ramp_line), which reaches 1 inside the plateau (a plateau ending at 3.0, a ramp still
    rising at 1.6); None otherwise."""
    if is_bool(got) or not isinstance(got, numbers.Real) or not 1.6 <= r <= 3.2:
        return None
    for k in (1, 0) if r > 2.4 else (0, 1):
        line = _ramp_line(fn, k, seen)
        if not isinstance(line, tuple) or not math.isclose(line[0] * r + line[1], got, abs_tol=_LINE_TOL):
            continue
        a, b = line
        _, name, zero, one, text = _RAMPS[k]
        said = _ramp_line_said(name, zero, one, text, a, b)
        edge = (f"your plateau ends at {_at((1 - b) / a, 3.2)}, where your upper ramp begins" if k == 1 else
                f"your plateau starts at {_at((1 - b) / a, 1.6)}, where your lower ramp ends")
        return f"{edge}; the plateau is [1.6, 3.2], 1 at both ends. {said[0].upper()}{said[1:]}"
    return None


def _scaled_by(fn, factor: float, seen: dict) -> bool:
    """Whether the learner's level is `factor` times L2 at every ratio of the check inside [1.1, 5.0] (a percent, for
    factor 100); the ratios not met yet are asked for now (a crash or no number there: no)."""
    for x in _RATIOS:
        want = tldr_length_level(x)
        if want is None:
            continue
        v = _level_at(fn, x, seen)
        if v is None or not math.isclose(v, factor * want, abs_tol=1e-7):
            return False
    return True


def _computed_in(fn, seen: dict):
    """("float32", 7) or ("float16", 3) when the learner's level, at every ratio of the check inside [1.1, 5.0], is a
    number that type holds exactly, within that type's error of L2 (and not L2 at some ratio): L2 computed in float32
    (torch.tensor(r) is float32 by default) or float16, then made a Python float; None otherwise."""
    import numpy as np
    wants = [(x, tldr_length_level(x)) for x in _RATIOS if tldr_length_level(x) is not None]
    vs = [_level_at(fn, x, seen) for x, _ in wants]
    if any(v is None for v in vs) or all(math.isclose(v, w, abs_tol=1e-9) for v, (_, w) in zip(vs, wants)):
        return None
    for name, digits, kind, tol in (("float32", 7, np.float32, 1e-5), ("float16", 3, np.float16, 1e-2)):
        if all(abs(v - w) <= tol and float(kind(v)) == v for v, (_, w) in zip(vs, wants)):
            return name, digits
    return None


@exercise("03.length_level")
def check_length_level(fn):
    # the ratio is ell (ℓ, docs/glossary.md: r is the reward); the learner's argument is named `r`, messages say ℓ.
    # The ramps are probed at their midpoints (1.35, 4.1) AND off them (1.23, 1.47, 3.5, 4.55, 4.91): a smoothstep
    # or a rounded value agrees with the straight line at a midpoint only; 1.55, 1.59, 3.21 and 3.3 sit just inside
    # the ramps, next to the plateau's edges (a plateau moved to [1.5, 3.2] or [1.6, 3.4] paid 1.0 there)
    not_the_library(fn, "length_level", tldr_length_level)
    seen = {}                  # the learner's value at each ratio met so far (for a sign slip's diagnosis)
    for r in _RATIOS:
        raw = call_answer(fn, r, said=lambda exc, r=r: f"length_level({r}) raised {_raised(exc)}. Every "
                          "ratio gets a number or None (None where scoring stops, outside [1.1, 5.0]).")
        seen[r] = raw
        want, got = tldr_length_level(r), plain_number(raw)
        if want is None:
            if r in _MARGIN_PROBES and got is not None:
                edge = "5.0" if r > 5.0 else "1.1"
                raise ExerciseFailed(f"at the ratio ℓ = {r}, just {'past' if r > 5.0 else 'below'} {edge}, scoring "
                                     f"stops: return None; you returned {got!r}. Your band has a margin (a tolerance "
                                     f"such as `r {'<= 5.0 + 1e-6' if r > 5.0 else '>= 1.1 - 1e-6'}`, or a ratio "
                                     "rounded before the test): [1.1, 5.0] is exact, None for every ratio outside it "
                                     "however close, `1.1 <= r <= 5.0` with no tolerance.")
            if isinstance(got, numbers.Real) and not isinstance(got, bool) and got < 0:
                raise ExerciseFailed(f"at the ratio ℓ = {r} scoring stops: return None; you returned {got:.3g}, a "
                                     f"ramp carried on {'past 5.0' if r > 5.0 else 'below 1.1'} and went negative. "
                                     "Outside [1.1, 5.0] L2 is no number at all: any number, 0 or negative, would let "
                                     "the pair go on to the vocabulary and style levels.")
            edge = 0 if 1.09 < r < 1.1 else 1 if 5.0 < r < 5.01 else None    # just outside: on a ramp?
            if edge is not None and got is not None and (said := _ramp_said(fn, edge, seen)) is not None:
                raise ExerciseFailed(f"at the ratio ℓ = {r} scoring stops: return None; you returned {got!r}. "
                                     f"Scoring stops outside [1.1, 5.0], `1.1 <= r <= 5.0`, and {said}")
            if got is not None:
                raise ExerciseFailed(f"at the ratio ℓ = {r} scoring stops: return None (not {got!r}); a number would "
                                     "let the pair go on to the vocabulary and style levels.")
            continue
        if got is None:
            edge = " Both ends of [1.1, 5.0] are inside: L2 pays 0 there and scoring goes on." if r in (1.1, 5.0) else ""
            raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.3f} and scoring goes on; you returned None "
                                 f"(stop).{edge}")
        if slip := _no_float(got, want, "Return a Python float, or None where scoring stops"):
            raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}; {slip}")
        if isinstance(got, bool) or not isinstance(got, numbers.Real) or not math.isclose(got, want, abs_tol=1e-9):
            if _scaled_by(fn, 100, seen):
                raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {got!r}: 100 times the "
                                     "level, at every ratio of the check, a percent. L2 is a share in [0, 1], not a "
                                     "percent: 1 on [1.6, 3.2], 0 at 1.1 and 5.0, (ℓ - 1.1) / 0.5 and 1 - (ℓ - 3.2) / "
                                     "1.8 on the ramps, with no factor 100 (the reward adds L2 to the other levels, "
                                     "each in [0, 1]).")
            factor = got / want if isinstance(got, numbers.Real) and not is_bool(got) and want else None
            if (factor is not None and abs(factor) > 1e-6 and not math.isclose(factor, 1.0, rel_tol=1e-4)
                    and _scaled_by(fn, factor, seen)):
                raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {got!r}: {factor:.10g} "
                                     "times the level, at every ratio of the check (your plateau pays "
                                     f"{factor:.10g}, not 1). L2 itself has no factor: 1 on [1.6, 3.2], 0 at 1.1 and "
                                     "5.0, (ℓ - 1.1) / 0.5 and 1 - (ℓ - 3.2) / 1.8 on the ramps (the reward adds L2, "
                                     "in [0, 1], to the other levels as it is).")
            if flipped := _flipped_ramps(fn, r, got, seen):
                raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {got!r}: "
                                     + " And ".join(flipped))
            if plateau := _plateau_cut_said(fn, r, got, seen):
                raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {got!r}: {plateau}")
            hint = ""
            digits = {"float32": 7, "float16": 3}.get(type(raw).__name__) if type(raw).__module__ == "numpy" else None
            if digits is not None and isinstance(got, float) and math.isclose(got, want, rel_tol=10.0 ** (1 - digits),
                                                                              abs_tol=10.0 ** -digits):
                raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {type(raw).__name__} "
                                     f"{got!r}: {type(raw).__name__} keeps about {digits} digits: return a Python float "
                                     "(float(...)), computed from ℓ in Python floats, not in numpy's "
                                     f"{type(raw).__name__} (float() of a {type(raw).__name__} keeps its error).")
            if (kind := _computed_in(fn, seen)) is not None:
                name, digits = kind
                raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {got!r}: L2 computed in "
                                     f"{name} (at every ratio of the check your value is a {name} number within "
                                     f"{name}'s error of L2). {name} keeps about {digits} digits: return a Python "
                                     "float computed from ℓ in Python floats, not in torch's or numpy's "
                                     f"{name} (torch.tensor(r) is float32 by default); float() or .item() of a "
                                     f"{name} keeps its error.")
            if isinstance(got, numbers.Real) and not isinstance(got, bool):
                if (k := rounded_to(got, want, range(1, 8))) is not None:
                    hint = (f" You rounded it to {k} decimal{'s' if k > 1 else ''}: the level is the exact value on "
                            "the line, no rounding.")
                elif math.isclose(got, 3 * want ** 2 - 2 * want ** 3, abs_tol=1e-9):
                    hint = (" That is a smooth S-curve (3t^2 - 2t^3); each ramp is a STRAIGHT line, (ℓ - 1.1) / 0.5 "
                            "rising, 1 - (ℓ - 3.2) / 1.8 falling.")
                elif got == 1.0 and (1.1 < r < 1.6 or 3.2 < r < 5.0):
                    hint = (f" You pay the plateau's 1 at ℓ = {r}: the plateau is exactly [1.6, 3.2]; just outside it "
                            "the ramp has already begun.")
            raise ExerciseFailed(f"at the ratio ℓ = {r} L2 is {want:.10g}, you returned {got!r}: 1 on [1.6, 3.2], "
                                 "rising linearly from 0 at 1.1 to 1 at 1.6, falling linearly from 1 at 3.2 to 0 at "
                                 "5.0." + hint)
    not_a_wrapper(fn, (2.0,), "length_level", tldr_length_level, ramp_level,
                  how="from the rule in the text (1 on [1.6, 3.2], straight ramps to 0 at 1.1 and 5.0, None outside)")


TEXTS = ["He has a plan.",                         # "as" inside "has": the time category
         "However, the rent went up; as a result we moved. For example, the kitchen is smaller.",
         "My cat stays in. Fact is, she hates rain and is an all-in-all homebody.",  # no phrase as written (T = 0);
         #  without punctuation 'in fact' appears, with a space for it 'all in all'
         "First, I called. Then I wrote. In addition, I asked a lawyer because it was urgent. "
         "Similarly, however, in conclusion, for instance, although, if, indeed, meanwhile, that is",
         "",
         "The rent went up. As\na result we moved; in  fact, the flat is smaller this time.",  # 'as\na result' and
#   'in  fact' (a newline, a double space) are no phrase as written: T = 0.4 ('as'); whitespace collapsed, 0.55.
#   'time' is a category's NAME, no phrase: matching the names finds it here
         'We moved; IN FACT, Meanwhile the rent rose. He wrote: "All in all, fine", and In Addition he called.']
#   capitals off a sentence's start (the texts before have them at sentence starts only): all caps 'IN FACT',
#   'Meanwhile' mid-sentence, 'All in all' after a quote mark, title case 'In Addition'. T = 0.75 (κ = 8); as written
#   0.5, a phrase also tried capitalised (p.capitalize()) 0.6, each sentence's first letter lower-cased 0.5
_CASE_TEXT = TEXTS[-1]


def _kappa(text: str) -> int:
    """The number of categories with a phrase in the lower-cased text (the notebook's kappa)."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low = text.lower()
    return sum(any(p in low for p in ws) for ws in TRANSITION_CATEGORIES.values())


def _t_capped(k: int, cap: float) -> float:
    """T with the cap `cap` in place of 1 (a learner's slip when cap < 1)."""
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), cap)


def _t_call(fn, text: str):
    """The learner's T of one text; a crash becomes a sentence (NotImplementedError still means "unsolved")."""
    return plain_number(call_answer(fn, text, said=lambda exc: f"coherence_T({text!r}) raised {_raised(exc)}. "
                                    "It takes one text and returns T, a number."))


def _same(got, want) -> bool:
    return isinstance(got, (int, float)) and not isinstance(got, bool) and math.isclose(got, want, abs_tol=1e-9)


def _t_counting(text: str, found) -> float:
    """T with kappa = the number of categories for which found(lower-cased text, category name, its phrases) holds."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low = text.lower()
    k = sum(bool(found(low, cat, ws)) for cat, ws in TRANSITION_CATEGORIES.items())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _t_phrases(text: str, found) -> float:
    """T with kappa = the sum of found(lower-cased text, phrase) over EVERY phrase (phrases counted, not categories;
    no text of the check repeats a phrase, so counting occurrences reads the same)."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low = text.lower()
    k = sum(int(found(low, p)) for ws in TRANSITION_CATEGORIES.values() for p in ws)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _t_one_category(text: str, last: bool = False) -> float:
    """T with each phrase credited to ONE category only, its first (or, `last`, its last) in TRANSITION_CATEGORIES'
    order: a phrase -> category dict, or a phrase "used up" once matched (a learner's slip; 48 phrases belong to two or
    three categories, 'however' to contrast and concession)."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low, owner = text.lower(), {}
    for cat, ws in TRANSITION_CATEGORIES.items():
        for p in ws:
            if last or p not in owner:
                owner[p] = cat
    k = len({owner[p] for p in owner if p in low})
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _t_phrases_removed(text: str, by: str, whole_category: bool) -> float:
    """T with each matched phrase removed from the lower-cased text (replaced by `by`) before the next categories are
    tested, in TRANSITION_CATEGORIES' order: every matched phrase of a category (`whole_category`) or its first only
    (a learner's slip: a shared phrase, or a phrase inside another's, 'as' in 'as a result', then counts once)."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low, k = text.lower(), 0
    for ws in TRANSITION_CATEGORIES.values():
        hit = False
        for p in ws:
            if p in low:
                hit, low = True, low.replace(p, by)
                if not whole_category:
                    break
        k += hit
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


# The readings of T that credit a phrase (or the text's characters) to one category only
_T_ONE_CATEGORY = [_t_one_category, lambda t: _t_one_category(t, last=True)] + [
    lambda t, by=by, whole=whole: _t_phrases_removed(t, by, whole) for by in ("", " ") for whole in (True, False)]


def _n_shared() -> int:
    """How many phrases belong to two or more categories."""
    from collections import Counter
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    return sum(n > 1 for n in Counter(p for ws in TRANSITION_CATEGORIES.values() for p in set(ws)).values())


def _shared_phrase(text: str):
    """The first phrase (by its place in the lower-cased text) that belongs to two or more categories, with those
    categories; None when the text holds none."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low, cats = text.lower(), {}
    for cat, ws in TRANSITION_CATEGORIES.items():
        for p in ws:
            cats.setdefault(p, []).append(cat)
    found = sorted((low.find(p), -len(p), p) for p, cs in cats.items() if len(cs) > 1 and p in low)
    return (found[0][2], cats[found[0][2]]) if found else None


# A text met only after every text of TEXTS is right: ONE category (examples) with a phrase in each of two sentences,
# the second sentence holding two of its phrases ('to illustrate', 'for instance'). T = 0.4 (κ = 1); counted sentence by
# sentence and added 0.45 (κ read 2), counting phrases 0.5. Every text of TEXTS reads the same sentence by sentence
# (capped at 12) as in the whole text: no other text tells the two apart. Capitals at its sentence starts only.
_T_SENTENCES_PROBE = "For example, the rent went up. To illustrate, my kitchen, for instance, is tiny."


def _t_by_sentence(text: str, cap) -> float:
    """T with κ = the categories found in each sentence of the lower-cased text, ADDED over the sentences (a category
    found in two sentences counts twice), then min(κ, cap) when cap is a number (a learner's slip). Sentences split
    after . ! or ?; split at ". ", at "." or at [.!?] they read the same on every text of the check."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    sentences = re.split(r"(?<=[.!?])\s+", text.lower())
    k = sum(sum(any(p in s for p in ws) for ws in TRANSITION_CATEGORIES.values()) for s in sentences)
    k = k if cap is None else min(k, cap)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _t_phrase_count(text: str, distinct: bool, cap) -> float:
    """T with κ = the phrases found in the lower-cased text: every (category, phrase) pair of the lists, or each
    DISTINCT phrase once (`distinct`: a set of phrases), then min(κ, cap) when cap is a number (a learner's slip)."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low = text.lower()
    found = [p for ws in TRANSITION_CATEGORIES.values() for p in ws if p in low]
    k = len(set(found)) if distinct else len(found)
    k = k if cap is None else min(k, cap)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


_BY_SENTENCE = ("you counted the categories sentence by sentence and added the counts (a category found in two "
                "sentences then counts twice){capped}. κ (kappa) counts each category ONCE in the whole text: do not "
                "split it into sentences; test every category on the whole lower-cased text, κ = sum(any(p in low for "
                "p in phrases) for phrases in TRANSITION_CATEGORIES.values()).")
_PHRASES_FIX = (" κ (kappa) counts CATEGORIES with at least one phrase found, each once: a category with two phrases "
                "in the text ('to illustrate' and 'for instance', both examples) adds 1, not 2. κ = sum(any(p in low "
                "for p in phrases) for phrases in TRANSITION_CATEGORIES.values()).")

# Misreadings of T a learner may write, each with the sentence that names it; named only when the answer agrees with
# it on EVERY text of the check (TEXTS and _T_EXTRA_PROBES).
_T_SLIPS = [
    (lambda t: coherence_T(" ".join(t.split())),
     "you collapsed the whitespace before matching (`\" \".join(text.split())` or re.sub(r\"\\s+\", \" \", ...)), "
     "which makes 'as a result' and 'in fact' appear where the text has a newline or two spaces between the words. "
     "The authors match each phrase in the lower-cased text as written, every space and newline kept: lower-case it, "
     "nothing else."),
    (lambda t: coherence_T(t.replace("\n", " ")),
     "you made the newlines spaces before matching, which makes 'as a result' appear where the text has a newline "
     "between the words. The authors match each phrase in the lower-cased text as written, every newline kept: "
     "lower-case it, nothing else."),
    (lambda t: coherence_T(re.sub(" +", " ", t)),
     "you collapsed runs of spaces before matching, which makes 'in fact' appear where the text has two spaces "
     "between the words. The authors match each phrase in the lower-cased text as written, every space kept: "
     "lower-case it, nothing else."),
    (lambda t: _t_counting(t, lambda low, cat, ws: cat.replace("_", " ") in low or cat in low),
     "you matched the category NAMES ('time', 'contrast', 'cause_effect', ...); the names are only labels. A category "
     "counts when one of its PHRASES, the list TRANSITION_CATEGORIES[name], occurs in the lower-cased text: "
     "any(p in low for p in phrases)."),
    (lambda t: _t_phrases(t, lambda low, p: p in low),
     "you counted phrases; κ (kappa) counts CATEGORIES with at least one phrase found, each once: a category with two "
     "phrases in the text (or one phrase twice) adds 1, not 2. κ = sum(any(p in low for p in phrases) for phrases in "
     "TRANSITION_CATEGORIES.values())."),
    (lambda t: _t_counting(t, lambda low, cat, ws: ws[0] in low),
     "you test only the FIRST phrase of each category (phrases[0]); a category counts when ANY of its phrases occurs "
     "in the lower-cased text, any(p in low for p in phrases) ('as', which 'has' contains, is the time category's "
     "third phrase)."),
    (lambda t: _t_phrase_count(t, False, 12),
     "you counted phrases, capped at 12 (`min(12, ...)`, the number of categories): the cap does not make the count "
     "one of categories." + _PHRASES_FIX),
    (lambda t: _t_phrase_count(t, True, None),
     "you counted the distinct PHRASES found (a set of phrases), not the categories: a phrase listed under two "
     "categories ('however': contrast and concession) then adds 1, two phrases of one category 2." + _PHRASES_FIX),
    (lambda t: _t_phrase_count(t, True, 12),
     "you counted the distinct PHRASES found (a set of phrases), capped at 12 (`min(12, ...)`, the number of "
     "categories), not the categories: a phrase listed under two categories ('however': contrast and concession) "
     "then adds 1, two phrases of one category 2, and the cap does not make the count one of categories."
     + _PHRASES_FIX),
] + [(lambda t, cap=cap: _t_by_sentence(t, cap), _BY_SENTENCE.format(capped="" if cap is None else ", capped at 12"))
     for cap in (12, None)] + [
    (lambda t: _t_counting(t, lambda low, cat, ws: any(ch in low for ch in cat)),
     "you looped over TRANSITION_CATEGORIES itself, which yields the category NAMES ('elaboration', 'time', ...), so "
     "your `for p in ...` ran over the LETTERS of a name: any one of its letters in the text counts the category, and "
     "almost every text gets all 12 (T = 0.95). Loop over the lists of phrases, "
     "TRANSITION_CATEGORIES.values(): κ = sum(any(p in low for p in phrases) for phrases in "
     "TRANSITION_CATEGORIES.values())."),
    (lambda t: _t_shifted(t, 1),
     "you wrote 0.4 + 0.05 κ, with κ where the formula has κ - 1: one category found gives exactly 0.4, the base, and "
     "each further category adds 0.05. T = 0 if κ = 0 else min(0.4 + 0.05 (κ - 1), 1.0)."),
    (lambda t: _t_shifted(t, 2),
     "you wrote 0.4 + 0.05 (κ + 1), with κ + 1 where the formula has κ - 1: one category found gives exactly 0.4, the "
     "base, and each further category adds 0.05. T = 0 if κ = 0 else min(0.4 + 0.05 (κ - 1), 1.0)."),
]


def _t_shifted(text: str, shift: int) -> float:
    """T with κ - 1 + shift in place of κ - 1 (κ for shift 1, κ + 1 for shift 2): a learner's slip."""
    k = _kappa(text)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1 + shift), 1.0)


def _sentence_starts_lowered(text: str) -> str:
    """The text with the first letter of each sentence (split at ". ") lower-cased, nothing else: a learner's slip."""
    return ". ".join(s[:1].lower() + s[1:] for s in text.split(". "))


def _t_matching(text: str, found) -> float:
    """T with kappa = the categories with a phrase p for which found(text as given, p) holds."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    k = sum(any(found(text, p) for p in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


# Case handled for part of the text only: each with how the learner wrote it. The texts of the check before
# _CASE_TEXT have capitals at sentence starts only, where these agree with text.lower(); a slip is named only when the
# answer agrees with it on EVERY text.
_CASE_FORMS = (("capitalised", "p.capitalize()", str.capitalize), ("in capitals", "p.upper()", str.upper),
               ("in title case", "p.title()", str.title))
_CASE_SLIPS = [
    (lambda text, p: p in _sentence_starts_lowered(text),
     "you lower-case only the first letter of each sentence (`s[:1].lower() + s[1:]` over text.split(\". \"))"),
    (lambda text, p: p in text[:1].lower() + text[1:],
     "you lower-case only the text's first letter (`text[:1].lower() + text[1:]`)"),
    (lambda text, p: p in re.sub(r"\b[A-Z]", lambda m: m.group().lower(), text),
     "you lower-case only the first letter of each word (`re.sub(r\"\\b[A-Z]\", ...)`)"),
] + [(lambda text, p, fs=tuple(f for _, _, f in combo): p in text or any(f(p) in text for f in fs),
      "you match each phrase as written or " + " or ".join(name for name, _, _ in combo) + " (`p in text or "
      + " or ".join(f"{code} in text" for _, code, _ in combo) + "`)")
     for combo in ([_CASE_FORMS[0]], [_CASE_FORMS[1]], [_CASE_FORMS[2]], _CASE_FORMS[:2], _CASE_FORMS[::2],
                   _CASE_FORMS[1:])]


def _missed_by_case(text: str, found) -> str:
    """The phrases of the lower-cased text that found(text, p) misses, each with its capitals as the text writes it:
    "'in fact' (written 'IN FACT') and 'in addition' (written 'In Addition')"."""
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    low = text.lower()
    missed = sorted({p for ws in TRANSITION_CATEGORIES.values() for p in ws if p in low and not found(text, p)},
                    key=low.find)
    said = [f"{p!r} (written {text[low.find(p):low.find(p) + len(p)]!r})" for p in missed]
    return ", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else "".join(said)


def _low_precision(got, want):
    """("float32", 7) or ("float16", 3) when `got`, a Python float that is not `want`, is `want` computed in that
    precision: a value the type holds exactly, within its rounding error of `want`; None otherwise."""
    import numpy as np
    if not isinstance(got, float) or got == want:
        return None
    for name, digits, kind in (("float32", 7, np.float32), ("float16", 3, np.float16)):
        if float(kind(got)) == got and math.isclose(got, want, rel_tol=float(np.finfo(kind).eps), abs_tol=0.0):
            return name, digits
    return None


# A text met only to tell rounding from counting phrases (they agree on every text of TEXTS): one category (examples),
# three of its phrases: T = 0.4, rounded to 1 decimal 0.4, counting phrases 0.5
_T_ROUNDING_PROBE = "For instance, to illustrate: rain, for example."
# The check's texts besides TEXTS: a slip of _T_SLIPS is named only when the answer agrees with it on these too (they
# tell counting phrases from rounding, from a case slip and from counting sentence by sentence, which agree on TEXTS)
_T_EXTRA_PROBES = (_T_ROUNDING_PROBE, _T_SENTENCES_PROBE)


def _rounds_elsewhere(fn, k: int) -> bool:
    """Whether the answer is T rounded to k decimals on the rounding probe too (a crash there: no)."""
    try:
        return _same(plain_number(fn(_T_ROUNDING_PROBE)), round(coherence_T(_T_ROUNDING_PROBE), k))
    except Exception:  # noqa: BLE001 - an answer that crashes there: no evidence of rounding
        return False


@exercise("03.coherence_T")
def check_coherence_T(fn):
    # the library's word lists are a shared dict: an answer that edits them in place would change every later call of
    # the library (the trainer's reward included) for the rest of the session; they are restored and the answer refused
    import copy
    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
    not_the_library(fn, "coherence_T", coherence_T)
    lists = copy.deepcopy(TRANSITION_CATEGORIES)

    def restored() -> bool:
        """Put the lists back if the answer changed them; whether it did."""
        if TRANSITION_CATEGORIES == lists:
            return False
        TRANSITION_CATEGORIES.clear()
        TRANSITION_CATEGORIES.update(lists)
        return True
    try:
        _check_coherence_T(fn)
        # κ counted by the package's `transition_categories` (or T by its `coherence_T`) passes by construction
        not_a_wrapper(fn, (TEXTS[1],), "coherence_T", coherence_T, transition_categories,
                      how="from the rule in the text (κ = the categories with a phrase in the lower-cased text, "
                          "any(p in low for p in phrases) over TRANSITION_CATEGORIES)")
        changed = restored()
    except ExerciseFailed:
        if not restored():
            raise
        changed = True
    if changed:
        raise ExerciseFailed("your function changed TRANSITION_CATEGORIES in place (its phrases or categories): that "
                             "dict is the library's own, so every later call, the trainer's reward included, would "
                             "read the changed lists. The check put them back; read the lists, do not edit them (copy "
                             "first if you must change something).")


def _check_coherence_T(fn):
    # the library's values (and kappa), computed before the learner's function is called
    wants, kappas = [coherence_T(text) for text in TEXTS], [_kappa(text) for text in TEXTS]
    for i, text in enumerate(TEXTS):
        want, got = wants[i], _t_call(fn, text)
        if _same(got, want):
            continue
        if slip := _no_float(got, want, "Return a Python float"):
            raise ExerciseFailed(f"T({text!r}) is {want:.2f}; {slip}")
        if (kind := _low_precision(got, want)) is not None:
            name, digits = kind
            raise ExerciseFailed(f"T({text!r}) is {want:.10g}, you returned {got!r}, T computed in {name}: {name} "
                                 f"keeps about {digits} digits: return a Python float, computed in Python floats (κ "
                                 f"an int, 0.4 + 0.05 (κ - 1)), not in numpy's or torch's {name} (np.{name}(...), "
                                 "or torch.tensor(...), float32 by default): float() or .item() of a "
                                 f"{name} keeps its error.")
        # a hint names a slip only when the answer agrees with that slip on EVERY text
        try:
            gots = [plain_number(fn(t)) for t in TEXTS]
        except Exception:  # noqa: BLE001 - an answer that crashes on another text: no diagnosis
            gots = [None] * len(TEXTS)
        if (k := rounded_to(gots, wants, range(8), close=_same)) is not None and _rounds_elsewhere(fn, k):
            raise ExerciseFailed(f"T({text!r}) is {want:.10g}, you returned {got!r}: you rounded T to "
                                 + (f"{k} decimal{'s' if k > 1 else ''}" if k else "a whole number")
                                 + ". T is the exact value of the formula, no rounding: return min(0.4 + 0.05 (κ - 1), "
                                 "1.0) as computed (0 when κ = 0), without round().")
        if (why := _named_slip(fn, gots)) is not None:
            raise ExerciseFailed(f"T({text!r}) is {want:.2f}, you returned {got!r}: {why}")
        if (shared := _shared_phrase(text)) is not None and any(
                all(_same(g, slip(t)) for g, t in zip(gots, TEXTS)) for slip in _T_ONE_CATEGORY):
            phrase, cats = shared
            raise ExerciseFailed(
                f"T({text!r}) is {want:.2f} (κ = {kappas[i]}), you returned {got!r}: you credit each phrase to ONE "
                "category only (a phrase -> category dict, a phrase used up once matched, or matched phrases removed "
                "from the text). A phrase can belong to several categories and counts for each: "
                f"{phrase!r}, found here, is in {', '.join(cats[:-1])} and {cats[-1]}, and it counts for each of them, "
                f"not for one only ({_n_shared()} phrases are in two or three categories). Test every category on the "
                "whole lower-cased text, nothing used up or removed: κ = sum(any(p in low for p in phrases) for "
                "phrases in TRANSITION_CATEGORIES.values()).")
        if text == TEXTS[0] and got == 0 and all(_same(g, 0.0) for g in gots):
            from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
            sizes = [len(ws) for ws in TRANSITION_CATEGORIES.values()]
            raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = {kappas[i]}: 'as', a time phrase, is inside 'has'); "
                                 f"you returned {got!r}, and 0 on every text of the check: your function finds no "
                                 f"category in any text, while {sum(k > 0 for k in kappas)} of its {len(TEXTS)} texts "
                                 f"have some (up to κ = {max(kappas)}). A category counts when ANY ONE of its phrases "
                                 "occurs in the lower-cased text, as a substring: any(p in low for p in phrases) "
                                 f"(`all(...)` in its place would need every one of a category's {min(sizes)} to "
                                 f"{max(sizes)} phrases, which no text has).")
        if text == TEXTS[0] and got == 0:
            raise ExerciseFailed(f"T({text!r}) is {want:.2f}: the authors match each phrase as a SUBSTRING of the "
                                 "lower-cased text, so 'as' (a time word) is found inside 'has'; you returned "
                                 f"{got!r}.")
        for by in ("", " "):
            slip = [coherence_T(_unpunctuated(t, by)) for t in TEXTS]
            if slip[i] != want and all(_same(g, v) for g, v in zip(gots, slip)):
                from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
                new = sorted({p for ws in TRANSITION_CATEGORIES.values() for p in ws
                              if p in _unpunctuated(text, by) and p not in text.lower()})
                raise ExerciseFailed(f"T({text!r}) is {want:.2f}, you returned {got!r}: you removed the punctuation "
                                     f"before matching, which makes {', '.join(repr(p) for p in new)} appear across "
                                     "punctuation the text has. The authors match each phrase in "
                                     "the lower-cased text as written, punctuation kept: lower-case it, nothing else.")
        if _t_of(text) != want and all(_same(g, _t_of(t)) for g, t in zip(gots, TEXTS)):
            raise ExerciseFailed(f"T({text!r}) is {want:.2f}, you returned {got!r}: lower-case the text before matching "
                                 "('However' at the start of a sentence is the contrast word 'however'): the WHOLE "
                                 "text, once, `low = text.lower()`, then any(p in low for p in phrases).")
        fix = ("A phrase counts whatever its capitals, in all caps or mid-sentence too: lower-case the WHOLE text, "
               "`low = text.lower()`, and match every phrase in it, any(p in low for p in phrases).")
        named = [(found, how) for found, how in _CASE_SLIPS if _t_matching(text, found) != want
                 and all(_same(g, _t_matching(t, found)) for g, t in zip(gots, TEXTS))]
        if len(named) == 1:                       # two slips that read the same on every text: neither is named
            (found, how), = named
            missed = _missed_by_case(text, found)
            raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = {kappas[i]}), you returned {got!r}: {how}, so "
                                 f"{missed} {'are' if ' and ' in missed else 'is'} missed here. {fix}")
        right_elsewhere = (text == _CASE_TEXT and all(_same(g, w) for g, w, t in zip(gots, wants, TEXTS)
                                                      if t != _CASE_TEXT))
        if named or (right_elsewhere and isinstance(got, (int, float)) and not isinstance(got, bool) and got < want):
            raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = {kappas[i]}), you returned {got!r}: your T is "
                                 + ("right on every text of the check whose capitals are at sentence starts only, "
                                    "and " if right_elsewhere else "")
                                 + f"too low here, where {(capped := _missed_by_case(text, lambda t, p: p in t))} "
                                 f"{'carry' if ' and ' in capped else 'carries'} capitals: your case handling misses "
                                 f"some of them. {fix}")
        if kappas[i] == 0 and all(_same(g, w) if k else g is not None and not _same(g, 0.0)
                                  for g, w, k in zip(gots, wants, kappas)):
            raise ExerciseFailed(f"T({text!r}) is 0: no category has a phrase in it (κ = 0), and then T = 0; you "
                                 f"returned {got!r}. The formula 0.4 + 0.05 (κ - 1) is for κ >= 1 only: return "
                                 "0.0 when κ = 0 (T = 0 if κ = 0 else min(0.4 + 0.05 (κ - 1), 1)).")
        if (isinstance(got, (int, float)) and not isinstance(got, bool) and 0.4 <= got < want
                and all(_same(g, _t_capped(k, got)) for g, k in zip(gots, kappas))):
            raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = {kappas[i]}), you returned {got!r}: you cap T at "
                                 f"{got:g}; the cap is 1, min(0.4 + 0.05 (κ - 1), 1), so T keeps rising by 0.05 "
                                 "per category found (with all 12 categories it is 0.95, under the cap).")
        raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = the number of categories found, each counted once: "
                             f"T = 0 if κ = 0 else min(0.4 + 0.05 (κ - 1), 1.0)); you returned {got!r}.")
    # right on every text of TEXTS: one category in two sentences (no text of TEXTS tells counting sentence by sentence
    # from counting in the whole text)
    text = _T_SENTENCES_PROBE
    want, got = coherence_T(text), _t_call(fn, text)
    if _same(got, want):
        return
    if (why := _named_slip(fn, wants)) is not None:   # right on TEXTS: its values there are `wants`
        raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = {_kappa(text)}: only examples has a phrase in it, 'for "
                             f"example' in the first sentence, 'to illustrate' and 'for instance' in the second), you "
                             f"returned {got!r}: {why}")
    raise ExerciseFailed(f"T({text!r}) is {want:.2f} (κ = {_kappa(text)}: only examples has a phrase in it; κ = the "
                         "number of categories found in the whole text, each counted once: T = 0 if κ = 0 else "
                         f"min(0.4 + 0.05 (κ - 1), 1.0)); you returned {got!r}.")


def _named_slip(fn, gots):
    """The sentence of the first slip of _T_SLIPS the answer agrees with on every text of the check: `gots` its values
    on TEXTS, its values on _T_EXTRA_PROBES computed here (a crash there: no slip named); None when none agrees."""
    try:
        extra = [plain_number(fn(t)) for t in _T_EXTRA_PROBES]
    except Exception:  # noqa: BLE001 - an answer that crashes on a probe: no diagnosis
        return None
    for slip, why in _T_SLIPS:
        if all(_same(g, slip(t)) for g, t in zip(list(gots) + extra, list(TEXTS) + list(_T_EXTRA_PROBES))):
            return why
    return None


_NATURAL = [("My roommate never cleans the kitchen at all",
             "However, my roommate never cleans the kitchen. As a result, dishes pile up, so I asked him twice."),
            ("My dog barks at night and the neighbours complain",
             "My dog barks at night and the neighbours complain, which worries me a lot and I do not know why."),
            ("I lost my job and I feel lost",
             "I lost my job last week. I lost my job because the shop closed, and then I looked for work for days.")]
_NATURAL.append(("My flatmate never cleans the kitchen or bathroom",    # 4 of its 20 3-grams repeat: EXACTLY 1/5
                 "However, I asked him to clean the kitchen, and I asked him to clean the bathroom, so he said no again "
                 "today."))                                             # (0.19999999999999996 in floats): not above 0.2
_NATURAL.append(("My landlord will not fix the heating in my flat",   # each text <= 0.2; joined they repeat more (0.22)
                 "However, my landlord will not fix the heating, so the flat is cold, the flat is cold, the flat is cold "
                 "every night and I sleep in my coat."))
_NATURAL.append(("I lost my job last week. I lost my job because the company closed the office.",  # 2 of 14: 0.143
                 "The company shut down last week, so now I am out of work. However, I am looking for work, I am "
                 "looking for a cheaper flat, and my sister helps me because the rent is high."))  # 2 of 34: 0.059; each
#   <= 0.2, but their sum (0.2017) is above 0.2 (the product of their distinct shares, 0.807, is not below 0.8)
_NATURAL.append(("I lost my job last week. I lost my job because the company closed the office.",  # 0.143
                 "Last week the company closed its doors, so I am out of work. However, I am looking for work again, "
                 "and I am looking for a cheaper flat too, and I am looking for help, because the rent is high."))  # 0.132:
#   each <= 0.2, but their sum (0.27) is above 0.2 and the product of their distinct shares (0.74) below 0.8
_NATURAL.append(("My landlord will not fix the heating in my flat",   # 0.091 as written (3 of 33 3-grams repeat);
                 "The heating is off again. the heating is off again. THE heating is off again, however my landlord "
                 "will not fix it, so I called him twice and we sleep in coats every night now."))  # 0.212 lower-cased
_PADDED = [("My dog barks at night and the neighbours complain",
            "My dog barks and and and and and and and and and and and and and and and and and and then then then"),
           ("The rent went up and we have to move",
            "rent rent rent went up up up up up up up up up up up up up up up and we move move move move move"),
           ("My landlord will not fix the heating in my flat",        # 0.34: a mean with the concise text's 0 is 0.17
            "The flat is cold and the flat is cold and the flat is cold and the flat is cold at night, however my "
            "landlord will not fix the heating, so I called him again."),
           ("My flatmate never cleans the kitchen or bathroom",       # 0.211, just above 0.2, paid 2.73 by the paper's
            "However, I asked him to clean the kitchen and I asked him to clean the bathroom, so he said no again."),  # reward
           ("My landlord will not fix the heating in our flat",         # 8 of 39 3-grams repeat: 0.205, just above 0.2
            "However, the heating is still off. I called him, but the heating is still off. He said next week, yet the "
            "heating is still off. So we sleep in coats; the landlord never calls back and the landlord never calls us."),
           ("My neighbour plays loud music late every night",       # 10 of 49 3-grams repeat: 0.2041, which
            "However, I asked him twice to turn it down, because the music from next door keeps playing until two in "
            "the morning and the music from next door keeps playing until two in the morning so I sleep badly, work "
            "tired, and I am now thinking about calling our landlord today."),                   # round(r, 2) reads 0.2
           ("My cat cries at the door and cries at the door and at night",   # BOTH texts above 0.2 (0.25 and 0.242),
            "My cat cries at the front door every night and cries at the front door every morning and cries at the "
            "front door at noon, however I open it and she will not go out."),  # both below 0.34: a threshold of 0.5
#   pays this pair, a mean of the two (0.246 > 0.2) does not; without it the two rules agree on every pair here
           ("My dog barks at night and the neighbours complain",      # 'and' on 30 lines: 27 of 33 3-grams repeat,
            "My dog barks at night.\n" + "\n".join(["and"] * 30))]   # 0.818; words split on ' ' alone find 5 words
#   and no repeat (0.0): a home-made repetition that splits on a space, not on any whitespace, pays this pair
# 5 of its 21 3-grams repeat (0.238), the last one among them: a count that leaves the last 3-gram out
# (`range(len(w) - 3)`) reads 4 of 20, not above 0.2, and pays the pair
_PADDED.append(("My flatmate never cleans the kitchen or the bathroom",
                "I asked him to clean the kitchen on Monday, he said maybe later, and on Friday I asked him to clean "
                "the kitchen"))


# padded CONCISE summaries, natural detailed texts: the threshold 0.2 holds for the concise text too
_PADDED_CONCISE = [(_PADDED[0][1], _NATURAL[0][1]),                          # 0.68: padded through and through
                   ("My cat cries and cries and cries and cries at the front door",   # 3 of 11 3-grams repeat: 0.27
                    "My cat sits at the front door every evening and cries loudly. However, she will not go out when I "
                    "open it, so I think she wants attention or food.")]

# Natural pairs as the agents write them: a completion starts with a space, and may hold a newline or two spaces.
# L2's character ratio counts every one, so on its ramps stripping the texts or collapsing their whitespace changes the
# reward. The first pair has no space at either end (only collapsing changes it), the second starts each text with one.
_AS_WRITTEN = [("My dog barks at night and the neighbours complain",               # 2.185 as written; collapsed 2.103
                "My dog barks at night and the neighbours complain,\n\nwhich worries me  a lot."),
               (" My dog barks at night and the neighbours complain",              # 2.083 as written; stripped 2.103
                " My dog barks at night and the neighbours complain, which worries me a lot."),
               (" My dog barks at night and the neighbours complain.\n",           # 2.0056 as written; rstripped
                " My dog barks at night and the neighbours complain, which worries me a lot.\n"),   # 2.0237
               ("My landlord will not fix the heating in my flat",                 # 2.76 as written; 'for\nexample'
                "My landlord will not fix the heating, and the flat is cold at night. For\nexample, we sleep in coats "
                "and I called him twice last week.")]   # made 'for example' (newlines as spaces, or collapsed): 2.78

# An empty or whitespace-only text, in either position: no 3-gram, so `repetition` is 0.0 (not repetitive), and the
# paper's reward is 0 (L1: fewer than 8 words). The right value is the library rule's, computed in the check.
_EMPTY = [("", _NATURAL[0][1]), (_NATURAL[0][0], ""), ("   ", _NATURAL[0][1]), (_NATURAL[0][0], " \n\t "), ("", "")]


def _repetition_of(words, n: int = 3) -> float:
    """1 - distinct/total over the word n-grams of a list of words: the library's formula (n = 3) on other words, or
    with another n (a learner's slip)."""
    grams = [tuple(words[k:k + n]) for k in range(len(words) - n + 1)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def _pair_repetition(text: str) -> float:
    """`repetition` on word PAIRS (2-grams) instead of the library's 3-grams: a learner's slip."""
    return _repetition_of(text.split(), 2)


def _pairs_rule(c1: str, c2: str) -> bool:
    return _pair_repetition(c1) > 0.2 or _pair_repetition(c2) > 0.2


def _unigram_repetition(text: str) -> float:
    """The share of repeated single WORDS, 1 - distinct words / words: a learner's slip."""
    return _repetition_of(text.split(), 1)


# How a home-made `repetition` may find its words, each with the sentence that names it: 3-grams over other words.
_HOME_MADE = [
    (lambda t: _repetition_of(t.split(" ")), "You split the texts on a space, `text.split(' ')`: a word after a "
     "newline then sticks to the word before it ('night.\\nand\\nand...' is ONE word), so a text padded line by line "
     "repeats nothing. `repetition` splits on any whitespace, `text.split()`, newlines and tabs included: call "
     "`magrpo_edu.quality.repetition` itself (or split with `.split()`)."),
    (lambda t: _repetition_of(re.findall(r"\w+", t)), "You find the words with a regular expression (`\\w+`), which "
     "drops the punctuation: 'cold,' and 'cold' become one word, so a text repeats more 3-grams than "
     "`repetition` counts. `repetition` splits on whitespace, punctuation and case kept: call "
     "`magrpo_edu.quality.repetition` itself."),
    (lambda t: _repetition_of(re.findall(r"\w+", t.lower())), "You find the words with a regular expression (`\\w+`) "
     "on the lower-cased text, which drops the punctuation and the case: 'cold,' and 'cold' become one word, so "
     "a text repeats more 3-grams than `repetition` counts. `repetition` splits on whitespace, punctuation and case "
     "kept: call `magrpo_edu.quality.repetition` itself."),
    (_unigram_repetition, "You count repeated single WORDS (1 - distinct words / words): any natural text repeats "
     "'the' or 'I', so natural pairs lose their reward. `repetition` is the share of repeated word 3-GRAMS (triples "
     "of consecutive words): call `magrpo_edu.quality.repetition` itself."),
    (lambda t: _repetition_of(t.split()[:-1]), "You count the 3-grams with `range(len(w) - 3)`, one short: a text of n "
     "words has n - 2 word 3-grams, `range(len(w) - 2)`, and yours leaves out the last one, so a text whose repeats "
     "sit near its end reads another share than `repetition` gives it. Call `magrpo_edu.quality.repetition` itself "
     "(or count all n - 2 3-grams)."),
    (lambda t: _repeated_over_distinct(t.split()), "You divide the repeated 3-grams by the DISTINCT ones, (total - "
     "distinct) / distinct: `repetition` divides by ALL of them, 1 - distinct / total, so a text with exactly 1/5 of "
     "its 3-grams repeated reads 0.25 for you, above 0.2. Call `magrpo_edu.quality.repetition` itself."),
    (lambda t: _repetition_of(list(t)), "You count CHARACTER 3-grams (three characters in a row, text[k:k + 3]): "
     "`repetition` counts WORD 3-grams, triples of consecutive words of text.split(), and any natural text repeats "
     "character triples such as ' th' or 'ing'. Call `magrpo_edu.quality.repetition` itself."),
]


def _repeated_over_distinct(words) -> float:
    """(total - distinct) / distinct over the word 3-grams: the repeated 3-grams divided by the DISTINCT ones, not by
    all of them (a learner's slip)."""
    grams = [tuple(words[k:k + 3]) for k in range(len(words) - 2)]
    return (len(grams) - len(set(grams))) / len(set(grams)) if grams else 0.0


# Rules a learner may write in place of "either text above 0.2": each with the sentence that names it. A hint is given
# only when the answer agrees with that rule on every pair of the check, so that it names the learner's own rule.
_OTHER_RULES = [
    (lambda c1, c2: (repetition(c1) + repetition(c2)) / 2 > 0.2, "You average the two repetitions: the rule does not use their mean; "
     "EITHER text above 0.2 pays 0, each text compared with 0.2 on its own."),
    (lambda c1, c2: repetition(c1) + repetition(c2) > 0.2, "You add the two repetitions: the rule does not use their sum; compare EACH "
     "text's repetition with 0.2 on its own, `repetition(c1) > 0.2 or repetition(c2) > 0.2`."),
    (lambda c1, c2: (1 - repetition(c1)) * (1 - repetition(c2)) < 0.8, "You multiply the texts' shares of distinct 3-grams, "
     "(1 - r1)(1 - r2) < 0.8: the rule does not combine the texts; compare EACH text's repetition with 0.2 on its own, "
     "`repetition(c1) > 0.2 or repetition(c2) > 0.2`."),
    (lambda c1, c2: repetition(c1 + " " + c2) > 0.2, "You join the two texts into one: the rule looks at each text "
     "alone, `repetition(c1) > 0.2 or repetition(c2) > 0.2`."),
    (lambda c1, c2: repetition(c1 + c2) > 0.2, "You join the two texts into one: the rule looks at each text alone, "
     "`repetition(c1) > 0.2 or repetition(c2) > 0.2`."),
    (lambda c1, c2: repetition(c1.lower()) > 0.2 or repetition(c2.lower()) > 0.2, "You lower-case the texts before "
     "`repetition`: it compares the words exactly as written, case kept ('The', 'the' and 'THE' are three different "
     "words), so call it on the texts as given, `repetition(c1) > 0.2 or repetition(c2) > 0.2`."),
    (_pairs_rule, "You measure repetition on word PAIRS (2-grams): `repetition` is the share of repeated word "
     "3-grams (triples of consecutive words), 1 - distinct/total; call `magrpo_edu.quality.repetition` itself, "
     "`repetition(c1) > 0.2 or repetition(c2) > 0.2`."),
] + [(lambda c1, c2, r=r: r(c1) > 0.2 or r(c2) > 0.2, why) for r, why in _HOME_MADE]


def _honest_call(fn, c1: str, c2: str):
    """The learner's reward for one pair; a crash becomes a sentence (NotImplementedError still means "unsolved"), and
    so does a value of the wrong type (a str, a tuple, a numpy array or torch tensor; None, a truth value and the dict
    of levels have sentences of their own)."""
    got = plain_number(call_answer(fn, c1, c2, said=lambda exc: _key_by_position(fn, c1, c2, exc) or (
        f"honest_tldr_reward({c1[:40]!r}..., {c2[:40]!r}...) raised {_raised(exc)}. It takes the two texts "
        "and returns a number: 0 when repetition(text) > 0.2 for either text, else tldr_levels(c1, c2)[\"total\"].")))
    _honest_number(got, c1, c2)
    return got


def _key_by_position(fn, c1: str, c2: str, exc: Exception):
    """The sentence for a KeyError of a whole number (KeyError: 0): the answer indexed a dict of levels by position,
    tldr_joint_reward(...)[0] or tldr_levels(...)[0]; None for any other crash."""
    key = exc.args[0] if isinstance(exc, KeyError) and len(exc.args) == 1 else None
    if not isinstance(key, int) or is_bool(key):
        return None
    said = (f"honest_tldr_reward({c1[:40]!r}..., {c2[:40]!r}...) raised KeyError: {key!r}: you indexed a dict by "
            "position.")
    used = runs_the_library(lambda a, b: fn(a, b), (c1, c2), tldr_joint_reward, tldr_levels)
    if used is tldr_levels:
        return (f"{said} tldr_levels returns a dict of the levels, {{\"total\": ..., \"style\": ..., ...}}, one number "
                f"per level, so [{key!r}] looks for a key {key!r} it does not have: take the total by its name, "
                "tldr_levels(c1, c2)[\"total\"].")
    return (f"{said} The reward is a dict, not a list: tldr_joint_reward returns a dict of lists, one list per level "
            f"with one value per joint action, {{\"total\": [...], \"style\": [...], ...}}, so [{key!r}] looks for "
            f"a key {key!r} it does not have. Take the total by its name, then the first (only) joint action: "
            "tldr_joint_reward([[c1], [c2]])[\"total\"][0], or for one pair tldr_levels(c1, c2)[\"total\"].")


def _honest_number(got, c1: str, c2: str) -> None:
    """Refuse a reward of the wrong type (see _honest_call) with the shared sentence."""
    from collections.abc import Mapping
    if is_bool(got) or isinstance(got, Mapping):
        return
    want = 0.0 if repetition(c1) > 0.2 or repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"]
    if slip := _no_float(got, want, "Return a Python float, 0.0 for a padded pair"):
        raise ExerciseFailed(f"honest_tldr_reward({c1[:40]!r}..., {c2[:40]!r}...) is {want:.4f}; {slip}")


def _same_as(fn, rule) -> bool:
    """Whether the learner's reward agrees with `rule` (pay 0 when it holds, else the paper's total) on every pair."""
    for c1, c2 in _NATURAL + _PADDED + _PADDED_CONCISE:
        want = 0.0 if rule(c1, c2) else tldr_levels(c1, c2)["total"]
        try:
            got = plain_number(fn(c1, c2))
        except Exception:  # noqa: BLE001 - an answer that crashes elsewhere is not this rule
            return False
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isclose(got, want, abs_tol=1e-9):
            return False
    return True


def _keeps_unrepeated(fn) -> bool:
    """Whether the learner's reward is the paper's total on every natural pair whose texts repeat no 3-gram."""
    try:
        return all(math.isclose(plain_number(fn(c1, c2)), tldr_levels(c1, c2)["total"], abs_tol=1e-9)
                   for c1, c2 in _NATURAL if repetition(c1) == repetition(c2) == 0)
    except Exception:  # noqa: BLE001 - an answer that crashes or returns no number there: no such diagnosis
        return False


def _cut_hint(got, paper: float) -> str:
    """Why a padded pair's reward `got` is no cut to 0.0: None returned, or the paper's total `paper` reduced (above 0,
    below it) or pushed below 0; "" otherwise (the paper's total kept, or more: another diagnosis)."""
    if got is None:
        return (" None is no reward: the trainer averages the rewards of a group and subtracts the mean, and it needs "
                "a number for every pair. A padded pair earns nothing: return the float 0.0, not None.")
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return ""
    if 0 < got < paper:
        return (f" {got:.4g} is the paper's {paper:.4g} reduced: the rule is a cut to "
                "0.0, not a reduction. A padded pair earns nothing, whatever its levels (a reduced reward still pays "
                "padding something): return 0.0.")
    if got < 0:
        return (f" {got:.4g} is the paper's {paper:.4g} pushed below 0: the rule is a "
                "cut to 0.0, not a penalty (a reward below 0 makes padding worse than an empty text): return 0.0.")
    return ""


def _pays(fn, pairs, value) -> list:
    """For each pair, whether the learner's reward is value(c1, c2) (False where it fails or returns no number)."""
    out = []
    for c1, c2 in pairs:
        try:
            got = plain_number(fn(c1, c2))
        except Exception:  # noqa: BLE001 - an answer that crashes there: no evidence
            got = None
        out.append(not isinstance(got, bool) and isinstance(got, (int, float))
                   and math.isclose(got, value(c1, c2), abs_tol=1e-9))
    return out


def _one_level(fn):
    """The name of the one level (tldr_levels(c1, c2)[name]) the answer returns on every natural pair of the check
    (_NATURAL and _AS_WRITTEN) in place of the total; None when it returns no single level there. A level that is the
    same on all those pairs (the structure level's 0.5, the consistency's 1.0) is not named: a constant is no
    evidence of it."""
    pairs = _NATURAL + _AS_WRITTEN
    for name in _LEVELS:
        if (len({tldr_levels(c1, c2)[name] for c1, c2 in pairs}) > 1
                and all(_pays(fn, pairs, lambda c1, c2, name=name: tldr_levels(c1, c2)[name]))):
            return name
    return None


def _cuts_only_high_rewards(fn):
    """The smallest paper's total the answer zeroes, when it pays the paper's total on every pair the rule keeps,
    and cuts the pairs the rule cuts only where the paper's total is high: every padded pair it pays earns less from
    the paper than every padded pair it zeroes (`total > 1 and repetition(...) > 0.2`); None otherwise."""
    paid, zeroed = [], []
    for c1, c2 in _NATURAL + _PADDED + _PADDED_CONCISE:
        paper = tldr_levels(c1, c2)["total"]
        cut = repetition(c1) > 0.2 or repetition(c2) > 0.2
        try:
            got = plain_number(fn(c1, c2))
        except Exception:  # noqa: BLE001 - an answer that crashes there is no such rule
            return None
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return None
        if math.isclose(got, paper, abs_tol=1e-9):
            if cut:
                paid.append(paper)
        elif got == 0 and cut:
            zeroed.append(paper)
        else:
            return None
    if not paid or not zeroed or max(paid) >= min(zeroed):
        return None
    return min(zeroed)


def _never_checks_detailed(fn) -> bool:
    """Whether the answer pays the paper's total on every padded pair whose DETAILED text alone is above 0.2, while it
    cuts some pair whose concise text is padded: it tests c1 and never c2."""
    only_c2 = [(c1, c2) for c1, c2 in _PADDED if repetition(c1) <= 0.2]
    return (all(_pays(fn, only_c2, lambda c1, c2: tldr_levels(c1, c2)["total"]))
            and any(_pays(fn, _PADDED_CONCISE, lambda c1, c2: 0.0)))


def _never_checks_concise(fn) -> bool:
    """Whether the answer pays the paper's total on every pair whose CONCISE text alone is above 0.2 (having cut every
    padded detailed text before it is asked): it tests c2 and never c1."""
    return all(_pays(fn, _PADDED_CONCISE, lambda c1, c2: tldr_levels(c1, c2)["total"]))


def _calls_repetition(fn) -> bool:
    """Whether the answer runs the package's `repetition` (under any name, through the module, a wrapper): then no
    home-made repetition (word pairs, characters, other words or counts, _HOME_MADE) is its rule."""
    return runs_the_library(fn, _NATURAL[2], repetition) is not None


def _rule_hints(fn) -> str:
    """The sentences of the _OTHER_RULES the answer agrees with on every pair; the home-made repetitions left out when
    it calls `repetition` itself (an answer whose own threshold happens to cut the same pairs is no such rule)."""
    rules = _OTHER_RULES[:-len(_HOME_MADE) - 1] if _calls_repetition(fn) else _OTHER_RULES
    return "".join(dict.fromkeys(" " + text for rule, text in rules if _same_as(fn, rule)))


def _threshold_band(fn):
    """(lo, hi) when the learner's reward is "0 if max(repetition(c1), repetition(c2)) > t, else the paper's total" for
    some t in [lo, hi) on every pair of the check (lo the largest repetition it pays, hi the smallest it zeroes); None
    when no single threshold on the larger repetition explains it."""
    paid, zeroed = [], []
    for c1, c2 in _NATURAL + _PADDED + _PADDED_CONCISE:
        paper, m = tldr_levels(c1, c2)["total"], max(repetition(c1), repetition(c2))
        try:
            got = plain_number(fn(c1, c2))
        except Exception:  # noqa: BLE001 - an answer that crashes elsewhere is no threshold rule
            return None
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return None
        if math.isclose(got, paper, abs_tol=1e-9):
            paid.append(m)
        elif got == 0:
            zeroed.append(m)
        else:
            return None
    if not paid or not zeroed or max(paid) >= min(zeroed):
        return None
    return max(paid), min(zeroed)


def _as_written_hint(fn, c1: str, c2: str, want: float, got) -> str:
    """Why the learner's reward differs on a pair whose whitespace counts: the texts stripped, or collapsed."""
    levels = tldr_levels(c1, c2)
    ramp = ("on L2's ramp" if 0 < levels["length_ratio"] < 1 else
            "on L2's plateau" if levels["length_ratio"] == 1 else "at an end of L2's band")
    told = (f" For {c1!r} and {c2!r} the character ratio is {len(c2)}/{len(c1)} = {len(c2) / len(c1):.4f}, {ramp} "
            f"(L2 = {levels['length_ratio']:.4f}), and the reward {want:.4f}")
    # stripped first: on a pair where both readings give the same value, an answer that collapsed the whitespace has
    # already been refused on the pair before (whose texts have no space at either end)
    for name, how, f in (("stripped", "strip the texts (`c1, c2 = c1.strip(), c2.strip()`)", str.strip),
                         ("stripped at the end", "strip the texts' ends (`c1, c2 = c1.rstrip(), c2.rstrip()`)",
                          str.rstrip),
                         ("newlines made spaces", "make the newlines spaces (`text.replace(\"\\n\", \" \")`)",
                          lambda t: t.replace("\n", " ")),
                         ("collapsed", "collapse the texts' whitespace (`\" \".join(text.split())` or "
                          "re.sub(r\"\\s+\", \" \", ...))", lambda t: " ".join(t.split()))):
        if f(c1) != c1 or f(c2) != c2:
            other = tldr_levels(f(c1), f(c2))["total"]
            if isinstance(got, (int, float)) and not isinstance(got, bool) and math.isclose(got, other, abs_tol=1e-9):
                if len(f(c1)) == len(c1) and len(f(c2)) == len(c2):      # the ratio kept: T found a new phrase
                    from ..tasks.writing.word_lists import TRANSITION_CATEGORIES
                    new = sorted({p for ws in TRANSITION_CATEGORIES.values() for p in ws
                                  if p in f(c2).lower() and p not in c2.lower()})
                    return (f" You {how} before scoring: the reward reads the texts as the agents wrote them. In "
                            f"{c2!r} {', '.join(repr(p) for p in new)} {'appear' if len(new) > 1 else 'appears'} only "
                            "after your change, and the phrases are matched in the text as written "
                            f"(exercise 2's rule): the style level's T is {levels['coherence']:.2f}, not "
                            f"{tldr_levels(f(c1), f(c2))['coherence']:.2f}, and the reward {want:.4f}, not "
                            f"{other:.4f}. Call `repetition` and `tldr_levels` on c1 and c2 as given.")
                return (f" You {how} before scoring: the reward reads the texts as the agents wrote them. A real "
                        "completion starts with a space and may hold a newline or two spaces or end with a newline, "
                        f"and L2's character ratio counts every one.{told}; {name}, {len(f(c2))}/{len(f(c1))}, it "
                        f"pays {other:.4f}. Call `repetition` and `tldr_levels` on c1 and c2 as given.")
    return told + "."


@exercise("03.honest_tldr_reward")
def check_honest_tldr_reward(fn):
    for c1, c2 in _NATURAL:
        want = tldr_levels(c1, c2)["total"]
        got = _honest_call(fn, c1, c2)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isclose(got, want, abs_tol=1e-9):
            from collections.abc import Mapping
            r1, r2 = repetition(c1), repetition(c2)
            number = isinstance(got, (int, float)) and not isinstance(got, bool)
            if isinstance(got, Mapping):
                raise ExerciseFailed(f"for a natural pair (repetition {r1:.3f} and {r2:.3f}, neither above 0.2) you "
                                     "returned the dict of levels; the reward is one number, its \"total\": return "
                                     f"tldr_levels(c1, c2)[\"total\"], here {want:.4f}.")
            if number and want and math.isclose(got, want / 2.98, abs_tol=1e-9):
                raise ExerciseFailed(f"a natural pair (repetition {r1:.3f} and {r2:.3f}, neither above 0.2) keeps the "
                                     f"paper's reward {want:.4f}; you returned {got:.4f}, that divided by 2.98: the "
                                     "normalised reward. The exercise's reward is the paper's total as it is, on its "
                                     "own scale (up to 2.98); the table normalises afterwards, for reading only.")
            if number and (k := rounded_to(got, want, range(1, 8))) is not None:
                raise ExerciseFailed(f"a natural pair (repetition {r1:.3f} and {r2:.3f}, neither above 0.2) keeps the "
                                     f"paper's reward {want!r}; you returned {got!r}, the reward rounded to {k} "
                                     f"decimal{'s' if k > 1 else ''}. Do not round: return "
                                     "tldr_levels(c1, c2)[\"total\"] as computed.")
            if number and all(_pays(fn, _NATURAL + _AS_WRITTEN, lambda a, b: tldr_levels(b, a)["total"])):
                raise ExerciseFailed(f"a natural pair (repetition {r1:.3f} and {r2:.3f}, neither above 0.2) keeps the "
                                     f"paper's reward {want:.4f}; you returned {got!r}, which on every natural pair of "
                                     "the check is what the paper's reward pays the texts swapped, tldr_levels(c2, c1)"
                                     "[\"total\"] (the ratio len(c1) / len(c2) is then below 1.1: scoring stops "
                                     "after L1, its structure level's 0.5). The first argument is the concise text "
                                     "c1, the second the detailed c2, and the levels are not symmetric (L2's ratio is "
                                     "len(c2) / len(c1), L3 and the style level read c2 against c1): return "
                                     "tldr_levels(c1, c2)[\"total\"], the texts in the order given.")
            if number and (level := _one_level(fn)) is not None:
                raise ExerciseFailed(f"a natural pair (repetition {r1:.3f} and {r2:.3f}, neither above 0.2) keeps the "
                                     f"paper's reward {want:.4f}; you returned {got!r}, its {level} level alone, "
                                     f"tldr_levels(c1, c2)[\"{level}\"] (on every natural pair of the check). The "
                                     "reward is the paper's TOTAL, the sum of its levels: tldr_levels(c1, c2)"
                                     "[\"total\"].")
            hint = _rule_hints(fn)
            band = _threshold_band(fn) if number and got == 0 and not hint else None
            if band is not None and band[1] < 0.19 and _calls_repetition(fn):   # a threshold under 1/5: it cuts
                raise ExerciseFailed(f"a natural pair (repetition {r1:.3f} and {r2:.3f}) keeps the paper's {want:.3f}; "
                                     f"you returned {got!r}. Your threshold is below 0.2: you zero a pair once a text "
                                     f"repeats {band[1]:.3f} of its 3-grams, and pay one at {band[0]:.3f}. The "
                                     "threshold is 0.2: a text is cut when MORE than a fifth of its 3-grams repeat, "
                                     "`repetition(c) > 0.2`.")
            if number and 0 < got < want and _keeps_unrepeated(fn):
                hint += (f" Your reward pays the paper's total where neither text repeats a 3-gram, and less here, "
                         f"where a text repeats {max(r1, r2):.3f} of its 3-grams: a discount that grows with the "
                         "repetition. The rule is a cut, not a discount: up to 0.2 the pair keeps the paper's total "
                         "unchanged, above 0.2 it earns 0 (a discount still pays padding something).")
            home_made = (not _calls_repetition(fn)
                         and any(_same_as(fn, rule) for rule, _ in _OTHER_RULES[-len(_HOME_MADE) - 1:]))
            if got == 0 and max(r1, r2) > 0.19 and not home_made:
                hint += (" Its detailed text repeats exactly 1/5 of its 3-grams: not above 0.2, so it keeps its "
                         "reward. Your rule cuts at 1/5 (a threshold under 0.2, a rounded repetition, an exact count "
                         "or fraction compared with `>=`, or the distinct share 1 - repetition compared with `<= "
                         "0.8`, which reads exactly 0.8 here): compare `repetition`'s own value with 0.2 itself. "
                         + _ONE_FIFTH)
            raise ExerciseFailed(f"a natural pair (repetition {r1:.3f} and {r2:.3f}, neither above 0.2) should keep the "
                                 f"paper's reward {want:.3f}; you returned {got!r} for {c2[:50]!r}...{hint}")
    for c1, c2 in _AS_WRITTEN:
        want = tldr_levels(c1, c2)["total"]
        got = _honest_call(fn, c1, c2)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isclose(got, want, abs_tol=1e-9):
            raise ExerciseFailed(f"a natural pair as an agent writes it (repetition {repetition(c1):.3f} and "
                                 f"{repetition(c2):.3f}) should keep the paper's reward {want:.4f}; you returned "
                                 f"{got!r}.{_as_written_hint(fn, c1, c2, want, got)}")
    for c1, c2 in _PADDED + _PADDED_CONCISE:
        got = _honest_call(fn, c1, c2)
        if is_bool(got):
            raise ExerciseFailed(f"for a padded pair (repetition {repetition(c1):.3f} and {repetition(c2):.3f}) you "
                                 f"returned {got!r}, a truth value; the reward is a NUMBER, 0.0 here (or 0). The "
                                 "trainer averages the rewards of a group and subtracts the mean, and a truth value "
                                 f"is a yes/no that only happens to count as {int(got)} in Python: return 0.0.")
    for c1, c2 in _PADDED:
        paper = tldr_levels(c1, c2)["total"]
        got = _honest_call(fn, c1, c2)
        if got != 0:
            r1, r2 = repetition(c1), repetition(c2)
            said = (f"the padded detailed text {c2[:50]!r}... (repetition {r2:.4f} > 0.2, the concise text's {r1:.2f}) "
                    f"earns {paper:.3f} from the paper's reward; yours should pay 0, it paid {got!r}.")
            if dropped := _drops_one_level(fn):
                name, (d1, d2) = dropped
                lv = tldr_levels(d1, d2)
                raise ExerciseFailed(said + f" Your reward for a padded pair is the paper's total minus its {name} "
                                     f"level alone (for {d2[:40]!r}... {lv['total']:.4f} - {lv[name]:.4f} = "
                                     f"{lv['total'] - lv[name]:.4f}): the cut zeroes the WHOLE reward, not one level. "
                                     "A padded pair earns 0.0, whatever its levels: `if repetition(c1) > 0.2 or "
                                     "repetition(c2) > 0.2: return 0.0`, before any level counts.")
            if _reads_a_percent(fn):
                raise ExerciseFailed(said + f" Your threshold reads repetition as a percent: `repetition` returns a "
                                     f"share in [0, 1] ({r2:.4f} here, not {100 * r2:.2f}), so a threshold of 20 is "
                                     "never reached and no pair is ever cut. The threshold is 0.2, not 20: "
                                     "`repetition(c1) > 0.2 or repetition(c2) > 0.2`.")
            if cut := _cut_hint(got, paper):
                raise ExerciseFailed(said + cut)
            if (high := _cuts_only_high_rewards(fn)) is not None:
                raise ExerciseFailed(said + " Your reward cuts a padded pair only where the paper's reward is high: "
                                     f"it zeroed the padded pairs paying {high:.3f} or more, and paid this one its "
                                     f"{paper:.3f}. The cut does not look at the reward: a padded pair earns 0.0 "
                                     "whatever its levels pay, `if repetition(c1) > 0.2 or repetition(c2) > 0.2: "
                                     "return 0.0` first, then the paper's total.")
            if r1 <= 0.2 and _never_checks_detailed(fn):
                raise ExerciseFailed(said + " You test the concise text c1 only: you never checked the detailed text "
                                     "c2, and padding there goes unpunished. Test EACH text: "
                                     "`repetition(c1) > 0.2 or repetition(c2) > 0.2` pays 0.")
            band = _threshold_band(fn)
            if band is not None and band[0] > 0.2:
                hint = (f" Your rule pays every pair whose texts repeat at most {band[0]:.4f} of their 3-grams and "
                        f"zeroes those from {band[1]:.4f}: a threshold between the two (or a rounded repetition), "
                        "above 0.2. The threshold is 0.2 itself, for each text: "
                        "`repetition(c1) > 0.2 or repetition(c2) > 0.2`.")
            elif _same_as(fn, _OTHER_RULES[-len(_HOME_MADE)][0]):           # words split on ' '
                hint = " " + _OTHER_RULES[-len(_HOME_MADE)][1]
            else:
                hint = " One repeating text is enough: EITHER text above 0.2 pays 0." + _rule_hints(fn)
            if r2 < 0.22:
                hint += (f" Its repetition, {r2:.4f}, is only just above 0.2: the threshold is 0.2 itself, not a "
                         "rounder number above it.")
            raise ExerciseFailed(said + hint)
    for c1, c2 in _PADDED_CONCISE:
        paper = tldr_levels(c1, c2)["total"]
        got = _honest_call(fn, c1, c2)
        if got != 0:
            r1, r2 = repetition(c1), repetition(c2)
            if cut := _cut_hint(got, paper):
                raise ExerciseFailed(f"the padded concise text {c1[:50]!r}... (repetition {r1:.4f} > 0.2, the detailed "
                                     f"text's {r2:.2f}) earns {paper:.3f} from the paper's reward; yours should pay 0, "
                                     f"it paid {got!r}.{cut}")
            if _never_checks_concise(fn):
                raise ExerciseFailed("the check must apply to BOTH texts: a padded concise summary should pay 0 too; "
                                     f"yours paid {got!r}, the paper's reward, for the concise text {c1[:50]!r}... "
                                     f"(repetition {r1:.2f}). You test the detailed text c2 only: you never checked "
                                     "the concise text c1. Test EACH text: `repetition(c1) > 0.2 or repetition(c2) > "
                                     "0.2` pays 0.")
            if r1 > 0.5:
                raise ExerciseFailed("the check must apply to BOTH texts: a padded concise summary should pay 0 too; "
                                     f"yours paid {got!r} for the concise text {c1[:50]!r}... (repetition {r1:.2f}).")
            raise ExerciseFailed(f"the concise text {c1!r} repeats {r1:.4f} of its 3-grams, above 0.2 (the detailed "
                                 f"text's {r2:.2f}); the paper's reward pays {paper:.3f}, yours should pay 0, it paid "
                                 f"{got!r}. The threshold is the same 0.2 for the concise summary as for the detailed "
                                 "one: `repetition(c1) > 0.2 or repetition(c2) > 0.2`." + _rule_hints(fn))
    for c1, c2 in _EMPTY:
        want = 0.0 if repetition(c1) > 0.2 or repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"]
        which = " and ".join(name for name, t in (("concise", c1), ("detailed", c2)) if not t.strip())
        got = plain_number(call_answer(fn, c1, c2, said=lambda exc, c1=c1, c2=c2, which=which, want=want: (
            f"honest_tldr_reward({c1[:40]!r}, {c2[:40]!r}) raised {_raised(exc)}. An empty (or "
            f"whitespace-only) {which} text is a text like any other: it has no word 3-gram, so `repetition` returns "
            f"0.0 for it (it does not repeat itself), and it scores the paper's reward, {want:g} at L1 (fewer than 8 "
            "words); return that number, without failing on it.")))
        _honest_number(got, c1, c2)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isclose(got, want, abs_tol=1e-9):
            raise ExerciseFailed(f"honest_tldr_reward({c1[:40]!r}, {c2[:40]!r}) should be {want:g}; you returned "
                                 f"{got!r}. An empty (or whitespace-only) {which} text has repetition 0 (no word "
                                 "3-gram: it does not repeat itself), so it scores the paper's reward, "
                                 f"tldr_levels(c1, c2)[\"total\"], which is {want:g} at L1 (fewer than 8 words). "
                                 "Return that number: the rule gives it, an empty text needs no case of its own.")


# What the check says about 1/5 and the threshold: `repetition` is 1.0 - distinct / total, and 1.0 minus a float in
# [0.5, 1] is exact, a multiple of 2**-53, which the float 0.2 is not; so no text reads exactly 0.2 and `> 0.2` and
# `>= 0.2` on its value cut the same texts (a count or a fraction of one's own compared with `>=` does reach 1/5)
_ONE_FIFTH = ("`repetition` returns 0.19999999999999996 for exactly 1/5, never 0.2, so `repetition(text) > 0.2` and "
              "`repetition(text) >= 0.2` agree on every text: either keeps this pair's reward.")


def _with_repetition(fn, stand_in, c1: str, c2: str, call=None):
    """call(fn, c1, c2) (default: fn(c1, c2)) with every way the answer reaches the package's `repetition` (a name in
    its own globals, under that name or another, or the module's attribute `quality.repetition`) rebound to
    `stand_in` for this call only, and restored afterwards."""
    import magrpo_edu.quality as quality
    names = getattr(fn, "__globals__", None)
    aliases = [k for k, v in names.items() if v is repetition] if isinstance(names, dict) else []
    for k in aliases:
        names[k] = stand_in
    quality.repetition = stand_in
    try:
        return (call or (lambda f, a, b: f(a, b)))(fn, c1, c2)
    finally:
        quality.repetition = repetition
        for k in aliases:
            names[k] = repetition


def _reads_a_percent(fn) -> bool:
    """Whether the answer's threshold is on the percent scale (`repetition(t) > 20`): with `repetition` returning 100
    times its share, it cuts exactly the pairs of the check that the rule cuts (and pays the paper's total elsewhere);
    for an answer that reaches no `repetition` to rebind, whether it never cuts and holds the constant 20."""
    pairs = _NATURAL + _PADDED + _PADDED_CONCISE
    right = [0.0 if repetition(c1) > 0.2 or repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"] for c1, c2 in pairs]
    try:
        gots = [plain_number(_with_repetition(fn, lambda t: 100 * repetition(t), c1, c2)) for c1, c2 in pairs]
    except Exception:  # noqa: BLE001 - an answer that crashes there is no percent threshold
        return False
    if all(_same(g, w) for g, w in zip(gots, right)):
        return True

    def consts(code):
        for c in getattr(code, "co_consts", ()):
            yield from consts(c) if hasattr(c, "co_consts") else (c,)
    return (all(_pays(fn, pairs, lambda c1, c2: tldr_levels(c1, c2)["total"]))
            and any(isinstance(c, (int, float)) and not isinstance(c, bool) and c == 20
                    for c in consts(getattr(fn, "__code__", None))))


# The levels an answer may drop, alone, for a padded pair (in place of the whole reward): the style level first
_LEVELS = ("style", "coherence", "consistency", "uniqueness", "length_ratio", "structure")


def _drops_one_level(fn):
    """(the level's name, a padded pair where it is not 0) when the answer pays the paper's total minus that one level
    for every pair the rule cuts (and the paper's total elsewhere), on every pair of the check; None otherwise."""
    pairs = _NATURAL + _PADDED + _PADDED_CONCISE
    cut = [(c1, c2) for c1, c2 in pairs if repetition(c1) > 0.2 or repetition(c2) > 0.2]
    for name in _LEVELS:
        shown = next(((c1, c2) for c1, c2 in cut if tldr_levels(c1, c2)[name] != 0), None)
        if shown is None:
            continue
        value = (lambda c1, c2, name=name: tldr_levels(c1, c2)["total"]
                 - (tldr_levels(c1, c2)[name] if (c1, c2) in cut else 0.0))
        if all(_pays(fn, pairs, value)):
            return name, shown
    return None
