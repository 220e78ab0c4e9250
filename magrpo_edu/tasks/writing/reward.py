"""The writing tasks' joint rewards, exactly as the authors' reward code computes them.

Every level is GATED: a failed level stops scoring and the total is what was earned so far.
Word counts split on whitespace; lengths are characters; "unique words" is the set of lower-cased
`\\b\\w+\\b` matches, stopwords INCLUDED (the reference code's comment says "excluding
stopwords"; its numbers include them, and so do we).

TL;DR (agent 1 concise summary c1, agent 2 detailed summary c2), nominal max 3.0:
  L1 structure    +0.5 if both texts have 8..256 words, else the total is 0
  L2 length ratio r = chars(c2)/chars(c1): 1.0 on [1.6, 3.2]; (r-1.1)/0.5 on [1.1, 1.6);
                  1-(r-3.2)/1.8 on (3.2, 5.0]; otherwise stop
  L3 uniqueness   u = unique(c2)/unique(c1): 0.5 if u >= 2.0; 0.5*(u-1.3)/0.7 on [1.3, 2.0); stop if u < 1.3
  L4 style        0.4*T + 0.6*J; T = 0 if no transition category is found in c2, else
                  min(0.4 + min(0.05*(k-1), 0.6), 1.0) for k categories; J = min(Jaccard(c1, c2), 0.03)/0.03,
                  Jaccard over word sets WITHOUT stopwords (1.0 if both sets are empty)
  With 12 categories T <= 0.95, so the reachable maximum is 2.98 (a documented quirk).

arXiv expansion (agent 1 background c1, agent 2 method c2), max 3.0:
  L1 +0.5 if both have 128..256 words. L2 r: 1 on [1.0, 1.3]; (r-0.8)/0.2 on [0.8, 1.0);
  1-(r-1.3)/0.2 on (1.3, 1.5]; else stop. L3 u: 0.5 on [0.7, 1.3]; 0.5*(u-0.5)/0.2 on [0.5, 0.7);
  0.5*(1-(u-1.3)/0.4) on (1.3, 1.7]; else stop. L4 as TL;DR, but T counts categories in
  c1 + c2 (joined with NO separator, as the authors do: the last word of c1 and the first of c2
  run together, which can form a phrase neither has) and J is capped at 0.23: min(J, 0.23)/0.23.

Word lists: the authors' own (`magrpo_edu.tasks.writing.word_lists`): 106 stopwords
and 12 transition-word categories. A category counts ONCE however many of its phrases occur.

Quirks kept on purpose (they are the paper's reward): transition phrases are matched as SUBSTRINGS
of the lower-cased text, so "as" (time) is found inside "has" and "was", "so" (cause/effect)
inside "also", "if" (condition) inside "different", "had" and "were" (condition) are ordinary
words; almost any English text scores T > 0. At the lower edge of a ramp (r = 1.1, u = 1.3) the
level earns 0 but scoring goes on. The ramps are computed with the authors' arithmetic (e.g.
(r - 1.1) / (1.6 - 1.1), not / 0.5), so the floats agree with theirs to the last bit.

Where we deviate from the authors' code: nothing in the scoring. Their functions also print a
report of every sample; ours return the levels as a dict instead.
"""
from __future__ import annotations

import math
import re
from typing import Sequence

from .word_lists import STOPWORDS, TRANSITION_CATEGORIES

LEVEL_MAX = dict(structure=0.5, length_ratio=1.0, uniqueness=0.5, coherence=1.0, consistency=1.0, style=1.0)
"""What each component of the TL;DR and arXiv rewards (`tldr_levels`, `arxiv_levels`) earns at most: the
four levels structure (L1), length_ratio (L2), uniqueness (L3) and style (L4, = 0.4 coherence + 0.6
consistency), so 3.0 in all, and style's two parts on their own 0-1 scales (coherence T reaches 0.95
at most with the 12 categories, hence TL;DR's reachable 2.98). results.md prints each component beside
its maximum (`Task.component_max`)."""

_WORD = re.compile(r"\b\w+\b")


def word_count(text: str) -> int:
    """Words = whitespace-separated pieces (structure level)."""
    return len(text.split())


