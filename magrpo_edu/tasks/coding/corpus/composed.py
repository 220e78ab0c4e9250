"""Coding problems composed from parts, drawn only by the tiny model's pretraining corpus.

An item kind (numbers, characters, words, 1..n), a predicate or transform of one item (what `aux`
computes) and an aggregation (what main does with aux), each with its own docstring phrase; plus the
neutral names (`tally_records`) the corpus renames many problems to. The problems have the fields of
`magrpo_edu.tasks.coding.world.make_code_problem`; the coding task's data never uses them.
"""
from __future__ import annotations

import builtins
import functools
import keyword
import random
import re
from pathlib import Path

from ..world import LETTERS, family_names

# ---- procedural problems: skills composed, so a small model must read the prompt -------------------
# With only the hand-written families above, a 1M-parameter model memorises family -> code and, given
# an unseen problem, writes a memorised one (wrong name, wrong body). The pretraining corpus therefore
# also draws problems COMPOSED from parts: an item kind (numbers, characters, words, 1..n), a
# predicate or transform of one item (what `aux` computes) and an aggregation (what main does with
# aux), each with its own docstring phrase. The model sees the same aggregation with many aux bodies
# and many names, so the way to predict the completion is to copy the signature and translate the
# docstring. Compositions that are a held-out family in disguise (same aggregation, same item test)
# are never drawn, so the eval split stays unseen in kind, not only in name.
# Names and argument names vary too (and the corpus renames many problems to neutral names like
# `tally_records`, which no docstring predicts), so that copying the prompt's signature is the way
# to predict the completion's.

# kind: (argument names, item variable, iterable expression, noun used in docstrings); `{a}` = argument
KINDS = {
    "num": (("xs", "nums", "values", "numbers", "items", "data"), "x", "{a}", "numbers in {a}"),
    "char": (("s", "text", "line", "word"), "c", "{a}", "characters of {a}"),
    "word": (("s", "text", "sentence", "line"), "w", "{a}.split()", "words of {a}"),
    "range": (("n", "m", "limit", "size"), "i", "range(1, {a} + 1)", "numbers i from 1 to {a}"),
}

# predicates: (kind, name part, docstring phrase "singular|plural" (one phrase when both read the same:
# "is even", "are even"), expression)
PREDICATES = [
    ("num", "even", "even", "x % 2 == 0"),
    ("num", "odd", "odd", "x % 2 == 1"),
    ("num", "positive", "positive", "x > 0"),
    ("num", "negative", "negative", "x < 0"),
    ("num", "zeros", "equal to zero", "x == 0"),
    ("num", "nonzero", "not zero", "x != 0"),
    ("num", "above", "greater than {k}", "x > {k}"),
    ("num", "below", "smaller than {k}", "x < {k}"),
    ("num", "divisible", "divisible by {k}", "x % {k} == 0"),
    ("num", "small", "between 0 and {k}", "0 <= x <= {k}"),
    ("char", "vowels", "a vowel|vowels", "c.lower() in 'aeiou'"),
    ("char", "upper", "an upper-case letter|upper-case letters", "c.isupper()"),
    ("char", "lower", "a lower-case letter|lower-case letters", "c.islower()"),
    ("char", "digits", "a digit|digits", "c.isdigit()"),
    ("char", "spaces", "a space|spaces", "c == ' '"),
    ("char", "letters", "a letter|letters", "c.isalpha()"),
    ("char", "letter", "the letter '{c}'", "c == '{c}'"),
    ("word", "long", "longer than {k} letters", "len(w) > {k}"),
    ("word", "short", "at most {k} letters long", "len(w) <= {k}"),
    ("word", "titled", "capitalised", "w[:1].isupper()"),
    ("word", "starting", "starting with '{c}'", "w.startswith('{c}')"),
    ("word", "mirrored", "a palindrome|palindromes", "w == w[::-1]"),
]

