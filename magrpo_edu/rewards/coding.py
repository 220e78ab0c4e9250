"""The coding task's joint reward, as the spec's section 5 states it (max 4.0).

Agent 1 writes a helper `aux`, agent 2 the entry-point function, which may call `aux`.

  combination   the problem's import lines + cleaned aux + cleaned main (markdown fences and prose
                removed, only top-level `def` blocks kept)
  L1 structure  +0.4 if `aux` is defined with a return (optional: never stops scoring);
                +0.6 if the entry point is defined with a return, else STOP
  L2 syntax     +0.5 if the combined program parses, else STOP
  L3 tests      + passed / total over the problem's asserts, each run separately in the sandbox
                (`magrpo_edu.sandbox`, never in this process); stop running asserts after 3 timeouts
  cooperation   only if >= 1 test passed and aux exists: +0.5 if main calls aux; then +1.0 more if
                main is not a thin wrapper (its body only `return aux(...)`, or `x = aux(...)` then `return x`)

Single-agent variant (one model writes the entry point, no aux): L1 main +0.6, L2 +0.5, L3 +1.0,
max 2.1, the figure the spec gives for single-agent GRPO on the same reward.

Our choices where the spec is silent: "defined with a return" means a top-level `def` of that name
whose body contains a `return <value>` (found with `ast` when the piece parses, by a regular
expression when it does not); per-assert timeout 3 s by default (the reference used 10 s, set
`SandboxLimits(assert_timeout_s=10)` to match it).
"""
from __future__ import annotations

import ast
import re
from typing import Optional, Sequence

from ..sandbox import SandboxLimits, SandboxResult, run_many
from ..tasks.coding import extract_asserts, import_lines

