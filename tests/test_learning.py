"""MAGRPO learns: on a joint reward that needs coordination (agent 2's text 2-3x as long as agent 1's,
the authors' quick-demo reward), the mean joint reward over the last steps is clearly above the
first steps, on the embedded tiny model on CPU.

Robust by design, not by one lucky trajectory. One seed's trajectory turns on the float path: which
SIMD kernels the CPU has changes the last bits, then the sampled tokens, then everything after (the
earlier single-seed version of this test rose +0.21 on AVX-512 machines and only +0.05 on an
AVX2-only EPYC). The claim is therefore the MEAN gain over three seeds, with a signal several times
the margin: G = 8 (a better group baseline than 4, at almost no cost, since both agents' rows are
sampled in one batched generate call), 16 new tokens, learning rate 5e-3, 100 steps.

Measured on an AVX2-only AMD EPYC, one thread (last 20 steps minus first 20, per seed):
    seeds 0-5, native kernels:             +0.36 +0.41 +0.15 +0.50 +0.26 +0.26   (mean of 0-2: +0.31)
    seed 0, ATEN_CPU_CAPABILITY=default:  +0.36
    (tools/float_paths.py --tests-only: passed on native, avx2 and default kernels)
The test asks for a mean of +0.15 over seeds 0-2; the per-seed spread (sd ~0.12) puts that about
two standard errors of a three-seed mean below what is seen.

It fails when learning is broken (`python tools/float_paths.py --tests-only --break flip` /
`--break zero`, which negate or zero the advantages inside the training loss): see the docstring of
`test_two_agents_learn_a_length_ratio_collaboration` for those numbers.

What the texts become: this reward counts characters and nothing else, and within 100 steps the
agents find it by shortening agent 1 and padding agent 2 (e.g. "n n n n ..."). The test checks that
the algorithm optimises the joint reward it is given; whether the texts stay readable is what the
KL leash and the quality measures are for (notebooks 00 and 08, tests/test_quality_kl.py).
"""
import statistics

import pytest

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.models import load_model
from magrpo_edu.rewards import length_ratio_joint_reward
from magrpo_edu.tasks.writing import load_writing, tldr_formatters

SEEDS = (0, 1, 2)
STEPS, WINDOW = 100, 20


def gain(seed: int) -> tuple[float, float]:
    """(mean joint reward over the first WINDOW steps, over the last WINDOW steps) of one run."""
    base, tok = load_model("tiny")
    agents = lora_agents(base, 2, tokenizer=tok, target_modules=["q_proj", "v_proj"])
    cfg = MAGRPOConfig(num_generations=8, max_new_tokens=16, learning_rate=5e-3, max_steps=STEPS, seed=seed,
                       progress=False)
    tr = MAGRPOTrainer(agents, length_ratio_joint_reward, tldr_formatters(), load_writing("tldr", "train"), cfg)
    tr.train()
    rewards = [h["reward"] for h in tr.history]
    return statistics.mean(rewards[:WINDOW]), statistics.mean(rewards[-WINDOW:])


@pytest.mark.slow
@pytest.mark.learning
def test_two_agents_learn_a_length_ratio_collaboration():
    """Mean over seeds 0-2 of (last 20 steps - first 20 steps) > 0.15 (about 2 minutes on 2 cores).

    Broken on purpose (tools/float_paths.py --tests-only --break ..., AVX2 EPYC), the test fails:
    flip (advantages negated in the loss): seeds 0-2 -0.258 -0.225 -0.151 (native and no-SIMD kernels alike);
    zero (advantages zeroed, i.e. no update): +0.032 +0.003 +0.030. Unbroken, it passed on the native,
    avx2 and default (no-SIMD) paths."""
    runs = {seed: gain(seed) for seed in SEEDS}
    gains = {seed: last - first for seed, (first, last) in runs.items()}
    report = ", ".join(f"seed {s}: {runs[s][0]:.3f} -> {runs[s][1]:.3f} ({g:+.3f})" for s, g in gains.items())
    # reward is 1 inside the target ratio [2, 3], exp(-distance) outside; 0.15 is a clear margin
    assert statistics.mean(gains.values()) > 0.15, f"mean joint reward, first vs last {WINDOW} steps: {report}"
