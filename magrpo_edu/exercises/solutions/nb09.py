"""Notebook 09: solutions and typical mistakes."""
import re

from magrpo_edu.tasks.writing.reward import unique_words

from . import written_again


def vocabulary_level(u):
    if 0.7 <= u <= 1.3:
        return 0.5
    if 0.5 <= u < 0.7:
        return 0.5 * ((u - 0.5) / (0.7 - 0.5))
    if 1.3 < u <= 1.7:
        return 0.5 * (1.0 - ((u - 1.3) / (1.7 - 1.3)))
    return None


def stop_level(c1, c2):
    if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
        return 1                                   # L1: a text outside the word window, total 0
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2                                   # L2: character ratio, total 0.5
    u1 = len(unique_words(c1))
    if not u1 or not 0.5 <= len(unique_words(c2)) / u1 <= 1.7:
        return 3                                   # L3: unique-word ratio
    return 4                                       # style is scored


def _mistake_tldr_vocabulary(u):                   # TL;DR's L3: 0.5 for u >= 2, no upper edge
    if u >= 2.0:
        return 0.5
    if u >= 1.3:
        return 0.5 * (u - 1.3) / 0.7
    return None


def _mistake_one_sided(u):                         # the rising ramp only: many new words never stop scoring
    if u >= 0.7:
        return 0.5
    if u >= 0.5:
        return 0.5 * (u - 0.5) / 0.2
    return None


def _mistake_full_point(u):                        # forgot that L3 is worth 0.5, not 1
    v = vocabulary_level(u)
    return None if v is None else 2 * v


def _mistake_zero_outside(u):                      # 0 instead of None: scoring would go on
    v = vocabulary_level(u)
    return 0.0 if v is None else v


def _with(l1=None, l2=None, l3=None):
    """stop_level with one gate replaced by a plausible wrong one."""
    def fn(c1, c2):
        if not (l1 or (lambda a, b: all(128 <= len(c.split()) <= 256 for c in (a, b))))(c1, c2):
            return 1
        if not (l2 or (lambda a, b: 0.8 <= len(b) / len(a) <= 1.5))(c1, c2):
            return 2
        if not (l3 or (lambda a, b: bool(unique_words(a))
                       and 0.5 <= len(unique_words(b)) / len(unique_words(a)) <= 1.7))(c1, c2):
            return 3
        return 4
    return fn


_words = re.compile(r"\b\w+\b")

SOLUTIONS = {
    "09.vocabulary_level": vocabulary_level,
    "09.stop_level": stop_level,
}

def _mistake_l3_before_l2(c1, c2):                 # L3 checked before L2: a pair failing both stops at 3
    if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
        return 1
    if not 0.5 <= len(unique_words(c2)) / len(unique_words(c1)) <= 1.7:
        return 3
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2
    return 4


def _mistake_open_edges(u):                        # u = 0.5 and u = 1.7 read as outside: scoring stops there
    return None if u in (0.5, 1.7) else vocabulary_level(u)


_mistake_words_at_l2 = _with(l2=lambda a, b: 0.8 <= len(b.split()) / len(a.split()) <= 1.5)


def _stop_level_from_zero(c1, c2):               # the ladder counted from 0: every level one less
    return stop_level(c1, c2) - 1


