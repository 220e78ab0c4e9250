"""The `magrpo-edu` command line: `train`, `eval`, `pretrain`, `pretrain-code`, `info`.

    magrpo-edu train                      # two agents on the embedded model, length-ratio task
    magrpo-edu train --task tldr --steps 300 --out runs/tldr --save-steps 50
    magrpo-edu train --resume runs/tldr   # continue after Ctrl-C or a crash, with the run's own settings
    magrpo-edu train --task tldr --report-to tensorboard   # then: tensorboard --logdir runs/tldr/tensorboard
    torchrun --nproc_per_node=2 -m magrpo_edu.run.cli train --task tldr --prompts-per-step 2   # data parallel
    magrpo-edu eval --checkpoint runs/tldr   # the evaluation of a saved run's agents
    magrpo-edu pretrain --out /tmp/tiny --max-steps 5
    magrpo-edu pretrain-code --out /tmp/tiny-code --steps 5   # tiny trained further on code (the coding task's model)

`train` checks every option before loading a model; a mistake prints one line
`magrpo-edu: error: ...` and exits with status 2, writing nothing. Ctrl-C during training saves
a checkpoint and the history so far and exits with status 130 (SIGTERM too).
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import signal
import sys
import threading
import typing
from typing import Optional


class _Parser(argparse.ArgumentParser):
    """Every mistake on the command line is one line `magrpo-edu: error: ...` and exit status 2, as a
    bad setting found later (`plan.SettingsError`) is. An option is taken only as written: no
    abbreviation (`--num-generation 4` is an error, not --num-generations)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"magrpo-edu: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        """argparse's, with an unknown option's closest known one named: `unrecognized arguments:
        --num-generation 4; did you mean '--num-generations'?` (the command's own options)."""
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            from .plan import did_you_mean

            command = getattr(ns, "command", None)
            sub = self._subparsers._group_actions[0].choices.get(command) if self._subparsers and command else None
            options = {o for a in (sub or self)._actions for o in a.option_strings}
            options = [o for o in options if o.replace("_", "-") == o or o.replace("_", "-") not in options]  # dashed
            typo = next((e.split("=")[0] for e in extras if e.startswith("-")), None)
            self.error(f"unrecognized arguments: {' '.join(extras)}" + (did_you_mean(typo, options) if typo else ""))
        return ns

    def _check_value(self, action, value):
        """A value outside an option's choices (--task, --advantage, ..., the command itself) names the
        closest choice: `invalid choice: 'tldrr'; did you mean 'tldr'? (choose from ...)`."""
        if action.choices is not None and value not in action.choices:
            from .plan import did_you_mean

            choices = [str(c) for c in action.choices]
            close = did_you_mean(str(value), choices)
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{close} "
                                                 f"(choose from {', '.join(map(repr, choices))})")


def _first_sentence(text: str) -> str:
    """A docstring's first sentence: the option's help line (the whole docstring stays on the field)."""
    m = re.match(r"(.+?\.)(\s+[A-Z]|$)", text)
    return m.group(1) if m else text


def _parse(kind):
    """The argparse type of a field annotated `kind`: int, float, str, or Optional of one ("none" gives None)."""
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if not (typing.get_origin(kind) is typing.Union and len(args) == 1 and args[0] in (int, float, str)):
        return kind if kind in (int, float, str) else str  # report_to (Any): one tracker's name
    base = args[0]

    def optional(text: str):
        return None if text.lower() == "none" else base(text)
    optional.__name__ = base.__name__  # argparse names the type in its errors: "invalid int value"
    return optional


