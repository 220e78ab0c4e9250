"""Memory per device for the paper's settings: weights, gradients, AdamW state, reference copy.

    python benchmarks/memory.py                 # -> benchmarks/MEMORY.md

Counts each shape's parameters exactly (the model is built on the `meta` device: no memory, no
weights; shapes from benchmarks/step_speed.py, the same configs as the real models) and turns them
into bytes of the STATE a MAGRPO run keeps per agent, for the placements magrpo-edu offers:
  separate, bf16     full fine-tuning of a bf16 copy: weights 2 B + gradients 2 B + AdamW's two
                     moments 4 B per parameter (torch's AdamW keeps them in the parameter's dtype)
  separate, fp32     the same in fp32: 4 + 4 + 8 B per parameter
  + reference        config.beta > 0 keeps one frozen bf16 copy per device (2 B per parameter)
  LoRA, shared base  one frozen bf16 base for all agents + per agent an fp32 rank-r adapter on every
                     linear layer with its gradient and AdamW moments (16 B per adapter parameter)
Not included, because they depend on the batch and not on the model: activations of the backward
pass and the KV cache of sampling, which grow with G x (prompt + max_new_tokens) tokens, and the
CUDA context (~0.5 GB). It computes; it measures nothing on a GPU and asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from step_speed import SHAPES, model_classes  # noqa: E402

GB = 1e9


def counts(shape: str, rank: int = 8) -> tuple[int, int]:
    """(parameters of the model, parameters of one rank-`rank` LoRA adapter on every linear layer but the head)."""
    import torch

    kind, kw = SHAPES[shape]
    cfg_cls, cls = model_classes(kind)
    with torch.device("meta"):
        model = cls(cfg_cls(**kw))
    total = sum(p.numel() for p in model.parameters())
    lora = sum(rank * (m.in_features + m.out_features) for name, m in model.named_modules()
               if isinstance(m, torch.nn.Linear) and not name.endswith("lm_head"))
    return total, lora


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["smollm2-135m", "qwen2.5-0.5b", "qwen3-1.7b"], choices=list(SHAPES))
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--rank", type=int, default=8, help="LoRA rank (magrpo-edu's default)")
    ap.add_argument("--out", default=str(HERE / "MEMORY.md"))
    args = ap.parse_args()
    n = args.agents
    lines = ["# Memory per device for MAGRPO's state (computed, not measured)", "",
             f"Computed {time.strftime('%Y-%m-%d')} by `python benchmarks/memory.py` from exact parameter counts "
             "(models built on the meta device with the real models' configs). State only: weights, gradients, "
             "AdamW moments and the frozen reference; activations, the sampling KV cache (they grow with "
             "G x (prompt + new tokens)) and the CUDA context (~0.5 GB) come on top. GB = 10^9 bytes.", "",
             f"| model | parameters | {n} agents on ONE device, separate bf16 | one agent per device (`devices=[...]`), bf16 "
             "| one agent per device, fp32 | + reference per device (beta > 0), bf16 | LoRA r="
             f"{args.rank}, {n} agents on one shared bf16 base |", "|---|---|---|---|---|---|---|"]
    for shape in args.models:
        P, L = counts(shape, args.rank)
        per_agent_bf16, per_agent_fp32, ref = 8 * P, 16 * P, 2 * P
        lora = 2 * P + n * 16 * L
        lines.append(f"| {shape} | {P / 1e9:.3f} B | {n * per_agent_bf16 / GB:.1f} GB | {per_agent_bf16 / GB:.1f} GB "
                     f"| {per_agent_fp32 / GB:.1f} GB | +{ref / GB:.1f} GB | {lora / GB:.2f} GB "
                     f"(adapters {L / 1e6:.1f} M parameters each) |")
    lines += ["", "Reading it: the paper trains two Qwen3-1.7B agents fully; in bf16 their state alone needs the "
              "third column's figure on one GPU, or the fourth on each of two GPUs with "
              "`separate_agents(base, 2, tokenizer=tok, devices=['cuda:0', 'cuda:1'])`. Data parallel "
              "(`torchrun`) does not divide this state: every process holds all agents; it divides the prompts.", ""]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
