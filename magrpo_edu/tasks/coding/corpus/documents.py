"""The coding corpus of the embedded `tiny-code` model: helper/main programs in the two agents' prompt formats.

Why a second corpus. The shipped `tiny` model learned its coding from one-line mains
(`return sum(1 for c in s if aux(c))`), which the authors' thin-wrapper rule (docs/faithfulness.md) never
pays the +1.0 for, so on unseen problems the top of the coding reward was out of its reach and MAGRPO
had nothing to reinforce. This corpus teaches what the reward's upper levels ask for: a helper `aux`
that does real work (a test or a transform of one item, or a first step on the whole input) and a
multi-line main that USES aux's result in a further statement (a loop that counts, sums, filters,
collects or stops, or `words = aux(s)` then `return len(set(words))`), which that rule does not call
a wrapper.

What it writes (`code_documents`), each document one of:
  * agent 1's prompt (`tasks.prompts.coding_prompt(problem, 0)`) followed by a helper `aux`;
  * agent 2's prompt (`coding_prompt(problem, 1)`) followed by the entry point, copied from the
    prompt's signature, that may call aux;
  * plain code: aux, then the main that calls it (no prompt), so the pairing is seen whole.

Problems are COMPOSED from parts: an aggregation (count, sum, keep, drop, any, all, first, last,
position, map, sum / max / min of a map, join, conditional map), an item kind (numbers, characters,
words of a string, a list of words, 1..n) and an item test or transform, plus whole-input steps
(split into words, total, smallest/largest, sorted) and neighbour tests (`aux(a, b)`), each with
several docstring phrasings and several main shapes; about 2,000 compositions. Names are descriptive
(`count_odd`) or made of a broad vocabulary (`composed.random_entry_name`: world words, slices of
them, syllable strings), argument and loop-variable names vary, so copying the prompt's signature
is the only way to predict the entry point's name.

The answers are not all the reward's best ones, as code in the wild is not (the corpus is never
selected or filtered by a reward): helpers are item-level (the convention the docstrings' wording
points to) in 3 of 4 documents and do the whole job in the rest; mains cooperate in several lines
in about half, are one-line uses of aux (thin wrappers by the rule) or `return aux(...)` in some,
ignore aux in a fifth, and are wrong in a tenth. An untrained pair therefore sometimes earns each
level of the reward and a group of G pairs differs in reward, which is what MAGRPO learns from;
which combination to settle on (an item-level helper and a cooperating multi-line main: 4.0) is
what the agents must learn together.

Held out: the coding task's evaluation families (`tasks.coding.world.FAMILIES[PRETRAIN_FAMILIES:]`)
are never composed here (`HELD_OUT`: the aggregation + item test pairs they are made of, by
behaviour, not only by name); their names, docstrings and assert lines never appear, and no
corpus program solves one of them. `tests/test_coding_model.py` checks all of this by running
every corpus program on every held-out problem's asserts.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

from ..world import LETTERS, family_names
from ..prompts import coding_prompt
from .composed import random_entry_name

# ---- item kinds -------------------------------------------------------------------------------------
# kind: (argument names, loop-variable names, iterable, bare noun, where ("in {a}"), the string form
# of an iterable for len(): None when `it` already is a list or string)
KINDS = {
    "num": (("xs", "nums", "values", "numbers", "data", "items", "vals"), ("x", "v", "num", "n"), "{a}", "numbers", "in {a}"),
    "char": (("s", "text", "line", "word", "msg"), ("c", "ch"), "{a}", "characters", "in {a}"),
    "word": (("s", "text", "sentence", "line", "msg"), ("w", "word", "tok"), "{a}.split()", "words", "in {a}"),
    "wlist": (("words", "names", "tokens", "strings", "labels"), ("w", "word", "name", "t"), "{a}", "words", "in the list {a}"),
    "range": (("n", "m", "limit", "size"), ("i", "k", "j"), "range(1, {a} + 1)", "numbers", "from 1 to {a}"),
}
STRINGY = ("word", "wlist")

# item tests: (kinds, name part, noun phrase (plural, replaces the bare noun) or None,
#              "singular|plural" predicate phrase, expression in {v})
PREDICATES = [
    ("num range", "even", "even numbers", "even", "{v} % 2 == 0"),
    ("num range", "odd", "odd numbers", "odd", "{v} % 2 == 1"),
    ("num", "positive", "positive numbers", "positive", "{v} > 0"),
    ("num", "negative", "negative numbers", "negative", "{v} < 0"),
    ("num", "zeros", "zeros", "equal to zero", "{v} == 0"),
    ("num", "nonzero", None, "not zero", "{v} != 0"),
    ("num range", "above", "numbers greater than {k}", "greater than {k}", "{v} > {k}"),
    ("num range", "below", "numbers smaller than {k}", "smaller than {k}", "{v} < {k}"),
    ("num range", "multiples", "multiples of {k}", "divisible by {k}", "{v} % {k} == 0"),
    ("num", "small", None, "between 0 and {k}", "0 <= {v} <= {k}"),
    ("char", "vowels", "vowels", "a vowel|vowels", "{v}.lower() in 'aeiou'"),
    ("char", "upper", "upper-case letters", "an upper-case letter|upper-case letters", "{v}.isupper()"),
    ("char", "lower", "lower-case letters", "a lower-case letter|lower-case letters", "{v}.islower()"),
    ("char", "digits", "digits", "a digit|digits", "{v}.isdigit()"),
    ("char", "spaces", "spaces", "a space|spaces", "{v} == ' '"),
    ("char", "letters", "letters", "a letter|letters", "{v}.isalpha()"),
    ("char", "letter", "copies of the letter '{c}'", "the letter '{c}'", "{v} == '{c}'"),
    ("char", "marks", "punctuation marks", "a punctuation mark|punctuation marks", "{v} in '.,;:!?'"),
    ("word wlist", "long", "words longer than {k} letters", "longer than {k} letters", "len({v}) > {k}"),
    ("word wlist", "short", "words of at most {k} letters", "at most {k} letters long", "len({v}) <= {k}"),
    ("word wlist", "titled", "capitalised words", "capitalised", "{v}[:1].isupper()"),
    ("word wlist", "starting", "words starting with '{c}'", "starting with '{c}'", "{v}.startswith('{c}')"),
    ("word wlist", "ending", "words ending with '{c}'", "ending with '{c}'", "{v}.endswith('{c}')"),
    ("word wlist", "mirrored", "palindromes", "a palindrome|palindromes", "{v} == {v}[::-1]"),
    ("word wlist", "having", "words containing '{c}'", "containing '{c}'", "'{c}' in {v}"),
]

# item transforms: (kinds, name part, "each ..." phrase, noun of the results or None, expression, gives str)
TRANSFORMS = [
    ("num range", "doubled", "multiplied by 2", "doubles", "{v} * 2", False),
    ("num range", "tripled", "multiplied by 3", None, "{v} * 3", False),
    ("num range", "squared", "squared", "squares", "{v} * {v}", False),
    ("num range", "cubed", "cubed", "cubes", "{v} ** 3", False),
    ("num", "negated", "negated", None, "-{v}", False),
    ("num range", "shifted", "increased by {k}", None, "{v} + {k}", False),
    ("num", "lowered", "decreased by {k}", None, "{v} - {k}", False),
    ("num", "scaled", "multiplied by {k}", None, "{v} * {k}", False),
    ("num", "halved", "divided by 2 (rounded down)", None, "{v} // 2", False),
    ("num", "remainders", "replaced by its remainder after division by {k}", None, "{v} % {k}", False),
    ("range", "odds", "turned into the odd number 2 * i - 1", "first odd numbers", "2 * {v} - 1", False),
    ("range", "threes", "used as a power of 3", "powers of 3", "3 ** {v}", False),
    ("word wlist", "reversed", "reversed", None, "{v}[::-1]", True),
    ("word wlist", "shouted", "in upper case", None, "{v}.upper()", True),
    ("word wlist", "quiet", "in lower case", None, "{v}.lower()", True),
    ("word wlist", "twice", "written twice", None, "{v} + {v}", True),
    ("word wlist", "heads", "cut to its first {k} letters", None, "{v}[:{k}]", True),
    ("word wlist", "tails", "replaced by its last letter", "last letters", "{v}[-1:]", True),
    ("word wlist", "sizes", "replaced by its number of letters", "sizes", "len({v})", False),
]

# Multi-line mains that cooperate. Placeholders: {v} item variable, {it} iterable, {a} argument,
# {acc} a result variable, {e} the item expression (for mains that ignore aux), {k}, {c}.
L = "\n    "  # one level of indentation inside the main


def _lines(*rows: str) -> str:
    return L + L.join(rows)


# aggregation: (uses, kinds, name templates, docstrings, cooperating mains, one-line use of aux (a thin
# wrapper by the rule), main that ignores aux, wrong main, the whole job as one expression (for a helper
# that does everything))
AGGREGATIONS = {
    "count": ("pred", "num char word wlist range", ("count_{p}", "how_many_{p}", "num_{p}", "tally_{p}"),
              ("Return how many {noun} are {plural}.", "Return how many {pnoun} are {where}.",
               "Count the {noun} that are {plural} and return that number."),
              (_lines("{acc} = 0", "for {v} in {it}:", "    if aux({v}):", "        {acc} += 1", "return {acc}"),
               _lines("{acc} = [{v} for {v} in {it} if aux({v})]", "return len({acc})")),
              "return len([{v} for {v} in {it} if aux({v})])",
              _lines("{acc} = 0", "for {v} in {it}:", "    if {e}:", "        {acc} += 1", "return {acc}"),
              "return len({itl})",
              "len([{v} for {v} in {it} if {e}])"),
    "sum": ("pred", "num range", ("sum_{p}", "total_{p}", "add_{p}"),
            ("Return the sum of the {noun} that are {plural}.", "Return the sum of the {pnoun} {where}.",
             "Add up the {noun} that are {plural} and return the total."),
            (_lines("{acc} = 0", "for {v} in {it}:", "    if aux({v}):", "        {acc} += {v}", "return {acc}"),
             _lines("{acc} = [{v} for {v} in {it} if aux({v})]", "return sum({acc})")),
            "return sum([{v} for {v} in {it} if aux({v})])",
            _lines("{acc} = 0", "for {v} in {it}:", "    if {e}:", "        {acc} += {v}", "return {acc}"),
            "return sum({it})",
            "sum([{v} for {v} in {it} if {e}])"),
    "keep": ("pred", "num word wlist", ("keep_{p}", "only_{p}", "select_{p}", "{p}_ones"),
             ("Return the list of the {noun} that are {plural}, in order.", "Return the {pnoun} {where}, in order.",
              "Return a new list with the {noun} that are {plural}, keeping their order."),
             (_lines("{acc} = []", "for {v} in {it}:", "    if aux({v}):", "        {acc}.append({v})", "return {acc}"),),
             "return list(filter(aux, {it}))",
             _lines("{acc} = []", "for {v} in {it}:", "    if {e}:", "        {acc}.append({v})", "return {acc}"),
             "return list({it})",
             "list(filter(lambda {v}: {e}, {it}))"),
    "drop": ("pred", "num word wlist", ("drop_{p}", "without_{p}", "remove_{p}"),
             ("Return the list of the {noun} that are not {plural}, in order.",
              "Return a new list without the {pnoun} {where}, keeping the order of the rest."),
             (_lines("{acc} = []", "for {v} in {it}:", "    if not aux({v}):", "        {acc}.append({v})", "return {acc}"),),
             "return list(filter(lambda {v}: not aux({v}), {it}))",
             _lines("{acc} = []", "for {v} in {it}:", "    if not ({e}):", "        {acc}.append({v})", "return {acc}"),
             "return list(filter(aux, {it}))",
             "list(filter(lambda {v}: not ({e}), {it}))"),
    "keepchars": ("pred", "char", ("keep_{p}", "only_{p}", "extract_{p}"),
                  ("Return the string of the {noun} that are {plural}, in order.", "Return only the {pnoun} of {a}, as one string."),
                  (_lines("{acc} = ''", "for {v} in {it}:", "    if aux({v}):", "        {acc} += {v}", "return {acc}"),
                   _lines("{acc} = [{v} for {v} in {it} if aux({v})]", "return ''.join({acc})")),
                  "return ''.join(filter(aux, {it}))",
                  _lines("{acc} = ''", "for {v} in {it}:", "    if {e}:", "        {acc} += {v}", "return {acc}"),
                  "return {it}.strip()",
                  "''.join(filter(lambda {v}: {e}, {it}))"),
    "dropchars": ("pred", "char", ("drop_{p}", "strip_{p}", "without_{p}"),
                  ("Return {a} without the characters that are {plural}.", "Return {a} with all its {pnoun} taken out."),
                  (_lines("{acc} = ''", "for {v} in {it}:", "    if not aux({v}):", "        {acc} += {v}", "return {acc}"),
                   _lines("{acc} = [{v} for {v} in {it} if not aux({v})]", "return ''.join({acc})")),
                  "return ''.join(filter(lambda {v}: not aux({v}), {it}))",
                  _lines("{acc} = ''", "for {v} in {it}:", "    if not ({e}):", "        {acc} += {v}", "return {acc}"),
                  "return {it}.replace(' ', '')",
                  "''.join(filter(lambda {v}: not ({e}), {it}))"),
    "any": ("pred", "num char word wlist", ("any_{p}", "has_{p}", "contains_{p}"),
            ("Return True if at least one of the {noun} is {single}.", "Return True if there are {pnoun} {where}, else False."),
            (_lines("for {v} in {it}:", "    if aux({v}):", "        return True", "return False"),),
            "return True in map(aux, {it})",
            _lines("for {v} in {it}:", "    if {e}:", "        return True", "return False"),
            "return len({itl}) > 0",
            "True in [{e} for {v} in {it}]"),
    "all": ("pred", "num char word wlist", ("all_{p}", "only_has_{p}", "every_{p}"),
            ("Return True if every one of the {noun} is {single}.", "Return True when all the {noun} are {plural}, else False."),
            (_lines("for {v} in {it}:", "    if not aux({v}):", "        return False", "return True"),),
            "return False not in map(aux, {it})",
            _lines("for {v} in {it}:", "    if not ({e}):", "        return False", "return True"),
            "return True",
            "False not in [{e} for {v} in {it}]"),
    "first": ("pred", "num word wlist", ("first_{p}", "find_{p}"),
              ("Return the first of the {noun} that is {single}, or None if there is none.",),
              (_lines("for {v} in {it}:", "    if aux({v}):", "        return {v}", "return None"),),
              "return next(filter(aux, {it}), None)",
              _lines("for {v} in {it}:", "    if {e}:", "        return {v}", "return None"),
              "return None",
              "next(filter(lambda {v}: {e}, {it}), None)"),
    "lastone": ("pred", "num word wlist", ("final_{p}", "latest_{p}"),
                ("Return the last of the {noun} that is {single}, or None if there is none.",),
                (_lines("{acc} = None", "for {v} in {it}:", "    if aux({v}):", "        {acc} = {v}", "return {acc}"),),
                "return next(filter(aux, reversed(list({it}))), None)",
                _lines("{acc} = None", "for {v} in {it}:", "    if {e}:", "        {acc} = {v}", "return {acc}"),
                "return None",
                "next(filter(lambda {v}: {e}, reversed(list({it}))), None)"),
    "position": ("pred", "num wlist", ("where_{p}", "index_{p}", "position_{p}"),
                 ("Return the position (from 0) of the first of the {noun} that is {single}, or -1 if there is none.",),
                 (_lines("for {acc}, {v} in enumerate({it}):", "    if aux({v}):", "        return {acc}", "return -1"),),
                 "return next((p for p, q in enumerate({it}) if aux(q)), -1)",
                 _lines("for {acc}, {v} in enumerate({it}):", "    if {e}:", "        return {acc}", "return -1"),
                 "return 0",
                 "next((p for p, {v} in enumerate({it}) if {e}), -1)"),
    "map": ("map", "num range word wlist", ("{p}_all", "{p}_each", "list_{p}", "{p}_list"),
            ("Return the list of the {noun}, each {tphrase}.", "Return the list of the {tnoun} of the {noun}."),
            (_lines("{acc} = []", "for {v} in {it}:", "    {acc}.append(aux({v}))", "return {acc}"),),
            "return list(map(aux, {it}))",
            _lines("{acc} = []", "for {v} in {it}:", "    {acc}.append({e})", "return {acc}"),
            "return list({it})",
            "list(map(lambda {v}: {e}, {it}))"),
    "summap": ("map", "num range", ("sum_{p}", "total_{p}"),
               ("Return the sum of the {noun}, each {tphrase}.", "Return the sum of the {tnoun} of the {noun}."),
               (_lines("{acc} = 0", "for {v} in {it}:", "    {acc} += aux({v})", "return {acc}"),
                _lines("{acc} = [aux({v}) for {v} in {it}]", "return sum({acc})")),
               "return sum(map(aux, {it}))",
               _lines("{acc} = 0", "for {v} in {it}:", "    {acc} += {e}", "return {acc}"),
               "return sum({it})",
               "sum(map(lambda {v}: {e}, {it}))"),
    "maxmap": ("map", "num range", ("max_{p}", "largest_{p}", "top_{p}"),
               ("Return the largest of the {noun}, each {tphrase} (0 if there are none).",),
               (_lines("{acc} = [aux({v}) for {v} in {it}]", "if not {acc}:", "    return 0", "return max({acc})"),
                _lines("{acc} = [aux({v}) for {v} in {it}]", "return max({acc}) if {acc} else 0")),
               "return max(map(aux, {it}), default=0)",
               _lines("{acc} = [{e} for {v} in {it}]", "return max({acc}) if {acc} else 0"),
               "return len({itl})",
               "max(map(lambda {v}: {e}, {it}), default=0)"),
    "minmap": ("map", "num range", ("min_{p}", "smallest_{p}", "lowest_{p}"),
               ("Return the smallest of the {noun}, each {tphrase} (0 if there are none).",),
               (_lines("{acc} = [aux({v}) for {v} in {it}]", "if not {acc}:", "    return 0", "return min({acc})"),
                _lines("{acc} = [aux({v}) for {v} in {it}]", "return min({acc}) if {acc} else 0")),
               "return min(map(aux, {it}), default=0)",
               _lines("{acc} = [{e} for {v} in {it}]", "return min({acc}) if {acc} else 0"),
               "return 0",
               "min(map(lambda {v}: {e}, {it}), default=0)"),
    "joinwords": ("mapstr", "word", ("{p}_words", "words_{p}"),
                  ("Return {a} with each of its words {tphrase}, the words joined by single spaces.",),
                  (_lines("{acc} = []", "for {v} in {it}:", "    {acc}.append(aux({v}))", "return ' '.join({acc})"),),
                  "return ' '.join(map(aux, {it}))",
                  _lines("{acc} = []", "for {v} in {it}:", "    {acc}.append({e})", "return ' '.join({acc})"),
                  "return {a}",
                  "' '.join(map(lambda {v}: {e}, {it}))"),
    "joinlist": ("mapstr", "wlist", ("join_{p}", "glue_{p}"),
                 ("Return the {noun}, each {tphrase}, joined into one string.",),
                 (_lines("{acc} = ''", "for {v} in {it}:", "    {acc} += aux({v})", "return {acc}"),
                  _lines("{acc} = [aux({v}) for {v} in {it}]", "return ''.join({acc})")),
                 "return ''.join(map(aux, {it}))",
                 _lines("{acc} = ''", "for {v} in {it}:", "    {acc} += {e}", "return {acc}"),
                 "return ''.join({it})",
                 "''.join(map(lambda {v}: {e}, {it}))"),
}

# (aggregation, kind, name part) pairs that ARE held-out families, by behaviour: count_even, count_positive,
# count_uppercase, count_char, remove_vowels, filter_short, squares, word_lengths, max_abs, initials,
# (powers_of_two_sum, triangle_numbers and double_evens have no composition here). Never composed.
HELD_OUT = {
    ("count", "num", "even"), ("count", "num", "positive"), ("count", "char", "upper"), ("count", "char", "letter"),
    ("dropchars", "char", "vowels"), ("keep", "wlist", "short"), ("map", "num", "squared"), ("map", "word", "sizes"),
    ("maxmap", "num", "absolute"),
    ("drop", "wlist", "long"),  # dropping the words longer than k keeps those of at most k letters: filter_short
}
"""Compositions never drawn (`tests/test_coding_model.py` also checks by running every program that
none of the drawn ones solves a held-out problem)."""

# Conditional maps (double_evens is held out): a transform of the items that pass a test, the others stay.
COND_PREDS = ("even", "odd", "positive", "negative")
COND_TRANSFORMS = ("doubled", "tripled", "squared", "negated", "shifted")
COND_HELD_OUT = {("even", "doubled")}


def _pick(rng: random.Random, options, avoid=()):
    return rng.choice([o for o in options if o not in avoid])


def _item_compositions() -> list[tuple[str, str, tuple]]:
    out = []
    for agg, spec in AGGREGATIONS.items():
        uses, kinds = spec[0], spec[1].split()
        table = PREDICATES if uses == "pred" else TRANSFORMS
        for item in table:
            if uses == "mapstr" and not item[5]:
                continue
            for kind in item[0].split():
                if kind in kinds and (agg, kind, item[1]) not in HELD_OUT:
                    out.append((agg, kind, item))
    return out


ITEM_COMPOSITIONS = _item_compositions()


def _fill(rng: random.Random, kind: str) -> dict:
    """Argument, loop variable, result variable, iterable and nouns for one problem of `kind`."""
    args, vars_, it, bare, where = KINDS[kind]
    a = rng.choice(args)
    v = _pick(rng, vars_, avoid=(a,))
    acc = _pick(rng, ("out", "res", "acc", "answer", "got", "ans"), avoid=(a, v))
    it = it.format(a=a)
    return dict(a=a, v=v, acc=acc, it=it, itl=it if kind in ("num", "char", "wlist") else f"list({it})",
                bare=bare, where=where.format(a=a), noun=f"{bare} {where.format(a=a)}")


def _consts(rng: random.Random) -> dict:
    return dict(k=rng.randint(2, 7), c=rng.choice(LETTERS))


def _name(rng: random.Random, templates, part: str) -> str:
    """A descriptive name from the aggregation's templates (2 in 5), else one of the broad vocabulary;
    never a held-out or hand-written family's name."""
    taken = set(family_names())
    if rng.random() < 0.4:
        name = rng.choice(templates).format(p=part)
        if name not in taken and name.isidentifier():
            return name
    return random_entry_name(rng)


