"""Steps 3-6 and the tree on hand-made inputs: joint actions, credit, masking, loss, returns,
the reward contract, and config validation; the plain single-turn step against the one-turn tree."""

import pytest
import torch

from magrpo_edu import MAGRPOConfig, RewardFunctionError, joint_actions, lora_agents, policy_loss
from magrpo_edu.agents import team_backend
from magrpo_edu.backends import Completions, completion_mask, sampling_settings
from magrpo_edu.algorithm import Node, compute_returns, credit_samples, joint_rewards
from conftest import row_by_row, two_distinct_lora_agents  # noqa: E402  (shared test helpers: tests/conftest.py)


def test_completion_mask_stops_after_first_eos():
    ids = torch.tensor([[5, 2, 7, 2], [5, 6, 7, 8], [2, 0, 0, 0]])
    assert completion_mask(ids, 2).tolist() == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]
    assert completion_mask(ids, [2, 8]).tolist() == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]


def test_joint_actions_aligned_and_cross():
    assert joint_actions(3, 2, "aligned").tolist() == [[0, 0, 0], [1, 1, 1]]
    t = joint_actions(2, 3, "cross")
    assert t.shape == (9, 2) and t.tolist()[:4] == [[0, 0], [0, 1], [0, 2], [1, 0]]


def test_aligned_credit_is_identity():
    adv = torch.tensor([0.5, -1.0, 0.5, 0.0])
    out = credit_samples(adv, joint_actions(2, 4, "aligned"), 4)
    assert out.tolist() == [adv.tolist(), adv.tolist()]


def test_cross_credit_is_mean_over_combinations():
    # 2 agents, G = 2: joint rewards r[k1, k2]; A = r - mean(r)
    r = torch.tensor([1.0, 3.0, 5.0, 7.0])  # (0,0), (0,1), (1,0), (1,1); mean 4
    A = r - r.mean()  # [-3, -1, 1, 3]
    out = credit_samples(A, joint_actions(2, 2, "cross"), 2)
    # agent 0, sample 0 is in (0,0),(0,1): mean(-3,-1) = -2; sample 1: mean(1,3) = 2
    # agent 1, sample 0 is in (0,0),(1,0): mean(-3, 1) = -1; sample 1: mean(-1,3) = 1
    assert out.tolist() == [[-2.0, 2.0], [-1.0, 1.0]]


def test_credit_keeps_the_advantages_dtype():
    # a float64 advantage (a learner's exercise answer, notebook 06) is credited in float64, not refused by index_add_
    A = torch.tensor([1.0, 3.0, 5.0, 7.0], dtype=torch.float64) - 4.0
    out = credit_samples(A, joint_actions(2, 2, "cross"), 2)
    assert out.dtype == torch.float64 and out.tolist() == [[-2.0, 2.0], [-1.0, 1.0]]


def test_policy_loss_is_minus_mean_of_advantage_times_sum_logprob():
    logps = torch.tensor([-2.0, -4.0, -1.0, -3.0], requires_grad=True)
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5])
    loss = policy_loss(logps, adv)
    assert loss.item() == pytest.approx(-(1 * -2 + -1 * -4 + 0.5 * -1 + -0.5 * -3) / 4)
    loss.backward()
    assert torch.allclose(logps.grad, -adv / 4)  # d L / d log pi = -A / G


def test_returns_on_a_hand_made_tree():
    # root has 2 joint actions; action 0 has a child with rewards [1, 3] (mean 2); action 1 is a leaf.
    root = Node(depth=0, prompts=["a"], histories=[[]], rewards=torch.tensor([0.5, 2.0]))
    root.children[0] = Node(depth=1, prompts=["b"], histories=[[]], rewards=torch.tensor([1.0, 3.0]))
    R = compute_returns(root, discount=0.9)
    assert R.tolist() == pytest.approx([0.5 + 0.9 * 2.0, 2.0])
    assert root.children[0].returns.tolist() == [1.0, 3.0]


def _length_reward(completions, row):
    a, b = completions
    return {"total": [len(x) + 0.1 * len(y) for x, y in zip(a, b)], "first": [float(len(x)) for x in a]}


