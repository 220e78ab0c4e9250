"""Checks of notebook 07's exercises (a real model, one LoRA adapter per agent): a held-out metric
read from the saved texts, the size of one agent's adapter, and switching between the agents that
share one base."""
from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers

import torch

from . import (ExerciseFailed, call_answer, exercise, first_line, not_a_wrapper, remember_call, rounded_to,
               runs_the_library)
from ..tasks.writing.reward import (_levels, length_ratio_reward, ramp_level, tldr_length_level, tldr_levels,
                                    tldr_reward)


def _pair(c1_chars: int, c2_chars: int) -> tuple[str, str]:
    """A (concise, detailed) pair with exactly these character counts (words of 'ab ' style)."""
    word = "ab "
    return ((word * c1_chars)[:c1_chars], ("cd " * c2_chars)[:c2_chars])


_BAND_CASES = [
    ([_pair(100, 160), _pair(100, 320), _pair(100, 250)], 1.0),            # both edges are in the band
    ([_pair(100, 159), _pair(100, 321), _pair(200, 100), _pair(100, 100)], 0.0),
    ([_pair(100, 200), _pair(300, 100), _pair(50, 400), _pair(40, 100)], 0.5),   # 300/100 is agent 1 longer
    ([_pair(0, 100), _pair(60, 120)], 0.5),                                 # an empty concise text: not in band
    # an empty concise text with a detailed one of 2 characters: out, although len(b) / max(len(a), 1) = 2 would be in
    ([("", "ab"), _pair(60, 120), _pair(100, 100)], None),
    ([("Short words here and there.", "Extraordinarily lengthy vocabulary, notwithstanding everything.")], None),
    # characters, not bytes: 20 characters of which 10 take two bytes in UTF-8 (ratio 1.6 in characters, 1.2 in bytes)
    ([("é" * 10 + "a" * 10, "b" * 32), ("a" * 10, "b" * 25)], 1.0),
    # leading and trailing spaces count: len of the text as it is (3.2 as written, 3.78 stripped)
    ([(" " * 9 + "a" * 21 + " " * 5, "b" * 112)], 1.0),
    # a concise text of spaces only is not empty: ' ' is 1 character, 'ab' 2, ratio 2.0, in the band
    ([(" ", "ab"), ("   ", "abcdefg"), _pair(60, 120), _pair(100, 100)], 0.75),
    ([], 0.0),                                                              # no pairs: share 0.0
    ([_pair(100, 200), _pair(100, 100), _pair(100, 400)], None),            # a share of 1/3: no rounding
    # the same pair twice (two prompts can get the same texts): each pair counts, 2/3, not 1/2 as over set(pairs)
    ([_pair(100, 200), _pair(100, 200), _pair(100, 100)], None),
    # just outside each edge (1.595, 3.204, 1.599) and just inside (1.601, 3.199): the ratio compared exactly, not
    # rounded (round(ratio, 2) puts 3.204 and 1.599 in) nor with a tolerance (1.6 - 0.009 puts 1.595 in); and 3.199
    # tells a band ending at 3.0 or 3.1 from one that leaves 3.2 itself out
    ([_pair(200, 319), _pair(250, 801), _pair(1000, 1599), _pair(1000, 1601), _pair(1000, 3199)], 0.4),
    # closer still, 0.00004 either side of each edge: round(ratio, 3) or round(ratio, 4) puts the outer two in
    ([_pair(25000, 39999), _pair(25000, 80001), _pair(25000, 40001), _pair(25000, 79999)], 0.5),
    # newlines, tabs, punctuation and runs of spaces inside the text are characters as len counts them: each case has
    # a pair at an edge (16/5 = 3.2, 8/5 = 1.6) that leaves the band when one of them goes uncounted
    ([("aa\naa", "b" * 16), ("aaaaa", "b" * 8)], 1.0),                     # a newline inside: replace('\n', '')
    ([("aaaa\n", "b" * 16), ("aaaaa", "b" * 7 + "\n")], 1.0),             # a newline at the end: strip('\n') too
    ([("aa\taa", "b" * 16), ("aaaaa", "b" * 8)], 1.0),                     # a tab: replace('\t', '')
    ([("aa.aa", "b" * 16), ("aaaaa", "b" * 7 + "!")], 1.0),                # punctuation: only letters and spaces kept
    ([("aa  a", "b" * 16), ("aaaaa", "b" * 8)], 1.0),                      # two spaces: ' '.join(text.split())
    # both texts empty: out, although the band multiplied out (1.6 * len(c) <= len(d) <= 3.2 * len(c)) reads 0 <= 0 <= 0
    ([("", ""), _pair(60, 120)], 0.5),
    # a detailed text of spaces only is 4 characters as len counts them: ('ab', '    ') has ratio 4 / 2 = 2.0, in the
    # band (a test of detailed.strip() counts it out)
    ([("ab", "    "), _pair(60, 120)], 1.0),
    # closest of all, 4e-7 either side of each edge (texts of half a million characters; last, so that a slip refused
    # by an earlier case is said there): a tolerance of 1e-6 (or any down to 4e-7) and a ratio rounded to 5 or 6
    # decimals put the outer two in; "no tolerance beyond float error" means it, float error being about 1e-16 here.
    # One word each (no spaces), so that word counts (split() or split(' ')) read every pair alike, out at ratio 1.0
    ([("a" * 500002, "b" * 800003), ("a" * 500004, "b" * 1600013), ("a" * 500003, "b" * 800005),
      ("a" * 500001, "b" * 1600003)], 0.5),
]


_BAND_READ_32 = "3.2 itself is in the band: 1.6 <= ratio <= 3.2"
_BAND_READ_16 = "1.6 itself is in the band: 1.6 <= ratio <= 3.2"


def _letters_digits_spaces(text: str) -> int:
    """How many characters of `text` are letters, digits or white space (punctuation left out): a misreading's count.
    A text of letters, digits and spaces only is counted at C speed (the check's long texts are)."""
    if (text.replace(" ", "") or "a").isalnum():
        return len(text)
    return sum(1 for ch in text if ch.isalnum() or ch.isspace())


def _band_readings(pairs) -> list:
    """What common misreadings of the exercise give on these pairs, with what to say."""
    def share(ok_fn, denominator=None):
        oks = [ok_fn(c1, c2) for c1, c2 in pairs]
        n = len(pairs) if denominator is None else denominator
        return sum(oks) / n if n else 0.0
    r = lambda c1, c2: len(c2) / len(c1)
    nonempty = sum(1 for c1, _ in pairs if c1)
    counted = lambda size: share(lambda a, b: size(a) > 0 and 1.6 <= size(b) / size(a) <= 3.2)  # another count
    return [
        (share(lambda a, b: len(a) > 0 and 1.6 < r(a, b) < 3.2), "both ends are IN the band: 1.6 <= ratio <= 3.2"),
        (share(lambda a, b: len(a) > 0 and 1.6 <= r(a, b) < 3.2), _BAND_READ_32),
        (share(lambda a, b: len(a) > 0 and 1.6 < r(a, b) <= 3.2), _BAND_READ_16),
        (share(lambda a, b: len(b) > 0 and 1.6 <= len(a) / len(b) <= 3.2),
         "the ratio is chars(detailed) / chars(concise): the detailed text on top"),
        (share(lambda a, b: len(a.split()) > 0 and 1.6 <= len(b.split()) / len(a.split()) <= 3.2),
         "count characters (len of the text), not words"),
        (share(lambda a, b: len(a.strip()) > 0 and 1.6 <= len(b.strip()) / len(a.strip()) <= 3.2),
         "count every character as the text is, spaces at the ends included (do not strip)"),
        (share(lambda a, b: len(a.encode()) > 0 and 1.6 <= len(b.encode()) / len(a.encode()) <= 3.2),
         "count characters, not bytes: 'é' is one character (len of the str), two bytes in UTF-8"),
        (share(lambda a, b: len(a) > 0 and 1.1 <= r(a, b) <= 5.0), "the FULL-score band is [1.6, 3.2]; [1.1, 5.0] "
         "is where the level pays anything"),
        (share(lambda a, b: len(a) > 0 and 1.6 <= r(a, b) <= 3.2, nonempty),
         "divide by ALL pairs: a pair with an empty concise text is a pair out of the band, not a pair left out"),
        (share(lambda a, b: len(a.strip()) > 0 and 1.6 <= r(a, b) <= 3.2),
         "a concise text of spaces only is not empty: spaces count as characters, so ' ' has len 1 and (' ', 'ab') has "
         "ratio 2.0, in the band; only a concise text of len 0 is out (test len(concise) > 0, not concise.strip())"),
        ((sum(len(a) > 0 and 1.6 <= r(a, b) <= 3.2 for a, b in set(pairs)) / len(set(pairs))) if pairs else 0.0,
         "count EVERY pair, the same pair twice included: set(pairs) drops repeated pairs (two prompts can get the same "
         "texts), and the share is over all the pairs in the list"),
        (share(lambda a, b: 1.6 <= len(b) / max(len(a), 1) <= 3.2),
         "a pair whose concise text is EMPTY is out of the band, whatever the detailed text: guarding the division "
         "with max(len(concise), 1) (or `len(concise) or 1`) puts ('', 'ab') in it, at ratio 2 / 1"),
        (counted(lambda s: len(s.replace("\n", ""))),
         "newlines are characters: len counts them ('aa\\naa' has 5 characters, 'aa\\n' 3). Do not remove '\\n' "
         "before counting: len(text) as it is"),
        (counted(lambda s: len(s.strip("\n"))),
         "newlines are characters, at the ends of a text too: len counts them ('aaaa\\n' has 5 characters). Do not "
         "strip('\\n') before counting: len(text) as it is"),
        (counted(lambda s: len(s.replace("\t", ""))),
         "tabs are characters: len counts them ('aa\\taa' has 5 characters). Do not remove '\\t' before counting: "
         "len(text) as it is"),
        (counted(_letters_digits_spaces),
         "punctuation is characters: len counts '.', ',' and '!' as it counts letters ('aa.aa' has 5 characters). Do "
         "not keep only letters, digits and spaces: len(text) as it is"),
        (counted(lambda s: len(" ".join(s.split()))),
         "a run of spaces INSIDE the text counts space by space: len counts them all ('aa  a' has 5 characters). "
         "' '.join(text.split()) collapses each run to one space (and strips the ends): count len(text) as it is"),
        (share(lambda a, b: (len(a) > 0 and 1.6 <= r(a, b) <= 3.2) or (not a and not b)),
         "a pair whose concise text is EMPTY is out of the band, ('', '') too: with the band multiplied out, "
         "1.6 * len(concise) <= len(detailed) <= 3.2 * len(concise), the pair ('', '') reads 0 <= 0 <= 0 and is "
         "counted in. Test len(concise) > 0 first (an empty concise text is out, whatever the detailed one)"),
        (share(lambda a, b: not a or 1.6 <= r(a, b) <= 3.2),
         "a pair whose concise text is EMPTY is out of the band, whatever the detailed text: your function counts it "
         "IN (an `except ZeroDivisionError:` that counts the pair, or an infinite ratio let through). Test "
         "len(concise) > 0 before dividing and count such a pair out, without catching the error"),
        (share(lambda a, b: len(a) > 0 and len(b.strip()) > 0 and 1.6 <= r(a, b) <= 3.2),
         "a DETAILED text of spaces only is not empty either: spaces count as characters, so '    ' has len 4 and "
         "('ab', '    ') has ratio 4 / 2 = 2.0, in the band. Your function counts such a pair out (a test of "
         "detailed.strip(), or of the detailed text's words): drop that test; only an empty CONCISE text (len 0) "
         "puts a pair out, and both lengths are len(text) as it is, spaces included"),
    ]


def _reads_so_everywhere(fn, k) -> bool:
    """Whether `fn` gives misreading k's share on every case: several readings can coincide on one case (a word count
    and a non-strict end both miss the same pair), and the hint should name the one the answer follows throughout."""
    for pairs, _ in _BAND_CASES:
        try:
            got = fn(list(pairs))
        except Exception:   # noqa: BLE001 - a crash elsewhere is not this reading
            return False
        if not isinstance(got, numbers.Real) or not math.isclose(got, _band_readings(pairs)[k][0], abs_tol=1e-9):
            return False
    return True


# Two one-pair probes on which counting without spaces (len(text.replace(' ', ''))) reads the band the other way round
# from len(text), and differently from a word count: ('a a a a a a a a a a ', 40 b's) is 2.0 with spaces (in), 4.0
# without (out), 0.1 in words (out); ('a   a', 'bbbb') is 0.8 with spaces (out), 2.0 without (in), 0.5 in words (out).
_SPACE_PROBES = [([("a " * 10, "b" * 40)], 1.0, 0.0), ([("a   a", "bbbb")], 0.0, 1.0)]


def _ignores_spaces(fn) -> bool:
    """Whether `fn` counts characters without the spaces: on both probes it gives the space-free share."""
    try:
        return all(math.isclose(fn(list(pairs)), without, abs_tol=1e-9) for pairs, _, without in _SPACE_PROBES)
    except Exception:   # noqa: BLE001 - a crash here is not this reading
        return False


