"""The trainer end to end on tiny random models: parameters move, checkpoints resume exactly,
history and samples are filled, multi-turn and single-agent runs work, errors keep state, and a
training step is the algorithm's `magrpo_step`."""
import pytest
import torch

from magrpo_edu import (MAGRPOConfig, MAGRPOTrainer, RewardFunctionError, TrainerCallback, heterogeneous_agents,
                        lora_agents, magrpo_step, separate_agents)
from magrpo_edu.backends.fast import FastBackend
from magrpo_edu.backends import PlainBackend
from conftest import cfg, length_gap  # noqa: E402  (shared test helpers: tests/conftest.py)


@pytest.mark.parametrize("kind", ["lora", "separate"])
def test_every_trainable_parameter_changes(kind, make_model, small_tokenizer, rows, formatters):
    m = make_model()
    agents = lora_agents(m, 2, tokenizer=small_tokenizer) if kind == "lora" else separate_agents(m, 2, tokenizer=small_tokenizer)
    before = {(a.name, n): p.detach().clone() for a in agents for n, p in a.named_trainable_state().items()}
    # two steps: LoRA's A matrices get no gradient while B is still exactly zero after init
    MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_steps=2)).train()
    after = {(a.name, n): p for a in agents for n, p in a.named_trainable_state().items()}
    unchanged = [k for k in before if torch.equal(before[k], after[k])]
    assert not unchanged, f"{len(unchanged)} of {len(before)} trainable tensors did not change: {unchanged[:3]}"
    if kind == "lora":  # the shared base stays frozen
        assert all(not p.requires_grad for n, p in agents[0].model.named_parameters() if "lora_" not in n)


def test_history_and_samples(make_model, small_tokenizer, rows, formatters):
    seen = []

    class Spy(TrainerCallback):
        def on_step_end(self, trainer, record):
            seen.append(("step", record["step"]))

        def on_log(self, trainer, record):
            seen.append(("log", record["step"]))

    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows,
                       cfg(max_steps=4, logging_steps=2, sample_log_size=3), callbacks=[Spy()])
    tr.train()
    assert [h["step"] for h in tr.history] == [2, 4]
    h = tr.history[-1]
    for key in ("reward", "reward_std", "frac_reward_zero_std", "loss/agent_0", "loss/agent_1",
                "completions/mean_length/agent_0", "advantage_std", "step_time"):
        assert key in h and isinstance(h[key], float), key
    # on_step_end comes once the step is fully recorded, after that step's on_log
    assert seen == [("step", 1), ("log", 2), ("step", 2), ("step", 3), ("log", 4), ("step", 4)]
    assert len(tr.samples) == 3 and [s["step"] for s in tr.samples] == [2, 3, 4]
    s = tr.samples[-1]
    assert len(s["completions"]) == 2 and len(s["completions"][0]) == 3
    assert sum(s["advantages"]) == pytest.approx(0.0, abs=1e-5)
    assert s["rewards"] == pytest.approx(length_gap(s["completions"], None), abs=1e-6)


@pytest.mark.parametrize("kind", ["lora", "separate"])
def test_resume_reproduces_uninterrupted_losses(kind, make_model, small_tokenizer, rows, formatters, tmp_path):
    def team():
        m = make_model(seed=3)
        return lora_agents(m, 2, tokenizer=small_tokenizer) if kind == "lora" else separate_agents(m, 2, tokenizer=small_tokenizer)

    full = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=4))
    full.train()
    first = MAGRPOTrainer(team(), length_gap, formatters, rows, cfg(max_steps=4))
    first.training_step()
    first.training_step()
    first.save(tmp_path / "ckpt")
    resumed = MAGRPOTrainer.load(tmp_path / "ckpt", team(), length_gap, formatters, rows)
    assert resumed.step == 2
    resumed.train()
    keys = [k for k in full.history[0] if k.startswith(("loss/", "reward"))]
    for k in keys:
        assert [h[k] for h in resumed.history] == [h[k] for h in full.history], k
    assert (tmp_path / "ckpt" / "agents").is_dir()


