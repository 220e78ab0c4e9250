"""Several prompts per step and data parallel with torch.distributed (magrpo_edu.distributed).

The promise: W processes launched with torchrun, each taking prompts_per_step / W prompts, compute
the same update as ONE process taking all prompts_per_step prompts per step. Checked end to end with
the command line (torchrun, gloo backend, CPU), and the accumulation itself against a hand-computed
mean of two prompts' gradients."""
import json
import os
import socket
import subprocess
import sys

import pytest
import torch

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, distributed, lora_agents
from magrpo_edu.run import device as run_device
from magrpo_edu.run import plan as run_plan
from magrpo_edu.algorithm import agent_losses, assign_advantages, rollout, seed_rngs
from magrpo_edu.sandbox import default_workers

RUN = ["train", "--task", "length", "--steps", "3", "-G", "2", "--max-new-tokens", "12", "--eval-rows", "1",
       "--prompts-per-step", "2", "--save-steps", "3", "--no-progress", "--device", "cpu"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                                            "MASTER_ADDR", "MASTER_PORT")}
    return {**env, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **extra}


def _weights(run_dir):
    return torch.load(run_dir / "checkpoint" / "trainer_state.pt", weights_only=True)["agents"]


@pytest.mark.slow
def test_two_gloo_processes_train_like_one_process_with_two_prompts_per_step(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    r1 = subprocess.run([sys.executable, "-m", "magrpo_edu.run.cli", *RUN, "--out", str(one), "--report-to", "tensorboard"],
                        capture_output=True, text=True, env=_env(), timeout=600)
    assert r1.returncode == 0, r1.stderr[-3000:]
    r2 = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
                         f"--master_port={_free_port()}", "-m", "magrpo_edu.run.cli", *RUN, "--out", str(two)],
                        capture_output=True, text=True, env=_env(), timeout=600)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert r2.stdout.count("Wrote history") == 1  # only rank 0 reports and writes
    w1, w2 = _weights(one), _weights(two)
    assert w1.keys() == w2.keys() and w1
    moved = max(v.abs().max().item() for a in w1.values() for k, v in a.items() if "lora_B" in k)
    assert moved > 0  # the adapters trained (LoRA's B starts at zero), so equal weights mean equal updates
    for agent in w1:
        for k in w1[agent]:
            torch.testing.assert_close(w2[agent][k], w1[agent][k], rtol=1e-5, atol=1e-7)
    h1, h2 = (json.loads((d / "history.json").read_text()) for d in (one, two))
    assert [h["step"] for h in h2] == [1, 2, 3]
    for a, b in zip(h1, h2):
        for k in a:
            if k != "step_time":
                assert b[k] == pytest.approx(a[k], rel=1e-5, abs=1e-7), k
    s1, s2 = (json.loads((d / "samples.json").read_text()) for d in (one, two))
    assert len(s2) == 6 and [s["row_index"] for s in s1] == [s["row_index"] for s in s2]  # 2 prompts x 3 steps, same rows
    res = json.loads((two / "results.json").read_text())
    assert res["processes"] == 2 and res["prompts_per_step"] == 2
    assert json.loads((one / "results.json").read_text())["processes"] == 1


