"""How long a `magrpo-edu train` run on the CPU will train, said before it starts: an estimate from
a step time the project measured in one of its own runs (`MEASURED`: each figure names the file it
comes from; tests/test_cli_frictions.py checks them against those files), scaled to this run.

A step is mostly sampling (68% of it on the SmolLM2 shape, benchmarks/PROFILE.md) and the backward
pass over what was sampled, so the measured step time is scaled by the completions sampled per step
and their length: prompts per step x G x new tokens (a multi-turn run samples G children per turn-1
joint answer: x (1 + G) for two turns). The machine, its free cores and how long the texts really
get change it, so it is printed as an estimate, with how to make the run shorter.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..models import ALIASES, SMOLLM2_ID, is_embedded
from ..tasks.registry import get_task


@dataclass(frozen=True)
class Measured:
    """One measured training run: its seconds over its steps, and what one step sampled."""

    family: str
    """"tiny" (the embedded models) or "smollm2" (SmolLM2-135M-Instruct)."""
    tasks: str
    """The tasks it stands for: their `Task.cost_family`, "writing" (length, tldr, arxiv) or "coding" (coding,
    coding-strict, humaneval)."""
    seconds: float
    steps: int
    num_generations: int
    prompts_per_step: int
    max_new_tokens: int
    source: str
    """Where the figures are, and on what CPU threads they were measured."""

    @property
    def per_step(self) -> float:
        return self.seconds / self.steps


MEASURED = (
    Measured("tiny", "writing", 117.4, 300, 4, 1, 48,
             "experiments/runs/length-demo/results.json (train_seconds over steps; 2 idle cores)"),
    Measured("tiny", "coding", 72.0, 200, 4, 1, 64,
             "experiments/runs/coding-tiny/results.json (train_seconds over steps)"),
    Measured("smollm2", "writing", 71 * 60, 150, 4, 1, 96,
             "weights/smollm2_tldr/README.md (71 minutes of training for 150 steps on one CPU core)"),
    Measured("smollm2", "coding", 1821.0, 78, 4, 2, 128,
             "weights/smollm2_coding/results.json (seed 0's train_seconds over its steps; one CPU thread)"),
)


def family(model: str) -> Optional[str]:
    """The measured family of a model name ("tiny", "smollm2"), or None where the project measured none."""
    key = model.strip().lower()
    if is_embedded(key):
        return "tiny"
    if key in ALIASES or key == SMOLLM2_ID.lower():
        return "smollm2"
    return None


def _samples_per_step(prompts: int, G: int, tokens: int, turns: int) -> float:
    return prompts * G * tokens * sum(G ** t for t in range(turns))


def estimate_seconds(model: str, task: str, steps: int, num_generations: int, prompts_per_step: int,
                     max_new_tokens: int, num_turns: int = 1) -> Optional[tuple[float, Measured]]:
    """(seconds of training, the measurement it is scaled from) for `steps` steps, or None where the
    project has no measured step for this model."""
    fam = family(model)
    if fam is None:
        return None
    kind = get_task(task).cost_family
    m = next((x for x in MEASURED if x.family == fam and x.tasks == kind), None)
    if m is None:
        return None
    scale = (_samples_per_step(prompts_per_step, num_generations, max_new_tokens, num_turns)
             / _samples_per_step(m.prompts_per_step, m.num_generations, m.max_new_tokens, 1))
    return steps * m.per_step * scale, m


def duration(seconds: float) -> str:
    """"less than a second", "about 40 s", "about 12 min", "about 3.5 h"."""
    if seconds < 1:
        return "less than a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def describe(plan: dict) -> Optional[str]:
    """The line `describe_plan` adds for a run on the CPU: the training time it should take, from what,
    and how to shorten it; None on a GPU or for a model the project has not measured."""
    if not str(plan["device"]).startswith("cpu"):
        return None
    r, c = plan["run"], plan["config"]
    done = plan["resume"]["step"] if plan.get("resume") else 0
    steps = c.max_steps - done
    got = estimate_seconds(r.model, r.task, steps, c.num_generations, c.prompts_per_step, c.max_new_tokens,
                           c.num_turns)
    if got is None:
        return (f"  Time: no step of `{r.model}` was measured by the project on a CPU, so no estimate; the training "
                "bar shows the rate after its first steps (--steps N for a shorter run).")
    seconds, m = got
    per = seconds / steps if steps else 0.0
    work = (f"{c.prompts_per_step} prompt{'s' if c.prompts_per_step != 1 else ''} x G = {c.num_generations} x "
            f"{c.max_new_tokens} new tokens" + (f" x {c.num_turns} turns" if c.num_turns > 1 else ""))
    return (f"  Time: training {steps} steps on this CPU should take {duration(seconds)} (an estimate: {per:.3g} s a "
            f"step, scaled from the {m.per_step:.3g} s a step measured in {m.source} to this run's {work}; the "
            "evaluations before and after add to it)."
            + (f" Fewer steps make it shorter: e.g. --steps {max(1, steps // 10)}." if seconds >= 60 else ""))