def test_multi_turn_tree(make_model, small_tokenizer, rows, formatters):
    calls = []

    def transition(prompts, completions, histories):
        calls.append((list(prompts), list(completions), [len(h) for h in histories]))
        return [p + " | revise: " + c[:10] for p, c in zip(prompts, completions)]

    c = cfg(max_steps=1, num_turns=2, num_generations=2, discount=0.5)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows, c,
                       transition=transition)
    tr.train()
    h = tr.history[-1]
    assert h["nodes"] == 3.0  # root + G children
    assert len(calls) == 2 and all(lengths == [1, 1] for _, _, lengths in calls)  # each agent: only its own history
    assert "reward/turn_1" in h and "reward/turn_2" in h


def test_early_termination_stops_expansion(make_model, small_tokenizer, rows, formatters):
    c = cfg(max_steps=1, num_turns=2, num_generations=2, early_termination_threshold=-1e9)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows, c,
                       transition=lambda p, c, h: list(p))
    tr.train()
    assert tr.history[-1]["nodes"] == 1.0


def test_single_agent_is_grpo(make_model, small_tokenizer, rows):
    def short(completions, row):
        return [-len(a) / 10 for a in completions[0]]
    tr = MAGRPOTrainer(separate_agents(make_model(), 1, tokenizer=small_tokenizer), short, [lambda r: r["text"]], rows,
                       cfg(num_agents=1, max_steps=2))
    tr.train()
    assert "loss/agent_0" in tr.history[-1]


def test_cross_mode_runs_and_logs_g_to_the_n(make_model, small_tokenizer, rows, formatters):
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows,
                       cfg(max_steps=1, joint_mode="cross", num_generations=3))
    tr.train()
    assert len(tr.samples[-1]["rewards"]) == 9


def test_heterogeneous_agents(make_model, small_tokenizer, rows, formatters):
    from magrpo_edu.pretraining.corpus import documents
    from magrpo_edu.pretraining.pretrain import train_tokenizer

    other_tok = train_tokenizer(list(documents(seed=5, n=200)), vocab_size=280)
    agents = heterogeneous_agents([make_model(hidden_size=32), make_model(hidden_size=48, tokenizer=other_tok)],
                                  [small_tokenizer, other_tok])
    tr = MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(max_steps=1))
    tr.train()
    assert tr.step == 1


def test_reward_error_keeps_trained_state(make_model, small_tokenizer, rows, formatters):
    state = {"broken": False}

    def flaky(completions, row):
        if state["broken"]:
            return [float("inf")] * len(completions[0])
        return length_gap(completions, row)

    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    tr = MAGRPOTrainer(agents, flaky, formatters, rows, cfg(max_steps=3))
    tr.training_step()
    snap = {n: p.detach().clone() for n, p in agents[0].named_trainable_state().items()}
    state["broken"] = True
    with pytest.raises(RewardFunctionError, match="flaky"):
        tr.train()
    assert tr.step == 1
    assert all(torch.equal(snap[n], p) for n, p in agents[0].named_trainable_state().items())
    state["broken"] = False
    tr.train()  # continues from step 1
    assert tr.step == 3


def test_bad_inputs_are_named(make_model, small_tokenizer, rows, formatters):
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer)
    with pytest.raises(ValueError, match="2 agents but config.num_agents=3"):
        MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(num_agents=3))
    with pytest.raises(ValueError, match="1 formatters"):
        MAGRPOTrainer(agents, length_gap, formatters[:1], rows, cfg())
    with pytest.raises(ValueError, match="needs transition"):
        MAGRPOTrainer(agents, length_gap, formatters, rows, cfg(num_turns=2))
    tr = MAGRPOTrainer(agents, length_gap, formatters, [{"txt": "no text field"}], cfg())
    with pytest.raises(ValueError, match="formatter 0 .* train row 0 .*KeyError"):
        tr.train()


