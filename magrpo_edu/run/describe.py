"""A run's plan in words: what `magrpo-edu train` prints first (`describe_plan`), in the order the run does it, with
the time it should take on a CPU (`estimate.describe`) and where each main setting came from (`settings_line`)."""
from __future__ import annotations

from typing import Optional

from . import estimate
from ..evaluation import untrained_methods


def on_device(device: str, why: Optional[str]) -> str:
    """"on cpu (why)": the run's device and, where the run chose it, why (`device.resolve_device`)."""
    return f"on {device}" + (f" ({why})" if why and why != "as given" else "")


def describe_plan(plan: dict) -> str:
    """What a run will do, in the order it does it: the first thing `magrpo-edu train` prints."""
    r, t, c = plan["run"], plan["task"], plan["config"]
    team = f"{c.num_agents} {'LoRA agents on one frozen' if r.agents == 'lora' else 'full copies of the'} `{r.model}` model"
    recipe = t.recipe_for(r.model) if r.agents == "lora" else None
    if recipe is not None and recipe.start is not None:
        team += f", their adapters starting from the warm start of {recipe.source}"
    time_line = estimate.describe(plan)  # on the CPU: how long training should take, and how to shorten it
    if plan["resume"] is not None:
        return (f"magrpo-edu train: resuming {plan['out_dir']} at step {plan['resume']['step']} of {c.max_steps} "
                f"({r.task}, {team}, {on_device(plan['device'], plan.get('device_why'))}); then the evaluation of the "
                "trained agents, plots and results.md there." + (f"\n{time_line}" if time_line else ""))
    n_base = len(untrained_methods(t))
    return "\n".join([
        f"magrpo-edu train: task {r.task}, {team}, {on_device(plan['device'], plan.get('device_why'))}; "
        f"results go to {plan['out_dir']}/",
        f"  1. evaluate the untrained agents and {n_base} prompt-level baselines on {r.eval_rows} held-out rows",
        f"  2. train {c.max_steps} MAGRPO steps (G = {c.num_generations} samples per agent, {c.max_new_tokens} new tokens)"
        + (f", evaluating the agents once at step {plan['halfway']}" if plan["halfway"] else ""),
        "  3. evaluate the trained agents the same way; write results.md, plots and the agents (checkpoint/)"]
        + ([time_line] if time_line else []) + ([settings_line(plan)] if plan.get("sources") else []))


SHOWN_SETTINGS = ("max_steps", "num_generations", "prompts_per_step", "learning_rate", "beta", "max_new_tokens",
                  "temperature", "top_p", "top_k")
"""The settings `describe_plan` lists with where each came from (the others: `MAGRPOConfig`'s own defaults)."""


def settings_line(plan: dict) -> str:
    """One line of the plan: the main settings and where each value came from (`plan.settings_sources`: MAGRPOConfig's
    own default, the command's, the task's, its LoRA recipe, the model's recipe, or given)."""
    c, sources = plan["config"], plan["sources"]
    by_source: dict = {}
    for name in SHOWN_SETTINGS:
        by_source.setdefault(sources.get(name, "MAGRPOConfig's default"), []).append(f"{name} {getattr(c, name)}")
    return "  settings: " + "; ".join(f"{', '.join(v)} ({k})" for k, v in by_source.items())
