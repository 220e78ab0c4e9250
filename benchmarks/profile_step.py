"""Where the time of one magrpo-edu MAGRPO step goes, phase by phase and operator by operator.

    python benchmarks/profile_step.py                       # SmolLM2-135M shape, LoRA all-linear -> PROFILE.md
    python benchmarks/profile_step.py --model tiny --target q_proj v_proj

The same workload as benchmarks/step_speed.py (2 agents, G = 4, 64-token prompt, exactly 32 new
tokens). Phases are timed with wall clocks around the library's own helpers over `--steps` steps
after one warm-up step; then one step runs under torch.profiler for the top operators by self CPU
time. Writes benchmarks/PROFILE.md. It measures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import step_speed as ss  # noqa: E402  (the shared model shapes, prompt and reward)

from magrpo_edu import MAGRPOConfig, MAGRPOTrainer, algorithm, lora_agents  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m", choices=list(ss.SHAPES))
    ap.add_argument("--target", nargs="+", default=["all-linear"], help="LoRA target modules")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"], help="dtype of the frozen base")
    ap.add_argument("--out", default=str(HERE / "PROFILE.md"))
    args = ap.parse_args(argv)
    target = args.target[0] if args.target == ["all-linear"] else args.target
    tok = ss.tokenizer()
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    agents = lora_agents(ss.build(args.model, tok, dtype, "cpu"), 2, tokenizer=tok, target_modules=target)
    for a in agents:
        a.generation_kwargs = {"min_new_tokens": 32}
    cfg = MAGRPOConfig(num_generations=ss.G, max_new_tokens=32, max_steps=args.steps + 2, progress=False,
                       sample_log_size=0, learning_rate=1e-4)
    reward = lambda c, row: [ss.joint_reward_from_texts(a, b) for a, b in zip(*c)]  # noqa: E731
    tr = MAGRPOTrainer(agents, reward, [lambda r: r["p"]] * 2, [{"p": ss.prompt_text(tok)}], cfg)

    phases: dict[str, list[float]] = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            out = fn(*a, **k)
            phases.setdefault(name, []).append(time.perf_counter() - t)
            return out
        return wrapper

    # Wrap what the algorithm calls (the team's policy: sampling, log-probs; the joint reward) and the backward pass.
    from magrpo_edu.backends.fast import FastBackend

    FastBackend.sample = timed("sample (generate, KV cache, both agents)", FastBackend.sample)
    algorithm.joint_rewards = timed("joint reward", algorithm.joint_rewards)
    FastBackend.logprobs = timed("log-prob forward (one pass, both agents)", FastBackend.logprobs)
    backward = torch.autograd.backward
    algorithm.torch.autograd.backward = timed("backward", backward)
    tr.training_step()  # warm-up
    phases.clear()
    steps = []
    for _ in range(args.steps):
        t = time.perf_counter()
        tr.training_step()
        steps.append(time.perf_counter() - t)
    algorithm.torch.autograd.backward = backward
    step = statistics.median(steps)
    rows = [(name, statistics.median(v)) for name, v in phases.items()]
    rows.append(("rest (advantages, AdamW, bookkeeping)", step - sum(v for _, v in rows)))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        tr.training_step()
    top = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=50)
    lines = [f"# Where a MAGRPO step's time goes ({args.model}, LoRA {target}, {args.dtype} base, CPU)", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M %Z')}, {torch.get_num_threads()} torch threads, torch {torch.__version__}. "
             f"Command: `python benchmarks/profile_step.py {' '.join(argv if argv is not None else sys.argv[1:])}`", "",
             f"Median step {step:.2f} s over {args.steps} steps (one warm-up step before).", "",
             "| phase | median s | share |", "|---|---|---|"]
    lines += [f"| {name} | {v:.3f} | {100 * v / step:.0f}% |" for name, v in rows]
    lines += ["", "Top operators of one more step by self CPU time (torch.profiler):", "", "```", top, "```"]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:8 + len(rows)]))


if __name__ == "__main__":
    main()