@pytest.mark.parametrize("mode", ["aligned", "cross"])
def test_single_turn_rollout_equals_the_one_turn_tree(make_model, small_tokenizer, mode):
    # The plain single-turn step (steps 2-5 in a row) must be the tree's root alone: same random
    # numbers drawn, same completions, rewards, returns, advantages, credit and losses.
    from magrpo_edu.algorithm import agent_losses, assign_advantages, rollout_tree, single_turn_rollout

    agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=7)
    cfg = MAGRPOConfig(num_generations=3, max_new_tokens=6, joint_mode=mode)
    prompts = ["Summary: a post", "Details: a longer post about it"]
    torch.manual_seed(8)
    plain = single_turn_rollout(agents, prompts, {}, _length_reward, cfg)
    state = torch.get_rng_state()
    torch.manual_seed(8)
    tree = rollout_tree(agents, prompts, {}, _length_reward, cfg)
    assert torch.equal(torch.get_rng_state(), state)
    assign_advantages(tree, cfg)
    p, t = plain.root, tree.root
    assert len(plain.levels) == len(tree.levels) == 1 and not p.children and not t.children
    assert p.prompts == t.prompts and p.completions == t.completions and p.histories == t.histories
    for cp, ct in zip(plain.completions[0], tree.completions[0]):
        assert cp.texts == ct.texts and torch.equal(cp.completion_ids, ct.completion_ids)
    for name in ("table", "rewards", "returns", "advantages", "sample_advantages"):
        assert torch.equal(getattr(p, name), getattr(t, name)), name
    assert p.components.keys() == t.components.keys() == {"first"}
    assert torch.equal(p.components["first"], t.components["first"])
    assert p.rewards.shape == (3 if mode == "aligned" else 9,) and p.advantages.abs().sum() > 0
    assert [x.item() for x in agent_losses(agents, plain)] == [x.item() for x in agent_losses(agents, tree)]


def _hand_advantages(texts_a, texts_b, mode="aligned"):
    """Steps 3-5 by hand, in Python floats, from the sampled texts: _length_reward of each joint
    action, its mean baseline, and each sample's credit (the mean over the joint actions holding it)."""
    G = len(texts_a)
    pairs = [(g, g) for g in range(G)] if mode == "aligned" else [(g, h) for g in range(G) for h in range(G)]
    r = [len(texts_a[g]) + 0.1 * len(texts_b[h]) for g, h in pairs]
    adv = [x - sum(r) / len(r) for x in r]
    credit = [[sum(a for (g, h), a in zip(pairs, adv) if (g, h)[i] == k) / sum(1 for gh in pairs if gh[i] == k)
               for k in range(G)] for i in range(2)]
    return r, adv, credit


@pytest.mark.parametrize("mode", ["aligned", "cross"])
def test_rollout_rewards_advantages_and_credit_are_the_hand_numbers(make_model, small_tokenizer, mode):
    # Steps 3-5 of `rollout` against the numbers computed by hand from the texts it sampled.
    from magrpo_edu.algorithm import rollout

    agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=7)
    cfg = MAGRPOConfig(num_generations=3, max_new_tokens=6, joint_mode=mode, advantage_clip=None)
    torch.manual_seed(8)
    ro = rollout(agents, ["Summary: a post", "Details: a longer post about it"], {}, _length_reward, cfg)
    a, b = ro.root.completions
    r, adv, credit = _hand_advantages(a, b, mode)
    assert len(set(r)) > 1  # the samples differ: the advantages are not all zero
    assert ro.root.rewards.tolist() == pytest.approx(r, abs=1e-5)
    assert ro.root.advantages.tolist() == pytest.approx(adv, abs=1e-5)
    assert ro.root.sample_advantages.tolist() == [pytest.approx(c, abs=1e-5) for c in credit]
    assert [c.texts for c in ro.completions[0]] == [a, b]


def test_two_turn_returns_are_discounted_by_hand(make_model, small_tokenizer):
    # R_j = r_j + 0.9 * mean(child's rewards) at the root; advantages among siblings at each node.
    from magrpo_edu.algorithm import rollout

    agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=3)
    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=4, num_turns=2, advantage_clip=None)
    transition = lambda prompts, completions, histories: [p + " " + c for p, c in zip(prompts, completions)]  # noqa: E731
    torch.manual_seed(5)
    ro = rollout(agents, ["Summary: a post", "Details: a post"], {}, _length_reward, cfg, transition)
    root = ro.root
    r, _, _ = _hand_advantages(*root.completions)
    R = [r[j] + 0.9 * sum(_hand_advantages(*root.children[j].completions)[0]) / 2 for j in range(2)]
    assert root.returns.tolist() == pytest.approx(R, abs=1e-4)
    assert root.advantages.tolist() == pytest.approx([R[0] - sum(R) / 2, R[1] - sum(R) / 2], abs=1e-4)
    for j in range(2):
        child = root.children[j]
        rc = _hand_advantages(*child.completions)[0]
        assert child.advantages.tolist() == pytest.approx([x - sum(rc) / 2 for x in rc], abs=1e-4)


