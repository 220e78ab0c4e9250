"""The coding task's joint reward, as the authors' reward code computes it (docs/faithfulness.md, "Rewards"; max 4.0).

Agent 1 writes a helper `aux`, agent 2 the entry-point function, which may call `aux`.

  extraction    markdown fences are removed; from agent 1's answer ONLY the function `aux` is taken,
                from agent 2's answer ONLY the entry-point function (`extract_function`): every other
                definition is dropped, so agent 2 cannot bring its own `aux` and agent 1 cannot bring
                the entry point (a main that binds `aux` or reflects on namespaces earns no
                cooperation level: `rebinds_aux`); a function over MAX_FUNCTION_CHARS counts as absent. A `def` may be indented (an answer indented by 4 spaces still scores).
  combination   the problem's import lines + aux + main, joined by blank lines
  L1 structure  +0.4 if aux was extracted and its text contains `return` followed by whitespace
                (optional: never stops scoring); +0.6 if the entry point was extracted and has such
                a `return`, else STOP
  L2 syntax     +0.5 if the combined program compiles (CPython's `compile`, not only `ast.parse`), else STOP
  L3 tests      + passed / total over the check function's `assert` lines that mention `candidate`
                (`tasks.coding.scored_asserts`; HumanEval's `assert True` lines are not tests, nor
                are asserts only the sandbox could decide, whose verdict a program can forge),
                each run separately in the sandbox (`magrpo_edu.sandbox`, never in this process);
                stop running asserts after 3 timeouts; no tests at all: STOP
  cooperation   only if >= 1 test passed AND an `aux` was extracted (with or without a return):
                +0.5 if the entry point's text contains a call `aux(`; then +1.0 more if the entry
                point is NOT a thin wrapper (`is_thin_wrapper`: after dropping blank lines, comments,
                docstrings and `def` lines, its body is empty, or one line that starts with `return `
                and contains `aux` anywhere, or exactly `v = aux(...)` then `return v`);
                and -0.5 if a line of the entry point is a bare call `aux (x)` whose result is
                ignored (`ignores_aux_result`; the authors' pattern needs exactly one whitespace
                character before `(` and one character inside, so it almost never matches)

Single-agent variant (one model writes the entry point, no aux): L1 main +0.6, L2 +0.5, L3 +1.0,
max 2.1, as the authors' single-agent baseline scores it (their aux answer is the empty string).

Quirks of the authors' code kept on purpose, because they ARE the paper's reward (an RL policy may
find them; the notebooks show it): `return` and `aux(` are found in the function's TEXT, so a
comment `# return x` counts as a return and a comment `# aux(x)` as a call; a one-line body such as
`return sum(1 for c in s if aux(c))` is a "thin wrapper" although it does real work.

Where we deviate from the authors' code, and why (docs/faithfulness.md has the table):
  * asserts whose verdict only the sandbox can decide are not counted, and the cooperation levels
    need a main that neither binds `aux` nor reflects on namespaces: a program must not be able to
    forge a test or swap agent 1's aux for its own;
  * an extracted function over MAX_FUNCTION_CHARS counts as absent, so every check stays bounded;
  * each assert runs in a fresh process with a fresh copy of the program (theirs: one `exec` of the
    program, then every assert in the same globals, in the trainer's own process): no state leaks
    between asserts and the trainer is safe from the program;
  * per-assert timeout 3 s by default (theirs 10 s; `SandboxLimits(assert_timeout_s=10)` matches it);
  * an assert that spans several lines is kept whole (theirs takes only its first line, which
    cannot parse, so such a test always fails there);
  * a `def` nested inside the function is kept with it (their cleaning cuts the outer function at
    the nested `def` and drops the outer lines after it);
  * their cleaning also drops lines that look like English prose inside a function and treats
    `def f(...):` template answers as empty; we do not (a prose line inside a function is a syntax
    error here, scoring 1.0 or 1.4 instead of possibly more there).
"""
from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from dataclasses import astuple
from typing import Optional, Sequence

from ...sandbox import SandboxLimits, SandboxResult, run_many
from .data import UNPARSEABLE, import_lines, scored_asserts
from .reading import (MAX_FUNCTION_CHARS, calls_aux, extract_function, has_return, ignores_aux_result, is_thin_wrapper,
                      rebinds_aux)

