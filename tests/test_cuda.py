"""The CUDA paths against the CPU ones (issue 32). Every test is marked `cuda` and skipped where
torch sees no GPU (CI never has one): `pytest -m cuda tests/test_cuda.py` on a GPU machine.

Sampling on CUDA draws other tokens than on the CPU from the same seed, so the CPU/CUDA comparisons
sample ONCE on the CPU and score those same completions on both devices: the losses, the KL term
and the update of every trainable parameter must agree within float rounding."""
import copy

import pytest
import torch

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, heterogeneous_agents, lora_agents, separate_agents
from magrpo_edu import agents as A
from magrpo_edu.backends import common
from magrpo_edu.algorithm import magrpo_step
from magrpo_edu.backends.fast import FastBackend
from magrpo_edu.backends import PlainBackend
from conftest import cfg, length_gap, two_distinct_lora_agents  # noqa: E402  (shared test helpers: tests/conftest.py)

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(),
                                 reason="needs a CUDA GPU: torch.cuda.is_available() is False on this machine")]
CUDA = "cuda:0"
PROMPTS = ["Summary: x", "Details: y"]


def reward(c, row):
    return [float(len(a) - len(b)) for a, b in zip(*c)]


def _to(c: common.Completions, device) -> common.Completions:
    return common.Completions(c.prompt_ids.to(device), c.prompt_mask.to(device), c.completion_ids.to(device),
                              c.completion_mask.to(device), list(c.texts))


def _team(kind, make_model, tok, device=None):
    """The same team (same weights) on `device` (None: CPU). LoRA: adapters made distinct (B != 0)."""
    if kind == "lora":
        agents = two_distinct_lora_agents(make_model(), tok, seed=10)
        if device is not None:
            agents[0].model.to(device)  # the one peft model all the agents share
        return agents
    devices = None if device is None else [device, device]
    return separate_agents(make_model(seed=4), 2, tokenizer=tok, devices=devices)


def _step(agents, monkeypatch, given=None):
    """One MAGRPO step (steps 2-7, SGD, beta > 0 so the reference pass runs too). `given`: the
    completions to use instead of sampling (moved to each agent's device). Returns the rollout, the
    losses and every trainable parameter's update (on the CPU)."""
    if given is not None:
        monkeypatch.setattr(FastBackend, "sample",  # the team's backend (the builders' default) samples nothing
                            lambda self, ags, *a, **k: [_to(c, ag.device) for c, ag in zip(given, ags)])
    start = [p.detach().clone() for a in agents for p in a.trainable_parameters()]
    opts = [torch.optim.SGD(a.trainable_parameters(), lr=1e-3) for a in agents]
    config = MAGRPOConfig(num_generations=3, max_new_tokens=6, beta=0.1)
    torch.manual_seed(12)
    [(ro, losses)] = magrpo_step(agents, opts, [lambda row, p=p: p for p in PROMPTS], [{}], reward, config)
    monkeypatch.undo()
    params = [p for a in agents for p in a.trainable_parameters()]
    return ro, losses, [(p.detach() - p0).cpu() for p, p0 in zip(params, start)]


def _close(u, v, rel):
    return (u - v).abs().max() <= rel * v.abs().max() + 1e-7


# ------------------------------------------------------------------------------------ (a) CUDA == CPU
@pytest.mark.parametrize("kind", ["lora", "separate"])
def test_a_step_on_cuda_equals_the_cpu_step_on_the_same_completions(kind, make_model, small_tokenizer, monkeypatch):
    tok = small_tokenizer
    ro_cpu, loss_cpu, upd_cpu = _step(_team(kind, make_model, tok), monkeypatch)  # samples on the CPU
    cuda_team = _team(kind, make_model, tok, CUDA)
    assert all(p.device.type == "cuda" for a in cuda_team for p in a.model.parameters())
    if kind == "separate":  # separate_agents(devices=...): the reference lives with its agents
        assert all(p.device.type == "cuda" for p in cuda_team[0].reference.parameters())
    ro_gpu, loss_gpu, upd_gpu = _step(cuda_team, monkeypatch, given=ro_cpu.completions[0])
    assert [c.texts for c in ro_gpu.completions[0]] == [c.texts for c in ro_cpu.completions[0]]
    assert torch.equal(ro_gpu.root.rewards, ro_cpu.root.rewards)
    assert loss_gpu == pytest.approx(loss_cpu, rel=1e-4, abs=1e-5)
    assert ro_gpu.kl == pytest.approx(ro_cpu.kl, rel=1e-3, abs=1e-6)
    assert any(v.abs().max() > 0 for v in upd_cpu)
    assert all(_close(u, v, 1e-3) for u, v in zip(upd_gpu, upd_cpu))