def test_magrpo_step_is_one_sgd_step_on_the_hand_loss(make_model, small_tokenizer):
    # Steps 1-7 at temperature 0.5 against a reference built here: the hand advantages, each agent's
    # loss -(1/G) sum_g A_g sum_t log p(a_t) with log p from one forward per row (no padding) at
    # logits / 0.5, its gradient, and w - lr * grad. A wrong sign, a missing temperature or another
    # normalisation moves the weights elsewhere; and the step raises the advantage-weighted log-prob.
    from magrpo_edu.algorithm import magrpo_step

    lr, T, G = 1e-3, 0.5, 3
    cfg = MAGRPOConfig(num_generations=G, max_new_tokens=5, temperature=T, advantage_clip=None)
    prompts = ["Summary: a post", "Details: a post"]
    agents = two_distinct_lora_agents(make_model(), small_tokenizer, seed=9)
    before = two_distinct_lora_agents(make_model(), small_tokenizer, seed=9)  # the same weights, never stepped
    opts = [torch.optim.SGD(a.trainable_parameters(), lr=lr) for a in agents]
    torch.manual_seed(10)
    [(ro, losses)] = magrpo_step(agents, opts, [lambda row, p=p: p for p in prompts], [{}], _length_reward, cfg)
    _, _, credit = _hand_advantages(*ro.root.completions)
    assert max(abs(x) for c in credit for x in c) > 0.1  # some sample above or below the baseline: the step moves
    for i, (a, b) in enumerate(zip(agents, before)):
        c = ro.completions[0][i]
        route = {"adapter_names": [b.adapter]}
        logp = [x.sum() for x in row_by_row(b.model, c, dict(temperature=T), route)]
        loss = -sum(A * lp for A, lp in zip(credit[i], logp)) / G
        assert losses[i] == pytest.approx(loss.item(), rel=1e-4, abs=1e-5)
        grads = torch.autograd.grad(loss, b.trainable_parameters())
        for w_new, w_old, g in zip(a.trainable_parameters(), b.trainable_parameters(), grads):
            want = w_old.detach() - lr * g
            assert (w_new.detach() - want).abs().max() <= 1e-3 * lr * g.abs().max() + 1e-7
        with torch.no_grad():
            after = [x.sum() for x in row_by_row(a.model, c, dict(temperature=T), route)]
        rise = sum(A * (y - x).item() for A, x, y in zip(credit[i], logp, after))
        assert rise > 0, rise  # above-baseline samples gained log-prob relative to the others

def test_logprobs_ignore_padding_and_post_eos_tokens(make_model, small_tokenizer):
    tok = small_tokenizer
    agents = lora_agents(make_model(), 1, tokenizer=tok)
    a = agents[0]
    p_short = tok(["hi"], return_tensors="pt")
    p_long = tok(["hi", "a much longer prompt here"], return_tensors="pt", padding=True)
    comp = torch.tensor([[10, 11, tok.eos_token_id, 12]])
    mask = completion_mask(comp, tok.eos_token_id)
    alone = a.backend.logprobs([a], [Completions(p_short["input_ids"], p_short["attention_mask"], comp, mask, ["x"])])[0]
    comp2 = torch.cat([comp, torch.tensor([[10, 11, 12, 13]])])
    batched = a.backend.logprobs([a], [Completions(p_long["input_ids"], p_long["attention_mask"], comp2,
                                                 completion_mask(comp2, tok.eos_token_id), ["x", "y"])])[0]
    assert batched[0].item() == pytest.approx(alone[0].item(), abs=1e-4)  # left padding changes nothing
    garbage = comp.clone()
    garbage[0, 3] = 99  # a different token after EOS must not matter
    again = a.backend.logprobs([a], [Completions(p_short["input_ids"], p_short["attention_mask"], garbage, mask, ["x"])])[0]
    assert again.item() == pytest.approx(alone.item(), abs=1e-5)


