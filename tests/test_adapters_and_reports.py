"""Trained LoRA agents saved as standard peft adapter folders and loaded back (`load_lora_agents`),
and the static before/after report the notebooks show."""
import copy

import pytest
import torch

from magrpo_edu import MAGRPOConfig, load_lora_agents, lora_agents, viz
from magrpo_edu.agents import team_backend
from magrpo_edu.backends import sampling_settings
from conftest import cfg, check_shipped_adapters  # noqa: E402  (shared test helpers: tests/conftest.py)


def _trained_pair(make_model, small_tokenizer):
    plain = make_model(seed=3)
    fresh = copy.deepcopy(plain)
    agents = lora_agents(plain, 2, tokenizer=small_tokenizer, names=["concise", "detailed"])
    with torch.no_grad():  # stand-in for training: B != 0, different per agent
        for a in agents:
            for p in a.named_trainable_state().values():
                p.add_(0.3 * torch.randn_like(p))
    return agents, fresh


@pytest.mark.slow
def test_saved_adapters_load_back_as_the_same_agents(make_model, small_tokenizer, tmp_path):
    agents, fresh = _trained_pair(make_model, small_tokenizer)
    agents[0].model.save_pretrained(tmp_path)  # peft: one folder per named adapter
    dirs = [tmp_path / "concise", tmp_path / "detailed"]
    assert all((d / "adapter_config.json").is_file() and (d / "adapter_model.safetensors").is_file() for d in dirs)
    loaded = load_lora_agents(fresh, dirs, tokenizer=small_tokenizer)
    assert [a.name for a in loaded] == ["concise", "detailed"] and loaded[0].model is loaded[1].model
    c = team_backend(agents).sample(agents, [["Summary: a post"] * 2, ["Details: a post"] * 2], 1, sampling_settings(cfg(max_new_tokens=5)))
    for a, b, ci in zip(agents, loaded, c):
        assert torch.allclose(a.backend.logprobs([a], [ci])[0], b.backend.logprobs([b], [ci])[0], atol=1e-5)
    assert not torch.allclose(loaded[0].backend.logprobs([loaded[0]], [c[0]])[0], loaded[1].backend.logprobs([loaded[1]], [c[0]])[0], atol=1e-3)
    # trainable by default (to go on training), frozen on request
    assert all(p.requires_grad for a in loaded for p in a.trainable_parameters())
    frozen = load_lora_agents(copy.deepcopy(make_model(seed=3)), dirs, tokenizer=small_tokenizer, trainable=False)
    assert not any(p.requires_grad for p in frozen[0].model.parameters())


def test_saved_adapters_join_a_peft_model_without_a_second_base(make_model, small_tokenizer, tmp_path):
    agents, fresh = _trained_pair(make_model, small_tokenizer)
    agents[0].model.save_pretrained(tmp_path)
    new = lora_agents(fresh, 2, tokenizer=small_tokenizer)  # untrained agent_0, agent_1
    loaded = load_lora_agents(new[0].model, [tmp_path / "concise", tmp_path / "detailed"], tokenizer=small_tokenizer)
    assert loaded[0].model is new[0].model
    c = team_backend(agents[:1]).sample(agents[:1], [["Summary: a post"] * 2], 1, sampling_settings(cfg(max_new_tokens=5)))[0]
    assert torch.allclose(agents[0].backend.logprobs([agents[0]], [c])[0], loaded[0].backend.logprobs([loaded[0]], [c])[0], atol=1e-5)
    assert all(p.requires_grad for a in new for p in a.trainable_parameters())  # the fresh agents still train
    with pytest.raises(ValueError, match="already has adapter"):
        load_lora_agents(new[0].model, [tmp_path / "concise"], tokenizer=small_tokenizer)


def test_load_lora_agents_says_what_is_wrong(make_model, small_tokenizer, tmp_path):
    with pytest.raises(FileNotFoundError, match="no adapter_config.json"):
        load_lora_agents(make_model(), [tmp_path], tokenizer=small_tokenizer)
    with pytest.raises(ValueError, match="at least one"):
        load_lora_agents(make_model(), [], tokenizer=small_tokenizer)


def test_before_after_report_is_static_html_with_every_text():
    html = viz.before_after_report(["a post <b>"], [["short one", "long one"]], [["tiny", "much longer text"]],
                                   [0.5], [2.5], agent_names=["concise", "detailed"])
    for s in ("short one", "long one", "tiny", "much longer text", "concise", "0.50", "2.50", "&lt;b&gt;"):
        assert s in html
    assert "[...]" in viz.before_after_report(["p"], [["x" * 50]], [["y"]], [0], [1], max_chars=10)
    assert "(joint reward 0.50)" in html            # two agents: one joint reward per pair
    one = viz.before_after_report(["p"], [["x"]], [["y"]], [0.2], [1.0], agent_names=["the agent"])
    assert "(reward 0.20)" in one and "joint" not in one   # one agent (notebook 01): its own reward, no joint action


def test_answer_snapshot_is_reproducible_and_scored_by_the_joint_reward(make_model, small_tokenizer, formatters, rows):
    from magrpo_edu.evaluation import answer_snapshot

    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    longer = lambda completions, row: [float(len(b) > len(a)) for a, b in zip(*completions)]  # noqa: E731
    state = torch.random.get_rng_state()
    texts, rewards = answer_snapshot(agents, formatters, rows[:3], longer, max_new_tokens=6)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG is untouched
    assert len(texts) == 3 and all(len(t) == 2 for t in texts)
    assert rewards == [float(len(b) > len(a)) for a, b in texts]
    assert answer_snapshot(agents, formatters, rows[:3], longer, max_new_tokens=6) == (texts, rewards)
    # config=: the training config's sampling (step 2's settings) in place of the keywords (whose default is 48 tokens):
    # the same draw as the equal keyword settings
    six = MAGRPOConfig(num_agents=2, max_new_tokens=6, temperature=1.0, top_p=1.0, top_k=0)
    assert answer_snapshot(agents, formatters, rows[:3], longer, config=six) == (texts, rewards)
    assert answer_snapshot(agents, formatters, rows[:3], longer) != (texts, rewards)


def test_the_shipped_smollm2_adapters_are_trained_peft_folders():
    from magrpo_edu.tasks.writing import smollm2_tldr_adapters

    check_shipped_adapters(smollm2_tldr_adapters(), ["concise", "detailed"])


def test_lora_targets_follow_the_model(make_model, small_tokenizer):
    # The default (target_modules="auto"): q/v projections on an embedded model, by name or loaded from its folder
    # (where peft's per-layer overhead dominates a step), every linear layer on any other model.
    from magrpo_edu import lora_agents
    from magrpo_edu.models import load_model

    def targets(agents):
        return sorted(agents[0].model.peft_config[agents[0].adapter].target_modules)

    assert targets(lora_agents("tiny", 1)) == ["q_proj", "v_proj"]
    base, tok = load_model("tiny")
    assert targets(lora_agents(base, 1, tokenizer=tok)) == ["q_proj", "v_proj"]
    other = {name.rsplit(".", 1)[-1] for name in targets(lora_agents(make_model(), 1, tokenizer=small_tokenizer))}
    assert {"q_proj", "v_proj", "o_proj", "up_proj", "down_proj"} <= other  # peft expands "all-linear" to module paths
    assert targets(lora_agents(make_model(), 1, tokenizer=small_tokenizer, target_modules=["q_proj"])) == ["q_proj"]
