"""What a newcomer meets first: torch threads chosen for the machine as it is, the run's plan printed
before anything slow, a second run that does not overwrite or stop at the first, figures that hold
data and stay in range, and an offline machine that does not wait for the hub."""
import time
from pathlib import Path

import pytest
import torch

from magrpo_edu import threads, viz
from magrpo_edu.run import describe, plan as run_plan


def test_threads_respect_omp_num_threads_then_the_free_cores(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert threads.sensible_threads()[0] == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "busy_elsewhere", lambda: 0)
    assert threads.sensible_threads() == (2, "2 of 2 usable cores; set OMP_NUM_THREADS to choose")
    monkeypatch.setattr(threads, "busy_elsewhere", lambda: 1)  # another CPU-bound job: never oversubscribe
    n, why = threads.sensible_threads()
    assert n == 1 and "1 busy with other processes" in why
    monkeypatch.setattr(threads, "busy_elsewhere", lambda: 5)
    assert threads.sensible_threads()[0] == 1


def test_usable_cores_reads_the_affinity():
    assert 1 <= threads.usable_cores() <= (len(__import__("os").sched_getaffinity(0)))


def test_the_plan_is_printed_and_a_second_run_goes_beside_the_first(tmp_path, monkeypatch, capsys):
    """No --out: runs/<task> when free, else runs/<task>-2, ...; the plan names phases, steps and folder."""
    monkeypatch.chdir(tmp_path)
    first = run_plan.plan_run(task="length", max_steps=3)
    assert first["out_dir"] == Path("runs/length")
    Path("runs/length").mkdir(parents=True)
    (Path("runs/length") / "results.md").write_text("an earlier run")
    second = run_plan.plan_run(task="length", max_steps=3)
    assert second["out_dir"] == Path("runs/length-2")
    text = describe.describe_plan(second)
    assert "results go to runs/length-2/" in text and "train 3 MAGRPO steps" in text and "baselines" in text
    with pytest.raises(run_plan.SettingsError, match=r"is not empty .* --out runs/length-2, which is free"):
        run_plan.plan_run(task="length", max_steps=3, out="runs/length")


def test_components_figure_only_when_there_are_components_and_the_band_stays_in_range():
    assert viz.plot_components([{"step": 1, "reward": 0.5}]) is None
    hist = [{"step": s, "reward": 0.5, "reward_std": 0.6, "reward_min": 0.0, "reward_max": 1.0} for s in range(1, 6)]
    fig = viz.plot_rewards(hist)
    band = fig.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() >= 0.0 and band.max() <= 1.0  # mean 0.5 +/- 0.6 would be -0.1 .. 1.1
    legend = fig.axes[0].get_legend()
    assert legend.get_bbox_to_anchor().x0 > fig.axes[0].get_window_extent().x1 - 1  # outside the data
    fig.clf()


def test_offline_smollm2_does_not_wait_for_the_hub(monkeypatch, tmp_path):
    """No network and no HF_HUB_OFFLINE: the hub is asked once, for 2 s at most, then the local ways."""
    from magrpo_edu import models

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(models.hub, "_REACHABLE", {})
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there: no answer
    monkeypatch.setenv("MAGRPO_EDU_CACHE", str(tmp_path))
    asked = []

    def fake(path_or_id, dtype=None, **kw):
        asked.append((path_or_id, kw.get("local_files_only")))
        raise OSError("not in the local cache")
    monkeypatch.setattr(models.loading, "from_pretrained", fake)
    monkeypatch.setattr(models.smollm2, "smollm2_gguf_path", lambda: None)
    t = time.time()
    with pytest.raises(models.ModelNotAvailableError, match="hub: unreachable"):
        models.load_model("smollm2-135m")
    assert time.time() - t < 10
    assert asked == [(models.SMOLLM2_ID, True)]  # the local cache only, never the hub


def test_a_trained_result_halfway_is_planned_and_printed(tmp_path, capsys):
    """The first trained result comes halfway through training (the quick start's within 3 minutes on 2
    cores): planned, announced in the plan, printed by itself."""
    plan = run_plan.plan_run(task="length", max_steps=300, out=str(tmp_path / "run"))
    assert plan["halfway"] == 150 and plan["config"].eval_steps is None  # not again at the last step
    assert "evaluating the agents once at step 150" in describe.describe_plan(plan)
    assert run_plan.halfway(3) is None and run_plan.halfway(7) == 3

    from magrpo_edu.run.experiment import _Announce

    class Trainer:  # what the announcement reads of the trainer
        step, total_steps = 150, 300

    announce, t = _Announce({"eval/reward": 0.407}), Trainer()
    for step in (0, 150, 300):  # before training, halfway, after the last step: only halfway is news
        t.step = step
        announce.on_evaluate(t, {"eval/reward": 0.578, "eval/rows": 20})
    out = capsys.readouterr().out
    assert "Step 150 of 300: held-out joint reward 0.578 (untrained 0.407) on 20 rows" in out and out.count("Step") == 1


def test_the_halfway_result_is_drawn_on_the_reward_figure():
    hist = [{"step": s, "reward": 0.5, "reward_std": 0.1, "reward_min": 0.3, "reward_max": 0.7} for s in range(1, 11)]
    evals = [{"step": 0, "eval/reward": 0.4}, {"step": 5, "eval/reward": 0.55}, {"step": 10, "eval/reward": 0.7}]
    fig = viz.plot_rewards(hist, evals=evals)
    line = next(ln for ln in fig.axes[0].get_lines() if ln.get_label() == "held-out evaluation")
    assert list(line.get_xdata()) == [0, 5, 10] and list(line.get_ydata()) == [0.4, 0.55, 0.7]
    fig.clf()
