"""The plain policy interface (`magrpo_edu.policy`: step 2 sample, step 6 sum of token log-probs) and
its fast path (`magrpo_edu.fast_path`) compute the same thing: log-probs and their gradients, the
reference log-probs, and the sampled tokens for one agent; and the switch picks the path."""
import pytest
import torch

from magrpo_edu import MAGRPOConfig, lora_agents, separate_agents
from magrpo_edu import agents as A
from magrpo_edu import fast_path, policy
from magrpo_edu.algorithm import magrpo_step
from test_algorithm import two_distinct_lora_agents  # noqa: E402  (tests/ is on sys.path under pytest)

GEN = dict(max_new_tokens=6, temperature=1.0, top_p=1.0, top_k=0)


def _completions(tok, prompts, G, width, seed):
    """G rows per prompt (left-padded), random completion tokens, one row stopped early by an EOS."""
    enc = tok([p for p in prompts for _ in range(G)], return_tensors="pt", padding=True)
    gen = torch.Generator().manual_seed(seed)
    comp = torch.randint(5, len(tok), (len(prompts) * G, width), generator=gen)
    comp[1, 2] = tok.eos_token_id
    mask = policy.completion_mask(comp, tok.eos_token_id)
    return policy.Completions(enc["input_ids"], enc["attention_mask"], comp, mask, ["?"] * len(comp))


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
        fast = A.team_logprobs(team, cs, per_token=per_token, fast=True)
        plain = [policy.logprobs(a, c, per_token=per_token) for a, c in zip(team, cs)]
        assert A.team_logprobs(team, cs, per_token=per_token, fast=False)[0].shape == plain[0].shape
        for x, y in zip(fast, plain):
            assert x.shape == y.shape and torch.allclose(x, y, atol=1e-4), (x, y)
        g_fast = torch.autograd.grad(sum(t.square().sum() for t in fast), params)
        g_plain = torch.autograd.grad(sum(t.square().sum() for t in plain), params)
        assert all(_close(u, v) for u, v in zip(g_fast, g_plain))


def test_plain_reference_logprobs_equal_fast_ones(make_model, small_tokenizer):
    tok = small_tokenizer
    team = two_distinct_lora_agents(make_model(), tok, seed=8) + separate_agents(make_model(seed=5), 1, tokenizer=tok)
    c = _completions(tok, ["short", "a longer prompt"], 3, 5, 3)
    for a in team:
        fast, plain = A.reference_token_logprobs(a, c, fast=True), A.reference_token_logprobs(a, c, fast=False)
        assert torch.allclose(fast, plain, atol=1e-5)
    # the LoRA reference is the base: the same for both agents, not either agent's own log-probs
    assert torch.equal(A.reference_token_logprobs(team[0], c, fast=False), A.reference_token_logprobs(team[1], c, fast=False))
    assert not torch.allclose(policy.logprobs(team[0], c, per_token=True), A.reference_token_logprobs(team[0], c), atol=1e-3)


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
    (fast,) = A.sample_completions([agent], [prompts], 3, gen, fast=True)
    torch.manual_seed(11)
    plain = policy.sample(agent, prompts, 3, **gen)
    assert fast.sampling == plain.sampling == {k: gen[k] for k in ("temperature", "top_k", "top_p")}
    assert fast.completion_ids.shape[0] == 6
    if gen is GEN:  # the same tokens; with a top-k / top-p cut a last-bit difference between the two
        # prefills could move a token across the cut on another CPU, so there only the scores are compared
        for name in ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask"):
            assert torch.equal(getattr(fast, name), getattr(plain, name)), name
        assert fast.texts == plain.texts
    assert torch.allclose(A.completion_logprobs(agent, plain, fast=True), policy.logprobs(agent, plain), atol=1e-4)


def test_the_switch_picks_the_path(make_model, small_tokenizer, monkeypatch):
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=4)
    c = _completions(small_tokenizer, ["a prompt"], 2, 3, 4)
    calls = []
    for name in ("sample_completions", "team_logprobs", "token_logprobs"):
        real = getattr(fast_path, name)
        monkeypatch.setattr(fast_path, name, lambda *a, _n=name, _r=real, **k: calls.append(_n) or _r(*a, **k))
    A.sample_completions(agents, [["p"], ["q"]], 2, cfg)  # a MAGRPOConfig gives its sampling settings
    A.team_logprobs(agents, [c, c])
    A.reference_token_logprobs(agents[0], c)
    assert set(calls) == {"sample_completions", "team_logprobs", "token_logprobs"}  # default: the fast path
    calls.clear()
    monkeypatch.setattr(fast_path, "ENABLED", False)
    out = A.sample_completions(agents, [["p"], ["q"]], 2, GEN)
    A.team_logprobs(agents, [c, c])
    A.completion_logprobs(agents[0], c)
    A.reference_token_logprobs(agents[0], c)
    assert calls == [] and [o.completion_ids.shape[0] for o in out] == [2, 2]  # switched off: plain code only
    A.team_logprobs(agents, [c, c], fast=True)  # an explicit argument wins over the switch
    assert calls[0] == "team_logprobs"


def test_a_training_step_on_the_plain_path_matches_the_fast_path(make_model, small_tokenizer, monkeypatch):
    # One MAGRPO step (steps 2-7) per path from the same seed: the same samples, the same losses, KL and
    # updates (SGD: the gradients) up to float rounding. batch_agents=False: the fast path then samples
    # each agent in its own generate call, drawing the random numbers the plain path draws (its
    # log-probs stay batched).
    def step():
        agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=10)
        start = [p.detach().clone() for a in agents for p in a.trainable_parameters()]
        opts = [torch.optim.SGD(a.trainable_parameters(), lr=1e-3) for a in agents]  # AdamW's first step is sign-like
        cfg = MAGRPOConfig(num_generations=3, max_new_tokens=5, beta=0.1, batch_agents=False)
        torch.manual_seed(12)
        ro, losses = magrpo_step(agents, opts, ["Summary: x", "Details: y"], {},
                                 lambda c, row: [float(len(a) - len(b)) for a, b in zip(*c)], cfg)
        return ro, losses, [p.detach() - p0 for p, p0 in zip((p for a in agents for p in a.trainable_parameters()), start)]

    ro_f, loss_f, w_f = step()  # w: the update of each parameter
    monkeypatch.setattr(fast_path, "ENABLED", False)
    ro_p, loss_p, w_p = step()
    assert [c.texts for c in ro_f.completions[0]] == [c.texts for c in ro_p.completions[0]]
    assert loss_f == pytest.approx(loss_p, rel=1e-4, abs=1e-5) and ro_f.kl == pytest.approx(ro_p.kl, rel=1e-4, abs=1e-6)
    assert all(_close(u, v, rel=1e-4) for u, v in zip(w_f, w_p)) and any(v.abs().max() > 0 for v in w_p)