def test_team_logprobs_one_pass_equals_per_agent_passes_values_and_gradients(make_model, small_tokenizer):
    # Two LoRA agents on one base, made different (B != 0), with different prompt/completion widths:
    # the shared mixed-adapter pass must give each agent's own log-probs and own gradients.

    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=1)
    def comps(prompts, comp):
        enc = tok(prompts, return_tensors="pt", padding=True)
        return Completions(enc["input_ids"], enc["attention_mask"], comp, completion_mask(comp, tok.eos_token_id), ["?"] * len(prompts))
    c0 = comps(["hi", "a longer prompt for agent one"], torch.tensor([[10, 11, 12], [13, tok.eos_token_id, 0]]))
    c1 = comps(["x", "y"], torch.tensor([[20, 21, 22, 23, 24], [25, 26, 27, 28, 29]]))
    alone = [a.backend.logprobs([a], [c])[0] for a, c in zip(agents, (c0, c1))]
    grads_alone = []
    for a, lp in zip(agents, alone):
        g = torch.autograd.grad(lp.sum(), a.trainable_parameters())
        grads_alone.append(g)
    team = team_backend(agents).logprobs(agents, [c0, c1])
    for x, y in zip(team, alone):
        assert torch.allclose(x, y, atol=1e-4), (x, y)
    assert not torch.allclose(alone[0], agents[1].backend.logprobs([agents[1]], [c0])[0], atol=1e-3)  # the adapters do differ
    for a, lp, g_alone in zip(agents, team, grads_alone):
        g_team = torch.autograd.grad(lp.sum(), a.trainable_parameters(), retain_graph=True)
        assert all(torch.allclose(u, v, atol=1e-4) for u, v in zip(g_team, g_alone))


def test_adapter_rows_equals_peft_mixed_adapter_batches(make_model, small_tokenizer):
    # Our slice-and-hook routing (backends.fast.adapter_rows) must compute exactly what peft's own
    # mixed-adapter batch (adapter_names=...) computes: logits, gradients, and sampled tokens.
    from magrpo_edu.backends.fast import adapter_rows

    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=2)
    model = agents[0].model
    names = ["agent_0", "agent_0", "agent_1", "agent_1", "agent_0"]  # three spans, one not contiguous
    enc = tok(["hi there", "a longer prompt here", "x", "y y y", "z"], return_tensors="pt", padding=True)
    params = [p for a in agents for p in a.trainable_parameters()]

    ref = model(**enc, adapter_names=names).logits
    g_ref = torch.autograd.grad(ref.square().mean(), params)
    with adapter_rows(model, names) as extra:
        assert extra == {"adapter_names": ["__base__"] * 5}  # peft computes the base only
        ours = model(**enc, **extra).logits
    g_ours = torch.autograd.grad(ours.square().mean(), params)
    assert torch.allclose(ours, ref, atol=1e-5)
    assert all(torch.allclose(u, v, atol=1e-5) for u, v in zip(g_ours, g_ref))
    base = model(**enc, adapter_names=["__base__"] * 5).logits  # the hooks are gone afterwards
    assert not torch.allclose(base, ref, atol=1e-3)

    gen = dict(do_sample=True, max_new_tokens=6, min_new_tokens=6, pad_token_id=tok.pad_token_id)
    torch.manual_seed(3)
    with torch.inference_mode():
        want = model.generate(**enc, adapter_names=names, **gen)
    torch.manual_seed(3)
    with torch.inference_mode(), adapter_rows(model, names) as extra:
        got = model.generate(**enc, **extra, **gen)
    assert torch.equal(got, want)


