"""Notebook 01 section 7's run over five seeds, and what its early dip is made of.

    OMP_NUM_THREADS=1 python experiments/nb01_seeds.py --seeds 0 1 2 3 4     # runs, written to nb01_seeds.json
    python experiments/nb01_seeds.py --report                                # writes nb01_seeds.md

The run is notebook 01's section 7: one LoRA adapter on the embedded tiny model, asked for a concise summary, the
notebook's 10-20-word reward (1 inside, exp(-distance / 5) outside), G = 4, 48 new tokens, learning rate 2e-3, 120
steps, `MAGRPOConfig(seed=s)` and `lora_agents(..., seed=s)`. Held-out: the whole TL;DR eval split, 4 answers a post
(`trainer.evaluate`, its fixed sampling seed), before and after; with the answers' mean length in words, the share
of answers of 10-20 words, naturalness and repetition.

The dip: the notebook's training curve first falls, then climbs. Each training step scores one post's group, so
the curve mixes what the agent learned with how hard each step's post is. Before training, the untrained agent is
scored on the posts of the run's first 30 steps (the same posts in the same order, `trainer.row_index`), 4 answers
each: where its rewards dip with the curve, the dip is the posts, not the learning."""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from pathlib import Path

HERE = Path(__file__).parent
RESULTS, REPORT = HERE / "nb01_seeds.json", HERE / "nb01_seeds.md"
FIRST = 30  # training steps whose posts the untrained agent is scored on


def concise_reward(completions, row=None):
    """Notebook 01's reward: 1 for 10-20 words, exp(-distance / 5) outside."""
    out = []
    for text in completions[0]:
        n = len(text.split())
        d = 0 if 10 <= n <= 20 else (10 - n if n < 10 else n - 20)
        out.append(math.exp(-d / 5))
    return out


def held_out(trainer, rows=None) -> dict:
    """Reward, words per answer, the share of 10-20-word answers, naturalness and repetition."""
    m, s = trainer.evaluate(rows, return_samples=True)
    words = [len(t.split()) for t in s["texts"][0]]
    name = trainer.agents[0].name
    return dict(reward=m["eval/reward"], words=statistics.mean(words),
                in_range=statistics.mean(1.0 if 10 <= w <= 20 else 0.0 for w in words),
                naturalness=m[f"eval/naturalness/{name}"], repetition=m[f"eval/repetition/{name}"],
                per_row=[statistics.mean(s["rewards"][k * s["per_row"]:(k + 1) * s["per_row"]]) for k in range(s["rows"])])


def run(seed: int) -> dict:
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
    from magrpo_edu.models import load_model
    from magrpo_edu.tasks.writing import load_writing, tldr_formatters

    base, tokenizer = load_model("tiny")
    (agent,) = lora_agents(base, num_agents=1, tokenizer=tokenizer, seed=seed)
    config = MAGRPOConfig(num_agents=1, num_generations=4, max_new_tokens=48, learning_rate=2e-3, max_steps=120,
                          seed=seed, progress=False)
    train = load_writing("tldr", "train")
    trainer = MAGRPOTrainer([agent], concise_reward, [tldr_formatters()[0]], train, config,
                            eval_dataset=load_writing("tldr", "eval"))
    t0, before = time.time(), held_out(trainer)
    before.pop("per_row")
    first_posts = held_out(trainer, [train[trainer.row_index(k)] for k in range(FIRST)])["per_row"]
    trainer.train()
    after = held_out(trainer)
    after.pop("per_row")
    return dict(seed=seed, threads=int(os.environ.get("OMP_NUM_THREADS", "0") or 0), before=before, after=after,
                train_rewards=[h["reward"] for h in trainer.history], untrained_first_posts=first_posts,
                seconds=round(time.time() - t0, 1))


def report(results: list[dict]) -> str:
    from magrpo_edu.viz import smooth   # the trailing moving average the notebook's plot draws (fewer values at the start)
    ms = lambda xs: f"{statistics.mean(xs):.3f} ± {statistics.stdev(xs):.3f}" if len(xs) > 1 else f"{xs[0]:.3f}"
    lines = ["# Notebook 01's trainer run over seeds", "",
             "Made by `experiments/nb01_seeds.py` (its docstring says how). Held-out: the TL;DR eval split, 4 answers "
             "a post; mean ± sample sd over the seeds.", "",
             "| seed | threads | reward before -> after | words before -> after | 10-20 words before -> after | "
             "naturalness before -> after | seconds |", "|---|---|---|---|---|---|---|"]
    for r in results:
        b, a = r["before"], r["after"]
        lines.append(f"| {r['seed']} | {r['threads']} | {b['reward']:.3f} -> {a['reward']:.3f} | {b['words']:.1f} -> "
                     f"{a['words']:.1f} | {b['in_range']:.2f} -> {a['in_range']:.2f} | {b['naturalness']:.2f} -> "
                     f"{a['naturalness']:.2f} | {r['seconds']} |")
    gains = [r["after"]["reward"] - r["before"]["reward"] for r in results]
    lines += ["", f"Held-out reward gain per seed: {', '.join(f'{g:+.3f}' for g in gains)}; mean {ms(gains)}; "
              f"rose in {sum(g > 0 for g in gains)} of {len(gains)} seeds.",
              f"Words per answer after training: {ms([r['after']['words'] for r in results])} "
              f"(before {ms([r['before']['words'] for r in results])}).", "",
              "## The early dip", "",
              f"Trailing moving average (10 steps, as the notebook's plot) of the training curve and of the untrained "
              f"agent's rewards on the same posts in the same order. Per seed: both at step 1; the step of the training "
              f"curve's lowest point in steps 5-{FIRST} and both curves there; the mean of the raw per-step rewards over "
              "steps 5-20, trained run against untrained agent.", "",
              "| seed | training curve, step 1 | untrained, step 1 | lowest step | training curve there | untrained there | "
              "steps 5-20: training run | steps 5-20: untrained |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        tr, un = smooth(r["train_rewards"][:FIRST]), smooth(r["untrained_first_posts"])
        k = min(range(4, FIRST), key=lambda i: tr[i])
        lines.append(f"| {r['seed']} | {tr[0]:.3f} | {un[0]:.3f} | {k + 1} | {tr[k]:.3f} | {un[k]:.3f} | "
                     f"{statistics.mean(r['train_rewards'][4:20]):.3f} | {statistics.mean(r['untrained_first_posts'][4:20]):.3f} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, nargs="*", default=[])
    p.add_argument("--report", action="store_true")
    args = p.parse_args()
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    for s in args.seeds:
        r = run(s)
        results = [x for x in results if not (x["seed"] == s and x["threads"] == r["threads"])] + [r]
        RESULTS.write_text(json.dumps(results, indent=1))
        print(f"seed {s}: {r['before']['reward']:.3f} -> {r['after']['reward']:.3f} in {r['seconds']} s", flush=True)
    if args.report or args.seeds:
        REPORT.write_text(report(results))
        print(REPORT.read_text())


if __name__ == "__main__":
    main()
