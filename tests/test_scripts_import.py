"""Every name the scripts and notebooks import from the package exists: experiments/, benchmarks/ and tools/ import
magrpo_edu at module level and inside their phases' functions, which only run when that phase is asked for, and a
notebook's cells only run under nbval. A moved or renamed function then fails here, in seconds, and not the next
time someone runs an experiment's phase (`smollm2_coding.py --phase feedback_wording` once imported a helper that a
refactor had removed). Read with `ast`, so nothing is run: only the imported modules are loaded."""
import ast
import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for folder in ("experiments", "benchmarks", "tools") for p in (ROOT / folder).glob("*.py"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _notebook_source(path: Path) -> str:
    """The notebook's code cells as one module; IPython's magics and shell lines (`%pip`, `!pip`,
    `!{sys.executable}`) become `pass` (a line that starts with the `%` operator, `% (a, b)`, stays)."""
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    lines = []
    for cell in cells:
        for line in "".join(cell["source"]).splitlines():
            magic = re.match(r"(\s*)(%%?|!)[A-Za-z{]", line)
            lines.append(magic.group(1) + "pass" if magic else line)
    return "\n".join(lines)


def _package_imports(source: str) -> list[tuple[int, str, str]]:
    """(line, module, name) of every `from magrpo_edu... import name` in `source`, at any depth."""
    return [(node.lineno, node.module, alias.name) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and not node.level and node.module
            and node.module.split(".")[0] == "magrpo_edu" for alias in node.names if alias.name != "*"]


def _missing(source: str) -> list[str]:
    out = []
    for line, module, name in _package_imports(source):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("magrpo_edu"):
                out.append(f"line {line}: no module {module}")
            continue  # an optional dependency of that module (e.g. gguf): not this test's question
        if not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")  # a submodule: `from magrpo_edu.run import plan`
            except ModuleNotFoundError:
                out.append(f"line {line}: {module} has no {name}")
    return out


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_name_a_script_imports_exists(path):
    missing = _missing(path.read_text())
    assert not missing, f"{path.relative_to(ROOT)}: " + "; ".join(missing)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_name_a_notebook_imports_exists(path):
    missing = _missing(_notebook_source(path))
    assert not missing, f"{path.relative_to(ROOT)}: " + "; ".join(missing)


def test_the_check_sees_a_missing_name():
    """The check itself: a name that is not there, module level or inside a function, is reported."""
    source = ("from magrpo_edu.evaluation import run_method\n"
              "def phase():\n    from magrpo_edu.evaluation.protocols import _sampling\n"
              "    from magrpo_edu.run.baselines import run_method\n")
    assert _missing(source) == ["line 3: magrpo_edu.evaluation.protocols has no _sampling",
                                "line 4: no module magrpo_edu.run.baselines"]
    assert len(SCRIPTS) > 20 and len(NOTEBOOKS) == 10  # the folders were really read
