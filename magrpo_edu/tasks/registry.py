"""Every task as one `Task` record, in one registry: what the trainer's callers, the baselines, the
experiment runner and the command line need to know about a task, in one place.

    from magrpo_edu.tasks.registry import get_task
    task = get_task("tldr")
    reward, formatters, train_rows, eval_rows = task.setup(tokenizer)

Adding a task is one module (its rows, formatters and joint reward) plus one line here (or
`register(Task(...))` in your own code); `docs/architecture.md` walks through a toy example,
"two agents count to ten". An unknown name is an error that lists the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..rewards import (arxiv_joint_reward, arxiv_levels, coding_joint_reward, length_ratio_joint_reward,
                       length_ratio_reward, tldr_joint_reward, tldr_levels)
from ..rewards.coding import feedback_transition
from .coding import coding_formatters, load_coding
from .writing import arxiv_formatters, load_writing, tldr_formatters


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
    levels: Optional[Callable[[str, str], dict]]
    """(answer 1, answer 2) -> {'total': reward, level: value, ...} for the comparison table; None when
    the answers are scored in a batch instead (coding: `baselines.coding_batch_levels` in the sandbox)."""
    max_reward: float
    """The highest joint reward (the table's 'normalised' column divides by it)."""
    max_new_tokens: int
    """Default completion budget of `magrpo-edu train`."""
    prompt_task: str
    """Which prompt family the baselines use (the single-model instructions in `tasks.prompts`): a
    registered task's name whose `prompt_field` the baselines read ('tldr' for the length demo)."""
    prompt_field: str
    """The row field holding the input text (shown to the single-model baseline and in reports)."""
    beta: float = 0.0
    """Default KL leash of `magrpo-edu train` (0 = the paper)."""
    transition: Optional[Callable[[], Callable]] = None
    """() -> a multi-turn transition function (prompts, completions, histories, row) -> next prompts;
    None: the task has no second turn."""
    table_samples: int = 2
    """Joint answers per held-out row in the comparison table."""

    def setup(self, tokenizer=None) -> tuple:
        """(joint reward, formatters, train rows, eval rows): what `MAGRPOTrainer` takes."""
        return self.joint_reward, self.formatters(tokenizer), self.load("train"), self.load("eval")


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("length", "agent 2 writes 2-3x as much as agent 1 (the quick demo)", lambda split: load_writing("tldr", split),
         tldr_formatters, length_ratio_joint_reward, lambda a, b: {"total": length_ratio_reward(a, b)}, 1.0,
         max_new_tokens=48, prompt_task="tldr", prompt_field="post", beta=0.05),
    Task("tldr", "the paper's TL;DR task: a concise and a detailed summary of a post",
         lambda split: load_writing("tldr", split), tldr_formatters, tldr_joint_reward, tldr_levels, 2.98,
         max_new_tokens=48, prompt_task="tldr", prompt_field="post"),
    Task("arxiv", "the paper's arXiv task: background and method from an abstract",
         lambda split: load_writing("arxiv", split), arxiv_formatters, arxiv_joint_reward, arxiv_levels, 3.0,
         max_new_tokens=360, prompt_task="arxiv", prompt_field="abstract"),
    Task("coding", "helper aux + main function, scored by running tests in the sandbox", load_coding,
         lambda tokenizer=None: coding_formatters(), coding_joint_reward, None, 4.0, max_new_tokens=64,
         prompt_task="coding", prompt_field="prompt", transition=feedback_transition, table_samples=10),
)}
"""The tasks the package ships. The arXiv reward's first level needs 128-256 words from each agent
(about 1.2 tokens per word for the tiny model), hence its budget; the length demo trains with a
small KL leash because its reward pays for characters (without it agent 2 learns to pad)."""


def register(task: Task) -> Task:
    """Add a task (or replace one of the same name); returns it."""
    if not isinstance(task, Task):
        raise TypeError(f"register() takes a Task, got {type(task).__name__}.")
    TASKS[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The registered task called `name`; an unknown name raises ValueError listing the known ones."""
    try:
        return TASKS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown task {name!r}; the registered tasks are {', '.join(TASKS)} "
                         "(add one with magrpo_edu.tasks.registry.register).") from None