INPUT_TYPES = {"num": "list_int", "char": "str", "word": "str", "wlist": "list_str", "range": "int", "split": "str"}
"""The type of a problem's argument, by its item kind or whole-input step (every other takes a list of numbers)."""


def _problem(name: str, a: str, doc: str, aux: str, mains: list[str], one_line: str, alone: str, buggy: str,
             whole: str | None, family: str) -> dict:
    head = f"def {name}({a}):"
    body = lambda s: f"{head}{s if s.startswith(chr(10)) else L + s}\n"  # noqa: E731
    kind = family.split("/")[1]  # item kind, or whole-input step; conditional maps and neighbour tests take numbers
    return dict(family=family, entry_point=name, args=a, input_type=INPUT_TYPES.get(kind, "list_int"), prompt=f'{head}\n    """{doc}"""\n', aux=aux,
                mains=[body(m) for m in mains], main_one_line=body(one_line), main_thin=body(f"return aux({a})"),
                main_alone=body(alone), main_buggy=body(buggy),
                aux_whole=None if whole is None else f"def aux({a}):\n    return {whole}\n")


def item_problem(rng: random.Random) -> dict:
    """A problem composed of an aggregation and an item test or transform (`ITEM_COMPOSITIONS`)."""
    agg, kind, item = rng.choice(ITEM_COMPOSITIONS)
    uses, _, templates, docs, mains, one_line, alone, buggy, whole = AGGREGATIONS[agg]
    f, consts = _fill(rng, kind), _consts(rng)
    if item[1] == "multiples":
        consts["k"] = max(3, consts["k"])  # multiples of 2 are the even numbers (count_even is held out)
    v = f["v"]
    if uses == "pred":
        _, part, pnoun, phrase, expr = item
        single, _, plural = phrase.format(**consts).partition("|")
        f.update(single=single, plural=plural or single, pnoun=(pnoun or "").format(**consts))
        docs = [d for d in docs if "{pnoun}" not in d or pnoun]
    else:
        _, part, tphrase, tnoun, expr, _ = item
        f.update(tphrase=tphrase.format(**consts), tnoun=tnoun or "")
        docs = [d for d in docs if "{tnoun}" not in d or tnoun]
    aux_v = v if rng.random() < 0.7 else _pick(rng, KINDS[kind][1], avoid=(f["a"],))
    f["e"] = expr.format(v=v, **consts)
    doc = rng.choice(docs).format(**f)
    fmt = lambda s: s.format(**f, **consts)  # noqa: E731
    name = _name(rng, templates, part)
    aux = f"def aux({aux_v}):\n    return {expr.format(v=aux_v, **consts)}\n"
    return _problem(name, f["a"], doc, aux, [fmt(m) for m in mains], fmt(one_line), fmt(alone), fmt(buggy),
                    fmt(whole), f"{agg}/{kind}/{part}")


