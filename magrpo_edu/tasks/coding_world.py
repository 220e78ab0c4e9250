"""Small cooperative coding problems that split naturally into a helper `aux` and a main function.

Each family below is a (helper, main) pair in the spirit of CoopHumanEval: the main function is
easy once the helper exists. `make_code_problem(rng)` draws a family and its constants and returns
a HumanEval-style row (prompt = signature + docstring, entry_point) plus reference sources:
`aux`, `main_calls_aux` (cooperates), `main_alone` (correct but ignores aux) and `main_buggy`.
Used by the pretraining corpus, and by the coding task's dataset (expected values for the asserts
are computed by running the trusted reference solution).
"""
from __future__ import annotations

import builtins
import functools
import keyword
import random
import re

# family: (entry, args, doc, aux_src, main_src, alone_src, buggy_src, example inputs)
# `{k}` is a per-problem constant; sources are formatted with it.
FAMILIES = [
    ("count_vowels", "s", "Return how many vowels (a, e, i, o, u) the string s has.",
     "def aux(c):\n    return c.lower() in 'aeiou'\n",
     "def count_vowels(s):\n    return sum(1 for c in s if aux(c))\n",
     "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n",
     "def count_vowels(s):\n    return len(s)\n",
     ["'hello'", "'AEIOU xyz'", "''", "'banana'"]),
    ("sum_of_squares", "xs", "Return the sum of the squares of the numbers in xs.",
     "def aux(x):\n    return x * x\n",
     "def sum_of_squares(xs):\n    return sum(aux(x) for x in xs)\n",
     "def sum_of_squares(xs):\n    return sum(x ** 2 for x in xs)\n",
     "def sum_of_squares(xs):\n    return sum(xs) ** 2\n",
     ["[1, 2, 3]", "[]", "[-4, 5]", "[10]"]),
    ("sum_multiples", "xs", "Return the sum of the numbers in xs that are multiples of {k}.",
     "def aux(x):\n    return x % {k} == 0\n",
     "def sum_multiples(xs):\n    return sum(x for x in xs if aux(x))\n",
     "def sum_multiples(xs):\n    total = 0\n    for x in xs:\n        if x % {k} == 0:\n            total += x\n    return total\n",
     "def sum_multiples(xs):\n    return sum(xs)\n",
     ["[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "[]", "[{k}, {k}1, 0]", "[11, 13, 35, 42]"]),
    ("count_above", "xs", "Return how many numbers in xs are greater than {k}.",
     "def aux(x):\n    return x > {k}\n",
     "def count_above(xs):\n    return sum(1 for x in xs if aux(x))\n",
     "def count_above(xs):\n    return len([x for x in xs if x > {k}])\n",
     "def count_above(xs):\n    return len([x for x in xs if x >= {k}])\n",
     ["[{k}, 1, 100]", "[]", "[-1, 0, 5, 9, 20]", "[{k}, {k}, {k}]"]),
    ("max_word_length", "s", "Return the length of the longest word in s (0 for an empty string).",
     "def aux(s):\n    return s.split()\n",
     "def max_word_length(s):\n    words = aux(s)\n    return max((len(w) for w in words), default=0)\n",
     "def max_word_length(s):\n    return max([len(w) for w in s.split()] or [0])\n",
     "def max_word_length(s):\n    return len(s)\n",
     ["'a bb ccc'", "''", "'hello world'", "'one three'"]),
    ("reverse_words", "s", "Return s with every word reversed, words kept in order and joined by single spaces.",
     "def aux(w):\n    return w[::-1]\n",
     "def reverse_words(s):\n    return ' '.join(aux(w) for w in s.split())\n",
     "def reverse_words(s):\n    return ' '.join(w[::-1] for w in s.split())\n",
     "def reverse_words(s):\n    return s[::-1]\n",
     ["'abc def'", "''", "'hello'", "'ab cd ef'"]),
    ("count_primes", "n", "Return how many prime numbers are smaller than n.",
     "def aux(x):\n    if x < 2:\n        return False\n    for d in range(2, int(x ** 0.5) + 1):\n        if x % d == 0:\n            return False\n    return True\n",
     "def count_primes(n):\n    return sum(1 for x in range(n) if aux(x))\n",
     "def count_primes(n):\n    count = 0\n    for x in range(2, n):\n        if all(x % d for d in range(2, x)):\n            count += 1\n    return count\n",
     "def count_primes(n):\n    return n // 2\n",
     ["10", "2", "20", "30"]),
    ("average_positive", "xs", "Return the average of the positive numbers in xs, or 0.0 if there are none.",
     "def aux(xs):\n    return [x for x in xs if x > 0]\n",
     "def average_positive(xs):\n    pos = aux(xs)\n    return sum(pos) / len(pos) if pos else 0.0\n",
     "def average_positive(xs):\n    pos = [x for x in xs if x > 0]\n    if not pos:\n        return 0.0\n    return sum(pos) / len(pos)\n",
     "def average_positive(xs):\n    return sum(xs) / len(xs)\n",
     ["[1, -2, 3]", "[]", "[-1, -5]", "[4, 4, 4]"]),
    ("capitalize_words", "s", "Return s with the first letter of every word in upper case, words joined by single spaces.",
     "def aux(w):\n    return w[:1].upper() + w[1:]\n",
     "def capitalize_words(s):\n    return ' '.join(aux(w) for w in s.split())\n",
     "def capitalize_words(s):\n    return ' '.join(w[:1].upper() + w[1:] for w in s.split())\n",
     "def capitalize_words(s):\n    return s.upper()\n",
     ["'hello world'", "''", "'a b c'", "'python is fun'"]),
    ("digit_sums", "xs", "Return a list with the sum of the decimal digits of each non-negative integer in xs.",
     "def aux(n):\n    return sum(int(d) for d in str(n))\n",
     "def digit_sums(xs):\n    return [aux(x) for x in xs]\n",
     "def digit_sums(xs):\n    out = []\n    for x in xs:\n        out.append(sum(int(d) for d in str(x)))\n    return out\n",
     "def digit_sums(xs):\n    return xs\n",
     ["[12, 305, 9]", "[]", "[0]", "[999, 1000]"]),
    ("palindromes", "words", "Return the words of the list that read the same backwards, in order.",
     "def aux(w):\n    return w == w[::-1]\n",
     "def palindromes(words):\n    return [w for w in words if aux(w)]\n",
     "def palindromes(words):\n    return [w for w in words if w == w[::-1]]\n",
     "def palindromes(words):\n    return words[::-1]\n",
     ["['level', 'abc', 'noon']", "[]", "['a', 'ab']", "['racecar', 'car']"]),
    ("scale_all", "xs", "Return a new list with every number in xs multiplied by {k}.",
     "def aux(x):\n    return x * {k}\n",
     "def scale_all(xs):\n    return [aux(x) for x in xs]\n",
     "def scale_all(xs):\n    return [x * {k} for x in xs]\n",
     "def scale_all(xs):\n    return [x + {k} for x in xs]\n",
     ["[1, 2, 3]", "[]", "[-1, 0]", "[10]"]),
    ("factorial_sum", "n", "Return 1! + 2! + ... + n! (0 when n is 0).",
     "def aux(k):\n    result = 1\n    for i in range(2, k + 1):\n        result *= i\n    return result\n",
     "def factorial_sum(n):\n    return sum(aux(k) for k in range(1, n + 1))\n",
     "def factorial_sum(n):\n    total, f = 0, 1\n    for k in range(1, n + 1):\n        f *= k\n        total += f\n    return total\n",
     "def factorial_sum(n):\n    return n * n\n",
     ["0", "1", "3", "5"]),
    ("gcd_of_list", "xs", "Return the greatest common divisor of the positive integers in the non-empty list xs.",
     "def aux(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
     "def gcd_of_list(xs):\n    g = xs[0]\n    for x in xs[1:]:\n        g = aux(g, x)\n    return g\n",
     "def gcd_of_list(xs):\n    import math\n    g = xs[0]\n    for x in xs[1:]:\n        g = math.gcd(g, x)\n    return g\n",
     "def gcd_of_list(xs):\n    return min(xs)\n",
     ["[12, 18]", "[7]", "[8, 12, 20]", "[9, 6, 4]"]),
    ("clean_text", "s", "Return s keeping only letters, digits and spaces.",
     "def aux(c):\n    return c.isalnum() or c == ' '\n",
     "def clean_text(s):\n    return ''.join(c for c in s if aux(c))\n",
     "def clean_text(s):\n    return ''.join(c for c in s if c.isalnum() or c == ' ')\n",
     "def clean_text(s):\n    return s.strip()\n",
     ["'hi, there!'", "''", "'a-b c'", "'ok?'"]),
    ("to_fahrenheit", "temps", "Return the list of Celsius temperatures converted to Fahrenheit (c * 9 / 5 + 32).",
     "def aux(c):\n    return c * 9 / 5 + 32\n",
     "def to_fahrenheit(temps):\n    return [aux(c) for c in temps]\n",
     "def to_fahrenheit(temps):\n    return [c * 1.8 + 32 for c in temps]\n",
     "def to_fahrenheit(temps):\n    return [c + 32 for c in temps]\n",
     ["[0, 100]", "[]", "[-40]", "[37, 20]"]),
    ("longest_word", "s", "Return the longest word of s (the first one on ties), or '' for an empty string.",
     "def aux(words):\n    best = ''\n    for w in words:\n        if len(w) > len(best):\n            best = w\n    return best\n",
     "def longest_word(s):\n    return aux(s.split())\n",
     "def longest_word(s):\n    words = s.split()\n    return max(words, key=len) if words else ''\n",
     "def longest_word(s):\n    return s.split()[0]\n",
     ["'a bbb cc'", "''", "'same size'", "'x yy zz'"]),
    ("product_of_odds", "xs", "Return the product of the odd numbers in xs (1 if there are none).",
     "def aux(x):\n    return x % 2 == 1\n",
     "def product_of_odds(xs):\n    p = 1\n    for x in xs:\n        if aux(x):\n            p *= x\n    return p\n",
     "def product_of_odds(xs):\n    p = 1\n    for x in xs:\n        if x % 2:\n            p *= x\n    return p\n",
     "def product_of_odds(xs):\n    p = 0\n    for x in xs:\n        p *= x\n    return p\n",
     ["[1, 2, 3, 5]", "[]", "[2, 4]", "[7]"]),
    ("is_anagram", "a, b", "Return True if the strings a and b contain the same letters, ignoring case and spaces.",
     "def aux(s):\n    return sorted(s.replace(' ', '').lower())\n",
     "def is_anagram(a, b):\n    return aux(a) == aux(b)\n",
     "def is_anagram(a, b):\n    return sorted(a.replace(' ', '').lower()) == sorted(b.replace(' ', '').lower())\n",
     "def is_anagram(a, b):\n    return len(a) == len(b)\n",
     ["'listen', 'silent'", "'abc', 'abd'", "'Dormitory', 'dirty room'", "'', ''"]),
    ("count_starting_with", "words", "Return how many words in the list start with the letter '{c}'.",
     "def aux(w):\n    return w.startswith('{c}')\n",
     "def count_starting_with(words):\n    return sum(1 for w in words if aux(w))\n",
     "def count_starting_with(words):\n    return len([w for w in words if w[:1] == '{c}'])\n",
     "def count_starting_with(words):\n    return len(words)\n",
     ["['{c}x', 'b{c}', '{c}']", "[]", "['apple', 'berry']", "['{c}{c}', '{c}b', 'c{c}']"]),
    ("second_largest", "xs", "Return the second largest distinct number in xs, or None if there is none.",
     "def aux(xs):\n    return sorted(set(xs), reverse=True)\n",
     "def second_largest(xs):\n    vals = aux(xs)\n    return vals[1] if len(vals) > 1 else None\n",
     "def second_largest(xs):\n    vals = sorted(set(xs))\n    return vals[-2] if len(vals) > 1 else None\n",
     "def second_largest(xs):\n    return sorted(xs)[-2]\n",
     ["[1, 3, 2]", "[5, 5]", "[]", "[10, 9, 10, 8]"]),
    ("running_total", "xs", "Return the list of running sums of xs.",
     "def aux(acc, x):\n    return acc + x\n",
     "def running_total(xs):\n    out, acc = [], 0\n    for x in xs:\n        acc = aux(acc, x)\n        out.append(acc)\n    return out\n",
     "def running_total(xs):\n    return [sum(xs[:i + 1]) for i in range(len(xs))]\n",
     "def running_total(xs):\n    return [sum(xs)] * len(xs)\n",
     ["[1, 2, 3]", "[]", "[5]", "[-1, 1, -1]"]),
]

# Families below this line are NOT in the pretraining corpus (make_code_problem draws at random only
# from the first PRETRAIN_FAMILIES): they form the held-out split, problems the model never saw.
PRETRAIN_FAMILIES = len(FAMILIES)
FAMILIES += [
    ("count_words", "s", "Return how many words (separated by whitespace) the string s has.",
     "def aux(s):\n    return s.split()\n",
     "def count_words(s):\n    return len(aux(s))\n",
     "def count_words(s):\n    return len(s.split())\n",
     "def count_words(s):\n    return s.count(' ')\n",
     ["'a b c'", "''", "'  spaced   out  '", "'one'"]),
    ("max_abs", "xs", "Return the largest absolute value in xs (0 for an empty list).",
     "def aux(x):\n    return x if x >= 0 else -x\n",
     "def max_abs(xs):\n    return max((aux(x) for x in xs), default=0)\n",
     "def max_abs(xs):\n    return max([abs(x) for x in xs] or [0])\n",
     "def max_abs(xs):\n    return max(xs)\n",
     ["[1, -5, 3]", "[]", "[-2, -3]", "[0]"]),
    ("filter_short", "words", "Return the words of the list with at most {k} letters, in order.",
     "def aux(w):\n    return len(w) <= {k}\n",
     "def filter_short(words):\n    return [w for w in words if aux(w)]\n",
     "def filter_short(words):\n    return [w for w in words if len(w) <= {k}]\n",
     "def filter_short(words):\n    return [w for w in words if len(w) < {k}]\n",
     ["['a', 'abcdefghij', 'abc']", "[]", "['abcd', 'ab']", "['abcdefgh', 'abcdefghijk']"]),
    ("double_evens", "xs", "Return a list where every even number of xs is doubled and odd numbers stay.",
     "def aux(x):\n    return x * 2 if x % 2 == 0 else x\n",
     "def double_evens(xs):\n    return [aux(x) for x in xs]\n",
     "def double_evens(xs):\n    return [x * 2 if x % 2 == 0 else x for x in xs]\n",
     "def double_evens(xs):\n    return [x * 2 for x in xs]\n",
     ["[1, 2, 3, 4]", "[]", "[0, -2]", "[7]"]),
    ("count_uppercase", "s", "Return how many upper-case letters the string s has.",
     "def aux(c):\n    return c.isupper()\n",
     "def count_uppercase(s):\n    return sum(1 for c in s if aux(c))\n",
     "def count_uppercase(s):\n    return len([c for c in s if c.isupper()])\n",
     "def count_uppercase(s):\n    return len(s.upper())\n",
     ["'Hello World'", "''", "'ABC def'", "'abc'"]),
    ("mean", "xs", "Return the average of the numbers in xs, or 0.0 for an empty list.",
     "def aux(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
     "def mean(xs):\n    return aux(xs) / len(xs) if xs else 0.0\n",
     "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n",
     "def mean(xs):\n    return sum(xs) / 2\n",
     ["[1, 2, 3]", "[]", "[5]", "[-1, 1, 3, 5]"]),
    ("initials", "names", "Return the upper-case first letters of the names in the list, joined into one string.",
     "def aux(name):\n    return name[:1].upper()\n",
     "def initials(names):\n    return ''.join(aux(n) for n in names)\n",
     "def initials(names):\n    return ''.join(n[:1].upper() for n in names)\n",
     "def initials(names):\n    return ''.join(names)\n",
     ["['ada', 'bob']", "[]", "['x']", "['mary', 'jane', 'doe']"]),
    ("is_sorted", "xs", "Return True if the numbers in xs are in non-decreasing order.",
     "def aux(a, b):\n    return a <= b\n",
     "def is_sorted(xs):\n    return all(aux(xs[i], xs[i + 1]) for i in range(len(xs) - 1))\n",
     "def is_sorted(xs):\n    return xs == sorted(xs)\n",
     "def is_sorted(xs):\n    return xs[0] <= xs[-1]\n",
     ["[1, 2, 2, 3]", "[]", "[3, 1]", "[5]"]),
    ("count_even", "xs", "Return how many even numbers are in xs.",
     "def aux(x):\n    return x % 2 == 0\n",
     "def count_even(xs):\n    return sum(1 for x in xs if aux(x))\n",
     "def count_even(xs):\n    return len([x for x in xs if x % 2 == 0])\n",
     "def count_even(xs):\n    return len(xs) // 2\n",
     ["[1, 2, 3, 4]", "[]", "[1, 3]", "[0, 0, 7]"]),
    ("squares", "xs", "Return the list of the squares of the numbers in xs.",
     "def aux(x):\n    return x * x\n",
     "def squares(xs):\n    return [aux(x) for x in xs]\n",
     "def squares(xs):\n    return [x ** 2 for x in xs]\n",
     "def squares(xs):\n    return [x * 2 for x in xs]\n",
     ["[1, 2, 3]", "[]", "[-3]", "[0, 10]"]),
    ("remove_vowels", "s", "Return s without its vowels (a, e, i, o, u in either case).",
     "def aux(c):\n    return c.lower() not in 'aeiou'\n",
     "def remove_vowels(s):\n    return ''.join(c for c in s if aux(c))\n",
     "def remove_vowels(s):\n    return ''.join(c for c in s if c.lower() not in 'aeiou')\n",
     "def remove_vowels(s):\n    return s.replace('a', '')\n",
     ["'hello'", "''", "'AEIOUxyz'", "'rhythm'"]),
    ("spread", "xs", "Return the largest number of xs minus the smallest (0 for an empty list).",
     "def aux(xs):\n    return min(xs), max(xs)\n",
     "def spread(xs):\n    if not xs:\n        return 0\n    lo, hi = aux(xs)\n    return hi - lo\n",
     "def spread(xs):\n    return max(xs) - min(xs) if xs else 0\n",
     "def spread(xs):\n    return max(xs) if xs else 0\n",
     ["[3, 9, 1]", "[]", "[4]", "[-5, 5]"]),
    ("count_char", "s", "Return how many times the letter '{c}' appears in s.",
     "def aux(ch):\n    return ch == '{c}'\n",
     "def count_char(s):\n    return sum(1 for ch in s if aux(ch))\n",
     "def count_char(s):\n    return s.count('{c}')\n",
     "def count_char(s):\n    return len(s)\n",
     ["'{c}{c}x{c}'", "''", "'xyz'", "'{c} and {c}'"]),
    ("powers_of_two_sum", "n", "Return 1 + 2 + 4 + ... + 2 ** (n - 1), the sum of the first n powers of two (0 when n is 0).",
     "def aux(i):\n    return 2 ** i\n",
     "def powers_of_two_sum(n):\n    return sum(aux(i) for i in range(n))\n",
     "def powers_of_two_sum(n):\n    return 2 ** n - 1\n",
     "def powers_of_two_sum(n):\n    return 2 ** n\n",
     ["0", "1", "4", "10"]),
    ("word_lengths", "s", "Return the list of the lengths of the words in s.",
     "def aux(w):\n    return len(w)\n",
     "def word_lengths(s):\n    return [aux(w) for w in s.split()]\n",
     "def word_lengths(s):\n    return list(map(len, s.split()))\n",
     "def word_lengths(s):\n    return [len(s)]\n",
     ["'a bb ccc'", "''", "'hello'", "'x yz'"]),
    ("triangle_numbers", "n", "Return the list of the first n triangle numbers 1, 3, 6, 10, ...",
     "def aux(k):\n    return k * (k + 1) // 2\n",
     "def triangle_numbers(n):\n    return [aux(k) for k in range(1, n + 1)]\n",
     "def triangle_numbers(n):\n    out, t = [], 0\n    for k in range(1, n + 1):\n        t += k\n        out.append(t)\n    return out\n",
     "def triangle_numbers(n):\n    return list(range(1, n + 1))\n",
     ["0", "1", "4", "6"]),
    ("count_positive", "xs", "Return how many numbers in xs are strictly positive.",
     "def aux(x):\n    return x > 0\n",
     "def count_positive(xs):\n    return sum(1 for x in xs if aux(x))\n",
     "def count_positive(xs):\n    return len([x for x in xs if x > 0])\n",
     "def count_positive(xs):\n    return len([x for x in xs if x >= 0])\n",
     ["[1, -1, 0, 5]", "[]", "[-3]", "[2, 2]"]),
    ("last_word", "s", "Return the last word of s, or '' if s has no words.",
     "def aux(s):\n    return s.split()\n",
     "def last_word(s):\n    words = aux(s)\n    return words[-1] if words else ''\n",
     "def last_word(s):\n    parts = s.split()\n    return parts[-1] if parts else ''\n",
     "def last_word(s):\n    return s.split(' ')[-1]\n",
     ["'hello big world'", "''", "'one'", "'trailing space '"]),
]

LETTERS = "abcdefghklmnprst"


def family_names() -> list[str]:
    return [f[0] for f in FAMILIES]


def make_code_problem(rng: random.Random, family: int | None = None, k: int | None = None, c: str | None = None,
                      composed_share: float = 0.0) -> dict:
    """One problem of a family (random among the PRETRAIN_FAMILIES unless given) with its constants;
    with probability `composed_share` (family None only) a composed problem (`make_composed_problem`)."""
    if family is None and composed_share and rng.random() < composed_share:
        return make_composed_problem(rng)
    idx = rng.randrange(PRETRAIN_FAMILIES) if family is None else family
    entry, args, doc, aux, main, alone, buggy, examples = FAMILIES[idx]
    consts = dict(k=rng.randint(2, 9) if k is None else k, c=rng.choice(LETTERS) if c is None else c)
    fmt = lambda s: s.format(**consts)  # noqa: E731
    prompt = f'def {entry}({args}):\n    """{fmt(doc)}"""\n'
    return dict(family=entry, entry_point=entry, prompt=prompt, args=args, consts=consts,
                aux=fmt(aux), main_calls_aux=fmt(main), main_alone=fmt(alone), main_buggy=fmt(buggy),
                examples=[fmt(e) for e in examples])


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


@functools.lru_cache(maxsize=1)
def name_words() -> tuple[str, ...]:
    """Words a made-up function name is built from: the writing world's words (about 500, drawn
    from 800 seeded posts and abstracts), the neutral verbs and nouns, and nothing Python reserves."""
    from . import world

    rng, words = random.Random(1), set(NAME_VERBS) | set(NAME_NOUNS)
    for _ in range(400):
        for make in (world.make_post, world.make_abstract):
            words |= set(re.findall(r"\b[a-z]{3,9}\b", make(rng)["text"]))
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
