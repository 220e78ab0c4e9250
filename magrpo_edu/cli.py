"""The `magrpo-edu` command line: `train`, `pretrain`, `info`.

    magrpo-edu train                      # two agents on the embedded model, length-ratio task
    magrpo-edu train --task tldr --steps 300 --out runs/tldr
    magrpo-edu pretrain --out /tmp/tiny --max-steps 5
"""
from __future__ import annotations

import argparse
import sys


def _add_train(sub):
    p = sub.add_parser("train", help="train agents with MAGRPO and save history, plots and results",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--task", default="length", choices=["length", "tldr", "arxiv", "coding"],
                   help="length: agent 2 writes 2-3x as much as agent 1 (quick demo); tldr / arxiv: the paper's writing "
                        "tasks; coding: helper aux + main function, scored by running tests in the sandbox")
    p.add_argument("--turns", type=int, default=1, help="turns of the rollout tree (2 with --task coding: level feedback)")
    p.add_argument("--model", default="tiny", help="'tiny' (embedded), 'smollm2-135m', a hub id or a local path")
    p.add_argument("--agents", default="lora", choices=["lora", "separate"], help="shared base + LoRA per agent, or full copies")
    p.add_argument("--steps", type=int, default=300, help="optimiser steps (one prompt each)")
    p.add_argument("--num-generations", "-G", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=None,
                   help="longest completion (default per task: 48 length/tldr, 360 arxiv, 64 coding)")
    p.add_argument("--lr", type=float, default=None, help="learning rate (default: 2e-3 LoRA, 5e-4 full)")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--eval-rows", type=int, default=20, help="held-out rows to evaluate before and after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    p.add_argument("--out", default=None, help="output folder (default: runs/<task>)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_train)


def _train(args) -> int:
    from .experiment import run_training

    run_training(task=args.task, model=args.model, agents=args.agents, steps=args.steps, G=args.num_generations,
                 max_new_tokens=args.max_new_tokens, lr=args.lr, temperature=args.temperature,
                 eval_rows=args.eval_rows, seed=args.seed, device=args.device,
                 out=args.out or f"runs/{args.task}", progress=not args.no_progress, turns=args.turns)
    return 0


def _add_pretrain(sub):
    p = sub.add_parser("pretrain", help="pretrain the embedded tiny model from the synthetic corpus",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", required=True, help="folder to write model, tokenizer, loss curve and card to")
    p.add_argument("--docs", type=int, default=60000, help="corpus documents")
    p.add_argument("--vocab", type=int, default=2048, help="BPE vocabulary size")
    p.add_argument("--block", type=int, default=768, help="tokens per training row (a whole arXiv document fits in one)")
    p.add_argument("--batch-size", type=int, default=6)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--max-steps", type=int, default=1600, help="main (packed, cosine-schedule) steps")
    p.add_argument("--layers", type=int, default=6, help="transformer layers (the shipped model has 6)")
    p.add_argument("--width", type=int, default=192, help="hidden size (the shipped model has 192)")
    p.add_argument("--minutes", type=float, default=None, help="stop the main steps after this many minutes")
    p.add_argument("--anneal-steps", type=int, default=1500,
                   help="steps on a coding-heavy mix after the main ones (0: none; see pretrain.anneal)")
    p.add_argument("--anneal-lr", type=float, default=1e-3)
    p.add_argument("--anneal-coding-share", type=float, default=0.6, help="share of coding documents while annealing")
    p.add_argument("--cooldown-steps", type=int, default=300,
                   help="last packed steps, lr decaying to 0, on an arXiv-heavy mix (0: none; see pretrain.cooldown)")
    p.add_argument("--cooldown-lr", type=float, default=5e-4, help="learning rate at the start of the cooldown")
    p.add_argument("--cooldown-coding-share", type=float, default=0.3, help="share of coding documents in the cooldown")
    p.add_argument("--cooldown-arxiv-share", type=float, default=0.4, help="share of arXiv documents in the cooldown")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_pretrain)


def _pretrain(args) -> int:
    import json

    from .pretrain import pretrain

    s = pretrain(args.out, num_docs=args.docs, vocab_size=args.vocab, block=args.block, batch_size=args.batch_size,
                 lr=args.lr, max_steps=args.max_steps, minutes=args.minutes, seed=args.seed, device=args.device,
                 progress=not args.no_progress, command="magrpo-edu " + " ".join(sys.argv[1:]),
                 anneal_steps=args.anneal_steps, anneal_lr=args.anneal_lr, anneal_coding_share=args.anneal_coding_share,
                 cooldown_steps=args.cooldown_steps, cooldown_lr=args.cooldown_lr,
                 cooldown_coding_share=args.cooldown_coding_share, cooldown_arxiv_share=args.cooldown_arxiv_share,
                 layers=args.layers, hidden_size=args.width)
    print(json.dumps(s, indent=2))
    return 0


def _info(args) -> int:
    import platform

    import torch

    from . import __version__
    from .models import tiny_model_path
    from .resources import data_dir

    print(f"magrpo-edu {__version__}")
    print(f"python {platform.python_version()}, torch {torch.__version__}, cuda available: {torch.cuda.is_available()}")
    print(f"data: {data_dir()}")
    print(f"embedded tiny model: {tiny_model_path()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="magrpo-edu", description="Learn and run MAGRPO: several LLM agents, one joint reward, "
                                "one group-relative advantage (Liu et al., arXiv 2508.04652).")
    p.add_argument("--version", action="version", version=f"magrpo-edu {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    _add_train(sub)
    _add_pretrain(sub)
    s = sub.add_parser("info", help="versions and where the package's data and model are")
    s.set_defaults(func=_info)
    return p


def main(argv=None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if not getattr(args, "func", None):
        p.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
