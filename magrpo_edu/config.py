"""`MAGRPOConfig`: every knob of a MAGRPO run, with the paper's values noted.

Field names follow TRL's `GRPOConfig` and the authors' library CoMLRL, so a reader who knows
either finds the same words here. Every field is checked in `__post_init__`; a bad value raises
a `ValueError` that names the field, the value given and what is allowed. A numpy scalar (np.float32(0.5)) given
for a real-valued field is stored as the Python float it stands for; a tensor or an array, 0-d too, is refused.

`RunArguments` holds the rest of a `magrpo-edu train` run (task, model, agents, output folder); `SettingsError` is
what a run's setting that cannot work raises before any model loads (`run.plan`).
The command line is built from these two dataclasses (as TRL's from its configs): each field is an
option under its own name (`--max_new_tokens` or `--max-new-tokens`), its docstring is the option's
help (`field_help`), and a few familiar short names are aliases in the field's metadata (-G,
--steps, --lr, --turns).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import math
import numbers
import textwrap
from dataclasses import dataclass, field
from typing import Any, Optional

JOINT_MODES = ("aligned", "cross")
MAX_JOINT_ACTIONS = 10_000
"""Cap on G**n, the joint actions of one cross-mode group (each one is a reward call and a row of the loss)."""
ADVANTAGE_MODES = ("mean", "none", "rloo", "max")
SCALE_MODES = ("none", "group", "zscore")
TRACKERS = ("tensorboard", "wandb", "trackio")
_REAL_FIELDS = ("temperature", "top_p", "learning_rate", "weight_decay", "beta", "num_train_epochs", "advantage_clip",
                "discount", "early_termination_threshold")
"""MAGRPOConfig's real-valued fields: a numpy scalar given for one is stored as the Python float it stands for."""
NONE_WITH_GROUP_SCALE = (
    "MAGRPOConfig.advantage='none' with scale_rewards='group' is refused: MAREINFORCE has no baseline, so TRL's "
    "group scaling would divide the UN-centred reward by the group's std, and a group whose rewards are all equal "
    "(std 0; common: all 0 early in coding, all at the maximum late in writing) would get advantages of R x 10^4. "
    "Use scale_rewards='zscore' (CoMLRL's, which centres first) or 'none', or a baseline (advantage='mean').")
class SettingsError(ValueError):
    """A run setting that cannot work, found before training starts; the message says what to change."""


AGENT_KINDS = ("lora", "separate")
"""`magrpo-edu train --agents`: a shared base with one LoRA adapter per agent, or full copies."""


def _alias(default, *aliases: str, **more):
    """A field with command-line aliases (and argparse extras such as choices) in its metadata."""
    return field(default=default, metadata=dict(aliases=aliases, **more))


