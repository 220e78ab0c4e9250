"""Every notebook exercise can fail: its check refuses the notebook's own stub and every listed
mistake, and accepts the reference solution and every listed correct variant (magrpo_edu.exercises
explains the layout)."""
import ast
import json
from pathlib import Path

import pytest

from magrpo_edu import exercises as ex

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _exercise_cells():
    """(notebook, exercise name, cell source) for every cell that calls check("NN.name", ...)."""
    found = []
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] != "code" or "check(" not in src:
                continue
            for node in ast.walk(ast.parse(src)):
                if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "check"
                        and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    found.append((path.name, node.args[0].value, src))
    return found


CELLS = _exercise_cells()


def _stub_of(name, src):
    """Execute the exercise cell alone, with `check` recording what the learner would submit."""
    seen = {}

    def recording_check(n, answer):
        seen[n] = answer
        return answer
    exec(compile(src.replace("from magrpo_edu.exercises import check", "pass"), f"<{name}>", "exec"),
         {"check": recording_check, "__name__": "__exercise__"})
    assert name in seen, f"the cell of {name} did not call check({name!r}, ...)"
    return seen[name]


def test_every_exercise_is_in_a_notebook_and_every_notebook_exercise_is_registered():
    in_notebooks = [name for _, name, _ in CELLS]
    assert len(in_notebooks) == len(set(in_notebooks)), "an exercise is checked in two cells"
    assert sorted(in_notebooks) == ex.exercises()
    for nb, name, _ in CELLS:
        assert nb.startswith(name.split(".")[0] + "_"), f"{name} is checked in {nb}, not in notebook {name.split('.')[0]}"


@pytest.mark.parametrize("nb,name,src", CELLS, ids=[c[1] for c in CELLS])
def test_the_stub_fails_the_mistakes_fail_and_the_solution_passes(nb, name, src, monkeypatch):
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)
    stub = _stub_of(name, src)
    with pytest.raises((NotImplementedError, ex.ExerciseFailed)):
        ex.check(name, stub)
    wrong = ex.mistakes(name)
    assert wrong, f"list at least one plausible mistake for {name} in exercises/solutions"
    for k, answer in enumerate(wrong):
        with pytest.raises(ex.ExerciseFailed) as refused:
            ex.check(name, answer)
        assert len(str(refused.value)) > 40, f"{name}, mistake {k}: say what is wrong, not only 'wrong'"
    assert ex.check(name, ex.solution(name)) is ex.solution(name)
    for answer in ex.variants(name):                     # other correct answers: a check must not refuse them
        assert ex.check(name, answer) is answer
    monkeypatch.setenv("MAGRPO_EDU_SOLUTIONS", "1")      # what CI runs the notebooks with
    assert ex.check(name, stub) is ex.solution(name)


def test_check_says_what_to_do(monkeypatch, capsys):
    monkeypatch.setitem(ex._CHECKS, "99.double", lambda f: None if f(2) == 4 else (_ for _ in ()).throw(
        ex.ExerciseFailed("double(2) should be 4")))
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)

    def stub(x):
        raise NotImplementedError
    with pytest.raises(NotImplementedError, match="not solved yet.*MAGRPO_EDU_SOLUTIONS=1"):
        ex.check("99.double", stub)
    with pytest.raises(NotImplementedError, match="not solved yet: write your answer in this cell in place of the `...`"):
        ex.check("99.double", ...)
    with pytest.raises(ex.ExerciseFailed, match="should be 4"):
        ex.check("99.double", lambda x: x + 1)
    assert ex.check("99.double", lambda x: 2 * x)(3) == 6
    assert "99.double: correct" in capsys.readouterr().out
    with pytest.raises(KeyError, match="no exercise named"):
        ex.check("99.nothing", 1)


def test_use_solutions_switches_the_reference_solutions_on_and_off_in_a_running_process(monkeypatch, capsys):
    # What a notebook's first cells offer on Colab and Binder, where no variable can be set before Jupyter starts.
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)
    name = ex.exercises()[0]

    def stub(*args, **kwargs):
        raise NotImplementedError
    with pytest.raises(NotImplementedError, match=r"use_solutions\(\).*magrpo_edu/exercises/solutions/nb\d\d\.py"):
        ex.check(name, stub)
    ex.use_solutions()
    assert ex.os.environ["MAGRPO_EDU_SOLUTIONS"] == "1"
    assert ex.check(name, stub) is ex.solution(name)
    out = capsys.readouterr().out
    assert "reference solutions on" in out and f"solutions/nb{name[:2]}.py" in out
    ex.use_solutions(False)
    assert "MAGRPO_EDU_SOLUTIONS" not in ex.os.environ
    with pytest.raises(NotImplementedError):
        ex.check(name, stub)
    ex.use_solutions(on=True)                            # the keyword of the signature
    assert ex.check(name, stub) is ex.solution(name)
    assert "use_solutions" in ex.__all__
