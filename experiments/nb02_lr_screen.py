"""Notebook 02 section 6's setting, screened: the learning rate of the leashed length-ratio run, and aligned vs cross.

    OMP_NUM_THREADS=2 python experiments/nb02_lr_screen.py --lr 3e-3 --seeds 0 1 2     # runs, appended to the JSON
    python experiments/nb02_lr_screen.py --report                                       # writes nb02_lr_screen.md

The run is notebook 02's section 6: two LoRA adapters on the embedded tiny model (agent 1 asked for a concise
summary, agent 2 for a detailed one), notebook 00's joint length-ratio reward, G = 4, 70 steps, 48 new tokens,
beta = 0.05, the learning rate given. Held-out: the first 16 hand-written posts x 4 samples (`trainer.evaluate`, its
fixed sampling seed), the untrained pair once, each trained pair after; with each agent's mean length in characters,
naturalness and repetition, and the share of joint answers whose ratio is in [2, 3].

How the notebook's setting was chosen (an honest record, not a held-out choice): 2e-3 and 3e-3 were run on the
notebook's own seeds 0-2. Every seed gained at both (means +0.155 at 2e-3, +0.147 at 3e-3); 3e-3 was kept for its
larger smallest gain (+0.121 against +0.056, seed 2), so that no seed of the notebook sits near its assert's +0.05.
Seeds 3 and 4 at 3e-3, and seeds 0-4 again with one thread, were run afterwards to check the notebook's asserts.
Then both modes at equal samples (the notebook's question since): `--joint-mode cross --seeds 0 1 2 3 4`, one thread."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

HERE = Path(__file__).parent
RESULTS, REPORT = HERE / "nb02_lr_screen.json", HERE / "nb02_lr_screen.md"


def held_out(trainer, rows) -> dict:
    """The pair's held-out numbers: reward, in-band share, lengths (characters), naturalness, repetition."""
    m, s = trainer.evaluate(rows, return_samples=True)
    chars = [[len(t) for t in texts] for texts in s["texts"]]
    return dict(reward=m["eval/reward"], in_band=statistics.mean(1.0 if a and 2 <= b / a <= 3 else 0.0
                                                                  for a, b in zip(*chars)),
                chars1=statistics.mean(chars[0]), chars2=statistics.mean(chars[1]),
                naturalness1=m["eval/naturalness/concise"], naturalness2=m["eval/naturalness/detailed"],
                repetition1=m["eval/repetition/concise"], repetition2=m["eval/repetition/detailed"])


def run(lr: float, seed: int, joint_mode: str = "aligned") -> dict:
    from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
    from magrpo_edu.models import load_model
    from magrpo_edu.rewards import length_ratio_joint_reward
    from magrpo_edu.tasks.writing import load_writing, tldr_formatters

    rows = load_writing("tldr", "eval")[:16]
    base, tokenizer = load_model("tiny")
    agents = lora_agents(base, num_agents=2, tokenizer=tokenizer, seed=seed, names=["concise", "detailed"])
    config = MAGRPOConfig(num_agents=2, num_generations=4, max_new_tokens=48, learning_rate=lr, max_steps=70,
                          beta=0.05, seed=seed, joint_mode=joint_mode, progress=False)
    trainer = MAGRPOTrainer(agents, length_ratio_joint_reward, tldr_formatters(), load_writing("tldr", "train"),
                            config, eval_dataset=rows)
    t0, before = time.time(), held_out(trainer, rows)
    trainer.train()
    rewards = [h["reward"] for h in trainer.history]
    return dict(lr=lr, seed=seed, joint_mode=joint_mode, threads=int(os.environ.get("OMP_NUM_THREADS", "0") or 0), before=before,
                after=held_out(trainer, rows), train_first20=statistics.mean(rewards[:20]),
                train_last20=statistics.mean(rewards[-20:]), seconds=round(time.time() - t0, 1))


def report() -> str:
    recs = json.loads(RESULTS.read_text())
    b = recs[0]["before"]
    lines = ["# Notebook 02, section 6: the learning rate screened (`experiments/nb02_lr_screen.py`)", "",
             "Leashed (beta = 0.05) length-ratio runs of two LoRA agents on the tiny model, G = 4, 70 steps; held-out: "
             "16 hand-written posts x 4 samples (aligned for every run). The learning rate 3e-3 was chosen on aligned "
             "seeds 0-2, for its larger smallest gain (the script's docstring). Cross rows (`--joint-mode cross`: all 16 "
             "pairs of the same 4 samples per agent) were run afterwards, seeds 0-4 at one thread, to compare the two "
             "modes at equal samples; the notebook trains seed 0 of each mode live and reads the one-thread rows. "
             "Rows with threads \"default\" (the library's choice on 2 cores) were made by the screening copy of this "
             "script (the same computation, its records converted to this file's fields).", "",
             f"Untrained pair: reward {b['reward']:.3f}, ratio in [2, 3] {b['in_band']:.2f}, lengths "
             f"{b['chars1']:.0f} / {b['chars2']:.0f} characters, naturalness {b['naturalness1']:.2f} / "
             f"{b['naturalness2']:.2f}.", "",
             "| lr | joint actions | seed | threads | held-out reward (change) | in [2, 3] | chars 1 / 2 | naturalness 1 / 2 | "
             "training reward, steps 1-20 -> 51-70 |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(recs, key=lambda r: (r.get("joint_mode", "aligned"), r["lr"], r["threads"], r["seed"])):
        a = r["after"]
        lines.append(f"| {r['lr']:g} | {r.get('joint_mode', 'aligned')} | {r['seed']} | {r['threads'] or 'default'} | {a['reward']:.3f} "
                     f"({a['reward'] - r['before']['reward']:+.3f}) | {a['in_band']:.2f} | {a['chars1']:.0f} / "
                     f"{a['chars2']:.0f} | {a['naturalness1']:.2f} / {a['naturalness2']:.2f} | "
                     f"{r['train_first20']:.3f} -> {r['train_last20']:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--joint-mode", choices=("aligned", "cross"), default="aligned",
                   help="cross: every agent-1 sample with every agent-2 sample, G^2 joint actions from the same samples")
    p.add_argument("--report", action="store_true")
    args = p.parse_args()
    if args.report:
        REPORT.write_text(report())
        print(f"wrote {REPORT}")
        return
    recs = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    for seed in args.seeds:
        recs.append(run(args.lr, seed, args.joint_mode))
        RESULTS.write_text(json.dumps(recs, indent=1) + "\n")
        print(json.dumps(recs[-1]["after"]))


if __name__ == "__main__":
    main()