# transforms: (kind, name part, docstring phrase (fits "each ..."), expression)
TRANSFORMS = [
    ("num", "doubled", "multiplied by 2", "x * 2"),
    ("num", "tripled", "multiplied by 3", "x * 3"),
    ("num", "squared", "squared", "x * x"),
    ("num", "cubed", "cubed", "x ** 3"),
    ("num", "negated", "negated", "-x"),
    ("num", "shifted", "increased by {k}", "x + {k}"),
    ("num", "lowered", "decreased by {k}", "x - {k}"),
    ("num", "halved", "divided by 2", "x / 2"),
    ("num", "absolute", "made non-negative (its absolute value)", "abs(x)"),
    ("range", "doubled", "multiplied by 2", "i * 2"),
    ("range", "squared", "squared", "i * i"),
    ("range", "cubed", "cubed", "i ** 3"),
    ("range", "shifted", "increased by {k}", "i + {k}"),
    ("word", "reversed", "reversed", "w[::-1]"),
    ("word", "shouted", "in upper case", "w.upper()"),
    ("word", "quiet", "in lower case", "w.lower()"),
    ("word", "lengths", "replaced by its length", "len(w)"),
    ("word", "repeated", "written twice", "w + w"),
]

# aggregations: (kinds, uses, name templates, docstring, main calling aux, main alone, buggy main)
# `{p}` name part, `{phrase}` / `{phrase1}` docstring phrase (plural / singular), `{e}` the item expression, `{v}` item variable,
# `{it}` iterable, `{a}` argument, `{noun}` the kind's noun.
AGGREGATIONS = [
    ("num char word range", "pred", ("count_{p}", "how_many_{p}", "num_{p}"),
     "Return how many {noun} are {phrase}.",
     "return sum(1 for {v} in {it} if aux({v}))",
     "return len([{v} for {v} in {it} if {e}])",
     "return len({it_list})"),
    ("num range", "pred", ("sum_{p}", "total_{p}"),
     "Return the sum of the {noun} that are {phrase}.",
     "return sum({v} for {v} in {it} if aux({v}))",
     "total = 0\n    for {v} in {it}:\n        if {e}:\n            total += {v}\n    return total",
     "return sum({it})"),
    ("num word", "pred", ("keep_{p}", "only_{p}", "select_{p}"),
     "Return the list of the {noun} that are {phrase}, in order.",
     "return [{v} for {v} in {it} if aux({v})]",
     "out = []\n    for {v} in {it}:\n        if {e}:\n            out.append({v})\n    return out",
     "return list({it})"),
    ("num word", "pred", ("drop_{p}", "without_{p}"),
     "Return the list of the {noun} that are not {phrase}, in order.",
     "return [{v} for {v} in {it} if not aux({v})]",
     "return [{v} for {v} in {it} if not ({e})]",
     "return [{v} for {v} in {it} if aux({v})]"),
    ("char", "pred", ("keep_{p}", "only_{p}", "extract_{p}"),
     "Return the string of the {noun} that are {phrase}, in order.",
     "return ''.join({v} for {v} in {it} if aux({v}))",
     "return ''.join({v} for {v} in {it} if {e})",
     "return {it}"),
    ("char", "pred", ("drop_{p}", "strip_{p}", "without_{p}"),
     "Return {a} without the characters that are {phrase}.",
     "return ''.join({v} for {v} in {it} if not aux({v}))",
     "return ''.join({v} for {v} in {it} if not ({e}))",
     "return {it}.strip()"),
    ("num char word", "pred", ("any_{p}", "has_{p}", "contains_{p}"),
     "Return True if at least one of the {noun} is {phrase1}.",
     "return any(aux({v}) for {v} in {it})",
     "for {v} in {it}:\n        if {e}:\n            return True\n    return False",
     "return len({it_list}) > 0"),
    ("num char word", "pred", ("all_{p}", "only_has_{p}", "every_{p}"),
     "Return True if every one of the {noun} is {phrase1}.",
     "return all(aux({v}) for {v} in {it})",
     "for {v} in {it}:\n        if not ({e}):\n            return False\n    return True",
     "return True"),
    ("num word", "pred", ("first_{p}", "find_{p}"),
     "Return the first of the {noun} that is {phrase1}, or None if there is none.",
     "for {v} in {it}:\n        if aux({v}):\n            return {v}\n    return None",
     "return next(({v} for {v} in {it} if {e}), None)",
     "return None"),
    ("num range word", "map", ("{p}_all", "{p}_each", "list_{p}"),
     "Return the list of the {noun}, each {phrase}.",
     "return [aux({v}) for {v} in {it}]",
     "return [{e} for {v} in {it}]",
     "return list({it})"),
    ("num range", "map", ("sum_{p}", "total_{p}"),
     "Return the sum of the {noun}, each {phrase}.",
     "return sum(aux({v}) for {v} in {it})",
     "total = 0\n    for {v} in {it}:\n        total += {e}\n    return total",
     "return sum({it})"),
    ("num range", "map", ("max_{p}", "largest_{p}"),
     "Return the largest of the {noun}, each {phrase} (0 if there are none).",
     "return max((aux({v}) for {v} in {it}), default=0)",
     "return max([{e} for {v} in {it}] or [0])",
     "return len({it_list})"),
    ("word", "map", ("{p}_words", "words_{p}"),
     "Return {a} with each of the {noun} {phrase}, words joined by single spaces.",
     "return ' '.join(aux({v}) for {v} in {it})",
     "return ' '.join({e} for {v} in {it})",
     "return {a}"),
]

