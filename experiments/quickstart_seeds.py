"""Notebook 00's quick demo over seeds (issue 49 item 1): does the length-ratio task learn on held-out posts?

    OMP_NUM_THREADS=2 python experiments/quickstart_seeds.py --setting S --seed 0    # one run, appended to the JSON
    python experiments/quickstart_seeds.py --report                                  # writes quickstart_seeds.md

The task is notebook 00's: two LoRA adapters (r = 8, q/v) on the embedded tiny model, agent 1 asked for a
concise summary, agent 2 for a detailed one of the same synthetic TL;DR-style post; the joint reward is the
authors' length-ratio quick demo (`rewards.length_ratio_joint_reward`: 1 if chars(a2)/chars(a1) is in [2, 3],
else exp(-distance to the interval)), 48 new tokens, temperature 1. The settings (`SETTINGS`) differ in the
learning rate, the KL leash beta, G and the number of steps.

Per run: the held-out mean joint reward on ALL 30 eval posts x 4 samples (`trainer.evaluate`, sampling seed
1234, the same before and after), also every `--eval-every` steps; the training curve (reward, each agent's
mean completion length in tokens, KL); one joint answer per held-out post before and after training
(`evaluation.answer_snapshot`, sampling seed 1, the notebook's snapshot) with its reward and the two
answers' lengths in characters.

Seeds: settings were explored on seeds 100 and 101 (marked "exploration" in the report); the claim uses
seeds 0-4 of the chosen setting (and seeds 0-2 again with OMP_NUM_THREADS=1), never used to choose it.
The held-out evaluation samples G answers per post, so a G = 8 run's numbers rest on 30 x 8 samples.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.evaluation import answer_snapshot
from magrpo_edu.models import load_model
from magrpo_edu.rewards import length_ratio_joint_reward
from magrpo_edu.tasks.writing import load_writing, tldr_formatters

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "experiments" / "quickstart_seeds.json"
# name: MAGRPOConfig settings (besides num_agents=2, max_new_tokens=48)
SETTINGS = {
    "nb00-200": dict(learning_rate=2e-3, beta=0.05, num_generations=4, max_steps=200),   # notebook 00 until now; not re-run
    "lr2e-3-150": dict(learning_rate=2e-3, beta=0.05, num_generations=4, max_steps=150),
    "G8-lr2e-3-80": dict(learning_rate=2e-3, beta=0.05, num_generations=8, max_steps=80),
    "lr3e-3-120": dict(learning_rate=3e-3, beta=0.05, num_generations=4, max_steps=120),
    # the chosen setting without the KL leash (beta = 0, the paper's): what the leash prevents (tag "control")
    "G8-lr2e-3-80-beta0": dict(learning_rate=2e-3, beta=0.0, num_generations=8, max_steps=80),
}
READING = """
## Reading (written by hand, kept by --report)

**How the setting was chosen (one seed each, seed 100, then seed 101; leads, not results).** Notebook 00's former
setting (G = 4, lr 2e-3, beta 0.05, 200 steps; `nb00-200`) was not re-run here: its saved run (one seed, 16 posts
x 4 samples, 0.394 -> 0.503, training curve up to about 0.8 around steps 100-130 and back) is what issue 49
quotes. On seed 100: the same at 150 steps rose +0.167, but in the one-answer snapshot the pair scored better on
only 17 of 30 posts (worse on 12) and agent 1 did not get shorter (124 -> 125 characters): the gain came from agent
2 alone. lr 3e-3 for 120 steps rose +0.192, but agent 1's naturalness went 0.579 -> 1.137 nats/token, its text
drifting away from the model's language. G = 8 at lr 2e-3 for 80 steps (the same number of sampled answers as
160 steps at G = 4, in about 70-95 s of training) rose +0.170 with the snapshot better on 22 posts and worse on
7, agent 1 124 -> 86 characters and agent 2 131 -> 164: the division of labour the reward asks for. It was
chosen, checked on seed 101 (+0.204, rising at every evaluation), and only then were seeds 0-4 run. The G = 4
runs' held-out numbers rest on 30 x 4 samples and the G = 8 runs' on 30 x 8 (hence the different 'before').

