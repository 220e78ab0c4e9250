"""MAGRPO learns: on a joint reward that needs coordination, with a fixed seed, the mean joint
reward over the last steps is clearly above the first steps. Runs the embedded tiny model on CPU
(about a minute and a half on 2 cores)."""
from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.models import load_model
from magrpo_edu.rewards import length_ratio_joint_reward
from magrpo_edu.tasks.writing import load_writing, tldr_formatters


def test_two_agents_learn_a_length_ratio_collaboration():
    base, tok = load_model("tiny")
    agents = lora_agents(base, 2, tokenizer=tok, target_modules=["q_proj", "v_proj"])
    cfg = MAGRPOConfig(num_generations=4, max_new_tokens=48, learning_rate=2e-3, max_steps=150, seed=0, progress=False)
    tr = MAGRPOTrainer(agents, length_ratio_joint_reward, tldr_formatters(), load_writing("tldr", "train"), cfg)
    tr.train()
    first = sum(h["reward"] for h in tr.history[:30]) / 30
    last = sum(h["reward"] for h in tr.history[-30:]) / 30
    # reward is 1 inside the target ratio [2, 3], exp(-distance) outside; 0.15 is a clear margin
    assert last > first + 0.15, f"mean joint reward first 30 steps {first:.3f}, last 30 steps {last:.3f}"
