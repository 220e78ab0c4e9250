"""`Task`: everything about one collaboration task in one record (its data, its agents' prompts,
its joint reward, how the comparison table scores it, its single-model baseline, its transition).

The trainer, the baselines (`evaluation.run_method`), the experiment (`magrpo-edu train`) and the
command line take a `Task` and ask it, never a task's name: adding a task is one folder of
`tasks/` (or one file) that makes one of these (`tasks/registry.py` finds it; `docs/architecture.md`,
"Adding a task"). Every task-dependent default of a run lives here.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from .prompts import SINGLE_MARKER


@dataclass(frozen=True)
class ModelRecipe:
    """How `magrpo-edu train --model NAME` trains LoRA agents on a task whose measured recipe (`Task.lora_recipe`)
    was made for its embedded model: the settings measured on that other model, and the adapters its agents
    start from (e.g. a supervised warm start that teaches the answer's format)."""

    config: dict
    """MAGRPOConfig values the run takes where it leaves them out (over the task's `lora_recipe`)."""
    start: Optional[Callable[[], Sequence]] = None
    """() -> one peft adapter folder per agent, loaded as the agents' adapters before training; None: fresh adapters."""
    source: str = ""
    """Where it was measured, said in the run's plan (a model card)."""


@dataclass(frozen=True)
class Task:
    """One collaboration task: its data, the agents' prompts and the joint reward that scores them."""

    name: str
    """The registry key and the command line's --task value."""
    description: str
    """One line for `magrpo-edu train --help`."""
    load: Callable[[str], list]
    """split ('train' | 'eval') -> rows (dicts)."""
    formatters: Callable[..., list]
    """(tokenizer or None) -> one formatter per agent, row -> that agent's prompt."""
    joint_reward: Callable
    """The trainer's reward: (completions per agent, row) -> one float per joint action."""
    max_reward: float
    """The highest joint reward (the comparison table's 'normalised' column divides by it)."""
    max_new_tokens: int
    """Completion budget of `magrpo-edu train` when --max_new_tokens is not given."""
    prompt_field: str
    """The row field holding the input text (shown to the single-model baseline and in reports)."""
    levels: Optional[Callable[..., dict]] = None
    """(one answer per agent) -> {'total': joint reward, level: value, ...}: how the comparison
    table scores one joint answer. None when the task scores a whole batch at once (`batch_levels`)."""
    batch_levels: Optional[Callable[[Sequence[Sequence[str]], Sequence[dict], bool], list]] = None
    """(answers per agent, rows, single) -> one levels dict per joint answer, all at once (coding:
    every program in one sandbox batch); `single` is True for the single-model baseline's answers."""
    num_agents: int = 2
    """n, the agents that collaborate (one formatter each)."""
    model: str = "tiny"
    """The model of `magrpo-edu train` when --model is not given: 'tiny' (embedded), 'tiny-code', a hub id or a path."""
    multi_turn_model: Optional[str] = None
    """The model when --num-turns > 1 and --model is not given (None: `model`). Coding: 'tiny-code-2turn',
    tiny-code trained further with second-turn documents, which answers the level feedback."""
    beta: float = 0.0
    """KL leash of `magrpo-edu train` when --beta is not given (0 = the paper)."""
    sampling: dict = field(default_factory=dict)
    """temperature / top_p / top_k of `magrpo-edu train` when not given (MAGRPOConfig's own defaults,
    plain sampling, where this leaves one out). The coding tasks sample as the authors' code does."""
    lora_recipe: dict = field(default_factory=dict)
    """Further MAGRPOConfig values of `magrpo-edu train` with LoRA agents when the run leaves them out:
    the recipe measured for this task on its embedded model (coding: G = 8, two problems per step,
    learning rate 1e-3, 170 steps, about five minutes on 2 cores; experiments/coding_collaboration.md).
    Empty: the package's LoRA defaults."""
    transition: Optional[Callable[..., Callable]] = None
    """(tokenizer or None) -> a multi-turn transition (prompts, completions, histories, row) -> next prompts,
    built for the agents' tokenizer as `formatters` is (coding: a chat model's feedback comes as a new user
    turn); a factory that takes no argument is called without it (`transition_for`). None: the task has no
    second turn (--num_turns 1 only; no magrpo_2turn row in the table)."""
    single_prompt: Optional[Callable[[dict, Any], str]] = None
    """(row, tokenizer or None) -> the single-model baseline's prompt: one model writes every part.
    None: the task has no single-model baseline."""
    single_parts: Optional[Callable[[str], list]] = None
    """The single model's answer -> one part per agent. None: split on SINGLE_MARKER lines."""
    table_metrics: Optional[Callable[[Sequence[Sequence[dict]], Sequence[int]], dict]] = None
    """(levels per row, in sampling order; ks) -> more comparison-table columns (coding: PassOrNot@k)."""
    cost_family: str = "writing"
    """Which measured CPU run `run.estimate` scales a training-time estimate from: "writing" (one short text per
    agent, a cheap reward) or "coding" (programs run in the sandbox each step)."""
    headline: str = "normalised"
    """The comparison-table column that comparison.png plots."""
    headline_label: Optional[str] = None
    """comparison.png's axis label where `headline` is a share on a 0-1 scale (coding: "PassOrNot@1 (share of problems,
    0-1)"); None: the column's name, or for "normalised" the figure's own label."""
    in_distribution: Optional[Callable[[], dict]] = None
    """() -> one new row from the training data's own generator, shown in results.md beside the
    held-out rows (the writing tasks); None: no such row."""
    model_recipes: dict = field(default_factory=dict)
    """Model name (as `load_model` takes it; aliases resolved) -> `ModelRecipe`: what a LoRA run of that model
    on this task takes instead of `lora_recipe` (coding: SmolLM2-135M-Instruct from its warm start)."""
    level_max: Optional[dict] = None
    """What each reward component earns at most (a negative value: the most it deducts); results.md
    prints each component beside it ("0.400 of 0.4"). None: no maxima printed (`component_max`)."""
    single_agent_max: Optional[float] = None
    """The most the single-model baseline can earn when it is scored apart (`single_parts`; coding: 2.1 of
    4.0, no aux and no cooperation credit). None: it is scored as a joint answer (max_reward holds)."""
    explorer: Optional[Callable[..., Any]] = None
    """(samples, **options) -> the notebooks' explorer of this task's groups (`viz.task_explorer`; coding: every
    joint action's levels and both programs, tasks/coding/explorer.py). None: `viz.group_explorer`."""
    report_figures: Optional[Callable[[Sequence[dict], str, str], list]] = None
    """(comparison table, task name, what was drawn) -> [(file stem, matplotlib figure)] that `magrpo-edu train`'s
    report saves beside its own (coding: pass_at_k.png). None: the report's figures only."""
    reward_note: str = ""
    """One sentence results.md prints after "the joint reward adds them up", where the components need it (writing:
    style = 0.4 coherence + 0.6 consistency, so only style counts). Empty: nothing."""
    model_notes: dict = field(default_factory=dict)
    """Model name -> a paragraph results.md prints above the agents' texts when a run trains that model (writing,
    "tiny": what the embedded model can and cannot do on these rows). Empty: none."""
    report_files: tuple = ()
    """The files `report_figures` writes into a run's folder (coding: pass_at_k.png): what --overwrite removes
    besides the report's own (`run.folders.output_files`)."""

    def __post_init__(self) -> None:
        if (self.levels is None) == (self.batch_levels is None):
            raise ValueError(f"Task {self.name!r}: give exactly one of levels= (one joint answer at a time) and "
                             "batch_levels= (all at once).")
        if isinstance(self.num_agents, bool) or not isinstance(self.num_agents, int) or self.num_agents < 2:
            raise ValueError(f"Task {self.name!r}: num_agents={self.num_agents!r}; a collaboration needs an integer >= 2.")
        if not isinstance(self.sampling, dict) or not set(self.sampling) <= {"temperature", "top_p", "top_k"}:
            raise ValueError(f"Task {self.name!r}: sampling={self.sampling!r}; give a dict with some of temperature, "
                             "top_p, top_k (MAGRPOConfig checks their values).")

    def sampling_settings(self, **given) -> dict:
        """temperature, top_p and top_k as this task samples: MAGRPOConfig's plain defaults < the task's `sampling` <
        what is given (None: not given). The order of `run.plan.settings_layers`, for every caller that samples
        outside a run's plan (the baselines' `run_method`)."""
        from ..config import MAGRPOConfig

        plain = {f: MAGRPOConfig.__dataclass_fields__[f].default for f in ("temperature", "top_p", "top_k")}
        unknown = set(given) - set(plain)
        if unknown:
            raise TypeError(f"sampling_settings takes temperature, top_p and top_k; got {sorted(unknown)}.")
        return plain | self.sampling | {k: v for k, v in given.items() if v is not None}

    def component_max(self) -> dict:
        """{component: the most it earns} of the joint reward's components (`level_max`); {} when the task
        does not say (no maxima printed)."""
        return dict(self.level_max or {})

    def single_max(self) -> Optional[float]:
        """The most the single-model baseline can earn when it is scored apart (`single_agent_max`); None
        where it is scored as a joint answer (max_reward holds)."""
        return self.single_agent_max if self.single_parts is not None else None

    def transition_for(self, tokenizer=None) -> Optional[Callable]:
        """The task's multi-turn transition for agents that use `tokenizer` (None: the task has no second turn)."""
        if self.transition is None:
            return None
        try:
            takes_tokenizer = bool(inspect.signature(self.transition).parameters)
        except (TypeError, ValueError):
            takes_tokenizer = False
        return self.transition(tokenizer) if takes_tokenizer else self.transition()

    def default_model(self, num_turns: int = 1) -> str:
        """The model a run of this task uses when none is given: `multi_turn_model` for more than one turn (where the
        task has one), else `model`."""
        turns_ok = isinstance(num_turns, int) and not isinstance(num_turns, bool)
        return self.multi_turn_model if self.multi_turn_model and turns_ok and num_turns > 1 else self.model

    def recipe_for(self, model: Optional[str]) -> Optional[ModelRecipe]:
        """The `ModelRecipe` of `model` on this task (a registry name, an alias or a hub id), or None."""
        from ..models import ALIASES

        if not isinstance(model, str):
            return None
        key = model.strip().lower()
        by_id = {ALIASES.get(k.lower(), k): r for k, r in self.model_recipes.items()}
        return self.model_recipes.get(key) or by_id.get(ALIASES.get(key, model.strip()))

    def setup(self, tokenizer=None) -> tuple:
        """(joint reward, formatters, train rows, eval rows): what `MAGRPOTrainer` takes."""
        return self.joint_reward, self.formatters(tokenizer), self.load("train"), self.load("eval")

    def score(self, answers: Sequence[Sequence[str]], rows: Sequence[dict], single: bool = False) -> list[dict]:
        """The levels of every joint answer (answers[k][i]: agent k's answer for rows[i])."""
        if self.batch_levels is not None:
            return self.batch_levels(answers, rows, single)
        return [self.levels(*joint) for joint in zip(*answers)]

    def split_single(self, answer: str) -> list[str]:
        """The single-model baseline's answer as one part per agent."""
        if self.single_parts is not None:
            return list(self.single_parts(answer))
        n = self.num_agents
        return [p.strip() for p in (answer.split(SINGLE_MARKER, n - 1) + [""] * (n - 1))[:n]]