def cond_problem(rng: random.Random) -> dict:
    """A conditional map: the numbers that pass a test are transformed, the others stay."""
    while True:
        p, t = rng.choice(COND_PREDS), rng.choice(COND_TRANSFORMS)
        if (p, t) not in COND_HELD_OUT:
            break
    pred = next(x for x in PREDICATES if x[1] == p)
    tr = next(x for x in TRANSFORMS if x[1] == t)
    f, consts = _fill(rng, "num"), _consts(rng)
    v = f["v"]
    e = f"{tr[4]} if {pred[4]} else {{v}}".format(v=v, **consts)
    doc = rng.choice(("Return a list where every {adj} number of {a} is {t} and the other numbers stay.",
                      "Return the numbers of {a} in order, the {adj} ones {t}, the others unchanged.")).format(
        adj=pred[3], a=f["a"], t=tr[2].format(**consts))
    f["e"] = e
    fmt = lambda s: s.format(**f, **consts)  # noqa: E731
    spec = AGGREGATIONS["map"]
    name = _name(rng, ("{p}_where_" + p, "change_{p}"), t)
    aux = f"def aux({v}):\n    if {pred[4].format(v=v, **consts)}:\n        return {tr[4].format(v=v, **consts)}\n    return {v}\n"
    return _problem(name, f["a"], doc, aux, [fmt(m) for m in spec[4]], fmt(spec[5]), fmt(spec[6]), fmt(spec[7]),
                    fmt(spec[8]), f"cond/{p}/{t}")