MAX_REWARD = 4.0
SINGLE_AGENT_MAX = 2.1
LEVELS = ("aux_defined", "main_defined", "syntax", "tests", "calls_aux", "not_thin_wrapper", "aux_result_ignored")
LEVEL_MAX = dict(zip(LEVELS, (0.4, 0.6, 0.5, 1.0, 0.5, 1.0, -0.5)))
"""What each of the reward's levels (`LEVELS`, as the authors' reward code pays them) earns at most; `aux_result_ignored`
is a deduction, `tests` the share of the problem's asserts passed (the reference solutions earn every
positive one: tests/test_viz.py)."""
def combine(aux: str, main: str, problem: dict) -> str:
    """The program that is tested: the problem's imports + aux + main (already extracted functions)."""
    return "\n\n".join(p for p in (import_lines(problem["prompt"]), aux, main) if p)


def parse_error(program: str) -> Optional[str]:
    """None if CPython compiles `program`, else why not, in one line (the syntax level's test). `compile`, not
    only `ast.parse`: a program the parser accepts but the compiler refuses (`break` outside a loop, `nonlocal`
    of a parameter, 21 nested blocks, a duplicate argument) cannot run, so it earns no syntax level.
    >>> parse_error("def f(:") is not None, parse_error("return " + "-" * 5000 + "1") is not None
    (True, True)
    >>> parse_error("def f(x, x):\\n    return x") is not None, parse_error("def f(x):\\n    break") is not None
    (True, True)
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd but valid code: not the reward's business
            compile(program, "<program>", "exec", dont_inherit=True)
        return None
    except SyntaxError as e:
        return f"SyntaxError at line {e.lineno}, col {e.offset}: {e.msg}"
    except UNPARSEABLE as e:
        return f"{type(e).__name__}: {str(e)[:200] or 'the parser gave up'}"
    except Exception as e:  # noqa: BLE001 - whatever else the compiler raises on some text (SystemError, OverflowError)
        return f"{type(e).__name__}: {str(e)[:200] or 'the compiler gave up'}"


class _SandboxRuns:
    """The sandbox results of the last `size` programs, by their exact text, asserts, entry point and
    limits: a 2-turn run's feedback transition asks about the joint actions the reward has just
    scored, and gets the reward's results instead of running the programs again. A batch runs each
    distinct program once (the same text gets the same result). Least recently used first out;
    thread-safe."""

    def __init__(self, size: int = 512):
        self.size, self.results, self.lock = size, OrderedDict(), threading.Lock()

    def run(self, jobs: Sequence[tuple], limits: Optional[SandboxLimits]) -> list[SandboxResult]:
        """`sandbox.run_many(jobs, limits)`, from memory where the same job ran lately."""
        lim = astuple(limits or SandboxLimits())
        keys = [(program, tuple(asserts), entry, lim) for program, asserts, entry in jobs]
        with self.lock:
            known = {k: self.results[k] for k in keys if k in self.results}
        todo = list(dict.fromkeys(k for k in keys if k not in known))
        if todo:
            known.update(zip(todo, run_many([(k[0], list(k[1]), k[2]) for k in todo], limits)))
        with self.lock:
            for k in keys:
                self.results[k] = known[k]
                self.results.move_to_end(k)
            while len(self.results) > self.size:
                self.results.popitem(last=False)
        return [known[k] for k in keys]


_RUNS = _SandboxRuns()


def _empty_levels() -> dict:
    return dict({k: 0.0 for k in LEVELS}, passed=0, total_asserts=0, total_reward=0.0)


def _total(lv: dict) -> float:
    total = 0.0
    for k in LEVELS:  # added in the authors' order, so the float sums agree with theirs
        total += lv[k]
    return total



def _functions(aux: str, main: str, entry_point: str, single: bool) -> tuple[str, str]:
    """(aux, main) as the reward extracts them (`extract_function`, linear in the text); "" for one
    longer than MAX_FUNCTION_CHARS."""
    aux_f = "" if single else extract_function(aux, "aux")
    main_f = extract_function(main, entry_point)
    return tuple(f if len(f) <= MAX_FUNCTION_CHARS else "" for f in (aux_f, main_f))


def _prepare(aux: str, main: str, problem: dict, single: bool) -> tuple[dict, str, str, Optional[str]]:
    """Levels 1-2 (no code runs): the levels so far, the extracted aux and main, and the program to
    test (None if scoring stopped before the tests)."""
    lv = _empty_levels()
    aux_f, main_f = _functions(aux, main, problem["entry_point"], single)
    lv["aux_defined"] = 0.4 if aux_f and has_return(aux_f) else 0.0
    if not (main_f and has_return(main_f)):
        return lv, aux_f, main_f, None
    lv["main_defined"] = 0.6
    program = combine(aux_f, main_f, problem)
    if parse_error(program) is not None:
        return lv, aux_f, main_f, None
    lv["syntax"] = 0.5
    return lv, aux_f, main_f, program


def _score(aux: str, main: str, problem: dict, limits, result: Optional[SandboxResult], single: bool,
           prepared: Optional[tuple] = None) -> dict:
    """All levels of one joint action; `prepared` = (`_prepare`'s output, the asserts) when the
    caller already has them (`coding_levels_many`), so nothing is extracted or parsed twice."""
    entry = problem["entry_point"]
    (lv, aux_f, main_f, program), asserts = prepared or (_prepare(aux, main, problem, single),
                                                         scored_asserts(problem["test"], entry))
    if program is not None and asserts:
        if result is None:
            result = _RUNS.run([(program, asserts, entry)], limits)[0]
        lv["passed"], lv["total_asserts"] = result.passed, result.total
        lv["tests"] = result.passed / result.total
        if not single and result.passed >= 1 and aux_f and calls_aux(main_f, entry) and not rebinds_aux(main_f, entry):
            lv["calls_aux"] = 0.5
            if not is_thin_wrapper(main_f, entry):
                lv["not_thin_wrapper"] = 1.0
            if ignores_aux_result(main_f, entry):
                lv["aux_result_ignored"] = -0.5
    lv["total_reward"] = _total(lv)
    return lv


def coding_levels(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None,
                  _result: Optional[SandboxResult] = None) -> dict:
    """The coding reward of one joint action with its breakdown: the level values (`LEVELS`),
    `passed` / `total_asserts` asserts and `total_reward`."""
    return _score(aux, main, problem, limits, _result, single=False)


def coding_reward(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None) -> float:
    """Total coding joint reward of one (aux, main) pair (max 4.0)."""
    return coding_levels(aux, main, problem, limits)["total_reward"]


def single_agent_levels(code: str, problem: dict, limits: Optional[SandboxLimits] = None,
                        _result: Optional[SandboxResult] = None) -> dict:
    """The same breakdown for one agent writing the entry point alone: no aux, no cooperation (max 2.1)."""
    return _score("", code, problem, limits, _result, single=True)


def single_agent_coding_reward(code: str, problem: dict, limits: Optional[SandboxLimits] = None) -> float:
    """The reward of one agent writing the entry point alone (max 2.1)."""
    return single_agent_levels(code, problem, limits)["total_reward"]


def coding_levels_many(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                       limits: Optional[SandboxLimits] = None, single: bool = False) -> list[dict]:
    """`coding_levels` (or, with `single=True`, `single_agent_levels` of `mains`) of many
    (aux, main, problem) triples; the programs that reach the tests (L3) all run in the sandbox in
    ONE parallel batch across the cores."""
    prepared = [(_prepare(a, m, row, single), scored_asserts(row["test"], row["entry_point"]))
                for a, m, row in zip(auxes, mains, rows)]
    todo = [(j, (program, asserts, row["entry_point"]))
            for j, (((_, _, _, program), asserts), row) in enumerate(zip(prepared, rows)) if program is not None and asserts]
    results = dict(zip([j for j, _ in todo], _RUNS.run([job for _, job in todo], limits))) if todo else {}
    return [_score(a, m, row, limits, results.get(j), single, prepared[j])
            for j, (a, m, row) in enumerate(zip(auxes, mains, rows))]


def assert_outcomes_many(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                         limits: Optional[SandboxLimits] = None) -> list[list[bool]]:
    """For each joint answer (auxes[j], mains[j]) to rows[j]: one flag per scored assert of its problem (in the
    test's order), True where the program passed it. A program that never reaches the tests (no main, a syntax
    error) fails every assert. The programs run in ONE parallel sandbox batch, from memory where the reward (or the
    feedback) has just run them. What a second turn fixed or broke is read test by test from these
    (`analysis.fixed_and_broken`).

    >>> row = dict(prompt="def double(x):\\n", entry_point="double", test="def check(candidate):\\n"
    ...            "    assert candidate(2) == 4\\n    assert candidate(0) == 0\\n")
    >>> assert_outcomes_many(["", "", ""], ["def double(x):\\n    return 4", "def double(x):\\n    return 2 * x",
    ...                                      "def double(x)"], [row] * 3)
    [[True, False], [True, True], [False, False]]
    """
    if not (len(auxes) == len(mains) == len(rows)):
        raise ValueError(f"assert_outcomes_many got {len(auxes)} auxes, {len(mains)} mains and {len(rows)} rows; "
                         "give one of each per joint answer.")
    asserts = [scored_asserts(row["test"], row["entry_point"]) for row in rows]
    out = [[False] * len(a) for a in asserts]
    todo = []
    for j, (aux, main, row) in enumerate(zip(auxes, mains, rows)):
        program = _prepare(aux, main, row, single=False)[3]
        if program is not None and asserts[j]:
            todo.append((j, (program, asserts[j], row["entry_point"])))
    if todo:
        for (j, _), result in zip(todo, _RUNS.run([job for _, job in todo], limits)):
            flags = {a.index: a.passed for a in result.asserts}
            out[j] = [bool(flags.get(i, False)) for i in range(len(asserts[j]))]
    return out


STUB_AUX = "def aux(*args, **kwargs):\n    return None"
"""What replaces agent 1's helper in the second run: accepts any call, returns None."""

def load_bearing_many(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                      levels: Optional[Sequence[dict]] = None,
                      limits: Optional[SandboxLimits] = None) -> list[bool]:
    """For each joint answer (auxes[j], mains[j]) to rows[j]: is its helper load-bearing (the main passes fewer tests
    with aux replaced by `STUB_AUX`; `load_bearing.py` says why)? `levels`: the
    answers' `coding_levels_many` output where the caller has it (else computed here). The cooperating
    answers' stub programs run in ONE parallel sandbox batch.

    >>> row = dict(prompt="def double(x):\\n", entry_point="double", test="def check(candidate):\\n"
    ...            "    assert candidate(2) == 4\\n    assert candidate(0) == 0\\n")
    >>> aux = "def aux(x):\\n    return 2 * x"
    >>> uses = "def double(x):\\n    return aux(x) + 0"
    >>> drops = "def double(x):\\n    aux(x)\\n    y = x + x\\n    return y"
    >>> load_bearing_many([aux, aux, aux], [uses, drops, "def double(x):\\n    return x + x"], [row] * 3)
    [True, False, False]
    """
    if not (len(auxes) == len(mains) == len(rows)):
        raise ValueError(f"load_bearing_many got {len(auxes)} auxes, {len(mains)} mains and {len(rows)} rows; "
                         "give one of each per joint answer.")
    levels = list(levels) if levels is not None else coding_levels_many(auxes, mains, rows, limits)
    todo = []
    for j, (aux, main, row, lv) in enumerate(zip(auxes, mains, rows, levels)):
        if lv.get("calls_aux", 0.0) <= 0:  # the authors' cooperation level not earned: nothing to test
            continue
        _, main_f = _functions(aux, main, row["entry_point"], single=False)
        todo.append((j, (combine(STUB_AUX, main_f, row), scored_asserts(row["test"], row["entry_point"]),
                         row["entry_point"])))
    out = [False] * len(auxes)
    if todo:
        for (j, _), result in zip(todo, _RUNS.run([job for _, job in todo], limits)):
            out[j] = result.passed < levels[j]["passed"]
    return out


def coding_joint_reward(completions: Sequence[Sequence[str]], row: dict, limits: Optional[SandboxLimits] = None) -> dict:
    """Trainer-facing joint reward: all joint actions' programs run in parallel in the sandbox.
    Returns {"total": [...], <level>: [...], "load_bearing": [...]} (logged as reward/<level>). "load_bearing"
    is not part of the reward: 1.0 where the helper is load-bearing (`load_bearing.py`: the cooperating answers
    run again with aux replaced by a stub), so every training history shows it beside reward/calls_aux."""
    auxes, mains = completions
    rows = [row] * len(auxes)
    levels = coding_levels_many(auxes, mains, rows, limits)
    out = {"total": [lv["total_reward"] for lv in levels]}
    out.update({k: [lv[k] for lv in levels] for k in LEVELS})
    out["load_bearing"] = [float(b) for b in load_bearing_many(auxes, mains, rows, levels, limits)]
    return out
