"""`magrpo-edu train` checks every option before loading a model: a mistake is one line
`magrpo-edu: error: ...` on stderr, exit status 2, and no output folder is created or touched."""
import dataclasses
import re

import pytest

from magrpo_edu.tasks.registry import get_task

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.run import experiment, plan as run_plan
from magrpo_edu.run.cli import main


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
    # a value the settings refuse is named by the option as typed and the value as typed (issue 61)
    (["--max-new-tokens", "0"], r"error: --max-new-tokens must be a positive integer, got 0$"),
    (["--max_new_tokens", "0"], r"error: --max_new_tokens must be a positive integer, got 0$"),
    (["--max-new-tokens", "-5"], r"error: --max-new-tokens must be a positive integer, got -5$"),
    (["--eval-rows", "0"], r"--eval-rows 0 is not allowed: the length task has 30 held-out rows, so give a number from 1 to 30"),
    (["--eval-rows", "-1"], r"--eval-rows -1 is not allowed"),
    (["--eval-rows", "31"], r"--eval-rows 31 is not allowed"),
    (["--steps", "0"], r"error: --steps must be a positive integer, got 0$"),
    (["--steps", "-5"], r"error: --steps must be a positive integer, got -5$"),
    (["--max-steps=-5"], r"error: --max-steps must be a positive integer, got -5$"),
    (["--max_steps", "none"], r"max_steps=None is not allowed here"),
    (["-G", "1"], r"error: -G must be an integer >= 2 \(a group needs at least two samples\), got 1$"),
    (["-G1"], r"error: -G must be an integer >= 2 .*, got 1$"),
    (["--temperature", "inf"], r"error: --temperature must be a finite number > 0, got inf"),
    (["--lr", "nan"], r"error: --lr must be a finite number > 0, got nan"),
    (["--beta", "-0.1"], r"error: --beta must be a finite number >= 0 .*, got -0.1"),
    (["--beta", "nan"], r"error: --beta must be a finite number >= 0 .*, got nan"),
    (["--seed", str(2**63)], r"error: --seed must be an integer that fits in 64 bits signed.*, got 9223372036854775808"),
    (["--save-steps", "0"], r"error: --save-steps must be none or a positive integer, got 0"),
    (["--prompts-per-step", "0"], r"error: --prompts-per-step must be a positive integer .*, got 0"),
    (["--top-p", "2"], r"error: --top-p must be a number in \(0, 1\], got 2"),
    (["--advantage-clip", "-1"], r"error: --advantage-clip must be none \(no clamp\) or a finite number > 0, got -1"),
    (["--top-k", "-1"], r"error: --top-k must be an integer >= 0 .*, got -1"),
    (["--discount", "2"], r"error: --discount must be a number in \[0, 1\], got 2"),
    (["--turns", "2"], r"--num-turns 2 needs a transition"),
    (["--advantage", "none", "--scale_rewards", "group"], r"advantage='none' with scale_rewards='group' is refused"),
    (["--joint_mode", "cross", "-G", "200"], r"joint_mode='cross' with num_generations=200"),
    # mistakes argparse finds come in the same one-line format
    (["--advantage", "median"], r"argument --advantage: invalid choice: 'median'"),
    (["--steps", "ten"], r"argument --max_steps/--max-steps/--steps: invalid int value: 'ten' \(see magrpo-edu train --help\)"),
    (["--no-such-option"], r"unrecognized arguments: --no-such-option"),
    (["--num-generation", "4"], r"unrecognized arguments: --num-generation 4"),  # no prefix matching
    (["--learning", "0.1"], r"unrecognized arguments: --learning 0.1"),
    (["--task", "summarise"], r"argument --task: invalid choice: 'summarise'"),
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
    assert run_plan.plan_run(out=str(tmp_path / "a"))["config"].beta == get_task("length").beta > 0
    assert run_plan.plan_run(task="tldr", out=str(tmp_path / "b"))["config"].beta == 0.0
    assert run_plan.plan_run(task="tldr", beta=0.3, out=str(tmp_path / "c"))["config"].beta == 0.3


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


def _saved_run(tmp_path, make_model, small_tokenizer, rows, formatters, run=None):
    """A checkpoint in tmp_path/run as `magrpo-edu train` writes it (without training it)."""
    cfg = MAGRPOConfig(max_steps=6, max_new_tokens=8, num_generations=2, learning_rate=2e-3, beta=0.05, progress=False,
                       save_steps=2)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), lambda c, r: [0.0] * len(c[0]),
                       formatters, rows, cfg, checkpoint_dir=tmp_path / "run" / "checkpoint")
    tr.metadata = dict(run=run or dict(task="length", model="tiny", agents="lora", eval_rows=1))
    tr.save(tmp_path / "run" / "checkpoint")
    return cfg


