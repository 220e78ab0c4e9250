"""Forge-proof verdicts, the parent's side: which asserts the host can check (`_plan`), and the
judge process that decodes the returned values and checks them (`judge.py`, started by `_start_judge`)."""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Optional

from .cleanup import OOM_FIRST

MAX_VALUE_CHARS = 2 ** 20  # JSON of one assert's returned values
MAX_VALUE_ITEMS = 100_000  # items (scalars + containers) in one assert's returned values
MAX_VALUE_DEPTH = 64


_WRAPPERS = frozenset("list tuple set frozenset sorted dict len sum min max any all str repr bool int float abs".split())


_SAFE_NAMES = tuple(
    "abs all any bool bytes chr complex dict divmod enumerate filter float frozenset hash int isinstance len list map "
    "max min ord range repr reversed round set slice sorted str sum tuple type zip ArithmeticError AssertionError "
    "AttributeError Exception IndexError KeyError LookupError OverflowError TypeError ValueError ZeroDivisionError "
    "True False None".split())  # what a host-checked assert may use besides `math` (`range` capped at 10**7 items)
_HOST_NAMES = frozenset(_SAFE_NAMES) | {"math"}


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the assert itself binds (targets, comprehension/lambda variables, defs, imports)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    return out


def _is_const(n: ast.AST) -> bool:
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        n = n.operand
    return isinstance(n, ast.Constant) and isinstance(n.value, (int, str)) or \
        isinstance(n, ast.Slice) and all(p is None or _is_const(p) for p in (n.lower, n.upper, n.step))


class _Shipper(ast.NodeTransformer):
    """Replaces each maximal expression that is an entry-point call, possibly inside single-argument
    builtin wrappers, attribute access, no-argument method calls and constant subscripts, with a
    placeholder name; collects the expressions (they hold no expected value: only the call)."""

    def __init__(self, entry_point: str, bound: set[str]):
        self.entry_point, self.bound, self.shipped = entry_point, bound, []

    def shippable(self, n: ast.AST) -> bool:
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name) and n.func.id == self.entry_point:
                return True
            if isinstance(n.func, ast.Name) and n.func.id in _WRAPPERS and n.func.id not in self.bound \
                    and len(n.args) == 1 and not n.keywords and not isinstance(n.args[0], ast.Starred):
                return self.shippable(n.args[0])
            if isinstance(n.func, ast.Attribute) and not n.args and not n.keywords:
                return self.shippable(n.func.value)
            return False
        if isinstance(n, ast.Attribute):
            return self.shippable(n.value)
        if isinstance(n, ast.Subscript):
            return _is_const(n.slice) and self.shippable(n.value)
        return False

    def visit(self, node):
        if isinstance(node, ast.expr) and self.shippable(node):
            self.shipped.append(node)
            return ast.copy_location(ast.Name(id=f"__shipped_{len(self.shipped) - 1}", ctx=ast.Load()), node)
        return super().visit(node)


@dataclass
class _Plan:
    source: str
    kind: str  # host | sandbox | error
    calls: tuple = ()
    code: Optional[str] = None  # host plans: the assert with its calls replaced by __shipped_J (compiled by the judge)
    error: Optional[str] = None
    message: Optional[str] = None

    def harness_spec(self) -> dict:
        return {"calls": list(self.calls)} if self.kind == "host" else {"source": self.source}


def _plan(source: str, entry_point: Optional[str]) -> _Plan:
    """How one assert is checked: on the host (the sandbox only computes the shipped values), or in
    the sandbox (no entry point given, or an assert the host cannot evaluate alone)."""
    if entry_point is None:
        return _Plan(source, "sandbox")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        return _Plan(source, "error", error="SyntaxError", message=f"the assert does not parse: {e}"[:300])
    if any(isinstance(n, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)) for n in ast.walk(tree)):
        return _Plan(source, "sandbox")
    bound = _bound_names(tree)
    shipper = _Shipper(entry_point, bound)
    tree = ast.fix_missing_locations(shipper.visit(tree))
    calls = tuple(ast.unparse(c) for c in shipper.shipped)
    for c in shipper.shipped:
        if any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(c)):
            return _Plan(source, "sandbox")  # the call needs a name the assert binds
    placeholders = {f"__shipped_{j}" for j in range(len(calls))}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound | placeholders | _HOST_NAMES:
            return _Plan(source, "sandbox")  # the entry point as a value, or a name only the program has
    try:
        code = ast.unparse(tree)
        compile(code, "<assert>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return _Plan(source, "sandbox")
    return _Plan(source, "host", calls=calls, code=code)


def host_checked(source: str, entry_point: str) -> bool:
    """Is the assert `source` checked by the trusted judge outside the sandbox when `run_program` gets
    `entry_point` (its verdict cannot be forged), rather than decided inside the sandbox (forgeable)?"""
    return _plan(source, entry_point).kind != "sandbox"


JUDGE_GRACE_S = 1.0  # the judge's time beyond what is left of the program's own time limit
JUDGE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "judge.py")  # run as a script, see its docstring


def _start_judge(python: str) -> Optional[subprocess.Popen]:
    """The judge's process, started with the sandbox so its interpreter start overlaps the program's run."""
    cmd = [python, "-I", "-S", "-B", JUDGE_PATH]
    if sys.platform == "linux" and shutil.which("prlimit"):
        cmd = ["prlimit", f"--as={4 * 2 ** 30}", "--core=0", "--"] + cmd
    if sys.platform == "linux":  # the OOM killer's first choice, as the sandbox is (cleanup.OOM_FIRST)
        cmd = ["sh", "-c", OOM_FIRST + 'exec "$@"', "magrpo-judge"] + cmd
    try:
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.SubprocessError):
        return None


def _judge(judge: Optional[subprocess.Popen], plans: list, raw: bytes, tag: str,
           budget_s: float) -> tuple[dict, Optional[dict], bool, bool]:
    """The judge's verdicts {index: [status, error, message]} and load error for the result pipe's bytes
    `raw`, within `budget_s` seconds (then it is killed: what it decided by then counts). Returns also
    whether it ran out of time, and whether a signal this process did not send ended it (in the rlimits mode
    without Landlock's signal scope a program of the same user can kill it: the run is then run again)."""
    if judge is None:  # it could not start: nothing is checked (every assert fails as unchecked)
        return {}, None, False, False
    head = json.dumps(dict(tag=tag, max_items=MAX_VALUE_ITEMS, max_depth=MAX_VALUE_DEPTH, max_line=MAX_VALUE_CHARS + 1024,
                           safe_names=list(_SAFE_NAMES),
                           plans=[{"kind": p.kind, "calls": list(p.calls), "code": p.code} for p in plans])).encode()
    late = False
    try:
        out, _ = judge.communicate(head + b"\n" + raw, timeout=max(budget_s, 0.05))
    except subprocess.TimeoutExpired:
        late = True
        judge.kill()
        out, _ = judge.communicate()
    except (OSError, ValueError):  # it died before it read everything (a signal: see `killed` below)
        judge.kill()
        out = b""
    finally:
        if judge.poll() is None:
            judge.kill()
        judge.wait()
    killed = not late and judge.returncode is not None and judge.returncode < 0  # by a signal this process did not send
    verdicts, load_error = {}, None
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue  # a line the kill cut short
        if v[0] == "load":
            load_error = {"error": v[1], "message": v[2], "line": v[3], "col": v[4]}
        elif v[1] != "missing":
            verdicts[v[0]] = v[1:]
        else:
            verdicts[v[0]] = None
    return verdicts, load_error, late, killed