# Two lists of pairs, each with equal concise lengths (so the mean of the ratios is also total detailed / total
# concise), on which testing ONE ratio for the whole list gives the other answer from counting the pairs: ratios 1.0
# and 4.0 (share 0.0; mean 2.5, in the band), and 2.0, 2.0, 6.0 (share 2/3; mean 3.33, out of it).
_MEAN_PROBES = [([_pair(100, 100), _pair(100, 400)], 1.0), ([_pair(100, 200), _pair(100, 200), _pair(100, 600)], 0.0)]


def _tests_the_mean(fn) -> bool:
    """Whether `fn` tests the mean ratio of the list (or the ratio of the totals) against the band, 1 or 0 for the
    whole list, instead of counting the pairs in it one by one."""
    try:
        return all(math.isclose(fn(list(pairs)), mean_says, abs_tol=1e-9) for pairs, mean_says in _MEAN_PROBES)
    except Exception:   # noqa: BLE001 - a crash here is not this reading
        return False


# One-pair probes, each in the band by characters: few words ('ab ab' and 'cd cd cd cd', 2 and 4 words, ratio 2.2,
# in words 2.0, so a word count alone keeps it in), many words (334 and 667), and a control of 20 and 40 words.
_WORD_GATE_PROBES = (("ab ab", "cd cd cd cd"), _pair(1000, 2000), _pair(60, 120))


def _word_gate(fn) -> str:
    """What a gate on the texts' word counts (the reward's first level, 8..256 words) does in `fn`: 'fewer than 8',
    'more than 256', both joined by ' or ', or '' when the probes show no such gate."""
    try:
        short, long, control = (fn([pair]) for pair in _WORD_GATE_PROBES)
        if not math.isclose(control, 1.0, abs_tol=1e-9):
            return ""
        gates = [what for got, what in ((short, "fewer than 8"), (long, "more than 256"))
                 if math.isclose(got, 0.0, abs_tol=1e-9)]
    except Exception:   # noqa: BLE001 - a crash here is not this reading
        return ""
    return " or ".join(gates)


def _on_three_pairs(fn, value: float) -> bool:
    """Whether `fn` gives `value` on three non-empty pairs, one in the band (the share is 1/3). It tells apart two
    readings the check's own pairs cannot: dividing by len(pairs) - 1 gives 1/2 (a share over the non-empty concise
    texts only gives 1/3 here), the share OUTSIDE the band gives 2/3 (the space probes alone cannot: their answers are
    complements of each other)."""
    try:
        return math.isclose(fn([_pair(100, 200), _pair(100, 100), _pair(100, 100)]), value, abs_tol=1e-9)
    except Exception:   # noqa: BLE001 - a crash here is neither reading
        return False


# One-pair probes (len(concise), len(detailed)) across the ratio axis, fine near both edges: on them an answer that is
# right in the middle of the band and far outside it shows where it puts the edges (a band ending at 3.0, a ratio
# rounded or compared with a tolerance near 1.6 and 3.2).
_EDGE_PROBES = [(1000, d) for d in (500, 1100, 1300, 1400, 1500, 1550, 1580, 1590, 1594, 1595, 1596, 1599, 1600, 1601,
                                    1610, 1650, 1700, 1800, 2000, 2400, 2800, 2900, 2950, 3000, 3050, 3100, 3150, 3190,
                                    3199, 3200, 3201, 3204, 3205, 3210, 3250, 3300, 3400, 3500, 4000, 5000, 6000)] + [
    (10000, 15996), (10000, 32004), (25000, 39999), (25000, 40001), (25000, 79999), (25000, 80001),
    (100000, 159992), (100000, 320008),                # round(ratio, 4) leaves these two out, a tolerance of 1e-4 not
    (25002, 40003), (25004, 80013),                    # 8e-6 out: round(ratio, 5) leaves them out, a tolerance of 1e-5 not
    (66667, 106667), (66669, 213341),                  # 3e-6 out: round(ratio, 5) puts them in, a tolerance of 1e-6 not
    (250002, 400003), (250004, 800013),                # 8e-7 out: round(ratio, 6) leaves them out, a tolerance of 1e-6 not
    (500002, 800003), (500004, 1600013), (500003, 800005), (500001, 1600003)]     # the last case's pairs, 4e-7 off


def _ratio_text(x: float) -> str:
    """A ratio as a reader writes it: 3.0, not 3; 1.59996 in full; a ratio a hair off an edge with the digits that
    tell it from the edge (1.5999996, not 1.6)."""
    for digits in range(6, 18):
        text = f"{x:.{digits}g}"
        if x in (1.6, 3.2) or float(text) not in (1.6, 3.2):
            break
    return text if "." in text or "e" in text else text + ".0"


def _one_pair_in_band(fn, c: int, d: int) -> bool | None:
    """The answer's verdict on one pair of c and d characters: its share is 1 (in the band) or 0 (out); None when it
    crashes there or returns anything else (a one-pair probe then says nothing)."""
    try:
        got = fn([("a" * c, "b" * d)])
    except Exception:   # noqa: BLE001 - a crash on a probe is no evidence
        return None
    if not isinstance(got, numbers.Real) or isinstance(got, bool) or not (
            math.isclose(got, 0.0, abs_tol=1e-9) or math.isclose(got, 1.0, abs_tol=1e-9)):
        return None
    return got > 0.5


def _edge_slip(fn, pairs=()) -> str | None:
    """What an answer that is right in the middle of the band and far outside it does wrong at the edges, in a
    sentence: the ratio rounded (round(ratio, k)), a tolerance, or another edge than 1.6 or 3.2; None when the
    one-pair probes show no band of that shape (the generic rule is said then). The pair it names as an example is one
    of `pairs` (the failing case, whose ratios the message lists) when the answer gets one of them wrong that way."""
    seen = {}
    own = sorted({(len(a), len(b)) for a, b in pairs if a} - set(_EDGE_PROBES))
    for c, d in own:                                    # the failing case's own pairs, one at a time
        if (verdict := _one_pair_in_band(fn, c, d)) is None:
            own = []                                    # no example from this case then
            break
        seen[c, d] = verdict
    for c, d in _EDGE_PROBES:
        if (verdict := _one_pair_in_band(fn, c, d)) is None:
            return None                                 # a crash or a non-share on a probe is not an edge slip
        seen[c, d] = verdict
    right = {(c, d): 1.6 <= d / c <= 3.2 for c, d in _EDGE_PROBES + own}
    if not seen[1000, 2400] or any(seen[1000, d] for d in (500, 1100, 5000, 6000)):
        return None                                         # not a band around the middle: no edge to speak of
    wrong = [(c, d) for c, d in _EDGE_PROBES if seen[c, d] != right[c, d]]
    if not wrong:
        return None
    listed = {(len(a), len(b)) for a, b in pairs if a}
    shown = [p for p in own + _EDGE_PROBES if p in listed and seen[p] != right[p]]      # wrong, and in the message

    def example(ok, key):
        """The pair to name: a wrong one of the failing case that `ok` accepts (the reader sees its ratio listed),
        else the wrong probe that `ok` accepts farthest by `key`."""
        return max([p for p in shown if ok(p)] or [p for p in wrong if ok(p)], key=key)
    fix = ("The band's ends are exact: compare the ratio len(detailed) / len(concise) itself with 1.6 and 3.2 "
           "(1.6 <= ratio <= 3.2, both ends in), not rounded and with no tolerance beyond float error")
    gap = lambda p: min(abs(p[1] / p[0] - 1.6), abs(p[1] / p[0] - 3.2))      # how far from the nearer edge
    pair = lambda p: f"the pair of {p[0]} and {p[1]} characters (ratio {p[1]}/{p[0]} = {_ratio_text(p[1] / p[0])})"
    k = next((k for k in range(1, 7) if all(seen[p] == (1.6 <= round(p[1] / p[0], k) <= 3.2) for p in _EDGE_PROBES)),
             None)
    if k is not None:                   # exactly what rounding the ratio to k decimals does, on every probe
        p = example(lambda p: seen[p] == (1.6 <= round(p[1] / p[0], k) <= 3.2), gap)
        return (f"your function counts {pair(p)} IN the band, though it lies just "
                f"{'below 1.6' if p[1] / p[0] < 1.6 else 'above 3.2'}: you round the ratio to {k} decimal"
                f"{'s' if k > 1 else ''} (round({_ratio_text(p[1] / p[0])}, {k}) is {round(p[1] / p[0], k)!r}). " + fix)
    if all(gap(p) <= 0.0101 for p in wrong):          # only within 0.01 of an edge: the edges blurred, not moved
        outside_in = [p for p in wrong if seen[p]]
        if outside_in:
            p = example(lambda p: seen[p] and gap(p) <= 0.0101, gap)
            return (f"your function counts {pair(p)} IN the band, though it lies just "
                    f"{'below 1.6' if p[1] / p[0] < 1.6 else 'above 3.2'}: do you compare with a tolerance "
                    "(1.6 - eps <= ratio <= 3.2 + eps), or round or cut the ratio (f'{ratio:.2f}', "
                    "int(ratio * 100) / 100)? " + fix)
        p = example(lambda p: not seen[p] and gap(p) <= 0.0101, gap)
        return (f"your function counts {pair(p)} OUT of the band, though it lies in [1.6, 3.2]: the ends are in the "
                "band (<=, not <), and a tolerance must not shrink it. " + fix)
    order = sorted(_EDGE_PROBES, key=lambda p: p[1] / p[0])
    ins = [p[1] / p[0] for p in order if seen[p]]
    one_run = "0" not in "".join("1" if seen[p] else "0" for p in order).strip("0")
    shape = (f" (it looks like [{_ratio_text(min(ins))}, {_ratio_text(max(ins))}])" if ins and one_run else "")
    edges = []
    for side, edge, here in (("lower", 1.6, lambda p: p[1] / p[0] < 2.4), ("upper", 3.2, lambda p: p[1] / p[0] >= 2.4)):
        off = [p for p in wrong if here(p)]
        if off:
            p = example(here, lambda p, edge=edge: abs(p[1] / p[0] - edge))
            edges.append(f"the {side} edge is {edge}: {pair(p)} is {'IN' if right[p] else 'OUT of'} the band, your "
                         f"function counts it {'out' if right[p] else 'in'}")
    return (f"your band is not the full-score band [1.6, 3.2]{shape}: " + "; ".join(edges)
            + ". Count a pair when 1.6 <= len(detailed) / len(concise) <= 3.2, both ends in: the full-score band "
            "of the length level")


# One-pair probes (len(concise), len(detailed)) on which a ratio read another way (divided by len(concise) + 1, the
# relative difference (d - c) / c) or a band with one edge only counts other pairs than len(d) / len(c) in [1.6, 3.2]:
# the edge probes, and short texts, where the + 1 moves the ratio most ((5, 8) is 1.6, but 8 / 6 = 1.33).
# (4, 7) tells (d + 1) / (c + 1) = 8 / 5 = 1.6, in, from d / (c + 1) = 7 / 5 = 1.4, out.
_RATIO_PROBES = _EDGE_PROBES + [(5, 8), (5, 16), (1, 2), (10, 33), (10, 20), (2, 7), (3, 5), (1, 4), (10, 16), (4, 12),
                                (4, 7)]


def _ratio_slip(fn) -> str | None:
    """What an answer that reads the ratio another way, or tests one edge of the band only, does, in a sentence (on
    every one-pair probe it counts exactly the pairs that reading counts); None when it follows none of them."""
    seen = {}
    for c, d in _RATIO_PROBES:
        if (verdict := _one_pair_in_band(fn, c, d)) is None:
            return None                                 # a crash or a non-share is none of these readings
        seen[c, d] = verdict
    at_edge = lambda c, d: 5 * d in (8 * c, 16 * c)     # ratio exactly 1.6 or 3.2: either way for a one-edge test
    pair = lambda c, d: f"the pair of {c} and {d} characters (ratio {d}/{c} = {_ratio_text(d / c)})"
    both = ("Count a pair when 1.6 <= len(detailed) / len(concise) <= 3.2: both edges at once (in Python the chained "
            "comparison, or lo <= ratio and ratio <= hi)")
    if all(seen[p] == (p[1] / p[0] >= 1.6) for p in _RATIO_PROBES if not at_edge(*p)):
        return (f"your function counts {pair(1000, 6000)} IN the band: you test only the lower edge (ratio >= 1.6), so "
                "every pair whose detailed text is more than 3.2 times as long as the concise one counts too. " + both)
    if all(seen[p] == (p[1] / p[0] <= 3.2) for p in _RATIO_PROBES if not at_edge(*p)):
        return (f"your function counts {pair(1000, 500)} IN the band: you test only the upper edge (ratio <= 3.2), so "
                "every pair whose detailed text is less than 1.6 times as long as the concise one (even shorter than "
                "it) counts too. " + both)
    if all(seen[c, d] == (1.6 <= (d + 1) / (c + 1) <= 3.2) for c, d in _RATIO_PROBES):
        return (f"your function counts {pair(5, 8)} OUT of the band, where 1.6 belongs: you add 1 to BOTH lengths, "
                "(len(detailed) + 1) / (len(concise) + 1) (add-one smoothing, to avoid a division by zero?), which "
                "pulls every ratio toward 1, most for short texts ((8 + 1) / (5 + 1) = 1.5), and puts ('', 'ab') IN "
                "the band at (2 + 1) / 1 = 3.0. Divide the lengths as they are, len(detailed) / len(concise), and "
                "count a pair whose concise text is empty out (test len(concise) > 0 before dividing)")
    if all(seen[c, d] == (1.6 <= d / (c + 1) <= 3.2) for c, d in _RATIO_PROBES):
        return (f"your function counts {pair(5, 8)} OUT of the band, where 1.6 belongs: you divide by "
                "len(concise) + 1 (to avoid a division by zero?), which lowers every ratio, most for short texts "
                "(8 / 6 = 1.33). Divide by len(concise) itself, len(detailed) / len(concise), and count a pair whose "
                "concise text is empty out (test len(concise) > 0 before dividing)")
    if all(seen[c, d] == (1.6 <= (d - c) / c <= 3.2) for c, d in _RATIO_PROBES):
        return (f"your function counts {pair(1000, 2000)} OUT of the band: you compare (len(detailed) - len(concise)) "
                "/ len(concise), how much LONGER the detailed text is (1.0 for that pair), with 1.6 and 3.2. The band "
                "is on the ratio itself, len(detailed) / len(concise): a detailed text 1.6 to 3.2 times as long as "
                "the concise one")
    if floored := _floored_ratio(seen, pair):
        return floored
    return None


