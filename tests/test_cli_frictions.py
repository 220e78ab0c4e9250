"""Issue 61: what a new user met on the README's path, each fixed and held here.

1. the end of a run prints a few headline lines and results.md's path, not all of results.md;
2. the torch-threads line's arithmetic reads right when other processes keep the cores busy;
3. a finished run's errors suggest only what works (never --resume, which refuses a finished run);
4. a numeric option's bad value is named as the user typed it (`--steps must be a positive integer, got -5`);
5. an unknown task, model or choice names the closest known one (did you mean), before any model loads;
6. before training on the CPU the plan says how long training should take, from a measured step, and
   how to make it shorter.
And the README's learner's path: the notebooks extra, Jupyter, notebook 00.
"""
import json
import re
from pathlib import Path

import pytest

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents, threads
from magrpo_edu.run import describe, estimate, experiment, plan as run_plan
from magrpo_edu.run.cli import build_parser, main
from magrpo_edu.tasks.registry import get_task

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_model(monkeypatch):
    """Any attempt to load a model fails the test: the check must come first."""
    def refuse(*a, **kw):
        raise AssertionError("a model was loaded before the options were checked")
    monkeypatch.setattr(experiment, "load_model", refuse)


def error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("magrpo-edu: error: "), lines
    return lines[0]


# --- a finished tiny run (a few seconds), shared by 1 and 3 ---

@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """`magrpo-edu train` to the end on the tiny model: (its output folder, what it printed)."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("frictions") / "run"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        rc = main(["train", "--steps", "4", "-G", "2", "--max-new-tokens", "4", "--eval-rows", "2", "--no-progress",
                   "--device", "cpu", "--out", str(out)])
    assert rc == 0
    return out, printed.getvalue()


def test_the_end_of_a_run_is_a_short_summary_and_the_path_of_results_md(finished_run):
    out, printed = finished_run
    report = (out / "results.md").read_text()
    assert len(report.splitlines()) > 30  # the full report is written...
    end = [x for x in printed[printed.index("Step 2 of 4"):].splitlines()[1:] if x.strip()]  # after the halfway line
    assert 3 <= len(end) <= 8, end  # ...and the end of the run prints a few lines of it, not all of it
    assert "## Before and after" not in printed and "| method |" not in printed
    results = json.loads((out / "results.json").read_text())
    steps = [results["eval_before"]["eval/reward"], results["eval_during_training"][0]["eval/reward"],
             results["eval_after"]["eval/reward"]]
    assert re.search(r"length: held-out joint reward \(of 1\) untrained {:.3f} -> step 2 {:.3f} -> step 4 {:.3f} "
                     r"\(2 held-out rows x 2 samples\)".format(*steps), end[0]), end[0]
    assert any(line.startswith("baselines (normalised): best ") and "MAGRPO" in line for line in end), end
    assert end[-1].strip() == str(out / "results.md")  # the last line: where the rest is


def test_headline_summary_names_the_best_baseline_on_the_tasks_column():
    from magrpo_edu.run.report import headline_summary

    results = dict(task="coding", eval_rows=10, train_seconds=61.2, total_seconds=99.0,
                   eval_before={"eval/reward": 1.5}, eval_after={"eval/reward": 2.5},
                   eval_during_training=[{"step": 5, "eval/reward": 2.0}, {"step": 10, "eval/reward": 2.5}],
                   comparison=[dict(method="single", samples=40, **{"pass_or_not@1": 0.2}),
                               dict(method="sequential", samples=40, **{"pass_or_not@1": 0.4}),
                               dict(method="magrpo", samples=40, **{"pass_or_not@1": 0.6}),
                               dict(method="magrpo_2turn", samples=40, **{"pass_or_not@1": 0.9})])
    text = headline_summary(results, get_task("coding"), 10, Path("runs/coding"))
    lines = text.splitlines()
    assert lines[0] == "coding: held-out joint reward (of 4) untrained 1.500 -> step 5 2.000 -> step 10 2.500 " \
                       "(10 held-out rows x 4 samples)"
    assert lines[1] == "baselines (pass_or_not@1): best sequential 0.400, MAGRPO 0.600"
    assert lines[2] == "training took 61 s, the whole run 99 s" and lines[-1] == "  runs/coding/results.md"


# --- 2: the threads line ---

@pytest.mark.parametrize("cores, busy", [(2, 0), (2, 1), (4, 1), (2, 2), (2, 3), (1, 1)])
def test_the_threads_line_adds_up(monkeypatch, cores, busy):
    """`torch threads: 1 of 2 usable cores (3 busy ...)` read as wrong arithmetic: the line now says how many
    cores, how many are busy elsewhere and so how many threads, in sums that hold."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "usable_cores", lambda: cores)
    monkeypatch.setattr(threads, "busy_elsewhere", lambda: busy)
    n, why = threads.sensible_threads()
    assert n == max(1, cores - busy) and why.startswith(f"{n} ")
    assert not re.search(r"\d+ of \d+ usable cores? \(", why)  # the old "1 of 2 usable cores (3 busy" form
    core_s = "s" if cores != 1 else ""
    if busy == 0:
        assert why.startswith(f"{n} of {cores} usable core{core_s};")
    elif busy < cores:
        assert f"({cores} usable core{core_s}, {busy} busy with other processes right now, so {cores - busy} free)" in why
    else:
        assert f"({cores} usable core{core_s}, all busy: other processes are running {busy} thread" in why
        assert "so this run takes the least, 1)" in why


