"""Checks of notebook 09's exercises (the paper's arXiv-expansion task): the reward's vocabulary level L3,
and where a joint answer stops on the reward's gated ladder."""
from __future__ import annotations

import math
import re

from ..tasks.writing.reward import arxiv_length_level, arxiv_levels, arxiv_stop_level, arxiv_unique_level, ramp_level, \
    unique_words, word_count
from . import ExerciseFailed, call_answer, exercise, not_a_wrapper as _not_a_wrapper, \
    not_the_library as _not_the_library, plain_number, rounded_to, runs_the_library

_RATIOS = [0.3, 0.4999, 0.5, 0.55, 0.6, 0.65, 0.7, 1.0, 1.3, 1.35, 1.45, 1.5, 1.7, 1.7001, 2.0, 2.5, 4.0, 0.0, 1e6,
           0.5123,   # level 0.03075: rounded to 4 decimals it reads 0.0307
           100 / 150, 200 / 150]   # levels 0.41666... and 0.45833...: no finite decimals, rounded to 6 or 7 they differ


def _tldr_vocabulary(u):
    """TL;DR's L3, the level the arXiv one is easily confused with: None below 1.3, a ramp up to 0.5 at 2, then 0.5."""
    return None if u < 1.3 else 0.5 if u >= 2.0 else 0.5 * (u - 1.3) / 0.7


def _same_levels(fn, reading) -> bool:
    """Whether `fn` gives `reading`'s level (None included) on every probed ratio."""
    try:
        for u in _RATIOS:
            got, want = plain_number(fn(u)), reading(u)
            if (got is None) != (want is None) or (want is not None and not (
                    isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12))):
                return False
        return True
    except Exception:  # noqa: BLE001 - an answer that crashes somewhere is not this reading
        return False


def _on_flat(u) -> bool:
    return 0.7 <= u <= 1.3


# the arXiv L3 read with its 0.5 scale slipped: (reading, what it does, what to do)
_SCALE_SLIPS = [
    (lambda u: None if (v := arxiv_unique_level(u)) is None else 2 * v,
     "on every ratio your points are twice the level's (1.0 on [0.7, 1.3], ramps from 0 up to 1.0): you scored L3 "
     "out of 1", "L3 is worth at most 0.5, not 1: multiply the whole level by 0.5, 0.5 on [0.7, 1.3], "
     "0.5 * (u - 0.5) / 0.2 on the rising ramp, 0.5 * (1.7 - u) / 0.4 on the falling one"),
    (lambda u: 1.0 if _on_flat(u) else arxiv_unique_level(u),
     "your ramps are right, but on the flat [0.7, 1.3] you pay 1.0: the top of L3 is 0.5, where the ramps arrive",
     "return 0.5 on [0.7, 1.3], not 1.0 (L3 is worth at most 0.5)"),
    (lambda u: None if (v := arxiv_unique_level(u)) is None else v if _on_flat(u) else 2 * v,
     "your flat 0.5 is right, but your ramps climb from 0 to 1.0 at u = 0.7 and fall from 1.0 at u = 1.3: you left "
     "out the ramps' 0.5 scale. (u - 0.5) / 0.2 and (1.7 - u) / 0.4 are the fractions of the way, from 0 to 1",
     "multiply them by the top, 0.5: 0.5 * (u - 0.5) / 0.2 on the rising ramp, 0.5 * (1.7 - u) / 0.4 on the "
     "falling one"),
]


_RISE = (0.52, 0.55, 0.65, 0.68)        # on the rising ramp: (outer pair, inner pair), a slope from each pair
_FALL = (1.62, 1.68, 1.32, 1.38)        # on the falling ramp: (outer pair, inner pair)
_FLAT = (0.7, 0.9, 1.0, 1.3)


def _ramp_slip(fn) -> str:
    """The sentence on an answer whose flat 0.5 is right and whose ramps have the wrong width (each ramp's slope read
    off two pairs of points on it: 0.5 over 0.2 of u, or over 0.4) or run the wrong way (the two ramps' formulas
    swapped); '' for any other answer."""
    try:
        at = {u: plain_number(fn(u)) for u in _RISE + _FALL + _FLAT}
        stop = [plain_number(fn(u)) for u in (1.5, 1.5001, 1.55)]   # a falling ramp that ends, and stops, at 1.5
    except Exception:   # noqa: BLE001 - an answer that crashes somewhere gets no diagnosis
        return ""
    if at[_FALL[0]] is None and at[_FALL[1]] is None and stop[1] is None and stop[2] is None \
            and (stop[0] is None or isinstance(stop[0], (int, float)) and not isinstance(stop[0], bool)
                 and abs(stop[0]) < 1e-9) \
            and all(isinstance(at[x], (int, float)) and not isinstance(at[x], bool) and math.isclose(
                at[x], arxiv_unique_level(x), rel_tol=1e-9, abs_tol=1e-12) for x in _RISE + _FLAT) \
            and all(isinstance(at[x], (int, float)) and not isinstance(at[x], bool) for x in _FALL[2:]) \
            and math.isclose((at[_FALL[3]] - at[_FALL[2]]) / (_FALL[3] - _FALL[2]), -0.5 / 0.2, rel_tol=1e-6):
        return (" Your flat 0.5 and your rising ramp are right, but your falling ramp moves 0.5 over only 0.2 of u, "
                "the rising ramp's width copied: it reaches 0 at u = 1.5 (L2's upper edge, not L3's), and above 1.5 "
                "your level is None, a stop. The falling ramp is twice as wide, 0.4, from 0.5 at u = 1.3 down to 0 "
                "at 1.7, 0.5 * (1.7 - u) / 0.4, and scoring goes on up to 1.7 (None only above it). The two ramps "
                "are not mirror images.")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in at.values()):
        return ""

    def right(us) -> bool:
        return all(math.isclose(at[u], arxiv_unique_level(u), rel_tol=1e-9, abs_tol=1e-12) for u in us)

    def slopes(us) -> list:
        return [(at[us[i + 1]] - at[us[i]]) / (us[i + 1] - us[i]) for i in (0, 2)]

    def pace(ss, width: float) -> bool:            # some stretch moves 0.5 over `width` of u
        return any(math.isclose(abs(x), 0.5 / width, rel_tol=1e-6) for x in ss)
    if not right(_FLAT):
        return ""
    rise, fall = slopes(_RISE), slopes(_FALL)
    rise_ok, fall_ok = right(_RISE), right(_FALL)
    short = "0 at u = 0.5 up to 0.5 at 0.7, 0.5 * (u - 0.5) / 0.2"
    long = "0.5 at u = 1.3 down to 0 at 1.7, 0.5 * (1.7 - u) / 0.4"
    if all(x < 0 for x in rise) and all(x > 0 for x in fall):
        return (" Your flat 0.5 is right, but your ramps run the wrong way: below 0.7 your level falls as u grows, "
                "above 1.3 it rises (each ramp's formula sits on the other's stretch?). The level rises towards the "
                f"flat top and falls after it: from {short} on [0.5, 0.7), from {long} on (1.3, 1.7].")
    if rise_ok and not fall_ok and pace(fall, 0.2) and not pace(fall, 0.4):
        return (" Your flat 0.5 and your rising ramp are right, but your falling ramp moves 0.5 over only 0.2 of u, "
                "the rising ramp's width copied: the falling ramp is twice as wide, 0.4, from " + long + ". The two "
                "ramps are not mirror images.")
    if fall_ok and not rise_ok and pace(rise, 0.4) and not pace(rise, 0.2):
        return (" Your flat 0.5 and your falling ramp are right, but your rising ramp moves 0.5 over 0.4 of u, the "
                "falling ramp's width copied: the rising ramp is half as wide, 0.2, from " + short + ". The two "
                "ramps are not mirror images.")
    if not rise_ok and not fall_ok and pace(rise, 0.4) and pace(fall, 0.2) and not pace(rise, 0.2) \
            and not pace(fall, 0.4):
        return (" Your flat 0.5 is right, but your ramps' widths are swapped: yours rises over 0.4 of u and falls "
                f"over 0.2. The rising ramp is the short one, 0.2 wide, from {short}; the falling one is 0.4 wide, "
                f"from {long}.")
    return ""