def _floored_ratio(seen: dict, pair) -> str:
    """What an answer that reads only the whole part of the ratio (len(d) // len(c), int(ratio), math.floor) does, in
    a sentence: on every one-pair probe it counts a pair exactly when d // c is one of a few whole numbers; '' when
    it does not (or counts none, or every pair, where no band is seen)."""
    by_whole: dict = {}
    for (c, d), counted in seen.items():
        by_whole.setdefault(d // c, set()).add(counted)
    if any(len(v) > 1 for v in by_whole.values()):
        return ""
    ins = sorted(k for k, v in by_whole.items() if True in v)
    if not ins or 0 in ins or max(by_whole) in ins:
        return ""
    ratio = lambda p: p[1] / p[0]
    out_wrongly = [p for p in seen if 1.6 <= ratio(p) <= 3.2 and not seen[p]]
    in_wrongly = [p for p in seen if not 1.6 <= ratio(p) <= 3.2 and seen[p]]
    told = []
    if out_wrongly:                                     # the lowest such ratio; of two pairs of one ratio, the longer
        p = min(out_wrongly, key=lambda p: (ratio(p), -p[0]))
        told.append(f"{pair(*p)} OUT of the band, though it is in it ({p[1]} // {p[0]} = {p[1] // p[0]})")
    if in_wrongly:                                      # the highest such ratio, the longer pair again
        p = max(in_wrongly, key=lambda p: (ratio(p), p[0]))
        told.append(f"{pair(*p)} IN the band, though it is out of it ({p[1]} // {p[0]} = {p[1] // p[0]})")
    return (f"your function counts {'; and '.join(told)}: it reads only the WHOLE part of the ratio (the pairs it "
            f"counts in are exactly those whose len(detailed) // len(concise) is {' or '.join(map(str, ins))}). Do you "
            "divide with "
            "// (integer division), or cut the ratio with int(...) or math.floor? // drops the fraction, so every "
            "ratio from 1.0 to 1.99 reads as 1 and every one from 3.0 to 3.99 as 3. Divide with /, len(detailed) / "
            "len(concise), and compare that ratio itself with 1.6 and 3.2 (1.6 <= ratio <= 3.2)")


def _tiny_constant(fn, _seen=None) -> float | None:
    """A small positive float (below 1e-3) that `fn` holds: a constant of its code or of a function defined inside it
    (a lambda, a generator expression), a default, a closure cell, or a global it reads; None when it holds none. An
    epsilon added to the denominator, len(d) / (len(c) + 1e-9), leaves no other trace: it moves a ratio of exactly 1.6
    just below it (out) and one of exactly 3.2 just below it (still in), as a strict lower edge does. The learner's own
    helpers are read too (a function in a closure cell or a default, as a factory's `pred` is, or a global function of
    the answer's own module: `ratio(c, d)` defined next to it), not a library's."""
    small = lambda v: isinstance(v, float) and 0 < abs(v) < 1e-3
    code, found, helpers = getattr(fn, "__code__", None), [], []
    seen = set() if _seen is None else _seen
    seen.add(id(fn))
    module = getattr(fn, "__module__", None)
    own = lambda v: inspect.isfunction(v) and id(v) not in seen and v.__module__ in (module, "__main__")

    def walk(co):
        for const in co.co_consts:
            if small(const):
                found.append(const)
            elif inspect.iscode(const):
                walk(const)
        for n in co.co_names:
            v = getattr(fn, "__globals__", {}).get(n)
            if small(v):
                found.append(v)
            elif own(v):
                helpers.append(v)
    if code is not None:
        walk(code)
    for v in getattr(fn, "__defaults__", None) or ():
        if small(v):
            found.append(v)
        elif own(v):
            helpers.append(v)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:   # an empty cell
            continue
        if small(v):
            found.append(v)
        elif own(v):
            helpers.append(v)
    if found:
        return found[0]
    for helper in helpers if len(seen) < 16 else ():     # a few levels of the learner's own helpers, no further
        if (eps := _tiny_constant(helper, seen)) is not None:
            return eps
    return None


def _zeroes_the_list(fn) -> bool:
    """Whether `fn` returns 0.0 for the WHOLE list as soon as one concise text is empty (an `except ZeroDivisionError:
    return 0.0` around the whole sum, or `if any(not c ...): return 0.0`), and the right share otherwise."""
    inside, out, empty = _pair(60, 120), _pair(100, 100), ("", "ab")     # ratios 2.0 (in) and 1.0 (out)
    try:
        return all(math.isclose(fn(pairs), want, abs_tol=1e-9) for pairs, want in (
            ([inside, inside], 1.0), ([inside, out], 0.5), ([empty, inside], 0.0), ([inside, inside, empty], 0.0)))
    except Exception:   # noqa: BLE001 - a crash here is not this reading
        return False


def _one_pair_read(fn) -> str | None:
    """What an answer that reads only the first (or only the last) pair of the list does, in a sentence: a return
    inside the for loop, pairs[0], or a variable set (not added to) on every pass; None when it reads every pair."""
    inside, out = _pair(100, 200), _pair(100, 100)      # ratio 2.0, in the band; ratio 1.0, out of it
    try:
        got = {k: fn(list(pairs)) for k, pairs in (("ioo", [inside, out, out]), ("oii", [out, inside, inside]),
                                                    ("ooi", [out, out, inside]), ("iio", [inside, inside, out]))}
    except Exception:   # noqa: BLE001 - a crash here is neither reading
        return None
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in got.values()):
        return None
    zero = lambda v: math.isclose(v, 0.0, abs_tol=1e-9)
    fix = ("Count every pair in the band, then divide by the number of pairs once the loop is done: "
           "sum(...) / len(pairs)")
    if not zero(got["ioo"]) and zero(got["oii"]):
        return (f"your function reads only the FIRST pair of the list: on three pairs of ratios 2.0, 1.0, 1.0 it gives "
                f"{got['ioo']!r}, on 1.0, 2.0, 2.0 it gives {got['oii']!r} (a return inside the for loop, or "
                "pairs[0]). " + fix)
    if not zero(got["ooi"]) and zero(got["iio"]):
        return (f"your function reads only the LAST pair of the list: on three pairs of ratios 1.0, 1.0, 2.0 it gives "
                f"{got['ooi']!r}, on 2.0, 2.0, 1.0 it gives {got['iio']!r} (a variable set, not added to, on every "
                "pass of the for loop). " + fix)
    return None


# A pair whose ratio 9600003 / 3000001 = 3.19999993 lies in the band, but rounds to float32's 3.2, 3.2000000477, which
# is above the Python float 3.2: an answer that computes the ratio in float32 counts it out, one that leaves 3.2 itself
# out (ratio < 3.2) counts it in.
_FLOAT32_PROBE = (3_000_001, 9_600_003)


def _float32_ratio(fn) -> bool:
    """Whether `fn` counts the pair of ratio exactly 3.2 and _FLOAT32_PROBE out: the ratio computed in float32."""
    try:
        return all(math.isclose(fn([("a" * c, "b" * d)]), 0.0, abs_tol=1e-9)
                   for c, d in ((100, 320), _FLOAT32_PROBE))
    except Exception:   # noqa: BLE001 - a crash here is not this reading
        return False


def _float32(x: float) -> float:
    """x rounded to float32 and back, as a float32 tensor or array holds it."""
    return torch.tensor(x, dtype=torch.float32).item()


# A pair in the band by its character ratio (27 / 9 = 3.0) that the reward's first level fails: 2 and 5 words, fewer
# than 8. The reward scores its length level (L2) only when L1 passes, so tldr_levels gives it length_ratio 0.0.
_GATE_PROBE = ("short one", "a somewhat longer text here")


def _gated_wrapper(fn) -> None:
    """Refuse an answer that reads the reward (tldr_levels, tldr_reward) for the band, and say why it is WRONG, not
    only a shortcut: the reward's L2 is gated behind L1's word counts, so a short pair in the band scores 0.0 there."""
    used = runs_the_library(fn, ([_GATE_PROBE],), tldr_levels, _levels, tldr_reward)
    if used is None:
        return
    try:
        got = fn([_GATE_PROBE])
    except Exception:   # noqa: BLE001 - the wrapper message below is said then
        return
    if isinstance(got, numbers.Real) and not isinstance(got, bool) and math.isclose(got, 1.0, abs_tol=1e-9):
        return
    c, d = _GATE_PROBE
    raise ExerciseFailed(f"your function calls the package's own `{used.__name__}` and reads the reward's length level: "
                         "that is not only a shortcut, it is WRONG here. The reward scores its length level (L2, "
                         "length_ratio) only when its first level passes (L1: both texts 8 to 256 words), so a pair "
                         f"with fewer words scores 0.0 whatever its ratio: tldr_levels({c!r}, {d!r}) gives "
                         f"length_ratio 0.0, though {len(d)} / {len(c)} = {len(d) / len(c)} is in the band, and your "
                         f"function gives {got!r} for that one pair, not 1.0. Write `in_band_share` from the rule in "
                         "the text (len(detailed) / len(concise) in [1.6, 3.2], an empty concise text out), whatever "
                         "the number of words, without calling the reward.")


def _in_band(pairs) -> float:
    ok = [len(c1) > 0 and 1.6 <= len(c2) / len(c1) <= 3.2 for c1, c2 in pairs]
    return sum(ok) / len(ok) if ok else 0.0


def _cuts_the_share(fn, cut) -> bool:
    """Whether `fn` gives cut(share) on every case of the check (a case where it crashes on an empty list aside): the
    share cut by an integer division (math.floor) or rounded (round(share, 1)), every other rule right."""
    for pairs, want in _BAND_CASES:
        want = _in_band(pairs) if want is None else want
        try:
            got = fn(list(pairs))
        except Exception:   # noqa: BLE001 - a crash on no pairs is said by its own case; elsewhere not this reading
            if not pairs:
                continue
            return False
        if not isinstance(got, numbers.Real) or isinstance(got, bool) or not math.isclose(got, cut(want),
                                                                                          abs_tol=1e-9):
            return False
    return True


def _shown(pairs, limit: int = 80) -> str:
    """The pairs as a reader can take them in: short ones as they are, long ones by their lengths."""
    text = repr(pairs)
    return text if len(text) <= limit else f"{len(pairs)} pairs of (len(concise), len(detailed)) " + repr(
        [(len(a), len(b)) for a, b in pairs])


def _band_crash(exc: Exception, pairs) -> str:
    """What a crash of in_band_share says: a division by zero (no pairs, an empty concise text) is explained."""
    if isinstance(exc, ZeroDivisionError) and not pairs:
        return "an empty list of pairs made your function divide by zero: its share is 0.0 (the exercise says so)."
    if isinstance(exc, ZeroDivisionError) and all(c1.strip() for c1, _ in pairs) and len(pairs) == 1:
        return (f"a list of ONE pair ({_shown(pairs)}) made your function divide by zero: do you divide by "
                "len(pairs) - 1? The share divides by the number of pairs, len(pairs).")
    if isinstance(exc, ZeroDivisionError) and all(c1 for c1, _ in pairs):
        return (f"your function divided by zero on {_shown(pairs)}, where no concise text is empty: ' ' (spaces "
                "only) has len 1. Do you remove the spaces before counting? Count every character as len(text) "
                "does, spaces included: the length level counts them.")
    if isinstance(exc, ZeroDivisionError):
        return ("a pair whose concise text is empty made your function divide by zero: count such a "
                "pair as NOT in the band (the reward's first level already fails it).")
    return (f"in_band_share({_shown(pairs)}) raised {type(exc).__name__}: {exc}. It takes a list "
            "of (concise, detailed) string pairs and returns the share in the band as a number.")


