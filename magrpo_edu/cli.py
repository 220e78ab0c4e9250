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
    """`train`'s options: the fields of `config.TrainArguments` (one name, one default each), through
    transformers' HfArgumentParser; `--task` lists the registered tasks."""
    from .config import TrainArguments
    from .tasks.registry import TASKS

    p = sub.add_parser("train", help="train agents with MAGRPO and save history, plots and results",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter, dataclass_types=[TrainArguments])
    for action in p._actions:
        if action.dest == "task":  # the registry as it is now (a task registered after import is a choice too)
            action.choices = list(TASKS)
            action.help = "; ".join(f"{name}: {t.description}" for name, t in TASKS.items())
        if suppress_defaults and action.dest != "help":  # parse only what the command line gave
            action.default = argparse.SUPPRESS
    p.set_defaults(func=_train)
    return p


def _train(args) -> int:
    import dataclasses

    from . import distributed
    from .config import TrainArguments
    from .experiment import check_resume_flags, resume_settings, run_training

    kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainArguments)}
    check_resume_flags(args.resume, args.overwrite)
    _threads()
    if args.resume is not None:  # options not given on this command line come from the run being resumed
        given = vars(build_parser(suppress_train_defaults=True).parse_args(args.argv))
        saved = resume_settings(args.resume)
        kw.update({k: v for k, v in saved.items() if k in kw and k not in given})
    try:
        run_training(**kw)
    finally:
        distributed.shutdown()  # data parallel (torchrun): leave the process group cleanly
    return 0


def _threads() -> None:
    """Pick torch's CPU threads for this machine as it is now (magrpo_edu.threads) and say so first;
    quiet the library notices a newcomer cannot act on (`_quiet_library_notices`)."""
    from .threads import apply_sensible_threads

    print(apply_sensible_threads(), flush=True)
    _quiet_library_notices()


def _quiet_library_notices() -> None:
    """Hide one notice that every run printed three times and a user of the command line cannot act
    on: transformers' "`past_key_values` is deprecated, use `cache`" (transformers 5.x), raised
    because our fast path passes `past_key_values=` to `generate` and the forward (fast_path.py).
    That keyword works up to transformers 5.39 and pyproject.toml pins `transformers<5.40` until
    the fast path moves to `cache=`; the tests still show the notice. Only that message: every
    other warning and log line still shows."""
    import logging
    import warnings

    from transformers.utils import logging as hf_logging

    warnings.filterwarnings("ignore", message=r".*`past_key_values` is deprecated", category=FutureWarning)

    class _NotThat(logging.Filter):
        def filter(self, record):
            return "`past_key_values`/`cache_params` are deprecated" not in record.getMessage()

    for handler in hf_logging.get_logger().handlers:  # transformers' root logger's: every module's records pass it
        handler.addFilter(_NotThat())


def _eval(args) -> int:
    from .experiment import run_eval

    _threads()
    run_eval(args.checkpoint, eval_rows=args.eval_rows, samples=args.samples, device=args.device)
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

    from .pretraining.pretrain import pretrain

    _threads()
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

    from transformers import HfArgumentParser

    p = argparse.ArgumentParser(prog="magrpo-edu", description="Learn and run MAGRPO: several LLM agents, one joint reward, "
                                "one group-relative advantage (Liu et al., arXiv 2508.04652).")
    p.add_argument("--version", action="version", version=f"magrpo-edu {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=HfArgumentParser)
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
        from .config import TrainArguments
        from .experiment import SettingsError
        from .models import ModelNotAvailableError

        if not isinstance(exc, (SettingsError, ModelNotAvailableError)):
            raise  # a bug or a failure during the run: the traceback is the useful report
        msg = " ".join(str(exc).split())
        field = msg.split("=", 1)[0].removeprefix("MAGRPOConfig.") if msg.startswith("MAGRPOConfig.") else None
        flags = {**TrainArguments.config_flags(), "logging_dir": "--out"}
        if field in flags:
            msg = msg.rstrip(".") + f" (set with {flags[field]})."
        print(f"magrpo-edu: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