def _vocabulary_slip(fn) -> str:
    """The sentence on an answer whose numbers are the level's with its 0.5 scale slipped, or the level's rounded, on
    EVERY probed ratio, or whose ramps have the wrong width or direction (_ramp_slip) ('' for any other answer): what
    it does, and what to do."""
    for reading, what, do in _SCALE_SLIPS:
        if _same_levels(fn, reading):
            return f" {what[0].upper()}{what[1:]}; {do}."
    ramps = _ramp_slip(fn)
    if ramps:
        return ramps
    try:
        pairs = [(plain_number(fn(u)), arxiv_unique_level(u)) for u in _RATIOS]
    except Exception:   # noqa: BLE001 - an answer that crashes somewhere is no rounding
        return ""
    if any((g is None) != (w is None) or (w is not None and not isinstance(g, (int, float))) for g, w in pairs):
        return ""
    inside = [(u, g, w) for u, (g, w) in zip(_RATIOS, pairs) if w is not None]
    k = rounded_to([g for _, g, _ in inside], [w for _, _, w in inside], digits=range(1, 8))
    if k is None:
        return ""
    u, g, w = next(x for x in inside if abs(x[1] - x[2]) > 1e-9)
    return (f" On every ratio your points are the level's rounded to {k} decimal{'s' if k > 1 else ''} (at u = {u:.6g} "
            f"the level is {w:.{max(6, k + 3)}g}, yours {g:.{max(6, k + 3)}g}): return the exact value, round nothing "
            "(the reward adds the levels as they are).")


def _level_text(u, want) -> str:
    """What the level is at u, in words, for a message on an answer of the wrong type."""
    return (f"At u = {u} scoring stops (u is outside [0.5, 1.7]): return None itself." if want is None else
            f"At u = {u} the level is {want:.4f}: return it as a Python float ({want!r}).")


def _wrong_type(fn, u, got, want) -> str:
    """The sentence on an answer that is neither a number nor None at u (a str, a bool, a list, ...): its type named,
    and what to return instead; '' for a Python int or float, or None (judged by value). Tensors and arrays are said
    apart (above)."""
    if got is None or isinstance(got, (int, float)) and not isinstance(got, bool):
        return ""
    head = f"vocabulary_level({u}) returned "
    if isinstance(got, str):
        try:
            held = float(got)
        except ValueError:
            held = None
        right = (" (the text of the right number: only its type is wrong)" if want is not None and held is not None
                 and math.isclose(held, want, rel_tol=1e-9, abs_tol=1e-12) else
                 " (the text 'None' is a string, not None)" if want is None and got.strip() == "None" else "")
        return (f"{head}the str {got!r}, a string{right}: return the points as a number, a Python float, or None "
                f"where scoring stops; no str(...), no quotes, no f-string around it. {_level_text(u, want)}")
    if isinstance(got, bool):
        try:   # a test of whether u is inside [0.5, 1.7], returned instead of the points?
            inside = all(plain_number(fn(x)) is (arxiv_unique_level(x) is not None) for x in _RATIOS)
        except Exception:   # noqa: BLE001 - an answer that crashes somewhere gets no more said
            inside = False
        return (f"{head}the bool {got!r}, a truth value"
                + (" (on every ratio yours is whether u is inside [0.5, 1.7], whether scoring goes on)"
                   if inside else "")
                + ": return the points, a number, or None where scoring stops. A bool is neither: False is not None, "
                f"and True is no level. {_level_text(u, want)}")
    return (f"{head}a {type(got).__name__}, {got!r}: return the points as one number, a Python float, or None where "
            f"scoring stops; not a {type(got).__name__} holding it (`return x,` with a trailing comma makes a tuple). "
            f"{_level_text(u, want)}")


def _low_precision(raw, got, want):
    """("float32", 7) or ("float16", 3) when the answer at one ratio is the level computed in that precision: a numpy
    float32 or float16 returned, or a Python float that type holds exactly (float() of it), within its error of the
    level (rounded to it, or computed in it); None otherwise."""
    import numpy as np

    if not isinstance(got, float) or want is None or got == want:
        return None
    for name, digits, kind, tol in (("float32", 7, np.float32, 1e-5), ("float16", 3, np.float16, 1e-2)):
        returned = type(raw).__module__ == "numpy" and type(raw).__name__ == name
        if (returned or float(kind(got)) == got) and math.isclose(got, want, rel_tol=tol, abs_tol=tol / 100):
            return name, digits
    return None


@exercise("09.vocabulary_level")
def check_vocabulary_level(fn):
    _not_the_library(fn, "vocabulary_level", arxiv_unique_level)
    if _same_levels(fn, _tldr_vocabulary):
        raise ExerciseFailed("your levels are TL;DR's L3 on every ratio tried: None below 1.3, a ramp up to 0.5 at "
                             "u = 2, then 0.5 for any u >= 2. The arXiv L3 is another shape: 0.5 on [0.7, 1.3], a "
                             "ramp from 0 at u = 0.5 up to 0.5 at 0.7 and from 0.5 at 1.3 down to 0 at 1.7, and None "
                             "(scoring stops) outside [0.5, 1.7]; both ends, 0.5 and 1.7, are inside with 0 points.")
    for u in _RATIOS:
        raw = call_answer(fn, u, said=lambda exc, u=u: (
            f"vocabulary_level({u}) raised {type(exc).__name__}: {exc}. It takes the ratio u, a "
            "number, and returns the points (a number) or None where scoring stops."))
        got = plain_number(raw)
        want = arxiv_unique_level(u)
        if got is not None and not isinstance(got, (int, float)) and hasattr(got, "item"):
            kind = f"{type(got).__module__.split('.')[0]} {type(got).__name__}"
            raise ExerciseFailed(f"vocabulary_level({u}) returned a {kind} ({got!r}): return a Python float, the points "
                                 "(e.g. 0.5, or float(x) of a computed tensor), or None where scoring stops; not a "
                                 "tensor or an array, 0-d too. The level "
                                 + ("is None here (u is outside [0.5, 1.7])." if want is None else f"is {want:.4f} here."))
        if told := _wrong_type(fn, u, got, want):
            raise ExerciseFailed(told)
        if want is None:
            if got is not None:
                raise ExerciseFailed(f"vocabulary_level({u}) should be None (scoring stops: u is outside [0.5, 1.7]), "
                                     f"you returned {got!r}." + (
                                         " Unlike TL;DR's L3, the arXiv level also stops when the method text has MANY "
                                         "more distinct words than the background." if u > 1.7 else
                                         " The method text has far FEWER distinct words than the background (u below "
                                         "0.5): the ladder stops there too, with None, not a level of 0."
                                         + (" u = 0 (no unique word in the method text) is no exception: None."
                                            if u == 0 else "")))
            continue
        if got is None or isinstance(got, bool) or not isinstance(got, (int, float)):
            edge = " Both ends of [0.5, 1.7] are inside: the level pays 0 there and scoring goes on." if u in (0.5, 1.7) else ""
            raise ExerciseFailed(f"vocabulary_level({u}) should be {want:.4f} points (scoring goes on), you returned "
                                 f"{got!r}.{edge}")
        if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
            if (kind := _low_precision(raw, got, want)) is not None:
                name, digits = kind
                shown = (f"a numpy {name}, {got:.10g}" if type(raw).__module__ == "numpy" else
                         f"{got:.10g}, a number {name} holds exactly")
                raise ExerciseFailed(f"vocabulary_level({u}) should be {want:.10g}, you returned {shown}: the level "
                                     f"computed in {name} (np.{name}(...)"
                                     + (", or a torch tensor, float32 by default" if name == "float32" else "")
                                     + f"), {abs(got - want):.1g} off. {name} keeps about {digits} digits: return a Python "
                                     "float computed in Python floats (u and the corners 0.5, 0.7, 1.3, 1.7 as they "
                                     f"are), not in numpy's or torch's {name}; float() or .item() of a {name} keeps "
                                     "its error.")
            slip = _vocabulary_slip(fn)
            shown = next((f"{want:.{k}f}", f"{got:.{k}f}") for k in range(4, 13)   # 4 decimals, more where those agree
                         if f"{want:.{k}f}" != f"{got:.{k}f}" or k == 12)
            raise ExerciseFailed(f"vocabulary_level({u}) should be {shown[0]}, you returned {shown[1]}." + (slip or (
                " The level is worth at most 0.5: 0.5 on [0.7, 1.3], a ramp from 0 at u = 0.5 up to 0.5 at 0.7, and "
                "from 0.5 at 1.3 down to 0 at 1.7.")))
    for u in _RATIOS:       # every ratio: an answer may write out one stretch (the flat 0.5) and hand the rest over
        _not_a_wrapper(fn, (u,), "vocabulary_level", arxiv_unique_level, ramp_level)


