"""`magrpo-edu train` checks every option before loading a model: a mistake is one line
`magrpo-edu: error: ...` on stderr, exit status 2, and no output folder is created or touched."""
import re

import pytest

from magrpo_edu.tasks.registry import get_task

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu import experiment
from magrpo_edu.cli import main


@pytest.fixture
def no_model(monkeypatch):
    """Any attempt to load a model fails the test: validation must come first."""
    def refuse(*a, **kw):
        raise AssertionError("a model was loaded before the options were checked")
    monkeypatch.setattr(experiment, "load_model", refuse)


def run_cli(args, capsys):
    rc = main(["train", *args])
    err = capsys.readouterr().err
    return rc, err


@pytest.mark.parametrize("args, says", [
    (["--max-new-tokens", "0"], r"max_new_tokens=0 is not allowed.*\(set with --max-new-tokens\)"),
    (["--max-new-tokens", "-5"], r"max_new_tokens=-5 is not allowed"),
    (["--eval-rows", "0"], r"--eval-rows 0 is not allowed: the length task has 30 held-out rows, so give a number from 1 to 30"),
    (["--eval-rows", "-1"], r"--eval-rows -1 is not allowed"),
    (["--eval-rows", "31"], r"--eval-rows 31 is not allowed"),
    (["--steps", "0"], r"max_steps=0 is not allowed.*\(set with --steps\)"),
    (["-G", "1"], r"num_generations=1 is not allowed.*\(set with --num-generations\)"),
    (["--temperature", "inf"], r"temperature=inf is not allowed.*finite"),
    (["--lr", "nan"], r"learning_rate=nan is not allowed"),
    (["--beta", "-0.1"], r"beta=-0.1 is not allowed.*\(set with --beta\)"),
    (["--beta", "nan"], r"beta=nan is not allowed"),
    (["--seed", str(2**63)], r"seed=9223372036854775808 is not allowed"),
    (["--save-steps", "0"], r"save_steps=0 is not allowed.*\(set with --save-steps\)"),
    (["--prompts-per-step", "0"], r"prompts_per_step=0 is not allowed.*\(set with --prompts-per-step\)"),
    (["--turns", "2"], r"--turns 2 needs a transition"),
    (["--device", "nonsense"], r"--device 'nonsense' is not a device torch knows"),
    (["--resume", "{tmp}/nothing-here"], r"nothing to resume in .*nothing-here"),
    (["--resume", "{tmp}/x", "--overwrite"], r"--overwrite and --resume contradict"),
])
def test_bad_options_fail_before_any_model_loads(args, says, tmp_path, capsys, no_model):
    out = tmp_path / "out"
    rc, err = run_cli(["--out", str(out), *[a.format(tmp=tmp_path) for a in args]], capsys)
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("magrpo-edu: error: "), err
    assert re.search(says, lines[0]), lines[0]
    assert not out.exists()


def test_beta_default_is_the_demo_leash_for_length_and_the_paper_elsewhere(tmp_path):
    assert experiment.plan_run(out=str(tmp_path / "a"))["config"].beta == get_task("length").beta > 0
    assert experiment.plan_run(task="tldr", out=str(tmp_path / "b"))["config"].beta == 0.0
    assert experiment.plan_run(task="tldr", beta=0.3, out=str(tmp_path / "c"))["settings"]["beta"] == 0.3


def test_non_empty_output_folder_is_refused_without_overwrite(tmp_path, capsys, no_model):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("{}")
    rc, err = run_cli(["--out", str(out)], capsys)
    assert rc == 2 and "is not empty (it holds results.json); pass --overwrite" in err
    assert (out / "results.json").read_text() == "{}"
    (out / "results.json").write_text("[]")
    (out / "a-file").write_text("")
    rc, err = run_cli(["--out", str(out / "a-file")], capsys)
    assert rc == 2 and "is a file, not a folder" in err


def test_a_failure_after_the_model_loads_leaves_no_folder(tmp_path, capsys):
    """--max-new-tokens beyond the tiny model's context is found when the agents exist; still exit 2, no folder."""
    out = tmp_path / "out"
    rc, err = run_cli(["--out", str(out), "--max-new-tokens", "5000", "--eval-rows", "1", "--device", "cpu"], capsys)
    assert rc == 2 and err.strip().splitlines()[-1].startswith("magrpo-edu: error: agent 'agent_0': 1 prompt(s) do not fit")
    assert "context of 1024 tokens" in err and "max_new_tokens=5000" in err
    assert not out.exists()