# ---- whole-input helpers: aux does a first step on the whole input, main finishes the job ----------
# (aux body (in {a}), [(name part, docstring, main body lines using {r} = aux's result, wrong main)])
# Held out: the word count (count_words), the last word (last_word), the mean (mean), largest minus
# smallest (spread), all neighbours a <= b (is_sorted).
WHOLE = {
    "split": ("s text sentence line msg", "{a}.split()", [
        ("first_word", "Return the first word of {a}, or '' if {a} has no words.",
         ("{r} = aux({a})", "if not {r}:", "    return ''", "return {r}[0]"), "return {a}[:1]"),
        ("distinct", "Return how many different words {a} has.",
         ("{r} = aux({a})", "return len(set({r}))"), "return len({a})"),
        ("longest", "Return the longest word of {a} (the first one if several are as long), or '' if there is none.",
         ("{r} = aux({a})", "if not {r}:", "    return ''", "return max({r}, key=len)"), "return {a}"),
        ("shortest", "Return the shortest word of {a} (the first one if several are as short), or '' if there is none.",
         ("{r} = aux({a})", "if not {r}:", "    return ''", "return min({r}, key=len)"), "return ''"),
        ("backwards", "Return the words of {a} in reverse order, joined by single spaces.",
         ("{r} = aux({a})", "{r}.reverse()", "return ' '.join({r})"), "return {a}[::-1]"),
        ("sorted_words", "Return the words of {a} sorted alphabetically, as a list.",
         ("{r} = aux({a})", "{r}.sort()", "return {r}"), "return {a}.split()"),
        ("dashed", "Return the words of {a} joined by '-'.",
         ("{r} = aux({a})", "return '-'.join({r})"), "return {a}.replace(' ', '-')"),
        ("longer", "Return how many words of {a} are longer than {k} letters.",
         ("{r} = aux({a})", "return len([q for q in {r} if len(q) > {k}])"), "return len({a}) // {k}"),
        ("middle", "Return the middle word of {a} (the later one of two), or '' if there is none.",
         ("{r} = aux({a})", "if not {r}:", "    return ''", "return {r}[len({r}) // 2]"), "return ''"),
    ]),
    "total": ("xs nums values numbers data", "sum({a})", [
        ("big_total", "Return True if the numbers in {a} add up to more than {k}.",
         ("{r} = aux({a})", "return {r} > {k}"), "return len({a}) > {k}"),
        ("even_total", "Return True if the sum of the numbers in {a} is even.",
         ("{r} = aux({a})", "return {r} % 2 == 0"), "return True"),
        ("total_times", "Return the sum of the numbers in {a}, multiplied by {k}.",
         ("{r} = aux({a})", "return {r} * {k}"), "return sum({a}) + {k}"),
        ("rest_total", "Return the sum of the numbers in {a} without the largest one (0 for an empty list).",
         ("if not {a}:", "    return 0", "{r} = aux({a})", "return {r} - max({a})"), "return sum({a})"),
        ("share", "Return the share of the first number in the total of {a}, as a float (0.0 if the total is 0 or there are none).",
         ("{r} = aux({a})", "if not {a} or {r} == 0:", "    return 0.0", "return {a}[0] / {r}"), "return 0.0"),
    ]),
    "ends": ("xs nums values numbers data", "min({a}), max({a})", [
        ("ends_sum", "Return the smallest plus the largest number of {a} (0 for an empty list).",
         ("if not {a}:", "    return 0", "lo, hi = aux({a})", "return lo + hi"), "return max({a}) if {a} else 0"),
        ("ends_product", "Return the smallest times the largest number of {a} (0 for an empty list).",
         ("if not {a}:", "    return 0", "lo, hi = aux({a})", "return lo * hi"), "return 0"),
        ("ends_pair", "Return the largest and the smallest number of {a} as a list [largest, smallest] ([] for an empty list).",
         ("if not {a}:", "    return []", "lo, hi = aux({a})", "return [hi, lo]"), "return sorted({a})"),
        ("in_range", "Return True if every number of {a} is between 0 and {k} (True for an empty list).",
         ("if not {a}:", "    return True", "lo, hi = aux({a})", "return lo >= 0 and hi <= {k}"), "return True"),
    ]),
    "sorted": ("xs nums values numbers data", "sorted({a})", [
        ("second_smallest", "Return the second smallest number of {a} (it may equal the smallest), or None if {a} has fewer than two.",
         ("{r} = aux({a})", "if len({r}) < 2:", "    return None", "return {r}[1]"), "return min({a})"),
        ("median_low", "Return the lower median of {a}: the middle number after sorting, the lower of the two middle ones for an even count (None for an empty list).",
         ("{r} = aux({a})", "if not {r}:", "    return None", "return {r}[(len({r}) - 1) // 2]"), "return {a}[len({a}) // 2]"),
        ("smallest_few", "Return the {k} smallest numbers of {a}, from small to large.",
         ("{r} = aux({a})", "return {r}[:{k}]"), "return {a}[:{k}]"),
        ("largest_few", "Return the {k} largest numbers of {a}, from large to small.",
         ("{r} = aux({a})", "{r}.reverse()", "return {r}[:{k}]"), "return {a}[-{k}:]"),
    ]),
}

