"""Notebook 03: solutions and typical mistakes."""
import functools
import re

import numpy as np

import magrpo_edu.quality as _quality
import magrpo_edu.tasks.writing.reward as _reward
from magrpo_edu.quality import repetition
from magrpo_edu.quality import repetition as _rep
from magrpo_edu.tasks.writing.reward import TRANSITION_CATEGORIES, tldr_levels


def length_level(r):
    if 1.6 <= r <= 3.2:
        return 1.0
    if 1.1 <= r < 1.6:
        return (r - 1.1) / 0.5
    if 3.2 < r <= 5.0:
        return 1 - (r - 3.2) / 1.8
    return None


def coherence_T(text):
    low = text.lower()
    k = sum(any(w in low for w in words) for words in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def honest_tldr_reward(c1, c2):
    if repetition(c1) > 0.2 or repetition(c2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _length_level_zero_outside(r):
    v = length_level(r)
    return 0.0 if v is None else v


def _coherence_whole_words(text):
    words = set(text.lower().replace(",", " ").replace(".", " ").replace(";", " ").split())
    k = sum(any(w in words for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_counts_phrases(text):
    low = text.lower()
    k = sum(w in low for ws in TRANSITION_CATEGORIES.values() for w in ws)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


SOLUTIONS = {
    "03.length_level": length_level,
    "03.coherence_T": coherence_T,
    "03.honest_tldr_reward": honest_tldr_reward,
}

def _coherence_case_sensitive(text):
    k = sum(any(w in text for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_no_minus_one(text):
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * k, 1.0)


def _coherence_no_zero_case(text):
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_floor_at_zero(text):          # no kappa = 0 case: max(k - 1, 0) makes a text with no phrase 0.4
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return min(0.4 + 0.05 * max(k - 1, 0), 1.0)


def _coherence_capped_low(text):              # the cap read as 0.8, not 1: twelve categories give 0.8, not 0.95
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 0.8)


def _length_level_strict(low_open, high_open):
    def fn(r):
        if 1.6 <= r <= 3.2:
            return 1.0
        if (1.1 < r if low_open else 1.1 <= r) and r < 1.6:
            return (r - 1.1) / 0.5
        if 3.2 < r and (r < 5.0 if high_open else r <= 5.0):
            return 1 - (r - 3.2) / 1.8
        return None
    return fn


def _length_level_no_stop_above(r):            # the falling ramp never stops: negative past 5.0
    if r < 1.1:
        return None
    return 1.0 if 1.6 <= r <= 3.2 else (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.2) / 1.8


def _coherence_unpunctuated(text):            # punctuation stripped before matching: 'in. Fact' reads 'in fact'
    low = re.sub(r"[^\w\s]", "", text.lower())
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_punctuation_as_space(text):    # punctuation made a space: 'all-in-all' reads 'all in all'
    low = re.sub(r"[^\w\s]", " ", text.lower())
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _honest_rounded(c1, c2):                  # the repetition rounded, then >= 0.2: exactly 1/5 reads 0.2 and pays 0
    if round(repetition(c1), 2) >= 0.2 or round(repetition(c2), 2) >= 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _honest_rounded_above(c1, c2):            # rounded to 2 decimals, then > 0.2: a repetition of 0.204 keeps its pay
    if round(repetition(c1), 2) > 0.2 or round(repetition(c2), 2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _honest_none_on_empty(c1, c2):           # an empty text answered with None: it has repetition 0 and earns 0 at L1
    if not c1.strip() or not c2.strip():
        return None
    return honest_tldr_reward(c1, c2)


def _honest_first_words(c1, c2):             # reads each text's first word: an empty text crashes (IndexError)
    c1.split()[0]
    c2.split()[0]
    return honest_tldr_reward(c1, c2)


def _pair_repetition(text):
    w = text.split()
    grams = list(zip(w, w[1:]))
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def _honest_word_pairs(c1, c2):              # repetition on word PAIRS (2-grams), not `repetition`'s 3-grams
    if _pair_repetition(c1) > 0.2 or _pair_repetition(c2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _coherence_whitespace_collapsed(text):   # whitespace collapsed first: 'as\na result' reads 'as a result'
    low = " ".join(text.lower().split())
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_category_names(text):          # the category NAMES matched ('time', 'contrast'), not their phrases
    low = text.lower()
    k = sum(name in low for name in TRANSITION_CATEGORIES)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_first_phrase(text):            # only each category's first phrase: 'as' (time's third) never found
    low = text.lower()
    k = sum(ws[0] in low for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _honest_stripped(c1, c2):                 # the texts stripped first: a completion's leading space not counted
    c1, c2 = c1.strip(), c2.strip()
    return honest_tldr_reward(c1, c2)


def _honest_whitespace_normalised(c1, c2):    # whitespace collapsed first: newlines and double spaces not counted
    return honest_tldr_reward(" ".join(c1.split()), " ".join(c2.split()))


def _honest_rstripped(c1, c2):                # the ends stripped: a completion's final newline not counted
    c1, c2 = c1.rstrip(), c2.rstrip()
    return honest_tldr_reward(c1, c2)


def _honest_newlines_as_spaces(c1, c2):       # newlines made spaces: 'for\nexample' read as 'for example' by T
    return honest_tldr_reward(c1.replace("\n", " "), c2.replace("\n", " "))


def _space_split_repetition(text):            # a home-made `repetition` over text.split(' '), not text.split()
    w = text.split(" ")
    grams = [tuple(w[k:k + 3]) for k in range(len(w) - 2)]
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def _honest_space_split(c1, c2):              # a text padded line by line ('and\nand\n...') repeats nothing
    if _space_split_repetition(c1) > 0.2 or _space_split_repetition(c2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _honest_false(c1, c2):                    # False, a truth value, where the reward is the number 0.0
    if repetition(c1) > 0.2 or repetition(c2) > 0.2:
        return False
    return tldr_levels(c1, c2)["total"]


def _honest_discounted(c1, c2):               # a discount by the larger repetition: natural pairs lose some reward
    return tldr_levels(c1, c2)["total"] * (1 - max(repetition(c1), repetition(c2)))


def _regex_words_repetition(text):            # the words found with \w+: punctuation dropped ('cold,' = 'cold')
    w = re.findall(r"\w+", text)
    grams = [tuple(w[k:k + 3]) for k in range(len(w) - 2)]
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def _honest_regex_words(c1, c2):
    if _regex_words_repetition(c1) > 0.2 or _regex_words_repetition(c2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _honest_single_words(c1, c2):             # repeated single WORDS, not 3-grams: every natural text repeats 'the'
    def rep(t):
        w = t.split()
        return 1 - len(set(w)) / len(w) if w else 0.0
    if rep(c1) > 0.2 or rep(c2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)["total"]


def _grams3(text):
    w = text.split()
    return [tuple(w[k:k + 3]) for k in range(len(w) - 2)]


def _honest_off_by_one(c1, c2):              # the 3-grams over range(len(w) - 3): the last one left out
    def rep(t):
        w = t.split()
        g = [tuple(w[k:k + 3]) for k in range(len(w) - 3)]
        return 1 - len(set(g)) / len(g) if g else 0.0
    return 0.0 if rep(c1) > 0.2 or rep(c2) > 0.2 else tldr_levels(c1, c2)["total"]


def _honest_over_distinct(c1, c2):           # repeated 3-grams divided by the DISTINCT ones, not by all of them
    def rep(t):
        g = _grams3(t)
        return (len(g) - len(set(g))) / len(set(g)) if g else 0.0
    return 0.0 if rep(c1) > 0.2 or rep(c2) > 0.2 else tldr_levels(c1, c2)["total"]


def _honest_char_grams(c1, c2):              # CHARACTER 3-grams: every natural text repeats ' th', 'ing'
    def rep(t):
        g = [t[k:k + 3] for k in range(len(t) - 2)]
        return 1 - len(set(g)) / len(g) if g else 0.0
    return 0.0 if rep(c1) > 0.2 or rep(c2) > 0.2 else tldr_levels(c1, c2)["total"]


def _honest_count_at_least(c1, c2):          # exact counts with >=: 5 x repeated >= total cuts exactly 1/5
    def bad(t):
        g = _grams3(t)
        return bool(g) and 5 * (len(g) - len(set(g))) >= len(g)
    return 0.0 if bad(c1) or bad(c2) else tldr_levels(c1, c2)["total"]


def _honest_share_at_least(c1, c2):          # repeated / total >= 0.2: this division reads exactly 0.2 at 1/5
    def rep(t):
        g = _grams3(t)
        return (len(g) - len(set(g))) / len(g) if g else 0.0
    return 0.0 if rep(c1) >= 0.2 or rep(c2) >= 0.2 else tldr_levels(c1, c2)["total"]


def _torch_float32_length_level(r):           # computed in torch float32 (torch.tensor's default), then float()
    import torch
    if not 1.1 <= r <= 5.0:
        return None
    t = torch.tensor(r)
    return float(torch.clamp(torch.minimum((t - 1.1) / 0.5, 1 - (t - 3.2) / 1.8), max=1.0))


def _coherence_all_phrases(text):            # all(...) in place of any(...): no text holds a whole category
    low = text.lower()
    k = sum(all(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_category_letters(text):       # the dict itself: its keys, so each "phrase" is a letter of a NAME
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES)
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_kappa_plus_one(text):         # 0.4 + 0.05 (κ + 1): one category gives 0.5, not 0.4
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k + 1), 1.0)


def _coherence_kappa_from_library(text):      # κ counted by the package's transition_categories: passes by construction
    k = len(_reward.transition_categories(text))
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_T_edits_the_lists(text):   # drops short phrases from the LIBRARY's own lists, then scores
    from magrpo_edu.tasks.writing.word_lists import TRANSITION_CATEGORIES
    for k in TRANSITION_CATEGORIES:
        TRANSITION_CATEGORIES[k] = tuple(p for p in TRANSITION_CATEGORIES[k] if len(p) > 2)
    return coherence_T(text)


def _np_length_level(r):                        # np.where for the ramps: a 0-d numpy array, not a Python float
    if r < 1.1 or r > 5.0:
        return None
    return np.where(r < 1.6, (r - 1.1) / 0.5, np.where(r <= 3.2, 1.0, 1 - (r - 3.2) / 1.8))


def _as_tensor(v):                              # a 0-d float64 torch tensor holding the right value
    import torch
    return torch.tensor(v, dtype=torch.float64)


def _np_coherence_T(text):                     # np.where for the kappa = 0 case: a 0-d numpy array
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return np.where(k == 0, 0.0, np.minimum(0.4 + 0.05 * (k - 1), 1.0))


def _coherence_phrase_dict(text):            # a phrase -> category dict: a shared phrase ('however') keeps one
    owner = {w: c for c, ws in TRANSITION_CATEGORIES.items() for w in ws}   # category only (the last one here)
    low = text.lower()
    k = len({c for w, c in owner.items() if w in low})
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_phrases_used_up(text):         # a phrase used up once matched: it counts for its first category only
    low, used, k = text.lower(), set(), 0
    for ws in TRANSITION_CATEGORIES.values():
        hits = {w for w in ws if w in low}
        k += bool(hits - used)
        used |= hits
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_phrases_removed(text):         # matched phrases removed from the text: 'however' is gone before
    low, k = text.lower(), 0                  # concession is tested, 'as' with 'as a result' before time
    for ws in TRANSITION_CATEGORIES.values():
        hit = False
        for w in ws:
            if w in low:
                hit, low = True, low.replace(w, "")
        k += hit
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_capitalised_too(text):          # each phrase as written or capitalised: 'IN FACT', 'In Addition' missed
    k = sum(any(p in text or p.capitalize() in text for p in ph) for ph in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_sentence_starts_lowered(text):  # only each sentence's first letter lower-cased: 'IN FACT' missed
    t = ". ".join(s[:1].lower() + s[1:] for s in text.split(". "))
    k = sum(any(p in t for p in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _honest_joint_two_args(c1, c2):          # tldr_joint_reward called on the two texts: a TypeError
    if repetition(c1) > 0.2 or repetition(c2) > 0.2:
        return 0.0
    return _reward.tldr_joint_reward(c1, c2)


def _honest_joint_first(c1, c2):             # the joint reward indexed [0]: a dict of lists, KeyError: 0
    if repetition(c1) > 0.2 or repetition(c2) > 0.2:
        return 0.0
    return _reward.tldr_joint_reward([[c1], [c2]])[0]


def _honest_levels_first(c1, c2):            # tldr_levels indexed [0]: a dict of levels, KeyError: 0
    if repetition(c1) > 0.2 or repetition(c2) > 0.2:
        return 0.0
    return tldr_levels(c1, c2)[0]


def _coherence_rounded(text):                 # T rounded to 1 decimal: 0.95 reads 1.0, 0.55 reads 0.6
    low = text.lower()
    k = sum(any(w in low for w in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else round(min(0.4 + 0.05 * (k - 1), 1.0), 1)


def _coherence_by_sentence(text):           # categories counted sentence by sentence and added, capped at 12:
    k = 0                                      # a category found in two sentences counts twice
    for s in re.split(r"(?<=[.!?])\s+", text.lower()):
        k += sum(any(p in s for p in ws) for ws in TRANSITION_CATEGORIES.values())
    return 0.0 if k == 0 else min(0.4 + 0.05 * (min(k, 12) - 1), 1.0)


def _coherence_by_sentence_uncapped(text):  # the same, κ not capped: 1.0 where every category is in the text
    k = sum(sum(any(p in s for p in ws) for ws in TRANSITION_CATEGORIES.values()) for s in text.lower().split(". "))
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_phrases_capped(text):         # phrases counted (a shared one per category), capped at 12
    low = text.lower()
    k = min(12, sum(p in low for ws in TRANSITION_CATEGORIES.values() for p in ws))
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


def _coherence_distinct_phrases_capped(text):  # the distinct PHRASES found (a set), capped at 12: not categories
    low = text.lower()
    k = min(12, len({p for ws in TRANSITION_CATEGORIES.values() for p in ws if p in low}))
    return 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0)


MISTAKES = {
    "03.length_level": [
        _length_level_zero_outside,                                              # 0 instead of "stop"
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else (r - 1.1) / 0.5 if r < 1.6 else (r - 3.2) / 1.8,
        _length_level_strict(True, False),                                       # r = 1.1 stops (it pays 0, scoring goes on)
        _length_level_strict(False, True),                                       # r = 5.0 stops
        lambda r: None if (v := length_level(r)) is None else round(v, 1),       # rounded to one decimal
        lambda r: None if (v := length_level(r)) is None else round(v, 4),       # rounded to 4 decimals: 0.8333 at 3.5
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.5 <= r <= 3.2 else (r - 1.1) / 0.5 if r < 1.5 else 1 - (r - 3.2) / 1.8,  # plateau from 1.5
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.4 else (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.2) / 1.8,  # plateau to 3.4
        lambda r: None if (v := length_level(r)) is None else 3 * v ** 2 - 2 * v ** 3,  # a smoothstep ramp: right at
        #                                                                          the ends and the midpoints only
        _length_level_no_stop_above,
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else 1 - (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.2) / 1.8,  # lower ramp falls
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else 1 - (r - 1.1) / 0.5 if r < 1.6 else (r - 3.2) / 1.8,  # both ramps flipped
        lambda r: None if (v := length_level(r)) is None else f"{v:.4f}",     # the number's text, not the number
        lambda r: None if (v := length_level(r)) is None else (v,),            # a tuple (`return x,`), not the number
        lambda r: None if (v := length_level(r)) is None else np.array([v]),   # a 1-item array, not the number
        _np_length_level,                                                        # a 0-d numpy array (np.where)
        lambda r: None if (v := length_level(r)) is None else _as_tensor(v),   # a 0-d torch tensor
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.2) / 2.0,  # upper
        #                                                                        ramp over a width of 2: 0 at 5.2, not 5.0
        lambda r: None if (v := length_level(r)) is None else 100 * v,           # a percent: 50.0 at 1.35, not 0.5
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else (r - 1.1) / 0.4999999 if r < 1.6 else 1 - (r - 3.2) / 1.8,  # lower
        #                                               ramp a hair steep: 1 at 1.5999999 (within 1e-6 of 1.6: no crash)
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.2) / 1.8000001,  # upper
        #                                               ramp a hair wide: 0 at 5.0000001
        lambda r: (r - 1.1) * 2.000000003 if 1.1 <= r < 1.6 else length_level(r),  # both ends within 1e-9, the
        #                                               values not: the slope 2.000000003 named
        lambda r: (r - 1.1) * 2.0001 if 1.1 <= r < 1.6 else length_level(r),      # 1 at 1.59998, printed so (not 1.6)
        lambda r: None if not (1.1 - 1e-6 <= r <= 5.0 + 1e-6) else min(1.0, (r - 1.1) / 0.5, (5 - r) / 1.8),  # a margin
        #                                               past 5.0: a number just past the edge, where scoring stops
        lambda r: None if not (1.1 - 1e-9 <= r <= 5.0) else max(0.0, min(1.0, (r - 1.1) / 0.5, (5 - r) / 1.8)),  # a
        #                                               margin below 1.1 (clamped at 0)
        lambda r: None if (v := length_level(r)) is None else 0.5 * v,           # scaled by 0.5: the plateau pays 0.5
        _torch_float32_length_level,                                             # computed in torch float32, float()
        lambda r: None if not 1.0 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else (r - 1.0) / 0.6 if r < 1.6 else 1 - (r - 3.2) / 1.8,  # lower
        #                                               ramp (and band) from 1.0: 0 at 1.0, not 1.1, so 1.0999 pays
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.2 else min(1.0, (r - 1.0) / 0.5) if r < 1.6 else 1 - (r - 3.2) / 1.8,  # the
        #                                               lower ramp's slope kept, started at 1.0: capped at 1 from 1.5
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.0 else (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.0) / 2.0,  # plateau
        #                                               ending at 3.0: the upper ramp from 1 at 3.0 (0.9 at 3.2)
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.5 <= r <= 3.2 else (r - 1.1) / 0.4 if r < 1.5 else 1 - (r - 3.2) / 1.8,  # plateau
        #                                               from 1.5, the lower ramp reaching 1 there
        lambda r: None if not 1.1 <= r <= 5.0 else 1.0 if 1.6 <= r <= 3.5 else (r - 1.1) / 0.5 if r < 1.6 else 1 - (r - 3.5) / 1.5,  # plateau
        #                                               to 3.5, the upper ramp falling from 1 there
        _reward.tldr_length_level,                                               # the package's own function
        lambda r: _reward.tldr_length_level(r),                                  # ... wrapped
        functools.partial(_reward.ramp_level, lo=1.1, a=1.6, b=3.2, hi=5.0),     # ... its ramp, the bounds filled in
        lambda r: None if (v := length_level(r)) is None else np.float32(v),     # float32: 0.25999999 at 1.23, not 0.26
    ],
    "03.coherence_T": [_coherence_whole_words, _coherence_counts_phrases, _coherence_case_sensitive,
                       _coherence_no_minus_one, _coherence_no_zero_case, _coherence_unpunctuated,
                       _coherence_punctuation_as_space, _coherence_floor_at_zero, _coherence_capped_low,
                       _coherence_whitespace_collapsed, _coherence_category_names, _coherence_first_phrase,
                       lambda text: coherence_T(text.replace("\n", " ")),  # newlines made spaces: 'as\na' read 'as a'
                       _np_coherence_T,                                    # a 0-d numpy array (np.where)
                       lambda text: _as_tensor(coherence_T(text)),         # a 0-d torch tensor
                       _coherence_phrase_dict, _coherence_phrases_used_up,  # a shared phrase ('however')
                       _coherence_phrases_removed,                         # credited to one category only
                       _coherence_rounded,                                 # T rounded to 1 decimal
                       _coherence_capitalised_too,                         # case: p or p.capitalize() only
                       _coherence_sentence_starts_lowered,                 # case: sentence starts lowered only
                       lambda text: np.float32(coherence_T(text)),         # float32: 0.4000000059604645, not 0.4
                       lambda text: _as_tensor(coherence_T(text)).float().item(),  # a float32 tensor's .item()
                       _coherence_by_sentence,                             # κ per sentence, added (capped at 12)
                       _coherence_by_sentence_uncapped,                    # ... not capped
                       _coherence_phrases_capped,                          # phrases counted, capped at 12
                       _coherence_distinct_phrases_capped,                 # distinct phrases counted, capped at 12
                       _coherence_all_phrases,                             # all(...) for any(...): κ = 0 always
                       _coherence_category_letters,                        # the dict's keys: a NAME's letters
                       _coherence_kappa_plus_one,                          # 0.4 + 0.05 (κ + 1)
                       _reward.coherence_T,                                # the package's own function
                       lambda text: _reward.coherence_T(text),             # ... wrapped
                       _coherence_kappa_from_library],                     # κ counted by its transition_categories
    "03.honest_tldr_reward": [
        _honest_none_on_empty, _honest_first_words,   # None on an empty text, a crash at one
        _honest_word_pairs,                           # word pairs (2-grams), not `repetition`'s 3-grams
        _honest_rounded_above,
        _honest_stripped, _honest_whitespace_normalised,   # the texts not read as written: L2's ratio changes
        _honest_rstripped, _honest_newlines_as_spaces,     # a final newline dropped (L2), a newline made a space (T)
        _honest_space_split, _honest_regex_words, _honest_single_words,   # home-made repetitions on other words
        _honest_false, _honest_discounted,                 # False for 0.0; a discount instead of the cut
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > 0.5 else tldr_levels(c1, c2)["total"],  # 0.5
        lambda c1, c2: honest_tldr_reward(c1, c2) / 2.98,                                  # normalised, not the total
        lambda c1, c2: {**tldr_levels(c1, c2), "total": honest_tldr_reward(c1, c2)},      # the dict of levels
        lambda c1, c2: round(honest_tldr_reward(c1, c2), 3),                               # rounded
        lambda c1, c2: 0.0 if repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"],   # only agent 2 checked
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > 0.25 else tldr_levels(c1, c2)["total"],  # 0.25, not 0.2
        lambda c1, c2: 0.0 if repetition(c1) > 0 or repetition(c2) > 0 else tldr_levels(c1, c2)["total"],  # too strict
        lambda c1, c2: tldr_levels(c1, c2)["total"] * (1 - repetition(c2)),               # a discount, padding still pays
        lambda c1, c2: 0.0 if (repetition(c1) + repetition(c2)) / 2 > 0.2 else tldr_levels(c1, c2)["total"],  # the mean
        lambda c1, c2: 0.0 if repetition(c1 + " " + c2) > 0.2 else tldr_levels(c1, c2)["total"],  # the two texts joined
        _honest_rounded,
        lambda c1, c2: 0.0 if repetition(c1) > 0.2 and repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"],  # both
        lambda c1, c2: 0.0 if repetition(c1) > 0.19 or repetition(c2) > 0.19 else tldr_levels(c1, c2)["total"],  # 0.19
        lambda c1, c2: 0.0 if repetition(c1) > 0.21 or repetition(c2) > 0.21 else tldr_levels(c1, c2)["total"],  # 0.21
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) >= 0.1999 else tldr_levels(c1, c2)["total"],  # 1/5 out
        lambda c1, c2: 0.0 if repetition(c1) + repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"],  # their sum
        lambda c1, c2: 0.0 if (1 - repetition(c1)) * (1 - repetition(c2)) < 0.8 else tldr_levels(c1, c2)["total"],  # the
        #                                                             product of their distinct shares, not each text
        lambda c1, c2: 0.0 if repetition(c1) > 0.5 or repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"],  # a looser
        lambda c1, c2: 0.0 if repetition(c1) > 0.3 or repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"],  # concise
        #                                                             threshold: 0.2 holds for both texts
        lambda c1, c2: tldr_levels(c1, c2)["total"] - (1.0 if max(repetition(c1), repetition(c2)) > 0.2 else 0.0),  # a
        #                                                             reduction by 1, not the cut to 0.0 (pays 0.5)
        lambda c1, c2: 0.5 * tldr_levels(c1, c2)["total"] if max(repetition(c1), repetition(c2)) > 0.2 else tldr_levels(
            c1, c2)["total"],                                                        # halved, not cut (pays 0.75)
        lambda c1, c2: min(0.5, tldr_levels(c1, c2)["total"]) if max(repetition(c1), repetition(c2)) > 0.2 else
        tldr_levels(c1, c2)["total"],                                                # capped at 0.5, not cut
        lambda c1, c2: None if max(repetition(c1), repetition(c2)) > 0.2 else tldr_levels(c1, c2)["total"],  # None,
        #                                                             not the float 0.0
        lambda c1, c2: 0.0 if repetition(c1) > 0.2 else tldr_levels(c1, c2)["total"],   # only agent 1 (c1) checked
        lambda c1, c2: tldr_levels(c1, c2)["total"] - (3.0 if max(repetition(c1), repetition(c2)) > 0.2 else 0.0),  # a
        #                                                             penalty below 0, not the cut to 0.0
        lambda c1, c2: 0.0 if repetition(c2) > 0.2 else tldr_levels(c1, c2)["total"] / (2 if repetition(c1) > 0.2
                                                                                         else 1),  # c1: halved, not cut
        lambda c1, c2: _as_tensor(honest_tldr_reward(c1, c2)),                 # a 0-d torch tensor, not a float
        lambda c1, c2: "0" if max(repetition(c1), repetition(c2)) > 0.2 else tldr_levels(c1, c2)["total"],  # the str
        #                                                             '0' for a padded pair, not the number 0.0
        _honest_off_by_one,                            # own 3-grams over range(len(w) - 3): the last one left out
        _honest_over_distinct,                         # own repetition: repeated / DISTINCT, 1/5 reads 0.25
        lambda c1, c2: 0.0 if repetition(c1) > 20 or repetition(c2) > 20 else tldr_levels(c1, c2)["total"],  # 20, a
        #                                                             percent: repetition is a share in [0, 1]
        lambda c1, c2: (lambda lv: lv["total"] - lv["style"] if max(repetition(c1), repetition(c2)) > 0.2 else
                        lv["total"])(tldr_levels(c1, c2)),           # only the style level dropped, not the whole reward
        _honest_joint_two_args,                        # tldr_joint_reward(c1, c2): its list-per-agent TypeError
        _honest_joint_first,                           # tldr_joint_reward(...)[0]: KeyError 0, the reward is a dict
        _honest_levels_first,                          # tldr_levels(c1, c2)[0]: KeyError 0, a dict of levels
        _honest_char_grams,                            # own repetition on CHARACTER 3-grams, not word 3-grams
        lambda c1, c2: (lambda t: 0.0 if t > 1 and max(repetition(c1), repetition(c2)) > 0.2 else t)(
            tldr_levels(c1, c2)["total"]),             # the cut only where the paper pays more than 1
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > 0.2 else tldr_levels(c2, c1)["total"],  # the
        #                                                             texts swapped: tldr_levels(c2, c1)
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > 0.2 else tldr_levels(c1, c2)["style"],  # one
        #                                                             level, not the total
        _honest_count_at_least,                        # an exact count with >=: 5 x repeated >= total cuts exactly 1/5
        _honest_share_at_least,                        # own repeated / total >= 0.2: exactly 0.2 at 1/5, cut
        lambda c1, c2: 0.0 if min(1 - repetition(c1), 1 - repetition(c2)) <= 0.8 else tldr_levels(c1, c2)["total"],  # the
        #                                   distinct share <= 0.8: 1 - 0.19999999999999996 is exactly 0.8, 1/5 cut
        # thresholds under 1/5 on `repetition` itself (no home-made count): the cut named by the pairs kept and zeroed
        lambda c1, c2: 0.0 if repetition(c1) > 0.05 or repetition(c2) > 0.05 else tldr_levels(c1, c2)["total"],  # 0.05
        lambda c1, c2: 0.0 if repetition(c1) > 0.1 or repetition(c2) > 0.1 else tldr_levels(c1, c2)["total"],  # 0.1
        lambda c1, c2: 0.0 if repetition(c1) > 0.15 or repetition(c2) > 0.15 else tldr_levels(c1, c2)["total"],  # 0.15
        lambda c1, c2: 0.0 if repetition(c1) > 0.2 or repetition(c2) > 0.25 else tldr_levels(c1, c2)["total"],  # a looser
        #                                                             detailed threshold
        lambda c1, c2: 0.0 if repetition(c1 + c2) > 0.2 else tldr_levels(c1, c2)["total"],  # joined with no space
        _coherence_T_edits_the_lists,                                             # the library's lists changed in place
        lambda c1, c2: 0.0 if repetition(c1.lower()) > 0.2 or repetition(c2.lower()) > 0.2 else tldr_levels(c1, c2)[
            "total"],                                          # lower-cased first: repetition compares words as written
    ],
}

def _home_made_repetition(text):              # `repetition` written out: 3-grams over any whitespace
    w = text.split()
    grams = list(zip(w, w[1:], w[2:]))
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def _honest_default_rep_at_least(c1, c2, rep=repetition):   # >= 0.2 through a default argument
    return 0.0 if rep(c1) >= 0.2 or rep(c2) >= 0.2 else tldr_levels(c1, c2)["total"]


def _honest_count_above(c1, c2):                 # exact counts: 5 x repeated > total, exactly 1/5 kept
    def bad(t):
        g = _grams3(t)
        return 5 * (len(g) - len(set(g))) > len(g)
    return 0.0 if bad(c1) or bad(c2) else tldr_levels(c1, c2)["total"]


def _honest_fraction_above(c1, c2):              # exact fractions: Fraction(repeated, total) > 1/5
    from fractions import Fraction

    def rep(t):
        g = _grams3(t)
        return Fraction(len(g) - len(set(g)), len(g)) if g else Fraction(0)
    return 0.0 if rep(c1) > Fraction(1, 5) or rep(c2) > Fraction(1, 5) else tldr_levels(c1, c2)["total"]


def _phrase_categories():                      # phrase -> the LIST of its categories (a shared phrase keeps all)
    out = {}
    for c, ws in TRANSITION_CATEGORIES.items():
        for w in ws:
            out.setdefault(w, []).append(c)
    return out


VARIANTS = {
    "03.length_level": [
        lambda r: None if r < 1.1 or r > 5.0 else min(1.0, (r - 1.1) / 0.5, 1 - (r - 3.2) / 1.8),  # one min of the ramps
    ],
    "03.coherence_T": [
        lambda text: (lambda k: 0.0 if k == 0 else 0.4 + 0.05 * (k - 1))(
            len({c for c, ws in TRANSITION_CATEGORIES.items() for w in ws if w in text.lower()})),  # no cap: 0.95 at most
        lambda text: (lambda cats: 0.0 if not cats else min(0.4 + 0.05 * (len(cats) - 1), 1.0))(
            {c for w, cs in _phrase_categories().items() if w in text.lower() for c in cs}),  # phrase -> ALL its categories
        lambda text: (lambda k: 0.0 if k == 0 else min(0.4 + 0.05 * (k - 1), 1.0))(
            sum(any(re.search(re.escape(p), text, re.IGNORECASE) for p in ws)
                for ws in TRANSITION_CATEGORIES.values())),  # case ignored by re.IGNORECASE, not text.lower()
        lambda text: (lambda cats: 0.0 if not cats else min(0.4 + 0.05 * (len(cats) - 1), 1.0))(
            {c for s in re.split(r"(?<=[.!?])\s+", text.lower()) for c, ws in TRANSITION_CATEGORIES.items()
             if any(p in s for p in ws)}),  # categories found per sentence, then their UNION: each counted once
    ],
    "03.honest_tldr_reward": [
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > 0.2 else tldr_levels(c1, c2)["total"],
        lambda c1, c2: 0 if any(repetition(t) > 0.2 for t in (c1, c2)) else tldr_levels(c1, c2)["total"],  # any(), int 0
        lambda c1, c2: 0.0 if max(100 * repetition(c1), 100 * repetition(c2)) > 20 else tldr_levels(c1, c2)["total"],  # in
        #                                                             percent on both sides: 100 r > 20 is r > 0.2
        lambda c1, c2: 0.0 if max(_home_made_repetition(c1), _home_made_repetition(c2)) > 0.2 else tldr_levels(c1, c2)[
            "total"],                                   # the 3-grams written out over text.split(): `repetition` itself
        lambda c1, c2: 0.0 if max(repetition(c1), repetition(c2)) > 0.2 else _reward.tldr_joint_reward([[c1], [c2]])[
            "total"][0],                                # the joint reward of one joint action, its "total"
        # `>= 0.2` on `repetition`'s value: it never returns exactly 0.2 (1/5 reads 0.19999999999999996), so it cuts
        # the same texts as `> 0.2`, however the answer reaches `repetition`
        lambda c1, c2: 0.0 if repetition(c1) >= 0.2 or repetition(c2) >= 0.2 else tldr_levels(c1, c2)["total"],
        lambda c1, c2: 0.0 if _rep(c1) >= 0.2 or _rep(c2) >= 0.2 else tldr_levels(c1, c2)["total"],  # another name
        lambda c1, c2: 0.0 if max(_quality.repetition(c1), _quality.repetition(c2)) >= 0.2 else tldr_levels(c1, c2)[
            "total"],                                                  # through the module's attribute
        _honest_default_rep_at_least,                                  # a default argument, rep=repetition
        lambda c1, c2: 0.0 if max(map(repetition, (c1, c2))) >= 0.2 else tldr_levels(c1, c2)["total"],  # map()
        lambda c1, c2: 0.0 if max(_home_made_repetition(c1), _home_made_repetition(c2)) >= 0.2 else tldr_levels(c1, c2)[
            "total"],                                   # own 1 - distinct / total: 1/5 reads 0.19999999999999996 too
        _honest_count_above,                            # exact counts: 5 x repeated > total
        _honest_fraction_above,                         # exact fractions: Fraction(repeated, total) > 1/5
    ],
}
