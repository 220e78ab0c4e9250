"""Checkpoints: `save` is atomic (a crash leaves the old or the new checkpoint), resume reproduces the
uninterrupted history (pending log records, on_step_end order, save_steps), Ctrl-C stops at a step
boundary, a crafted trainer_state.pt is refused instead of executed, and absurd budgets are named."""
import multiprocessing
import os
import pickle
import random
import signal
import time

import pytest
import torch

from magrpo_edu import MAGRPOTrainer, TrainerCallback, lora_agents
from magrpo_edu.checkpoints import checkpoint_info
from conftest import cfg, length_gap  # shared test helpers: tests/conftest.py


@pytest.fixture
def team(make_model, small_tokenizer):
    return lambda: lora_agents(make_model(seed=3), 2, tokenizer=small_tokenizer)


def comparable(history):
    """History without the wall-clock column (two identical runs differ only in step_time)."""
    return [{k: v for k, v in h.items() if k != "step_time"} for h in history]


def weights(agents):
    return {(a.name, k): v.detach().clone() for a in agents for k, v in a.named_trainable_state().items()}


# ---------------------------------------------------------------------------------- atomic save
def test_failed_save_keeps_previous_checkpoint(team, rows, formatters, tmp_path, monkeypatch):
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=3))
    tr.training_step()
    tr.save(tmp_path / "ckpt")
    tr.training_step()
    real_save = torch.save

    def dies_half_way(obj, f, *a, **kw):  # writes a truncated file, then the process "dies"
        real_save(obj, f, *a, **kw)
        with open(f, "r+b") as fh:
            fh.truncate(100)
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", dies_half_way)
    with pytest.raises(OSError, match="disk full"):
        tr.save(tmp_path / "ckpt")
    monkeypatch.undo()
    assert checkpoint_info(tmp_path / "ckpt")["step"] == 1
    back = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)
    assert back.step == 1 and len(back.history) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no temporary folder left behind


def test_crash_between_the_two_renames_recovers_previous(team, rows, formatters, tmp_path, monkeypatch):
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=3))
    tr.training_step()
    tr.save(tmp_path / "ckpt")
    tr.training_step()
    calls = []
    real_rename = os.rename

    def second_rename_crashes(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:  # the old one is already moved aside, the new one not yet in place
            raise OSError("killed")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", second_rename_crashes)
    with pytest.raises(OSError, match="killed"):
        tr.save(tmp_path / "ckpt")
    monkeypatch.undo()
    assert not (tmp_path / "ckpt").exists()
    back = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)
    assert back.step == 1
    tr.save(tmp_path / "ckpt")  # the next save completes the swap and tidies up
    assert checkpoint_info(tmp_path / "ckpt")["step"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]


def _save_forever(trainer, directory, conn):
    torch.set_num_threads(1)
    while True:
        trainer.step += 1
        trainer.history.append({"step": trainer.step, "reward": float(trainer.step)})
        trainer.save(directory)
        conn.send(trainer.step)


@pytest.mark.slow
def test_killing_a_save_at_random_moments_never_loses_the_checkpoint(team, rows, formatters, tmp_path):
    """SIGKILL a process that re-saves the same checkpoint in a loop, 10 times at random moments:
    each time the folder loads, at the last step reported saved or the one being saved."""
    d = tmp_path / "ckpt"
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=1))
    tr.save(d)
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(0)
    for attempt in range(10):
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_save_forever, args=(tr, d, send))
        p.start()
        assert recv.poll(60), f"the saving process did not save (exit code {p.exitcode})"
        done = recv.recv()  # one complete save, then kill at a random moment of the next ones
        time.sleep(rng.uniform(0, 0.15))
        os.kill(p.pid, signal.SIGKILL)
        p.join()
        while recv.poll():
            done = recv.recv()
        info = checkpoint_info(d)
        assert info["step"] in (done, done + 1), (attempt, info["step"], done)
        back = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=1)).load_checkpoint(d)
        assert back.step == info["step"] and back.history[-1]["step"] == back.step


def test_save_refuses_to_replace_a_folder_that_is_not_a_checkpoint(team, rows, formatters, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg())
    with pytest.raises(ValueError, match="not a checkpoint folder"):
        tr.save(tmp_path / "notes")
    assert (tmp_path / "notes" / "todo.txt").read_text() == "keep me"