@dataclass
class MAGRPOConfig:
    """Settings of one MAGRPO run. Defaults are small-CPU friendly; the paper's values are noted."""

    num_agents: int = 2
    """n, the number of agents (LLM policies). 1 gives single-agent GRPO with the same code."""
    num_generations: int = _alias(4, "-G")
    """G, responses each agent samples per prompt (paper: 4). Must be >= 2 for a group baseline."""
    max_new_tokens: int = 32
    """Longest completion in tokens (paper: 256; TRL calls it max_completion_length)."""
    temperature: float = 1.0
    """Sampling temperature (paper's scripts: 0.7). Step 6 scores the tokens at the same temperature,
    top_p and top_k (`algorithm` deviation 12)."""
    top_p: float = 1.0
    """Nucleus sampling mass in (0, 1] (paper's scripts: 0.9)."""
    top_k: int = 0
    """Sample only from the k most likely tokens; 0 switches it off (paper's scripts: 50)."""
    learning_rate: float = _alias(2e-3, "--lr")
    """AdamW learning rate of every agent (paper: 5e-6 writing, 1e-5 coding, full fine-tuning); the default is for
    LoRA agents, the package's default team (the quick start's). `magrpo-edu train`, `run_training` and `config_for`
    lay their layers over it (5e-4 for full copies, `--agents separate`; then the task's and the model's recipes:
    `run.plan.settings_layers`, printed on the plan's `settings:` line)."""
    weight_decay: float = 0.0
    """AdamW weight decay (reference code: AdamW default; 0 keeps the update exactly the paper's)."""
    beta: float = 0.0
    """KL leash (TRL's name): each agent's loss adds beta * sum_t kl_t per completion, the k3 term
    against the frozen untrained model at the sampling temperature (see `algorithm.kl_penalty`). Its
    value (logged as kl) estimates KL(pi_i || pi_ref), without bias when top_k = 0 and top_p = 1 (a
    truncated sampler makes it read low by 1 - pi_ref's kept mass per token); its gradient is, in expectation,
    that of KL(pi_ref || pi_i), the other direction (the two agree only near pi_ref; `algorithm`
    deviation 11 derives both). 0.0 = the paper: no KL term and no reference forward pass. Needs
    agents with a reference (LoRA, or built with reference=True)."""
    max_steps: Optional[int] = _alias(300, "--steps")
    """Optimiser steps (prompts_per_step training prompts each; 1 in the paper). None: use num_train_epochs instead.
    300 is the quick start's run; a task's or a model's recipe may say otherwise (`run.plan.settings_layers`)."""
    num_train_epochs: float = 1.0
    """Passes over the training set; used only when max_steps is None."""
    joint_mode: str = _alias("aligned", choices=JOINT_MODES)
    """'aligned': sample g of every agent forms joint action g (G joint actions, the paper).
    'cross': every combination of the agents' samples (G**n joint actions)."""
    advantage: str = _alias("mean", choices=ADVANTAGE_MODES)
    """Baseline: 'mean' = MAGRPO (R - group mean), 'none' = MAREINFORCE (R),
    'rloo' = MARLOO (R - mean of the others), 'max' = MAReMax (R - group max)."""
    scale_rewards: str = _alias("none", choices=SCALE_MODES)
    """'none' (paper); 'group': TRL's (R - baseline) / (sample std of R + 1e-4); 'zscore': CoMLRL
    1.4.3's z-score of the advantages after the baseline (population std, floor 1e-6)."""
    advantage_clip: Optional[float] = 10.0
    """Clamp advantages to [-clip, clip] (paper-era code: 10). None: no clamp."""
    num_turns: int = _alias(1, "--turns")
    """Turns of the rollout tree. >1 needs a `transition` function (paper: 2 for coding)."""
    discount: float = 0.9
    """gamma in R = r + gamma * mean(children's returns) (multi-turn only): 0.9 the authors' rollout-tree design,
    0.0 the paper's own-turn credit (without its per-turn loss weights), 1.0 CoMLRL 1.4.3's code."""
    early_termination_threshold: Optional[float] = None
    """Do not expand a node whose siblings' mean reward exceeds this. None: always expand."""
    seed: int = 0
    """Seed of data order and sampling; with it a CPU run is reproducible step for step."""
    logging_steps: int = 1
    """Log a history record every this many steps."""
    progress: bool = True
    """Show a tqdm progress bar (TQDM_DISABLE does not silence notebook bars, this does)."""
    sample_log_size: int = 200
    """How many steps of samples (prompts, completions, rewards, advantages) to keep for the explorers."""
    batch_agents: bool = True
    """Sample all agents that share one base in ONE generate call (False: one call per agent, to compare)."""
    eval_steps: Optional[int] = None
    """Run `evaluate()` every this many steps when an eval set is given. None: never during training."""
    save_steps: Optional[int] = None
    """Save a checkpoint every this many steps and after the last one, into the trainer's
    `checkpoint_dir` (replaced atomically each time). None: only when you call `trainer.save()`."""
    prompts_per_step: int = 1
    """Training prompts per optimiser step, over all processes (paper: 1). Each prompt is its own
    group with its own advantages; each agent's loss is the mean over the prompts (gradient
    accumulation). With data parallel (torchrun, W processes) it must be a multiple of W: each
    process takes prompts_per_step / W of them (TRL: per-device batch x processes x accumulation)."""
    dynamic_sampling: int = 0
    """DAPO's dynamic sampling (not in the paper; `algorithm` deviation 13): a problem whose joint rewards are
    all equal has advantages 0 and adds no policy gradient, so the step draws another training problem in its
    place, at most this many extra problems per optimiser step (the cap); the flat group is dropped (no
    backward). Logged as dynamic/draws (problems sampled per kept problem) and dynamic/dropped. 0: off (the
    paper); single-turn, one process only."""
    report_to: Any = _alias("none", choices=("none", *TRACKERS))
    """Where to send the logged metrics as well as the history (TRL's name): "none", "tensorboard",
    "wandb", "trackio", or a list of them. Each needs its package (pip install tensorboard / wandb /
    trackio); only the main process (rank 0) reports."""
    logging_dir: Optional[str] = None
    """Folder for the tensorboard event files (default: runs/magrpo-<date-time>, TRL's style);
    the wandb / trackio project name is "magrpo-edu"."""

    def __post_init__(self) -> None:
        for name in _REAL_FIELDS:  # a numpy scalar (np.float32(0.5), np.int64(2)) is the number it stands for
            v = getattr(self, name)
            if isinstance(v, numbers.Real) and type(v) not in (int, float) and not isinstance(v, bool):
                setattr(self, name, float(v))

        def bad(name: str, allowed: str) -> ValueError:
            v = getattr(self, name)
            zero_d = (f" A 0-d {type(v).__name__} is not a number here: pass a Python number, float(x) (or x.item())."
                      if getattr(v, "ndim", None) == 0 and type(v).__name__ in ("Tensor", "ndarray") else "")
            return ValueError(
                f"MAGRPOConfig.{name}={v!r} is not allowed: {name} must be {allowed}.{zero_d}"
            )

        def is_int(v) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        def is_num(v) -> bool:  # a real number; True/False are not numbers here, nan and inf are not finite
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

        if not is_int(self.num_agents) or self.num_agents < 1:
            raise bad("num_agents", "an integer >= 1")
        if not is_int(self.num_generations) or self.num_generations < 2:
            raise bad("num_generations", "an integer >= 2 (a group needs at least two samples)")
        if not is_int(self.max_new_tokens) or self.max_new_tokens < 1:
            raise bad("max_new_tokens", "an integer >= 1")
        if not is_num(self.temperature) or not self.temperature > 0:
            raise bad("temperature", "a finite number > 0")
        if not is_num(self.top_p) or not 0 < self.top_p <= 1:
            raise bad("top_p", "a number in (0, 1]")
        if not is_int(self.top_k) or self.top_k < 0:
            raise bad("top_k", "an integer >= 0 (0 switches it off)")
        if not is_num(self.learning_rate) or not self.learning_rate > 0:
            raise bad("learning_rate", "a finite number > 0")
        if not is_num(self.weight_decay) or self.weight_decay < 0:
            raise bad("weight_decay", "a finite number >= 0")
        if not is_num(self.beta) or self.beta < 0:
            raise bad("beta", "a finite number >= 0 (0.0 = no KL term, the paper)")
        if self.max_steps is not None and (not is_int(self.max_steps) or self.max_steps < 1):
            raise bad("max_steps", "None or an integer >= 1")
        if not is_num(self.num_train_epochs) or not self.num_train_epochs > 0:
            raise bad("num_train_epochs", "a finite number > 0 (it is used only when max_steps is None)")
        if self.joint_mode not in JOINT_MODES:
            raise bad("joint_mode", f"one of {JOINT_MODES}")
        if self.advantage not in ADVANTAGE_MODES:
            raise bad("advantage", f"one of {ADVANTAGE_MODES} (mean=MAGRPO, none=MAREINFORCE, rloo=MARLOO, max=MAReMax)")
        if self.scale_rewards not in SCALE_MODES:
            raise bad("scale_rewards", f"one of {SCALE_MODES}")
        if self.advantage == "none" and self.scale_rewards == "group":
            raise ValueError(NONE_WITH_GROUP_SCALE)
        if self.advantage_clip is not None and (not is_num(self.advantage_clip) or not self.advantage_clip > 0):
            raise bad("advantage_clip", "None (no clamp) or a finite number > 0")
        if not is_int(self.num_turns) or self.num_turns < 1:
            raise bad("num_turns", "an integer >= 1")
        if self.num_turns > 1 and self.joint_mode != "aligned":
            raise ValueError(
                f"MAGRPOConfig.joint_mode={self.joint_mode!r} with num_turns={self.num_turns} is not supported: "
                "a cross-mode tree has (G**n)**T leaves; use joint_mode='aligned' for multi-turn runs."
            )
        log10_joint = self.num_agents * math.log10(self.num_generations)  # G**n itself can be astronomically long
        too_many = self.num_generations ** self.num_agents > MAX_JOINT_ACTIONS if log10_joint < 30 else True
        if self.joint_mode == "cross" and too_many:
            count = f"{self.num_generations ** self.num_agents:,}" if log10_joint < 30 else f"about 10**{log10_joint:.0f}"
            raise ValueError(
                f"MAGRPOConfig.joint_mode='cross' with num_generations={self.num_generations} and "
                f"num_agents={self.num_agents} gives G**n = {count} joint actions per "
                f"group, over the cap of {MAX_JOINT_ACTIONS:,} (each is a reward call); use fewer generations or agents, "
                "or joint_mode='aligned' (G joint actions)."
            )
        if not is_num(self.discount) or not 0 <= self.discount <= 1:
            raise bad("discount", "a number in [0, 1]")
        if self.early_termination_threshold is not None and not is_num(self.early_termination_threshold):
            raise bad("early_termination_threshold", "None (always expand) or a finite number")
        if not is_int(self.seed) or not -2**63 <= self.seed < 2**63:
            raise bad("seed", "an integer that fits in 64 bits signed, -2**63 <= seed < 2**63")
        if not is_int(self.logging_steps) or self.logging_steps < 1:
            raise bad("logging_steps", "an integer >= 1")
        if not isinstance(self.progress, bool):
            raise bad("progress", "True or False")
        if not isinstance(self.batch_agents, bool):
            raise bad("batch_agents", "True or False")
        if not is_int(self.sample_log_size) or self.sample_log_size < 0:
            raise bad("sample_log_size", "an integer >= 0")
        if self.eval_steps is not None and (not is_int(self.eval_steps) or self.eval_steps < 1):
            raise bad("eval_steps", "None or an integer >= 1")
        if self.save_steps is not None and (not is_int(self.save_steps) or self.save_steps < 1):
            raise bad("save_steps", "None or an integer >= 1")
        if not is_int(self.dynamic_sampling) or self.dynamic_sampling < 0:
            raise bad("dynamic_sampling", "an integer >= 0 (extra problems a step may draw; 0 = off, the paper)")
        if self.dynamic_sampling and self.num_turns > 1:
            raise bad("dynamic_sampling", "0 with num_turns > 1 (dynamic sampling reads the root group's rewards: single-turn only)")
        if not is_int(self.prompts_per_step) or self.prompts_per_step < 1:
            raise bad("prompts_per_step", "an integer >= 1 (1 = the paper: one prompt per optimiser step)")
        names = [self.report_to] if isinstance(self.report_to, str) else self.report_to
        if not isinstance(names, (list, tuple)) or not all(isinstance(x, str) for x in names) or \
                any(x not in ("none", *TRACKERS) for x in names) or ("none" in names and len(names) > 1):
            raise bad("report_to", f'"none" or one of {TRACKERS}, or a list of those')
        if self.logging_dir is not None and (not isinstance(self.logging_dir, str) or not self.logging_dir.strip()):
            raise bad("logging_dir", "None or a folder path")

    @property
    def trackers(self) -> list[str]:
        """report_to as a list of tracker names ([] for "none")."""
        names = [self.report_to] if isinstance(self.report_to, str) else list(self.report_to)
        return [x for x in names if x != "none"]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "MAGRPOConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"MAGRPOConfig has no field(s) {unknown}; known fields: {sorted(known)}.")
        return cls(**d)