MAX_REWARD = 4.0
SINGLE_AGENT_MAX = 2.1
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n?(.*?)(?:```|$)", re.S)


def clean_code(text: str) -> str:
    """Keep only top-level `def` blocks (with their decorators and indented bodies); drop markdown
    fences and prose."""
    fenced = _FENCE.findall(text)
    if fenced:
        text = "\n".join(fenced)
    keep, inside, pending = [], False, []
    for line in text.splitlines():
        if line.startswith("@"):
            pending.append(line)
            continue
        if re.match(r"(async\s+)?def\s+\w+\s*\(", line):
            keep += pending + [line]
            inside, pending = True, []
        elif inside and (line.startswith((" ", "\t")) or not line.strip()):
            keep.append(line)
        else:
            inside, pending = False, []
    return "\n".join(keep).strip() + ("\n" if keep else "")


def _function(code: str, name: str) -> Optional[ast.FunctionDef]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    found = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return found[-1] if found else None


def defines_with_return(code: str, name: str) -> bool:
    """Is `name` defined at top level with a `return <value>` in its body?"""
    fn = _function(code, name)
    if fn is not None:
        return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn))
    m = re.search(rf"^def\s+{re.escape(name)}\s*\(.*?(?=^\S|\Z)", code, re.M | re.S)  # unparseable: by text
    return bool(m and re.search(r"\breturn\s+\S", m.group(0)))


def calls_aux(main_code: str, entry_point: str) -> bool:
    """Does the entry point call `aux(...)` anywhere in its body?"""
    fn = _function(main_code, entry_point)
    if fn is None:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "aux" for n in ast.walk(fn))


def is_thin_wrapper(main_code: str, entry_point: str) -> bool:
    """Body (docstring aside) is only `return aux(...)`, or `x = aux(...)` followed by `return x`."""
    fn = _function(main_code, entry_point)
    if fn is None:
        return False
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]

    def is_aux_call(node) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "aux"

    if len(body) == 1 and isinstance(body[0], ast.Return) and is_aux_call(body[0].value):
        return True
    if len(body) == 2 and isinstance(body[0], ast.Assign) and is_aux_call(body[0].value) and len(body[0].targets) == 1 \
            and isinstance(body[0].targets[0], ast.Name) and isinstance(body[1], ast.Return) \
            and isinstance(body[1].value, ast.Name) and body[1].value.id == body[0].targets[0].id:
        return True
    return False


def combine(aux: str, main: str, problem: dict) -> str:
    """The program that is tested: the problem's imports + cleaned aux + cleaned main."""
    parts = [import_lines(problem["prompt"]), clean_code(aux), clean_code(main)]
    return "\n\n".join(p for p in parts if p.strip()) + "\n"


def _empty_levels() -> dict:
    return dict(aux_defined=0.0, main_defined=0.0, syntax=0.0, tests=0.0, calls_aux=0.0, not_thin_wrapper=0.0,
                passed=0, total=0, total_reward=0.0)


def coding_levels(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None,
                  _result: Optional[SandboxResult] = None) -> dict:
    """The coding reward of one joint action with its breakdown (and the sandbox result used)."""
    return _score(aux, main, problem, limits, _result, single=False)


def _score(aux, main, problem, limits, result, single: bool) -> dict:
    entry = problem["entry_point"]
    lv = _empty_levels()
    aux_c, main_c = ("", clean_code(main)) if single else (clean_code(aux), clean_code(main))
    aux_ok = (not single) and defines_with_return(aux_c, "aux")
    lv["aux_defined"] = 0.4 if aux_ok else 0.0
    if not defines_with_return(main_c, entry):
        lv["total_reward"] = lv["aux_defined"]
        return lv
    lv["main_defined"] = 0.6
    program = combine(aux_c, main_c, problem)
    try:
        ast.parse(program)
    except SyntaxError:
        lv["total_reward"] = lv["aux_defined"] + lv["main_defined"]
        return lv
    lv["syntax"] = 0.5
    asserts = extract_asserts(problem["test"], entry)
    if result is None:
        result = run_many([(program, asserts)], limits)[0]
    lv["passed"], lv["total"] = result.passed, result.total
    lv["tests"] = result.passed / result.total if result.total else 0.0
    if not single and result.passed >= 1 and aux_ok:
        if calls_aux(main_c, entry):
            lv["calls_aux"] = 0.5
            if not is_thin_wrapper(main_c, entry):
                lv["not_thin_wrapper"] = 1.0
    lv["total_reward"] = sum(lv[k] for k in ("aux_defined", "main_defined", "syntax", "tests", "calls_aux", "not_thin_wrapper"))
    return lv


def coding_reward(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None) -> float:
    """Total coding joint reward of one (aux, main) pair (max 4.0)."""
    return coding_levels(aux, main, problem, limits)["total_reward"]


def single_agent_coding_reward(code: str, problem: dict, limits: Optional[SandboxLimits] = None) -> float:
    """The same reward for one agent writing the entry point alone, no aux (max 2.1)."""
    return _score("", code, problem, limits, None, single=True)["total_reward"]


def coding_levels_many(auxes: Sequence[str], mains: Sequence[str], rows: Sequence[dict],
                       limits: Optional[SandboxLimits] = None) -> list[dict]:
    """`coding_levels` of many (aux, main, problem) triples; the programs that reach the tests (L3)
    all run in the sandbox in ONE parallel batch across the cores."""
    todo = []
    for j, (a, m, row) in enumerate(zip(auxes, mains, rows)):
        if defines_with_return(clean_code(m), row["entry_point"]):
            prog = combine(a, m, row)
            try:
                ast.parse(prog)
            except SyntaxError:
                continue
            todo.append((j, prog, extract_asserts(row["test"], row["entry_point"])))
    results = dict(zip([t[0] for t in todo], run_many([(t[1], t[2]) for t in todo], limits))) if todo else {}
    return [coding_levels(a, m, row, limits, _result=results.get(j)) for j, (a, m, row) in enumerate(zip(auxes, mains, rows))]


def coding_joint_reward(completions: Sequence[Sequence[str]], row: dict, limits: Optional[SandboxLimits] = None) -> dict:
    """Trainer-facing joint reward: all joint actions' programs run in parallel in the sandbox.
    Returns {"total": [...], <level>: [...]} (levels logged as reward/<level>)."""
    auxes, mains = completions
    levels = coding_levels_many(auxes, mains, [row] * len(auxes), limits)
    keys = ("aux_defined", "main_defined", "syntax", "tests", "calls_aux", "not_thin_wrapper")
    out = {"total": [lv["total_reward"] for lv in levels]}
    out.update({k: [lv[k] for lv in levels] for k in keys})
    return out


# ---- multi-turn: "level feedback" without an external LLM (spec section 3) ---------------------------
def level_feedback(aux: str, main: str, problem: dict, limits: Optional[SandboxLimits] = None) -> str:
    """What a reviewer would tell both agents about one joint attempt: whether aux and main were
    found, the syntax error with its line and column, "Tests: p/q passed" and the first failing
    assert with its error, cooperation notes; ends with "Revise your function."."""
    entry = problem["entry_point"]
    aux_c, main_c = clean_code(aux), clean_code(main)
    lines = [f"aux: {'found' if defines_with_return(aux_c, 'aux') else 'missing (define aux with a return)'}",
             f"{entry}: {'found' if defines_with_return(main_c, entry) else 'missing (define it with a return)'}"]
    program = combine(aux_c, main_c, problem)
    try:
        ast.parse(program)
        lines.append("syntax: OK")
        ok = defines_with_return(main_c, entry)
    except SyntaxError as e:
        lines.append(f"syntax: SyntaxError at line {e.lineno}, col {e.offset}: {e.msg}")
        ok = False
    if ok:
        asserts = extract_asserts(problem["test"], entry)
        r = run_many([(program, asserts)], limits)[0]
        lines.append(f"Tests: {r.passed}/{r.total} passed")
        failing = next((a for a in r.asserts if not a.passed), None)
        if failing is not None:
            lines.append(f"first failing: {failing.source} -> {failing.error}: {failing.message or ''}".rstrip(": "))
        if defines_with_return(aux_c, "aux"):
            if not calls_aux(main_c, entry):
                lines.append(f"note: {entry} does not call aux")
            elif is_thin_wrapper(main_c, entry):
                lines.append(f"note: {entry} only wraps aux; give it real work")
    lines.append("Revise your function.")
    return "\n".join("# " + line for line in lines)


def feedback_transition(limits: Optional[SandboxLimits] = None):
    """A `transition(prompts, completions, histories, row)` for `MAGRPOConfig(num_turns=2)`: each
    agent's next prompt is its first prompt, its own previous answer, and the level feedback. Each
    agent sees only its own history (plus the shared feedback facts)."""
    def transition(prompts, completions, histories, row):
        fb = level_feedback(completions[0], completions[1], row, limits)
        return [f"{hist[0][0]}{completion.rstrip()}\n{fb}\n" for hist, completion in zip(histories, completions)]
    return transition