@exercise("07.in_band_share")
def check_in_band_share(fn):
    # the level's own functions (the length level, the ramp, the reward's breakdown) put the band's edges in by
    # construction: an answer that calls them is refused whatever it returns; one that reads the reward (tldr_levels)
    # is told first that it is wrong, where the reward's word gate scores a short pair in the band 0.0
    _gated_wrapper(fn)
    not_a_wrapper(fn, (list(_BAND_CASES[0][0]),), "in_band_share", tldr_length_level, ramp_level, tldr_levels, _levels,
                  tldr_reward, length_ratio_reward,
                  how="from the rule in the text (len(detailed) / len(concise) in [1.6, 3.2], an empty concise text "
                      "out)")
    for pairs, want in _BAND_CASES:
        want = _in_band(pairs) if want is None else want      # the expected share, before the answer sees the pairs
        given = list(pairs)                                    # the answer's own list: what it does to it is seen
        got = call_answer(fn, given, said=lambda exc, pairs=pairs: _band_crash(exc, pairs))
        if given != list(pairs):
            how = (f"it held {len(pairs)} pair(s), now {len(given)}" if len(given) != len(pairs) else
                   "its pairs are now in another order or changed")
            raise ExerciseFailed(f"your function changed the list of pairs it was given ({how}): pop, sort, clear, "
                                 "remove or append change the "
                                 "caller's list, and the notebook reads each run's saved texts again after computing "
                                 "the share. Read the pairs without changing the list (a for loop over it, or sorted("
                                 "pairs) / list(pairs) for a copy to change).")
        if not isinstance(got, numbers.Real) or isinstance(got, bool):
            raise ExerciseFailed(f"return the share of pairs in the band as a number in [0, 1]; you returned {got!r}.")
        if not math.isfinite(got):
            raise ExerciseFailed(f"you returned {got!r}" + (": for an empty list of pairs return 0.0 (the exercise "
                                                            "says so)." if not pairs else
                                                            f" for {_shown(pairs)}: return the share of pairs in the "
                                                            "band, a number in [0, 1]."))
        if math.isclose(got, want, abs_tol=1e-9):
            continue
        if not pairs:
            raise ExerciseFailed(f"for an empty list of pairs the share is 0.0 (the exercise says so); you returned "
                                 f"{got!r}"
                                 + (": no pair is in the band when there are no pairs, so the share is 0.0, not 1.0 "
                                    "(do you return 1.0 for an empty list, `if not pairs: return 1.0`, or start from "
                                    "1.0?)" if math.isclose(got, 1.0, abs_tol=1e-9) else "")
                                 + ". Return 0.0 when pairs is empty: `if not pairs: return 0.0`, before dividing by "
                                 "len(pairs).")
        ratios = ["inf" if not c1 else f"{len(c2) / len(c1):.2f}" for c1, c2 in pairs]
        n = len(pairs)
        if n > 1 and want > 0 and math.isclose(got, want * n / (n - 1), abs_tol=1e-9) and _on_three_pairs(fn, 1 / 2):
            raise ExerciseFailed(f"for {n} pairs, {round(want * n)} of them in the band, you returned {got!r} = "
                                 f"{round(want * n)} / {n - 1}: you divided by one less than the number of pairs "
                                 f"(len(pairs) - 1). The share divides by ALL the pairs: {round(want * n)} / {n} = "
                                 f"{want:.2f}.")
        if got > 1:
            if math.isclose(got, 100 * want, abs_tol=1e-6):
                raise ExerciseFailed(f"you returned {got!r}: a percentage; return the share as a number in [0, 1].")
            if math.isclose(got, want * n, abs_tol=1e-9):
                raise ExerciseFailed(f"you returned {got!r}: a count, not a share. Divide by the number of pairs "
                                     f"({n}).")
            raise ExerciseFailed(f"you returned {got!r} for {n} pairs: a share is a number in [0, 1], the pairs in the "
                                 f"band divided by the number of pairs ({n}).")
        if got == math.floor(want) != want and _cuts_the_share(fn, math.floor):
            raise ExerciseFailed(f"for {n} pairs, {round(want * n)} of them in the band, the share is {want:.2f}; you "
                                 f"returned {got!r}: you divide with // (integer division), sum(...) // len(pairs) "
                                 "(or cut the share with int(...) or math.floor), which drops the fraction, so every "
                                 "share below 1 comes out as 0, and 1 only when every pair is in the band. Divide "
                                 f"with /: sum(...) / len(pairs), here {round(want * n)} / {n} = {want:.2f}.")
        if math.isclose(got, 1 - want, abs_tol=1e-9) and _on_three_pairs(fn, 2 / 3):
            raise ExerciseFailed(f"for pairs whose character ratios are {ratios} the share in [1.6, 3.2] is "
                                 f"{want:.2f}; you returned {got!r}, the share OUTSIDE the band (1 minus it). Count "
                                 "the pairs whose ratio lies in [1.6, 3.2].")
        if math.isclose(got, 0.0, abs_tol=1e-9) and any(not c1 for c1, _ in pairs) and _zeroes_the_list(fn):
            raise ExerciseFailed(f"for pairs whose character ratios are {ratios} the share in [1.6, 3.2] is "
                                 f"{want:.2f}; you returned {got!r}: your function returns 0.0 for the WHOLE list as "
                                 "soon as one concise text is empty (on [('', 'ab'), a pair of ratio 2.0] it gives "
                                 "0.0, on [a pair of ratio 2.0, the same pair] 1.0): a try around the whole sum with "
                                 "`except ZeroDivisionError: return 0.0`, or `if any(not concise ...): return 0.0`? "
                                 "An empty concise text puts its OWN pair out of the band; the other pairs still "
                                 "count. Test len(concise) > 0 pair by pair (that pair counts out) and divide by the "
                                 "number of all the pairs.")
        if _ignores_spaces(fn):
            raise ExerciseFailed(f"for pairs whose character ratios are {ratios} the share in [1.6, 3.2] is "
                                 f"{want:.2f}; you returned {got!r}: you count the characters without the spaces "
                                 "(len(text.replace(' ', '')) or len(''.join(text.split()))). The length level counts every "
                                 "character, spaces included: use len(text) as it is ('a b' has 3 characters).")
        if _tests_the_mean(fn):
            raise ExerciseFailed(f"for pairs whose character ratios are {ratios} the share in [1.6, 3.2] is "
                                 f"{want:.2f}; you returned {got!r}: you test ONE ratio for the whole list (the mean "
                                 "of the pairs' ratios, or the total characters over the total) and return 1 or 0. On "
                                 "two pairs of ratios 1.0 and 4.0 neither is in the band (share 0.0), though their mean "
                                 "2.5 is; your function gives 1.0. Count the pairs one by one: each pair whose own "
                                 "ratio len(detailed) / len(concise) lies in [1.6, 3.2], divided by the number of pairs.")
        if gate := _word_gate(fn):
            raise ExerciseFailed(f"for pairs whose character ratios are {ratios} the share in [1.6, 3.2] is "
                                 f"{want:.2f}; you returned {got!r}: your function counts a pair out when a text has "
                                 f"{gate} words, the reward's first level (L1: 8 to 256 words), though its character "
                                 "ratio is in the band (('ab ab', 'cd cd cd cd') has ratio 11 / 5 = 2.2, in). The share "
                                 "reads the length ratio alone, as the length level does: count every pair whose "
                                 "len(detailed) / len(concise) lies in [1.6, 3.2], whatever its number of words.")
        if got != want and got == _float32(want):
            raise ExerciseFailed(f"the share in the band is {want!r}; you returned {got!r}, that share in float32 (the "
                                 "mean of a float32 tensor or array, about 7 digits): it is off in the 8th digit. "
                                 "Return the share as a Python float, sum(...) / len(pairs) (or .double() before "
                                 ".mean(), then .item()).")
        if (got != want and rounded_to(got, want, [1]) == 1
                and _cuts_the_share(fn, lambda share: round(share, 1))):     # on every case: 0.3 alone could be a slip
            raise ExerciseFailed(f"the share in the band is {want!r}; you returned {got!r}, the share rounded to 1 "
                                 "decimal (round(share, 1), or f'{share:.1f}' read back): on 3 pairs, 1 in the band, "
                                 "that gives 0.3, not 1/3. Return it unrounded (round only when you print it).")
        if got != int(got) and (k := rounded_to(got, want, range(2, 8))) is not None:
            raise ExerciseFailed(f"the share in the band is {want!r}; you returned {got!r}, the share rounded to {k} "
                                 "decimal(s). Return it unrounded (round only when you print it).")
        said = [text for k, (value, text) in enumerate(_band_readings(pairs))
                if not math.isclose(value, want, abs_tol=1e-9) and math.isclose(got, value, abs_tol=1e-9)
                and _reads_so_everywhere(fn, k)]
        head = (f"for pairs whose character ratios chars(detailed) / chars(concise) are {ratios} the share in [1.6, "
                f"3.2] (both ends included) is {want:.2f}; you returned {got!r}: ")
        if said == [_BAND_READ_32] and _float32_ratio(fn):
            raise ExerciseFailed(head + "your function counts the pair of 100 and 320 characters OUT of the band, "
                                 "though its ratio is exactly 3.2, in the band: you compute the ratio in float32 "
                                 "(np.float32, a float32 tensor), where 320 / 100 rounds to 3.2000000477, above the "
                                 "Python float 3.2, so `ratio <= 3.2` is False (and 9600003 / 3000001 = 3.19999993 "
                                 "rounds up to it too). Compute the ratio as a Python float, len(detailed) / "
                                 "len(concise) (float64), or compare in integers (5 * len(detailed) <= 16 * "
                                 "len(concise)); and keep <=, both ends in.")
        if said == [_BAND_READ_16] and (eps := _tiny_constant(fn)) is not None:
            raise ExerciseFailed(head + "your function counts the pair of 100 and 160 characters OUT of the band, "
                                 "though its ratio is exactly 1.6, in the band: do you add a small epsilon to the "
                                 f"denominator, len(detailed) / (len(concise) + {eps!r}), to avoid a division by zero? "
                                 "It makes every ratio a hair smaller: 160 / 100.000000001 falls just below 1.6 (out), "
                                 "while 3.2 falls just below 3.2 (still in). 1.6 itself is in the band: divide by "
                                 "len(concise) itself, and guard the empty concise text by testing len(concise) > 0 "
                                 "first (such a pair is out), not with an epsilon.")
        if not said and (slip := _ratio_slip(fn) or _one_pair_read(fn)) is not None:
            raise ExerciseFailed(head + slip + ".")
        if not said and (edge := _edge_slip(fn, pairs)) is not None:
            exact = ["inf" if not c1 else _ratio_text(len(c2) / len(c1)) for c1, c2 in pairs]
            raise ExerciseFailed(f"for pairs whose character ratios chars(detailed) / chars(concise) are {exact} the "
                                 f"share in [1.6, 3.2] (both ends included) is {want:.2f}; you returned {got!r}: "
                                 + edge + ".")
        raise ExerciseFailed(f"for pairs whose character ratios chars(detailed) / chars(concise) are {ratios} the share "
                             f"in [1.6, 3.2] (both ends included) is {want:.2f}; you returned {got!r}."
                             + (" Your answer reads the rule another way: " + "; or ".join(said) + "." if said else
                                " The rule: len(detailed) / len(concise) in [1.6, 3.2], both ends in, an empty concise "
                                "text out, divided by the number of pairs."))


_SMOLLM2_LAYER = [(576, 576), (576, 192), (576, 192), (576, 576), (576, 1536), (576, 1536), (1536, 576)]


_MEAN_PROBE = ([(3, 5), (5, 3), (7, 7)], 2)      # three layers: the sum is 60, the mean over the layers 20


def _mean_probe_got(fn):
    """fn on _MEAN_PROBE (a copy of its shapes), a numpy or torch scalar as a Python number; None when it crashes."""
    try:
        got = fn(list(_MEAN_PROBE[0]), _MEAN_PROBE[1])
        return got.item() if hasattr(got, "item") and not isinstance(got, (int, float)) else got
    except Exception:   # noqa: BLE001 - a crash here is not this reading
        return None


def _averages_layers(fn) -> bool:
    """Whether fn gives the mean over the layers (sum / len(shapes), as a float, or cut or rounded to an int) on
    several layers: a single layer cannot tell it, the mean of one layer being its count."""
    got, (shapes, q) = _mean_probe_got(fn), _MEAN_PROBE
    mean = sum(q * (i + o) for i, o in shapes) / len(shapes)
    return (isinstance(got, numbers.Real) and not isinstance(got, bool) and math.isfinite(got)
            and any(math.isclose(got, m, abs_tol=1e-9) for m in (mean, math.floor(mean), round(mean))))


_HALF = ("half the answer, q * (in + out) / 2: nothing is halved or shared between the two matrices; U (lora_A) is "
         "(q, in), q * in numbers, V (lora_B) is (out, q), q * out numbers, and the adapter has both")


