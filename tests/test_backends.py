"""The two backends (`magrpo_edu.backends.PlainBackend`: step 2 sample, step 6 sum of token log-probs,
one agent at a time; `magrpo_edu.backends.fast.FastBackend`) compute the same thing: log-probs and their
gradients, the reference log-probs, the sampled tokens for one agent, a whole training step; and
the team builders pick the backend, every call follows it."""
import pytest
import torch

from magrpo_edu import MAGRPOConfig, heterogeneous_agents, load_lora_agents, lora_agents, separate_agents
from magrpo_edu import agents as A
from magrpo_edu.backends import common
from magrpo_edu.backends import fast as fast_backend
from magrpo_edu.backends import plain as plain_backend
from magrpo_edu.algorithm import magrpo_step
from magrpo_edu.backends.fast import FastBackend
from magrpo_edu.backends import PlainBackend
from conftest import two_distinct_lora_agents  # noqa: E402  (shared test helpers: tests/conftest.py)

GEN = dict(max_new_tokens=6, temperature=1.0, top_p=1.0, top_k=0)


def _completions(tok, prompts, G, width, seed):
    """G rows per prompt (left-padded), random completion tokens, one row stopped early by an EOS."""
    enc = tok([p for p in prompts for _ in range(G)], return_tensors="pt", padding=True)
    gen = torch.Generator().manual_seed(seed)
    comp = torch.randint(5, len(tok), (len(prompts) * G, width), generator=gen)
    comp[1, 2] = tok.eos_token_id
    mask = common.completion_mask(comp, tok.eos_token_id)
    return common.Completions(enc["input_ids"], enc["attention_mask"], comp, mask, ["?"] * len(comp))


def _close(u, v, rel=1e-5):
    return (u - v).abs().max() <= rel * v.abs().max() + 1e-6


def test_plain_logprobs_equal_fast_team_logprobs_values_and_gradients(make_model, small_tokenizer):
    # Two LoRA agents on one base (one fast batch, shared prompt cache) and a full-model agent.
    tok = small_tokenizer
    team = two_distinct_lora_agents(make_model(), tok, seed=7) + separate_agents(make_model(seed=3), 1, tokenizer=tok)
    cs = [_completions(tok, ["short", "a much longer prompt for this agent"], 3, 5, 0),
          _completions(tok, ["x y", "z"], 3, 4, 1), _completions(tok, ["one prompt"], 2, 5, 2)]
    params = [p for a in team for p in a.trainable_parameters()]
    for per_token in (False, True):
        fast = FastBackend().logprobs(team, cs, per_token=per_token)
        plain = [plain_backend.logprobs(a, c, per_token=per_token) for a, c in zip(team, cs)]
        assert all(torch.equal(x, y) for x, y in zip(PlainBackend().logprobs(team, cs, per_token=per_token), plain))
        for x, y in zip(fast, plain):
            assert x.shape == y.shape and torch.allclose(x, y, atol=1e-4), (x, y)
        g_fast = torch.autograd.grad(sum(t.square().sum() for t in fast), params)
        g_plain = torch.autograd.grad(sum(t.square().sum() for t in plain), params)
        assert all(_close(u, v) for u, v in zip(g_fast, g_plain))


def test_plain_reference_logprobs_equal_fast_ones(make_model, small_tokenizer):
    tok = small_tokenizer
    team = two_distinct_lora_agents(make_model(), tok, seed=8) + separate_agents(make_model(seed=5), 1, tokenizer=tok)
    c = _completions(tok, ["short", "a longer prompt"], 3, 5, 3)
    fast, plain = FastBackend().reference_logprobs(team, [c] * 3), PlainBackend().reference_logprobs(team, [c] * 3)
    for x, y in zip(fast, plain):
        assert torch.allclose(x, y, atol=1e-5)
    # the LoRA reference is the base: the same for both agents, not either agent's own log-probs
    assert torch.equal(plain[0], plain[1])
    assert not torch.allclose(plain_backend.logprobs(team[0], c, per_token=True), team[0].backend.reference_logprobs([team[0]], [c])[0], atol=1e-3)


@pytest.mark.parametrize("gen", [GEN, dict(GEN, temperature=0.5, top_k=10, top_p=0.9)], ids=["default", "warped"])
@pytest.mark.parametrize("kind", ["lora", "full"])
def test_plain_sample_draws_the_fast_paths_tokens(kind, gen, make_model, small_tokenizer):
    # One agent: the fast path (shared prefill, slice routing) uses the RNG as one plain generate does,
    # records the same sampling settings, and scores the tokens the same (warpers included).
    tok = small_tokenizer
    agent = (two_distinct_lora_agents(make_model(), tok, seed=9)[1] if kind == "lora"
             else separate_agents(make_model(seed=6), 1, tokenizer=tok, reference=False)[0])
    prompts = ["short", "a much longer prompt"]
    torch.manual_seed(11)
    (fast,) = FastBackend().sample([agent], [prompts], 3, gen)
    torch.manual_seed(11)
    plain = plain_backend.sample(agent, prompts, 3, **gen)
    assert fast.sampling == plain.sampling == {k: gen[k] for k in ("temperature", "top_k", "top_p")}
    assert fast.completion_ids.shape[0] == 6
    if gen is GEN:  # the same tokens; with a top-k / top-p cut a last-bit difference between the two
        # prefills could move a token across the cut on another CPU, so there only the scores are compared
        for name in ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask"):
            assert torch.equal(getattr(fast, name), getattr(plain, name)), name
        assert fast.texts == plain.texts
    assert torch.allclose(FastBackend().logprobs([agent], [plain])[0], plain_backend.logprobs(agent, plain), atol=1e-4)