def _text(n_words: int, word_len: int = 5, distinct: int | None = None, start: int = 0) -> str:
    """n_words whitespace-separated words of word_len letters, `distinct` of them different (default: all)."""
    distinct = n_words if distinct is None else distinct
    letters = "abcdefghijklmnopqrstuvwxyz"

    def word(i: int) -> str:
        i += start
        w = ""
        while len(w) < word_len:
            w += letters[i % 26]
            i //= 26
        return ("q" + w)[:word_len]
    return " ".join(word(i % distinct) for i in range(n_words))


def _exact(n_words: int, chars: int, distinct: int | None = None, start: int = 0, sep_every: int = 0) -> str:
    """n_words words, `distinct` of them different (each repeated equally often), exactly `chars` characters
    in all, spaces included; with sep_every = k, every k-th separator is a newline instead of a space."""
    distinct = n_words if distinct is None else distinct
    reps, rest = divmod(n_words, distinct)
    letters, extra = divmod(chars - (n_words - 1), reps)
    assert rest == 0 and extra == 0, "choose n_words, chars and distinct that fit exactly"
    base, longer = divmod(letters, distinct)
    abc = "abcdefghijklmnopqrstuvwxyz"

    def word(k: int) -> str:
        i = k + start
        return (abc[i // 26 % 26] + abc[i % 26]).ljust(base + (k < longer), "z")
    words = [word(i % distinct) for i in range(n_words)]
    out = words[0]
    for i, w in enumerate(words[1:], 1):
        out += ("\n" if sep_every and i % sep_every == 0 else " ") + w
    assert len(out) == chars and len(set(words)) == distinct
    return out


def _with_stopwords() -> str:
    """200 words: 25 distinct content words and 35 distinct stopwords of the authors' list, in turn."""
    from ..tasks.writing.reward import STOPWORDS

    pool = _text(25, 5, distinct=25, start=900).split() + sorted(w for w in STOPWORDS if w.isalpha() and len(w) >= 3)[:35]
    return " ".join(pool[i % len(pool)] for i in range(200))


def _with_numbers() -> str:
    """200 words: 40 distinct words of letters and 60 distinct years (1950 to 2009), each twice."""
    words = _text(40, 5, distinct=40, start=600).split() + [str(1950 + k) for k in range(60)]
    return " ".join(words[i % 100] for i in range(200))


def _hyphenated() -> str:
    """200 whitespace words, each two 3-letter parts joined by a hyphen ('qsh-qth'): 120 distinct compounds built
    from 60 distinct parts, so 60 unique \\b\\w+\\b words (a hyphen is not \\w) but 120 if a hyphen joined them."""
    parts = _text(60, 3, distinct=60, start=200).split()
    compounds = [f"{parts[i]}-{parts[(i + d) % 60]}" for d in (1, 2) for i in range(60)]
    return " ".join(compounds[i % 120] for i in range(200))


def _accented() -> str:
    """200 words of 5 letters, 100 distinct, each with an accented letter in the middle ('abécd'): \\w matches 'é',
    so 100 unique words; letters a-z only would split each into two pieces drawn from 10, 10 unique words."""
    pool = ["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st"]
    words = [f"{x}é{y}" for x in pool for y in pool]
    return " ".join(words[i % 100] for i in range(200))


def _tabbed(n_words: int, word_len: int, start: int = 0) -> str:
    """n_words words separated by a space and a tab in turn: str.split() splits at both."""
    words = _text(n_words, word_len, start=start).split()
    return "".join(w + (" " if i % 2 else "\t") for i, w in enumerate(words))[:-1]


def _underscored() -> str:
    """140 whitespace words: 100 distinct compounds of two 3-letter parts joined by '_' ('qkp_qlp'), the first again
    40 times: 100 unique \\b\\w+\\b words (`_` is \\w: 'key_ir_tort' is one word), 200 parts if '_' split them, none
    if \\b[^\\W_]+\\b looked for them (no word boundary inside a compound)."""
    parts = _text(200, 3, start=400).split()
    compounds = [f"{parts[2 * i]}_{parts[2 * i + 1]}" for i in range(100)]
    return " ".join(compounds + compounds[:1] * 40)


def _accents_for_z(text: str) -> str:
    """The text with every 'z' (the padding letter of _exact) an 'é': as many characters, more UTF-8 bytes."""
    return text.replace("z", "é")


# (why, background c1, method c2): each case probes one gate or one edge
_CASES = [
    (0, "both texts in the window, same length and vocabulary", _text(200), _text(200, start=7)),
    (1, "the background is too short (100 words)", _text(100), _text(200)),
    (1, "the method text is too long (300 words), the background is fine", _text(200), _text(300)),
    (1, "the method text is too short (100 words), the background is fine", _text(200), _text(100)),
    (1, "exactly 128 and 256 words: the window's edges are inside", _text(128, 6), _text(256, 3)),
    (1, "hyphenated words: 'state-of-the-art' is ONE whitespace word (200 words, not 800)",
     " ".join(["state-of-the-art"] * 200), " ".join(["state-of-the-art"] * 200)),
    (2, "the method text has twice the characters (long words): L2 stops", _text(200, 4), _text(200, 9)),
    (2, "ratio chars(c2)/chars(c1) = 1.33 passes L2 on its ramp (c1/c2 = 0.75 would not)", _text(200, 5), _text(200, 7)),
    (2, "ratio chars(c2)/chars(c1) = 799/1000 = 0.799, just below 0.8: L2 stops (the lower edge is 0.8 itself: a "
     "bound below it, such as 0.78 or 0.795, lets this pair through, and so does l rounded to 1 or 2 decimals, which "
     "reads 0.8)", _exact(200, 1000), _exact(200, 799, start=300)),
    (3, "the method text has 2.5x the distinct words: L3 stops", _text(200, 5, distinct=40), _text(200, 5, distinct=100)),
    (3, "the method text has 1.5x the distinct words: L3 pays a ramp, scoring goes on", _text(200, 5, distinct=60),
     _text(200, 5, distinct=90)),
    (3, "case does not count: 'Word' and 'word' are one unique word", _text(200, 5, distinct=49),
     " ".join(w.capitalize() if i % 2 else w for i, w in enumerate(_text(200, 5, distinct=49).split()))),
    (3, "unique-word ratio 127/255 = 0.498, just below 0.5: L3 stops (the lower edge is 0.5 itself: a bound below it, "
     "such as 0.3 or 0.45, lets this pair through, and so does u rounded to 1 or 2 decimals, which reads 0.5)",
     _exact(255, 1531), _exact(254, 1531, distinct=127, start=300)),
    (2, "ratio chars(c2)/chars(c1) = 1000/1250 = 0.8 exactly: the edge is inside, L2 goes on",
     _exact(200, 1250), _exact(200, 1000, start=300)),
    (2, "ratio chars(c2)/chars(c1) = 1500/1000 = 1.5 exactly: the edge is inside, L2 goes on",
     _exact(200, 1000), _exact(200, 1500, start=300)),
    (3, "unique-word ratio 50/100 = 0.5 exactly: the edge is inside, L3 goes on",
     _exact(200, 1199, distinct=100), _exact(200, 1199, distinct=50, start=300)),
    (3, "unique-word ratio 170/100 = 1.7 exactly: the edge is inside, L3 goes on",
     _exact(200, 1199, distinct=100), _exact(170, 1199, start=300)),
    (3, "unique-word ratio 55/100 = 0.55 (method over background; background over method would be 1.82)",
     _exact(200, 1199, distinct=100), _exact(220, 1199, distinct=55, start=300)),
    (2, "characters are len of the text, spaces included: 819/599 = 1.37 (without spaces 620/400 = 1.55 would stop)",
     _exact(200, 599), _exact(200, 819, start=300)),
    (1, "a background of 130 words, some separated by line breaks: whitespace words are str.split(), not split(' ')",
     _exact(130, 780, sep_every=10), _exact(200, 900, start=300)),
    (3, "punctuation is not part of a word: 'qaaaa,' 'qaaaa.' and 'qaaaa' are ONE unique \\b\\w+\\b word (60 / 60, ratio "
     "1.0); as whitespace tokens they would be 180 / 60 = 3.0 and L3 would stop",
     _text(200, 5, distinct=60), " ".join(w + ",.;"[i // 60 % 3] for i, w in enumerate(_text(200, 5, distinct=60).split()))),
    (2, "characters are len of the text as it is, trailing spaces included: 1510/1000 = 1.51 stops L2 (stripped, "
     "1490/1000 = 1.49 would go on)", _exact(200, 1000), _exact(200, 1490, start=300) + " " * 20),
    (3, "stopwords count as unique words here (L3 keeps them; only the style level drops them): 60 / 60 = 1.0 goes on, "
     "without stopwords 25 / 60 = 0.42 would stop", _text(200, 5, distinct=60), _with_stopwords()),
    (3, "numbers are words: \\w matches digits, so the 60 years in the method text ('1950' ... '2009') are 60 of its 100 "
     "unique words (100 / 100 = 1.0 goes on); letters only ([a-z]+) would count 40 / 100 = 0.4 and stop",
     _exact(200, 1199, distinct=100), _with_numbers()),
    (2, "the method text fails L2 AND L3 (twice the characters, 2.5x the distinct words): the ladder stops at the FIRST "
     "gate that fails, L2", _text(200, 4, distinct=40), _text(200, 9, distinct=100)),
    (2, "ratio chars(c2)/chars(c1) = 1504/1000 = 1.504, just above 1.5: L2 stops (the upper edge is 1.5 itself: a bound "
     "above it, such as 1.51 or 1.55, lets this pair through, and so does l rounded to 1 or 2 decimals, which reads "
     "1.5)", _exact(200, 1000), _exact(200, 1504, start=300)),
    (3, "unique-word ratio 213/125 = 1.704, just above 1.7: L3 stops (the upper edge is 1.7 itself: a bound above it, "
     "such as 1.71 or 1.75, lets this pair through, and so does u rounded to 1 or 2 decimals, which reads 1.7)",
     _exact(250, 1499, distinct=125), _exact(213, 1499, start=300)),
    (3, "a hyphen is not \\w: 'qsh-qth' is TWO \\b\\w+\\b words, so the method text's 120 distinct hyphenated "
     "compounds hold 60 unique words (60 / 60 = 1.0 goes on); a word rule that keeps hyphens ([\\w'-]+) counts 120 / 60 "
     "= 2.0 and stops", _text(200, 6, distinct=60), _hyphenated()),
    (3, "accented letters are \\w: 'abécd' is ONE unique word, so the method text has 100 / 100 = 1.0 and goes on; "
     "letters a-z only ([a-z0-9]+) split it in two and count 10 / 100 = 0.1", _text(200, 5, distinct=100), _accented()),
    (1, "256 words and a line break at the end: 256 whitespace words, inside the window (str.split() ignores "
     "whitespace at the ends; re.split(r'\\s+', text) would count an empty 257th word)",
     _text(256, 4) + "\n", _text(256, 4, start=500)),
    (1, "a background of 127 words that starts with a space and a tab: 127 whitespace words, one short of the "
     "window (re.split(r'\\s+', text) would count an empty 128th word)", " \t" + _text(127, 6), _text(150, 5) + " "),
    (1, "a background of 130 words separated by a space and a tab in turn: 130 whitespace words (str.split() splits "
     "at tabs too; splitting at spaces and line breaks only would count 65)", _tabbed(130, 6), _text(150, 5)),
    (2, "non-ASCII text: l counts characters, 1450 / 1000 = 1.45 goes on, although the method text's 'é's take two "
     "bytes each in UTF-8 (len(text.encode()) would make it more than 2)",
     _exact(200, 1000), _accents_for_z(_exact(200, 1450, start=300))),
    (3, "a background with no \\w word at all (200 whitespace words '?!', no letter or digit): unique_words(c1) is "
     "empty, u has no denominator, and the ladder stops at L3 (no vocabulary to compare with). Test for an empty "
     "set first and return 3; a max(len(...), 1) guard makes u = 1 / 1 here and lets the pair through to 4",
     " ".join(["?!"] * 200), " ".join(["ab"] * 200)),
    (1, "a background of exactly 257 words: one past the window's upper edge (256 is inside, 257 outside)",
     " ".join(f"w{i % 150}" for i in range(257)), " ".join(f"w{i % 150}" for i in range(240))),
    (1, "a background of exactly 256 words: the window's upper edge, inside",
     " ".join(f"w{i % 150}" for i in range(256)), " ".join(f"w{i % 150}" for i in range(240))),
    (1, "two texts of 120 words each (240 together, each the same characters and vocabulary): EACH text must have "
     "128-256 words on its own, so both are too short", _text(120, 6), _text(120, 6, start=500)),
    (1, "a background of 60 words and a method text of 150 (210 together; as many characters, 90 / 60 unique words): "
     "the method text alone in the window is not enough, BOTH texts must be", _text(60, 9),
     _text(150, 3, distinct=90, start=700)),
    (3, "an apostrophe is not \\w: \"m3'x\" is TWO \\b\\w+\\b words, 'm3' and 'x', so the method text's 49 distinct "
     "\"m..'x\" words hold 50 unique words (50 / 100 = 0.5, the edge, goes on); a word rule that keeps apostrophes "
     "([\\w']+) counts 49 / 100 = 0.49 and stops", " ".join([f"bg{i}" for i in range(100)] + ["bg0"] * 40),
     " ".join([f"m{i}'x" for i in range(49)] + ["m0'x"] * 91)),
    (2, "ratio chars(c2)/chars(c1) = 3001/2000 = 1.5005, just above 1.5: L2 stops (the upper edge is 1.5 itself: l "
     "rounded to 3 decimals reads 1.5, and a tolerance of 0.0005 or more, l <= 1.5 + eps, lets this pair through)",
     _exact(200, 2000), _exact(200, 3001, start=300)),
    (2, "ratio chars(c2)/chars(c1) = 1599/2000 = 0.7995, just below 0.8: L2 stops (the lower edge is 0.8 itself: a "
     "tolerance of more than 0.0005, 0.8 - eps <= l, lets this pair through)", _exact(200, 2000),
     _exact(200, 1599, start=300)),
    (3, "unique-word ratio 174/100 = 1.74, above 1.7: L3 stops (u rounded to 1 decimal reads 1.7 and lets this pair "
     "through; rounded to 2 decimals it reads 1.74)", _exact(200, 1199, distinct=100), _exact(174, 1199, start=300)),
    (2, "characters are len of the text as it is, line breaks included: the method text's 200 words are separated by "
     "three line breaks each ('w17\\n\\n\\nw18'), 1287 / 1489 = 0.864 goes on (without the line breaks, 690 / 1489 = "
     "0.46, L2 would stop); a line break is one character, like a space",
     " ".join(f"word{i}" for i in range(200)), "\n\n\n".join(f"w{i}" for i in range(200))),
    (2, "characters are len of the text as it is, line breaks at its end included: 810 / 1000 = 0.81 goes on (the 20 "
     "line breaks at the end stripped, rstrip('\\n') or strip(), 790 / 1000 = 0.79 would stop)",
     _exact(200, 1000), _exact(200, 790, start=300) + "\n" * 20),
    (3, "`_` is `\\w`: `key_ir_tort` is one word (an underscore joins, unlike a hyphen or an apostrophe), so the "
     "method text's 100 distinct compounds ('qkp_qlp') are 100 unique \\b\\w+\\b words (100 / 100 = 1.0 goes on); a "
     "word rule that splits at '_' ([^\\W_]+, [a-z0-9]+) counts their 200 parts, 200 / 100 = 2.0, and stops, and "
     "\\b[^\\W_]+\\b finds none of them, 0 / 100", _text(140, 5, distinct=100, start=3000), _underscored()),
]


def _ladder(l1=None, l2=None, l3=None):
    """The ladder with a gate replaced by a slip (a function of (c1, c2) that says whether the pair passes it)."""
    def level(c1, c2):
        for k, gate in enumerate((l1 or _L1, l2 or _L2, l3 or _L3), 1):
            if not gate(c1, c2):
                return k
        return 4
    return level


def _u(words, c1, c2) -> float:
    return len(words(c2)) / len(words(c1)) if words(c1) else float("inf")


def _words(pattern: str, lower: bool = True):
    return lambda text: set(re.findall(pattern, text.lower() if lower else text))


_L1 = lambda a, b: all(128 <= len(c.split()) <= 256 for c in (a, b))
_L2 = lambda a, b: 0.8 <= len(b) / len(a) <= 1.5
_L3 = lambda a, b: 0.5 <= _u(unique_words, a, b) <= 1.7

def _ratio(name: str, c1: str, c2: str) -> tuple[float, str]:
    """The pair's l (name "l") or u (name "u"), and how it is computed, e.g. '799 / 1000 = 0.799'."""
    top, bottom = (len(c2), len(c1)) if name == "l" else (len(unique_words(c2)), len(unique_words(c1)))
    value = top / bottom if bottom else float("inf")
    return value, f"{top} / {bottom} = {round(value, 4)}"


_EDGES = {"l": (0.8, 1.5, "L2", "0.8 <= l <= 1.5"), "u": (0.5, 1.7, "L3", "0.5 <= u <= 1.7")}


def _rounded(name: str, digits: int):
    """What a gate that rounds its ratio to `digits` decimals does, said of the pair it fails on."""
    def what(c1: str, c2: str) -> str:
        lo, hi, _, _ = _EDGES[name]
        value, shown = _ratio(name, c1, c2)
        side = f"below {lo}" if value < lo else f"above {hi}"
        return (f"rounds {name} (to {digits} decimal{'s' if digits > 1 else ''}); here {name} = {shown} is {side}, "
                f"though it reads {round(value, digits):g} rounded: compare the exact ratio")
    return what


def _slack(name: str, how: str):
    """What a gate that rounds its ratio to 3 decimals, or widens its window by a small tolerance eps, does, said of
    the pair it lets through (a pair within 0.001 of an edge): `how` names the slip."""
    def what(c1: str, c2: str) -> str:
        lo, hi, gate, rule = _EDGES[name]
        value, shown = _ratio(name, c1, c2)
        edge, side = (lo, "below") if value < lo else (hi, "above")
        return (f"{how}; here {name} = {shown} is {side} {edge}, by only {abs(value - edge):.2g}, and your {gate} "
                f"lets it through. {gate}'s edges are exact: {rule}, with the exact ratio, no round() and no eps (a "
                f"ratio of two lengths needs no slack: 1000 / 1250 is 0.8 exactly in floating point too)")
    return what


def _bound(name: str, side: str):
    """What a gate whose lower or upper bound is off its edge does, said of the pair it lets through."""
    def what(c1: str, c2: str) -> str:
        lo, hi, gate, rule = _EDGES[name]
        edge = lo if side == "lower" else hi
        _, shown = _ratio(name, c1, c2)
        return (f"lets {name} = {shown} through, {'below' if side == 'lower' else 'above'} {edge}: the {side} bound "
                f"is wrong. {gate}'s {side} edge is {edge} itself ({rule}, both edges inside), not a bound "
                f"{'below' if side == 'lower' else 'above'} it")
    return what


def _floor_u(c1: str, c2: str) -> str:
    """What an L3 that computes u with // (floor division) does, said of the pair it gets wrong."""
    top, bottom = len(unique_words(c2)), len(unique_words(c1))
    if not bottom:
        return ("computes u with // (floor division), which drops u's fraction; u = len(unique_words(c2)) / "
                "len(unique_words(c1)) with /, the exact ratio")
    return (f"computes u with // (floor division), which drops u's fraction: here u = {top} / {bottom} = "
            f"{round(top / bottom, 4)}, but {top} // {bottom} = {top // bottom}, so every u below 1 reads 0 and every "
            "u in [1, 2) reads 1. Compute u with /, len(unique_words(c2)) / len(unique_words(c1)), the exact "
            "ratio")


_L1_OPEN_EDGES = "leaves out the window's edges; 128 and 256 words are inside"
_L3_OPEN_EDGES = ("leaves out its edges (0.5 < u < 1.7, or L3's 0 points at an edge read as a stop); u = 0.5 and "
                  "u = 1.7 are inside: L3 pays 0 points there and scoring goes on")


# (the ladder with one slipped gate, that gate, what the slip does): an answer whose levels are a slip's on EVERY
# pair is told which slip it is; any other is shown the pair's purpose, where the pair probes its wrong gate
_SLIPS = [
    (_ladder(l1=lambda a, b: 128 <= len(a.split()) <= 256), 1, "looks at the background's words only; BOTH texts must "
     "have 128-256 whitespace words"),
    (_ladder(l1=lambda a, b: 128 <= len(b.split()) <= 256), 1, "looks at the method text's words only; BOTH texts must "
     "have 128-256 whitespace words"),
    (_ladder(l1=lambda a, b: 256 <= len((a + " " + b).split()) <= 512), 1, "counts the words of both texts together "
     "(256 to 512); EACH text must have 128-256 whitespace words on its own"),
    (_ladder(l1=lambda a, b: any(128 <= len(c.split()) <= 256 for c in (a, b))), 1, "lets a pair through when "
     "EITHER text has 128-256 words (any); BOTH texts must (all)"),
    (_ladder(l1=lambda a, b: 128 <= len(a.split()) and len(b.split()) <= 256), 1, "checks only the background's "
     "lower edge and the method text's upper edge; EACH text must have 128-256 whitespace words, both edges for both"),
    (_ladder(l1=lambda a, b: all(128 <= len(re.findall(r"\b\w+\b", c)) <= 256 for c in (a, b))), 1, "counts words "
     "with a regex, which cuts 'state-of-the-art' into four; L1 counts whitespace words, str.split()"),
    (_ladder(l1=lambda a, b: all(128 <= len(c.split(" ")) <= 256 for c in (a, b))), 1, "splits at ' ' only, so line "
     "breaks glue two words into one; str.split() splits at any whitespace, line breaks included"),
    (_ladder(l1=lambda a, b: all(128 < len(c.split()) < 256 for c in (a, b))), 1, _L1_OPEN_EDGES),
    (_ladder(l1=lambda a, b: all(128 <= len(c.split()) <= 257 for c in (a, b))), 1, "lets 257 words through; the "
     "window ends at 256 words: 256 is inside, 257 outside"),
    (_ladder(l1=lambda a, b: all(127 <= len(c.split()) <= 256 for c in (a, b))), 1, "lets 127 words through; the "
     "window starts at 128 words: 128 is inside, 127 outside"),
    (_ladder(l1=lambda a, b: all(128 <= len(re.split(r"\s+", c)) <= 256 for c in (a, b))), 1, "splits with "
     "re.split(r'\\s+', text), which counts an empty word when the text starts or ends with whitespace; str.split() "
     "does not"),
    (_ladder(l1=lambda a, b: all(128 <= len([w for w in re.split(r"[ \n]+", c) if w]) <= 256 for c in (a, b))), 1,
     "splits at spaces and line breaks only, so a tab glues two words into one; str.split() splits at any "
     "whitespace, tabs included"),
    (_ladder(l2=lambda a, b: 0.8 <= len(b.split()) / len(a.split()) <= 1.5), 2, "counts l in words; l counts "
     "CHARACTERS, len(c2) / len(c1)"),
    (_ladder(l2=lambda a, b: 0.8 <= len(a) / len(b) <= 1.5), 2, "divides the other way round; l = len(c2) / len(c1), "
     "the method text over the background"),
    (_ladder(l2=lambda a, b: 0.8 <= len(b.encode()) / len(a.encode()) <= 1.5), 2, "counts bytes, len(text.encode()); "
     "l counts characters, len(text): 'é' is one character, two bytes in UTF-8"),
    (_ladder(l2=lambda a, b: 0.8 <= len(b.replace(" ", "")) / len(a.replace(" ", "")) <= 1.5), 2, "counts the "
     "characters without the spaces; len(text) counts every character, spaces included"),
    (_ladder(l2=lambda a, b: 0.8 <= len("".join(b.split())) / len("".join(a.split())) <= 1.5), 2, "counts the "
     "characters without the whitespace; len(text) counts every character, spaces included"),
    (_ladder(l2=lambda a, b: 0.8 <= len(b.strip()) / len(a.strip()) <= 1.5), 2, "strips the texts first; l takes them "
     "as they are, leading and trailing spaces included"),
    (_ladder(l2=lambda a, b: 0.8 <= len(b.replace("\n", "")) / len(a.replace("\n", "")) <= 1.5), 2, "counts the "
     "characters without the line breaks; len(text) counts every character, line breaks included: a line break "
     "('\\n') is one character, like a space"),
    (_ladder(l2=lambda a, b: 0.8 <= len(" ".join(b.split())) / len(" ".join(a.split())) <= 1.5), 2, "collapses the "
     "whitespace first (' '.join(text.split()): a run of spaces and line breaks becomes one space, those at the ends "
     "go); l takes the texts as they are, len counts every space and line break"),
    (_ladder(l2=lambda a, b: 0.8 <= len(b.rstrip("\n")) / len(a.rstrip("\n")) <= 1.5), 2, "strips the line breaks at "
     "the end of the texts first (rstrip('\\n'), or strip()); l takes the texts as they are, len counts line breaks "
     "too, those at the end included"),
    (_ladder(l2=lambda a, b: 0.8 < len(b) / len(a) < 1.5), 2, "leaves out its edges; l = 0.8 and l = 1.5 are inside"),
    (_ladder(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 2) <= 1.5), 2, _rounded("l", 2)),
    (_ladder(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 1) <= 1.5), 2, _rounded("l", 1)),
    (_ladder(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 3) <= 1.5), 2, _slack("l", "rounds l to 3 decimals, or "
     "adds a tolerance to its upper edge (l <= 1.5 + eps, eps about 0.0005)")),
    (_ladder(l2=lambda a, b: 0.8 - 7e-4 <= len(b) / len(a) <= 1.5 + 7e-4), 2, _slack("l", "adds a tolerance to its "
     "edges (0.8 - eps <= l <= 1.5 + eps, eps more than 0.0005)")),
    (_ladder(l2=lambda a, b: 0.8 - 7e-4 <= len(b) / len(a) <= 1.5), 2, _slack("l", "adds a tolerance to its lower "
     "edge (0.8 - eps <= l, eps more than 0.0005)")),
    (_ladder(l2=lambda a, b: 0.7 <= len(b) / len(a) <= 1.5), 2, _bound("l", "lower")),
    (_ladder(l2=lambda a, b: 0.8 <= len(b) / len(a) <= 1.505), 2, _bound("l", "upper")),
    (_ladder(l2=lambda a, b: 0.8 <= len(b) / len(a) <= 1.55), 2, _bound("l", "upper")),
    (_ladder(l3=lambda a, b: 0.5 <= _u(unique_words, b, a) <= 1.7), 3, "divides the other way round; u = unique words "
     "of the method text over the background's"),
    (_ladder(l3=lambda a, b: _u(unique_words, a, b) >= 1.3), 3, "is TL;DR's L3 (stop below 1.3); the arXiv gate is "
     "[0.5, 1.7]"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"\S+"), a, b) <= 1.7), 3, "counts whitespace tokens, so 'word,' and "
     "'word' differ; unique words are lower-cased \\b\\w+\\b words, unique_words(text)"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"\S+", False), a, b) <= 1.7), 3, "counts whitespace tokens as "
     "written, so 'Word', 'word' and 'word,' differ; unique words are lower-cased \\b\\w+\\b words"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"\b\w+\b", False), a, b) <= 1.7), 3, "does not lower-case; 'Word' "
     "and 'word' are one unique word"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(lambda t: unique_words(t, True), a, b) <= 1.7), 3, "drops the stopwords; L3 "
     "keeps them (only the style level drops them)"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"[a-z]+"), a, b) <= 1.7), 3, "counts letters only; numbers are words "
     "too, \\w matches digits"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"[a-z0-9]+"), a, b) <= 1.7), 3, "counts a-z and 0-9 only; \\w matches "
     "accented letters too, 'abécd' is one word"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"[\w']+"), a, b) <= 1.7), 3, "keeps apostrophes inside words; an "
     "apostrophe is not \\w, so \"m3'x\" (or \"don't\") is two words"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"[\w-]+"), a, b) <= 1.7), 3, "keeps hyphens inside words; a hyphen is "
     "not \\w, so 'qsh-qth' is two words"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"[\w'-]+"), a, b) <= 1.7), 3, "keeps hyphens or apostrophes inside "
     "words; they are not \\w, so 'qsh-qth' is two words"),
    (_ladder(l3=lambda a, b: 0.5 <= _u(_words(r"[^\W_]+"), a, b) <= 1.7), 3, "leaves '_' out of a word's "
     "characters ([^\\W_]+ splits 'key_ir_tort' into three words; \\b[^\\W_]+\\b finds none of it, as there is no "
     "word boundary inside); `_` is `\\w`: `key_ir_tort` is one word, as unique_words counts it (\\b\\w+\\b)"),
    (_ladder(l3=lambda a, b: 0.5 < _u(unique_words, a, b) < 1.7), 3, _L3_OPEN_EDGES),
    (_ladder(l3=lambda a, b: bool(unique_words(a)) and 0.5 <= len(unique_words(b)) // len(unique_words(a)) <= 1.7),
     3, _floor_u),
    (_ladder(l3=lambda a, b: 0.5 <= round(_u(unique_words, a, b), 2) <= 1.7), 3, _rounded("u", 2)),
    (_ladder(l3=lambda a, b: 0.5 <= round(_u(unique_words, a, b), 1) <= 1.7), 3, _rounded("u", 1)),
    (_ladder(l3=lambda a, b: 0.3 <= _u(unique_words, a, b) <= 1.7), 3, _bound("u", "lower")),
    (_ladder(l3=lambda a, b: 0.5 <= _u(unique_words, a, b) <= 1.75), 3, _bound("u", "upper")),
]