# (aggregation's first name template, kind, name part) of compositions that ARE held-out families:
# count_even, count_positive, count_uppercase, count_char, remove_vowels, filter_short, squares,
# max_abs, word_lengths. Never drawn.
HELD_OUT_COMPOSITIONS = {
    ("count_{p}", "num", "even"), ("count_{p}", "num", "positive"), ("count_{p}", "char", "upper"),
    ("count_{p}", "char", "letter"), ("drop_{p}", "char", "vowels"), ("keep_{p}", "word", "short"),
    ("{p}_all", "num", "squared"), ("max_{p}", "num", "absolute"), ("{p}_all", "word", "lengths"),
}
ILL_TYPED = {("{p}_words", "word", "lengths")}  # ' '.join of integers

_EXAMPLES = {
    "num": ["[1, 2, 3, 4, 5, 6]", "[]", "[-3, 0, 7, {k}]", "[10, -10, {k}1]"],
    "char": ["'Hello World 42'", "''", "'{c}b{c} C d9'", "'aeiou XYZ'"],
    "word": ["'the {c}ig Level of noon'", "''", "'{c}{c} a bb ccc dddddddddd'", "'Hi there Anna'"],
    "range": ["0", "1", "4", "{k}"],
}


def compositions() -> list[tuple[dict, tuple]]:
    """Every allowed (aggregation, item test or transform) pair."""
    out = []
    for agg in AGGREGATIONS:
        kinds, uses = agg[0].split(), agg[1]
        for item in (PREDICATES if uses == "pred" else TRANSFORMS):
            if item[0] in kinds and (agg[2][0], item[0], item[1]) not in HELD_OUT_COMPOSITIONS | ILL_TYPED:
                out.append((agg, item))
    return out


_COMPOSITIONS = compositions()


NAME_VERBS = ("tally", "scan", "pick", "solve", "compute", "process", "check", "build", "get", "make", "sort",
              "handle", "find", "collect", "measure", "count", "apply", "run", "read", "clean")
NAME_NOUNS = ("records", "items", "values", "data", "entries", "batch", "input", "list", "text", "words",
              "scores", "readings", "parts", "group", "line", "numbers", "things", "stuff", "row", "task")


NAME_WORDS_FILE = Path(__file__).with_name("name_words.txt")


@functools.lru_cache(maxsize=1)
def name_words() -> tuple[str, ...]:
    """Words a made-up function name is built from (name_words.txt, one a line): the writing world's words
    (about 500, drawn from 800 seeded posts and abstracts of `tasks.writing.world` with random.Random(1)), the
    neutral verbs and nouns, and nothing Python reserves. Kept as a file so that the coding task imports no
    other task; tests/test_coding_model.py regenerates it from the writing world and compares."""
    return tuple(NAME_WORDS_FILE.read_text().split())