def _lora_readings(shapes, q) -> list:
    """(what a misreading gives on these layers, what to say): the check names one only when the answer gives it on
    EVERY case (two readings can coincide on one case: on [(10, 30)] at q = 3 half the answer, 60, is also
    2 * q * min(in, out))."""
    want = sum(q * (i + o) for i, o in shapes)
    return [
        (sum(q * i * o for i, o in shapes),
         "q * in * out: that is q copies of the full matrix. LoRA's update is V U with U of shape (q, in) (peft's "
         "lora_A) and V of shape (out, q) (lora_B)"),
        (sum(i * o for i, o in shapes),
         "in * out, the full matrix W's size; the adapter is two thin matrices, U (q, in) and V (out, q)"),
        (sum(i + o for i, o in shapes), "in + out per layer: the rank q is missing, U has q rows and V q columns"),
        (sum(q * q * (i + o) for i, o in shapes), "q * q * (in + out): q counted twice; it is q * (in + out)"),
        (sum(q * i for i, o in shapes), "only U (lora_A, (q, in)): V (lora_B) is (out, q) and counts too"),
        (sum(q * o for i, o in shapes), "only V (lora_B, (out, q)): U (lora_A) is (q, in) and counts too"),
        (sum(2 * q * min(i, o) for i, o in shapes), "2 * q * min(in, out): both matrices taken as q x min(in, out); "
         "U is (q, in) and V is (out, q), q * in + q * out numbers"),
        (sum(2 * q * max(i, o) for i, o in shapes), "2 * q * max(in, out): both matrices taken as q x max(in, out); "
         "U is (q, in) and V is (out, q), q * in + q * out numbers"),
        (4 * want, "4 times the answer: that is bytes in float32, or weights + gradient + Adam's two moments; the "
         "exercise asks for the NUMBER of parameters, q * (in + out) per layer"),
        (2 * want, "twice the answer, 2 * q * (in + out). Either you counted EACH of the two matrices as "
         "q * (in + out), but U (lora_A, (q, in)) has q * in numbers and V (lora_B, (out, q)) has out * q, together "
         "q * (in + out); or you counted two agents' adapters: count ONE agent's (each agent has its own; the "
         "notebook doubles it for two agents itself)"),
        (sum((q - 1) * (i + o) for i, o in shapes), "(q - 1) * (in + out): off by one in q. The rank is q itself: U "
         "(lora_A) has q rows, q * in numbers, and V (lora_B) q columns, out * q numbers, so a layer has "
         "q * (in + out), not (q - 1) * (in + out) (a range(1, q), or q - 1 taken for the last index?)"),
        (sum((q + 1) * (i + o) for i, o in shapes), "(q + 1) * (in + out): off by one in q. The rank is q itself: U "
         "(lora_A) has q rows, q * in numbers, and V (lora_B) q columns, out * q numbers, so a layer has "
         "q * (in + out), not (q + 1) * (in + out) (a range(q + 1), or a row or column added for a bias? LoRA has "
         "none)"),
        (sum(q * (i + o + 1) for i, o in shapes), "q * (in + out) + q: you add q numbers per layer (q * (in + out + 1)) "
         "that are part of neither U (q * in numbers) nor V (out * q numbers). The adapter of a layer is exactly "
         "U and V, q * (in + out) numbers and nothing else (peft builds lora_A and lora_B without bias)"),
        (sum(q * (i + o) + o for i, o in shapes), "q * (in + out) + out: the extra out per layer is a bias of V "
         "(lora_B), but LoRA's matrices have no bias terms (peft builds lora_A and lora_B with bias=False): "
         "q * (in + out) numbers per layer and nothing else"),
        (sum(q * (i + o) for i, o in set(shapes)),
         f"that counts each distinct SHAPE once ({len(set(shapes))} of them, as set(shapes) or a dict keyed by "
         f"shape does), but every layer has its own adapter, even when two layers share a shape: sum over all "
         f"{len(shapes)} layers in the list"),
        (want / 2, _HALF), (want // 2, _HALF),
        (sum(q * (i + o) for i, o in shapes[:-1]),
         f"the LAST layer is missing: you sum over shapes[:-1] (or range(len(shapes) - 1)), which leaves out the last "
         f"of the {len(shapes)} layer(s). Every layer in the list has its own adapter, the last one too: sum "
         "q * (in + out) over all of them (for in_features, out_features in shapes)"),
        (sum(min(q, i, o) * (i + o) for i, o in shapes),
         "you cap the rank at the layer's size, min(q, in, out) * (in + out). peft does not cap r: a LoRA of rank q "
         "has U (lora_A) of shape (q, in) and V (lora_B) of shape (out, q) whatever in and out are, so a layer "
         "(4, 6) at q = 8 has 8 * (4 + 6) = 80 parameters, not 4 * (4 + 6) = 40 (the update V U then has rank at most "
         "min(in, out), but the adapter still holds all of U and V). Count q * (in + out) per layer, for every q"),
    ]


# the rank is q (the course's symbol; peft's keyword r=, notebook 07's glossary). The first case tells most readings
# apart (at q = 1, q * (in + out) = in + out and q * in * out = in * out, so a reading that forgets q would pass or be
# named as another; at q = 4, q * q * (in + out) is 4 times the answer, as bytes of float32 are; at q = 2, twice the
# answer is q * q * (in + out)); q = 1, q = 4 and square layers later; SmolLM2's layers repeat seven shapes 30 times
# (four distinct ones), so set(shapes) is told apart there. A reading is named only when it explains every case:
# [(10, 30)] at q = 3 cannot tell half the answer from 2 * q * min(in, out), [(10, 20)] at q = 4 can (60 and 160).
# The last case has a rank larger than the layer (q = 8 > min(4, 6)): peft does not cap r, so a count that caps it,
# min(q, in, out) * (in + out), is right on every other case and wrong there (40, not 80). Keep _LORA_CASES[5:7] the
# SmolLM2 cases (_scaled_down reads them by position).
_LORA_CASES = [([(10, 30)], 3), ([(10, 20)], 4), ([(3, 5), (5, 3), (7, 7)], 2), ([(10, 20)], 1),
               ([(4096, 4096), (4096, 1024)], 16), (_SMOLLM2_LAYER * 30, 8), (_SMOLLM2_LAYER * 30, 16), ([], 8),
               ([(4, 6)], 8)]


def _same_count(got, value) -> bool:
    """Whether an answer `got` is the number `value` (an int, a float or a numpy/torch scalar alike)."""
    if hasattr(got, "item") and not isinstance(got, (int, float)):
        try:
            got = got.item()
        except (ValueError, RuntimeError):
            return False
    return isinstance(got, numbers.Real) and not isinstance(got, bool) and got == value


def _scaled_down(fn) -> str:
    """How an answer that reports the count in millions (or thousands) says it, on the two SmolLM2 cases: e.g.
    'in millions (the count divided by 1e6, rounded to 2 decimals)'; '' when it does not."""
    for scale, unit, said in ((1e6, "millions", "1e6"), (1e3, "thousands", "1000")):
        digits = set()
        for shapes, q in _LORA_CASES[5:7]:
            try:
                got = fn(list(shapes), q)
                got = got.item() if hasattr(got, "item") and not isinstance(got, (int, float)) else got
            except Exception:   # noqa: BLE001 - a crash here is not this reading
                return ""
            want = sum(q * (i + o) for i, o in shapes) / scale
            if not isinstance(got, numbers.Real) or isinstance(got, bool) or not math.isfinite(got) or got == 0:
                break
            if math.isclose(got, want, rel_tol=1e-9):
                continue                  # divided, not rounded
            k = rounded_to(got, want, range(0, 10), close=lambda g, w: math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12))
            if k is None:
                break
            digits.add(k)
        else:
            rounded = f", rounded to {max(digits)} decimal(s)" if digits else ""
            return f"in {unit} (the count divided by {said}{rounded})"
    return ""


def _lora_reads_so_everywhere(fn, k: int) -> bool:
    """Whether fn gives reading k of _lora_readings on every case (each on a copy of its shapes)."""
    for shapes, q in _LORA_CASES:
        try:
            got = fn(list(shapes), q)
        except Exception:   # noqa: BLE001 - a crash elsewhere is not this reading
            return False
        if not _same_count(got, _lora_readings(shapes, q)[k][0]):
            return False
    return True


def _peft_called(fn, args) -> str | None:
    """The first function of the peft package that fn(*args) runs (get_peft_model, LoraModel.__init__, a LoRA layer's
    update_layer, ...), however it reaches it, watched with sys.setprofile for one call; None when it runs none, when
    peft is not installed, or when a profiler is already set (left alone). Importing peft inside fn is not a use."""
    import os
    import sys

    try:
        import peft
    except ImportError:
        return None
    if sys.getprofile() is not None:
        return None
    root, seen = os.path.dirname(os.path.abspath(peft.__file__)) + os.sep, []

    def watch(frame, event, arg):         # peft's functions called from outside peft: what the answer used
        code = frame.f_code
        if (event == "call" and len(seen) < 8 and code.co_name != "<module>" and code.co_filename.startswith(root)
                and not (frame.f_back and frame.f_back.f_code.co_filename.startswith(root))):
            seen.append(getattr(code, "co_qualname", code.co_name))
    sys.setprofile(watch)
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - only the calls matter here
        pass
    finally:
        sys.setprofile(None)
    return next((name for name in seen if "Config" not in name), seen[0]) if seen else None   # a model, not its config


def _not_peft(fn) -> None:
    """Refuse an answer that builds LoRA layers with peft and counts their parameters: it passes by construction."""
    used = _peft_called(fn, ([(10, 30)], 3))
    if used is not None:
        raise ExerciseFailed(f"your function runs peft (`{used}`): it builds LoRA layers and counts their parameters, "
                             "which passes by construction and teaches nothing. Count from the shapes, without "
                             "building a model: per layer U (lora_A) is (q, in) and V (lora_B) is (out, q), "
                             "q * in + q * out numbers; sum that over the layers. Then compare with peft outside your "
                             "function, as notebook 07 does with the real model.")


@exercise("07.lora_parameters")
def check_lora_parameters(fn):
    # the cases and why: at _LORA_CASES. An answer that builds peft LoRA layers and counts them is refused first
    _not_peft(fn)
    for shapes, q in _LORA_CASES:
        want = sum(q * (i + o) for i, o in shapes)
        given = list(shapes)                    # the answer's own list: what it does to it is seen
        got = call_answer(fn, given, q, said=lambda exc, shapes=shapes, q=q: (
            f"lora_parameters({shapes if len(shapes) < 10 else 'SmolLM2 layers'}, {q}) raised "
            f"{type(exc).__name__}: {exc}. It takes a list of (in_features, out_features) pairs "
            "and the rank q, and returns one number."))
        if given != list(shapes) and len(given) == len(shapes) and sorted(map(tuple, given)) == sorted(shapes):
            raise ExerciseFailed("your function reordered the list of shapes it was given (shapes.sort() or reverse() "
                                 "sorts the caller's own list, in place): the count comes out right, but the caller's "
                                 "list no longer lists the layers in the model's order, and a function that returns a "
                                 "number should leave its input as it found it. Use sorted(shapes) for a sorted copy, "
                                 "or read the list as it is (a for loop over it, or sum(...) over a generator).")
        if given != list(shapes):
            how = (f"it held {len(shapes)} layer(s), now {len(given)}: pop, clear or remove empty the caller's list, so "
                   "the next call on the same shapes (section 4 calls it again, at another q) counts fewer layers"
                   if len(given) != len(shapes) else "its (in, out) pairs are changed: the next call on the same "
                   "shapes (section 4 calls it again, at another q) counts other layers")
            raise ExerciseFailed(f"your function changed the list of shapes it was given ({how}). Read the list without "
                                 "changing it (a for loop over it, or sum(...) over a generator).")
        tensor = got if isinstance(got, torch.Tensor) else None    # refused below even when its value is right
        if hasattr(got, "item") and not isinstance(got, (int, float)):
            try:                        # a numpy or torch scalar (np.int64, torch.tensor(...).sum()): its value
                got = got.item()        # read, to name a wrong count (a torch tensor is refused as one below)
            except (ValueError, RuntimeError):
                pass                    # not one number: refused below
        if not (isinstance(got, int) and not isinstance(got, bool) and got == want) and _averages_layers(fn):
            raise ExerciseFailed("you return the MEAN over the layers (the sum divided by len(shapes)): for layers "
                                 f"{_MEAN_PROBE[0]} with q = {_MEAN_PROBE[1]} one adapter has "
                                 f"{sum(_MEAN_PROBE[1] * (i + o) for i, o in _MEAN_PROBE[0])} parameters, your "
                                 f"function gives {_mean_probe_got(fn)!r}. Every adapted layer has its own U and V: "
                                 "sum q * (in + out) over the layers, without dividing by their number.")
        if tensor is not None and isinstance(got, (int, float)) and not isinstance(got, bool) and got == want:
            raise ExerciseFailed(f"lora_parameters({shapes if len(shapes) < 10 else 'SmolLM2 layers'}, {q}) is {want}; "
                                 f"you returned it as a torch tensor ({tensor!r}), not as an int: a count of "
                                 "parameters is a whole Python number (a float such as 120.0 is refused as well). "
                                 "Return a Python int, e.g. int(...) of your tensor (or .item() of an integer tensor), "
                                 "or sum the products of ints without torch.")
        if isinstance(got, float) and got == want:
            raise ExerciseFailed(f"lora_parameters({shapes if len(shapes) < 10 else 'SmolLM2 layers'}, {q}) is {want}; "
                                 f"you returned {got!r}, a float: a count of parameters is a whole number, an int "
                                 "(sum the products of ints, without float() or /).")
        if isinstance(got, int) and not isinstance(got, bool) and got == want:
            continue
        if not shapes:
            raise ExerciseFailed(f"for an empty list of layers (no adapted layer) the count is 0, a number; you "
                                 f"returned {got!r}. Return the sum over the layers, which is 0 when there are none.")
        what = "SmolLM2's 210 adapted layers" if len(shapes) == 210 else f"layers {shapes}"
        if isinstance(got, float) and not math.isfinite(got):
            raise ExerciseFailed(f"for {what} with q = {q} you returned {got!r}, not a number of parameters: return the "
                                 "count, q * (in + out) summed over the layers, a whole number.")
        if scaled := _scaled_down(fn):
            smol = _LORA_CASES[5]
            count = sum(smol[1] * (i + o) for i, o in smol[0])
            raise ExerciseFailed(f"for {what} with q = {q} one adapter has {want} parameters; you returned {got!r}: you "
                                 f"report the count {scaled}. For SmolLM2's 210 adapted layers at q = {smol[1]} your "
                                 f"function gives {fn(list(smol[0]), smol[1])!r}, the count is {count}. Return the "
                                 "number of parameters itself, a whole number (an int); divide by 1e6 only when you "
                                 "print it, as the notebook does.")
        said = {text for k, (value, text) in enumerate(_lora_readings(shapes, q))
                if _same_count(got, value) and _lora_reads_so_everywhere(fn, k)}
        if len(said) == 1:                       # two readings that give the same number here would be a guess
            raise ExerciseFailed(f"for {what} with q = {q} you returned {got!r}: {said.pop()}.")
        raise ExerciseFailed(f"for {what} with q = {q} one adapter has {want} parameters (q * (in + out) per layer: U "
                             f"is (q, in), V is (out, q)); you returned {got!r}.")


