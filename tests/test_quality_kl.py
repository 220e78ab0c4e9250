"""Text quality beside the reward (repetition, naturalness) and the KL leash (config.beta), on tiny
random models: the numbers are the defined ones, a gamed text shows up, beta = 0 is the paper's
loss with no reference pass, the k3 term and its gradient are the hand computation, the LoRA
reference is the untrained base, and checkpoints still resume exactly."""
import copy
import math

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
import torch  # noqa: E402

import magrpo_edu.algorithm as A  # noqa: E402
from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents, separate_agents, viz  # noqa: E402
from magrpo_edu.agents import Agent, team_backend  # noqa: E402
from magrpo_edu.backends import Completions, sampling_settings  # noqa: E402
from magrpo_edu.backends.fast import FastBackend, token_logprobs  # noqa: E402
from magrpo_edu.quality import mean_repetition, naturalness, repetition  # noqa: E402
from conftest import cfg, length_gap, row_by_row  # noqa: E402  (shared test helpers: tests/conftest.py)


# ------------------------------------------------------------------------------ repetition
def test_repetition_values():
    assert repetition("w w w w w w") == pytest.approx(1 - 1 / 4)  # 4 three-grams, 1 distinct
    assert repetition("the quick brown fox jumps over the lazy dog") == 0.0
    assert repetition("") == 0.0 and repetition("two words") == 0.0  # fewer than 3 words: no 3-gram
    assert repetition("a b c a b c") == pytest.approx(1 - 3 / 4)  # (a b c) twice among 4
    assert repetition("w " * 200) == pytest.approx(1 - 1 / 198)  # a gamed text goes to 1
    assert mean_repetition(["w w w w w w", "the cat sat on the mat"]) == pytest.approx(0.375)
    assert mean_repetition([]) == 0.0


# ------------------------------------------------------------------------------ naturalness
def _argmin_path(model, tok, prompt: str, steps: int) -> torch.Tensor:
    """Completion ids built by always taking the token the model finds LEAST likely."""
    ids = tok([prompt], return_tensors="pt")["input_ids"]
    out = []
    with torch.no_grad():
        for _ in range(steps):
            nxt = model(input_ids=torch.cat([ids] + out, dim=1)).logits[:, -1].argmin(-1, keepdim=True)
            out.append(nxt)
    return torch.cat(out, dim=1)


def test_naturalness_is_higher_for_text_the_base_finds_unlikely(make_model, small_tokenizer):
    plain = make_model(seed=1)
    base = copy.deepcopy(plain)
    agent = lora_agents(plain, 1, tokenizer=small_tokenizer)[0]
    # the agent (= the untrained base at init) writes its own text: top_k=1, its most likely tokens
    own = team_backend([agent]).sample([agent], [["Summary: a post about cats"] * 2], 1, sampling_settings(cfg(max_new_tokens=8, top_k=1)))[0]
    T = own.completion_ids.shape[1]
    worst = _argmin_path(base, small_tokenizer, "Summary: a post about cats", T).repeat(2, 1)
    odd = Completions(own.prompt_ids, own.prompt_mask, worst, torch.ones_like(worst), ["?"] * 2)
    own_full = Completions(own.prompt_ids, own.prompt_mask, own.completion_ids, torch.ones_like(own.completion_ids),
                           own.texts)  # the same token count for both
    n_own, n_odd = naturalness(agent, own_full), naturalness(agent, odd)
    assert n_odd > n_own + 0.1, (n_own, n_odd)
    # it is the mean per-token NLL under the base, computed directly
    with torch.no_grad():
        ids = torch.cat([odd.prompt_ids, odd.completion_ids], dim=1)
        lp = torch.log_softmax(base(input_ids=ids).logits[:, -T - 1:-1].float(), -1)
        direct = -lp.gather(-1, odd.completion_ids[..., None]).squeeze(-1).mean(-1).mean().item()
    assert n_odd == pytest.approx(direct, abs=1e-4)