def test_resume_with_other_settings_is_refused(tmp_path, capsys, no_model, make_model, small_tokenizer, rows, formatters):
    cfg = _saved_run(tmp_path, make_model, small_tokenizer, rows, formatters)
    rc, err = run_cli(["--resume", str(tmp_path / "run"), "--steps", "9"], capsys)
    assert rc == 2 and "--max-steps 9 (the run has 6)" in err and "leave those options out" in err
    rc, err = run_cli(["--resume", str(tmp_path / "run"), "--task", "tldr", "--lr", "0.1"], capsys)
    assert rc == 2 and "--task 'tldr' (the run has 'length')" in err and "--learning-rate 0.1 (the run has 0.002)" in err
    rc, err = run_cli(["--resume", str(tmp_path / "run"), "--out", str(tmp_path / "elsewhere")], capsys)
    assert rc == 2 and "writes there; leave --out out" in err
    # the run's own settings come from its checkpoint; progress, save_steps and report_to may change
    plan = run_plan.plan_run(resume=str(tmp_path / "run"), save_steps=3, progress=False)
    assert plan["config"] == dataclasses.replace(cfg, save_steps=3, logging_dir=str(tmp_path / "run" / "tensorboard"))
    assert (plan["run"].task, plan["run"].eval_rows, plan["out_dir"]) == ("length", 1, tmp_path / "run")


def test_a_checkpoint_with_the_old_setting_names_is_refused_clearly(tmp_path, capsys, no_model, make_model,
                                                                     small_tokenizer, rows, formatters):
    """Checkpoints written before the settings took MAGRPOConfig's names (never in a release) are an error, not a misread."""
    _saved_run(tmp_path, make_model, small_tokenizer, rows, formatters,
               run=dict(task="length", model="tiny", agents="lora", steps=6, G=2, lr=2e-3, eval_rows=1, turns=1))
    rc, err = run_cli(["--resume", str(tmp_path / "run")], capsys)
    assert rc == 2 and "written by an earlier magrpo-edu" in err and "start a new run" in err