def test_lean_adapter_rows_are_bit_for_bit_the_hooked_ones(make_model, small_tokenizer):
    # Sampling's lean routing (each LoRA Linear's forward replaced by base + slices for the call, no
    # peft dispatch) computes the same operations as the hook: the same bits, the same sampled tokens
    # as peft's own mixed-adapter batch, and peft's own forward back afterwards.
    from peft.tuners.lora import Linear as LoraLinear

    from magrpo_edu.backends.fast import adapter_rows

    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=5)
    model = agents[0].model
    names = ["agent_0", "agent_0", "agent_1", "agent_1", "agent_1"]
    enc = tok(["hi there", "a longer prompt here", "x", "y y y", "z"], return_tensors="pt", padding=True)
    with torch.inference_mode():
        with adapter_rows(model, names) as extra:
            hooked = model(**enc, **extra).logits
        with adapter_rows(model, names, lean=True) as extra:
            assert extra == {}  # nothing for peft to route
            lean = model(**enc, **extra).logits
        peft_own = model(**enc, adapter_names=names).logits
    assert torch.equal(lean, hooked) and torch.allclose(lean, peft_own, atol=1e-5)
    assert not any("forward" in vars(m) for m in model.modules() if isinstance(m, LoraLinear))

    gen = dict(do_sample=True, max_new_tokens=6, min_new_tokens=6, pad_token_id=tok.pad_token_id)
    torch.manual_seed(3)
    with torch.inference_mode():
        want = model.generate(**enc, adapter_names=names, **gen)
    torch.manual_seed(3)
    with torch.inference_mode(), adapter_rows(model, names, lean=True) as extra:
        got = model.generate(**enc, **extra, **gen)
    assert torch.equal(got, want)


def test_stacked_adapters_on_a_gpu_equal_the_per_agent_slices(make_model, small_tokenizer, monkeypatch):
    # On a GPU, sampling adds every agent's adapter through one bmm pair per layer
    # (backends.fast._add_stacked_adapters). Forced on here on the CPU: the same logits as the per-agent
    # slices up to rounding, the same sampled tokens where no two logits tie; only for equal blocks of
    # rows without a gradient; never on the CPU by default (CPU histories stay bit for bit).
    import magrpo_edu.backends.fast as F

    assert "cpu" not in F.STACKED_ADAPTERS_ON
    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=6)
    model = agents[0].model
    enc = tok(["hi there", "a longer prompt here", "x", "y y y"], return_tensors="pt", padding=True)
    names = ["agent_0", "agent_0", "agent_1", "agent_1"]
    with torch.inference_mode(), F.adapter_rows(model, names, lean=True):
        slices = model(**enc).logits
    calls = []
    stacked = F._add_stacked_adapters
    monkeypatch.setattr(F, "_add_stacked_adapters", lambda *a: calls.append(1) or stacked(*a))
    monkeypatch.setattr(F, "STACKED_ADAPTERS_ON", ("cpu",))
    with torch.inference_mode(), F.adapter_rows(model, names, lean=True):
        ours = model(**enc).logits
    n_lora = sum(1 for m in model.modules() if type(m).__name__ == "Linear" and hasattr(m, "lora_A"))
    assert len(calls) == n_lora > 0  # every LoRA layer took the batched form
    assert torch.allclose(ours, slices, atol=1e-5) and not torch.equal(ours, model(**enc).logits.detach())
    calls.clear()
    with torch.inference_mode(), F.adapter_rows(model, ["agent_0", "agent_1", "agent_1", "agent_1"], lean=True):
        model(**enc)  # unequal blocks: the slices
    with F.adapter_rows(model, names, lean=True):
        model(**enc).logits.sum().backward()  # under a gradient: the slices
    assert calls == []

    comps = F.sample_completions(agents, [["hi there"], ["x"]], 3, dict(max_new_tokens=5))
    assert calls and [c.completion_ids.shape[0] for c in comps] == [3, 3]


def test_shared_prompt_forward_equals_row_by_row_forward(make_model, small_tokenizer, monkeypatch):
    # The G rows of one prompt share one prompt forward (backends.fast._shared_prompt_cache); values and
    # gradients must equal a plain forward of each row alone, with left padding, EOS and two adapters.
    import magrpo_edu.agents as A
    import magrpo_edu.backends.fast as F

    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=4)
    G = 3
    def comps(prompts):
        enc = tok([p for p in prompts for _ in range(G)], return_tensors="pt", padding=True)
        comp = torch.randint(5, len(tok), (len(prompts) * G, 5))
        comp[1, 2] = tok.eos_token_id  # one row stops early: its tail is masked
        return Completions(enc["input_ids"], enc["attention_mask"], comp, completion_mask(comp, tok.eos_token_id), ["?"] * len(comp))
    cs = [comps(["short", "a much longer prompt for this agent"]), comps(["x y", "z"])]
    calls = []
    real = F._shared_prompt_cache
    monkeypatch.setattr(F, "_shared_prompt_cache", lambda *a, **k: calls.append(1) or real(*a, **k))
    team = A.team_backend(agents).logprobs(agents, cs)
    assert calls == [1]  # one shared prompt pass for the whole team
    params = [p for a in agents for p in a.trainable_parameters()]
    g_team = torch.autograd.grad(sum(t.square().sum() for t in team), params)
    rows = []
    for a, c in zip(agents, cs):
        rows.append(torch.cat([a.backend.logprobs([a], [Completions(c.prompt_ids[r:r + 1], c.prompt_mask[r:r + 1],
                               c.completion_ids[r:r + 1], c.completion_mask[r:r + 1], ["?"])])[0] for r in range(len(c.texts))]))
    assert calls == [1]  # a single row has nothing to share: the plain path
    g_rows = torch.autograd.grad(sum(t.square().sum() for t in rows), params)
    for x, y in zip(team, rows):
        assert torch.allclose(x, y, atol=1e-4), (x, y)
    for u, v in zip(g_team, g_rows):  # gradients of size ~100: compare relative to each tensor's scale
        assert (u - v).abs().max() <= 1e-5 * v.abs().max() + 1e-6