def test_log_probs_and_gradients_on_cuda_equal_the_cpu_ones(make_model, small_tokenizer):
    tok = small_tokenizer
    cpu, gpu = _team("lora", make_model, tok), _team("lora", make_model, tok, CUDA)
    torch.manual_seed(3)
    comps = A.team_backend(cpu).sample(cpu, [["a prompt"], ["another, longer prompt"]], 4, dict(max_new_tokens=8, temperature=1.0, top_p=1.0, top_k=0))
    lp_cpu = A.team_backend(cpu).logprobs(cpu, comps, per_token=True)
    lp_gpu = A.team_backend(gpu).logprobs(gpu, [_to(c, CUDA) for c in comps], per_token=True)
    for x, y in zip(lp_gpu, lp_cpu):
        assert x.device.type == "cuda" and torch.allclose(x.cpu(), y, atol=1e-4)
    g_cpu = torch.autograd.grad(sum(t.sum() for t in lp_cpu), [p for a in cpu for p in a.trainable_parameters()])
    g_gpu = torch.autograd.grad(sum(t.sum() for t in lp_gpu), [p for a in gpu for p in a.trainable_parameters()])
    assert all(_close(u.cpu(), v, 1e-3) for u, v in zip(g_gpu, g_cpu))


# ------------------------------------------------------------------------- (b) fast path == plain path
def test_fast_path_equals_plain_path_on_cuda(make_model, small_tokenizer):
    tok = small_tokenizer
    team = (two_distinct_lora_agents(make_model(), tok, seed=7)
            + separate_agents(make_model(seed=3), 1, tokenizer=tok, devices=[CUDA]))
    team[0].model.to(CUDA)
    torch.manual_seed(5)
    comps = A.team_backend(team).sample(team, [["short", "a much longer prompt"], ["x y", "z"], ["one prompt"]], 3, dict(max_new_tokens=6, temperature=1.0, top_p=1.0, top_k=0))
    assert all(c.completion_ids.device.type == "cuda" for c in comps)
    params = [p for a in team for p in a.trainable_parameters()]
    for per_token in (False, True):
        fast = FastBackend().logprobs(team, comps, per_token=per_token)
        plain = PlainBackend().logprobs(team, comps, per_token=per_token)
        for x, y in zip(fast, plain):
            assert x.shape == y.shape and torch.allclose(x, y, atol=1e-4), (x, y)
        g_fast = torch.autograd.grad(sum(t.square().sum() for t in fast), params)
        g_plain = torch.autograd.grad(sum(t.square().sum() for t in plain), params)
        assert all(_close(u, v, 1e-4) for u, v in zip(g_fast, g_plain))
    for x, y in zip(FastBackend().reference_logprobs(team, comps), PlainBackend().reference_logprobs(team, comps)):
        assert torch.allclose(x, y, atol=1e-5)


def test_a_training_step_with_the_plain_backend_matches_the_fast_one_on_cuda(make_model, small_tokenizer):
    # batch_agents=False: the fast backend samples each agent in its own generate call, drawing the
    # random numbers the plain one draws, so both sample the same tokens (as tests/test_backends.py on CPU).
    def step(pol):
        agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=10, backend=pol)
        agents[0].model.to(CUDA)
        start = [p.detach().clone() for a in agents for p in a.trainable_parameters()]
        opts = [torch.optim.SGD(a.trainable_parameters(), lr=1e-3) for a in agents]
        config = MAGRPOConfig(num_generations=3, max_new_tokens=5, beta=0.1, batch_agents=False)
        torch.manual_seed(12)
        [(ro, losses)] = magrpo_step(agents, opts, [lambda row, p=p: p for p in PROMPTS], [{}], reward, config)
        return ro, losses, [p.detach() - p0 for p, p0 in zip((p for a in agents for p in a.trainable_parameters()), start)]

    ro_f, loss_f, w_f = step(FastBackend())
    ro_p, loss_p, w_p = step(PlainBackend())
    assert [c.texts for c in ro_f.completions[0]] == [c.texts for c in ro_p.completions[0]]
    assert loss_f == pytest.approx(loss_p, rel=1e-4, abs=1e-5) and ro_f.kl == pytest.approx(ro_p.kl, rel=1e-4, abs=1e-6)
    assert all(_close(u, v, 1e-4) for u, v in zip(w_f, w_p)) and any(v.abs().max() > 0 for v in w_p)