def add_dataclass_arguments(parser, cls, skip=(), defaults: Optional[dict] = None, title: Optional[str] = None):
    """One option per field of the dataclass `cls` (as TRL builds its command line from its configs):
    --name and --name-with-dashes, the aliases in the field's metadata (-G, --steps, ...), the help
    from the field's docstring (`config.field_help`) and the default from the dataclass, or from
    `defaults` (a text) where the run resolves it. A bool field is a switch: --overwrite when it is
    off by default, --no-progress when it is on. Defaults are not filled in: the namespace holds only
    what the command line gave (`plan.plan_run` fills the rest)."""
    from ..config import field_help

    group = parser.add_argument_group(title) if title else parser
    hints, docs, defaults = typing.get_type_hints(cls), field_help(cls), defaults or {}
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        kind, dashed = hints[f.name], f.name.replace("_", "-")
        default = defaults.get(f.name, repr(f.default) if isinstance(f.default, str) else f.default)
        help_text = _first_sentence(docs.get(f.name, ""))
        extra = dict(f.metadata)
        aliases = list(extra.pop("aliases", ()))
        if kind is bool:
            prefix = "no-" if f.default else ""
            names = [f"--{prefix}{dashed}"] + ([f"--{prefix.replace('-', '_')}{f.name}"] if "_" in f.name else [])
            group.add_argument(*names, *aliases, dest=f.name, action="store_false" if f.default else "store_true",
                               default=argparse.SUPPRESS,
                               help=f"(on by default; this turns it off) {help_text}" if f.default else help_text)
            continue
        names = [f"--{f.name}"] + ([f"--{dashed}"] if dashed != f.name else [])
        if f.default is dataclasses.MISSING:
            extra["required"] = True
            help_text = help_text.rstrip(".") + " (required)"
        elif "choices" in extra:
            extra["choices"] = list(extra["choices"])
        if not extra.get("required"):
            help_text += f" (default: {default})"
        parse = _parse(kind)
        if "choices" not in extra and "metavar" not in extra and parse.__name__ in ("int", "float"):
            extra["metavar"] = "N" if parse.__name__ == "int" else "X"
        group.add_argument(*names, *aliases, dest=f.name, type=parse, default=argparse.SUPPRESS,
                           help=help_text.replace("%", "%%"), **extra)


def _resolved_defaults() -> dict:
    """--help's text for the MAGRPOConfig defaults that `plan.run_defaults` resolves per task or
    per agent kind: the value where it is one, else the values it takes; then what a model's recipe on a task
    (`Task.model_recipes`) sets instead."""
    from ..config import AGENT_KINDS, MAGRPOConfig
    from ..tasks.registry import TASKS
    from .plan import run_defaults

    table = {(name, kind): run_defaults(task, kind) for name, task in TASKS.items() for kind in AGENT_KINDS}
    own = {f: MAGRPOConfig.__dataclass_fields__[f].default for d in table.values() for f in d}
    out = {}
    for field in own:  # a field one task's recipe sets takes MAGRPOConfig's own default elsewhere
        values = {key: d.get(field, own[field]) for key, d in table.items()}
        if len(set(values.values())) == 1:
            out[field] = f"{next(iter(values.values()))} for magrpo-edu train"
        elif all(values[(n, a)] == values[(n, AGENT_KINDS[0])] for n, a in values):  # depends on the task only
            out[field] = "the task's: " + ", ".join(f"{n} {values[(n, AGENT_KINDS[0])]}" for n in TASKS)
        elif all(values[(n, a)] == values[(next(iter(TASKS)), a)] for n, a in values):  # on the agents only
            out[field] = ", ".join(f"{values[(next(iter(TASKS)), a)]} with --agents {a}" for a in AGENT_KINDS)
        else:  # on both (a task's LoRA recipe, `Task.lora_recipe`)
            per_task = []
            for n in TASKS:
                kinds = {a: values[(n, a)] for a in AGENT_KINDS}
                per_task.append(f"{n} " + (str(kinds[AGENT_KINDS[0]]) if len(set(kinds.values())) == 1 else
                                           " / ".join(f"{v} with --agents {a}" for a, v in kinds.items())))
            out[field] = "the task's: " + ", ".join(per_task)
    for name, task in TASKS.items():  # the layer above: a recipe measured for one model on one task (LoRA agents)
        for model, recipe in task.model_recipes.items():
            for field, v in recipe.config.items():
                if field in own:
                    out[field] += f"; {v} with --model {model} on {name}"
    return out


def _add_train(sub):
    """`train`'s options: the fields of `config.RunArguments` and of `MAGRPOConfig` (each under its own
    name, with its own default), and `--task` lists the registered tasks."""
    from ..config import MAGRPOConfig, RunArguments
    from ..tasks.registry import TASKS
    from .device import DEVICE_DEFAULT
    from .plan import CONFIG_FIELDS

    p = sub.add_parser("train", help="train agents with MAGRPO and save history, plots and results",
                       description="Train agents with MAGRPO: the untrained agents and the baselines are evaluated on "
                       "held-out rows, then the agents are trained, evaluated again, and results.md, plots and a "
                       "checkpoint are written.")
    models = ", ".join(f"{name} {t.model}" for name, t in TASKS.items())
    add_dataclass_arguments(p, RunArguments, defaults={"model": f"the task's: {models}", "device": DEVICE_DEFAULT},
                            title="the run (config.RunArguments)")
    add_dataclass_arguments(p, MAGRPOConfig, skip=[f.name for f in dataclasses.fields(MAGRPOConfig)
                                                   if f.name not in CONFIG_FIELDS],
                            defaults=_resolved_defaults(), title="the algorithm (config.MAGRPOConfig)")
    for action in p._actions:
        if action.dest == "task":  # the registry as it is now (a task registered after import is a choice too)
            action.choices = list(TASKS)
            action.help = "; ".join(f"{name}: {t.description}" for name, t in TASKS.items()) + \
                f" (default: {RunArguments.task})"
    p.set_defaults(func=_train)
    return p