def _slip(fn):
    """(gate, what) of the slip whose levels are the answer's on every pair; None when there is no such slip."""
    try:
        mine = [fn(c1, c2) for _, _, c1, c2 in _CASES]
    except Exception:                     # an answer that crashes somewhere: no diagnosis
        return None
    for ladder, gate, what in _SLIPS:
        if all(m == ladder(c1, c2) for m, (_, _, c1, c2) in zip(mine, _CASES)):
            return gate, what
    return None


# pairs of plain words (letters and digits: no apostrophe, hyphen or accent that a word rule could count otherwise)
# with u exactly at an edge of L3, where its level is 0 points: (u in words, no style points?, c1, c2). The ladder goes
# on to 4 on each; an answer that stops at 3 on those without style points only reads "0 points and nothing after"
# as a stop (arxiv_levels' uniqueness and style both 0.0, or its total = structure + length_ratio)
_BG = " ".join([f"bg{i}" for i in range(100)] + ["bg0"] * 40)
_EDGE_PAIRS = [
    ("u = 50 / 100 = 0.5", True, _BG, " ".join([f"m{i}x" for i in range(50)] + ["m0x"] * 90)),
    ("u = 170 / 100 = 1.7", True, _BG, " ".join(f"m{i}x" for i in range(170))),
    ("u = 50 / 100 = 0.5", False, _BG, " ".join([f"bg{i}" for i in range(50)] + ["bg0"] * 90)),
    ("u = 170 / 100 = 1.7", False, _BG, " ".join([f"bg{i}" for i in range(100)] + [f"m{i}x" for i in range(70)])),
]


