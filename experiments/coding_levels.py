"""Which coding levels untrained pairs earn on the held-out families, before any RL (issue 30, item 1).

    python experiments/coding_levels.py --model tiny-code               # 28 held-out rows x 16 samples, ~1 min on 2 cores
    python experiments/coding_levels.py --model tiny --model tiny-code --out weights/tiny-code/levels.json
    python experiments/coding_levels.py --model tiny --model tiny-code --model tiny-code-2turn --out weights/tiny-code-2turn/levels.json

For each model: two agents = the model itself (no training; a LoRA adapter starts as the identity),
the parallel protocol, each held-out row (`load_coding("eval")`) answered `--samples` times with the
trainer's sampling settings (temperature 1, G = 4). Reports the share of samples that earn each level
of the reward (aux defined, entry point defined, syntax, at least one test, all tests, main calls aux,
not a thin wrapper), the mean reward, and the share of groups of G = 4 consecutive samples of a row
whose rewards are all equal (zero variance: MAGRPO's advantage is 0 there and nothing is learned).
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from magrpo_edu import lora_agents
from magrpo_edu.evaluation import run_method
from magrpo_edu.models import load_model
from magrpo_edu.tasks.coding.analysis import level_shares
from magrpo_edu.tasks.coding import coding_formatters, load_coding

def measure(model_name: str, samples: int = 16, seed: int = 0, rows=None) -> dict:
    base, tok = load_model(model_name)
    agents = lora_agents(base, 2, tokenizer=tok, target_modules=["q_proj", "v_proj"])
    rows = rows if rows is not None else load_coding("eval")
    t = time.time()
    r = run_method("parallel", agents, "coding", rows, coding_formatters(), samples=samples, seed=seed, keep_texts=True,
                   ks=(1,), temperature=1.0, top_p=1.0, top_k=0)  # plain sampling, as measured
    auxes, mains = [x[0] for x in r["texts"]], [x[1] for x in r["texts"]]
    reps = [row for row in rows for _ in range(samples)]
    out = level_shares(auxes, mains, reps)
    out.update(model=model_name, rows=len(rows), samples_per_row=samples, seed=seed, seconds=round(time.time() - t, 1),
               examples=[dict(task_id=rows[k]["task_id"], aux=auxes[k * samples], main=mains[k * samples])
                         for k in range(0, len(rows), 4)])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", default=None)
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    results = {m: measure(m, a.samples, a.seed) for m in (a.model or ["tiny-code"])}
    for m, r in results.items():
        print(m, {k: v for k, v in r.items() if k != "examples"})
        for e in r["examples"][:4]:
            print("  ", e["task_id"], "\n", e["aux"], "\n", e["main"])
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