# neighbour tests aux(a, b): (name part, test phrase, expression); non-decreasing (is_sorted) is held out.
PAIRS = [
    ("increasing", "strictly increasing", "a < b"),
    ("decreasing", "strictly decreasing", "a > b"),
    ("nonincreasing", "in non-increasing order", "a >= b"),
    ("flat", "all equal", "a == b"),
    ("alternating", "such that no two neighbours are equal", "a != b"),
    ("close", "such that neighbours differ by at most {k}", "abs(a - b) <= {k}"),
]


def whole_problem(rng: random.Random) -> dict:
    """aux does a first step on the whole input (split, total, smallest and largest, sort); main uses its result."""
    key = rng.choice(list(WHOLE))
    args, aux_body, uses = WHOLE[key]
    part, doc, lines, buggy = rng.choice(uses)
    a, consts = rng.choice(args.split()), _consts(rng)
    r = _pick(rng, ("words", "parts", "total", "vals", "res", "items", "got", "pieces"), avoid=(a,))
    fmt = lambda s: s.format(a=a, r=r, **consts)  # noqa: E731
    main = _lines(*lines)
    alone = main.replace("aux({a})", aux_body)  # the same steps with aux's expression written in
    name = _name(rng, (part, part + "_of", "get_" + part), part)
    aux_param = a if rng.random() < 0.7 else _pick(rng, args.split(), avoid=(a,))
    return _problem(name, a, fmt(doc), f"def aux({aux_param}):\n    return {aux_body.format(a=aux_param)}\n",
                    [fmt(main)], "return aux({a})".format(a=a), fmt(alone), fmt(buggy), None, f"whole/{key}/{part}")