_LETTERS_BG = _text(140, 5, distinct=100, start=3000)


def _l3_pair(k: int) -> tuple:
    """A pair of words of lower-case letters only (no digit, apostrophe, hyphen or accent that a word rule could count
    otherwise) that passes L1 and L2 with u = k / 100: a background of 140 words, 100 unique, and a method text of k
    unique words (140 words in all, the rest its first word again, when k < 140)."""
    words = _text(k, 5, start=6000).split()
    return _LETTERS_BG, " ".join(words + words[:1] * max(0, 140 - k))


def _l3_narrow(fn) -> str:
    """The sentence on an answer whose L3 stops well inside [0.5, 1.7], at u = 0.6 or u = 1.6 where L3 pays points
    (0.25, 0.125): its window is too narrow, not only its edges left out; '' for any other answer. It names the
    u (in hundredths, 0.5 to 1.7) the answer lets through on plain-word pairs, when they are one run."""
    try:
        through = [k for k in range(50, 171) if plain_number(fn(*_l3_pair(k))) != 3]
    except Exception:   # noqa: BLE001 - an answer that crashes here gets no diagnosis
        return ""
    if 60 in through and 160 in through:
        return ""
    stops = " and ".join(f"u = {k / 100:g} (L3 pays {arxiv_unique_level(k / 100):g} points there)"
                         for k in (60, 160) if k not in through)
    if through and through == list(range(through[0], through[-1] + 1)):
        lo, hi = through[0] / 100, through[-1] / 100
        known = {(0.8, 1.5): " (L2's window [0.8, 1.5], copied to L3?)",
                 (0.7, 1.3): " (L3's flat top [0.7, 1.3], where it pays 0.5, read as its window?)"}.get((lo, hi), "")
        shown = f"your ladder goes on only for u from {lo:g} to {hi:g}{known}"
    elif not through:
        shown = "your ladder stops at 3 on every one of them, u from 0.5 to 1.7"
    else:
        shown = "your ladder does not go on for every u of [0.5, 1.7]"
    return (f" Your L3's window is too narrow, not only its edges: on pairs of plain lower-case words (a background "
            f"of 100 unique words, method texts of 50 to 170, every other gate passed) {shown}, and it stops at {stops}, where "
            "scoring goes on. L3's window is [0.5, 1.7]: 0.5 <= u <= 1.7, both edges inside; its ramps and flat top "
            "only set its points.")