def test_evaluate_does_not_change_training(make_model, small_tokenizer, rows, formatters):
    def run(with_eval):
        tr = MAGRPOTrainer(lora_agents(make_model(seed=1), 2, tokenizer=small_tokenizer), length_gap, formatters, rows,
                           cfg(max_steps=2), eval_dataset=rows[:2])
        if with_eval:
            ev = tr.evaluate()
            assert set(ev) >= {"eval/reward", "eval/rows"} and ev["eval/rows"] == 2
        tr.train()
        return [h["loss/agent_0"] for h in tr.history]
    assert run(True) == run(False)


def test_evaluate_builds_no_autograd_graph(make_model, small_tokenizer, rows, formatters):
    """evaluate() runs under torch.no_grad (the reward is called inside its rollout), with and without
    return_samples; grad mode is restored afterwards."""
    seen = []

    def reward(completions, row):
        seen.append(torch.is_grad_enabled())
        return length_gap(completions, row)
    tr = MAGRPOTrainer(lora_agents(make_model(seed=1), 2, tokenizer=small_tokenizer), reward, formatters, rows,
                       cfg(max_steps=1), eval_dataset=rows[:2])
    tr.evaluate()
    tr.evaluate(return_samples=True)
    assert seen and not any(seen) and torch.is_grad_enabled()


def test_lora_initialisation_is_seeded_so_runs_repeat(make_model, small_tokenizer):
    """Two teams built in different RNG states get identical adapters (A is random, B = 0)."""
    torch.manual_seed(1)
    a = lora_agents(make_model(seed=4), 2, tokenizer=small_tokenizer)
    torch.manual_seed(2)
    b = lora_agents(make_model(seed=4), 2, tokenizer=small_tokenizer)
    torch.manual_seed(3)
    c = lora_agents(make_model(seed=4), 2, tokenizer=small_tokenizer, seed=7)
    sa, sb, sc = (x[0].named_trainable_state() for x in (a, b, c))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert any(not torch.equal(sa[k], sc[k]) for k in sa)  # a different seed gives different A


INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("field, value, says", [
    ("temperature", INF, "temperature must be a finite number > 0"),
    ("weight_decay", INF, "weight_decay must be a finite number >= 0"),
    ("num_train_epochs", INF, "num_train_epochs must be a finite number > 0"),
    ("seed", 2**63, r"seed must be an integer .*-2\*\*63 <= seed < 2\*\*63"),
    ("seed", -2**63 - 1, "seed must be an integer"),
    ("temperature", True, "is not allowed: temperature must be a finite number"),
    ("learning_rate", True, "is not allowed: learning_rate must be a finite number"),
    ("discount", True, r"is not allowed: discount must be a number in \[0, 1\]"),
    ("top_p", True, r"is not allowed: top_p must be a number in \(0, 1\]"),
    ("early_termination_threshold", NAN, r"nan is not allowed: .* None \(always expand\) or a finite number"),
    ("advantage_clip", INF, r"inf is not allowed: .*None \(no clamp\) or a finite number"),
    ("save_steps", 0, "save_steps must be None or an integer >= 1"),
])
def test_config_rejects_non_finite_bool_and_out_of_range_values(field, value, says):
    with pytest.raises(ValueError, match=f"MAGRPOConfig.{field}=.*{says}"):
        MAGRPOConfig(**{field: value})


def test_config_caps_cross_mode_joint_actions():
    with pytest.raises(ValueError, match=r"G\*\*n = 1,000,000 joint actions .*cap of 10,000.*joint_mode='aligned'"):
        MAGRPOConfig(joint_mode="cross", num_generations=1000, num_agents=2)
    with pytest.raises(ValueError, match=r"G\*\*n = about 10\*\*6021 joint actions"):
        MAGRPOConfig(joint_mode="cross", num_generations=4, num_agents=10_000)
    assert MAGRPOConfig(joint_mode="cross", num_generations=100, num_agents=2).num_generations == 100  # 10,000: the cap


