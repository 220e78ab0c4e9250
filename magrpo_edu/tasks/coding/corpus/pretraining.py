"""The coding task's documents in the embedded tiny model's pretraining corpus (`pretraining.corpus.documents` mixes
them with the writing tasks'): helper/main functions in the agents' prompt formats, some buggy, some not using aux
(`coding_documents`); plain tested code (`tested_code`); small call chains with made-up names (`call_chain`). Half the
problems are the hand-written families of `world.py`, half composed from parts (`composed.py`), most under a neutral
name; the held-out families are never drawn. (tiny-code's own corpus, drawn after, is `documents.py`.)"""
from __future__ import annotations

import random
from typing import Iterator

from ..prompts import coding_prompt
from ..world import make_code_problem
from .composed import make_composed_problem, random_entry_name, renamed

COMPOSED_SHARE = 0.5  # share of coding documents whose problem is composed, not a hand-written family
RENAMED_SHARE = 0.85  # share of coding documents whose function gets a neutral name (`scan_records`)


def code_problem(rng: random.Random) -> dict:
    """A hand-written or composed coding problem, often under a neutral name."""
    p = make_composed_problem(rng) if COMPOSED_SHARE and rng.random() < COMPOSED_SHARE else make_code_problem(rng)
    return renamed(p, random_entry_name(rng)) if rng.random() < RENAMED_SHARE else p


def tested_code(p: dict) -> str:
    """aux, the main function that calls it, and its examples as `assert name(args) == value` lines."""
    from ..data import problem_row

    checks = problem_row(p, "")["test"].splitlines()[1:]  # drop `def check(candidate):`
    return p["aux"] + "\n" + p["main_calls_aux"] + "\n" + "\n".join(
        line.strip().replace("candidate(", f"{p['entry_point']}(") for line in checks[:3]) + "\n"

def coding_documents(rng: random.Random) -> Iterator[tuple[str, str]]:
    """(prompt text, completion text) pairs of helper/main functions, some buggy, some not using aux."""
    p = code_problem(rng)
    agent = 0 if rng.random() < 1 / 3 else 1  # main functions twice as often: they carry the copied name
    if agent == 0:
        yield coding_prompt(p["prompt"], 0), p["aux"]
    else:
        style = rng.random()
        main = p["main_calls_aux"] if style < 0.5 else (p["main_alone"] if style < 0.8 else p["main_buggy"])
        yield coding_prompt(p["prompt"], 1), main


SYLLABLES = ("ka", "lo", "mi", "ter", "von", "bra", "sel", "du", "fi", "rex", "po", "nar", "gu", "zel", "wen",
             "tos", "qui", "mar", "bel", "dro")


def made_up_name(rng: random.Random) -> str:
    """An identifier no task uses (`kavon_tos`), so that only copying predicts where it appears again."""
    word = lambda: "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))  # noqa: E731
    return "_".join(word() for _ in range(rng.randint(1, 3)))


def call_chain(rng: random.Random) -> str:
    """Plain code with made-up names: two small functions, the second calling the first, then calls."""

    f, g, a, b = random_entry_name(rng), random_entry_name(rng), made_up_name(rng), made_up_name(rng)
    k1, k2 = rng.randint(1, 9), rng.randint(2, 5)
    op = rng.choice(["+", "-", "*"])
    return (f"def {f}({a}):\n    return {a} {op} {k1}\n\n"
            f"def {g}({b}):\n    return {f}({b}) * {k2}\n\n"
            f"print({g}({rng.randint(0, 9)}), {f}({rng.randint(0, 9)}))\n"
            f"print({f}({g}({rng.randint(0, 9)})))\n")