def test_the_builders_pick_the_backend_and_every_call_follows_it(make_model, small_tokenizer, monkeypatch, tmp_path):
    tok = small_tokenizer
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=4)
    c = _completions(tok, ["a prompt"], 2, 3, 4)
    assert not hasattr(fast_backend, "ENABLED")  # no module-level switch
    teams = {"lora": lambda **k: lora_agents(make_model(), 2, tokenizer=tok, **k),
             "separate": lambda **k: separate_agents(make_model(), 2, tokenizer=tok, **k),
             "heterogeneous": lambda **k: heterogeneous_agents([make_model(), make_model(seed=1)], [tok] * 2, **k)}
    for build in teams.values():
        assert [type(a.backend) for a in build()] == [FastBackend] * 2  # the default
        assert A.team_backend(build(backend=PlainBackend())) == PlainBackend()
    lora = lora_agents(make_model(), 2, tokenizer=tok)
    lora[0].model.save_pretrained(tmp_path)
    loaded = load_lora_agents(make_model(), [tmp_path / "agent_0", tmp_path / "agent_1"], tokenizer=tok,
                              backend=PlainBackend())
    assert A.team_backend(loaded) == PlainBackend() and A.team_backend(lora) == FastBackend()

    calls = []
    for name in ("sample_completions", "team_logprobs", "token_logprobs"):
        real = getattr(fast_backend, name)
        monkeypatch.setattr(fast_backend, name, lambda *a, _n=name, _r=real, **k: calls.append(_n) or _r(*a, **k))
    A.team_backend(lora).sample(lora, [["p"], ["q"]], 2, common.sampling_settings(cfg))  # a MAGRPOConfig gives its sampling settings
    A.team_backend(lora).logprobs(lora, [c, c])
    lora[0].backend.reference_logprobs([lora[0]], [c])[0]
    assert set(calls) == {"sample_completions", "team_logprobs", "token_logprobs"}  # FastBackend
    calls.clear()
    plain = lora_agents(make_model(), 2, tokenizer=tok, backend=PlainBackend())
    out = A.team_backend(plain).sample(plain, [["p"], ["q"]], 2, GEN)
    A.team_backend(plain).logprobs(plain, [c, c])
    plain[0].backend.logprobs([plain[0]], [c])[0]
    plain[0].backend.reference_logprobs([plain[0]], [c])[0]
    assert calls == [] and [o.completion_ids.shape[0] for o in out] == [2, 2]  # PlainBackend: plain code only

    with pytest.raises(ValueError, match="do not share one backend"):
        A.team_backend([lora[0], plain[1]]).logprobs([lora[0], plain[1]], [c, c])
    with pytest.raises(ValueError, match="is not a backend: it lacks"):
        lora_agents(make_model(), 2, tokenizer=tok, backend="plain")


def test_a_training_step_with_the_plain_backend_matches_the_fast_one(make_model, small_tokenizer):
    # One MAGRPO step (steps 2-7) per backend from the same seed: the same samples, the same losses, KL
    # and updates (SGD: the gradients) up to float rounding. batch_agents=False: the fast backend then
    # samples each agent in its own generate call, drawing the random numbers the plain one draws
    # (its log-probs stay batched).
    def step(pol):
        agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=10, backend=pol)
        start = [p.detach().clone() for a in agents for p in a.trainable_parameters()]
        opts = [torch.optim.SGD(a.trainable_parameters(), lr=1e-3) for a in agents]  # AdamW's first step is sign-like
        cfg = MAGRPOConfig(num_generations=3, max_new_tokens=5, beta=0.1, batch_agents=False)
        torch.manual_seed(12)
        [(ro, losses)] = magrpo_step(agents, opts, [lambda row: "Summary: x", lambda row: "Details: y"], [{}],
                                     lambda c, row: [float(len(a) - len(b)) for a, b in zip(*c)], cfg)
        return ro, losses, [p.detach() - p0 for p, p0 in zip((p for a in agents for p in a.trainable_parameters()), start)]

    ro_f, loss_f, w_f = step(FastBackend())  # w: the update of each parameter
    ro_p, loss_p, w_p = step(PlainBackend())
    assert [c.texts for c in ro_f.completions[0]] == [c.texts for c in ro_p.completions[0]]
    assert loss_f == pytest.approx(loss_p, rel=1e-4, abs=1e-5) and ro_f.kl == pytest.approx(ro_p.kl, rel=1e-4, abs=1e-6)
    assert all(_close(u, v, rel=1e-4) for u, v in zip(w_f, w_p)) and any(v.abs().max() > 0 for v in w_p)