def test_prompts_per_step_accumulates_the_mean_of_the_prompts_gradients(make_model, small_tokenizer, rows, formatters,
                                                                        monkeypatch):
    """One step with P = 2: each agent's gradient (just before AdamW) is the mean of the gradients of
    the two prompts' losses, each prompt sampled with its own seed and scored in its own group."""
    def reward(c, r):
        return [float(len(a)) - 0.5 * len(b) for a, b in zip(c[0], c[1])]

    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=6, max_steps=2, prompts_per_step=2, progress=False, seed=3)
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    tr = MAGRPOTrainer(agents, reward, formatters, rows, cfg)
    assert tr.prompt_indices(0) == [0, 1] and tr.prompt_indices(1) == [2, 3]
    expected = [[torch.zeros_like(p) for p in a.trainable_parameters()] for a in agents]
    for prompt in tr.prompt_indices(0):  # the same computation, by hand
        idx = tr.row_index(prompt)
        seed_rngs(tr.prompt_seed(prompt))
        ro = rollout(agents, [f(rows[idx]) for f in formatters], rows[idx], reward, cfg)
        assign_advantages(ro, cfg)
        losses = agent_losses(agents, ro)  # one graph (the agents share a forward); their parameters are disjoint
        params = [p for a in agents for p in a.trainable_parameters()]
        grads = iter(torch.autograd.grad(sum(losses), params, allow_unused=True))
        for es in expected:
            for e in es:
                g = next(grads)
                if g is not None:
                    e += g / 2
    seen = []
    monkeypatch.setattr(distributed, "all_reduce_gradients",
                        lambda ags: seen.append([[p.grad.clone() for p in a.trainable_parameters()] for a in ags]))
    rec = tr.training_step()
    assert any(e.abs().max() > 0 for es in expected for e in es)
    for got_agent, exp_agent in zip(seen[0], expected):
        for got, exp in zip(got_agent, exp_agent):
            torch.testing.assert_close(got, exp, rtol=1e-5, atol=1e-7)
    assert [s["row_index"] for s in tr.samples] == [tr.row_index(0), tr.row_index(1)]
    assert rec["reward"] == pytest.approx(sum(sum(s["rewards"]) / 2 for s in tr.samples) / 2)


def test_epochs_count_prompts_not_steps(make_model, small_tokenizer, rows, formatters):
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=4, max_steps=None, num_train_epochs=2, prompts_per_step=4,
                       progress=False)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), lambda c, r: [0.0] * len(c[0]),
                       formatters, rows, cfg)
    assert tr.total_steps == 3  # 2 epochs x 6 rows / 4 prompts per step, rounded up
    epoch0 = sorted(tr.row_index(p) for p in range(6))
    assert epoch0 == list(range(6))  # every row once per epoch


def test_a_prompt_count_the_processes_cannot_share_is_refused_before_any_model_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(run_plan.SettingsError, match=r"--prompts-per-step 3 with 2 processes.*multiple of 2"):
        run_plan.plan_run(prompts_per_step=3, out=str(tmp_path / "o"))
    plan = run_plan.plan_run(prompts_per_step=2, out=str(tmp_path / "o"))
    assert plan["config"].prompts_per_step == 2


def test_the_sandbox_shares_the_cores_among_local_processes(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert default_workers() == 16
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert default_workers() == 4
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "32")
    assert default_workers() == 1


def test_each_process_takes_its_own_gpu(monkeypatch):
    """Under torchrun, no --device (or plain cuda) is cuda:LOCAL_RANK; cuda:N is refused (every process
    would land on one GPU). Checked with the launcher's environment and CUDA reported present."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert run_device.resolve_device(None)[0] == "cuda:1" and run_device.resolve_device("cuda")[0] == "cuda:1"
    assert run_device.resolve_device("cpu")[0] == "cpu"
    with pytest.raises(run_plan.SettingsError, match=r"--device cuda:0: under torchrun each process takes its own GPU"):
        run_device.resolve_device("cuda:0")[0]
    # more processes than GPUs (torchrun --nproc_per_node=2 on a one-GPU machine, seen on an H100): said before a model loads
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    with pytest.raises(run_plan.SettingsError, match=r"more processes on this machine \(2\) than it has GPUs \(1\).*--nproc_per_node=1"):
        run_device.resolve_device(None)[0]


def test_gradients_are_reduced_in_buckets(monkeypatch):
    ps = [torch.nn.Parameter(torch.zeros(n)) for n in (3, 4, 10, 2)]
    monkeypatch.setattr(distributed, "BUCKET", 7)
    assert [[p.numel() for p in b] for b in distributed._groups(ps)] == [[3, 4], [10], [2]]
