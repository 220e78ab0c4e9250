"""Evidence that the embedded tiny model serves MAGRPO, written into its model card.

    python experiments/tiny_model_evidence.py            # ~3 minutes per task on 2 cores

For each writing task: samples of both agents on a held-out prompt, the untrained two-agent joint
reward on held-out prompts, and the reward after a short MAGRPO run (same held-out prompts, same
sampling seed). Writes weights/tiny/evidence.json and regenerates the card (README.md).
Coding programs run in the sandbox (magrpo_edu.sandbox).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents
from magrpo_edu.algorithm import rollout
from magrpo_edu.tasks.registry import get_task
from magrpo_edu.models import load_model, tiny_model_path

STEPS = {"length": 250, "tldr": 150, "arxiv": 100, "coding": 150}  # completion budgets: each Task.max_new_tokens, as `magrpo-edu train`
TASKS = {task: (steps, get_task(task).max_new_tokens) for task, steps in STEPS.items()}  # task: (steps, max_new_tokens)
# The coding reward of one sample is close to all-or-nothing (std ~1.2 around a mean ~1), so 20 rows x 4
# samples cannot tell +0.15 from noise: coding's before/after use all 28 held-out rows x 16 samples
# (the points along the way stay at 20 x 4, like the other tasks).
POINT_ROWS = 20  # held-out rows of the points along the way (and of before/after, unless FINAL_EVAL says otherwise)
FINAL_EVAL = {"coding": dict(eval_rows=28, eval_generations=16)}


def run(task: str, steps: int, new_tokens: int, eval_rows: int = POINT_ROWS, seed: int = 0, eval_generations: int | None = None) -> dict:
    base, tok = load_model("tiny")
    agents = lora_agents(base, 2, tokenizer=tok)
    reward, fmts, train, ev = get_task(task).setup(tok)
    cfg = MAGRPOConfig(num_generations=4, max_new_tokens=new_tokens, learning_rate=2e-3, max_steps=steps, seed=seed,
                       eval_steps=max(1, steps // 5))  # the held-out reward along the way, not only at the end
    tr = MAGRPOTrainer(agents, reward, fmts, train, cfg, eval_dataset=ev[:POINT_ROWS])  # the points along the way
    same = (eval_rows, eval_generations) == (POINT_ROWS, None)  # before/after measured like the points along the way

    def final():
        return tr.evaluate(ev[:eval_rows], num_generations=eval_generations)

    def samples():  # two answers per agent on the first held-out row, same sampling seed every time
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            ro = rollout(agents, [f(ev[0]) for f in fmts], ev[0], reward,
                         MAGRPOConfig(num_generations=2, max_new_tokens=new_tokens, progress=False))
        return ro.root.completions

    before, samples_before = final(), samples()
    start = before if same else tr.evaluate()
    t = time.time()
    tr.train()
    train_s = time.time() - t
    after, samples_after = final(), samples()
    trajectory = [(0, start["eval/reward"])] + [(e["step"], e["eval/reward"]) for e in tr.eval_history]
    return dict(task=task, steps=steps, max_new_tokens=new_tokens, train_seconds=round(train_s, 1), eval_rows=before["eval/rows"],
                eval_generations=eval_generations or cfg.num_generations,
                trajectory=trajectory,
                before=before, after=after, samples_before=samples_before, samples_after=samples_after,
                prompt_agent_1=fmts[0](ev[0]))


def main():
    tasks = sys.argv[1:] or list(TASKS)
    out = tiny_model_path() / "evidence.json"
    results = json.loads(out.read_text()) if out.exists() else {}
    for task in tasks:
        steps, n = TASKS[task]
        results[task] = run(task, steps, n, **FINAL_EVAL.get(task, {}))
        print(task, results[task]["before"]["eval/reward"], "->", results[task]["after"]["eval/reward"], flush=True)
        out.write_text(json.dumps(results, indent=1))
    from tiny_model_card import write_card  # noqa: E402  (experiments/ is on sys.path when run as a script)

    write_card()


if __name__ == "__main__":
    main()
