"""Checks of notebook 04's exercises (coding collaboration): the thin-wrapper rule and the coding levels."""
from __future__ import annotations

from . import ExerciseFailed, exercise

# Entry points named `f`; each teaches one corner of the authors' rule (spec section 8).
WRAPPER_CASES = [
    ("def f(xs):\n    return aux(xs)\n", "one `return` line that calls aux"),
    ("def f(xs):\n    y = aux(xs)\n    return y\n", "`v = aux(...)` then `return v`"),
    ("def f(xs):\n    return [aux(x) for x in xs]\n", "one `return` line that mentions aux, doing real work"),
    ("def f(s):\n    return sum(1 for c in s if aux(c))\n", "one `return` line that mentions aux, doing real work"),
    ("def f(xs):\n    out = [aux(x) for x in xs]\n    return out\n", "two lines, but the first does not start with `aux(`"),
    ('def f(xs):\n    """Double each number."""\n    # the helper does it\n    return aux(xs)\n',
     "docstrings and comments are dropped before the rule looks"),
    ("def f(xs):\n    n = 0\n    for x in xs:\n        if aux(x):\n            n += 1\n    return n\n", "a loop around aux"),
    ("def f(xs):\n    return len(xs)\n", "one `return` line that does not mention aux"),
    ("def f(s):\n    words = aux(s)\n    return len(words)\n", "aux's result used in a further statement"),
]


def _wrapper_truth() -> list[bool]:
    from ..tasks.coding.reward import is_thin_wrapper

    return [is_thin_wrapper(src, "f") for src, _ in WRAPPER_CASES]


@exercise("04.thin_wrapper")
def check_thin_wrapper(fn) -> None:
    """`fn(main_source) -> bool` must agree with the library's `is_thin_wrapper` on every case."""
    if not callable(fn):
        raise ExerciseFailed("give a function thin_wrapper(main: str) -> bool")
    for (src, why), want in zip(WRAPPER_CASES, _wrapper_truth()):
        got = fn(src)
        if got is not want:
            raise ExerciseFailed(f"thin_wrapper says {got!r} for this main ({why}); the authors' rule says {want}:\n{src}")


# (aux, main) pairs on notebook 04's count_vowels problem: each earns a different set of levels.
LEVEL_CASES = [
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if aux(c):\n            n += 1\n    return n\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    return sum(1 for c in s if aux(c))\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    return len(s)\n"),
    ("", "def count_vowels(s):\n    n = 0\n    for c in s:\n        if c in 'aeiouAEIOU':\n            n += 1\n    return n\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowel(s):\n    return 0\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    n = 0\n    for c in s\n        n += aux(c)\n    return n\n"),
    ("def aux(c):\n    return c == 'a'\n", "def count_vowels(s):\n    hits = [c for c in s if aux(c)]\n    return len(hits) * 0\n"),
    ("def aux(c):\n    return c.lower() in 'aeiou'\n", "def count_vowels(s):\n    hits = [c for c in s if aux(c)]\n    return -1 - len(hits)\n"),
]


def _facts(aux: str, main: str, problem: dict) -> dict:
    """What a reader can see of one pair, the inputs of the learner's function."""
    from ..tasks.coding.reward import calls_aux, combine, extract_function, has_return, is_thin_wrapper, parse_error
    from ..sandbox import run_program
    from ..tasks.coding.data import extract_asserts

    entry = problem["entry_point"]
    aux_f, main_f = extract_function(aux, "aux"), extract_function(main, entry)
    program = combine(aux_f, main_f, problem)
    asserts = extract_asserts(problem["test"], entry)
    parses = parse_error(program) is None
    ran = run_program(program, asserts) if parses and main_f else None
    return dict(aux_defined=bool(aux_f) and has_return(aux_f), main_defined=bool(main_f) and has_return(main_f),
                parses=parses, passed=ran.passed if ran else 0, total=len(asserts),
                calls_aux=calls_aux(main_f, entry), thin_wrapper=is_thin_wrapper(main_f, entry))


@exercise("04.levels")
def check_levels(fn) -> None:
    """`fn(**facts) -> float` must give the library's coding reward on every pair."""
    if not callable(fn):
        raise ExerciseFailed("give a function coding_reward(aux_defined, main_defined, parses, passed, total, calls_aux, "
                             "thin_wrapper) -> float")
    from ..tasks.coding.reward import coding_levels
    from ..tasks.coding import load_coding

    problem = next(r for r in load_coding("train") if r["entry_point"] == "count_vowels")
    for aux, main in LEVEL_CASES:
        facts = _facts(aux, main, problem)
        want = coding_levels(aux, main, problem)["total_reward"]
        got = fn(**facts)
        if not isinstance(got, (int, float)) or abs(got - want) > 1e-6:
            raise ExerciseFailed(f"for the facts {facts} your reward is {got!r}; the library's is {want:.2f} "
                                 f"(aux: {aux.strip()[:40]!r}, main: {main.strip()[:60]!r}). Remember the gates: no "
                                 "entry point or no parse stops scoring; the cooperation bonus needs a passed test and aux.")