def _edge_stops(fn):
    """(the first edge pair without style points on which `fn` stops at 3, in words; whether it stops at 3 on an edge
    pair with style points too), or None when it stops on no pair without style points (or crashes)."""
    try:
        stops = [(what, bare) for what, bare, c1, c2 in _EDGE_PAIRS if plain_number(fn(c1, c2)) == 3]
    except Exception:   # noqa: BLE001 - an answer that crashes here gets no diagnosis
        return None
    bare = [what for what, is_bare in stops if is_bare]
    return (bare[0], any(not is_bare for _, is_bare in stops)) if bare else None


def _as_ints_said(fn) -> str:
    """The sentence after 'return an int' on an answer that returned a float level: whether its levels, read as ints,
    are the ladder's on every pair (only the type is wrong) or not (more to fix); '' when it crashes somewhere."""
    try:
        mine = [plain_number(fn(c1, c2)) for _, _, c1, c2 in _CASES]
    except Exception:   # noqa: BLE001 - an answer that crashes here gets no more said
        return ""
    if all(m == arxiv_stop_level(c1, c2) for m, (_, _, c1, c2) in zip(mine, _CASES)):
        return " Read as ints, your levels are the ladder's on every pair: only the type is wrong."
    return (" Your levels are not the ladder's on every pair either: with ints returned, the check shows the first "
            "pair where a gate is wrong.")


