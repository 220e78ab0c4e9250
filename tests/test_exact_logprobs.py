"""Step 6 scores each sampled token under the distribution step 2 drew it from (issue 35, item 1):
the model's logits through generate's warpers (temperature, top-k, top-p), on the plain and the
fast path, per agent where an agent overrides the settings; the KL leash's reference at the same
temperature. Every check is against a reference computed here independently: one forward per row
without padding, the temperature, top-k and top-p cut written out by hand."""

import pytest
import torch

from magrpo_edu import MAGRPOConfig, lora_agents, separate_agents
from magrpo_edu import agents as A
from magrpo_edu import algorithm
from magrpo_edu.backends import common, plain
from magrpo_edu.backends.fast import FastBackend
from magrpo_edu.backends import PlainBackend
from conftest import row_by_row, two_distinct_lora_agents  # noqa: E402  (shared test helpers: tests/conftest.py)

SETTINGS = [dict(temperature=0.5, top_k=0, top_p=1.0), dict(temperature=0.7, top_k=8, top_p=1.0),
            dict(temperature=1.0, top_k=0, top_p=0.7), dict(temperature=0.6, top_k=20, top_p=0.8)]


def team(make_model, tok):
    """Two LoRA agents on one base (adapters made different) and a full-model agent that samples at
    its own temperature (generation_kwargs override the config's)."""
    full = separate_agents(make_model(seed=3), 1, tokenizer=tok, names=["solo"])[0]
    full.generation_kwargs = {"temperature": 1.3}
    return two_distinct_lora_agents(make_model(), tok, seed=7) + [full]


def route_of(a, rows):
    return {"adapter_names": [a.adapter] * rows} if a.adapter is not None else {}


POLICIES = {"fast": FastBackend(), "plain": PlainBackend()}


@pytest.mark.parametrize("kind", ["fast", "plain"])
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "T{temperature}-k{top_k}-p{top_p}".format(**s))
def test_logprobs_are_the_samplers_on_both_paths(settings, kind, make_model, small_tokenizer):
    tok = small_tokenizer
    agents, pol = team(make_model, tok), POLICIES[kind]
    prompts = [["Summary: a post", "a much longer prompt about the post"], ["Details: x"], ["one prompt"]]
    torch.manual_seed(0)
    comps = pol.sample(agents, prompts, 3, dict(max_new_tokens=6, **settings))
    for a, c in zip(agents, comps):
        want = {**settings, **a.generation_kwargs}
        assert c.sampling == want, (a.name, c.sampling)
    per_token = pol.logprobs(agents, comps, per_token=True)
    sums = pol.logprobs(agents, comps)
    moved = 0.0
    for a, c, lp, s in zip(agents, comps, per_token, sums):
        ref = row_by_row(a.model, c, c.sampling, route_of(a, 1))
        for r, want in enumerate(ref):
            n = len(want)
            assert torch.isfinite(lp[r]).all()
            assert torch.allclose(lp[r, :n], want, atol=2e-4), (a.name, r, lp[r, :n], want)
            assert lp[r, n:].abs().sum() == 0  # after the first EOS: nothing
            assert s[r].item() == pytest.approx(want.sum().item(), abs=5e-4)
        raw = row_by_row(a.model, c, {}, route_of(a, 1))  # the old computation: raw log_softmax
        moved = max(moved, max((x - y).abs().max().item() for x, y in zip(raw, ref)))
    assert moved > 0.05  # the settings do change the log-probs: the comparison can fail
    # gradients: those of the independent per-row reference (agent 0, LoRA; agent 2, full model)
    for i in (0, 2):
        a, c = agents[i], comps[i]
        params = a.trainable_parameters()
        g = torch.autograd.grad(pol.logprobs([a], [c])[0].square().sum(), params)
        g_ref = torch.autograd.grad(sum(x.sum().square() for x in row_by_row(a.model, c, c.sampling, route_of(a, 1))),
                                    params)
        for u, v in zip(g, g_ref):
            assert torch.isfinite(u).all()
            assert (u - v).abs().max() <= 1e-4 * v.abs().max() + 1e-6