# --- 3: a finished run's suggestions work ---

def test_a_finished_runs_errors_suggest_what_works(finished_run, capsys, no_model):
    out, _ = finished_run
    rc = main(["train", "--out", str(out)])  # the folder is taken: what the error says must work
    line = error_line(capsys)
    assert rc == 2 and "--resume" not in line, line
    assert f"magrpo-edu eval --checkpoint {out} evaluates its agents again" in line and "cannot be resumed" in line
    free = re.search(r"--out (\S+), which is free", line).group(1)
    assert not Path(free).exists()
    rc = main(["train", "--resume", str(out)])
    line = error_line(capsys)
    assert rc == 2 and "that run is finished" in line and f"--out {free}" in line and "--steps N" in line
    # each suggestion works: a new run in the free folder passes every check, and eval evaluates the agents
    assert run_plan.plan_run(out=free, max_steps=8)["out_dir"] == Path(free)


def test_eval_of_a_finished_run_works(finished_run, capsys):
    out, _ = finished_run
    assert main(["eval", "--checkpoint", str(out), "--device", "cpu"]) == 0
    assert "step 4 of 4" in capsys.readouterr().out


def _saved_run(tmp_path, make_model, small_tokenizer, rows, formatters, step: int):
    """A `magrpo-edu train` checkpoint in tmp_path/run at `step` of 6 (without training)."""
    cfg = MAGRPOConfig(max_steps=6, max_new_tokens=8, num_generations=2, progress=False, save_steps=2)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), lambda c, r: [0.0] * len(c[0]),
                       formatters, rows, cfg, checkpoint_dir=tmp_path / "run" / "checkpoint")
    tr.metadata = dict(run=dict(task="length", model="tiny", agents="lora", eval_rows=1))
    tr.step = step
    tr.save(tmp_path / "run" / "checkpoint")
    return tmp_path / "run"


def test_a_stopped_run_is_offered_resume_and_resume_takes_it(tmp_path, capsys, no_model, make_model, small_tokenizer,
                                                              rows, formatters):
    out = _saved_run(tmp_path, make_model, small_tokenizer, rows, formatters, step=2)
    assert main(["train", "--out", str(out)]) == 2
    line = error_line(capsys)
    assert f"--resume {out} to continue it (its checkpoint is at step 2 of 6)" in line and "finished" not in line
    assert run_plan.plan_run(resume=str(out))["resume"]["step"] == 2  # the suggestion works


# --- 4: numeric options are named as typed ---