def _train(args) -> int:
    from .. import distributed
    from .experiment import run_training

    _threads()
    try:
        run_training(**_given(args))
    finally:
        distributed.shutdown()  # data parallel (torchrun): leave the process group cleanly
    return 0


def _given(args) -> dict:
    """The options the command line gave (the parser fills in no defaults)."""
    return {k: v for k, v in vars(args).items() if k not in ("func", "command")}


def _threads() -> None:
    """Pick torch's CPU threads for this machine as it is now (magrpo_edu.threads) and say so first."""
    from ..threads import apply_sensible_threads

    print(apply_sensible_threads(), flush=True)


def _eval(args) -> int:
    from .experiment import run_eval

    _threads()
    run_eval(args.checkpoint, eval_rows=args.eval_rows, samples=args.samples, device=args.device)
    return 0


def _add_pretrain(sub):
    """`pretrain`'s options: the fields of `pretraining.pretrain.PretrainArguments`."""
    from ..pretraining.pretrain import PretrainArguments

    p = sub.add_parser("pretrain", help="pretrain the embedded tiny model from the synthetic corpus",
                       description="Pretrain the embedded tiny model (magrpo_edu/pretraining/pretrain.py); with no "
                       "options but --out it reproduces the shipped one.")
    add_dataclass_arguments(p, PretrainArguments)
    p.set_defaults(func=_pretrain)


def _pretrain(args) -> int:
    from ..pretraining.pretrain import PretrainArguments, pretrain

    return _run_pretraining(args, PretrainArguments, pretrain)


def _run_pretraining(args, arguments_class, run) -> int:
    """`pretrain` and `pretrain-code`: check every value (`arguments_class`) before anything loads or the
    corpus is written, then `run(command=..., **values)` and print its summary."""
    import json

    from .plan import SettingsError

    given = _given(args)
    try:
        arguments_class(**given)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    _threads()
    s = run(command="magrpo-edu " + " ".join(sys.argv[1:]), **given)
    print(json.dumps(s, indent=2))
    return 0


def _add_pretrain_code(sub):
    """`pretrain-code`'s options: the fields of `pretraining.code_model.CodePretrainArguments`."""
    from ..pretraining.code_model import CodePretrainArguments

    p = sub.add_parser("pretrain-code", help="train the embedded tiny model further on helper/main programs (tiny-code)",
                       description="Make the embedded tiny-code model (magrpo_edu/pretraining/code_model.py): the tiny "
                       "model trained further on the coding corpus; with no options but --out it reproduces the shipped one.")
    add_dataclass_arguments(p, CodePretrainArguments)
    p.set_defaults(func=_pretrain_code)


def _pretrain_code(args) -> int:
    from ..pretraining.code_model import CodePretrainArguments, pretrain_code

    return _run_pretraining(args, CodePretrainArguments, pretrain_code)