# --------------------------------------------------------------------- (c) saved on CUDA, resumed on CPU
@pytest.mark.parametrize("kind", ["lora", "separate"])
def test_a_checkpoint_saved_on_cuda_resumes_on_cpu(kind, make_model, small_tokenizer, rows, formatters, tmp_path):
    def team(device):
        m = make_model(seed=3)
        if kind == "lora":
            return lora_agents(m, 2, tokenizer=small_tokenizer, device=device)
        return separate_agents(m, 2, tokenizer=small_tokenizer, devices=None if device is None else [device] * 2)

    gpu = MAGRPOTrainer(team(CUDA), length_gap, formatters, rows, cfg(max_steps=4))
    gpu.training_step()
    gpu.training_step()
    gpu.save(tmp_path / "ckpt")
    saved = {(a.name, k): v.detach().cpu().clone() for a in gpu.agents for k, v in a.named_trainable_state().items()}
    cpu = MAGRPOTrainer.load(tmp_path / "ckpt", team(None), length_gap, formatters, rows)
    assert cpu.step == 2 and cpu.history == gpu.history
    for a in cpu.agents:
        assert a.device.type == "cpu"
        for k, v in a.named_trainable_state().items():
            assert torch.equal(v, saved[(a.name, k)]), k
    for o in cpu.optimizers:
        for st in o.state.values():
            assert all(t.device.type == "cpu" for t in st.values() if torch.is_tensor(t))
        assert len(o.state) > 0  # AdamW's moments came back
    cpu.train()  # steps 3 and 4 on the CPU
    assert cpu.step == 4 and [h["step"] for h in cpu.history] == [1, 2, 3, 4]
    assert all(torch.isfinite(torch.tensor(h["loss/agent_0"])) for h in cpu.history)


def test_a_cpu_checkpoint_resumes_on_cuda(make_model, small_tokenizer, rows, formatters, tmp_path):
    def team(device):
        return lora_agents(make_model(seed=3), 2, tokenizer=small_tokenizer, device=device)

    cpu = MAGRPOTrainer(team(None), length_gap, formatters, rows, cfg(max_steps=3))
    cpu.training_step()
    cpu.save(tmp_path / "ckpt")
    gpu = MAGRPOTrainer.load(tmp_path / "ckpt", team(CUDA), length_gap, formatters, rows)
    for o in gpu.optimizers:
        for st in o.state.values():
            assert all(t.device.type == "cuda" for k, t in st.items() if torch.is_tensor(t) and k != "step")
    gpu.train()
    assert gpu.step == 3


