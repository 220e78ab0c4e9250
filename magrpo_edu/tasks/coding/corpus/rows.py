"""MAGRPO training rows for the coding task made from the tiny-code corpus's composed problems
(`composed_coding_rows`): a wider training split than the 44 rows of `load_coding("train")`, for
`experiments/coding_collaboration.py --train-rows composed`."""
from __future__ import annotations

import random

from ..data import assert_line
from .documents import code_problem


def _random_input(rng: random.Random, input_type: str):
    """One seeded argument of `input_type` (the composed problems' argument kinds), never empty: an
    empty input lets a wrong program pass (a loop over nothing returns the empty answer)."""
    word = lambda: "".join(rng.choice("abcdeiouAEstxyz") for _ in range(rng.randint(1, 6)))  # noqa: E731
    if input_type == "list_int":
        return [rng.randint(-9, 12) for _ in range(rng.randint(2, 6))]
    if input_type == "list_str":
        return [word() for _ in range(rng.randint(2, 5))]
    if input_type == "str":
        return " ".join(word() for _ in range(rng.randint(2, 5)))
    return rng.randint(1, 9)


def composed_coding_rows(n: int = 400, seed: int = 0) -> list[dict]:
    """`n` training rows made from the tiny-code corpus's COMPOSED problems (`documents.code_problem`:
    ~2,000 compositions with names from a broad vocabulary), each with 4 asserts computed
    from its reference (aux + the first cooperating main) on seeded non-empty inputs, chosen so that the
    4 inputs differ, the 4 expected answers are not all equal and the problem's wrong main (`main_buggy`) fails at least one.

    Why: the 44 rows of `load_coding("train")` repeat 22 names, so a few hundred MAGRPO steps teach the
    main agent those names and it copies unseen ones worse (entry point defined 0.64 -> 0.49 on
    held-out families in those runs). Composed rows never repeat a name, so only copying the prompt's signature
    pays; and no assert passes for a program that ignores the input. None of them is a held-out problem:
    the corpus never composes a held-out family (`tests/test_coding_model.py` runs every corpus program
    on every held-out problem's asserts). Problems whose reference raises on an input are redrawn."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"composed_coding_rows: n={n!r} must be an integer >= 1.")
    rng, rows, names = random.Random(seed), [], set()
    while len(rows) < n:
        p = code_problem(rng)
        if p["entry_point"] in names:
            continue
        row = composed_row(p, rng, len(rows))
        if row is not None:
            names.add(p["entry_point"])
            rows.append(row)
    return rows


def composed_row(p: dict, rng: random.Random, index: int = 0) -> dict | None:
    """The coding row of one composed problem `p` (`documents.code_problem`): 4 asserts from its
    reference on seeded non-empty inputs (`composed_coding_rows`' rules), or None where no such 4 exist."""
    ns: dict = {}
    exec(p["aux"] + "\n" + p["mains"][0] + "\n" + p["main_buggy"].replace(f"def {p['entry_point']}(", "def __buggy("), ns)  # noqa: S102 - the package's own reference code
    fn, buggy = ns[p["entry_point"]], ns["__buggy"]
    cases = []
    for _ in range(12):
        x = _random_input(rng, p["input_type"])
        if any(repr(x) == repr(seen) for seen, _ in cases):
            continue
        try:
            cases.append((x, fn(x)))
        except Exception:  # e.g. an index past the end: draw another input
            continue
        if len(cases) == 4:
            break
    if len(cases) < 4 or len({repr(y) for _, y in cases}) < 2:
        return None

    def _buggy_passes(x, y):
        try:
            return buggy(x) == y
        except Exception:
            return False
    if all(_buggy_passes(x, y) for x, y in cases):
        return None
    lines = ["    " + assert_line(p["entry_point"], repr(x), y) for x, y in cases]
    return dict(task_id=f"composed/{index}_{p['entry_point']}", prompt=p["prompt"], entry_point=p["entry_point"],
                test="def check(candidate):\n" + "\n".join(lines) + "\n", reference_aux=p["aux"],
                reference_main=p["mains"][0], family=p["family"], source="composed")
