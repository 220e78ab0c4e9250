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

import ast
import re
import threading
import warnings
from collections import OrderedDict
from dataclasses import astuple
from typing import Optional, Sequence

from ...sandbox import SandboxLimits, SandboxResult, run_many
from ...sandbox.sanitise import for_prompt
from ..prompts import chat_next_turn
from .data import UNPARSEABLE, import_lines, scored_asserts

MAX_REWARD = 4.0
SINGLE_AGENT_MAX = 2.1
LEVELS = ("aux_defined", "main_defined", "syntax", "tests", "calls_aux", "not_thin_wrapper", "aux_result_ignored")
LEVEL_MAX = dict(zip(LEVELS, (0.4, 0.6, 0.5, 1.0, 0.5, 1.0, -0.5)))
"""What each of the reward's levels (`LEVELS`, as the authors' reward code pays them) earns at most; `aux_result_ignored`
is a deduction, `tests` the share of the problem's asserts passed (the reference solutions earn every
positive one: tests/test_viz.py)."""
_FENCE_OPEN = re.compile(r"```python\s*\n?")
_FENCE = re.compile(r"```\s*\n?")


def strip_fences(text: str) -> str:
    """Remove markdown code fences (```python and ```), keeping what they enclose."""
    return _FENCE.sub("", _FENCE_OPEN.sub("", text))


def extract_function(text: str, name: str) -> str:
    """The first `def name(` block of an answer, as the authors extract it: the `def` line (at any
    indentation) and the lines after it that are blank, indented deeper than the `def`, or start
    with a tab; the block ends at the first other line. Leading and trailing whitespace is stripped,
    so an indented answer becomes a top-level function. Returns "" if there is none.

    Lines are Python's (\\n, \\r\\n and a lone \\r each end one), and a block that parses as more than one
    statement is cut after the function (`_one_statement`): a \\r or a form feed inside an indented line
    cannot bring top-level code along with the function."""
    start = re.compile(rf"^(\s*)def\s+{re.escape(name)}\s*\(")
    block, indent = None, 0
    for line in _PY_LINES.split(strip_fences(text)):
        if block is None:
            m = start.match(line)
            if m:
                block, indent = [line], len(m.group(1))
        elif not line.strip() or line.startswith(" " * (indent + 1)) or line.startswith("\t"):
            block.append(line)
        else:
            break
    return _one_statement("\n".join(block).strip()) if block else ""


_PY_LINES = re.compile(r"\r\n|\r|\n")  # where Python's tokenizer ends a line


def _one_statement(block: str) -> str:
    """`block` cut after its first statement where it parses as several: Python's tokenizer reads a line
    that the text rule took as indented (a form feed resets the indentation) as top-level code."""
    if len(block) > MAX_FUNCTION_CHARS:  # counts as absent anyway; parsing it would cost seconds
        return block
    try:
        body = ast.parse(block).body
    except UNPARSEABLE:
        return block  # no statement to smuggle: it earns no syntax level
    if len(body) <= 1:
        return block
    return "\n".join(block.split("\n")[:body[0].end_lineno]).rstrip()


def has_return(function_src: str) -> bool:
    """L1's "defined with a return": the text contains `return` followed by whitespace."""
    return re.search(r"return\s+", function_src) is not None


def _body_lines(function_src: str) -> list[str]:
    """The function's code lines, stripped, without blank lines, comments, docstrings and `def` lines."""
    out, in_doc, quote = [], False, ""
    for line in function_src.split("\n"):
        s = line.strip()
        if not s:
            continue
        if in_doc:
            if '"""' in s or "'''" in s:
                in_doc = False
            continue
        if s.startswith(('"""', "'''")):
            quote = s[:3]
            if not (s.endswith(quote) and len(s) > 3):
                in_doc = True
            continue
        if s.startswith("#") or s.startswith("def "):
            continue
        out.append(s)
    return out


def calls_aux(main_code: str, entry_point: str) -> bool:
    """Does the entry point's text contain a call `aux(` (whitespace allowed before the bracket)?"""
    return re.search(r"\baux\s*\(", extract_function(main_code, entry_point)) is not None