def unique_words(text: str, drop_stopwords: bool = False) -> set[str]:
    """Set of lower-cased `\\b\\w+\\b` words, optionally without stopwords."""
    words = set(_WORD.findall(text.lower()))
    return words - STOPWORDS if drop_stopwords else words


def transition_categories(text: str) -> set[str]:
    """Categories with at least one of their words found as a substring of the lower-cased text."""
    low = text.lower()
    return {cat for cat, words in TRANSITION_CATEGORIES.items() if any(w in low for w in words)}


def coherence_T(text: str) -> float:
    """T = 0 if no category is found, else min(0.4 + min(0.05*(k-1), 0.6), 1.0) for k categories
    (reachable maximum 0.95 with 12 categories)."""
    k = len(transition_categories(text))
    return 0.0 if k == 0 else min(0.4 + min((k - 1) * 0.05, 0.6), 1.0)


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word sets without stopwords (1.0 when both are empty)."""
    A, B = unique_words(a, True), unique_words(b, True)
    if not A and not B:
        return 1.0
    return len(A & B) / len(A | B)


def _levels(c1: str, c2: str, words: tuple[int, int], ratio_fn, unique_fn, t_text: str, j_cap: float) -> dict:
    out = dict(structure=0.0, length_ratio=0.0, uniqueness=0.0, coherence=0.0, consistency=0.0, style=0.0)
    lo, hi = words
    if not (lo <= word_count(c1) <= hi and lo <= word_count(c2) <= hi):
        return {**out, "total": 0.0}
    out["structure"] = 0.5
    r = len(c2) / len(c1)
    l2 = ratio_fn(r)
    if l2 is None:
        return {**out, "total": 0.5}
    out["length_ratio"] = l2
    u1 = len(unique_words(c1))
    l3 = unique_fn(len(unique_words(c2)) / u1) if u1 else None
    if l3 is None:
        return {**out, "total": out["structure"] + l2}
    out["uniqueness"] = l3
    T = coherence_T(t_text)
    J = min(jaccard(c1, c2), j_cap) / j_cap
    out.update(coherence=T, consistency=J, style=0.4 * T + 0.6 * J)
    out["total"] = out["structure"] + l2 + l3 + out["style"]
    return out


def ramp_level(x: float, lo: float, a: float, b: float, hi: float, top: float = 1.0):
    """The authors' piecewise-linear level: `top` on [a, b], rising linearly from 0 at lo to top at a
    (on [lo, a)), falling from top at b to 0 at hi (on (b, hi]); None ("stop scoring") outside
    [lo, hi]. With their arithmetic, (x - lo) / (a - lo) rather than a pre-divided constant, so the
    floats agree with theirs to the last bit (scaling by top = 0.5 is exact in binary)."""
    if a <= x <= b:
        return top
    if lo <= x < a:
        return top * ((x - lo) / (a - lo))
    if b < x <= hi:
        return top * (1.0 - ((x - b) / (hi - b)))
    return None


def tldr_length_level(r: float):
    """TL;DR L2 from r = chars(c2)/chars(c1); None means "stop scoring"."""
    return ramp_level(r, 1.1, 1.6, 3.2, 5.0)


def tldr_unique_level(u: float):
    """TL;DR L3 from u = unique(c2)/unique(c1): 0.5 for u >= 2 (no upper edge); None means "stop scoring"."""
    return ramp_level(u, 1.3, 2.0, math.inf, math.inf, top=0.5)


def arxiv_length_level(r: float):
    """arXiv L2 from the char ratio; None means "stop scoring"."""
    return ramp_level(r, 0.8, 1.0, 1.3, 1.5)


def arxiv_unique_level(u: float):
    """arXiv L3 from the unique-word ratio; None means "stop scoring"."""
    return ramp_level(u, 0.5, 0.7, 1.3, 1.7, top=0.5)


def tldr_levels(summary: str, detailed: str) -> dict:
    """TL;DR reward with its breakdown: structure, length_ratio, uniqueness, coherence (T),
    consistency (normalised J), style (= 0.4 T + 0.6 J) and total. Gated levels report 0."""
    return _levels(summary, detailed, (8, 256), tldr_length_level, tldr_unique_level, detailed, 0.03)


ARXIV_WORDS = (128, 256)
"""arXiv L1's window: each agent's text must have this many whitespace-separated words."""


def arxiv_levels(background: str, method: str) -> dict:
    """arXiv-expansion reward with the same breakdown as `tldr_levels`."""
    return _levels(background, method, ARXIV_WORDS, arxiv_length_level, arxiv_unique_level, background + method, 0.23)


def arxiv_stop_level(background: str, method: str) -> int:
    """Where a joint answer stops on the arXiv reward's ladder (the gates of `_levels`, in its order):
    1 = fails L1 (a text outside 128-256 words, total 0), 2 = fails L2 (character ratio outside
    [0.8, 1.5], total 0.5), 3 = fails L3 (unique-word ratio outside [0.5, 1.7]), 4 = reaches L4 (style
    is scored). Notebook 09's exercise 2 asks for it; experiments/arxiv_expansion.py counts it."""
    lo, hi = ARXIV_WORDS
    if not all(lo <= word_count(c) <= hi for c in (background, method)):
        return 1
    if arxiv_length_level(len(method) / len(background)) is None:
        return 2
    u1 = len(unique_words(background))
    if not u1 or arxiv_unique_level(len(unique_words(method)) / u1) is None:
        return 3
    return 4


