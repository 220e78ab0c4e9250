"""What the coding reward reads off an answer's TEXT (the authors' rules, docs/faithfulness.md "Rewards"): the fences
stripped, one function extracted by name, whether it has a `return`, calls `aux(`, is a thin wrapper, rebinds `aux`
or reflects on namespaces, ignores or returns aux's result. `reward.py` scores with these; they run no program.
"""
from __future__ import annotations

import ast
import re
from typing import Optional

from .data import UNPARSEABLE

MAX_FUNCTION_CHARS = 20_000
"""An extracted function longer than this counts as not defined: every check the trainer runs on it
(ast.parse: 4.8 s and 677 MB for a 2 MB main) then stays bounded. Generation limits (a few hundred
tokens, about 4 characters each) never come near it."""


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