MISTAKES = {
    "09.vocabulary_level": [_mistake_tldr_vocabulary, _mistake_one_sided, _mistake_full_point, _mistake_zero_outside,
                            _mistake_open_edges],
    "09.stop_level": [
        _stop_level_from_zero,
        _with(l1=lambda a, b: 128 <= len(a.split()) <= 256),                                 # only the background's words
        _with(l1=lambda a, b: all(128 <= len(_words.findall(c)) <= 256 for c in (a, b))),  # words by regex, not whitespace
        _with(l1=lambda a, b: all(128 < len(c.split()) < 256 for c in (a, b))),             # the window's edges left out
        _with(l2=lambda a, b: 0.8 <= len(a) / len(b) <= 1.5),                                # the ratio upside down
        _with(l3=lambda a, b: len(unique_words(b)) / max(1, len(unique_words(a))) >= 1.3),   # TL;DR's L3 gate
        _with(l3=lambda a, b: 0.5 <= len(set(b.split())) / max(1, len(set(a.split()))) <= 1.7),  # case-sensitive words
        _with(l2=lambda a, b: 0.8 < len(b) / len(a) < 1.5),                                 # L2's edges left out
        _with(l3=lambda a, b: 0.5 < len(unique_words(b)) / max(1, len(unique_words(a))) < 1.7),  # L3's edges left out
        _with(l3=lambda a, b: 0.5 <= len(unique_words(a)) / max(1, len(unique_words(b))) <= 1.7),  # u upside down
        _with(l2=lambda a, b: 0.8 <= len(b.replace(" ", "")) / len(a.replace(" ", "")) <= 1.5),  # characters without spaces
        _with(l1=lambda a, b: all(128 <= len(c.split(" ")) <= 256 for c in (a, b))),         # split(" "): newlines glue words
        _with(l3=lambda a, b: 0.5 <= len(set(b.lower().split())) / max(1, len(set(a.lower().split()))) <= 1.7),  # whitespace tokens: 'word,' != 'word'
        _with(l2=lambda a, b: 0.8 <= len(b.strip()) / len(a.strip()) <= 1.5),                # characters after strip()
        _with(l3=lambda a, b: 0.5 <= len(unique_words(b, True)) / max(1, len(unique_words(a, True))) <= 1.7),  # stopwords dropped
        _with(l3=lambda a, b: 0.5 <= len(set(re.findall(r"[a-z]+", b.lower())))
              / max(1, len(set(re.findall(r"[a-z]+", a.lower())))) <= 1.7),                   # letters only: digits dropped
        _mistake_l3_before_l2,                                                                 # the gates out of order
        _with(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 2) <= 1.5),                      # l rounded: 1.504 reads 1.5
        _with(l3=lambda a, b: 0.5 <= round(len(unique_words(b)) / max(1, len(unique_words(a))), 1) <= 1.7),  # u rounded
        lambda c1, c2: float(stop_level(c1, c2)),                                              # 4.0, not 4
        _with(l3=lambda a, b: 0.5 <= len(set(re.findall(r"[a-z0-9]+", b.lower())))
              / max(1, len(set(re.findall(r"[a-z0-9]+", a.lower())))) <= 1.7),                # ASCII only: 'é' splits words
        _with(l3=lambda a, b: 0.5 <= len(set(re.findall(r"[\w'-]+", b.lower())))
              / max(1, len(set(re.findall(r"[\w'-]+", a.lower())))) <= 1.7),                 # hyphens kept inside words
        _mistake_words_at_l2,                                                                  # l in words, not characters
        _with(l1=lambda a, b: all(128 <= len(re.split(r"\s+", c)) <= 256 for c in (a, b))),  # '' at a whitespace end
        _with(l2=lambda a, b: 0.8 <= len(b.encode()) / len(a.encode()) <= 1.5),              # bytes, not characters
        _with(l1=lambda a, b: all(128 <= len([w for w in re.split(r"[ \n]+", c) if w]) <= 256
                                  for c in (a, b))),                                          # a tab glues two words
    ],
}


def _stop_level_levels(c1, c2):
    """Read off the library's level functions: each returns None where scoring stops (arxiv_stop_level's own body, so
    it passes by construction: a mistake, listed at the end of MISTAKES)."""
    from magrpo_edu.tasks.writing.reward import arxiv_length_level, arxiv_unique_level

    if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
        return 1
    if arxiv_length_level(len(c2) / len(c1)) is None:
        return 2
    if not unique_words(c1) or arxiv_unique_level(len(unique_words(c2)) / len(unique_words(c1))) is None:
        return 3
    return 4


def _stop_level_own_vocabulary(c1, c2):           # L3 through the learner's own vocabulary_level of exercise 1
    if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
        return 1
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2
    u1 = len(unique_words(c1))
    if not u1 or vocabulary_level(len(unique_words(c2)) / u1) is None:
        return 3
    return 4