def test_big_seeds_that_fit_in_64_bits_train(make_model, small_tokenizer, rows, formatters):
    """Seeds up to 2**63 - 1 are accepted, so they must run: the per-step seeds are reduced mod 2**64."""
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), length_gap, formatters, rows,
                       cfg(max_steps=1, seed=2**63 - 1))
    tr.train()
    assert tr.step == 1


@pytest.mark.parametrize("pol", [FastBackend(), PlainBackend()], ids=["fast", "plain"])
def test_the_trainers_step_is_the_algorithms_step(pol, make_model, small_tokenizer, rows, formatters):
    # MAGRPOTrainer against `magrpo_step` called by hand on the same seed, rows and AdamW: two steps of
    # two prompts each (gradient accumulation), the KL leash on. Bit for bit: the same rewards and
    # losses in the history, the same weights after.
    def reward(c, row):
        return [float(len(a)) - 0.5 * len(b) for a, b in zip(*c)]

    cfg = MAGRPOConfig(num_generations=2, max_new_tokens=6, max_steps=2, prompts_per_step=2, beta=0.1,
                       learning_rate=1e-2, progress=False, seed=5)
    tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer, backend=pol), reward, formatters, rows, cfg)
    tr.train()
    agents = lora_agents(make_model(), 2, tokenizer=small_tokenizer, backend=pol)
    opts = [torch.optim.AdamW(a.trainable_parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
            for a in agents]
    for step, rec in enumerate(tr.history):
        step_rows = [rows[tr.row_index(p)] for p in (2 * step, 2 * step + 1)]  # the step's prompts
        done = magrpo_step(agents, opts, formatters, step_rows, reward, cfg, seed=cfg.seed * 1_000_003 + 2 * step)
        assert rec["reward"] == sum(ro.root.rewards.mean().item() for ro, _ in done) / 2
        for i, a in enumerate(agents):
            assert rec[f"loss/{a.name}"] == sum(losses[i] for _, losses in done) / 2
        assert rec["kl"] == sum(sum(ro.kl) / 2 for ro, _ in done) / 2
    assert tr.history[-1]["kl"] > 0
    for a, b in zip(tr.agents, agents):
        assert all(torch.equal(x, y) for x, y in zip(a.trainable_parameters(), b.trainable_parameters()))
    with pytest.raises(ValueError, match="magrpo_step got 1 rows but config.prompts_per_step=2"):
        magrpo_step(agents, opts, formatters, [rows[0]], reward, cfg)


def test_the_trainer_schedules_every_evaluation_itself(make_model, small_tokenizer, rows, formatters):
    """eval_at (the run's halfway evaluation) and eval_steps are both the trainer's schedule: each due step
    is evaluated once, inside the step, and the last step is left to the caller's final evaluation. The
    evaluation forks the RNG, so training goes on exactly as without it."""
    def reward(c, row):
        return [float(len(a)) - 0.5 * len(b) for a, b in zip(*c)]

    def run(**kw):
        cfg = MAGRPOConfig(num_generations=2, max_new_tokens=4, max_steps=4, progress=False, seed=3, **kw.pop("cfg", {}))
        tr = MAGRPOTrainer(lora_agents(make_model(), 2, tokenizer=small_tokenizer), reward, formatters, rows, cfg,
                           eval_dataset=rows[:2], **kw)
        tr.train()
        return tr

    plain, halfway = run(), run(eval_at=[2, 4])
    assert [ev["step"] for ev in plain.eval_history] == [] and [ev["step"] for ev in halfway.eval_history] == [2]
    assert halfway.evaluation_due(2) and not halfway.evaluation_due(3) and not halfway.evaluation_due(4)
    assert [h["reward"] for h in halfway.history] == [h["reward"] for h in plain.history]
    assert halfway.eval_seconds > 0 and plain.eval_seconds == 0
    both = run(eval_at=[2], cfg=dict(eval_steps=2))
    assert [ev["step"] for ev in both.eval_history] == [2, 4]  # step 2 once, not twice