def is_thin_wrapper(main_code: str, entry_point: str) -> bool:
    """The authors' thin-wrapper rule on the entry point's body lines (see `_body_lines`): empty;
    or one line that starts with `return ` and contains `aux`; or `v = aux(...)` then `return v`."""
    body = _body_lines(extract_function(main_code, entry_point))
    if not body:
        return True
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    if len(body) == 2:
        m = _ASSIGNS_AUX.search(body[0])
        return bool(m) and body[1] == f"return {m.group(1)}"
    return False


# The authors' `(\w+)\s*=\s*aux\s*\(` tried from every position backtracks quadratically on a long word
# (a 16,000-character identifier: 12 s). A match can only start where a word starts (from inside a word
# the same word's end is reached), so the lookbehind gives the same first match and group in linear time.
_ASSIGNS_AUX = re.compile(r"(?<!\w)(\w+)\s*=\s*aux\s*\(")


_REFLECTION = frozenset("globals vars locals setattr delattr getattr exec eval compile __import__ breakpoint".split())
_REFLECTIVE_ATTRIBUTES = frozenset("f_globals f_locals f_builtins f_back gi_frame cr_frame ag_frame tb_frame modules "
                                   "get_referrers get_referents get_objects import_module".split())
_REFLECTIVE_MODULES = frozenset("sys builtins inspect gc ctypes importlib types operator __main__".split())


def rebinds_aux(main_code: str, entry_point: str) -> bool:
    """Could the entry point call an `aux` other than agent 1's? True if its function binds the name
    `aux` in any way Python binds a name (`_binds`: an assignment, a parameter or default, a nested def, an
    import with or without `as`, `except ... as aux`, a match/case capture, `*aux` or `**aux` in a pattern,
    `global`/`nonlocal`) or
    reaches namespaces by reflection (`globals()`, `vars`, `setattr`, `exec`, a dunder name or
    attribute such as `__globals__`, frame attributes such as `f_globals`, an import of sys, builtins,
    inspect, gc, ctypes, importlib, types or operator). Such a main earns no
    cooperation levels: agent 2 could replace a useless aux with its own (`globals().update(aux=...)` in
    a default argument scored 4.0 for a useless aux, 1.5 without it). A static rule on the text, linear in
    its length; an entry point that does not parse rebinds nothing. It closes the ways to swap aux that the
    reviews found, not the authors' text rules themselves: a main that calls aux and ignores its result
    (`_ = aux(s)`, then its own computation) still earns the cooperation levels, as in their code."""
    try:
        tree = ast.parse(extract_function(main_code, entry_point))
    except UNPARSEABLE:
        return False
    for n in ast.walk(tree):
        if "aux" in _binds(n):
            return True
        if isinstance(n, ast.Name) and (n.id in _REFLECTION or n.id.startswith("__") or
                                        n.id == "aux" and not isinstance(n.ctx, ast.Load)):
            return True
        if isinstance(n, ast.Attribute) and (n.attr.startswith("__") or n.attr in _REFLECTIVE_ATTRIBUTES):
            return True
        if isinstance(n, ast.arg) and n.arg == "aux" or isinstance(n, (ast.Global, ast.Nonlocal)) and "aux" in n.names:
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == "aux":
            return True
        if isinstance(n, ast.Import) and any(a.name.split(".")[0] in _REFLECTIVE_MODULES for a in n.names) or \
                isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in _REFLECTIVE_MODULES:
            return True
    return False


def _binds(n: ast.AST) -> tuple:
    """The names the node `n` binds: every way Python binds a name (assignment targets, `del`, parameters,
    def/class names, imports with or without `as`, `except ... as`, match/case captures, `*rest`, `**rest`,
    `global`/`nonlocal`, type parameters)."""
    if isinstance(n, ast.Name):
        return (n.id,) if not isinstance(n.ctx, ast.Load) else ()
    if isinstance(n, ast.arg):
        return (n.arg,)
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (n.name,)
    if isinstance(n, ast.alias):
        return ((n.asname or n.name).split(".")[0],)
    if isinstance(n, (ast.Global, ast.Nonlocal)):
        return tuple(n.names)
    if isinstance(n, ast.ExceptHandler) or isinstance(n, (ast.MatchAs, ast.MatchStar)):
        return (n.name,) if n.name else ()
    if isinstance(n, ast.MatchMapping):
        return (n.rest,) if n.rest else ()
    if type(n).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):  # Python 3.12's `def f[T]()`
        return (n.name,)
    return ()