def _info(args) -> int:
    import platform

    import torch

    from .._version import __version__
    from ..models import tiny_model_path
    from ..resources import data_dir

    print(f"magrpo-edu {__version__}")
    print(f"python {platform.python_version()}, torch {torch.__version__}, cuda available: {torch.cuda.is_available()}")
    print(f"data: {data_dir()}")
    print(f"embedded tiny model: {tiny_model_path()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .._version import __version__
    from .device import DEVICE_DEFAULT

    p = _Parser(prog="magrpo-edu", description="Learn and run MAGRPO: several LLM agents, one joint reward, "
                "one group-relative advantage (Liu et al., arXiv 2508.04652).")
    p.add_argument("--version", action="version", version=f"magrpo-edu {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_train(sub)
    _add_pretrain(sub)
    _add_pretrain_code(sub)
    e = sub.add_parser("eval", help="evaluate the agents saved by a `magrpo-edu train` run")  # each help says its default
    e.add_argument("--checkpoint", required=True, metavar="DIR", help="the run's output folder or its checkpoint folder")
    e.add_argument("--eval-rows", "--eval_rows", dest="eval_rows", type=int, default=None,
                   help="held-out rows (default: the run's)")
    e.add_argument("--samples", type=int, default=None, help="joint answers per row in the table (default: the run's G, the evaluation's own samples; another number draws the row apart)")
    e.add_argument("--device", default=None, help=f"cpu, cuda or cuda:N (default: {DEVICE_DEFAULT}; the run's model "
                   "decides)")
    e.set_defaults(func=_eval)
    s = sub.add_parser("info", help="versions and where the package's data and model are")
    s.set_defaults(func=_info)
    return p


def _typed_options(parser: argparse.ArgumentParser, command: Optional[str], argv: list) -> dict:
    """{field: (the option as the user typed it, the value as typed)} for the options of `command` on
    the command line `argv` (the last one given wins, as argparse takes it): `--steps -5`, `-G 1`,
    `--max_steps=0`."""
    sub = parser._subparsers._group_actions[0].choices.get(command) if parser._subparsers else None
    if sub is None:
        return {}
    options = {o: a.dest for a in sub._actions for o in a.option_strings}
    typed = {}
    for k, token in enumerate(argv):
        name, eq, value = token.partition("=")
        if name in options and token.startswith("--"):
            raw = value if eq else (argv[k + 1] if k + 1 < len(argv) else "")
            typed[options[name]] = (name, raw)
        elif token[:2] in options and not token.startswith("--") and len(token) >= 2:  # -G 4, -G4
            typed[options[token[:2]]] = (token[:2], token[2:] or (argv[k + 1] if k + 1 < len(argv) else ""))
    return typed


_CLI_ALLOWED = {("MAGRPOConfig", "max_steps"): "a positive integer"}
"""What a field allows, said for the command line where the dataclass's words do not fit it
(`magrpo-edu train` refuses max_steps None: it counts steps)."""


def _in_flags(msg: str, typed: dict) -> str:
    """A settings dataclass's refusal (`MAGRPOConfig.max_steps=-5 is not allowed: max_steps must be None or
    an integer >= 1.`) in the command line's words: the option as the user typed it and the value as typed,
    `--steps must be a positive integer, got -5`. A field the user did not type (a checkpoint's, a default)
    keeps the dataclass's words and names the option that sets it."""
    m = re.match(r"(?:(?P<cls>MAGRPOConfig|PretrainArguments|CodePretrainArguments)\.)?(?P<field>\w+)=(?P<value>.+?) "
                 r"(?:is not allowed: (?P=field) )?must be (?P<allowed>.+)$", msg)
    if m and m.group("field") in typed:
        option, raw = typed[m.group("field")]
        allowed = _CLI_ALLOWED.get((m.group("cls"), m.group("field")), m.group("allowed").rstrip("."))
        allowed = re.sub(r"\ban integer >= 1\b", "a positive integer", allowed).replace("None", "none")
        return f"{option} must be {allowed}, got {raw}"
    m = re.match(r"(MAGRPOConfig|PretrainArguments|CodePretrainArguments)\.(\w+)=", msg)
    if m:  # a dataclass's own check on a value the user did not type: say which option sets the field
        msg = msg.rstrip(".") + f" (set with --{m.group(2).replace('_', '-')})."
    return msg


def _terminate(signum, frame) -> None:
    """SIGTERM: what Ctrl-C does now (during training the trainer's handler finishes the step first); where
    Ctrl-C is ignored (a job started with nohup), stop at once."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt("terminated")


def main(argv=None) -> int:
    """Run one command; returns the exit status: 0 done, 2 a mistake in the options or settings
    (one line `magrpo-edu: error: ...` on stderr, nothing written), 130 interrupted by Ctrl-C or
    SIGTERM (partial results saved)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = build_parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a mistake (2, already printed)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        p.print_help()
        return 0
    ours = threading.current_thread() is threading.main_thread()
    if ours:
        # SIGTERM (a scheduler's or `kill`'s stop) stops a run as Ctrl-C does: the step finishes, and a
        # checkpoint and the history so far are saved, never an empty output folder.
        before = signal.signal(signal.SIGTERM, _terminate)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("magrpo-edu: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from ..models import ModelNotAvailableError
        from .plan import SettingsError

        if not isinstance(exc, (SettingsError, ModelNotAvailableError)):
            raise  # a bug or a failure during the run: the traceback is the useful report
        msg = _in_flags(" ".join(str(exc).split()), _typed_options(p, args.command, argv))
        print(f"magrpo-edu: error: {msg}", file=sys.stderr)
        return 2
    finally:
        if ours:
            signal.signal(signal.SIGTERM, before)


if __name__ == "__main__":
    sys.exit(main())