def _tiny_team():
    """A random tiny Llama with two LoRA adapters, both with B != 0 (so the agents differ from the base)."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    from ..rng import seeded

    cfg = LlamaConfig(vocab_size=48, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, max_position_embeddings=32)
    with seeded(7):
        lora = LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False)
        base = LlamaForCausalLM(cfg)
        with torch.no_grad():       # logits of real size (up to about 30, as a trained model's): a random tiny
            base.lm_head.weight.mul_(150)   # Llama gives none above 0.2, so a clamp to [-10, 10] would go unseen
        model = get_peft_model(base, lora, adapter_name="first")
        model.add_adapter("second", lora)
        ids = torch.randint(0, 48, (3, 6))
    for n, p in model.named_parameters():
        p.requires_grad_("lora_" in n)
    model.eval()
    return model, ids


# peft's methods that switch state the whole model shares (the active adapter, adapters on or off, and with them which
# parameters train): the model's, its tuner's and its layers'. The check refuses any call of them, on the model it
# passes or on a copy, whatever the answer puts back afterwards.
_SWITCHES = ("set_adapter", "disable_adapter", "disable_adapter_layers", "enable_adapter_layers", "enable_adapters")
_SAID = {"set_adapter": "model.set_adapter(...)", "disable_adapter": "`with model.disable_adapter():`",
         "disable_adapter_layers": "model.disable_adapter_layers()",
         "enable_adapter_layers": "model.enable_adapter_layers()", "enable_adapters": "a layer's enable_adapters(...)"}


@contextlib.contextmanager
def _watching_switches(model):
    """While open, every call of a _SWITCHES method (on any instance of the model's peft classes: the model's own
    modules and copies of them alike) and every copy.deepcopy of the model is recorded in the yielded list, as
    (what, on the model given?) with what = the method's name or 'deepcopy'; the calls themselves run as usual."""
    calls: list = []
    own = {id(m) for m in model.modules()}
    patched = []

    def watched(name, original):
        @functools.wraps(original)
        def method(self, *args, **kwargs):
            calls.append((name, id(self) in own))
            return original(self, *args, **kwargs)
        return method

    for cls in {type(m) for m in model.modules()}:
        for klass in cls.__mro__:
            for name in _SWITCHES:
                original = vars(klass).get(name)
                if inspect.isfunction(original) and (klass, name) not in {(k, n) for k, n, _ in patched}:
                    patched.append((klass, name, original))
                    setattr(klass, name, watched(name, original))

    def deepcopy_hook(memo):             # copy.deepcopy(model) looks this up on the instance
        import copy

        calls.append(("deepcopy", True))
        del model.__dict__["__deepcopy__"]
        try:
            return copy.deepcopy(model, memo)
        finally:
            model.__dict__["__deepcopy__"] = deepcopy_hook

    model.__dict__["__deepcopy__"] = deepcopy_hook
    try:
        yield calls
    finally:
        model.__dict__.pop("__deepcopy__", None)
        for klass, name, original in reversed(patched):
            setattr(klass, name, original)


def _switched(calls, adapter) -> str:
    """What a recorded switch or copy says: '' when the answer neither switched nor copied."""
    copied = any(what == "deepcopy" for what, _ in calls)
    switches = [(what, on_model) for what, on_model in calls if what != "deepcopy"]
    route = ("model(input_ids=input_ids, adapter_names=[name] * batch) routes each ROW through its adapter ('__base__' "
             "for the base) for this one call, on the model you were given, and leaves nothing to switch back.")
    if copied or any(not on_model for _, on_model in switches):
        how = f" and called {_SAID[switches[0][0]]} on the copy" if switches else ""
        return (f"called with adapter {adapter!r}, your function copied the model (copy.deepcopy){how}: the logits "
                "come out right, but every call copies the whole shared base again (SmolLM2-135M's is 538 MB in fp32, "
                "and notebook 07 calls this five times), the memory that one base for all agents saves. You need "
                "neither a copy nor a switch: " + route)
    if switches:
        return (f"called with adapter {adapter!r}, your function used {_SAID[switches[0][0]]}, which the check "
                "refuses even when you put everything back afterwards. It switches state the WHOLE model shares: which adapter is active and, as a "
                "side effect, which parameters train. Every agent is an adapter of this one model: the team's "
                "batched generate call runs rows of several agents at once, which no single active adapter can "
                "express, and anything that runs between your switch and your restore (or after a crash in between) "
                "goes through the wrong adapter. adapter_names has no global state: " + route)
    return ""


def _layer_state(layer) -> tuple:
    """What a peft tuner layer runs with: its active adapter(s), whether its adapters are off, which are merged."""
    return (tuple(layer.active_adapters), bool(layer.disable_adapters), tuple(getattr(layer, "merged_adapters", ())))


@contextlib.contextmanager
def _watching_layers(model):
    """While open, records what every forward of the model's LoRA layers ran with and how the inner transformers model
    was called. Yields (layers, before, during, unrouted, rescaled): the model's tuner layers (name -> layer), the
    state of each before the call (_layer_state), the states the layers ran with that differ from it ((name, state)
    each), whether the inner transformers model (model.get_base_model(), which takes adapter_names and ignores it
    silently) was called with adapter_names (the peft model takes the keyword out before calling it), and the LoRA
    scalings the layers ran with that differ from theirs before the call ((name, scaling before, scaling then) each:
    peft's rescale_adapter_scale, a layer's scale_layer / unscale_layer / set_scale, a write to layer.scaling[name])."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    layers = {name: m for name, m in model.named_modules() if isinstance(m, BaseTunerLayer)}
    before = {id(m): _layer_state(m) for m in layers.values()}
    named = {id(m): name for name, m in layers.items()}
    scales = {id(m): _scaling(m) for m in layers.values()}
    during, unrouted, rescaled = [], [], []

    def layer_hook(module, args):
        if id(module) in before and (now := _layer_state(module)) != before[id(module)]:   # not on a copy
            during.append((named[id(module)], now))
        if id(module) in scales and (scale := _scaling(module)) != scales[id(module)]:
            rescaled.append((named[id(module)], scales[id(module)], scale))

    def base_hook(module, args, kwargs):
        if "adapter_names" in kwargs:
            unrouted.append(True)

    handles = [m.register_forward_pre_hook(layer_hook) for m in layers.values()]
    handles.append(model.get_base_model().register_forward_pre_hook(base_hook, with_kwargs=True))
    try:
        yield layers, before, during, unrouted, rescaled
    finally:
        rescaled.extend((named[id(m)], scales[id(m)], _scaling(m)) for m in layers.values()   # left changed after it
                        if _scaling(m) != scales[id(m)] and named[id(m)] not in {n for n, _, _ in rescaled})
        for handle in handles:
            handle.remove()


def _state_said(state) -> str:
    active, off, merged = state
    return ("adapters off" if off else f"active adapter(s) {list(active)}") + (f", {list(merged)} merged" if merged
                                                                                else "")


def _layers_switched(watch, adapter) -> str:
    """What a switch of the LoRA layers' own state says (a write to layer._active_adapter, _disable_adapters, a merge),
    during the call or left after it: '' when every layer ran and ended as it was."""
    layers, before, during = watch[:3]
    after = [(name, _layer_state(m)) for name, m in layers.items() if _layer_state(m) != before[id(m)]]
    if not during and not after:
        return ""
    name, state = (during or after)[0]
    was = before[id(layers[name])]
    restored = "; your function put it back afterwards" if during and not after else ""
    return (f"called with adapter {adapter!r}, your function changed what the model's LoRA layers run with: "
            f"{len({n for n, _ in during or after})} of its {len(layers)} layers (the first, {name}) ran with "
            f"{_state_said(state)} instead of {_state_said(was)}{restored}. Writing a layer's state (layer."
            "_active_adapter = ..., layer._disable_adapters = ..., a merge) is the switch model.set_adapter makes, "
            "through a private attribute, and the check refuses it even when you restore it: " + _SHARED_STATE)


# why any switch of state the whole model shares is refused, restored or not (the end of the messages above and below)
_SHARED_STATE = ("it is state the WHOLE model shares, so the team's batched generate call, which runs rows of several "
                 "agents at once, cannot use it, and anything that runs between your switch and your restore (or "
                 "after a crash in between) goes through the wrong adapter. adapter_names has no global state: "
                 "model(input_ids=input_ids, adapter_names=[name] * batch) routes each ROW through its adapter "
                 "('__base__' for the base) for this one call, and leaves nothing to switch back.")


def _scaling(layer) -> dict:
    """A LoRA layer's scaling per adapter (the factor lora_alpha / r its update is multiplied by), as a plain copy;
    {} for a tuner layer without one."""
    scaling = getattr(layer, "scaling", None)
    return {k: float(v) if isinstance(v, numbers.Real) else v for k, v in scaling.items()} if isinstance(
        scaling, dict) else {}


def _rescaled(watch, adapter) -> str:
    """What a change of the LoRA layers' scaling says, during the call or left after it: '' when every layer ran
    and ended with the scaling it had."""
    layers, rescaled = watch[0], watch[4]
    if not rescaled:
        return ""
    name, was, now = rescaled[0]
    left = _scaling(layers[name]) != was
    changed = {k: v for k, v in now.items() if was.get(k) != v}
    before = {k: was.get(k) for k in changed}
    return (f"called with adapter {adapter!r}, your function changed the LoRA scaling of the model's layers: "
            f"{len({n for n, _, _ in rescaled})} of its {len(layers)} layers (the first, {name}) ran with scaling "
            f"{changed} instead of {before}"
            + ("" if left else "; your function put it back afterwards")
            + ". Rescaling an adapter (peft's rescale_adapter_scale(model, 0.0), a layer's scale_layer(0.0) / "
            "unscale_layer() or set_scale(...), or a write to layer.scaling[name]) switches it off by hand, and the "
            "check refuses it even when you restore it: " + _SHARED_STATE)


def _adapter_crash(exc: Exception, adapter, ids) -> str:
    """What a crash of adapter_logits says, by what peft's error means."""
    text = first_line(exc).rstrip(".")
    head = f"adapter_logits(model, {adapter!r}, input_ids) raised {type(exc).__name__}: {text}. "
    if "training mode" in text:
        return head + ("peft routes rows with adapter_names only in eval mode (model.eval()), and refuses them in "
                       "training mode. The model you were given is in eval mode: leave it there (no model.train()). "
                       "The library keeps its agents in eval mode throughout, training included: their LoRA dropout "
                       "is 0, so eval and training compute the same function (magrpo_edu/agents.py).")
    if adapter is None and ("NoneType" in text or "None" in text):
        return head + ("adapter_names takes one adapter NAME per row; the base model's name there is '__base__' "
                       "(None is not a name).")
    if "Length of `adapter_names`" in text or "same as the number of inputs" in text:
        return head + (f"adapter_names takes one name per ROW: [{adapter or '__base__'!r}] * batch, here {len(ids)} "
                       "rows.")
    if "non-existing adapter" in text:
        letters = [a.strip() for a in text.split(":", 1)[-1].split(",")]
        if letters and all(len(a) == 1 for a in letters):
            return head + ("adapter_names is a LIST of names, one per row ([name] * batch): a string alone is read "
                           "one character per row.")
        return head + ("Pass the name you were given as it is, one per row, and '__base__' for the base (None); "
                       f"this model's adapters are {sorted(_ADAPTERS)}.")
    return head + ("Route the call with model(input_ids=input_ids, adapter_names=[name] * batch) ('__base__' for the "
                   "base) and return .logits[:, -1].")


