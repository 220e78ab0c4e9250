"""Issue 60's levers in the library: dynamic sampling (MAGRPOConfig.dynamic_sampling) and a KL leash to saved
adapters (leash_to_adapters, Agent.reference_adapter), on the tiny random model of conftest (no weights, seconds).
The load-bearing measure and the strict reward run programs in the sandbox: tests/test_load_bearing.py."""
import torch
import pytest
from conftest import cfg, two_distinct_lora_agents

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, leash_to_adapters, load_lora_agents, lora_agents
from magrpo_edu.agents import team_backend
from magrpo_edu.backends import sampling_settings


def flat_for_even_rows(completions, row):
    """Equal rewards (no signal) for the rows marked flat, a length-driven reward for the others."""
    if row["flat"]:
        return [1.0] * len(completions[0])
    return [float(len(b) % 3) for b in completions[1]]


@pytest.fixture
def marked_rows():
    return [{"text": f"post {i} about things", "flat": i % 2 == 0} for i in range(12)]


def test_dynamic_sampling_is_validated():
    with pytest.raises(ValueError, match="dynamic_sampling"):
        MAGRPOConfig(dynamic_sampling=-1)
    with pytest.raises(ValueError, match="dynamic_sampling"):
        MAGRPOConfig(dynamic_sampling=True)
    with pytest.raises(ValueError, match="single-turn"):
        MAGRPOConfig(dynamic_sampling=2, num_turns=2)
    assert MAGRPOConfig().dynamic_sampling == 0  # the paper: off


def test_dynamic_sampling_replaces_flat_groups_and_logs_its_draws(make_model, small_tokenizer, marked_rows, formatters):
    agents = lora_agents(make_model(seed=1), 2, tokenizer=small_tokenizer)
    c = cfg(max_steps=4, prompts_per_step=2, dynamic_sampling=40, num_generations=4, max_new_tokens=8, sample_log_size=100)
    tr = MAGRPOTrainer(agents, flat_for_even_rows, formatters, marked_rows, c)
    tr.train()
    kept = [marked_rows[s["row_index"]] for s in tr.samples]
    flat_kept = [s for s in tr.samples if marked_rows[s["row_index"]]["flat"]]
    # a kept flat row would need 40 flat draws in a row; a kept odd row may still have equal rewards by chance
    assert not flat_kept, [s["row_index"] for s in flat_kept]
    assert len(kept) == 8
    draws = [h["dynamic/draws"] for h in tr.history]
    assert all(d >= 1 for d in draws) and sum(draws) > 4  # half the schedule's rows are flat: some were replaced
    assert all(h["dynamic/dropped"] == h["dynamic/draws"] - 1 for h in tr.history)


def test_without_dynamic_sampling_the_step_is_unchanged(make_model, small_tokenizer, marked_rows, formatters):
    """dynamic_sampling=0 (default) and a cap of 0 extra draws take the paper's path: same history, no new keys."""
    runs = []
    for extra in (None, 0):
        agents = lora_agents(make_model(seed=1), 2, tokenizer=small_tokenizer)
        c = cfg(max_steps=3, num_generations=3) if extra is None else cfg(max_steps=3, num_generations=3, dynamic_sampling=extra)
        tr = MAGRPOTrainer(agents, flat_for_even_rows, formatters, marked_rows, c)
        tr.train()
        runs.append([{k: v for k, v in h.items() if k != "step_time"} for h in tr.history])
    assert runs[0] == runs[1]
    assert not any(k.startswith("dynamic/") for h in runs[0] for k in h)


def test_leash_to_adapters_makes_the_saved_adapter_the_reference(make_model, small_tokenizer, tmp_path):
    model = make_model(seed=3)
    start = two_distinct_lora_agents(model, small_tokenizer, seed=4)  # a "warm start": B != 0
    start[0].model.save_pretrained(tmp_path)
    dirs = [tmp_path / a.name for a in start]
    base = make_model(seed=3)
    agents = load_lora_agents(base, dirs, tokenizer=small_tokenizer)
    pol = team_backend(agents)
    c = pol.sample(agents[:1], [["Details: some text"] * 2], 2, sampling_settings(cfg(max_new_tokens=5)))[0]
    to_base = pol.reference_logprobs(agents[:1], [c])[0]
    leash_to_adapters(agents, dirs)
    assert [a.reference_adapter for a in agents] == [f"{a.name}_ref" for a in agents]
    ref = pol.reference_logprobs(agents[:1], [c])[0]
    with torch.no_grad():
        own = pol.logprobs(agents[:1], [c], per_token=True)[0]
    assert torch.allclose(ref, own, atol=1e-5)  # before training the agent IS its warm start: KL 0
    assert not torch.allclose(ref, to_base, atol=1e-3)  # and not the base with adapters off
    # the frozen copies never train and are not part of the agent's state
    for a in agents:
        assert all("_ref." not in n for n in a.named_trainable_state())
        assert all(p.requires_grad for p in a.trainable_parameters())
    frozen = [p for n, p in base.named_parameters() if "_ref." in n]
    assert frozen and not any(p.requires_grad for p in frozen)


def test_leash_to_adapters_trains_with_kl_zero_at_the_start(make_model, small_tokenizer, rows, formatters, tmp_path):
    model = make_model(seed=3)
    start = two_distinct_lora_agents(model, small_tokenizer, seed=4)
    start[0].model.save_pretrained(tmp_path)
    dirs = [tmp_path / a.name for a in start]
    agents = leash_to_adapters(load_lora_agents(make_model(seed=3), dirs, tokenizer=small_tokenizer), dirs)
    frozen_before = {n: p.clone() for n, p in agents[0].model.named_parameters() if "_ref." in n}
    from conftest import length_gap
    tr = MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_steps=3, beta=0.1, learning_rate=5e-2))
    tr.train()
    assert abs(tr.history[0]["kl"]) < 1e-6 and tr.history[-1]["kl"] > 0
    after = dict(agents[0].model.named_parameters())
    assert all(torch.equal(p, after[n]) for n, p in frozen_before.items())


def test_leash_to_adapters_refuses_bad_input(make_model, small_tokenizer, tmp_path):
    agents = lora_agents(make_model(seed=3), 2, tokenizer=small_tokenizer)
    with pytest.raises(ValueError, match="one per agent"):
        leash_to_adapters(agents, [tmp_path])
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        leash_to_adapters(agents, [tmp_path, tmp_path])