def test_sampling_with_a_shared_prefill_draws_what_generate_draws(make_model, small_tokenizer):
    # sample_completions prefills each distinct prompt once and copies its cache to the G rows; with
    # the same seed it must draw exactly the tokens of a plain generate over all rows.

    tok = small_tokenizer
    agents = two_distinct_lora_agents(make_model(), tok, seed=5)
    cfg = MAGRPOConfig(num_generations=3, max_new_tokens=6, temperature=1.0, top_p=1.0, top_k=0)
    prompts = [["short", "a much longer prompt"], ["x y"]]
    torch.manual_seed(6)
    got = team_backend(agents).sample(agents, prompts, 3, sampling_settings(cfg))
    rows = [p for ps in prompts for p in ps for _ in range(3)]
    names = ["agent_0"] * 6 + ["agent_1"] * 3
    enc = tok(rows, return_tensors="pt", padding=True)
    torch.manual_seed(6)
    with torch.inference_mode():
        want = agents[0].model.generate(**enc, adapter_names=names, do_sample=True, max_new_tokens=6, temperature=1.0,
                                         top_p=1.0, top_k=0, pad_token_id=tok.pad_token_id)[:, enc["input_ids"].shape[1]:]
    want = want.masked_fill(completion_mask(want, tok.eos_token_id) == 0, tok.pad_token_id)
    W = want.shape[1]
    assert torch.equal(got[0].completion_ids[:, :W], want[:6]) and torch.equal(got[1].completion_ids[:, :W], want[6:])


def test_beam_search_with_lora_agents_falls_back_to_peft_routing(make_model, small_tokenizer):
    # num_beams > 1 expands the batch inside generate, which slice routing cannot follow: sampling
    # must then use peft's own adapter_names= routing, and still return G rows per prompt per agent.

    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    for a in agents:
        a.generation_kwargs = {"num_beams": 2}
    out = team_backend(agents).sample(agents, [["short", "a much longer prompt"], ["x y"]], 3, sampling_settings(MAGRPOConfig(num_generations=3, max_new_tokens=4)))
    assert [c.completion_ids.shape[0] for c in out] == [6, 3]


# ---- the reward contract ------------------------------------------------------------------------------
def test_reward_contract_happy_path_with_components():
    def fn(completions, row):
        return {"total": [1.0, 2.0], "structure": [0.5, 0.5]}
    total, comps = joint_rewards(fn, [["a", "b"], ["c", "d"]], {})
    assert total.tolist() == [1.0, 2.0] and comps["structure"].tolist() == [0.5, 0.5]


def test_reward_wrong_length_names_function():
    def short_reward(completions, row):
        return [1.0]
    with pytest.raises(RewardFunctionError, match=r"short_reward returned 1 values .* expected 2"):
        joint_rewards(short_reward, [["a", "b"], ["c", "d"]], {})


def test_reward_nan_names_joint_action():
    def nan_reward(completions, row):
        return [1.0, float("nan"), 0.0]
    with pytest.raises(RewardFunctionError, match=r"nan_reward returned nan .* joint action 1"):
        joint_rewards(nan_reward, [["a", "b", "c"], ["d", "e", "f"]], {})