def make_name_words(texts) -> tuple[str, ...]:
    """How name_words.txt was made: the 3-9 letter words of `texts` (the writing world's posts and abstracts), the
    neutral verbs and nouns, minus Python's keywords and builtins, sorted."""
    words = set(NAME_VERBS) | set(NAME_NOUNS)
    for text in texts:
        words |= set(re.findall(r"\b[a-z]{3,9}\b", text))
    return tuple(sorted(w for w in words if not keyword.iskeyword(w) and w not in dir(builtins)))


CONSONANTS, VOWELS = "bcdfghklmnprstvwz", "aeiou"


def name_part(rng: random.Random) -> str:
    """One piece of a made-up name: a word of the writing world, a slice of one (`udge`, `pape`),
    or a made-up syllable string (`tovi`). Copying must work for any piece a prompt can contain, and
    a copy learned on whole words only does not transfer to other tokens (measured: a model trained
    to copy whole-word names copied `budget_after` with p = 0.91 and `filter_short` with p = 0.00)."""
    u, words = rng.random(), name_words()
    if u < 0.4:
        return rng.choice(words)
    if u < 0.7:
        w = rng.choice(words)
        i = rng.randrange(len(w) - 1)
        return w[i:i + rng.randint(2, 6)]
    return "".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(rng.randint(1, 3)))


def random_entry_name(rng: random.Random) -> str:
    """A function name no hand-written or held-out family uses, of one to three made-up pieces
    (`budget_udge`, `tovi_after2`): so many that the name in the answer can only be predicted by
    copying it from the prompt's signature, the skill unseen problems need."""
    names = set(family_names())
    while True:
        name = "_".join(name_part(rng) for _ in range(rng.choice((1, 2, 2, 3))))
        name += str(rng.randint(1, 9)) if rng.random() < 0.2 else ""
        if name not in names and name.isidentifier() and not keyword.iskeyword(name):
            return name


def renamed(p: dict, name: str) -> dict:
    """Problem `p` with its entry point called `name` (prompt and every main source)."""
    old = f"def {p['entry_point']}("
    return {**p, "entry_point": name, **{key: p[key].replace(old, f"def {name}(")
                                         for key in ("prompt", "main_calls_aux", "main_alone", "main_buggy")}}


def make_composed_problem(rng: random.Random) -> dict:
    """One problem composed from an aggregation and an item predicate/transform (same fields as
    `make_code_problem`), with a descriptive name (`count_odd`) that is not one of the hand-written
    or held-out families."""
    names = set(family_names())
    while True:
        (kinds, uses, templates, doc, main, alone, buggy), (kind, part, phrase, expr) = rng.choice(_COMPOSITIONS)
        entry = rng.choice(templates).format(p=part)
        if entry not in names:
            break
    args, v, it, noun = KINDS[kind]
    arg = rng.choice(args)
    it, noun = it.format(a=arg), noun.format(a=arg)
    consts = dict(k=rng.randint(2, 9), c=rng.choice(LETTERS))
    it_list = it if kind != "range" else f"list({it})"
    one, _, many = phrase.format(**consts).partition("|")
    fill = dict(noun=noun, phrase=many or one, phrase1=one, v=v, it=it, it_list=it_list, a=arg, e=expr.format(**consts))
    body = lambda s: f"def {entry}({arg}):\n    " + s.format(**fill) + "\n"  # noqa: E731
    return dict(family=entry, entry_point=entry, prompt=f'def {entry}({arg}):\n    """{doc.format(**fill)}"""\n',
                args=arg, consts=consts, aux=f"def aux({v}):\n    return {fill['e']}\n",
                main_calls_aux=body(main), main_alone=body(alone), main_buggy=body(buggy),
                examples=[e.format(**consts) for e in _EXAMPLES[kind]], family_kind="composed")