def _neighbours(expr: str, a: str, i: str) -> str:
    """A neighbour test `expr` in a and b written out on {a}[{i}] and {a}[{i} + 1]."""
    return re.sub(r"\bb\b", f"{a}[{i} + 1]", re.sub(r"\ba\b", f"{a}[{i}]", expr))


def pair_problem(rng: random.Random) -> dict:
    """aux(a, b) tests two neighbouring numbers; main walks the neighbours: all must pass, or count those that do."""
    part, phrase, expr = rng.choice(PAIRS)
    consts = _consts(rng)
    phrase, expr = phrase.format(**consts), expr.format(**consts)
    a = rng.choice(("xs", "nums", "values", "numbers", "data"))
    i = _pick(rng, ("i", "j", "k", "p"), avoid=(a,))
    cond = _neighbours(expr, a, i)
    loop = f"for {i} in range(len({a}) - 1):"
    if rng.random() < 0.35:
        test = re.sub(r"\bb\b", "right", re.sub(r"\ba\b", "left", expr))
        doc = f"Return how many pairs of neighbours (left, right) in {a} have {test}."
        main = _lines("n = 0", loop, f"    if aux({a}[{i}], {a}[{i} + 1]):", "        n += 1", "return n")
        alone = _lines("n = 0", loop, f"    if {cond}:", "        n += 1", "return n")
        whole = f"sum(1 for {i} in range(len({a}) - 1) if {cond})"
        one_line = f"return sum(1 for {i} in range(len({a}) - 1) if aux({a}[{i}], {a}[{i} + 1]))"
        buggy, part = f"return len({a}) - 1", "pairs_" + part
    else:
        doc = f"Return True if the numbers in {a} are {phrase} (True when there are fewer than two)."
        main = _lines(loop, f"    if not aux({a}[{i}], {a}[{i} + 1]):", "        return False", "return True")
        alone = _lines(loop, f"    if not ({cond}):", "        return False", "return True")
        whole = f"all({cond} for {i} in range(len({a}) - 1))"
        one_line = f"return all(map(aux, {a}, {a}[1:]))"
        buggy = f"return len({a}) < 2"
    name = _name(rng, (part, "check_" + part), part)
    return _problem(name, a, doc, f"def aux(a, b):\n    return {expr}\n", [main], one_line, alone, buggy, whole,
                    f"pair/{part}")


