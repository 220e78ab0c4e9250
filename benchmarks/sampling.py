"""Batched vs per-agent sampling: seconds per MAGRPO step, 2 agents on one shared base + LoRA.

    python benchmarks/sampling.py                 # both models, writes benchmarks/sampling_results.{json,md}
    python benchmarks/sampling.py --models tiny --steps 5

Same workload in both modes: 2 agents (one LoRA adapter each on a shared frozen base), G = 4,
one prompt of about 64 tokens per step, exactly N new tokens (min_new_tokens = max_new_tokens),
a full MAGRPO step (sampling, reward, advantages, per-agent loss and AdamW step).
  batched:   both agents' 2 x G rows in ONE generate call (backends.fast.adapter_rows)
  per-agent: one generate call per agent (config.batch_agents = False)
Models: randomly initialised Llamas of the shapes in benchmarks/step_speed.py (a ~1M-parameter one
and SmolLM2-135M's; weights do not matter for speed).
This script measures and records; it asserts nothing about time.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import step_speed as ss  # noqa: E402  (the shared model shapes, tokenizer and prompt)

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, lora_agents  # noqa: E402


def time_steps(model, tok, batched: bool, steps: int, new_tokens: int, G: int = 4) -> list[float]:
    agents = lora_agents(model, 2, tokenizer=tok)
    for a in agents:
        a.generation_kwargs = {"min_new_tokens": new_tokens}
    cfg = MAGRPOConfig(num_generations=G, max_new_tokens=new_tokens, max_steps=steps + 1, learning_rate=1e-4,
                       progress=False, batch_agents=batched, sample_log_size=0)
    p = ss.prompt_text(tok)
    rows = [{"p": p}]
    reward = lambda completions, row: [float(len(b) - len(a)) for a, b in zip(*completions)]  # noqa: E731
    tr = MAGRPOTrainer(agents, reward, [lambda r: r["p"], lambda r: r["p"]], rows, cfg)
    times = []
    for _ in range(steps + 1):  # the first step is warm-up
        t = time.perf_counter()
        tr.training_step()
        times.append(time.perf_counter() - t)
    return times[1:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["tiny", "smollm2-135m"], choices=list(ss.SHAPES))
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--out", default=str(HERE / "sampling_results"))
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    results = []
    for name in args.models:
        steps = args.steps if name == "tiny" else max(3, args.steps // 2)
        for batched in (True, False):
            tok = ss.tokenizer()
            model = ss.build(name, tok, torch.float32, "cpu")  # peft wraps the base in place: a fresh one per mode
            n_params = sum(p.numel() for p in model.parameters())
            ts = time_steps(model, tok, batched, steps, args.new_tokens)
            rec = dict(model=name, params=n_params, mode="batched" if batched else "per-agent", steps=len(ts),
                       median_s=statistics.median(ts), min_s=min(ts), all_s=[round(t, 4) for t in ts])
            print(json.dumps(rec))
            results.append(rec)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), machine=platform.machine(), processor=platform.processor(),
                threads=torch.get_num_threads(), torch=torch.__version__, python=platform.python_version(),
                new_tokens=args.new_tokens, G=4, agents=2, command="python benchmarks/sampling.py " + " ".join(argv or []))
    Path(args.out + ".json").write_text(json.dumps(dict(meta=meta, results=results), indent=2))
    lines = ["# Batched vs per-agent sampling (2 agents, shared base + LoRA)", "",
             f"{meta['date']}, {meta['machine']}, {meta['threads']} torch threads, torch {meta['torch']}; G=4, "
             f"~64-token prompt, exactly {args.new_tokens} new tokens; median (min) seconds per full MAGRPO step after one warm-up step.", "",
             "| model | params | batched | per-agent | per-agent / batched |", "|---|---|---|---|---|"]
    for name in args.models:
        b = next(r for r in results if r["model"] == name and r["mode"] == "batched")
        s = next(r for r in results if r["model"] == name and r["mode"] == "per-agent")
        lines.append(f"| {name} | {b['params'] / 1e6:.1f}M | {b['median_s']:.3f} ({b['min_s']:.3f}) | "
                     f"{s['median_s']:.3f} ({s['min_s']:.3f}) | {s['median_s'] / b['median_s']:.2f}x |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