def test_unknown_and_old_setting_names_are_named():
    with pytest.raises(run_plan.SettingsError, match=r"unknown setting\(s\) 'steps', 'G'.*'steps' is 'max_steps'.*"
                                                       r"'G' is 'num_generations' \(the command line's -G is an alias\)"):
        run_plan.plan_run(steps=3, G=2)
    with pytest.raises(run_plan.SettingsError, match=r"unknown setting\(s\) 'num_agents'"):
        run_plan.plan_run(num_agents=3)  # the task's


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
    res = experiment.run_training(task="tldr", max_steps=2, eval_rows=2, max_new_tokens=8, out=str(out),
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


def test_the_command_line_is_the_config_dataclasses():
    """One name and one default per option: every MAGRPOConfig field a run takes and every RunArguments
    field is an option under its own name (and the dashed form); the familiar short names are
    aliases; the parser fills in no defaults (plan_run does, from the dataclasses and run_defaults)."""
    from magrpo_edu.run.cli import build_parser
    from magrpo_edu.config import RunArguments

    train = build_parser()._subparsers._group_actions[0].choices["train"]
    options = {o for a in train._actions for o in a.option_strings}
    for name in run_plan.CONFIG_FIELDS + run_plan.RUN_FIELDS:
        kind = type(getattr(MAGRPOConfig(), name, None) if name in run_plan.CONFIG_FIELDS else getattr(RunArguments(), name))
        if kind is bool:
            continue
        assert f"--{name}" in options and f"--{name.replace('_', '-')}" in options, name
    assert {"-G", "--steps", "--lr", "--turns", "--no-progress", "--overwrite", "--no-batch-agents"} <= options
    assert "--num_agents" not in options and "--logging_dir" not in options  # the task's; the output folder's
    assert {k: v for k, v in vars(build_parser().parse_args(["train"])).items() if k not in ("func", "command")} == {}
    parsed = vars(build_parser().parse_args(["train", "-G", "3", "--max-new-tokens", "9", "--lr", "0.01",
                                             "--no-progress", "--overwrite", "--prompts-per-step", "2", "--steps", "5",
                                             "--joint_mode", "cross", "--advantage", "rloo", "--scale-rewards", "zscore",
                                             "--advantage_clip", "none", "--turns", "2", "--report-to", "none"]))
    assert parsed["report_to"] == "none"  # a tracker's name, not None
    assert (parsed["num_generations"], parsed["max_new_tokens"], parsed["learning_rate"], parsed["progress"],
            parsed["overwrite"], parsed["prompts_per_step"], parsed["max_steps"], parsed["joint_mode"],
            parsed["advantage"], parsed["scale_rewards"], parsed["advantage_clip"], parsed["num_turns"]) == \
        (3, 9, 0.01, False, True, 2, 5, "cross", "rloo", "zscore", None, 2)


def test_help_shows_each_default_once_and_booleans_as_switches(capsys):
    assert main(["train", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--overwrite [OVERWRITE]" not in text and "--progress [PROGRESS]" not in text
    assert "--num_generations N, --num-generations N, -G N" in text
    assert "(default: the task's: " in text and "length 48" in text and "arxiv 360" in text  # max_new_tokens
    # learning_rate: per agent kind, and the coding task's LoRA recipe (Task.lora_recipe)
    assert "tldr 0.002 with --agents lora / 0.0005 with --agents separate" in text
    assert "coding 0.001 with --agents lora / 0.0005 with --agents separate" in text
    # max_steps: the quick demo's, and the coding recipe's five minutes with LoRA agents
    assert ("coding 170 with --agents lora / 300 with --agents separate, coding-strict 170 with --agents lora / 300 "
            "with --agents separate, humaneval 300, length 300") in text
    # the layer above: the recipe measured for SmolLM2 on coding (Task.model_recipes), for every field it sets
    assert "0.0003 with --model smollm2-135m on coding" in text and "75 with --model smollm2-135m on coding" in text


def test_the_variants_reach_the_config(tmp_path):
    plan = run_plan.plan_run(joint_mode="cross", advantage="rloo", scale_rewards="zscore", top_k=5,
                               out=str(tmp_path / "o"))
    c = plan["config"]
    assert (c.joint_mode, c.advantage, c.scale_rewards, c.top_k, c.num_agents) == ("cross", "rloo", "zscore", 5, 2)


@pytest.mark.parametrize("args, says", [
    (["--docs", "3"], r"the following arguments are required: --out \(see magrpo-edu pretrain --help\)"),
    (["--out", "{tmp}/p", "--docs", "0"], r"error: --docs must be a positive integer, got 0$"),
    (["--out", "{tmp}/p", "--lr", "-1"], r"error: --lr must be a finite number > 0, got -1$"),
    (["--out", "{tmp}/p", "--minutes", "0"], r"error: --minutes must be none or a finite number > 0, got 0"),
    (["--out", "{tmp}/p", "--cooldown-coding-share", "0.7"], r"cooldown_arxiv_share=0.4 is not allowed: .* at most 1 - "
                                                              r"cooldown_coding_share = 0.3 "),
    (["--out", "{tmp}/p", "--width", "x"], r"argument --hidden_size/--hidden-size/--width: invalid int value: 'x'"),
])
def test_pretrain_options_are_checked_before_anything_is_written(args, says, tmp_path, capsys):
    rc = main(["pretrain", *[a.format(tmp=tmp_path) for a in args]])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("magrpo-edu: error: "), lines
    assert re.search(says, lines[0]), lines[0]
    assert not (tmp_path / "p").exists()


def test_pretrain_defaults_are_written_once():
    """`pretrain()`'s defaults are PretrainArguments' (the command line adds none of its own)."""
    import inspect

    from magrpo_edu.run.cli import build_parser
    from magrpo_edu.pretraining.pretrain import PretrainArguments, pretrain

    assert [p for p in inspect.signature(pretrain).parameters] == ["out", "command", "settings"]
    parsed = vars(build_parser().parse_args(["pretrain", "--out", "o", "--docs", "5", "--width", "64"]))
    assert {k: v for k, v in parsed.items() if k not in ("func", "command")} == dict(out="o", num_docs=5, hidden_size=64)
    assert PretrainArguments(out="o").max_steps == 1600  # the shipped run's


def test_no_parser_takes_an_abbreviation(capsys):
    """argparse would take `--num-generation 4` for --num-generations and start a full run: every parser and
    subparser of the command line refuses a prefix instead."""
    from magrpo_edu.run.cli import build_parser

    parser = build_parser()
    subparsers = parser._subparsers._group_actions[0].choices
    assert not parser.allow_abbrev and subparsers and all(not p.allow_abbrev for p in subparsers.values())
    assert main(["eval", "--checkpoin", "x"]) == 2  # not taken for --checkpoint
    assert "the following arguments are required: --checkpoint" in capsys.readouterr().err
    assert main(["pretrain", "--out", "x", "--max-step", "3"]) == 2
    assert "unrecognized arguments: --max-step 3" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_stops_a_run_as_ctrl_c_does_and_leaves_no_empty_folder(sigint, tmp_path):
    """A run stopped with SIGTERM (a scheduler, `kill`) once its output folder exists: as Ctrl-C, the step
    finishes and a checkpoint and the history so far are saved there, and the command exits with 130;
    where Ctrl-C is ignored (a job started with nohup) it stops at once and still saves what it has.
    Never an empty runs/<task>/ left behind."""
    import json
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    disposition = signal.SIG_DFL if sigint == "default" else signal.SIG_IGN
    proc = subprocess.Popen([sys.executable, "-m", "magrpo_edu.run.cli", "train", "--task", "length", "--steps", "500",
                             "-G", "2", "--max-new-tokens", "8", "--eval-rows", "1", "--no-progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, disposition))
    try:
        deadline = time.time() + 240
        while not out.is_dir() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)  # the folder appears when the untrained agents and the baselines are evaluated
        assert out.is_dir(), "the run never created its output folder"
        time.sleep(1.0)  # a step or two into training
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr[-2000:]
    assert "magrpo-edu: interrupted" in stderr and any(out.iterdir())
    history = json.loads((out / "history.json").read_text())
    if sigint == "default":  # the step was finished: a checkpoint at it, to resume from
        assert "Continue with: magrpo-edu train --resume" in stderr
        step = json.loads((out / "checkpoint" / "trainer_state.json").read_text())["step"]
        assert 0 <= step < 500 and len(history) == step