VARIANTS = {
    "09.vocabulary_level": [
        lambda u: None if not 0.5 <= u <= 1.7 else min(0.5, 0.5 * (u - 0.5) / 0.2, 0.5 * (1.7 - u) / 0.4),
    ],
    "09.stop_level": [
        _stop_level_own_vocabulary,
        lambda c1, c2: __import__("numpy").int64(written_again(stop_level)(c1, c2)),       # a numpy integer is an integer too
        _with(l3=lambda a, b: bool(re.findall(r"\w+", a)) and 0.5 <= len(set(re.findall(r"\w+", b.lower())))
              / len(set(re.findall(r"\w+", a.lower()))) <= 1.7),          # \w+ without \b: the same words
        _with(l2=lambda a, b: 4 * len(a) <= 5 * len(b) and 2 * len(b) <= 3 * len(a)),  # in integers: 0.8 <= l <= 1.5
        _with(l1=lambda a, b: all(128 <= len(re.findall(r"\S+", c)) <= 256 for c in (a, b))),  # runs of non-space
    ],
}


def _vocabulary_zero_at_zero(u):                   # u = 0 given 0.0 points: scoring would go on
    return 0.0 if u == 0 else vocabulary_level(u)


MISTAKES["09.vocabulary_level"] += [_vocabulary_zero_at_zero]
MISTAKES["09.stop_level"] += [
    _with(l3=lambda a, b: 0.5 <= len(unique_words(b)) / max(len(unique_words(a)), 1) <= 1.7),  # max(.., 1): no-word background reaches 4
    _with(l1=lambda a, b: 256 <= len((a + " " + b).split()) <= 512),                      # both texts' words together
    _with(l1=lambda a, b: 128 <= len(a.split()) and len(b.split()) <= 256),               # one edge per text
]


def _vocabulary_wide_flat(u):                      # the flat 0.5 widened to [0.65, 1.35]: the ramps start late
    return 0.5 if 0.65 <= u <= 1.35 else vocabulary_level(u)


def _vocabulary_calls_the_library(u):              # the package's own function behind a wrapper
    from magrpo_edu.tasks.writing.reward import arxiv_unique_level

    return arxiv_unique_level(u)


def _stop_level_calls_the_library(c1, c2):         # the package's own function behind a wrapper
    from magrpo_edu.tasks.writing.reward import arxiv_stop_level

    return arxiv_stop_level(c1, c2)


MISTAKES["09.vocabulary_level"] += [
    _vocabulary_wide_flat,
    lambda u: 0.5 if 0.7 <= u <= 1.35 else vocabulary_level(u),                         # the flat 0.5 up to 1.35
    _vocabulary_calls_the_library,                                                      # the library, wrapped
]
MISTAKES["09.stop_level"] += [
    _with(l1=lambda a, b: all(128 <= len(c.split()) <= 257 for c in (a, b))),             # the upper edge one off: 257
    _with(l3=lambda a, b: bool(unique_words(a)) and 0.5 <= len(set(re.findall(r"[\w']+", b.lower())))
          / len(set(re.findall(r"[\w']+", a.lower()))) <= 1.7),                         # apostrophes kept in words
    _with(l1=lambda a, b: all(100 <= len(c.split()) <= 300 for c in (a, b))),             # a window of 100-300 words
    _with(l1=lambda a, b: any(128 <= len(c.split()) <= 256 for c in (a, b))),             # any text, not both
    _stop_level_calls_the_library,                                                        # the library, wrapped
]


def _stop_level_l3_from_0_3(c1, c2):               # L3's lower bound written 0.3: u = 0.498 reaches the style level
    n1, n2 = len(c1.split()), len(c2.split())
    if not (128 <= n1 <= 256 and 128 <= n2 <= 256):
        return 1
    if not (0.8 <= len(c2) / len(c1) <= 1.5):
        return 2
    w1, w2 = unique_words(c1), unique_words(c2)
    if not w1 or not (0.3 <= len(w2) / len(w1) <= 1.7):
        return 3
    return 4


def _vocabulary_as_tensor(u):                      # the right points, as a 0-d tensor
    import torch

    v = vocabulary_level(u)
    return None if v is None else torch.tensor(v)


MISTAKES["09.vocabulary_level"] += [_vocabulary_as_tensor]
MISTAKES["09.stop_level"] += [
    _stop_level_l3_from_0_3,                                                              # L3 from 0.3, not 0.5
    _with(l3=lambda a, b: bool(unique_words(a)) and 0.49 <= len(unique_words(b)) / len(unique_words(a)) <= 1.7),  # 0.49
    _with(l2=lambda a, b: 0.78 <= len(b) / len(a) <= 1.5),                                # L2 from 0.78, not 0.8
    _with(l2=lambda a, b: 0.795 <= len(b) / len(a) <= 1.5),                               # L2 from 0.795
    _with(l3=lambda a, b: bool(unique_words(a)) and 0.5 <= len(unique_words(b)) / len(unique_words(a)) <= 1.75),  # to 1.75
    _with(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 1) <= 1.5),                      # l rounded to 1 decimal
]


