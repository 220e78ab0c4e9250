"""Every task in one registry, found where it is defined: a module or a folder of this package
(`magrpo_edu/tasks/coding/`, `tasks/writing/`) that makes a `Task` at module level (a folder: in its
`__init__.py`) registers it, with nothing else to edit.

    from magrpo_edu.tasks.registry import get_task
    task = get_task("tldr")
    reward, formatters, train_rows, eval_rows = task.setup(tokenizer)

Adding a task is one folder (or one file): in the package (found by `discover`) or anywhere in your own code
(`register(Task(...))`); `docs/architecture.md` walks through a toy example, "two agents count to
ten". An unknown name is an error that lists the known ones.
"""
from __future__ import annotations

import importlib
import pkgutil

from .task import Task

__all__ = ["TASKS", "Task", "discover", "get_task", "register"]

TASKS: dict[str, Task] = {}
"""The registered tasks by name: the package's own (`discover`), then those `register`ed."""


def register(task: Task) -> Task:
    """Add a task (or replace one of the same name); returns it."""
    if not isinstance(task, Task):
        raise TypeError(f"register() takes a Task, got {type(task).__name__}.")
    TASKS[task.name] = task
    return task


def discover(package: str = __package__) -> list[Task]:
    """Import every module and subpackage of `package` (by default this one, magrpo_edu.tasks) and register
    each `Task` one of them holds at module level; returns those found, in module-name order."""
    found = []
    for info in sorted(pkgutil.iter_modules(importlib.import_module(package).__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        found += [v for v in vars(module).values() if isinstance(v, Task) and v not in found]
    for task in found:
        register(task)
    return found


def get_task(name: str) -> Task:
    """The registered task called `name`; an unknown name raises ValueError listing the known ones."""
    try:
        return TASKS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown task {name!r}; the registered tasks are {', '.join(TASKS)} "
                         "(add one with magrpo_edu.tasks.registry.register).") from None


discover()
