"""The `magrpo-edu` command line: `train`, `pretrain`, `info`.

    magrpo-edu train                      # two agents on the embedded model, length-ratio task
    magrpo-edu train --task tldr --steps 300 --out runs/tldr --save-steps 50
    magrpo-edu train --resume runs/tldr   # continue after Ctrl-C or a crash, with the run's own settings
    magrpo-edu train --task tldr --report-to tensorboard   # then: tensorboard --logdir runs/tldr/tensorboard
    torchrun --nproc_per_node=2 -m magrpo_edu.cli train --task tldr --prompts-per-step 2   # data parallel
    magrpo-edu eval --checkpoint runs/tldr   # the evaluation of a saved run's agents
    magrpo-edu pretrain --out /tmp/tiny --max-steps 5

`train` checks every option before loading a model; a mistake prints one line
`magrpo-edu: error: ...` and exits with status 2, writing nothing. Ctrl-C during training saves
a checkpoint and the history so far and exits with status 130.
"""
from __future__ import annotations

import argparse
import sys


def _add_train(sub, suppress_defaults: bool = False):
    p = sub.add_parser("train", help="train agents with MAGRPO and save history, plots and results",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)

    def opt(*names, default=None, **kw):  # suppress_defaults: parse only what the command line gave
        p.add_argument(*names, default=argparse.SUPPRESS if suppress_defaults else default, **kw)

    from .tasks.registry import TASKS

    opt("--task", default="length", choices=list(TASKS),
        help="; ".join(f"{name}: {t.description}" for name, t in TASKS.items()))
    opt("--turns", type=int, default=1, help="turns of the rollout tree (2 with --task coding: level feedback)")
    opt("--model", default="tiny", help="'tiny' (embedded), 'smollm2-135m', a hub id or a local path")
    opt("--agents", default="lora", choices=["lora", "separate"], help="shared base + LoRA per agent, or full copies")
    opt("--steps", type=int, default=300, help="optimiser steps")
    opt("--prompts-per-step", type=int, default=1,
        help="training prompts per optimiser step, each its own group (1 = the paper); under torchrun, over all "
             "processes (a multiple of --nproc_per_node)")
    opt("--num-generations", "-G", type=int, default=4)
    opt("--max-new-tokens", type=int, default=None,
        help="longest completion (default per task: " + ", ".join(f"{n} {t.max_new_tokens}" for n, t in TASKS.items()) + ")")
    opt("--lr", type=float, default=None, help="learning rate (default: 2e-3 LoRA, 5e-4 full)")
    opt("--temperature", type=float, default=1.0)
    opt("--beta", type=float, default=None,
        help="KL leash to the untrained model (TRL's name; 0 = the paper). Default: 0.05 for --task length, "
             "the quick demo (without it agent 2 learns to pad), 0 for the paper's tasks")
    opt("--eval-rows", type=int, default=20, help="held-out rows to evaluate before and after (1 to the task's count)")
    opt("--seed", type=int, default=0)
    opt("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    opt("--out", default=None, help="output folder (default: runs/<task>); must be new or empty unless --overwrite")
    opt("--save-steps", type=int, default=None,
        help="save a checkpoint to <out>/checkpoint every N steps and after the last (default: only on Ctrl-C or an error)")
    opt("--resume", default=None, metavar="DIR",
        help="continue the run in DIR (its output folder) from DIR/checkpoint, with the run's own settings")
    opt("--overwrite", action="store_true", default=False,
        help="replace an earlier run's results in a non-empty --out (other files there are kept)")
    opt("--report-to", default="none", choices=["none", "tensorboard", "wandb", "trackio"],
        help="also send the metrics to a tracker (tensorboard: into <out>/tensorboard; needs its package)")
    opt("--no-progress", action="store_true", default=False, help="hide the progress bar")
    p.set_defaults(func=_train)


# train options -> run_training keyword
_TRAIN_KW = {"task": "task", "model": "model", "agents": "agents", "steps": "steps", "num_generations": "G",
             "max_new_tokens": "max_new_tokens", "lr": "lr", "temperature": "temperature", "beta": "beta",
             "eval_rows": "eval_rows",
             "seed": "seed", "device": "device", "out": "out", "turns": "turns", "save_steps": "save_steps",
             "prompts_per_step": "prompts_per_step", "report_to": "report_to"}
# MAGRPOConfig field -> the train option that sets it (named in error messages)
_CONFIG_FLAGS = {"max_steps": "--steps", "num_generations": "--num-generations", "max_new_tokens": "--max-new-tokens",
                 "learning_rate": "--lr", "temperature": "--temperature", "beta": "--beta", "seed": "--seed", "num_turns": "--turns",
                 "save_steps": "--save-steps", "prompts_per_step": "--prompts-per-step", "report_to": "--report-to",
                 "logging_dir": "--out"}


def _train(args) -> int:
    from .experiment import check_resume_flags, resume_settings, run_training

    kw = {_TRAIN_KW[k]: v for k, v in vars(args).items() if k in _TRAIN_KW}
    check_resume_flags(args.resume, args.overwrite)
    if args.resume is not None:  # options not given on this command line come from the run being resumed
        given = vars(build_parser(suppress_train_defaults=True).parse_args(args.argv))
        saved = resume_settings(args.resume)
        kw.update({k: v for k, v in saved.items() if k in kw and _flag_of(k) not in given})
    from . import distributed

    try:
        run_training(**kw, progress=not args.no_progress, resume=args.resume, overwrite=args.overwrite)
    finally:
        distributed.shutdown()  # data parallel (torchrun): leave the process group cleanly
    return 0


def _eval(args) -> int:
    from .experiment import run_eval

    run_eval(args.checkpoint, eval_rows=args.eval_rows, samples=args.samples, device=args.device)
    return 0


def _flag_of(kw: str) -> str:
    return next(dest for dest, k in _TRAIN_KW.items() if k == kw)


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

    from .pretraining.pretrain import pretrain

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


def build_parser(suppress_train_defaults: bool = False) -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="magrpo-edu", description="Learn and run MAGRPO: several LLM agents, one joint reward, "
                                "one group-relative advantage (Liu et al., arXiv 2508.04652).")
    p.add_argument("--version", action="version", version=f"magrpo-edu {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    _add_train(sub, suppress_train_defaults)
    _add_pretrain(sub)
    e = sub.add_parser("eval", help="evaluate the agents saved by a `magrpo-edu train` run",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    e.add_argument("--checkpoint", required=True, metavar="DIR", help="the run's output folder or its checkpoint folder")
    e.add_argument("--eval-rows", type=int, default=None, help="held-out rows (default: the run's)")
    e.add_argument("--samples", type=int, default=None, help="joint answers per row in the table (default: 2; coding 10)")
    e.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    e.set_defaults(func=_eval)
    s = sub.add_parser("info", help="versions and where the package's data and model are")
    s.set_defaults(func=_info)
    return p


def main(argv=None) -> int:
    """Run one command; returns the exit status: 0 done, 2 a mistake in the options or settings
    (one line on stderr, nothing written), 130 interrupted by Ctrl-C (partial results saved)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = build_parser()
    args = p.parse_args(argv)
    if not getattr(args, "func", None):
        p.print_help()
        return 0
    args.argv = argv
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("magrpo-edu: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from .experiment import SettingsError
        from .models import ModelNotAvailableError

        if not isinstance(exc, (SettingsError, ModelNotAvailableError)):
            raise  # a bug or a failure during the run: the traceback is the useful report
        msg = " ".join(str(exc).split())
        field = msg.split("=", 1)[0].removeprefix("MAGRPOConfig.") if msg.startswith("MAGRPOConfig.") else None
        if field in _CONFIG_FLAGS:
            msg = msg.rstrip(".") + f" (set with {_CONFIG_FLAGS[field]})."
        print(f"magrpo-edu: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