def _vocabulary_calls_ramp_level(u):               # the package's generic ramp with L3's corners: a wrapper too
    from magrpo_edu.tasks.writing.reward import ramp_level

    return ramp_level(u, 0.5, 0.7, 1.3, 1.7, top=0.5)


def _stop_level_zero_points_stop(c1, c2):          # read off arxiv_levels: L3's 0 points (nothing after) read as a stop
    from magrpo_edu.tasks.writing.reward import arxiv_levels

    lv = arxiv_levels(c1, c2)
    if lv["total"] == 0:
        return 1
    if lv["total"] == 0.5:
        return 2
    if lv["uniqueness"] == 0 and lv["total"] == lv["structure"] + lv["length_ratio"]:
        return 3                                   # also at u = 0.5 or 1.7 exactly, with no style points
    return 4


MISTAKES["09.vocabulary_level"] += [_vocabulary_calls_ramp_level]                  # ramp_level, wrapped
MISTAKES["09.stop_level"] += [
    _stop_level_zero_points_stop,                                                         # 0 points read as a stop
    lambda c1, c2: str(stop_level(c1, c2)),                                               # '4', not 4
]


def _vocabulary_flat_then_library(u):               # the flat 0.5 written out, the ramps handed to the library
    from magrpo_edu.tasks.writing.reward import arxiv_unique_level

    return 0.5 if 0.7 <= u <= 1.3 else arxiv_unique_level(u)


def _stop_level_unique_level(c1, c2):              # L1 and L2 written out, L3 handed to arxiv_unique_level
    from magrpo_edu.tasks.writing.reward import arxiv_unique_level

    if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
        return 1
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2
    u1 = len(unique_words(c1))
    if not u1 or arxiv_unique_level(len(unique_words(c2)) / u1) is None:
        return 3
    return 4


MISTAKES["09.vocabulary_level"] += [_vocabulary_flat_then_library]                   # arxiv_unique_level off the flat
MISTAKES["09.stop_level"] += [
    _stop_level_levels,                                                                   # arxiv_stop_level's body
    _stop_level_unique_level,                                                             # L3 by arxiv_unique_level
    _with(l1=lambda a, b: all(128 <= len(c.split()) <= 255 for c in (a, b))),             # the upper edge one short: 255
]


def _vocabulary_flat_one(u):                       # the flat top written 1.0, the ramps right (up to 0.5)
    return 1.0 if 0.7 <= u <= 1.3 else vocabulary_level(u)


def _vocabulary_ramps_unscaled(u):                 # the ramps without their 0.5: up to 1.0 at 0.7, the flat 0.5
    if 0.7 <= u <= 1.3:
        return 0.5
    if 0.5 <= u < 0.7:
        return (u - 0.5) / 0.2
    if 1.3 < u <= 1.7:
        return (1.7 - u) / 0.4
    return None


def _stop_level_c2_no_upper(c1, c2):               # L1 with no upper edge for the method text: 300 words pass L1
    if not (128 <= len(c1.split()) <= 256 and len(c2.split()) >= 128):
        return 1
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2
    u1 = len(unique_words(c1))
    if not u1 or not 0.5 <= len(unique_words(c2)) / u1 <= 1.7:
        return 3
    return 4


MISTAKES["09.vocabulary_level"] += [
    _vocabulary_flat_one,                                                               # the flat top 1.0, not 0.5
    _vocabulary_ramps_unscaled,                                                         # the ramps' 0.5 left out
    lambda u: None if (v := vocabulary_level(u)) is None else round(v, 2),              # the points rounded: 0.13
]
MISTAKES["09.stop_level"] += [
    _stop_level_c2_no_upper,                                                              # c2 has no upper edge
]


def _vocabulary_falling_0_2(u):                    # the falling ramp 0.2 wide, the rising ramp's width copied
    if 0.7 <= u <= 1.3:
        return 0.5
    if 0.5 <= u < 0.7:
        return 0.5 * (u - 0.5) / 0.2
    if 1.3 < u <= 1.7:
        return max(0.0, 0.5 * (1.5 - u) / 0.2)
    return None


