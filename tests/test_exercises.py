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
        ex._run_check(name, stub)                        # the stub itself fails its check
    assert ex.check(name, stub) is ex.solution(name)     # and Run all goes on with the reference (a failed box shown)
    assert name in ex.exercises_left()
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


def _lessons():
    """(exercise, a listed mistake, a pattern its refusal must contain): mistakes whose lesson is a specific sentence,
    each also in MISTAKES (so the test above refuses it too)."""
    from magrpo_edu.exercises.solutions import nb00, nb01, nb02, nb03, nb05, nb06, nb07, nb08, nb09
    return [
        ("00.group_advantages", nb00._all_zero, "every advantage you returned is 0"),
        ("00.group_advantages", nb00.MISTAKES["00.group_advantages"][-2], "every advantage you returned is 0"),
        ("00.group_advantages", nb00.MISTAKES["00.group_advantages"][-1], "can be read only once"),
        ("01.sequence_logprob", nb01._logprob_last_dropped, "one position off"),
        ("01.sequence_logprob", nb01._logprob_shifted, "one position off"),
        ("01.sequence_logprob", nb01._logprob_sliced, "no slice"),
        ("01.grpo_token_mean_loss", nb01._grpo_standardised, "standardised the advantages"),
        ("02.shared_losses", nb02._centred_in_place, "in place"),
        ("02.shared_losses", nb02._joint_logprob, "joint log-prob"),
        ("02.shared_losses", nb02._no_baseline, "no baseline"),
        ("03.length_level", nb03._length_level_no_stop_above, "went negative"),
        ("03.coherence_T", nb03._coherence_unpunctuated, "removed the punctuation"),
        ("03.coherence_T", nb03._coherence_punctuation_as_space, "removed the punctuation"),
        ("03.honest_tldr_reward", nb03._honest_rounded, "with 0.2 itself"),
        ("06.std_scaled_advantages", nb06._std_in_place, "in place"),
        ("06.std_scaled_advantages", nb06._std_by_range, "the range"),
        ("07.in_band_share", nb07._in_band_share_words, "count characters (len of the text), not words"),
        ("07.adapter_logits", nb07._adapter_logits_one_name, "one name per ROW"),
        ("09.stop_level", nb09._mistake_words_at_l2, "L2 that counts l in words"),
        ("09.stop_level", nb09._stop_level_from_zero, "numbered from 1"),
        ("03.honest_tldr_reward", nb03._honest_rounded_above, "only just above 0.2"),
        ("05.early_termination_threshold", nb05._threshold_sorts_in_place, "sorts in place"),
        ("06.comlrl_credit", nb06._comlrl_centres_R_in_place, "changed the rewards R"),
        ("08.k3_estimator", nb08._k3_in_place, "in place"),
        ("08.spot_the_hack", nb08._spot_rounded_reward, "0.104"),
        ("08.spot_the_hack", nb08._spot_rounded_naturalness, "1.04"),
        ("08.spot_the_hack", nb08._spot_rounded_repetition, "0.24"),
        ("09.stop_level", nb09.MISTAKES["09.stop_level"][9], "L3 that divides the other way round"),   # u upside down
        ("09.stop_level", nb09.MISTAKES["09.stop_level"][10], "L2 that counts the characters without the spaces"),
    ]


LESSONS = _lessons()


@pytest.mark.parametrize("name,answer,pattern", LESSONS, ids=[f"{n}: {p}" for n, _, p in LESSONS])
def test_a_listed_mistake_is_refused_with_its_lesson(name, answer, pattern, monkeypatch):
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)
    assert any(answer is m for m in ex.mistakes(name)), f"{name}: list this mistake in MISTAKES too"
    with pytest.raises(ex.ExerciseFailed) as refused:
        ex.check(name, answer)
    assert pattern in str(refused.value), f"{name}: the refusal should say {pattern!r}; it said: {refused.value}"


def test_check_says_what_to_do(monkeypatch, capsys):
    monkeypatch.setitem(ex._CHECKS, "99.double", lambda f: None if f(2) == 4 else (_ for _ in ()).throw(
        ex.ExerciseFailed("double(2) should be 4")))
    monkeypatch.setattr(ex, "solution", lambda name: (lambda x: 2 * x))
    monkeypatch.setattr(ex, "_LEFT", {})
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)

    def stub(x):
        raise NotImplementedError
    # Unsolved: a failed box that says what to do, and the reference goes on in its place (Run all reaches the end).
    assert ex.check("99.double", stub)(3) == 6
    out = capsys.readouterr().out
    assert "✗ exercise 99.double is not solved yet" in out and "in place of the `...`" in out
    assert "magrpo_edu/exercises/solutions/nb99.py" in out and "exercises_left()" in out
    assert ex.check("99.double", ...)(5) == 10
    assert ex.exercises_left() == ["99.double"] and "still yours to solve: 99.double" in capsys.readouterr().out
    with pytest.raises(ex.ExerciseFailed, match="should be 4"):   # a wrong answer stops Run all: work to do there
        ex.check("99.double", lambda x: x + 1)
    assert ex.check("99.double", lambda x: 2 * x)(3) == 6
    assert "99.double: correct" in capsys.readouterr().out
    assert ex.exercises_left() == [] and "solved by you" in capsys.readouterr().out
    with pytest.raises(KeyError, match="no exercise named"):
        ex.check("99.nothing", 1)


def test_the_failed_box_is_red_in_jupyter_and_plain_elsewhere():
    box = ex._Unsolved("00.group_advantages")
    html = box._repr_html_()
    assert "border:2px solid #c62828" in html and "not solved yet" in html and "<script" not in html
    assert repr(box).startswith("✗ exercise 00.group_advantages is not solved yet.")


def test_use_solutions_switches_the_reference_solutions_on_and_off_in_a_running_process(monkeypatch, capsys):
    # What a notebook's first cells offer on Colab and Binder, where no variable can be set before Jupyter starts.
    monkeypatch.delenv("MAGRPO_EDU_SOLUTIONS", raising=False)
    name = ex.exercises()[0]

    def stub(*args, **kwargs):
        raise NotImplementedError
    assert ex.check(name, stub) is ex.solution(name)
    assert "not solved yet" in capsys.readouterr().out          # off: the failed box
    ex.use_solutions()
    assert ex.os.environ["MAGRPO_EDU_SOLUTIONS"] == "1"
    assert ex.check(name, stub) is ex.solution(name)
    out = capsys.readouterr().out
    assert "reference solutions on" in out and f"solutions/nb{name[:2]}.py" in out and "not solved yet" not in out
    ex.use_solutions(False)
    assert "MAGRPO_EDU_SOLUTIONS" not in ex.os.environ
    assert ex.check(name, stub) is ex.solution(name)
    assert "not solved yet" in capsys.readouterr().out
    ex.use_solutions(on=True)                            # the keyword of the signature
    assert ex.check(name, stub) is ex.solution(name)
    assert "use_solutions" in ex.__all__ and "exercises_left" in ex.__all__