def test_lora_reference_is_the_base_with_adapters_off(make_model, small_tokenizer):
    plain = make_model(seed=2)
    base = copy.deepcopy(plain)
    agents = lora_agents(plain, 2, tokenizer=small_tokenizer)
    c = team_backend(agents[:1]).sample(agents[:1], [["Details: some text"] * 3], 1, sampling_settings(cfg(max_new_tokens=5)))[0]
    with torch.no_grad():
        want = token_logprobs(base, c, None)
    assert torch.allclose(agents[0].backend.reference_logprobs([agents[0]], [c])[0], want, atol=1e-5)
    with torch.no_grad():  # train the adapters (B != 0): the agents move, the reference does not
        for a in agents:
            for n, p in a.named_trainable_state().items():
                p.add_(0.3 * torch.randn_like(p))
    assert not torch.allclose(agents[0].backend.logprobs([agents[0]], [c])[0], want.sum(-1), atol=1e-3)
    for a in agents:
        assert torch.allclose(a.backend.reference_logprobs([a], [c])[0], want, atol=1e-5)
        # and computing it leaves every agent's adapter trainable (peft's disable_adapter() would not)
        assert all(p.requires_grad for p in a.named_trainable_state().values())


def test_separate_agents_keep_one_frozen_untrained_copy(make_model, small_tokenizer):
    agents = separate_agents(make_model(), 2, tokenizer=small_tokenizer)
    ref = agents[0].reference
    assert ref is agents[1].reference and ref is not agents[0].model and ref is not agents[1].model
    assert not any(p.requires_grad for p in ref.parameters())
    assert all(torch.equal(p, q) for p, q in zip(ref.parameters(), agents[0].model.parameters()))
    assert separate_agents(make_model(), 2, tokenizer=small_tokenizer, reference=False)[0].reference is None
    bare = Agent("x", make_model(), small_tokenizer)
    with pytest.raises(ValueError, match="no frozen reference"):
        bare.backend.reference_logprobs([bare], [Completions(torch.ones(1, 2, dtype=torch.long), torch.ones(1, 2, dtype=torch.long),
                                                   torch.ones(1, 2, dtype=torch.long), torch.ones(1, 2), ["a"])])[0]