def _vocabulary_widths_swapped(u):                 # the ramps' widths swapped: rising over 0.4, falling over 0.2
    if 0.7 <= u <= 1.3:
        return 0.5
    if 0.5 <= u < 0.7:
        return 0.5 * (u - 0.5) / 0.4
    if 1.3 < u <= 1.7:
        return 0.5 * (1.7 - u) / 0.2
    return None


def _vocabulary_ramps_swapped(u):                  # each ramp's formula on the other's stretch: falls, then rises
    if 0.7 <= u <= 1.3:
        return 0.5
    if 0.5 <= u < 0.7:
        return 0.5 * (1.7 - u) / 0.4
    if 1.3 < u <= 1.7:
        return 0.5 * (u - 0.5) / 0.2
    return None


MISTAKES["09.vocabulary_level"] += [
    lambda u: None if (v := vocabulary_level(u)) is None else round(v, 4),              # rounded to 4: 0.03075 reads 0.0307
    _vocabulary_falling_0_2,                                                            # the falling ramp 0.2 wide
    _vocabulary_widths_swapped,                                                         # the ramps' widths swapped
    _vocabulary_ramps_swapped,                                                          # the ramps' formulas swapped
]
MISTAKES["09.stop_level"] += [
    _with(l2=lambda a, b: 0.8 <= round(len(b) / len(a), 3) <= 1.5),                      # l rounded to 3: 1.5005 reads 1.5
    _with(l2=lambda a, b: 0.8 - 5e-4 <= len(b) / len(a) <= 1.5 + 5e-4),                  # a tolerance of 5e-4 at the edges
    _with(l2=lambda a, b: 0.8 - 8e-4 <= len(b) / len(a) <= 1.5 + 8e-4),                  # a tolerance of 8e-4: 0.7995 too
    _with(l3=lambda a, b: bool(unique_words(a))
          and 0.5 <= round(len(unique_words(b)) / len(unique_words(a)), 1) <= 1.7),     # u rounded to 1: 1.74 reads 1.7
]