def test_the_tokens_generate_draws_follow_the_scored_distribution(make_model, small_tokenizer):
    # One prompt, one new token, 4000 draws at T 0.5, top-k 12, top-p 0.9: the frequency of each
    # drawn token is the probability step 6 gives it (total variation over the drawn tokens plus the
    # scored mass left on tokens never drawn); the raw softmax is far from it.
    tok = small_tokenizer
    (agent,) = separate_agents(make_model(seed=2), 1, tokenizer=tok, reference=False)
    settings = dict(temperature=0.5, top_k=12, top_p=0.9)
    torch.manual_seed(1)
    (c,) = A.team_backend([agent]).sample([agent], [["The cat"]], 4000, dict(max_new_tokens=1, **settings))
    drawn, counts = c.completion_ids[:, 0].unique(return_counts=True)
    n = len(drawn)
    one = common.Completions(c.prompt_ids[:1].expand(n, -1), c.prompt_mask[:1].expand(n, -1), drawn[:, None],
                             torch.ones(n, 1, dtype=torch.long), [""] * n, c.sampling)
    raw_one = common.Completions(one.prompt_ids, one.prompt_mask, one.completion_ids, one.completion_mask, one.texts)
    with torch.no_grad():
        scored, raw = agent.backend.logprobs([agent], [one])[0].exp(), agent.backend.logprobs([agent], [raw_one])[0].exp()
    freq = counts.float() / counts.sum()
    assert 2 <= n <= 12 and scored.sum().item() <= 1 + 1e-4  # inside the top-k set; a distribution
    tv = 0.5 * ((freq - scored).abs().sum() + (1 - scored.sum())).item()
    tv_raw = 0.5 * ((freq - raw).abs().sum() + (1 - raw.sum())).item()
    assert tv < 0.05 and tv_raw > 0.2, (tv, tv_raw)


def test_default_settings_are_the_raw_softmax_bit_for_bit(make_model, small_tokenizer):
    # Temperature 1, top_k 0, top_p 1 (the config's defaults): no warper runs, the numbers are the
    # raw log_softmax's exactly (fixed-seed histories do not move).
    agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=4)
    torch.manual_seed(0)
    comps = A.team_backend(agents).sample(agents, [["Summary: x"], ["Details: y"]], 3, common.sampling_settings(MAGRPOConfig(max_new_tokens=5)))
    assert comps[0].sampling == dict(temperature=1.0, top_k=0, top_p=1.0)
    for pol in POLICIES.values():
        a = pol.logprobs(agents, comps, per_token=True)
        for c in comps:
            c.sampling = None
        b = pol.logprobs(agents, comps, per_token=True)
        for c in comps:
            c.sampling = dict(temperature=1.0, top_k=0, top_p=1.0)
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert common.logits_warpers(1.0, 0, 1.0)[0] is None and not common.logits_warpers(1.0, 0, 1.0)[1]


def test_sampler_settings_resolve_as_generate_does():
    from types import SimpleNamespace

    model = SimpleNamespace(generation_config=SimpleNamespace(temperature=None, top_k=None, top_p=0.95))
    assert common.sampler_settings(model, {}) == dict(temperature=1.0, top_k=50, top_p=0.95)  # transformers' top_k 50
    assert common.sampler_settings(model, dict(temperature=0.5, top_k=0, top_p=1.0)) == dict(temperature=0.5, top_k=0,
                                                                                            top_p=1.0)


def test_truncation_keeps_gradients_finite_and_the_own_token(make_model, small_tokenizer):
    # A token outside the kept set can only come from float rounding at the cut (generate drew it
    # inside): it is put back (finite log-prob); padding after EOS never makes a NaN gradient.
    tok = small_tokenizer
    (agent,) = separate_agents(make_model(seed=5), 1, tokenizer=tok, reference=False)
    enc = tok(["a prompt", "another longer prompt"], return_tensors="pt", padding=True)
    comp = torch.tensor([[40, 41, tok.eos_token_id, 0, 0], [50, 51, 52, 53, 54]])
    c = common.Completions(enc["input_ids"], enc["attention_mask"], comp, common.completion_mask(comp, tok.eos_token_id),
                           ["a", "b"], dict(temperature=0.5, top_k=1, top_p=0.5))
    lp = agent.backend.logprobs([agent], [c], per_token=True)[0]
    assert torch.isfinite(lp).all() and (lp <= 0).all() and lp[0, 3:].abs().sum() == 0
    grads = torch.autograd.grad(lp.sum(), agent.trainable_parameters())
    assert all(torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("kind", ["fast", "plain"])
def test_reference_is_taken_at_the_sampling_temperature_untruncated(kind, make_model, small_tokenizer):
    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=6) + separate_agents(make_model(seed=8), 1, tokenizer=tok)
    pol = POLICIES[kind]
    torch.manual_seed(2)
    comps = pol.sample(agents, [["Summary: x"], ["Details: y"], ["z"]], 3,
                       dict(max_new_tokens=5, temperature=0.5, top_k=10, top_p=0.9))
    for a, c in zip(agents, comps):
        (got,) = pol.reference_logprobs([a], [c], 0.5)
        model, route = (a.model, {"adapter_names": ["__base__"]}) if a.adapter else (a.reference, {})
        with torch.no_grad():
            want = row_by_row(model, c, dict(temperature=0.5), route)
        for r, w in enumerate(want):
            assert torch.allclose(got[r, :len(w)], w, atol=2e-4)
        assert pol.reference_logprobs([a], [c])[0].ne(got).any()  # temperature 1 (naturalness) differs