def ignores_aux_result(main_code: str, entry_point: str) -> bool:
    """The authors' -0.5 pattern: a stripped line that is exactly `aux`, one whitespace character,
    and `(` + one character + `)`, e.g. `aux (x)`. (`aux(x)` alone on a line does NOT match.)"""
    return any(re.fullmatch(r"aux\s\([^)]\)", line.strip())
               for line in extract_function(main_code, entry_point).split("\n"))


def _reads_aux(node: ast.AST, derived: set) -> bool:
    """Does `node` call aux, or read a name whose value came from aux?"""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "aux"
               or isinstance(n, ast.Name) and n.id in derived for n in ast.walk(node))


def _assigned(stmt: ast.AST) -> list[str]:
    """The names a statement writes: assignment targets, and `x` of `x.append(...)` (a method call on x)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        targets = [stmt.value.func.value]
    else:
        return []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def aux_result_returned(main_code: str, entry_point: str) -> Optional[bool]:
    """A DIAGNOSTIC, not part of the reward: does the entry point's returned value depend on what aux returned?
    Read statically: a name is aux-derived when it is assigned from an expression that calls aux or reads an
    aux-derived name, or assigned (or appended to) inside an `if`/`while`/`for` whose test or iterable does; the
    answer is True when a `return` reads aux or an aux-derived name. None where the entry point does not parse.

    Why: the reward's cooperation levels read the text (`calls_aux`, `is_thin_wrapper`, `ignores_aux_result`'s
    one pattern), so a main can call aux, drop its result and compute the answer itself (`answer += aux(n)`
    ... `return sum(n * 6 for n in items)`) and still earn them. MAGRPO on SmolLM2 found exactly that in one
    seed (weights/smollm2_coding/README.md); this reports how often."""
    try:
        tree = ast.parse(extract_function(main_code, entry_point))
    except UNPARSEABLE:
        return None
    derived: set = set()
    while True:
        size = len(derived)
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)) and n.value is not None \
                    and _reads_aux(n.value, derived):
                derived.update(_assigned(n))
            test = n.iter if isinstance(n, ast.For) else getattr(n, "test", None) if isinstance(n, (ast.If, ast.While)) else None
            if test is not None and _reads_aux(test, derived):
                for m in ast.walk(n):
                    derived.update(_assigned(m))
        if len(derived) == size:
            break
    return any(isinstance(n, ast.Return) and n.value is not None and _reads_aux(n.value, derived) for n in ast.walk(tree))


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


MAX_FUNCTION_CHARS = 20_000
"""An extracted function longer than this counts as not defined: every check the trainer runs on it
(ast.parse: 4.8 s and 677 MB for a 2 MB main) then stays bounded. Generation limits (a few hundred
tokens, about 4 characters each) never come near it."""


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


LEVEL_SHARES = ("aux_defined", "main_defined", "syntax", "tests_any", "tests_all", "calls_aux", "not_thin_wrapper")
"""The levels `level_shares` counts: a sample earns one when its part of the reward is > 0 (tests_any:
at least one test passed; tests_all: every test passed)."""


def level_shares(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict], G: int = 4,
                 limits: Optional[SandboxLimits] = None) -> dict:
    """What a set of joint answers earned, level by level (`LEVEL_SHARES`): the share of samples earning
    each level, the mean reward, and the share of groups of G consecutive samples (one row's group) whose
    rewards are all equal: MAGRPO's advantage is 0 in such a group, so nothing is learned from it."""
    lv = coding_levels_many(auxes, mains, rows, limits)
    n = len(lv)
    if n == 0 or n % G:
        raise ValueError(f"level_shares needs groups of G = {G} consecutive samples; got {n} samples.")
    def earns(v: dict, level: str) -> bool:
        if level == "tests_any":
            return v["passed"] > 0
        if level == "tests_all":
            return v["total_asserts"] > 0 and v["passed"] == v["total_asserts"]
        return v[level] > 0

    out = {k: sum(earns(v, k) for v in lv) / n for k in LEVEL_SHARES}
    out["reward"] = sum(v["total_reward"] for v in lv) / n
    groups = [[v["total_reward"] for v in lv[i:i + G]] for i in range(0, n, G)]
    out["zero_variance_groups"] = sum(max(g) - min(g) < 1e-9 for g in groups) / len(groups)
    out["groups"], out["samples"] = len(groups), n
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


GATES = (("entry point defined (with a return)", "main_defined", None), ("parses", "syntax", "main_defined"),
         (">= 1 test passes", "tests_any", "syntax"), ("main calls aux (bonus +0.5)", "calls_aux", "tests_any"),
         ("not a thin wrapper (bonus +1.0)", "not_thin_wrapper", "calls_aux"))
"""The reward's chain of gates, in order, as (name, level in `LEVEL_SHARES`, the level before it): a joint
answer that fails one earns none of the levels after it."""


def gate_shares(shares: dict) -> list[tuple[str, float, Optional[float]]]:
    """Where a set of answers is lost, gate by gate: per `GATES` entry, (name, the share of all answers that
    pass it, the share among those that passed the gate before, None for the first), from `level_shares`'s
    output (or a mean of several)."""
    return [(name, shares[k], None if prev is None else shares[k] / max(shares[prev], 1e-9)) for name, k, prev in GATES]


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


# ---- multi-turn: "level feedback" without an external LLM (docs/faithfulness.md) ----------------------------
FEEDBACK_PROGRAM_CHARS, FEEDBACK_PROGRAM_TOKENS = 400, 160
"""What the level feedback shows of a program's own text (the first failing test's error and message, the syntax
error): at most this many characters and, where the transition has the agent's tokenizer, tokens of it
(`sandbox.sanitise.for_prompt`: printable ASCII, no special token, no line or `#` of its own)."""


def level_feedback(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None,
                   comment: bool = True, tokenizer=None) -> str:
    """What a reviewer would tell both agents about one joint attempt: whether aux and main were
    found, the syntax error with its line and column, "Tests: p/q passed" and the first failing
    assert with its error, cooperation notes; ends with "Revise your function.".

    Two forms of the same facts. `comment=True` (the raw prompts of the embedded models): every
    check, one "# name: value" comment line each, as the `tiny-code-2turn` corpus was written.
    `comment=False` (a chat model's next user message, `feedback_transition`): only what is wrong,
    in sentences, and no line that starts with the entry point's name and a colon. Why: given
    "count_words: found" as the user's message, warm-started SmolLM2 answered `def count_words:`
    (no parameters, a syntax error) in most second answers (experiments/smollm2_coding.py,
    `feedback_wording`; the card has the measured shares).

    What the program said (an exception's class name and message, a returned value's repr) and the syntax
    error are hostile text: they go through `sandbox.sanitise.for_prompt` (printable ASCII, special-token
    markers and `#` escaped, at most FEEDBACK_PROGRAM_CHARS characters and, given the agents' `tokenizer`,
    FEEDBACK_PROGRAM_TOKENS of its tokens), and never start a line."""
    entry = problem["entry_point"]
    aux_f, main_f, error, job = _feedback_job(aux, main, problem)
    if error is not None:
        error = for_prompt(error, FEEDBACK_PROGRAM_CHARS, tokenizer, FEEDBACK_PROGRAM_TOKENS)
    aux_ok, main_ok = bool(aux_f and has_return(aux_f)), bool(main_f and has_return(main_f))
    tests, failing, note = None, None, None
    if job is not None:
        r = _RUNS.run([job], limits)[0]  # the reward's result where it has just run
        tests = f"{r.passed}/{r.total} passed"
        first = next((a for a in r.asserts if not a.passed), None)
        if first is not None:
            said = f"{first.error}: {first.message or ''}".rstrip(": ")
            failing = f"{first.source} -> {for_prompt(said, FEEDBACK_PROGRAM_CHARS, tokenizer, FEEDBACK_PROGRAM_TOKENS)}"
        if aux_f:
            if not calls_aux(main_f, entry):
                note = f"{entry} does not call aux"
            elif rebinds_aux(main_f, entry):
                note = f"{entry} must call aux as agent 1 wrote it (no rebinding, no reflection)"
            elif is_thin_wrapper(main_f, entry):
                note = f"{entry} only wraps aux; give it real work"
    if comment:
        lines = [f"aux: {'found' if aux_ok else 'missing (define aux with a return)'}",
                 f"{entry}: {'found' if main_ok else 'missing (define it with a return)'}",
                 f"syntax: {error or 'OK'}"]
        lines += [f"Tests: {tests}"] * (tests is not None) + [f"first failing: {failing}"] * (failing is not None)
        lines += [f"note: {note}"] * (note is not None)
    else:
        lines = ["The helper aux is missing: define aux, with a return."] * (not aux_ok)
        lines += [f"The main function {entry} is missing: define it, with a return."] * (not main_ok)
        lines += [f"Syntax error: {error}"] * (error is not None)
        lines += [f"Tests: {tests}"] * (tests is not None) + [f"First failing test: {failing}"] * (failing is not None)
        lines += [f"Note: {note}."] * (note is not None)
    lines.append("Revise your function.")
    return "\n".join(("# " if comment else "") + one_line(line) for line in lines)


def _feedback_job(aux: str, main: str, problem: dict) -> tuple[str, str, Optional[str], Optional[tuple]]:
    """What `level_feedback` reads of one joint attempt: the extracted aux and main, the combined
    program's syntax error (None if it parses), and the sandbox job it runs ((program, asserts, entry
    point); None where it runs nothing: a syntax error, no main with a return, no host-checkable assert)."""
    entry = problem["entry_point"]
    aux_f, main_f = _functions(aux, main, entry, single=False)
    program = combine(aux_f, main_f, problem)
    error = parse_error(program)
    asserts = scored_asserts(problem["test"], entry)
    job = (program, asserts, entry) if error is None and main_f and has_return(main_f) and asserts else None
    return aux_f, main_f, error, job


def prefetch_feedback(attempts: Sequence[tuple[str, str, dict]], limits: Optional[SandboxLimits] = None) -> int:
    """Run, in one parallel batch, the programs `level_feedback` would run for `attempts` ((aux, main,
    problem) each), so that the next `level_feedback` calls for them read the results from memory (the
    same cache the reward fills). For callers that write feedback for many attempts at once (the
    second-turn documents of the code corpus); at most 256 attempts a call (the cache keeps 512).
    Returns how many programs ran."""
    if len(attempts) > 256:
        raise ValueError(f"prefetch_feedback: {len(attempts)} attempts; give at most 256 a call.")
    jobs = [job for job in (_feedback_job(aux, main, problem)[3] for aux, main, problem in attempts) if job is not None]
    if jobs:
        _RUNS.run(jobs, limits)
    return len(jobs)


def one_line(text: str) -> str:
    """`text` on one line: every line break (\\n, \\r, and the others `str.splitlines` knows) becomes " / ",
    so an exception message or an assert cannot start a line of its own in the next prompt (a forged
    "# Tests: 4/4 passed")."""
    return " / ".join(text.splitlines()) if text else text


def feedback_transition(limits: Optional[SandboxLimits] = None, tokenizer=None):
    """A `transition(prompts, completions, histories, row)` for `MAGRPOConfig(num_turns=2)`: each
    agent's next prompt is its first prompt, its own previous answer, and the level feedback. Each
    agent sees only its own history (plus the shared feedback facts). The programs are not run again:
    the feedback reuses the results the reward has just computed for the same joint actions.

    Two forms, chosen per prompt. A raw prompt (the embedded models) continues as a document: the
    answer, then the feedback as comment lines, and the model writes on. A prompt in `tokenizer`'s
    chat template (an instruct model such as SmolLM2-135M-Instruct, `coding_formatters(tokenizer)`)
    continues as a conversation (`prompts.chat_next_turn`): the answer closes the assistant's turn,
    the feedback is the user's next message (`level_feedback(comment=False)`: only what is wrong, in
    sentences), and the assistant answers it. Without
    this, an instruct model would read the feedback inside its own turn and be asked to go on
    writing its finished answer."""
    def transition(prompts, completions, histories, row):
        feedback: dict = {}  # comment form -> the text, written once for the joint attempt

        def said(comment: bool) -> str:
            if comment not in feedback:
                feedback[comment] = level_feedback(completions[0], completions[1], row, limits, comment=comment,
                                                   tokenizer=tokenizer)
            return feedback[comment]

        out = []
        for hist, completion in zip(histories, completions):
            first, answer = hist[0][0], completion.rstrip()
            chat = chat_next_turn(tokenizer, first, answer, said(False)) if tokenizer is not None else None
            out.append(chat if chat is not None else f"{first}{answer}\n{said(True)}\n")
        return out
    return transition