def test_reward_exception_names_offending_joint_action():
    def picky(completions, row):
        return [1.0 / len(b) for b in completions[1]]
    with pytest.raises(RewardFunctionError, match=r"picky raised ZeroDivisionError.*joint action 1"):
        joint_rewards(picky, [["a", "b"], ["cc", ""]], {})


def test_reward_not_numbers():
    with pytest.raises(RewardFunctionError, match="str 'high' .* joint action 0; every reward must be a number"):
        joint_rewards(lambda c, r: ["high", "low"], [["a", "b"], ["c", "d"]], {})


@pytest.mark.parametrize("value,match", [
    ("12", "returned str '12' .*a string is not a list of rewards"),     # was read as [1.0, 2.0]
    ({1.0, 2.0}, "returned set .*has no order"),                        # was accepted in hash order
    (["0.5", "1"], "str '0.5' .* joint action 0"),                       # was float('0.5')
    ({"total": "12"}, "returned str '12' for its total"),
    (torch.ones(2, 1), "2-D"),
])
def test_reward_output_must_be_a_sequence_of_numbers(value, match):
    with pytest.raises(RewardFunctionError, match=match):
        joint_rewards(lambda c, r: value, [["a", "b"], ["c", "d"]], {})


@pytest.mark.parametrize("value", [[True, False], (1, 2), torch.tensor([1.0, 2.0]), [torch.tensor(1.0), 2]])
def test_reward_output_accepted_forms(value):
    import numpy as np

    assert joint_rewards(lambda c, r: value, [["a", "b"], ["c", "d"]], {})[0].tolist() == [float(v) for v in value]
    assert joint_rewards(lambda c, r: np.array([0.5, 1.5]), [["a", "b"], ["c", "d"]], {})[0].tolist() == [0.5, 1.5]


# ---- config validation -------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value,allowed", [
    ("num_generations", 1, ">= 2"), ("joint_mode", "diagonal", "aligned"), ("advantage", "median", "rloo"),
    ("scale_rewards", "batch", "group"), ("temperature", 0, "> 0"), ("top_p", 1.5, "(0, 1]"),
    ("discount", 1.2, "[0, 1]"), ("num_agents", 0, ">= 1"), ("max_steps", 0, ">= 1"),
    ("learning_rate", -1.0, "> 0"), ("advantage_clip", -1, "> 0"), ("num_turns", 0, ">= 1"),
])
def test_config_rejects_bad_values_naming_field_value_and_allowed(field, value, allowed):
    with pytest.raises(ValueError) as e:
        MAGRPOConfig(**{field: value})
    msg = str(e.value)
    assert f"MAGRPOConfig.{field}={value!r}" in msg and allowed in msg


def test_config_takes_a_numpy_scalar_as_its_number_and_refuses_a_0d_tensor_or_array():
    # what notebook 05's exercise hands to dataclasses.replace(config, early_termination_threshold=...): the check
    # accepts exactly this
    import dataclasses
    import json

    import numpy as np

    cfg = MAGRPOConfig(early_termination_threshold=np.float32(0.5), temperature=np.float64(0.7), beta=np.int64(0))
    assert type(cfg.early_termination_threshold) is float and cfg.early_termination_threshold == 0.5
    assert type(cfg.temperature) is float and type(cfg.beta) is float and cfg.beta == 0.0
    assert type(dataclasses.replace(MAGRPOConfig(), discount=np.float32(0.5)).discount) is float
    json.dumps(cfg.to_dict())                                    # saved with a checkpoint: plain numbers
    for value in (torch.tensor(0.5), np.array(0.5)):
        with pytest.raises(ValueError, match=r"early_termination_threshold must be None \(always expand\) or a finite "
                                             r"number\. A 0-d (Tensor|ndarray) is not a number here: pass a Python "
                                             r"number, float\(x\)"):
            dataclasses.replace(MAGRPOConfig(), early_termination_threshold=value)
    for value in (np.bool_(True), np.float64("nan")):
        with pytest.raises(ValueError, match="early_termination_threshold must be None"):
            MAGRPOConfig(early_termination_threshold=value)


def test_config_cross_mode_multi_turn_rejected():
    with pytest.raises(ValueError, match="aligned"):
        MAGRPOConfig(joint_mode="cross", num_turns=2)


def test_config_round_trip_and_unknown_field():
    c = MAGRPOConfig(num_generations=6, advantage="rloo")
    assert MAGRPOConfig.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="no field"):
        MAGRPOConfig.from_dict({"num_generation": 4})