@dataclass
class RunArguments:
    """The settings of a `magrpo-edu train` run (`run.experiment.run_training`) that are not the algorithm's
    (those are `MAGRPOConfig`'s): what to train, on what, and where the results go."""

    task: str = "length"
    """The task (a registered `Task`, tasks/registry.py)."""
    model: Optional[str] = None
    """'tiny' (embedded), 'tiny-code', 'tiny-code-2turn', 'smollm2-135m', a hub id or a local path; None: the task's (`Task.model`, or `Task.multi_turn_model` with --turns > 1)."""
    agents: str = _alias("lora", choices=AGENT_KINDS)
    """'lora': one frozen base shared by the agents, one LoRA adapter each; 'separate': full copies."""
    eval_rows: int = 20
    """Held-out rows to evaluate before, halfway and after (1 to the task's count)."""
    device: Optional[str] = None
    """cpu, cuda or cuda:N; a device given is always used. None: the embedded models (tiny, tiny-code) on
    cpu, where they are fastest (their step is bound by per-token overhead, a GPU gains little); other
    models on cuda when available (`run.device.default_device`)."""
    out: Optional[str] = None
    """Output folder; None: runs/<task> (or the next free runs/<task>-N). It must be new or empty unless
    overwrite is set."""
    resume: Optional[str] = _alias(None, metavar="DIR")
    """Continue the run in DIR (its output folder) from DIR/checkpoint, with the run's own settings."""
    overwrite: bool = False
    """Replace an earlier run's results in a non-empty output folder (other files there are kept)."""


def field_help(cls) -> dict[str, str]:
    """Each field's docstring (the string literal under it in the class body), on one line: the
    command line's help, so every option is described once, where the field is."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body, out = tree.body[0].body, {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr) \
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
            out[node.target.id] = " ".join(after.value.value.split())
    return out