@pytest.mark.parametrize("pol", [FastBackend(), PlainBackend()], ids=["fast", "plain"])
def test_a_later_turns_prompt_meets_the_one_context_check(pol, small_tokenizer):
    # The trainer checks the first prompt when it is built; every prompt the backend samples, the
    # transition's too, goes through common.check_prompt_lengths: refused, never truncated.
    from magrpo_edu import MAGRPOTrainer
    from magrpo_edu.backends import PromptTooLongError
    from magrpo_edu.pretraining.pretrain import build_model

    tok = small_tokenizer
    model = build_model(len(tok), tok, hidden_size=16, layers=1, heads=2, intermediate_size=32, max_positions=32)
    agents = lora_agents(model, 2, tokenizer=tok, backend=pol)
    grow = lambda prompts, completions, histories: [p + " word" * 40 for p in prompts]  # noqa: E731
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=4, num_turns=2, max_steps=1, progress=False)
    tr = MAGRPOTrainer(agents, lambda c, r: [0.0] * len(c[0]), [lambda r: "Summary: x", lambda r: "Details: y"],
                       [{"text": "x"}], cfg, transition=grow)  # the first prompts fit
    with pytest.raises(PromptTooLongError, match=r"agent 'agent_0': 1 prompt\(s\) do not fit in the model's context of "
                                                 r"32 tokens; .* It begins 'Summary: x word word"):
        tr.train()
    assert tr.step == 0


@pytest.mark.parametrize("beta", [0.0, 0.1])
def test_activation_checkpointing_gives_the_same_step(make_model, small_tokenizer, beta):
    """A.checkpoint_activations: the backward pass recomputes each decoder layer (through the same
    adapter routing, re-entered for the recomputation) instead of holding its activations. One MAGRPO
    step with and without it from the same seed: the same samples, losses, KL and updates up to float
    rounding, and the adapters do get gradients (a reentrant checkpoint inside a frozen base gives none)."""
    def step(checkpointing):
        agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=10)
        if checkpointing:
            A.checkpoint_activations(agents)
            assert common.checkpointing_layers(agents[0].model)  # switched on
        start = [p.detach().clone() for a in agents for p in a.trainable_parameters()]
        opts = [torch.optim.SGD(a.trainable_parameters(), lr=1e-3) for a in agents]
        cfg = MAGRPOConfig(num_generations=3, max_new_tokens=5, beta=beta)
        torch.manual_seed(12)
        [(ro, losses)] = magrpo_step(agents, opts, [lambda row: "Summary: x", lambda row: "Details: y"], [{}],
                                     lambda c, row: [float(len(a) - len(b)) for a, b in zip(*c)], cfg)
        assert not any(m.training for m in agents[0].model.modules())  # eval mode restored everywhere
        return ro, losses, [p.detach() - p0 for p, p0 in zip((p for a in agents for p in a.trainable_parameters()), start)]

    ro_c, loss_c, w_c = step(True)
    ro_p, loss_p, w_p = step(False)
    assert [c.texts for c in ro_c.completions[0]] == [c.texts for c in ro_p.completions[0]]
    assert loss_c == pytest.approx(loss_p, rel=1e-4, abs=1e-5)
    assert all(_close(u, v, rel=1e-4) for u, v in zip(w_c, w_p)) and all(v.abs().max() > 0 for v in w_c)


def test_activation_checkpointing_recomputes_through_each_agents_adapter(make_model, small_tokenizer):
    """The recomputation in the backward pass must route each row through its own agent's adapter
    again: the gradients of two agents' log-probs match the plain per-agent forwards (no checkpointing)."""
    tok = small_tokenizer
    team = two_distinct_lora_agents(make_model(), tok, seed=7)
    cs = [_completions(tok, ["short", "a much longer prompt for this agent"], 3, 5, 0), _completions(tok, ["x y", "z"], 3, 4, 1)]
    params = [p for a in team for p in a.trainable_parameters()]
    plain = [plain_backend.logprobs(a, c) for a, c in zip(team, cs)]
    g_plain = torch.autograd.grad(sum((t * torch.arange(1, len(t) + 1)).sum() for t in plain), params)
    A.checkpoint_activations(team)
    fast = FastBackend().logprobs(team, cs)
    g_fast = torch.autograd.grad(sum((t * torch.arange(1, len(t) + 1)).sum() for t in fast), params)
    assert all(torch.allclose(x, y, atol=1e-4) for x, y in zip(fast, plain))
    assert all(_close(u, v) for u, v in zip(g_fast, g_plain))
    with pytest.raises(NotImplementedError, match="needs the fast backend"):
        plain_backend.logprobs(team[0], cs[0])  # the plain path cannot re-route a recomputation: it says so