_ADAPTERS = ("first", "second")


@exercise("07.adapter_logits")
def check_adapter_logits(fn):
    model, ids = _tiny_team()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    active = list(model.active_adapters)
    for batch in (ids, ids[:1]):   # a batch of three rows, then of one (as notebook 07 calls it)
        _check_adapter_batch(fn, model, batch, trainable, active)
    _check_fresh_logits(fn, model, ids)


def _batch_mean(got, want, adapter) -> str:
    """What an answer that averages the logits over the batch's ROWS says ('' when it does not): logits.mean(0), with
    keepdim, or broadcast back to every row. A batch of one row cannot show it (the mean of one row is that row)."""
    if len(want) < 2 or not isinstance(got, torch.Tensor) or not got.is_floating_point():
        return ""
    mean = want.mean(0)
    lg = got.detach().float()
    if lg.shape[-1:] != mean.shape or not (lg.dim() == 1 or lg.dim() == 2 and len(lg) in (1, len(want))):
        return ""
    if not torch.allclose(lg, mean.expand_as(lg), atol=1e-5):
        return ""
    return (f"called with adapter {adapter!r} on a batch of {len(want)} rows, you returned the MEAN of the rows' "
            f"logits (logits.mean(0){', kept for every row' if lg.dim() == 2 and len(lg) > 1 else ''}): each row is "
            "its own prompt, and the caller reads row i's logits as the next token of prompt i (the trainer its "
            "log-probs, one per row). Do not average over the batch: return one row of logits per prompt, "
            "model(input_ids=input_ids, adapter_names=[name] * batch).logits[:, -1], shape (batch, vocab).")


def _shifted(lg, want, who) -> str:
    """What logits shifted by a constant per row say ('' when they are not): logits - logits.max(-1, keepdim=True)
    (the shift of a numerically stable softmax), or minus their mean; the softmax is the same, the logits are not."""
    shift = lg - want
    if bool(torch.allclose(shift, torch.zeros_like(shift), atol=1e-5)):
        return ""
    if not torch.allclose(shift, shift[:, :1].expand_as(shift), atol=1e-4):
        return ""
    by_max = torch.allclose(lg, want - want.max(-1, keepdim=True).values, atol=1e-4)
    by_mean = torch.allclose(lg, want - want.mean(-1, keepdim=True), atol=1e-4)
    how = ("minus each row's largest logit (logits - logits.max(-1, keepdim=True).values, the shift a numerically "
           "stable softmax makes)" if by_max else "minus each row's mean logit (logits - logits.mean(-1, keepdim="
           "True))" if by_mean else "shifted by a constant per row")
    return (f"you returned the logits of {who}, routed as asked, but {how}: the softmax of each row is the same, the "
            f"logits are not ({'the largest is now 0, and ' if by_max else ''}the caller compares the agents' logits "
            "with each other and with the base's, value by value). Return the logits as the model gives them, without "
            "shifting them: .logits[:, -1].")


def _rows_routed(lg, want: dict, adapter) -> str:
    """What an answer that routes only SOME rows through the adapter says ('' otherwise): every row matches the
    logits of one adapter (or the base), some of them the one asked, the others another one: adapter_names with the
    name for row 0 alone and '__base__' for the rest, say."""
    if len(lg) < 2:
        return ""
    rows = []
    for r in range(len(lg)):
        ran = [a for a in (adapter, *(a for a in want if a != adapter)) if torch.allclose(lg[r], want[a][r], atol=1e-5)]
        if not ran:
            return ""
        rows.append(ran[0])
    right = [r for r, a in enumerate(rows) if a == adapter]
    wrong = [r for r, a in enumerate(rows) if a != adapter]
    if not right or not wrong:
        return ""
    name = lambda a: "the base ('__base__')" if a is None else f"adapter {a!r}"
    others = sorted({name(rows[r]) for r in wrong})
    return (f"called with adapter {adapter!r} on a batch of {len(lg)} rows, you returned the right logits for row(s) "
            f"{right} only: row(s) {wrong} ran through {' and '.join(others)}. Does your adapter_names list name "
            f"{adapter or '__base__'!r} for row {right[0]} alone and another name for the other rows? adapter_names "
            "gives the adapter of each ROW, and every row of this batch belongs to the agent asked: pass the same "
            f"name for every row, [{adapter or '__base__'!r}] * batch, and return .logits[:, -1].")


def _grad_mode_changed(before: bool, adapter) -> str:
    """What a change of autograd's global mode by the answer says ('' when none); the mode is put back first, so
    that nothing after the check runs with it."""
    now = torch.is_grad_enabled()
    if now == before:
        return ""
    torch.set_grad_enabled(before)
    if before:
        return (f"called with adapter {adapter!r}, your function switched autograd off for the whole process: "
                "torch.is_grad_enabled() was True before the call and False after it (torch.set_grad_enabled(False), or "
                "torch.no_grad().__enter__() without its __exit__). Every later computation, the trainer's loss "
                "included, would record no graph, and the trainer's backward pass would fail later. Use "
                "`with torch.no_grad():` inside your function (autograd comes back on when the block ends), or "
                "nothing.")
    return (f"called with adapter {adapter!r}, your function switched autograd ON for the whole process "
            "(torch.set_grad_enabled(True)): leave the caller's mode as it is; use `with torch.no_grad():` inside "
            "your function, or nothing.")


def _check_fresh_logits(fn, model, ids) -> None:
    """Call the answer again on the same adapter and ids after that adapter's weights changed (lora_B doubled, as a
    training step changes them; put back afterwards): logits kept from an earlier call (a cache) come out stale."""
    lora_b = [p for n, p in model.named_parameters() if "lora_B" in n and _adapter_of(n) == "first"]
    saved = [p.detach().clone() for p in lora_b]
    with torch.no_grad():
        old = model(input_ids=ids, adapter_names=["first"] * len(ids)).logits[:, -1]
    try:
        with torch.no_grad():
            for p in lora_b:
                p.mul_(2)
            want = model(input_ids=ids, adapter_names=["first"] * len(ids)).logits[:, -1]
        grad = torch.is_grad_enabled()
        dtypes = _dtypes(model)
        try:
            got = call_answer(fn, model, "first", ids.clone(), said=lambda exc: _adapter_crash(exc, "first", ids))
        finally:
            dtype_said = _dtype_changed(model, dtypes, "first")
            if said := dtype_said or _grad_mode_changed(grad, "first"):
                raise ExerciseFailed(said)
        got = got.detach().float() if isinstance(got, torch.Tensor) else got
    finally:
        with torch.no_grad():
            for p, value in zip(lora_b, saved):
                p.copy_(value)
    if (isinstance(got, torch.Tensor) and got.shape == want.shape and not torch.allclose(got, want, atol=1e-5)):
        stale = torch.allclose(got, old, atol=1e-5)
        raise ExerciseFailed("called a second time with adapter 'first' and the same input_ids, after that adapter's "
                             "weights had changed (as every training step changes them), your function "
                             + ("returned the same logits as before: it keeps the logits of an earlier call (a dict or "
                                "functools.lru_cache keyed on the adapter and the ids) and hands them back stale. "
                                if stale else "returned wrong logits. ")
                             + "The trainer calls it after every update: compute the logits afresh on every call, "
                             "model(input_ids=input_ids, adapter_names=[name] * batch).logits[:, -1], with no cache.")


_TORCH_NAME = {torch.bfloat16: "BFloat16", torch.float16: "Half", torch.float64: "Double"}   # as torch's errors say


def _dtypes(model) -> dict:
    """The dtype of every parameter and buffer of the model: (module, 'parameter' or 'buffer', local name) -> (its full
    name, its dtype)."""
    return {(module, kind, n): (f"{prefix}.{n}" if prefix else n, t.dtype)
            for prefix, module in model.named_modules()
            for kind, held in (("parameter", module._parameters), ("buffer", module._buffers))
            for n, t in held.items() if t is not None}


def _dtype_changed(model, before: dict, adapter) -> str:
    """What a change of the model's dtype by the answer says ('' when none): model.to(torch.bfloat16), .half(),
    .bfloat16() convert the shared model in place. Every changed parameter and buffer is put back to its dtype first,
    so that nothing after the check (and nothing in it) runs with the converted model."""
    changed = []
    for (module, kind, n), (name, dtype) in before.items():
        held = module._parameters if kind == "parameter" else module._buffers
        t = held.get(n)
        if t is None or t.dtype == dtype:
            continue
        changed.append((name, kind, t.dtype, dtype))
        with torch.no_grad():
            if kind == "parameter":
                t.data = t.data.to(dtype)        # the same Parameter, its requires_grad kept
            else:
                held[n] = t.to(dtype)
    if not changed:
        return ""
    name, kind, now, was = changed[0]
    short = lambda d: str(d).replace("torch.", "")
    return (f"called with adapter {adapter!r}, your function changed the dtype of the model itself: {len(changed)} of "
            f"its {len(before)} parameters and buffers (the first, the {kind} {name}) became {short(now)} instead of "
            f"{short(was)} (model.to(torch.bfloat16), model.half() or model.bfloat16() convert the model IN PLACE, not "
            "a copy; the check put them back). The dtype is state the WHOLE model shares: the base and every agent's "
            f"adapter are converted for every later caller, the trainer's and the team's generate call included (a "
            f"{short(was)} tensor meeting the converted weights fails with a dtype mismatch, such as 'Float did not "
            f"match {_TORCH_NAME.get(now, short(now))}'), and the logits come out rounded. Leave the model as you were "
            "given it: route this one call with "
            "model(input_ids=input_ids, adapter_names=[name] * batch) ('__base__' for the base), and return "
            ".logits[:, -1] in the dtype the model gives them.")


def _weights(model) -> dict:
    """A copy of every parameter and buffer of the model, by name: what the answer's call must leave as it is."""
    return {**{n: p.detach().clone() for n, p in model.named_parameters()},
            **{n: b.detach().clone() for n, b in model.named_buffers()}}


def _weights_changed(model, before: dict, adapter) -> str:
    """What a change of the model's weights by the answer says ('' when none): a round trip through 16 bits
    (model.to(torch.bfloat16) then model.to(torch.float32)) leaves the dtype as it was and every weight rounded. Each
    changed weight is put back first (after _dtype_changed put the dtypes back), so that nothing after the check runs
    with it."""
    now = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    changed = [n for n, t in now.items() if n in before and t.shape == before[n].shape
               and not torch.equal(t.detach().to(before[n].dtype), before[n])]
    rounded = {}
    for n in changed:
        was, held = before[n], now[n].detach().to(before[n].dtype)
        rounded[n] = next((d for d in (torch.bfloat16, torch.float16) if was.is_floating_point()
                           and torch.equal(held, was.to(d).to(was.dtype))), None)
        with torch.no_grad():
            now[n].copy_(was)
    if not changed:
        return ""
    kinds = set(rounded.values())
    short = lambda d: str(d).replace("torch.", "")
    how = (f"each the old value rounded to {short(kinds.pop())}: model.to(torch.{short(rounded[changed[0]])}) (or "
           ".half(), .bfloat16()) followed by model.to(torch.float32) or .float() gives the dtype back, not the digits "
           "the round trip dropped" if None not in kinds and len(kinds) == 1 else "changed in place")
    return (f"called with adapter {adapter!r}, your function changed the model's weights: {len(changed)} of its "
            f"{len(before)} parameters and buffers (the first, {changed[0]}) hold other values after the call, "
            f"{how} (the check put them back). The weights are state the WHOLE model shares: the base and every "
            "agent's adapter would stay that way for every later caller, the trainer's and the team's generate call "
            "included. Leave the model as you were given it, in its own dtype: route this one call with "
            "model(input_ids=input_ids, adapter_names=[name] * batch) ('__base__' for the base), and return "
            ".logits[:, -1] as the model gives them.")


_PLANTED = 0.5   # the gradient the check gives every trainable parameter before a call (exact in 16 bits too)


def _plant_grads(model, trainable: set) -> dict:
    """Give every trainable parameter a .grad, as it holds one between the trainer's loss.backward() and its
    optimizer.step(): name -> parameter."""
    params = {n: p for n, p in model.named_parameters() if n in trainable}
    for p in params.values():
        p.grad = torch.full_like(p, _PLANTED)
    return params