# ---------------------------------------------------------------------------------- exact resume
@pytest.mark.slow
def test_resume_keeps_pending_log_records(team, rows, formatters, tmp_path):
    """logging_steps=4, saved at step 2: the resumed step-4 record still averages steps 1-4."""
    c = dict(max_steps=6, logging_steps=4)
    full = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(**c))
    full.train()
    assert [h["step"] for h in full.history] == [4, 6]
    first = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(**c))
    first.training_step()
    first.training_step()
    first.save(tmp_path / "ckpt")
    resumed = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)
    resumed.train()
    assert comparable(resumed.history) == comparable(full.history)
    w_full, w_resumed = weights(full.agents), weights(resumed.agents)
    assert all(torch.equal(w_full[k], w_resumed[k]) for k in w_full)


@pytest.mark.slow
def test_checkpoint_saved_in_on_step_end_holds_that_step(team, rows, formatters, tmp_path):
    class SaveAt4(TrainerCallback):
        def on_step_end(self, trainer, record):
            if trainer.step == 4:
                trainer.save(tmp_path / "ckpt")

    c = dict(max_steps=5, logging_steps=2, eval_steps=2)
    full = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(**c), eval_dataset=rows[:2])
    full.train()
    first = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(**c), eval_dataset=rows[:2], callbacks=[SaveAt4()])
    for _ in range(4):
        first.training_step()
    resumed = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows, eval_dataset=rows[:2])
    assert resumed.step == 4 and resumed.history[-1]["step"] == 4 and resumed.eval_history[-1]["step"] == 4
    resumed.train()
    assert comparable(resumed.history) == comparable(full.history)
    assert resumed.eval_history == full.eval_history


def test_save_steps_checkpoints_periodically_and_at_the_end(team, rows, formatters, tmp_path):
    saved = []

    class Spy(TrainerCallback):
        def on_step_end(self, trainer, record):
            if (tmp_path / "ckpt").exists():
                saved.append(checkpoint_info(tmp_path / "ckpt")["step"])

    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=5, save_steps=2),
                       checkpoint_dir=tmp_path / "ckpt", callbacks=[Spy()])
    tr.metadata = {"note": "kept"}
    tr.train()
    assert saved == [2, 2, 4]  # seen at steps 3, 4, 5: each save happens after that step's on_step_end
    info = checkpoint_info(tmp_path / "ckpt")
    assert info["step"] == 5 and info["metadata"] == {"note": "kept"}
    with pytest.raises(ValueError, match="save_steps=2 needs checkpoint_dir"):
        MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(save_steps=2))
    back = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)  # goes on saving there
    assert back.checkpoint_dir == tmp_path / "ckpt" and back.config.save_steps == 2


@pytest.fixture
def sigint_as_in_a_terminal():
    """SIGINT as Python sets it up in a terminal (KeyboardInterrupt), whatever this test process inherited:
    started in the background (`nohup ... &`), a shell leaves SIGINT ignored. Put back afterwards."""
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, found)


def sigint_default_in_child():
    """preexec_fn: the child starts with SIGINT's default disposition, so its Python turns it into
    KeyboardInterrupt (an inherited SIG_IGN would be kept, and Ctrl-C would do nothing)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_training_leaves_sigint_exactly_as_it_found_it(team, rows, formatters):
    """Ignored (a background job), KeyboardInterrupt (a terminal), or someone's own handler: after train()
    SIGINT's handler is the one it found."""
    def own(signum, frame):
        pass

    for found in (signal.SIG_IGN, signal.default_int_handler, own):
        before = signal.signal(signal.SIGINT, found)
        try:
            MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=1)).train()
            assert signal.getsignal(signal.SIGINT) is found
        finally:
            signal.signal(signal.SIGINT, before)


@pytest.mark.slow
def test_ctrl_c_finishes_the_step_and_resume_is_exact(team, rows, formatters, tmp_path, sigint_as_in_a_terminal):
    c = dict(max_steps=5, logging_steps=2)
    full = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(**c))
    full.train()
    calls = []

    def interrupted_reward(completions, row):
        calls.append(1)
        if len(calls) == 3:  # Ctrl-C while step 3 is scoring its samples
            os.kill(os.getpid(), signal.SIGINT)
        return length_gap(completions, row)

    tr = MAGRPOTrainer(team(), interrupted_reward, formatters, rows, cfg(**c))
    with pytest.raises(KeyboardInterrupt):
        tr.train()
    assert tr.step == 3 and len(tr.pending_records) == 1  # step 3 finished and recorded
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
    tr.save(tmp_path / "ckpt")
    resumed = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)
    resumed.train()
    assert comparable(resumed.history) == comparable(full.history)