def _stop_level_u_floor_division(c1, c2):         # u by floor division: 50 // 100 = 0, not 0.5; 213 // 125 = 1
    if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
        return 1
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2
    u1 = len(unique_words(c1))
    if not u1 or vocabulary_level(len(unique_words(c2)) // u1) is None:
        return 3
    return 4


def _stop_level_float_four(c1, c2):               # the right ladder, its last level written 4.0
    level = stop_level(c1, c2)
    return 4.0 if level == 4 else level


def _stop_level_sum_then_each(c1, c2):            # the words of both texts together checked first, then each text:
    n1, n2 = len(c1.split()), len(c2.split())     # redundant (two texts of 128-256 words sum to 256-512), not wrong
    if not 256 <= n1 + n2 <= 512 or not all(128 <= n <= 256 for n in (n1, n2)):
        return 1
    if not 0.8 <= len(c2) / len(c1) <= 1.5:
        return 2
    u1 = len(unique_words(c1))
    if not u1 or not 0.5 <= len(unique_words(c2)) / u1 <= 1.7:
        return 3
    return 4


MISTAKES["09.vocabulary_level"] += [
    lambda u: None if (v := vocabulary_level(u)) is None else round(v, 6),              # rounded to 6: 0.416667
]
MISTAKES["09.stop_level"] += [
    _stop_level_u_floor_division,                                                         # u by //, not /
    _stop_level_float_four,                                                               # 4.0, not 4
]
VARIANTS["09.stop_level"] += [
    _stop_level_sum_then_each,                                                            # a redundant sum check first
]


def _vocabulary_falling_ends_at_1_5(u):            # the falling ramp 0.2 wide, and None above 1.5 (L2's outer edge)
    if 0.7 <= u <= 1.3:
        return 0.5
    if 0.5 <= u < 0.7:
        return 0.5 * (u - 0.5) / 0.2
    if 1.3 < u <= 1.5:
        return 0.5 * (1 - (u - 1.3) / 0.2)
    return None


def _stop_level_levels_style_zero(c1, c2):         # read off arxiv_levels: 3 when nothing is scored after L3
    from magrpo_edu.tasks.writing.reward import arxiv_levels

    lv = arxiv_levels(c1, c2)
    if lv["total"] == 0:
        return 1
    if lv["total"] == 0.5:
        return 2
    if lv["style"] == 0 and lv["coherence"] == 0 and lv["consistency"] == 0:
        return 3
    return 4


def _stop_level_empty_guard(level):
    """stop_level whose guard for a background with no \\w word returns `level` (1 or 2), not 3."""
    def fn(c1, c2):
        if not all(128 <= len(c.split()) <= 256 for c in (c1, c2)):
            return 1
        if not 0.8 <= len(c2) / len(c1) <= 1.5:
            return 2
        u1 = len(unique_words(c1))
        if not u1:
            return level
        if not 0.5 <= len(unique_words(c2)) / u1 <= 1.7:
            return 3
        return 4
    return fn


def _stop_level_stripped_l1_l2(c1, c2):            # L1 and L2 on stripped texts, then the ladder on the texts as
    a, b = c1.strip(), c2.strip()                  # they are: stops at 2 where trailing whitespace lifts l past 0.8
    if not all(128 <= len(c.split()) <= 256 for c in (a, b)):
        return 1
    if not 0.8 <= len(b) / len(a) <= 1.5:
        return 2
    return stop_level(c1, c2)


MISTAKES["09.vocabulary_level"] += [
    _vocabulary_falling_ends_at_1_5,                                                    # falling ramp 0.2 wide, None above 1.5
]
MISTAKES["09.stop_level"] += [
    _with(l2=lambda a, b: 0.8 <= len(b.replace("\n", "")) / len(a.replace("\n", "")) <= 1.5),  # l without line breaks
    _with(l2=lambda a, b: 0.8 <= len(b.rstrip("\n")) / len(a.rstrip("\n")) <= 1.5),      # l without the breaks at the end
    _with(l3=lambda a, b: bool(unique_words(a))
          and 0.8 <= len(unique_words(b)) / len(unique_words(a)) <= 1.5),               # L3's window copied from L2
    _with(l3=lambda a, b: bool(unique_words(a))
          and 0.7 <= len(unique_words(b)) / len(unique_words(a)) <= 1.3),               # L3's flat top as its window
    _stop_level_levels_style_zero,                                                        # levels read off arxiv_levels
    _stop_level_empty_guard(2),                                                           # empty background: 2, not 3
    _stop_level_empty_guard(1),                                                           # empty background: 1, not 3
    _stop_level_stripped_l1_l2,                                                           # L1, L2 on stripped texts
]
MISTAKES["09.stop_level"] += [
    _with(l2=lambda a, b: 0.8 <= len(" ".join(b.split())) / len(" ".join(a.split())) <= 1.5),  # whitespace collapsed
]


def _vocabulary_float32(u):                        # the level in numpy's float32: 0.03075 reads 0.030750001
    import numpy as np

    return None if not 0.5 <= u <= 1.7 else np.float32(np.interp(u, [0.5, 0.7, 1.3, 1.7], [0, 0.5, 0.5, 0]))


def _vocabulary_via_float32(u):                    # float() of a float32: a Python float that keeps float32's error
    import numpy as np

    v = vocabulary_level(u)
    return None if v is None else float(np.float32(v))


MISTAKES["09.vocabulary_level"] += [
    _vocabulary_float32,                                                                # a numpy float32 returned
    _vocabulary_via_float32,                                                            # float(np.float32(...))
    lambda u: None if (v := vocabulary_level(u)) is None else str(v),                   # '0.0', a str
    lambda u: vocabulary_level(u) is not None,                                          # a bool: whether u is inside
]
MISTAKES["09.stop_level"] += [
    _with(l3=lambda a, b: bool(unique_words(a)) and 0.5 <= len(set(re.findall(r"[^\W_]+", b.lower())))
          / len(set(re.findall(r"[^\W_]+", a.lower()))) <= 1.7),                       # '_' splits words: key, ir, tort
    _with(l3=lambda a, b: bool(unique_words(a)) and 0.5 <= len(set(re.findall(r"\b[^\W_]+\b", b.lower())))
          / len(set(re.findall(r"\b[^\W_]+\b", a.lower()))) <= 1.7),                   # \b[^\W_]+\b: 'key_ir_tort' lost
]