def _grads_changed(params: dict, adapter) -> str:
    """What the answer did to the gradients planted by _plant_grads ('' when nothing): model.zero_grad() sets them to
    None (or to 0 with set_to_none=False). Every .grad is cleared afterwards, as it was before the check."""
    cleared, zeroed, changed = [], [], []
    for n, p in params.items():
        g = p.grad
        if g is None:
            cleared.append(n)
        elif g.shape != p.shape or not torch.equal(g.float(), torch.full_like(g.float(), _PLANTED)):
            (zeroed if g.shape == p.shape and not bool(g.float().abs().sum()) else changed).append(n)
        p.grad = None
    if not (cleared or zeroed or changed):
        return ""
    said = "; ".join(f"{len(names)} {what} (the first, {names[0]})" for names, what in (
        (cleared, "set to None"), (zeroed, "set to zero"), (changed, "changed")) if names)
    how = ("model.zero_grad() (or an optimizer's zero_grad()) does that" if (cleared or zeroed) and not changed else
           "a backward() call, or a write to .grad, does that")
    return (f"called with adapter {adapter!r}, your function changed the gradients the model's parameters hold: the "
            f"check gave each of the {len(params)} trainable (adapter) parameters a .grad before the call, and after it "
            f"{said}; {how}. The gradients are state the WHOLE model shares: called between the trainer's "
            "loss.backward() and its optimizer.step() (a logging hook, a look at the agents mid-update), your function "
            "would erase that training step, every agent's. Getting logits touches no gradient: leave .grad as it is "
            "(no zero_grad, no backward), and run the forward call under `with torch.no_grad():` (or as it is).")


def _adapter_of(name: str) -> str:
    """The adapter a LoRA parameter belongs to ('...lora_A.second.weight' -> 'second'); '' for a base parameter."""
    parts = name.split(".")
    return next((parts[k + 1] for k, part in enumerate(parts[:-1]) if part.startswith("lora_")), "")


def _trainable_changed(model, trainable: set, now: set, adapter) -> str:
    """What the answer did to the requires_grad flags, in words, for a check that found them changed."""
    frozen, thawed = trainable - now, now - trainable
    lora = {n for n, _ in model.named_parameters() if "lora_" in n}
    said = []
    if frozen and frozen == trainable:
        said.append(f"turned requires_grad off for every adapter parameter ({len(frozen)} of them, both agents'): no "
                    "agent would learn. Getting logits needs no change to requires_grad (torch.no_grad(), or nothing, "
                    "is enough)")
    elif frozen:
        names = sorted({_adapter_of(n) for n in frozen})
        whole = all({n for n in lora if _adapter_of(n) == a} <= frozen for a in names)
        said.append(f"turned requires_grad off for {'the parameters' if whole else 'some parameters'} of adapter(s) "
                    f"{names}, so that agent would silently stop learning. peft does this in model.set_adapter(name) "
                    "(even when you set the old adapter back afterwards), and on leaving `with model.disable_adapter():` "
                    "or in model.enable_adapter_layers(): each marks only the adapter it leaves active trainable")
    if thawed:
        base = sorted(n for n in thawed if "lora_" not in n)
        said.append(f"turned requires_grad ON for {len(thawed)} parameter(s) that were frozen"
                    + (f" ({len(base)} of the shared base model, which must stay frozen)" if base else ""))
    return (f"called with adapter {adapter!r}, your function changed which parameters train: it "
            + "; and it ".join(said) + ". Leave the flags as they are: route the call with adapter_names=[...] (one "
            "name per row; '__base__' for the base model) instead.")


def _check_adapter_batch(fn, model, ids, trainable, active):
    with torch.no_grad():
        full = {a: model(input_ids=ids, adapter_names=[a or "__base__"] * len(ids)).logits
                for a in ("second", None, "first")}
    want = {a: f[:, -1] for a, f in full.items()}
    for adapter in ("second", None, "first"):
        given = ids.clone()
        grad = torch.is_grad_enabled()
        dtypes = _dtypes(model)
        weights = _weights(model)
        planted = _plant_grads(model, trainable)
        with _watching_switches(model) as calls, _watching_layers(model) as watch:
            remember_call(fn, (model, adapter, given))   # replayed by check() to refuse a call into the reference
            try:
                got = fn(model, adapter, given)
            except NotImplementedError:   # the stub: unsolved, not wrong
                torch.set_grad_enabled(grad)
                _dtype_changed(model, dtypes, adapter)
                _weights_changed(model, weights, adapter)
                _grads_changed(planted, adapter)
                raise
            except Exception as exc:  # noqa: BLE001  the learner's error, said in a sentence
                grad_said = _grad_mode_changed(grad, adapter)
                dtype_said = _dtype_changed(model, dtypes, adapter)
                weights_said = _weights_changed(model, weights, adapter)
                grads_said = _grads_changed(planted, adapter)
                raise ExerciseFailed(_switched(calls, adapter) or _layers_switched(watch, adapter)
                                     or _rescaled(watch, adapter) or dtype_said or weights_said or grads_said
                                     or grad_said or _adapter_crash(exc, adapter, ids)) from None
        grad_said = _grad_mode_changed(grad, adapter)       # the mode put back at once, whatever is said first
        dtype_said = _dtype_changed(model, dtypes, adapter)  # the dtypes too, before the check runs the model again
        weights_said = _weights_changed(model, weights, adapter)   # then the weights' values, and the gradients
        grads_said = _grads_changed(planted, adapter)
        if said := (_switched(calls, adapter) or _layers_switched(watch, adapter) or _rescaled(watch, adapter)
                    or dtype_said or weights_said or grads_said or grad_said):
            raise ExerciseFailed(said)
        if model.training:
            raise ExerciseFailed(f"called with adapter {adapter!r}, your function left the model in training mode "
                                 "(model.train()): peft refuses adapter_names in training mode, so the next routed "
                                 "call (the team's generate, the trainer's) would fail. Leave the model in eval mode; "
                                 "the library keeps its agents there, with LoRA dropout 0, so eval and training "
                                 "compute the same function.")
        if not torch.equal(given, ids):
            raise ExerciseFailed(f"your function changed input_ids in place ({int((given != ids).sum())} token ids "
                                 "differ after the call): the caller goes on with the same ids (the trainer builds its "
                                 "loss from them), and the logits are no longer those of the prompt it was given. "
                                 "Leave input_ids as they are: pass them to the model unchanged.")
        if not isinstance(got, torch.Tensor):
            raise ExerciseFailed(f"return the logits as a torch tensor of shape (batch, vocab) = "
                                 f"{tuple(want[adapter].shape)} (the model output's .logits[:, -1]); you returned a "
                                 f"{type(got).__name__}.")
        if tuple(got.shape) != tuple(want[adapter].shape):
            if said := _batch_mean(got, want[adapter], adapter):
                raise ExerciseFailed(said)
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            raise ExerciseFailed(f"return the logits of the LAST position only, shape (batch, vocab) = "
                                 f"{tuple(want[adapter].shape)} for a batch of {len(ids)}; you returned {shape}"
                                 + (" (a squeeze drops the batch dimension when the batch has one row)"
                                    if len(ids) == 1 and isinstance(got, torch.Tensor) and got.dim() == 1 else "") + ".")
        now = {n for n, p in model.named_parameters() if p.requires_grad}
        if now != trainable:
            raise ExerciseFailed(_trainable_changed(model, trainable, now, adapter))
        if list(model.active_adapters) != active:
            raise ExerciseFailed(f"your function switched the model's active adapter from {active} to "
                                 f"{list(model.active_adapters)} (model.set_adapter does that, even when you restore "
                                 "requires_grad afterwards): every later call without adapter_names, the trainer's "
                                 "and generate's included, now runs through another agent's adapter. Leave the "
                                 "model as you found it: route this one call with adapter_names=[...] (one name per "
                                 "row; '__base__' for the base model).")
        if got.is_floating_point() and torch.finfo(got.dtype).bits < 32:
            raise ExerciseFailed(f"you returned the logits as {got.dtype}: return them in the dtype the model gives "
                                 f"them ({want[adapter].dtype} here), without casting them (or the shared model) to 16 "
                                 "bits (.half(), .to(torch.bfloat16)): half precision rounds them, and log-probs "
                                 "computed from them.")
        if torch.allclose(got.detach().float(), want[adapter], atol=1e-5):
            continue
        who = "the base model (adapters off)" if adapter is None else f"adapter {adapter!r}"
        same_as = [a for a, w in want.items() if a != adapter and torch.allclose(got.detach().float(), w, atol=1e-5)]
        lg = got.detach().float()
        if torch.allclose(lg, torch.log_softmax(want[adapter], -1), atol=1e-5):
            raise ExerciseFailed("you returned log-probabilities (log_softmax of the logits); return the logits themselves, "
                                 "the model output's .logits[:, -1].")
        if torch.allclose(lg, torch.softmax(want[adapter], -1), atol=1e-6):
            raise ExerciseFailed("you returned probabilities (softmax of the logits); return the logits themselves, the "
                                 "model output's .logits[:, -1].")
        if said := (_batch_mean(lg, want[adapter], adapter) or _shifted(lg, want[adapter], who)
                    or _rows_routed(lg, want, adapter)):
            raise ExerciseFailed(said)
        at = [p for p in range(ids.shape[1] - 1) if torch.allclose(lg, full[adapter][:, p], atol=1e-5)]
        if at:
            p, n = at[0], ids.shape[1]
            raise ExerciseFailed(f"you returned the logits of position {p} (logits[:, {p}], or logits[:, {p - n}]) of "
                                 f"the {n} positions, routed through {who} as asked: return those of the LAST position, "
                                 "logits[:, -1], the ones that predict the next token after the whole prompt.")
        routed = [adapter or "__base__"] * len(ids)
        with torch.no_grad():
            alone = model(input_ids=ids[:, -1:], adapter_names=routed).logits[:, -1]
        if torch.allclose(lg, alone, atol=1e-5):
            raise ExerciseFailed(f"you returned the logits of the last token ALONE (the model fed input_ids[:, -1:]), "
                                 f"routed through {who} as asked: they predict the next token from that one token, "
                                 "without the prompt before it. Pass the whole input_ids to the model and take the last "
                                 "position of its output, logits[:, -1].")
        if torch.allclose(lg, full[adapter].mean(1), atol=1e-5):
            raise ExerciseFailed(f"you returned the MEAN of the logits over the {ids.shape[1]} positions "
                                 f"(logits.mean(1)), routed through {who} as asked: the exercise asks for the logits "
                                 "of the LAST position, logits[:, -1], the ones that predict the next token after the "
                                 "whole prompt; an average over the positions predicts no token.")
        lo, hi = float(lg.min()), float(lg.max())
        if lo <= hi and torch.allclose(lg, want[adapter].clamp(lo, hi), atol=1e-5):
            cut = int((~torch.isclose(lg, want[adapter], atol=1e-5)).sum())
            raise ExerciseFailed(f"you returned the right logits, routed through {who}, but clamped to [{lo:.4g}, "
                                 f"{hi:.4g}] (.clamp(...), torch.clip): {cut} of them were cut, and a model's logits "
                                 f"go beyond that (here up to {float(want[adapter].abs().max()):.4g} in size). Return "
                                 "the logits as the model computes them: do not clamp; the model output's "
                                 ".logits[:, -1] as they are.")
        scale = float((lg * want[adapter]).sum() / (lg * lg).sum()) if float((lg * lg).sum()) > 0 else 1.0
        if not math.isclose(scale, 1.0, rel_tol=1e-3) and torch.allclose(lg * scale, want[adapter], atol=1e-4):
            raise ExerciseFailed(f"you returned the right logits, routed through {who}, divided by {scale:.4g}"
                                 + (f" (that is, multiplied by {1 / scale:.4g})" if abs(scale) < 1 else "")
                                 + ": a sampling temperature? Temperature belongs to sampling (generate's "
                                 "temperature=), not to the logits: return the model output's .logits[:, -1] as they "
                                 "are.")
        hint = (f" They are the logits of {'the base model' if same_as[0] is None else 'adapter ' + repr(same_as[0])}: "
                "the call did not route through the adapter you were given.") if same_as else ""
        if watch[3]:                    # adapter_names given to the inner transformers model, which ignores it
            raise ExerciseFailed(f"the logits for {who} are wrong.{hint} Your function passed adapter_names to the "
                                 "transformers model INSIDE the peft model (model.get_base_model(), model.base_model "
                                 "or model.base_model.model): that model accepts the keyword and ignores it silently, "
                                 "so every row ran through the active adapter. Pass it to the peft model you were "
                                 "given: model(input_ids=input_ids, adapter_names=[name] * batch) ('__base__' for the "
                                 "base), and return the logits of the last position, logits[:, -1].")
        raise ExerciseFailed(f"the logits for {who} are wrong.{hint} Pass adapter_names=[name] * batch to the model "
                             "(peft's per-row routing), with the name '__base__' for the base, and return the logits "
                             "of the last position, logits[:, -1].")