def test_interrupt_inside_an_update_makes_save_refuse(team, rows, formatters, tmp_path):
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=3))
    tr.training_step()
    tr.save(tmp_path / "ckpt")

    def interrupted(*a, **kw):  # agent 0 has stepped, agent 1 is interrupted
        raise KeyboardInterrupt

    tr.optimizers[1].step = interrupted
    with pytest.raises(KeyboardInterrupt):
        tr.training_step()
    with pytest.raises(RuntimeError, match="inside step 2's update"):
        tr.save(tmp_path / "ckpt")
    assert checkpoint_info(tmp_path / "ckpt")["step"] == 1
    del tr.optimizers[1].step
    tr.load_checkpoint(tmp_path / "ckpt")  # going back to the last checkpoint clears it
    tr.save(tmp_path / "ckpt2")


# ---------------------------------------------------------------------------------- loading safely
class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # would create the marker file when unpickled


def test_crafted_trainer_state_is_refused_not_executed(team, rows, formatters, tmp_path):
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg())
    tr.training_step()
    d = tr.save(tmp_path / "ckpt")
    marker = tmp_path / "pwned"
    state = torch.load(d / "trainer_state.pt", weights_only=True)
    state["rng"]["payload"] = _Payload(str(marker))
    torch.save(state, d / "trainer_state.pt", pickle_protocol=pickle.HIGHEST_PROTOCOL)
    fresh = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg())
    with pytest.raises(ValueError, match="refusing to load .*trainer_state.pt.*could run code"):
        fresh.load_checkpoint(d)
    assert not marker.exists()
    assert fresh.step == 0


def test_truncated_trainer_state_is_named(team, rows, formatters, tmp_path):
    tr = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg())
    d = tr.save(tmp_path / "ckpt")
    (d / "trainer_state.pt").write_bytes((d / "trainer_state.pt").read_bytes()[:200])
    with pytest.raises(ValueError, match="incomplete or corrupt"):
        tr.load_checkpoint(d)


# ---------------------------------------------------------------------------------- budgets
def test_max_new_tokens_beyond_the_context_is_refused_at_construction(team, rows, formatters):
    agents = team()
    ctx = agents[0].model.config.max_position_embeddings
    with pytest.raises(ValueError, match=rf"do not fit in the model's context of {ctx} tokens.*leaves \d+ positions for "
                                         rf"max_new_tokens={ctx}"):
        MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_new_tokens=ctx))
    MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_new_tokens=ctx - 100))  # room for the prompt: accepted


# ---------------------------------------------------------------------------------- the command line, end to end
def _cli(*args):
    import sys

    return [sys.executable, "-m", "magrpo_edu.run.cli", "train", *args]


def _wait_for_checkpoint(proc, ckpt, at_least, timeout=600):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            step = checkpoint_info(ckpt)["step"]
        except (FileNotFoundError, ValueError):
            step = -1
        if step >= at_least:
            return step
        assert proc.poll() is None, f"the run ended (status {proc.returncode}) before step {at_least}: {proc.stderr.read()}"
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint at step >= {at_least} after {timeout} s")