def _zero_based(fn) -> bool:
    """Whether `fn` gives the ladder's level minus one on every case (levels counted from 0)."""
    try:
        return all(plain_number(fn(c1, c2)) == arxiv_stop_level(c1, c2) - 1 for _, _, c1, c2 in _CASES)
    except Exception:   # noqa: BLE001 - an answer that crashes elsewhere is not this slip
        return False


def _l1_window(fn):
    """(fewest, most) words per text that `fn` lets past L1 on pairs of two texts of n words each, as many characters
    and unique words (so that only L1 can stop them), n from 64 to 600; None when it crashes or the n it lets through
    are not one run."""
    try:
        through = [n for n in range(64, 601) if plain_number(fn(_text(n, 5), _text(n, 5, start=5000))) != 1]
    except Exception:   # noqa: BLE001 - an answer that crashes here gets no diagnosis
        return None
    if not through or through != list(range(through[0], through[-1] + 1)):
        return None
    return through[0], through[-1]


def _window_said(lo: int, hi: int) -> str:
    """The sentence on an L1 that lets each text through from lo to hi words (a _l1_window result): it names the edge
    that is wrong, or both."""
    shown = (f" On two texts of n words each (as many characters and unique words, so that only L1 decides) your L1 "
             f"lets each text through from {'64 words or fewer' if lo == 64 else f'{lo} words'} to "
             f"{'600 or more' if hi == 600 else hi}: ")
    if lo == 128:
        return shown + ("the lower edge is right, the upper one is not: the window ends at 256 words, "
                        + (f"and 256 is inside{' (<= 256, not < 256 or <= 255)' if hi == 255 else ''}." if hi < 256 else
                           "and 257 is outside."))
    if hi == 256:
        return shown + ("the upper edge is right, the lower one is not: the window starts at 128 words, "
                        + (f"and 128 is inside{' (>= 128, not > 128 or >= 129)' if lo == 129 else ''}." if lo > 128 else
                           "and 127 is outside."))
    return shown + "the window is 128 to 256 words, both edges inside."