**What the chosen setting does (claim seeds).** Every seed rose, with 2 threads and with 1. The texts say how:
agent 1 often keeps the first sentence of what it wrote before and stops there, agent 2 keeps writing to the
48-token cap, so more pairs land in the ratio [2, 3]. The sentences come from the tiny model's synthetic world,
not from the post, before and after training: the agents learn the split of lengths the reward pays for, not
summarising. Agent 2's naturalness rises a little (0.57 -> 0.63 to 0.79 nats/token over the claim seeds; agent 1's 0.55 -> 0.54 to 0.70): some of agent 2's longer answers
drift into other genres of the pretraining corpus (an arXiv sentence, a code fragment).
"""
HISTORY_KEYS = ("reward", "kl", "completions/mean_length/agent_0", "completions/mean_length/agent_1", "step_time")


def run(setting: str, seed: int, eval_every: int, tag: str) -> dict:
    torch.manual_seed(seed)
    base, tok = load_model("tiny")
    agents = lora_agents(base, num_agents=2, tokenizer=tok)
    formatters = tldr_formatters()
    train_rows, eval_rows = load_writing("tldr", "train"), load_writing("tldr", "eval")
    cfg = MAGRPOConfig(num_agents=2, max_new_tokens=48, seed=seed, progress=False, eval_steps=eval_every,
                       sample_log_size=0, **SETTINGS[setting])
    trainer = MAGRPOTrainer(agents, length_ratio_joint_reward, formatters, train_rows, cfg, eval_dataset=eval_rows)
    t0 = time.perf_counter()
    texts_before, rewards_before = answer_snapshot(agents, formatters, eval_rows, length_ratio_joint_reward)
    before = trainer.evaluate()
    t1 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t1
    after = trainer.evaluate()
    texts_after, rewards_after = answer_snapshot(agents, formatters, eval_rows, length_ratio_joint_reward)
    posts = [{"id": r["id"],   # the post itself: load_writing("tldr", "eval"), in this order
              "before": {"texts": tb, "reward": rb, "chars": [len(t) for t in tb]},
              "after": {"texts": ta, "reward": ra, "chars": [len(t) for t in ta]}}
             for r, tb, rb, ta, ra in zip(eval_rows, texts_before, rewards_before, texts_after, rewards_after)]
    return {"setting": setting, "config": SETTINGS[setting], "seed": seed, "tag": tag,
            "threads": torch.get_num_threads(), "omp": os.environ.get("OMP_NUM_THREADS"),
            "eval_rows": len(eval_rows), "eval_samples": cfg.num_generations,
            "before": before, "after": after, "gain": after["eval/reward"] - before["eval/reward"],
            "eval_history": [{"step": e.get("step"), "reward": e["eval/reward"]} for e in trainer.eval_history],
            "history": [{k: _round(h.get(k)) for k in ("step", *HISTORY_KEYS)} for h in trainer.history],
            "train_s": train_s, "total_s": time.perf_counter() - t0, "posts": posts,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def _round(x):
    return round(x, 4) if isinstance(x, float) else x


def _mean_sd(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def nat(r: dict, when: str) -> str:
    return " / ".join(f"{r[when][f'eval/naturalness/agent_{i}']:.2f}" for i in (0, 1))


def dump(records: list[dict]) -> str:
    """One record a line: the file stays small and a diff shows which runs were added."""
    return "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n"


def report(records: list[dict]) -> str:
    lines = ["# Notebook 00's quick demo over seeds", "",
             "Written by `python experiments/quickstart_seeds.py --report` from `quickstart_seeds.json` "
             "(every run, in the order run). Held-out = all 30 eval posts x G samples, sampling seed 1234, "
             "the same before and after; 'chars' = mean characters of agent 1 / agent 2 in the one-answer-per-post "
             "snapshot (sampling seed 1). Exploration runs (seeds 100, 101) chose the setting; claim runs (seeds 0-4) "
             "were run after the choice.", ""]
    lines += ["| setting | tag | seed | threads | steps | lr | beta | G (also samples per held-out post) | held-out before | after | gain | "
              "along the way (step: reward) | snapshot chars before | after | posts better / worse (snapshot) | "
              "naturalness agent 1 / agent 2, before -> after (nats/token) | train s |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        c = r["config"]
        way = ", ".join(f"{e['step']}: {e['reward']:.3f}" for e in r["eval_history"])
        cb = [statistics.mean(p["before"]["chars"][i] for p in r["posts"]) for i in (0, 1)]
        ca = [statistics.mean(p["after"]["chars"][i] for p in r["posts"]) for i in (0, 1)]
        better = sum(p["after"]["reward"] > p["before"]["reward"] + 1e-9 for p in r["posts"])
        worse = sum(p["after"]["reward"] < p["before"]["reward"] - 1e-9 for p in r["posts"])
        lines.append(f"| {r['setting']} | {r['tag']} | {r['seed']} | {r['omp']} | {c['max_steps']} | {c['learning_rate']:g} | "
                     f"{c['beta']:g} | {c['num_generations']} | {r['before']['eval/reward']:.3f} | "
                     f"{r['after']['eval/reward']:.3f} | {r['gain']:+.3f} | {way} | {cb[0]:.0f} / {cb[1]:.0f} | "
                     f"{ca[0]:.0f} / {ca[1]:.0f} | {better} / {worse} | {nat(r, 'before')} -> {nat(r, 'after')} | {r['train_s']:.0f} |")
    claim = {}
    for r in records:
        if r["tag"] in ("claim", "control"):
            claim.setdefault((r["setting"], r["omp"]), []).append(r)
    for (setting, omp), rs in claim.items():
        m, sd = _mean_sd([r["gain"] for r in rs])
        mb, _ = _mean_sd([r["before"]["eval/reward"] for r in rs])
        ma, sda = _mean_sd([r["after"]["eval/reward"] for r in rs])
        def agent2(r, when, what):  # the detailed agent's (the last) text quality in the held-out evaluation
            keys = sorted(k for k in r[when] if k.startswith(f"eval/{what}/"))
            return r[when][keys[-1]] if keys else float("nan")
        quality = "; agent 2 (detailed), mean over seeds: repetition {:.3f} -> {:.3f}, naturalness {:.2f} -> {:.2f} nats/token".format(
            *(_mean_sd([agent2(r, w, q) for r in rs])[0] for q in ("repetition", "naturalness") for w in ("before", "after")))
        lines += ["", f"**{'Claim' if rs[0]['tag'] == 'claim' else 'Control'}, {setting}, OMP_NUM_THREADS={omp}, seeds "
                  f"{[r['seed'] for r in rs]}:** held-out "
                  f"{mb:.3f} -> {ma:.3f} +- {sda:.3f} (mean +- sd over seeds); gain {m:+.3f} +- {sd:.3f}, "
                  f"min {min(r['gain'] for r in rs):+.3f}, positive in {sum(r['gain'] > 0 for r in rs)} of {len(rs)} seeds"
                  f"{quality}."]
    return "\n".join(lines) + "\n" + READING


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setting", choices=sorted(SETTINGS))
    ap.add_argument("--seed", type=int, nargs="+", default=[0])
    ap.add_argument("--tag", choices=("exploration", "claim", "control"), default="exploration")
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    records = json.loads(a.out.read_text()) if a.out.exists() else []
    if a.report:
        a.out.with_suffix(".md").write_text(report(records))
        return
    for seed in a.seed:
        rec = run(a.setting, seed, a.eval_every, a.tag)
        records.append(rec)
        a.out.write_text(dump(records))
        print(f"{a.setting} seed {seed}: {rec['before']['eval/reward']:.3f} -> {rec['after']['eval/reward']:.3f} "
              f"({rec['gain']:+.3f}); along the way {[(e['step'], round(e['reward'], 3)) for e in rec['eval_history']]}; "
              f"train {rec['train_s']:.0f} s, total {rec['total_s']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