def code_problem(rng: random.Random) -> dict:
    """One problem: item compositions (7 in 10), conditional maps, whole-input steps, neighbour tests."""
    u = rng.random()
    if u < 0.7:
        return item_problem(rng)
    if u < 0.78:
        return cond_problem(rng)
    if u < 0.92:
        return whole_problem(rng)
    return pair_problem(rng)


# ---- documents ------------------------------------------------------------------------------------------
AUX_ITEM_SHARE = 0.75
"""Share of helper documents whose aux is the item-level (or first-step) helper; the rest do the whole job."""
MAIN_STYLES = (("multi", 0.50), ("one_line", 0.15), ("thin", 0.08), ("alone", 0.17), ("buggy", 0.10))
"""Main-function documents: cooperating multi-line mains, one-line uses of aux (wrappers by the
rule), `return aux(...)`, mains that ignore aux, wrong mains."""


def helper_answer(p: dict, rng: random.Random) -> str:
    """Agent 1's answer: the item-level helper, or (1 in 4, where there is one) the helper that does the whole job."""
    if rng.random() < AUX_ITEM_SHARE or p["aux_whole"] is None:
        return p["aux"]
    return p["aux_whole"]


def main_answer(p: dict, rng: random.Random) -> str:
    """Agent 2's answer, in one of `MAIN_STYLES`."""
    u, acc = rng.random(), 0.0
    for style, share in MAIN_STYLES:
        acc += share
        if u < acc:
            break
    if style == "multi":
        return rng.choice(p["mains"])
    return p[f"main_{style}"]


def code_documents(seed: int = 0, n: int = 20000) -> Iterator[str]:
    """Yield `n` documents (plain strings; the tokenizer adds BOS/EOS): 35% helper answers, 55% main
    answers, each after its agent's prompt, and 10% plain programs (aux, then a cooperating main)."""
    rng = random.Random(seed)
    for _ in range(n):
        p, u = code_problem(rng), rng.random()
        if u < 0.35:
            yield coding_prompt(p["prompt"], 0) + helper_answer(p, rng)
        elif u < 0.9:
            yield coding_prompt(p["prompt"], 1) + main_answer(p, rng)
        else:
            yield p["aux"] + "\n" + rng.choice(p["mains"])