def tldr_reward(summary: str, detailed: str) -> float:
    """Total TL;DR joint reward of one joint action (max 3.0 nominal, 2.98 reachable)."""
    return tldr_levels(summary, detailed)["total"]


def arxiv_reward(background: str, method: str) -> float:
    """Total arXiv-expansion joint reward of one joint action (max 3.0)."""
    return arxiv_levels(background, method)["total"]


def length_ratio_reward(first: str, second: str, low: float = 2.0, high: float = 3.0) -> float:
    """The authors' quick-demo reward: 1 if chars(second)/chars(first) is in [low, high], else
    exp(-distance to that interval); 0 if `first` is empty."""
    if len(first) == 0:
        return 0.0
    r = len(second) / len(first)
    d = 0.0 if low <= r <= high else (low - r if r < low else r - high)
    return math.exp(-d)


# ---- joint-reward adapters for the trainer: (completions per agent, row) -> dict ---------------------
def per_agent_texts(completions, name: str, pair: str):
    """`completions` as a list when it is one sequence of texts per agent (the trainer's contract:
    [agent 1's texts, agent 2's texts]); a TypeError that names the call's shape when it, or one agent's entry, is a
    bare string (two texts in one list score letter by letter; two texts as two arguments put agent 2's in `row`).
    `name`: the joint reward's name; `pair`: the function that scores one pair of texts."""
    whole = isinstance(completions, (str, bytes))
    if not whole:
        completions = list(completions)          # an iterator is read once, here
    if whole or any(isinstance(c, (str, bytes)) for c in completions):
        got = ("a string: the two texts went in as two arguments" if whole else
               "[" + ", ".join("a string" if isinstance(c, (str, bytes)) else "a list" for c in completions) + "]")
        raise TypeError(f"{name} takes completions = [agent 1's texts, agent 2's texts], a LIST of texts per agent "
                        f"(text g of each list forms joint action g); it got {got}. For one pair of texts c1, c2: "
                        f"{name}([[c1], [c2]]), or {pair}(c1, c2).")
    return completions


def _joint(level_fn):
    def joint(completions: Sequence[Sequence[str]], row=None) -> dict:
        completions = per_agent_texts(completions, joint.__name__, level_fn.__name__)
        if len(completions) != 2:
            raise ValueError(f"{level_fn.__name__} scores 2 agents, got {len(completions)}.")
        levels = [level_fn(a, b) for a, b in zip(*completions)]
        return {k: [lv[k] for lv in levels] for k in levels[0]} if levels else {"total": []}
    joint.__name__ = joint.__qualname__ = level_fn.__name__.replace("_levels", "_joint_reward")
    return joint


tldr_joint_reward = _joint(tldr_levels)
arxiv_joint_reward = _joint(arxiv_levels)


def length_ratio_joint_reward(completions: Sequence[Sequence[str]], row=None) -> list[float]:
    """Joint version of `length_ratio_reward` for two agents."""
    completions = per_agent_texts(completions, "length_ratio_joint_reward", "length_ratio_reward")
    return [length_ratio_reward(a, b) for a, b in zip(*completions)]