# ------------------------------------------------------------------------------ the KL term
def test_k3_term_and_gradient_match_the_hand_computation():
    logp = torch.tensor([[-1.0, -2.0, -0.5]], requires_grad=True)
    ref = torch.tensor([[-1.5, -1.0, -3.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])  # the third token is padding
    kl = A.kl_penalty(logp, ref, mask)
    hand = sum(math.exp(r - p) - (r - p) - 1 for p, r in ((-1.0, -1.5), (-2.0, -1.0)))
    assert kl.item() == pytest.approx(hand, rel=1e-6)
    kl.sum().backward()
    want = [1 - math.exp(-1.5 + 1.0), 1 - math.exp(-1.0 + 2.0), 0.0]
    assert logp.grad[0].tolist() == pytest.approx(want, rel=1e-6)
    assert A.kl_penalty(ref.clone(), ref, torch.ones(1, 3)).item() == 0.0  # pi = pi_ref: no KL


def _rollout(agents, config):
    ro = A.rollout(agents, ["Summary: x", "Details: y"], {}, length_gap, config)
    A.assign_advantages(ro, config)
    return ro


def test_losses_are_the_hand_computation_with_and_without_the_leash(make_model, small_tokenizer, monkeypatch):
    # agent_losses against a reference built here: the policy term -(1/G) sum_g A_g sum_t log p and
    # the leash beta * (1/G) sum_g sum_t (e^d - d - 1), d = ref_t - logp_t, with every log-prob from
    # one forward per row (no padding) at the sampling temperature 0.7 (the policy at the adapters,
    # the reference at the base), and the k3 in Python floats. beta = 0: no reference pass at all.

    T, G, beta = 0.7, 3, 0.5
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    c = cfg(temperature=T)
    torch.manual_seed(0)
    ro = _rollout(agents, c)
    calls = []
    real = FastBackend.reference_logprobs
    monkeypatch.setattr(FastBackend, "reference_logprobs", lambda *a: calls.append(1) or real(*a))
    with torch.no_grad():
        for a in agents:  # move the agents away from the base, so the leash is not zero
            for p in a.named_trainable_state().values():
                p.add_(0.2 * torch.randn_like(p))
    hand_policy, hand_kl, hand_tokens = [], [], []
    for i, a in enumerate(agents):
        comp, adv = ro.completions[0][i], ro.root.sample_advantages[i].tolist()
        with torch.no_grad():
            logp = row_by_row(a.model, comp, dict(temperature=T), {"adapter_names": [a.adapter]})
            ref = row_by_row(a.model, comp, dict(temperature=T), {"adapter_names": ["__base__"]})
        hand_policy.append(-sum(A_g * lp.sum().item() for A_g, lp in zip(adv, logp)) / G)
        k3 = [sum(math.exp(r - q) - (r - q) - 1 for q, r in zip(lp.tolist(), rf.tolist())) for lp, rf in zip(logp, ref)]
        hand_kl.append(sum(k3) / G)
        hand_tokens.append(sum(len(lp) for lp in logp))
        assert abs(hand_policy[-1]) > 1e-3 and hand_kl[-1] > 1e-3
    losses = A.agent_losses(agents, ro, beta=0.0)
    assert calls == [] and ro.kl is None
    assert [x.item() for x in losses] == [pytest.approx(h, rel=1e-4, abs=1e-5) for h in hand_policy]
    losses = A.agent_losses(agents, ro, beta=beta)
    assert len(calls) == 2
    for i in range(2):
        assert losses[i].item() == pytest.approx(hand_policy[i] + beta * hand_kl[i], rel=1e-4, abs=1e-5)
        assert ro.kl[i] == pytest.approx(hand_kl[i] * G / hand_tokens[i], rel=1e-4)  # mean per-token k3


@pytest.mark.parametrize("shift", [0.1, 1.0, 2.0])
def test_k3_value_is_kl_pi_ref_and_its_gradient_is_kl_ref_pi(shift):
    # Exactly, on a 6-way categorical (no sampling: the expectation over a ~ pi is the sum weighted
    # by pi(a), held fixed as sampling holds it): E[k3] = KL(pi || pi_ref), E[grad k3] = grad KL(pi_ref || pi).
    f64 = dict(dtype=torch.float64)
    ref_logits = torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0], **f64)
    z = (ref_logits + shift * torch.tensor([-1.0, 0.0, 1.0, 0.0, 1.0, -1.0], **f64)).requires_grad_()
    logp, log_ref = z.log_softmax(-1), ref_logits.log_softmax(-1)
    pi, ref = logp.exp(), log_ref.exp()
    expected = (pi.detach() * A.kl_penalty(logp[:, None], log_ref[:, None], torch.ones(6, 1, **f64))).sum()
    kl_pi_ref = sum(p * (math.log(p) - math.log(q)) for p, q in zip(pi.tolist(), ref.tolist()))  # by hand
    assert expected.item() == pytest.approx(kl_pi_ref, rel=1e-9)
    g, = torch.autograd.grad(expected, z)
    # grad_z KL(ref || pi) = grad_z (-sum ref log softmax(z)) = pi - ref; grad_z KL(pi || ref) = pi * (d - E_pi d)
    assert torch.allclose(g, (pi - ref).detach(), atol=1e-12)
    d = (logp - log_ref).detach()
    g_fwd = pi.detach() * (d - (pi.detach() * d).sum())
    cos = (g @ g_fwd / (g.norm() * g_fwd.norm())).item()
    assert cos > 0.999 if shift == 0.1 else cos < (0.99 if shift == 1.0 else 0.95), cos


def test_trainer_default_never_calls_the_reference(make_model, small_tokenizer, rows, formatters, monkeypatch):
    monkeypatch.setattr(FastBackend, "reference_logprobs", lambda *a: pytest.fail("reference pass at beta = 0"))
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows, cfg())
    tr.train()
    assert all("kl" not in h for h in tr.history)
    assert all(0 <= h[f"quality/repetition/agent_{i}"] <= 1 for h in tr.history for i in range(2))


@pytest.mark.parametrize("kind", ["lora", "separate"])
def test_beta_logs_kl_zero_at_start_then_positive(kind, make_model, small_tokenizer, rows, formatters):
    m = make_model(seed=4)
    agents = lora_agents(m, 2, tokenizer=small_tokenizer) if kind == "lora" else separate_agents(m, 2, tokenizer=small_tokenizer)
    tr = MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_steps=3, beta=0.1, learning_rate=5e-2))
    tr.train()
    h = tr.history
    assert h[0]["kl"] == pytest.approx(0.0, abs=1e-6)  # step 1 samples from pi = pi_ref
    assert h[-1]["kl"] > 1e-4 and all(h[-1][f"kl/agent_{i}"] > 0 for i in range(2))
    assert h[-1]["kl"] == pytest.approx((h[-1]["kl/agent_0"] + h[-1]["kl/agent_1"]) / 2)