def _gate_pair(gate: int, c1: str, c2: str):
    """A pair that fails `gate` (1 or 2) as (c1, c2) does, with the same word counts (L1) or the same characters (L2,
    so the same l), and passes every other gate; None when none can be built from these texts."""
    try:
        if gate == 1:
            w1, w2 = word_count(c1), word_count(c2)
            more, less = max(w1, w2), min(w1, w2)
            if not less:
                return None
            d, longer = min(less, 676), max(3, round(4 * more / less) - 1)   # as many characters, as many unique words
            a, b = (_text(w1, 3, distinct=d), _text(w2, longer, distinct=d, start=5000)) if w1 >= w2 else \
                (_text(w1, longer, distinct=d), _text(w2, 3, distinct=d, start=5000))
            ok = word_count(a) == w1 and word_count(b) == w2 and _L2(a, b) and _L3(a, b)
        else:
            n = min(200, (min(len(c1), len(c2)) + 1) // 3)                # 200 words each, every word distinct
            a, b = _exact(n, len(c1), distinct=n), _exact(n, len(c2), distinct=n, start=300)
            ok = len(a) == len(c1) and len(b) == len(c2) and _L1(a, b) and _L3(a, b)
    except (AssertionError, ValueError, ZeroDivisionError):
        return None
    return (a, b) if ok else None


def _gate_reason(gate: int, c1: str, c2: str) -> str:
    """Why the pair fails `gate` (1 or 2), in words: the text outside the word window, or l outside [0.8, 1.5]."""
    if gate == 1:
        return " and ".join(f"the {who}'s {n} words are {'below 128' if n < 128 else 'above 256'}"
                            for who, n in (("background", word_count(c1)), ("method text", word_count(c2)))
                            if not 128 <= n <= 256)
    value, shown = _ratio("l", c1, c2)
    return f"l = {shown} is {'below 0.8' if value < 0.8 else 'above 1.5'}"


def _order_is_right(fn, want: int, got: int, c1: str, c2: str):
    """Whether `fn`, which goes past L{want} on (c1, c2) to stop at L{got} (a gate the pair fails too), checks the
    gates in order: True when it does not stop at L{want} either on a pair that fails L{want} the same way and passes
    the other gates (its L{want} is wrong), False when it does (it checks L{got} first); None when no such pair can
    be built or `fn` crashes on it."""
    pair = _gate_pair(want, c1, c2) if want in (1, 2) else None
    if pair is None:
        return None
    try:
        return plain_number(fn(*pair)) != want
    except Exception:   # noqa: BLE001 - an answer that crashes here gets no diagnosis
        return None


@exercise("09.stop_level")
def check_stop_level(fn):
    _not_the_library(fn, "stop_level", arxiv_stop_level)
    for probed, why, c1, c2 in _CASES:
        want = arxiv_stop_level(c1, c2)
        got = plain_number(call_answer(fn, c1, c2, said=lambda exc, why=why: (
            f"stop_level(c1, c2) raised {type(exc).__name__}: {exc}, on the pair that probes: "
            f"{why}. It takes two strings and returns the level, an int from 1 to 4.")))
        if got == want and isinstance(got, int) and not isinstance(got, bool):
            continue
        if isinstance(got, str):
            raise ExerciseFailed(f"return an int, not a str: you returned the string {got!r}"
                                 + (f", and the ladder does stop at {want} here" if got.strip() == str(want) else
                                    f", and the ladder stops at {want} here")
                                 + f". A level is one of the ints 1, 2, 3, 4, as the text writes them: `return {want}`, "
                                 f"not {str(want)!r} (no str(...), no quotes, no f-string).")
        if isinstance(got, float) and got == want:
            raise ExerciseFailed(f"return an int: the ladder stops at {want} here and you returned the float {got!r}. "
                                 f"A level is one of the ints 1, 2, 3, 4, as the text writes them: `return {want}`, "
                                 f"not {got!r} (no division, no float(...)); the cells below count and print your "
                                 "levels as the ladder's ints." + _as_ints_said(fn))
        if isinstance(got, int) and got == want - 1 and _zero_based(fn):
            raise ExerciseFailed(f"the ladder stops at {want} here, you returned {got}: on every pair your level is one "
                                 "less than the ladder's. The levels are numbered from 1: 1 when L1 fails, 2 when L1 "
                                 "passes and L2 fails, 3 when L3 fails, 4 when every gate passes (not 0 to 3).")
        w1, w2 = word_count(c1), word_count(c2)
        ell = len(c2) / len(c1) if c1 else float("inf")
        u = len(unique_words(c2)) / len(unique_words(c1)) if unique_words(c1) else float("inf")
        gates = [(f"L1 words {w1} and {w2} in [128, 256]", 128 <= w1 <= 256 and 128 <= w2 <= 256),
                 (f"L2 l = chars {len(c2)} / {len(c1)} = {round(ell, 4)} in [0.8, 1.5]", 0.8 <= ell <= 1.5),
                 (f"L3 u = unique words {len(unique_words(c2))} / {len(unique_words(c1))} = {round(u, 4)} in [0.5, 1.7]",
                  0.5 <= u <= 1.7)]
        verdict = "; ".join(f"{text}: {'passes' if ok else 'FAILS'}" for (text, ok), _ in zip(gates, range(want)))
        where, wrong, slip = "", None, _slip(fn)   # wrong: the answer's gate that disagrees here
        told = False                               # whether `where` says the pair's purpose already
        window = None                              # the L1 window of an answer whose L1 is wrong and no known slip
        if isinstance(got, int) and not isinstance(got, bool) and 1 <= got <= 4:
            wrong = got if got < want else want
            where = (f" Your {got} means your L{got} failed, where it passes." if got < want else
                     f" Your {got} means your L{want} passed, where it fails.")
            if wrong == 1 and (not slip or slip[1] == _L1_OPEN_EDGES):
                window = _l1_window(fn)            # the pairs cannot tell 128 < n < 256 from 128 <= n <= 255: its window can
                if window == (128, 256) or (slip and window in (None, (129, 255))):
                    window = None                  # its window is right, or is the slip's: no sentence on it
                elif slip:
                    slip = None                    # one edge wrong, not both: the window's sentence says which
            if want < got < 4 and not gates[got - 1][1] and not slip and not window:
                if _order_is_right(fn, want, got, c1, c2):    # the gates in order: L{want} itself lets the pair by
                    told = True
                    same = (f"the same word counts ({word_count(c1)} and {word_count(c2)})" if want == 1 else
                            f"the same characters ({len(c2)} / {len(c1)})")
                    where += (f" This pair probes: {why}. {_gate_reason(want, c1, c2)[0].upper()}"
                              f"{_gate_reason(want, c1, c2)[1:]}: L{want} stops it, before L{got} is reached. Your "
                              f"L{want} lets it through (on a pair with {same} that passes every other gate your "
                              f"ladder does not stop at L{want} either): fix L{want} itself; your gates' order is right.")
                else:
                    where += (f" This pair fails {gates[got - 1][0].split()[0]} too ({gates[got - 1][0]}), but L{want} "
                              f"comes first: the ladder stops at the FIRST gate that fails, so check L1, then L2, then "
                              "L3, in that order.")
        elif isinstance(got, float):
            where = " Return an int (1, 2, 3 or 4), not a float."
        narrow = (got == 3 and want == 4 and isinstance(got, int) and not isinstance(got, bool) and not slip
                  and _l3_narrow(fn))         # stops inside [0.5, 1.7] too, where L3 pays points: not an edge slip
        edges = (not narrow and got == 3 and want == 4 and isinstance(got, int) and arxiv_unique_level(u) == 0
                 and not (slip and slip[1] in (_L3_OPEN_EDGES, _floor_u)) and _edge_stops(fn))
        if not edges:           # an answer that reads its levels off the package: say so before any word rule
            _not_a_piece_of_the_library(fn)
        if narrow:
            where += narrow
        elif edges:                # told apart from a word-rule slip: it stops on plain words at an edge too
            plain, styled = edges
            here = (f"here u = {len(unique_words(c2))} / {len(unique_words(c1))} = {round(u, 4)}, exactly L3's edge "
                    f"{0.5 if u < 1 else 1.7}, where L3 pays 0 points, and on a pair of plain words (no apostrophe, "
                    f"hyphen or accent to count otherwise) with {plain} exactly your ladder stops at 3 too")
            where += (f" Your L3 leaves out its edges: {here} (0.5 < u < 1.7 written strict, or L3's 0 points there "
                      "read as a stop, uniqueness == 0 in arxiv_levels)." if styled else
                      f" You read L3's 0 points at its edge, with no style points after it, as a stop: {here} when "
                      "the pair has no style points either, and goes on when it has some. A uniqueness of 0.0 and a "
                      "style of 0.0 in arxiv_levels (a total of structure + length_ratio) are a level of 0 points, "
                      "not a stop: the ladder stops at L3 only where its level is None, u outside [0.5, 1.7] (or a "
                      "background with no word).")
            where += " u = 0.5 and u = 1.7 are inside [0.5, 1.7]: L3 pays 0 points there and scoring goes on."
        elif slip and slip[0] == wrong:
            what = slip[1](c1, c2) if callable(slip[1]) else slip[1]
            where += f" On every pair your levels are those of an L{slip[0]} that {what}."
        elif not told and not (window and 128 in window or window and 256 in window) and (
                wrong is None or probed in (0, wrong)):   # 0: the whole ladder; one edge wrong: the window says which
            where += f" This pair probes: {why}."
        elif not unique_words(c1) and isinstance(got, int) and got < want:   # an empty-background guard, returns 1 or 2
            where += (f" This pair probes: {why}. Here L1 and L2 pass, so the pair reaches L3 and stops there: a guard "
                      f"for an empty unique_words(c1) belongs to L3 and returns 3, not {got}.")
        if window:
            where += _window_said(*window)
        raise ExerciseFailed(f"the ladder stops at {want} ({verdict}), you returned {got!r}.{where} Check each gate in "
                             "order: L1 both agents' whitespace words (str.split()) in [128, 256]; L2 l = chars(method) "
                             "/ chars(background) (len, spaces and line breaks included) in [0.8, 1.5]; L3 u = unique lower-cased "
                             "\\b\\w+\\b words, method / background, in [0.5, 1.7]; every edge inside; else 4.")
    _not_a_piece_of_the_library(fn)


# the package's functions a stop_level may not call (each passes its gate by construction), and what to write out
# instead; unique_words is no such piece: the notebook asks for it
_STOP_PIECES = {
    arxiv_stop_level: "from the rule in the text",
    arxiv_levels: "from the three gates in the text, each written out (L1 on str.split(), L2 on len(c2) / len(c1), "
                  "L3 on unique_words), instead of reading the levels off `arxiv_levels`",
    arxiv_length_level: "with L2 written out: 0.8 <= len(c2) / len(c1) <= 1.5, both edges inside",
    arxiv_unique_level: "with L3 written out: 0.5 <= u <= 1.7, u = len(unique_words(c2)) / len(unique_words(c1)), "
                        "both edges inside (your own vocabulary_level of exercise 1, None outside, may do it)",
    ramp_level: "with each gate's interval written out (L2: 0.8 <= len(c2) / len(c1) <= 1.5; L3: 0.5 <= u <= 1.7, "
                "both edges inside)",
}


def _not_a_piece_of_the_library(fn) -> None:
    """Refuse a stop_level that hands a gate to the package (arxiv_stop_level's body written out with its own level
    functions passes by construction), probed on every pair: a piece may sit behind a gate only some pairs reach.
    Both of L2's and L3's level functions, when both are used, are named in one sentence."""
    for _, _, c1, c2 in _CASES:
        used = runs_the_library(fn, (c1, c2), *_STOP_PIECES)
        if used is None:
            continue
        other = {arxiv_length_level: arxiv_unique_level, arxiv_unique_level: arxiv_length_level}.get(used)
        if other is not None and any(runs_the_library(fn, pair[2:], other) is other for pair in _CASES):
            raise ExerciseFailed("your function calls the package's own `arxiv_length_level` and "
                                 "`arxiv_unique_level`: they pass by construction and teach nothing. Write `stop_level` "
                                 "with L2 and L3 written out: L2 0.8 <= len(c2) / len(c1) <= 1.5, L3 0.5 <= u <= 1.7 "
                                 "with u = len(unique_words(c2)) / len(unique_words(c1)), every edge inside (your own "
                                 "vocabulary_level of exercise 1, None outside, may do L3), without calling either, "
                                 "then compare the two outside your function.")
        _not_a_wrapper(fn, (c1, c2), "stop_level", used, how=_STOP_PIECES[used])
