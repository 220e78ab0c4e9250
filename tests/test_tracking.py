"""Run tracking (config.report_to, magrpo_edu.tracking): the trackers receive the history's numbers.

TensorBoard is read back from its event files; wandb / trackio (not installed in CI) are checked
through a stand-in module with their API's shape (init / log / finish), and a tracker whose package
is missing is refused with the package's name before any model loads."""
import importlib.machinery
import importlib.util
import json
import sys
import types

import pytest

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.run.cli import main
from magrpo_edu import tracking
from magrpo_edu.tracking import TrackerNotInstalledError, make_callbacks

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # the test extra installs it


def _reward(c, r):
    return [float(len(a)) - 0.5 * len(b) for a, b in zip(c[0], c[1])]


def scalars(logdir) -> dict:
    ea = EventAccumulator(str(logdir))
    ea.Reload()
    return {tag: [(e.step, e.value) for e in ea.Scalars(tag)] for tag in ea.Tags()["scalars"]}


def test_tensorboard_holds_the_history_and_the_evaluations(tmp_path, make_model, small_tokenizer, rows, formatters):
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=6, max_steps=4, eval_steps=2, progress=False,
                       report_to="tensorboard", logging_dir=str(tmp_path / "tb"))
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), _reward, formatters, rows, cfg,
                       eval_dataset=rows[:2])
    tr.train()
    tb = scalars(tmp_path / "tb")
    for key in ("reward", "reward_std", "loss/agent_0", "completions/mean_length/agent_1"):
        assert [s for s, _ in tb[key]] == [1, 2, 3, 4]
        assert [v for _, v in tb[key]] == pytest.approx([h[key] for h in tr.history], rel=1e-6, abs=1e-6)
    assert "step" not in tb
    assert [s for s, _ in tb["eval/reward"]] == [2, 4]
    assert [v for _, v in tb["eval/reward"]] == pytest.approx([e["eval/reward"] for e in tr.eval_history], rel=1e-6)


@pytest.mark.slow
def test_the_command_line_logs_to_out_tensorboard_with_eval_before_and_after(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["train", "--task", "length", "--steps", "3", "-G", "2", "--max-new-tokens", "8", "--eval-rows", "1",
               "--no-progress", "--device", "cpu", "--out", str(out), "--report-to", "tensorboard"])
    assert rc == 0
    tb = scalars(out / "tensorboard")
    history = json.loads((out / "history.json").read_text())
    results = json.loads((out / "results.json").read_text())
    assert [s for s, _ in tb["reward"]] == [1, 2, 3]
    assert [v for _, v in tb["reward"]] == pytest.approx([h["reward"] for h in history], rel=1e-6, abs=1e-6)
    assert tb["eval/reward"] == [(0, pytest.approx(results["eval_before"]["eval/reward"], rel=1e-6)),
                                 (3, pytest.approx(results["eval_after"]["eval/reward"], rel=1e-6))]


@pytest.mark.parametrize("name", ["wandb", "trackio"])
def test_wandb_and_trackio_get_init_log_and_finish(name, monkeypatch, make_model, small_tokenizer, rows, formatters):
    calls = []
    fake = types.ModuleType(name)
    fake.__spec__ = importlib.machinery.ModuleSpec(name, None)
    fake.init = lambda **kw: calls.append(("init", kw)) or object()
    fake.log = lambda data, step=None: calls.append(("log", step, dict(data)))
    fake.finish = lambda: calls.append(("finish",))
    monkeypatch.setitem(sys.modules, name, fake)
    at_exit = []
    monkeypatch.setattr(tracking.atexit, "register", at_exit.append)
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=6, max_steps=2, progress=False, report_to=[name])
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), _reward, formatters, rows, cfg)
    tr.train()
    tr.log_eval({"eval/reward": 0.5})  # the evaluation after training goes to the same run
    assert calls[0][0] == "init" and calls[0][1]["project"] == "magrpo-edu"
    assert calls[0][1]["config"]["num_generations"] == 2
    logs = [c for c in calls if c[0] == "log"]
    assert [c[1] for c in logs] == [1, 2, 2] and logs[-1][2] == {"eval/reward": 0.5}
    assert [c[2]["reward"] for c in logs[:2]] == pytest.approx([h["reward"] for h in tr.history])
    assert sum(c[0] == "init" for c in calls) == 1 and ("finish",) not in calls
    assert len(at_exit) == 1
    at_exit[0]()  # what happens when the program ends
    assert calls[-1] == ("finish",)


def test_a_missing_tracker_package_is_named_before_any_model_loads(monkeypatch, tmp_path, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "wandb" else real(n, *a))
    with pytest.raises(TrackerNotInstalledError, match=r"report_to='wandb' needs the 'wandb' package.*pip install wandb"):
        make_callbacks(MAGRPOConfig(report_to="wandb"))
    from magrpo_edu.run import experiment

    monkeypatch.setattr(experiment, "load_model", lambda *a, **k: pytest.fail("a model loaded before the check"))
    rc = main(["train", "--out", str(tmp_path / "o"), "--report-to", "wandb"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "needs the 'wandb' package" in err[0] and "pip install wandb" in err[0]
    assert not (tmp_path / "o").exists()


def test_report_to_is_checked():
    with pytest.raises(ValueError, match=r"report_to='tb' is not allowed.*tensorboard"):
        MAGRPOConfig(report_to="tb")
    assert MAGRPOConfig(report_to=["tensorboard", "wandb"]).trackers == ["tensorboard", "wandb"]
    assert MAGRPOConfig().trackers == []


def test_callbacks_need_not_subclass_and_get_the_hooks_they_have(make_model, small_tokenizer, rows, formatters):
    """A duck-typed callback with on_log only (as viz.LiveRewardPlot, or one written before on_evaluate
    and on_train_end existed) still works; a TrainerCallback subclass gets on_train_end once."""
    from magrpo_edu import TrainerCallback
    from magrpo_edu.viz import LiveRewardPlot

    class OnlyLog:
        def __init__(self):
            self.steps = []

        def on_log(self, trainer, record):
            self.steps.append(record["step"])

    class Ends(TrainerCallback):
        ended = 0

        def on_train_end(self, trainer):
            self.ended += 1

    only, ends = OnlyLog(), Ends()
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=6, max_steps=2, progress=False)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), _reward, formatters, rows, cfg,
                       callbacks=[only, ends, LiveRewardPlot(every=1)])
    tr.train()
    assert only.steps == [1, 2] and ends.ended == 1