def test_beta_needs_a_reference_and_is_validated(make_model, small_tokenizer, rows, formatters):
    bare = [Agent(f"a{i}", make_model(seed=i), small_tokenizer) for i in range(2)]
    with pytest.raises(ValueError, match="frozen reference"):
        MAGRPOTrainer(bare, length_gap, formatters, rows, cfg(beta=0.1))
    MAGRPOTrainer(bare, length_gap, formatters, rows, cfg(beta=0.0))  # the paper's setting needs none
    for bad in (-0.1, float("nan"), float("inf"), True, "0.1"):
        with pytest.raises(ValueError, match="beta"):
            MAGRPOConfig(beta=bad)


def test_resume_with_beta_and_a_frozen_copy(make_model, small_tokenizer, rows, formatters, tmp_path):
    def team():
        return separate_agents(make_model(seed=5), 2, tokenizer=small_tokenizer)

    c = cfg(max_steps=3, beta=0.2, learning_rate=3e-2)
    full = MAGRPOTrainer(team(), length_gap, formatters, rows, c)
    full.train()
    first = MAGRPOTrainer(team(), length_gap, formatters, rows, c)
    first.training_step()
    first.training_step()
    first.save(tmp_path / "ckpt")
    state = torch.load(tmp_path / "ckpt" / "trainer_state.pt", weights_only=True)
    assert state["agents"]["agent_0"].keys() == dict(first.agents[0].model.named_parameters()).keys()  # no reference
    assert sorted(p.name for p in (tmp_path / "ckpt" / "agents").iterdir()) == ["agent_0", "agent_1"]
    resumed = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)
    resumed.train()
    for k in ("loss/agent_0", "loss/agent_1", "kl", "reward"):
        assert [h[k] for h in resumed.history] == [h[k] for h in full.history], k


# ------------------------------------------------------------------------------ evaluation and plot
def test_evaluate_reports_quality_and_the_plot_draws_it(make_model, small_tokenizer, rows, formatters):
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows,
                       cfg(max_steps=2, eval_steps=1), eval_dataset=rows[:2])
    tr.train()
    e = tr.eval_history[-1]
    for i in range(2):
        assert 0 <= e[f"eval/repetition/agent_{i}"] <= 1
        assert 0 < e[f"eval/naturalness/agent_{i}"] < 20
    fig = viz.plot_quality(tr.history, tr.eval_history)
    assert isinstance(fig, matplotlib.figure.Figure) and fig.get_size_inches()[1] == pytest.approx(viz.FIGSIZE[1])
    assert all(ax.has_data() for ax in fig.axes)


def test_separate_agents_on_their_own_devices_train_with_the_leash(make_model, small_tokenizer, rows, formatters):
    agents = separate_agents(make_model(), 2, tokenizer=small_tokenizer, devices=["cpu", "cpu"])
    assert [a.device.type for a in agents] == ["cpu", "cpu"]
    assert agents[0].reference is agents[1].reference  # one frozen copy per distinct device
    assert agents[0].model is not agents[1].model
    before = {n: p.detach().clone() for a in agents for n, p in a.named_trainable_state().items()}
    tr = MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_steps=2, beta=0.1))
    tr.train()
    assert "kl" in tr.history[-1] and len(tr.history) == 2
    assert any(not torch.equal(before[n], p) for a in agents for n, p in a.named_trainable_state().items())
    with pytest.raises(ValueError, match="3 devices for num_agents=2"):
        separate_agents(make_model(), 2, tokenizer=small_tokenizer, devices=["cpu"] * 3)
    from magrpo_edu import heterogeneous_agents
    het = heterogeneous_agents([make_model(seed=1), make_model(seed=2)], [small_tokenizer] * 2, devices=["cpu", "cpu"])
    assert [a.device.type for a in het] == ["cpu", "cpu"] and het[0].reference is not het[1].reference
    with pytest.raises(ValueError, match="1 devices for 2 models"):
        heterogeneous_agents([make_model(), make_model()], [small_tokenizer] * 2, devices=["cpu"])