# ------------------------------------------------------------------ mixed precision, devices=[...] teams
def test_bf16_base_lora_trains_on_cuda_and_fast_equals_plain(make_model, small_tokenizer, rows, formatters):
    base = make_model().to(torch.bfloat16)
    agents = lora_agents(base, 2, tokenizer=small_tokenizer, device=CUDA)
    lora = [p for a in agents for p in a.trainable_parameters()]
    assert lora and all(p.dtype == torch.float32 for p in lora)  # peft keeps the adapters in fp32
    torch.manual_seed(1)
    comps = A.team_backend(agents).sample(agents, [["a prompt"], ["another prompt"]], 3, dict(max_new_tokens=6, temperature=1.0, top_p=1.0, top_k=0))
    fast, plain = FastBackend().logprobs(agents, comps), PlainBackend().logprobs(agents, comps)
    for x, y in zip(fast, plain):
        assert x.dtype == torch.float32 and torch.allclose(x, y, atol=0.05, rtol=0.02), (x, y)
    before = [p.detach().clone() for p in lora]
    tr = MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_steps=3))
    tr.train()
    assert all(torch.isfinite(torch.tensor(h["loss/agent_0"])) for h in tr.history)
    assert any(not torch.equal(p, q) for p, q in zip(lora, before))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_stacked_adapters_on_cuda_equal_the_per_agent_slices(make_model, small_tokenizer, monkeypatch, dtype):
    # On CUDA, sampling's lean routing adds the agents' adapters in one bmm pair per layer
    # (backends.fast.STACKED_ADAPTERS_ON): the same logits as the per-agent slices up to rounding (fp32
    # and a bf16 base with fp32 adapters), and a whole sampling call runs through it.
    import magrpo_edu.backends.fast as F

    assert "cuda" in F.STACKED_ADAPTERS_ON
    tok = small_tokenizer
    agents = lora_agents(make_model().to(dtype), 2, tokenizer=tok, device=CUDA)
    torch.manual_seed(8)
    for a in agents:  # distinct adapters (B = 0 at initialisation would hide a routing mistake)
        for p in a.trainable_parameters():
            p.data.normal_(0, 0.3)
    model = agents[0].model
    enc = tok(["hi there", "a longer prompt here", "x", "y y y"], return_tensors="pt", padding=True).to(CUDA)
    names = ["agent_0", "agent_0", "agent_1", "agent_1"]
    calls = []
    stacked = F._add_stacked_adapters
    monkeypatch.setattr(F, "_add_stacked_adapters", lambda *a: calls.append(1) or stacked(*a))
    with torch.inference_mode(), F.adapter_rows(model, names, lean=True):
        ours = model(**enc).logits.float()
    assert calls
    monkeypatch.setattr(F, "STACKED_ADAPTERS_ON", ())
    with torch.inference_mode(), F.adapter_rows(model, names, lean=True):
        slices = model(**enc).logits.float()
    tol = 1e-4 if dtype == torch.float32 else 0.05
    assert torch.allclose(ours, slices, atol=tol), (ours - slices).abs().max()
    monkeypatch.setattr(F, "STACKED_ADAPTERS_ON", ("cuda",))
    calls.clear()
    comps = F.sample_completions(agents, [["hi there"], ["x"]], 3, dict(max_new_tokens=5))
    assert calls and [c.completion_ids.shape[0] for c in comps] == [3, 3]


def test_separate_and_heterogeneous_agents_with_devices_train_on_cuda(make_model, small_tokenizer, rows, formatters):
    sep = separate_agents(make_model(seed=1), 2, tokenizer=small_tokenizer, devices=[CUDA, CUDA])
    assert sep[0].reference is sep[1].reference  # one reference per DISTINCT device
    het = heterogeneous_agents([make_model(seed=2), make_model(seed=5, hidden_size=48)],
                               tokenizers=[small_tokenizer, copy.deepcopy(small_tokenizer)], devices=[CUDA, CUDA])
    for team in (sep, het):
        assert all(a.device.type == "cuda" and next(a.reference.parameters()).device.type == "cuda" for a in team)
        before = [p.detach().clone() for a in team for p in a.trainable_parameters()]
        tr = MAGRPOTrainer(team, length_gap, formatters, rows, cfg(max_steps=2, beta=0.1))
        tr.train()
        after = [p for a in team for p in a.trainable_parameters()]
        assert any(not torch.equal(p, q) for p, q in zip(after, before))
        assert "kl" in tr.history[-1] and all(torch.isfinite(torch.tensor(h["kl"])) for h in tr.history)


def test_a_seeded_draw_leaves_the_cuda_generator_as_it_was():
    """`rng.seeded` (evaluations, snapshots, the baselines, LoRA's initial A matrices): afterwards the CUDA generator
    is where it was, not reseeded (torch.random.fork_rng(devices=[]) alone forks the CPU's only)."""
    from magrpo_edu.rng import seeded

    torch.rand(1, device=CUDA)  # CUDA initialised
    before = torch.cuda.get_rng_state()
    with seeded(3):
        torch.rand(5, device=CUDA)
    assert torch.equal(torch.cuda.get_rng_state(), before)