@pytest.mark.parametrize("command", ["train", "pretrain", "pretrain-code"])
def test_every_refused_number_names_the_option_as_typed(command, tmp_path, capsys, monkeypatch, no_model):
    """Every int or float option of each command, given -7 and 0 (each under every name it has): where the
    settings refuse the value, the one line names the option as typed and the value, never a dataclass field."""
    def stop(*a, **kw):
        raise RuntimeError("accepted")
    monkeypatch.setattr(experiment, "build_run", stop)
    monkeypatch.setattr("magrpo_edu.pretraining.pretrain.pretrain", stop)
    monkeypatch.setattr("magrpo_edu.pretraining.code_model.pretrain_code", stop)
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    numeric = [a for a in sub._actions if a.option_strings and getattr(a.type, "__name__", "") in ("int", "float")]
    assert len(numeric) >= 8
    refused = 0
    for action in numeric:
        for option in action.option_strings:
            for value in ("-7", "0"):
                try:
                    rc = main([command, option, value, "--out", str(tmp_path / "o")])
                except RuntimeError:
                    capsys.readouterr()
                    continue
                line = error_line(capsys)
                assert rc == 2
                if option in ("--eval-rows", "--eval_rows"):  # checked against the task's rows, named the same way
                    assert line.startswith(f"magrpo-edu: error: --eval-rows {value} is not allowed"), line
                else:
                    assert line.startswith(f"magrpo-edu: error: {option} must be ") and line.endswith(f", got {value}"), line
                assert "MAGRPOConfig" not in line and "Arguments." not in line
                refused += 1
    assert refused >= 8
    assert not (tmp_path / "o").exists()


def test_steps_minus_five_is_the_issues_own_example(tmp_path, capsys, no_model):
    assert main(["train", "--steps", "-5", "--out", str(tmp_path / "o")]) == 2
    assert error_line(capsys) == "magrpo-edu: error: --steps must be a positive integer, got -5"


def test_a_bad_value_the_user_did_not_type_keeps_naming_its_option():
    """A checkpoint's or default's refused value (not on the command line) is named with the option that sets it."""
    from magrpo_edu.run.cli import _in_flags

    msg = "MAGRPOConfig.max_steps=0 is not allowed: max_steps must be None or an integer >= 1."
    assert _in_flags(msg, {}) == msg.rstrip(".") + " (set with --max-steps)."
    assert _in_flags(msg, {"max_steps": ("--steps", "0")}) == "--steps must be a positive integer, got 0"


# --- 5: did you mean ---

@pytest.mark.parametrize("args, says", [
    (["--task", "tldrr"], r"argument --task: invalid choice: 'tldrr'; did you mean 'tldr'\? \(choose from "),
    (["--task", "Lenght"], r"invalid choice: 'Lenght'; did you mean 'length'\?"),
    (["--advantage", "rlo"], r"argument --advantage: invalid choice: 'rlo'; did you mean 'rloo'\?"),
    (["--joint-mode", "crss"], r"invalid choice: 'crss'; did you mean 'cross'\?"),
    (["--agents", "seperate"], r"invalid choice: 'seperate'; did you mean 'separate'\?"),
    (["--report-to", "tensorbord"], r"invalid choice: 'tensorbord'; did you mean 'tensorboard'\?"),
    (["--model", "smolm2"], r"unknown model name 'smolm2'; did you mean 'smollm2'\? The known names are 'tiny', "),
    (["--model", "tinny"], r"unknown model name 'tinny'; did you mean 'tiny'\?"),
    (["--model", "gpt"], r"unknown model name 'gpt'\. The known names are "),  # nothing close: no guess
    (["--task", "summarise"], r"invalid choice: 'summarise' \(choose from "),
    (["--num-generation", "4"], r"unrecognized arguments: --num-generation 4; did you mean '--num-generations'\?"),
    (["--max-new-token=8"], r"unrecognized arguments: --max-new-token=8; did you mean '--max-new-tokens'\?"),
])
def test_an_unknown_name_suggests_the_closest_before_any_model_loads(args, says, tmp_path, capsys, no_model):
    out = tmp_path / "o"
    assert main(["train", *args, "--out", str(out)]) == 2
    line = error_line(capsys)
    assert re.search(says, line), line
    assert not out.exists()


def test_a_mistyped_command_and_python_settings_get_the_suggestion_too(tmp_path, capsys):
    assert main(["trian"]) == 2
    assert "invalid choice: 'trian'; did you mean 'train'?" in error_line(capsys)
    with pytest.raises(run_plan.SettingsError, match=r"unknown task 'lenght'; did you mean 'length'\? The registered"):
        run_plan.plan_run(task="lenght", out=str(tmp_path / "o"))
    with pytest.raises(run_plan.SettingsError, match=r"unknown model name 'smolm2-135m'; did you mean 'smollm2-135m'\?"):
        run_plan.plan_run(model="smolm2-135m", out=str(tmp_path / "o"))
    for fine in ("SmolLM2", "tiny-code", "HuggingFaceTB/SmolLM2-135M-Instruct", "some-owner/some-model", str(tmp_path)):
        run_plan.check_model_name(fine)  # a known name, a hub id, a folder: left to load_model