def test_resume_with_other_settings_is_refused(tmp_path, capsys, no_model, make_model, small_tokenizer, rows, formatters):
    settings = dict(task="length", model="tiny", agents="lora", steps=6, G=2, max_new_tokens=8, lr=2e-3,
                    temperature=1.0, eval_rows=1, seed=0, turns=1)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), lambda c, r: [0.0] * len(c[0]),
                       formatters, rows, MAGRPOConfig(max_steps=6, max_new_tokens=8, num_generations=2, progress=False))
    tr.metadata = dict(run=settings, save_steps=2)
    tr.save(tmp_path / "run" / "checkpoint")
    rc, err = run_cli(["--resume", str(tmp_path / "run"), "--steps", "9"], capsys)
    assert rc == 2 and "--steps 9 (the run has 6)" in err and "leave those options out" in err
    rc, err = run_cli(["--resume", str(tmp_path / "run"), "--out", str(tmp_path / "elsewhere")], capsys)
    assert rc == 2 and "writes there; leave --out out" in err
    # this run's settings predate --beta and --prompts-per-step: it reads as trained without the leash, one prompt per step
    assert experiment.resume_settings(tmp_path / "run") == {**settings, "beta": 0.0, "prompts_per_step": 1, "save_steps": 2,
                                                             "report_to": "none"}
    # and the CLI's resume (options filled from the saved settings) plans it with beta 0, not the demo's default
    saved = experiment.resume_settings(tmp_path / "run")
    plan = experiment.plan_run(**{k: v for k, v in saved.items()}, resume=str(tmp_path / "run"))
    assert plan["config"].beta == 0.0


def test_overwrite_keeps_the_old_run_until_training_starts_and_removes_only_run_files(tmp_path, capsys, no_model):
    out = tmp_path / "out"
    (out / "checkpoint").mkdir(parents=True)
    for name in ("results.json", "history.json", "my-notes.txt"):
        (out / name).write_text("old")
    with pytest.raises(AssertionError, match="a model was loaded"):  # passes validation, then "fails" loading
        main(["train", "--out", str(out), "--overwrite", "--eval-rows", "1"])
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint", "history.json", "my-notes.txt", "results.json"]
    experiment._prepare_out(out, overwrite=True)  # what the run does right before its first step
    assert sorted(p.name for p in out.iterdir()) == ["my-notes.txt"]


@pytest.mark.slow
def test_eval_checkpoint_reproduces_the_runs_own_evaluation(tmp_path, capsys):
    out = tmp_path / "run"
    # no --save-steps: every finished run keeps its agents in <out>/checkpoint for `magrpo-edu eval`
    res = experiment.run_training(task="tldr", steps=2, eval_rows=2, max_new_tokens=8, out=str(out),
                                  progress=False, device="cpu")
    capsys.readouterr()
    # resuming a finished run says it is finished (and how to evaluate it) instead of re-evaluating
    rc = main(["train", "--resume", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "that run is finished (all 2 steps trained" in err and f"magrpo-edu eval --checkpoint {out}" in err
    rc = main(["eval", "--checkpoint", str(out), "--samples", "1", "--device", "cpu"])
    printed = capsys.readouterr().out
    assert rc == 0 and "step 2 of 2" in printed and "| magrpo |" in printed
    got = experiment.run_eval(str(out / "checkpoint"), samples=1, device="cpu")
    assert got["step"] == 2
    # the same weights, rows and evaluation seed as the run's own evaluation after training
    for k, v in res["eval_after"].items():
        assert got["evaluate"][k] == pytest.approx(v, abs=1e-6), k


def test_eval_checks_its_options_before_any_model_loads(tmp_path, capsys, no_model):
    rc, err = 0, ""
    rc = main(["eval", "--checkpoint", str(tmp_path / "nothing")])
    err = capsys.readouterr().err
    assert rc == 2 and re.search(r"magrpo-edu: error: nothing to evaluate in .*nothing", err), err


def test_the_command_line_is_the_train_arguments_dataclass():
    """One name and one default per option: `magrpo-edu train` with no options parses to
    TrainArguments()'s defaults, and the flags people type set the fields they name."""
    import dataclasses

    from magrpo_edu.cli import build_parser
    from magrpo_edu.config import TrainArguments

    names = [f.name for f in dataclasses.fields(TrainArguments)]
    parsed = vars(build_parser().parse_args(["train"]))
    assert {k: parsed[k] for k in names} == dataclasses.asdict(TrainArguments())
    parsed = vars(build_parser().parse_args(["train", "-G", "3", "--max-new-tokens", "9", "--lr", "0.01",
                                             "--no-progress", "--overwrite", "--prompts-per-step", "2"]))
    assert (parsed["G"], parsed["max_new_tokens"], parsed["lr"], parsed["progress"], parsed["overwrite"],
            parsed["prompts_per_step"]) == (3, 9, 0.01, False, True, 2)
    assert TrainArguments.config_flags()["num_generations"] == "--num-generations"