@pytest.mark.slow
def test_cli_sigkill_and_ctrl_c_then_resume_match_an_uninterrupted_run(tmp_path):
    """A real `magrpo-edu train` SIGKILLed mid-run, resumed, Ctrl-C'd (exit 130, partial results
    written), resumed again: the same history, samples, weights and final evaluation as one
    uninterrupted run with the same settings."""
    import json
    import subprocess

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    args = ["--steps", "6", "-G", "2", "--max-new-tokens", "8", "--eval-rows", "1", "--device", "cpu", "--no-progress"]
    full, cut = tmp_path / "full", tmp_path / "cut"
    r = subprocess.run(_cli(*args, "--save-steps", "3", "--out", str(full)), capture_output=True, text=True, env=env,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]

    p = subprocess.Popen(_cli(*args, "--save-steps", "1", "--out", str(cut)), stderr=subprocess.PIPE, text=True, env=env)
    _wait_for_checkpoint(p, cut / "checkpoint", 2)
    p.kill()
    p.wait()
    killed_at = checkpoint_info(cut / "checkpoint")["step"]  # it may have saved once more before the kill
    assert killed_at < 6 and not (cut / "results.json").exists()  # it was killed mid-run

    p = subprocess.Popen(_cli("--resume", str(cut), "--no-progress"), stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=sigint_default_in_child)
    _wait_for_checkpoint(p, cut / "checkpoint", killed_at + 1)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=600)[1]
    assert p.returncode == 130, err[-3000:]
    stopped = checkpoint_info(cut / "checkpoint")["step"]
    assert stopped < 6, "the resumed run finished before Ctrl-C; the test did not interrupt it"
    assert f"Interrupted (Ctrl-C) at step {stopped} of 6" in err and f"magrpo-edu train --resume {cut}" in err
    partial = json.loads((cut / "history.json").read_text())
    assert [h["step"] for h in partial] == list(range(1, stopped + 1))

    r = subprocess.run(_cli("--resume", str(cut), "--no-progress"), capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"Resuming {cut} at step {stopped} of 6" in r.stderr

    def read(d, name):
        return json.loads((d / name).read_text())

    assert comparable(read(cut, "history.json")) == comparable(read(full, "history.json"))
    assert read(cut, "samples.json") == read(full, "samples.json")
    for key in ("eval_before", "eval_after"):
        assert read(cut, "results.json")[key] == read(full, "results.json")[key]
    assert read(cut, "results.json")["resumed_at_steps"] == [killed_at, stopped]
    assert read(full, "results.json")["resumed_at_steps"] == []
    w_cut = torch.load(cut / "checkpoint" / "trainer_state.pt", weights_only=True)["agents"]
    w_full = torch.load(full / "checkpoint" / "trainer_state.pt", weights_only=True)["agents"]
    assert all(torch.equal(w_cut[a][k], w_full[a][k]) for a in w_full for k in w_full[a])


@pytest.mark.slow
def test_cli_error_during_training_keeps_a_checkpoint_and_the_history(tmp_path, monkeypatch, capsys):
    import json

    from magrpo_edu.run import experiment
    from magrpo_edu.run.cli import main

    class FailsAtStep3(MAGRPOTrainer):
        def training_step(self):
            if self.step == 2:
                raise RuntimeError("boom")
            return super().training_step()

    monkeypatch.setattr(experiment, "MAGRPOTrainer", FailsAtStep3)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="boom"):
        main(["train", "--steps", "4", "-G", "2", "--max-new-tokens", "8", "--eval-rows", "1", "--device", "cpu",
              "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert "Stopped by an error (RuntimeError) at step 2 of 4" in err and f"--resume {out}" in err
    assert checkpoint_info(out / "checkpoint")["step"] == 2
    assert [h["step"] for h in json.loads((out / "history.json").read_text())] == [1, 2]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    from magrpo_edu.run import experiment

    out = tmp_path_factory.mktemp("finished") / "run"
    experiment.run_training(task="length", max_steps=2, num_generations=2, max_new_tokens=8, eval_rows=1, save_steps=1, out=str(out),
                            progress=False, device="cpu")
    return out


@pytest.mark.parametrize("damage", [
    ("trainer_state.pt", lambda b: b""),          # empty: its EOFError has no message (an IndexError once)
    ("trainer_state.pt", lambda b: b[:300]),      # truncated: a traceback with exit 1 once
    ("trainer_state.json", lambda b: b[:50]),     # these two once said "nothing to resume ... no trainer_state.pt"
    ("config.json", lambda b: b[:20]),
    ("trainer_state.json", lambda b: None),       # missing (None: the file is deleted)
])
def test_every_damaged_checkpoint_is_one_line_naming_the_file_and_exit_2(damage, finished_run, tmp_path, capsys):
    """Issue 28, item 6: resume and eval both name the damaged file in one line, exit 2, before any model loads."""
    import shutil

    from magrpo_edu.run import experiment
    from magrpo_edu.run.cli import main

    name, cut = damage
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    f = run / "checkpoint" / name
    damaged = cut(f.read_bytes())
    if damaged is None:
        f.unlink()
    else:
        f.write_bytes(damaged)
    for argv in (["train", "--resume", str(run)], ["eval", "--checkpoint", str(run)]):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(experiment, "load_model", lambda *a, **k: pytest.fail("a model was loaded before the check"))
            rc = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and err[0].startswith("magrpo-edu: error: cannot "), (argv, err)
        assert str(f) in err[0], (argv, err)