# --- 6: the time estimate ---

def test_a_cpu_run_of_smollm2_says_how_long_before_anything_loads(tmp_path, capsys, no_model):
    with pytest.raises(AssertionError, match="a model was loaded"):
        main(["train", "--model", "smollm2", "--device", "cpu", "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("Time:"))
    per_step = 71 * 60 / 150 * 48 / 96  # the TL;DR card's step, scaled from its 96 new tokens to the length task's 48
    assert f"training 300 steps on this CPU should take about {300 * per_step / 60:.0f} min (an estimate: " in line
    assert "weights/smollm2_tldr/README.md" in line and "--steps 30" in line
    assert line in out.splitlines()[:7]  # in the plan, among the first lines printed


def test_the_estimate_scales_a_measured_step_and_only_on_the_cpu(tmp_path):
    demo = next(m for m in estimate.MEASURED if m.family == "tiny" and m.tasks == "writing")
    assert estimate.estimate_seconds("tiny", "length", 300, 4, 1, 48)[0] == pytest.approx(demo.seconds)
    assert estimate.estimate_seconds("tiny", "tldr", 150, 8, 1, 48)[0] == pytest.approx(demo.seconds)  # half the steps, 2x G
    assert estimate.estimate_seconds("Qwen/Qwen2.5-0.5B", "length", 300, 4, 1, 48) is None
    # the family comes from the task record (Task.cost_family), not from a list of task names in run/
    assert estimate.estimate_seconds("tiny", "humaneval", 200, 4, 1, 64)[1].tasks == "coding"
    assert estimate.estimate_seconds("tiny", "arxiv", 200, 4, 1, 64)[1].tasks == "writing"
    plan = run_plan.plan_run(out=str(tmp_path / "o"), max_steps=3000)
    assert "Time: training 3000 steps on this CPU should take about 20 min" in describe.describe_plan(plan)
    assert estimate.describe(dict(plan, device="cuda")) is None and estimate.describe(dict(plan, device="cuda:0")) is None
    short = estimate.describe(run_plan.plan_run(out=str(tmp_path / "o"), max_steps=3))
    assert "less than a second" in short or "about" in short
    assert "--steps" not in short  # nothing to shorten


def test_each_measured_step_is_in_its_source():
    """The figures the estimate starts from are the ones the named files hold."""
    by = {(m.family, m.tasks): m for m in estimate.MEASURED}
    for key, run in ((("tiny", "writing"), "length-demo"), (("tiny", "coding"), "coding-tiny")):
        m, r = by[key], json.loads((ROOT / "experiments" / "runs" / run / "results.json").read_text())
        assert f"experiments/runs/{run}/results.json" in m.source
        assert (m.seconds, m.steps, m.num_generations, m.max_new_tokens) == \
            (r["train_seconds"], r["steps"], r["num_generations"], r["max_new_tokens"])
        assert m.prompts_per_step == (r.get("prompts_per_step") or 1)
    m = by[("smollm2", "writing")]
    card = (ROOT / "weights/smollm2_tldr/README.md").read_text()
    settings = json.loads((ROOT / "weights/smollm2_tldr/results.json").read_text())["settings"]
    assert "71 minutes of training on one CPU core" in card and m.seconds == 71 * 60
    assert (m.steps, m.num_generations, m.max_new_tokens) == (settings["steps"], settings["G"], settings["max_new_tokens"])
    m = by[("smollm2", "coding")]
    r = json.loads((ROOT / "weights/smollm2_coding/results.json").read_text())
    assert (m.seconds, m.steps) == (r["train_seconds"]["0"], r["steps"]["0"])
    assert (m.num_generations, m.prompts_per_step, m.max_new_tokens) == \
        (r["settings"]["G"], r["settings"]["prompts_per_step"], r["settings"]["max_new_tokens"])


# --- the README's learner's path ---

def test_the_readme_has_a_learners_path():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Learner's path"):]
    section = section[:section.index("\n## ", 1)]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^notebooks = \[.*"jupyterlab', pyproject, re.M)  # the extra it installs holds Jupyter
    assert "download.pytorch.org/whl/cpu" in section and 'pip install ".[notebooks]"' in section
    assert section.index("download.pytorch.org/whl/cpu") < section.index('".[notebooks]"')  # CPU torch first
    assert "jupyter lab notebooks/00_quickstart.ipynb" in section and (ROOT / "notebooks/00_quickstart.ipynb").exists()
    assert len(section.split()) < 80


def test_the_plan_says_where_each_setting_came_from(tmp_path):
    """One precedence order (MAGRPOConfig < the command's defaults < the task < its LoRA recipe < the model's recipe
    < given), and the plan prints each main setting with its source."""
    from magrpo_edu.run.describe import describe_plan
    from magrpo_edu.run.plan import plan_run, run_defaults, settings_layers

    plan = plan_run(task="coding", model="smollm2-135m", learning_rate=1e-4, out=str(tmp_path / "a"))
    src, line = plan["sources"], describe_plan(plan).splitlines()[-1]
    assert src["learning_rate"] == "given" and plan["config"].learning_rate == 1e-4  # the user wins
    assert src["max_steps"].startswith("the smollm2-135m recipe on coding") and plan["config"].max_steps == 75
    assert src["temperature"] == "the coding task" and "num_generations" in src
    assert line.startswith("  settings: ") and "learning_rate 0.0001 (given)" in line
    tiny = plan_run(task="coding", out=str(tmp_path / "b"))  # tiny-code: the task's LoRA recipe, no model recipe
    assert tiny["sources"]["learning_rate"] == "the coding task's LoRA recipe" and tiny["config"].learning_rate == 1e-3
    full = plan_run(task="tldr", agents="separate", out=str(tmp_path / "c"))
    assert full["sources"]["learning_rate"] == "magrpo-edu train's default for --agents separate"
    assert "prompts_per_step" not in full["sources"] and "prompts_per_step 1 (MAGRPOConfig's default)" in describe_plan(full)
    merged = {}
    for _, values in settings_layers(get_task("coding"), "lora", "smollm2-135m"):
        merged.update(values)
    assert merged == run_defaults(get_task("coding"), "lora", "smollm2-135m")


@pytest.mark.parametrize("task, agents, model, turns", [("coding", "lora", "smollm2-135m", 1), ("coding", "lora", None, 1),
                                                        ("coding", "lora", None, 2), ("tldr", "separate", None, 1),
                                                        ("arxiv", "lora", None, 1)])
def test_config_for_is_the_config_a_run_trains_with(tmp_path, task, agents, model, turns):
    """Issue 59: a Python user who builds the trainer gets the command's settings in one call (`config_for`), the same
    layers in the same order as `plan_run` (only the output folder's logging_dir and the progress bar differ)."""
    import dataclasses

    from magrpo_edu import config_for

    kw = dict(task=task, agents=agents, out=str(tmp_path / "o"), num_turns=turns, **({"model": model} if model else {}))
    planned = run_plan.plan_run(**kw)["config"]
    mine = config_for(task, agents, model, num_turns=turns)  # no model: the task's (tiny-code-2turn for two turns)
    skip = {"logging_dir", "progress"}
    assert {f.name: getattr(mine, f.name) for f in dataclasses.fields(mine) if f.name not in skip} == \
           {f.name: getattr(planned, f.name) for f in dataclasses.fields(planned) if f.name not in skip}
    assert config_for(task, agents, model, max_steps=7, top_k=3).max_steps == 7
    with pytest.raises(ValueError, match="config_for takes MAGRPOConfig's fields; 'steps' is not one"):
        config_for(task, steps=3)


def test_dynamic_sampling_is_refused_under_data_parallel(tmp_path, monkeypatch):
    """MAGRPOConfig says dynamic sampling is one process only (every process would draw the same further problems);
    a cold review found nothing refused it. The plan and the trainer both do, before a model loads."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(run_plan.SettingsError, match="dynamic sampling is single-process only"):
        run_plan.plan_run(dynamic_sampling=2, prompts_per_step=2, out=str(tmp_path / "o"))
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer

    with pytest.raises(ValueError, match="single-process only"):
        MAGRPOTrainer([object(), object()], lambda c, r: [0.0], [str, str], [{"x": 1}],
                      MAGRPOConfig(dynamic_sampling=2))