def test_kl_is_zero_at_the_start_at_any_temperature(make_model, small_tokenizer):
    # At initialisation pi = pi_ref (B = 0); with the policy scored at T = 0.5, a reference at T = 1
    # would report a KL of several nats per completion here.
    agents = lora_agents(make_model(seed=1), 2, tokenizer=small_tokenizer)
    cfg = MAGRPOConfig(num_generations=3, max_new_tokens=6, temperature=0.5, beta=0.1)
    torch.manual_seed(3)
    ro = algorithm.rollout(agents, ["Summary: a", "Details: b"], {}, lambda c, r: [float(len(x)) for x in c[0]], cfg)
    algorithm.agent_losses(agents, ro, beta=0.1)
    assert ro.kl == pytest.approx([0.0, 0.0], abs=1e-6)
    c = ro.completions[0][0]
    policy_t = agents[0].backend.logprobs([agents[0]], [c], per_token=True)[0].detach()
    at_one = agents[0].backend.reference_logprobs([agents[0]], [c], 1.0)[0]
    assert algorithm.kl_penalty(policy_t, at_one, c.completion_mask).mean() > 0.05


def test_with_top_k_the_first_step_kl_is_z_minus_log_z_minus_one(make_model, small_tokenizer):
    # At initialisation the sampler is pi_ref cut to its top k and renormalised: pi = pi_ref / Z on the
    # kept set, so every drawn token has r = pi_ref / pi = Z and k3 = Z - log Z - 1 > 0 (deviation 11:
    # a truncated sampler's logged kl is not 0 at the start, and reads low by 1 - Z per token later).
    (agent,) = lora_agents(make_model(seed=1), 1, tokenizer=small_tokenizer)
    settings = dict(temperature=1.0, top_k=5, top_p=1.0)
    torch.manual_seed(4)
    (c,) = A.team_backend([agent]).sample([agent], [["Summary: a"]], 3, dict(max_new_tokens=6, **settings))
    with torch.no_grad():
        logp = agent.backend.logprobs([agent], [c], per_token=True)[0]
        ref = agent.backend.reference_logprobs([agent], [c], 1.0)[0]
        kl = algorithm.kl_penalty(logp, ref, c.completion_mask)  # summed over each completion's tokens
        raw = row_by_row(agent.model, c, {}, {"adapter_names": ["__base__"]})  # untruncated log pi_ref per token
    for r in range(c.completion_ids.shape[0]):
        n = len(raw[r])
        ids = torch.cat([c.prompt_ids[r][c.prompt_mask[r].bool()], c.completion_ids[r, :n]])[None]
        with torch.no_grad():
            logits = agent.model(input_ids=ids, adapter_names=["__base__"]).logits[0, -n - 1:-1].float()
        Z = torch.softmax(logits, -1).topk(5, dim=-1).values.sum(-1)  # pi_ref's mass on the kept set
        want = (Z - Z.log() - 1).sum().item()
        assert want > 1e-3 and kl[r].item() == pytest.approx(want, rel=1e-3, abs=1e-5), (r, kl[r], want)


def test_the_cut_in_row_chunks_equals_the_cut_at_once(monkeypatch):
    # The top-k / top-p mask is computed a few rows at a time (memory); the chunks must not change it.
    torch.manual_seed(0)
    logits, tokens = torch.randn(3, 7, 50), torch.randint(0, 50, (3, 7))
    settings = dict(temperature=0.7, top_k=20, top_p=0.8)
    whole = common.sampled_token_logprobs(logits, tokens, settings)
    monkeypatch.setattr(common, "CUT_CHUNK_ELEMENTS", 50 * 4)  # 4 rows a chunk: 21 rows in 6 chunks
    chunked = common.sampled_token_logprobs(logits, tokens, settings)
    assert torch.equal(whole, chunked) and torch.isfinite(whole).all()
    assert not torch.allclose(whole, torch.log_softmax(logits, -1).gather(-1, tokens[..., None])[..., 0])
